// nabla-to-nvvm: PTX with a PTX version fitting the chip, plus a cubin.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-nvvm{chip=sm_90 cubin=false})" | FileCheck %s
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-nvvm{chip=sm_80 cubin=false})" | FileCheck %s --check-prefix=SM80
// Chips newer than the PTX ISA table take the version LLVM picks for them
// (sm_88 with PTX 8.7 aborted LLVM's NVPTX back end; found by fuzzing).
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-nvvm{chip=sm_88 cubin=false})" | FileCheck %s --check-prefix=SM88
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-nvvm{chip=sm_103 cubin=false})" | FileCheck %s --check-prefix=SM103

// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx78">
// CHECK-SAME: assembly = "{{.*}}.version 7.8\0A.target sm_90
// CHECK-SAME: .entry mul_kernel
// CHECK-NOT: bin =
// SM80: features = "+ptx70"
// SM80-SAME: .target sm_80
// SM88: features = "+ptx90"
// SM88-SAME: .version 9.0\0A.target sm_88
// SM103: features = "+ptx88"
// SM103-SAME: .target sm_103
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @mul(%A: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %inbounds = arith.cmpi ult, %i, %n : index
      scf.if %inbounds {
        %a = memref.load %A[%i] : memref<?xf32>
        %sq = arith.mulf %a, %a : f32
        memref.store %sq, %A[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @mul_kernel(%A: memref<?xf32>, %n: index) kernel {
      func.call @mul(%A, %n) : (memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
