// Every pipeline refuses what it cannot lower with a located error naming
// the op and the target: here a tensor op, which no target lowers.
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-nvvm)" 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-rocdl)" 2>&1 | FileCheck %s --check-prefix=ROCDL
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-spirv{workgroup-size=64})" 2>&1 | FileCheck %s --check-prefix=SPIRV
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{workgroup-size=64})" 2>&1 | FileCheck %s --check-prefix=METAL
// NVVM: unsupported.mlir:[[@LINE+7]]:12: error: 'tensor.empty' op is not supported by the nvvm target
// ROCDL: unsupported.mlir:[[@LINE+6]]:12: error: 'tensor.empty' op is not supported by the rocdl target
// SPIRV: unsupported.mlir:[[@LINE+5]]:12: error: 'tensor.empty' op is not supported by the spirv target
// METAL: unsupported.mlir:[[@LINE+4]]:12: error: 'tensor.empty' op is not supported by the metal target
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%out: memref<?xf32>) kernel {
      %t = tensor.empty() : tensor<4xf32>
      gpu.return
    }
  }
}
