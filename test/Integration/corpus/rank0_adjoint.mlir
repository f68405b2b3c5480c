// Corpus: kernel adjoints (deterministic and atomic) of a kernel with a
// rank-0 memref parameter (a fuzzing report listed it as a crash): every
// thread reads the scalar W, so dW is the sum of the output seeds.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @broadcast(%W: memref<f32>, %Y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %w = memref.load %W[] : memref<f32>
        %y = arith.mulf %w, %w : f32
        memref.store %y, %Y[%i] : memref<?xf32>
      }
      gpu.return
    }
    nabla.kernel_adjoint @broadcast -> @broadcast_ordered
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], deterministic}
    nabla.kernel_adjoint @broadcast -> @broadcast_atomic
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>]}
  }
}
