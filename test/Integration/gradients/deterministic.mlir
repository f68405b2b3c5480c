// Kernel adjoints with nabla.kernel_adjoint {deterministic}: adjoints that
// every thread accumulates into one element (the weights w[0], w[1]; the
// workgroup element tile[0]) are summed in a fixed order, so repeated
// launches give bit-identical gradients. Checked by test_gradients_deterministic.py on
// lavapipe (analytic gradients, repeat-run bit identity, the same gradient as
// the atomic adjoints up to rounding).
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: FileCheck %s --input-file=%t.spirv/manifest.json --check-prefix=MANIFEST
// MANIFEST: "name": "scale_ordered"
// MANIFEST: "scratch_words_per_block": 2
// MANIFEST: "name": "broadcast_ordered"
// MANIFEST: "scratch_words_per_block": 1
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{workgroup-size=64 emulate-float-atomics=true})" -o %t.metal.mlir
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Y[i] = w[0] X[i] + w[1] for i < n.
    gpu.func @scale(%X: memref<?xf32>, %W: memref<2xf32>, %Y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %x = memref.load %X[%i] : memref<?xf32>
        %w0 = memref.load %W[%c0] : memref<2xf32>
        %w1 = memref.load %W[%c1] : memref<2xf32>
        %p = arith.mulf %w0, %x : f32
        %y = arith.addf %p, %w1 : f32
        memref.store %y, %Y[%i] : memref<?xf32>
      }
      gpu.return
    }
    nabla.kernel_adjoint @scale -> @scale_ordered
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
         deterministic}
    nabla.kernel_adjoint @scale -> @scale_atomic
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>]}

    // Thread 0 puts s = w[0] * w[0] into workgroup memory; after a barrier
    // every thread reads it: Y[i] = s X[i] + s. The block's adjoints of s
    // meet in tile[0] (ordered block reduction at the replayed barrier), and
    // thread 0 of every block adds to dW[0] (ordered over blocks).
    gpu.func @broadcast(%X: memref<?xf32>, %W: memref<1xf32>, %Y: memref<?xf32>)
        workgroup(%tile: memref<1xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %w = memref.load %W[%c0] : memref<1xf32>
        %s = arith.mulf %w, %w : f32
        memref.store %s, %tile[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %s = memref.load %tile[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      %x = memref.load %X[%i] : memref<?xf32>
      %p = arith.mulf %s, %x : f32
      %y = arith.addf %p, %s : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @broadcast -> @broadcast_ordered
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
         deterministic}
  }
}
