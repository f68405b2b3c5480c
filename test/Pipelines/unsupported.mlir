// Every pipeline refuses what it cannot lower with a located error naming
// the op and the target: here a relocation use no lowering has removed.
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-nvvm)" 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-rocdl)" 2>&1 | FileCheck %s --check-prefix=ROCDL
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-spirv{workgroup-size=64})" 2>&1 | FileCheck %s --check-prefix=SPIRV
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{workgroup-size=64})" 2>&1 | FileCheck %s --check-prefix=METAL
// NVVM: unsupported.mlir:[[@LINE+8]]:12: error: 'reloc.get_global' op cannot be lowered by the nvvm target
// ROCDL: unsupported.mlir:[[@LINE+7]]:12: error: 'reloc.get_global' op cannot be lowered by the rocdl target
// SPIRV: unsupported.mlir:[[@LINE+6]]:12: error: 'reloc.get_global' op cannot be lowered by the spirv target
// METAL: unsupported.mlir:[[@LINE+5]]:12: error: 'reloc.get_global' op cannot be lowered by the metal target
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @table : memref<4xf32> {key = "host.table", constant}
    gpu.func @k(%out: memref<?xf32>) kernel {
      %t = reloc.get_global @table : memref<4xf32>
      gpu.return
    }
  }
}
