// Corpus: f32 math.atan and math.atan2 element-wise, for their accuracy on
// the default device (test_math_accuracy.py). On SPIR-V both are Nabla's own
// expansion (AccurateArctangent.cpp): lavapipe's GLSL.std.450 Atan was off by
// ~350 ulp, which difftest seed 62486 amplified through a loop.
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @atan_f32(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %y = math.atan %x : f32
        memref.store %y, %Y[%i] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @atan2_f32(%A: memref<?xf32>, %B: memref<?xf32>, %Y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %A[%i] : memref<?xf32>
        %b = memref.load %B[%i] : memref<?xf32>
        %y = math.atan2 %a, %b : f32
        memref.store %y, %Y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
