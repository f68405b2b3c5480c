// The target check's options: an unknown chip (which reached instruction
// selection), a toolkit directory that does not exist (an error printed, yet
// exit 0) and an out-of-range workgroup size are located errors; an index
// constant beyond 32 bits is named on SPIR-V. An empty chip crashed NVVM's
// target verifier and was an unlocated error on ROCDL, and PTX features below
// the chip's minimum aborted LLVM's NVPTX back end (all found by fuzzing).
// RUN: not nabla-opt %s --nabla-check-target-support="target=rocdl chip=gfx9999" 2>&1 | FileCheck %s --check-prefix=GFX
// RUN: not nabla-opt %s --nabla-check-target-support="target=nvvm chip=sm_999" 2>&1 | FileCheck %s --check-prefix=SM
// RUN: nabla-opt %s --nabla-check-target-support="target=nvvm chip=sm_90a" -o /dev/null
// RUN: nabla-opt %s --nabla-check-target-support="target=rocdl chip=gfx942" -o /dev/null
// RUN: not nabla-opt %s --nabla-check-target-support="target=nvvm toolkit=/nonexistent" 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// RUN: not nabla-opt %s --nabla-to-nvvm="toolkit=/nonexistent" 2>&1 | FileCheck %s --check-prefix=PIPE-TOOLKIT
// RUN: not nabla-opt %s --nabla-to-spirv="workgroup-size=0" 2>&1 | FileCheck %s --check-prefix=PIPE-WG
// RUN: not nabla-opt %s --nabla-check-target-support="target=spirv" 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not nabla-opt %s --nabla-to-nvvm="chip= cubin=false" 2>&1 | FileCheck %s --check-prefix=PIPE-NOSM
// RUN: not nabla-opt %s --nabla-check-target-support="target=nvvm require-chip=true" 2>&1 | FileCheck %s --check-prefix=NOSM
// RUN: not nabla-opt %s --nabla-to-rocdl="chip=" 2>&1 | FileCheck %s --check-prefix=PIPE-NOGFX
// RUN: not nabla-opt %s --nabla-check-target-support="target=rocdl require-chip=true" 2>&1 | FileCheck %s --check-prefix=NOGFX
// RUN: not nabla-opt %s --nabla-to-nvvm="chip=sm_90 features=+ptx74 cubin=false" 2>&1 | FileCheck %s --check-prefix=PIPE-PTX
// RUN: not nabla-opt %s --nabla-check-target-support="target=nvvm chip=sm_90 features=+ptx74" 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not nabla-opt %s --nabla-check-target-support="target=spirv workgroup-size=0" 2>&1 | FileCheck %s --check-prefix=WG
// RUN: not nabla-opt %s --nabla-check-target-support="target=nvvm chip=sm_88 features=+ptx87" 2>&1 | FileCheck %s --check-prefix=PTX88
// RUN: nabla-opt %s --nabla-check-target-support="target=nvvm chip=sm_88 features=+ptx90" -o /dev/null
// RUN: nabla-opt %s --nabla-check-target-support="target=nvvm" -o /dev/null

// GFX: check-target-support-options.mlir:{{[0-9]+}}:1: error: unknown chip 'gfx9999': LLVM {{.*}}'s AMDGPU back end has no such processor
// SM: error: unknown chip 'sm_999': LLVM {{.*}}'s NVPTX back end has no such processor
// TOOLKIT: error: toolkit '/nonexistent' is not a directory
// WG: error: workgroup size 0 is out of range (1 to 1024)
// The pipelines check their options while they are built, before any pass
// runs (the error used to come after differentiation, with the module
// printed): no location, the pipeline named.
// PIPE-TOOLKIT: error: nabla-to-nvvm: toolkit '/nonexistent' is not a directory
// PIPE-WG: error: nabla-to-spirv: workgroup size 0 is out of range (1 to 1024)
// PIPE-NOSM: error: nabla-to-nvvm: the nvvm target needs a chip (e.g. sm_90)
// PIPE-NOGFX: error: nabla-to-rocdl: the rocdl target needs a chip (e.g. gfx90a)
// PIPE-PTX: error: nabla-to-nvvm: features '+ptx74' select PTX 7.4, but sm_90 needs PTX 7.8 or later
// NOSM: check-target-support-options.mlir:{{[0-9]+}}:1: error: the nvvm target needs a chip (e.g. sm_90)
// NOGFX: check-target-support-options.mlir:{{[0-9]+}}:1: error: the rocdl target needs a chip (e.g. gfx90a)
// PTX: check-target-support-options.mlir:{{[0-9]+}}:1: error: features '+ptx74' select PTX 7.4, but sm_90 needs PTX 7.8 or later (leave features empty for the lowest that fits)
// PTX88: error: features '+ptx87' select PTX 8.7, but sm_88 needs PTX 9.0 or later
// INDEX: check-target-support-options.mlir:[[@LINE+6]]:12: error: 'arith.constant' op has index value 4294967296, which does not fit the 32-bit index of the spirv target

module attributes {gpu.container_module} {
  gpu.module @m {
    func.func @f(%A: memref<?xf32>) {
      %v = arith.constant 1.0 : f32
      %c = arith.constant 4294967296 : index
      memref.store %v, %A[%c] : memref<?xf32>
      return
    }
  }
}
