// Corpus: math.round and math.copysign element-wise in f32 and f64 on edge
// values (test_math_accuracy.py). On SPIR-V both are Nabla's select forms
// (GPUToSPIRV.cpp): lavapipe miscomputed upstream's mask-and-or copysign
// (difftest seeds 65774 and 64742).
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sign_f32(%X: memref<?xf32>, %S: memref<?xf32>, %R: memref<?xf32>, %C: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %s = memref.load %S[%i] : memref<?xf32>
        %r = math.round %x : f32
        %c = math.copysign %x, %s : f32
        memref.store %r, %R[%i] : memref<?xf32>
        memref.store %c, %C[%i] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @sign_f64(%X: memref<?xf64>, %S: memref<?xf64>, %R: memref<?xf64>, %C: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf64>
        %s = memref.load %S[%i] : memref<?xf64>
        %r = math.round %x : f64
        %c = math.copysign %x, %s : f64
        memref.store %r, %R[%i] : memref<?xf64>
        memref.store %c, %C[%i] : memref<?xf64>
      }
      gpu.return
    }
  }
}
