// The deterministic kernel adjoint of deterministic.mlir's @scale in f64: a
// partial takes two scratch words, the block sums shuffle 64-bit values as
// 32-bit halves on NVVM/ROCDL. Checked by test_gradients_deterministic.py on lavapipe.
// Metal has no f64.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=256 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale64(%X: memref<?xf64>, %W: memref<2xf64>, %Y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %x = memref.load %X[%i] : memref<?xf64>
        %w0 = memref.load %W[%c0] : memref<2xf64>
        %w1 = memref.load %W[%c1] : memref<2xf64>
        %p = arith.mulf %w0, %x : f64
        %y = arith.addf %p, %w1 : f64
        memref.store %y, %Y[%i] : memref<?xf64>
      }
      gpu.return
    }
    nabla.kernel_adjoint @scale64 -> @scale64_ordered
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
         deterministic}
  }
}
