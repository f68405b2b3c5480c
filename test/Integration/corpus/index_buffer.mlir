// Corpus: a memref<?xindex> buffer on Vulkan, where SPIR-V's index is 32-bit: the
// runtime narrows the int64 elements going in and widens them coming back
// (it copied them unchanged before: a silently wrong result).
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xindex>, %B: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %A[%i] : memref<?xindex>
        %c3 = arith.constant 3 : index
        %b = arith.muli %a, %c3 : index
        memref.store %b, %A[%i] : memref<?xindex>
        %f = arith.index_cast %a : index to i32
        %g = arith.sitofp %f : i32 to f32
        memref.store %g, %B[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
