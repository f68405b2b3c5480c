// A block's sum tree in workgroup memory reversed as a reduction
// (ReductionTree.cpp; a max tree: @max at the end): when the root alone is
// read after it, the adjoint is a broadcast of the root's (one barrier, the path test per element, no tape,
// no atomics), and with the output dupnoneed the forward tree is dropped
// (UnreadAttributions.cpp). Trees read elsewhere, inside another loop or in
// a buffer that is not a kernel attribution keep the stepwise reversal. A
// loop whose only state is its index restarts each step from it
// (LoopCheckpointing.cpp). Runs: test_reduction_trees.py.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate=remarks=true -verify-diagnostics | FileCheck %s

// (The body's attribution parameters were marked for the derivative; the
// marks are gone once it is made.)
// CHECK-LABEL: func.func private @__nabla_kernel_sum
// CHECK-NOT: nabla.attribution
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_sum_dnd
// CHECK-SAME: %[[TILE:[a-z0-9]+]]: memref<64xf32, #gpu.address_space<workgroup>>, %[[DTILE:[a-z0-9]+]]: memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.store {{.*}}, %[[TILE]][
// CHECK-NOT: memref.alloca
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[DTILE]]
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[THREADS:.*]] = gpu.block_dim x
// CHECK: gpu.barrier
// CHECK-NEXT: %[[ROOT:.*]] = memref.load %[[DTILE]][%{{.*}}]
// CHECK: scf.for %[[J:.*]] = %[[TID]] to %{{.*}} step %[[THREADS]]
// CHECK: arith.cmpi uge, %[[J]], %{{.*}}
// CHECK: arith.cmpi ult, %{{.*}}, %[[THREADS]]
// CHECK: scf.if
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[DTILE]][%[[J]]]
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[ROOT]]
// CHECK-NEXT: memref.store %[[NEW]], %[[DTILE]][%[[J]]]
// CHECK-NOT: memref.store {{.*}}, %[[TILE]][
// CHECK: return
gpu.module @m {
  gpu.func @sum(%X: memref<?xf32>, %Out: memref<?xf32>)
      workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %i = gpu.global_id x
    %blk = gpu.block_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    %c32 = arith.constant 32 : index
    %x = memref.load %X[%i] : memref<?xf32>
    memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    // expected-remark @below {{loop reversed as a reduction: a sum tree of 64 elements in workgroup memory whose root alone is read after it; its adjoint is a broadcast of the root's (one barrier, no atomics, no tape)}}
    scf.for %k = %c0 to %c6 step %c1 {
      %s = arith.shrui %c32, %k : index
      %active = arith.cmpi ult, %t, %s : index
      scf.if %active {
        %j = arith.addi %t, %s : index
        %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
        %r = arith.addf %a, %b : f32
        memref.store %r, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
    }
    %first = arith.cmpi eq, %t, %c0 : index
    scf.if %first {
      // expected-remark @below {{adjoint accumulation keeps an atomic}}
      %r = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %r, %Out[%blk] : memref<?xf32>
    }
    gpu.return
  }
  nabla.kernel_adjoint @sum -> @sum_adjoint
      {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>]}
}

// -----
// Element 1 (a partial sum) is read after the tree too: its adjoint is not
// the root's alone, so the tree is reversed step by step.
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_leaf_dd
gpu.module @m {
  gpu.func @leaf(%X: memref<?xf32>, %Out: memref<?xf32>)
      workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %i = gpu.global_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    %c32 = arith.constant 32 : index
    %x = memref.load %X[%i] : memref<?xf32>
    memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    // expected-remark @below {{loop reversed with a tape of 6 slots}}
    scf.for %k = %c0 to %c6 step %c1 {
      %s = arith.shrui %c32, %k : index
      %active = arith.cmpi ult, %t, %s : index
      scf.if %active {
        %j = arith.addi %t, %s : index
        %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        // expected-remark @below {{adjoint accumulation keeps an atomic}}
        %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
        %r = arith.addf %a, %b : f32
        memref.store %r, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
    }
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %r = memref.load %tile[%c1] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %r, %Out[%i] : memref<?xf32>
    gpu.return
  }
  nabla.kernel_adjoint @leaf -> @leaf_adjoint
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
}

// -----
// A tile passed in by the caller (not a kernel attribution): its shadow may
// hold adjoints of other elements, so the tree is reversed step by step.
// CHECK-LABEL: func.func private @__nabla_vjp_tree_dd
func.func @tree(%tile: memref<64xf32, #gpu.address_space<workgroup>>, %Out: memref<?xf32>) {
  %t = gpu.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c32 = arith.constant 32 : index
  // expected-remark @below {{loop reversed with a tape of 6 slots}}
  scf.for %k = %c0 to %c6 step %c1 {
    %s = arith.shrui %c32, %k : index
    %active = arith.cmpi ult, %t, %s : index
    scf.if %active {
      %j = arith.addi %t, %s : index
      %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      // expected-remark @below {{adjoint accumulation keeps an atomic}}
      %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
      %r = arith.addf %a, %b : f32
      memref.store %r, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
  }
  // expected-remark @below {{adjoint accumulation keeps an atomic}}
  %r = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
  memref.store %r, %Out[%t] : memref<?xf32>
  return
}
func.func @caller(%tile: memref<64xf32, #gpu.address_space<workgroup>>, %dtile: memref<64xf32, #gpu.address_space<workgroup>>, %Out: memref<?xf32>, %dOut: memref<?xf32>) {
  nabla.autodiff @tree(%tile, %dtile, %Out, %dOut)
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
      : (memref<64xf32, #gpu.address_space<workgroup>>, memref<64xf32, #gpu.address_space<workgroup>>, memref<?xf32>, memref<?xf32>) -> ()
  return
}

// -----
// A row loaded by a block-strided loop (no state but its index): each step
// is restarted from its index in the reverse sweep, no snapshots. No other
// thread of the block visits a thread's elements (a block-stride loop):
// its accumulations are plain, behind the check that the block is 1-D and
// the grid one block.
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_rows_dd
// CHECK-NOT: memref.alloca
// CHECK-NOT: scf.while
// CHECK: return
gpu.module @m {
  gpu.func @rows(%X: memref<?xf32>, %Y: memref<?xf32>) kernel {
    %t = gpu.thread_id x
    %n = gpu.block_dim x
    %c64 = arith.constant 64 : index
    // expected-remark @below {{loop reversed by recomputing each iteration from its index (its only state): no snapshots, 0 bytes per thread}}
    scf.for %j = %t to %c64 step %n {
      %x = memref.load %X[%j] : memref<?xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %Y[%j] : memref<?xf32>
    }
    gpu.return
  }
  nabla.kernel_adjoint @rows -> @rows_adjoint
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
}

// -----
// CUDA's form after clang: the first stride blockDim.x / 2 at run time, a
// do-while halving it, i32 thread ids; the tile reaches the function as an
// argument, a kernel attribution at the request (zero-filled shadow, nothing
// after the call), which the derivative's name records (_w2). The path test
// walks the strides at run time.
// CHECK-LABEL: func.func private @__nabla_vjp_reduce_ddd_w2
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: scf.while
// CHECK: arith.shrui
// CHECK: arith.addf
// CHECK: return
gpu.module @m {
  func.func @reduce(%x: memref<?xf32>, %out: memref<?xf32>, %tile: memref<256xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %tid = gpu.thread_id x
    %t = arith.index_cast %tid : index to i32
    %n = gpu.block_dim x
    %n32 = arith.index_cast %n : index to i32
    %v = memref.load %x[%tid] : memref<?xf32>
    memref.store %v, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %s0 = arith.shrui %n32, %c1_i32 : i32
    // expected-remark @below {{loop reversed as a reduction: a sum tree of twice its first stride elements}}
    %r = scf.while (%s = %s0) : (i32) -> i32 {
      %active = arith.cmpi ult, %t, %s : i32
      scf.if %active {
        %j = arith.addi %s, %t : i32
        %ji = arith.index_castui %j : i32 to index
        %a = memref.load %tile[%ji] : memref<256xf32, #gpu.address_space<workgroup>>
        %b = memref.load %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
        %sum = arith.addf %a, %b : f32
        memref.store %sum, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %next = arith.shrui %s, %c1_i32 : i32
      %more = arith.cmpi ne, %next, %c0_i32 : i32
      scf.condition(%more) %next : i32
    } do {
    ^bb0(%s: i32):
      scf.yield %s : i32
    }
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-remark @below {{adjoint accumulation keeps an atomic}}
      %root = memref.load %tile[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
      %blk = gpu.block_id x
      memref.store %root, %out[%blk] : memref<?xf32>
    }
    return
  }
  gpu.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %out: memref<?xf32>, %dout: memref<?xf32>)
      workgroup(%tile: memref<256xf32, #gpu.address_space<workgroup>>,
                %dtile: memref<256xf32, #gpu.address_space<workgroup>>) kernel {
    %tid = gpu.thread_id x
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %dtile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    nabla.autodiff @reduce(%x, %dx, %out, %dout, %tile, %dtile)
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<256xf32, #gpu.address_space<workgroup>>, memref<256xf32, #gpu.address_space<workgroup>>) -> ()
    gpu.return
  }
}

// -----
// A view of the tile taken before the tree and read after it: its adjoint is
// not the root's alone, so the tree is reversed step by step.
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_viewed_dd
gpu.module @m {
  gpu.func @viewed(%X: memref<?xf32>, %Out: memref<?xf32>)
      workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %i = gpu.global_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    %c32 = arith.constant 32 : index
    %upper = memref.subview %tile[32] [32] [1] : memref<64xf32, #gpu.address_space<workgroup>> to memref<32xf32, strided<[1], offset: 32>, #gpu.address_space<workgroup>>
    %x = memref.load %X[%i] : memref<?xf32>
    memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    // expected-remark @below {{loop reversed with a tape of 6 slots}}
    scf.for %k = %c0 to %c6 step %c1 {
      %s = arith.shrui %c32, %k : index
      %active = arith.cmpi ult, %t, %s : index
      scf.if %active {
        %j = arith.addi %t, %s : index
        %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        // expected-remark @below {{adjoint accumulation keeps an atomic}}
        %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
        %r = arith.addf %a, %b : f32
        memref.store %r, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
    }
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %r = memref.load %upper[%c1] : memref<32xf32, strided<[1], offset: 32>, #gpu.address_space<workgroup>>
    memref.store %r, %Out[%i] : memref<?xf32>
    gpu.return
  }
  nabla.kernel_adjoint @viewed -> @viewed_adjoint
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
}

// -----
// llm.c's softmax_forward_kernel2 shape: each step opens with the barrier,
// none between the leaf store and the tree, every thread reads the root.
// The broadcast ends with a barrier: the leaf store's reverse (thread 0
// takes the root's adjoint away) must not run before every thread read the
// seed.
// CHECK-LABEL: func.func private @__nabla_vjp_barrier_first_ddd_w2
// CHECK: memref.atomic_rmw addf
// CHECK: scf.while
// CHECK: arith.addf
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: return
gpu.module @m {
  func.func @barrier_first(%x: memref<?xf32>, %out: memref<?xf32>, %tile: memref<256xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %tid = gpu.thread_id x
    %t = arith.index_cast %tid : index to i32
    %n = gpu.block_dim x
    %n32 = arith.index_cast %n : index to i32
    %v = memref.load %x[%tid] : memref<?xf32>
    memref.store %v, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
    %s0 = arith.shrui %n32, %c1_i32 : i32
    // expected-remark @below {{loop reversed as a reduction: a sum tree of twice its first stride elements}}
    %r = scf.while (%s = %s0) : (i32) -> i32 {
      gpu.barrier
      %active = arith.cmpi ult, %t, %s : i32
      scf.if %active {
        %j = arith.addi %s, %t : i32
        %ji = arith.index_castui %j : i32 to index
        %a = memref.load %tile[%ji] : memref<256xf32, #gpu.address_space<workgroup>>
        %b = memref.load %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
        %sum = arith.addf %a, %b : f32
        memref.store %sum, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      %next = arith.shrui %s, %c1_i32 : i32
      %more = arith.cmpi ne, %next, %c0_i32 : i32
      scf.condition(%more) %next : i32
    } do {
    ^bb0(%s: i32):
      scf.yield %s : i32
    }
    gpu.barrier
    // expected-remark @below {{adjoint accumulation keeps an atomic}}
    %root = memref.load %tile[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
    %y = arith.mulf %root, %v : f32
    %tid2 = gpu.thread_id x
    memref.store %y, %out[%tid2] : memref<?xf32>
    return
  }
  gpu.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %out: memref<?xf32>, %dout: memref<?xf32>)
      workgroup(%tile: memref<256xf32, #gpu.address_space<workgroup>>,
                %dtile: memref<256xf32, #gpu.address_space<workgroup>>) kernel {
    %tid = gpu.thread_id x
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %dtile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    nabla.autodiff @barrier_first(%x, %dx, %out, %dout, %tile, %dtile)
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<256xf32, #gpu.address_space<workgroup>>, memref<256xf32, #gpu.address_space<workgroup>>) -> ()
    gpu.return
  }
}

// -----
// A max tree in the same do-while over a buffer the function allocates (not
// a kernel attribution, whose shadow is known to be zero and free for the
// winners: @max): the halving loop is counted (its trip count is bounded by
// the stride's 32 bits) and reversed step by step from a private tape.
// CHECK-LABEL: func.func private @__nabla_vjp_max_tree_dd
gpu.module @m {
  func.func @max_tree(%x: memref<?xf32>, %out: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %tile = memref.alloca() : memref<256xf32, #gpu.address_space<workgroup>>
    %tid = gpu.thread_id x
    %t = arith.index_cast %tid : index to i32
    %n = gpu.block_dim x
    %n32 = arith.index_cast %n : index to i32
    %v = memref.load %x[%tid] : memref<?xf32>
    memref.store %v, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
    %s0 = arith.shrui %n32, %c1_i32 : i32
    // expected-remark @below {{loop reversed with a tape of 32 (nabla.max_trip_count) slots per enclosing iteration}}
    %r = scf.while (%s = %s0) : (i32) -> i32 {
      gpu.barrier
      %active = arith.cmpi ult, %t, %s : i32
      scf.if %active {
        %j = arith.addi %s, %t : i32
        %ji = arith.index_castui %j : i32 to index
        %a = memref.load %tile[%ji] : memref<256xf32, #gpu.address_space<workgroup>>
        %b = memref.load %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
        %m = arith.maxnumf %a, %b : f32
        memref.store %m, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      %next = arith.shrui %s, %c1_i32 : i32
      %more = arith.cmpi ne, %next, %c0_i32 : i32
      scf.condition(%more) %next : i32
    } do {
    ^bb0(%s: i32):
      scf.yield %s : i32
    }
    gpu.barrier
    %root = memref.load %tile[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
    %y = arith.subf %v, %root : f32
    memref.store %y, %out[%tid] : memref<?xf32>
    return
  }
  gpu.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %out: memref<?xf32>, %dout: memref<?xf32>) kernel {
    nabla.autodiff @max_tree(%x, %dx, %out, %dout)
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
    gpu.return
  }
}

// -----
// A max tree over a kernel attribution (bench/gradients' softmax shape),
// with a partial result (position 1) read after it too: each position's
// final value is one element's, so the forward sweep runs the tree with the
// winners' indices alongside in the tile's shadow (each position its own
// winner first; a merge keeps the first operand's on `a >= b`, the
// derivative rule's), keeps the thread's positions' winners in the global
// tape and zeroes the shadow; the reverse sweep gives each position's
// adjoint to its winner (read all, barrier, atomic adds). No reversed steps.
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_max_dnd
// CHECK-SAME: %[[TILE:[a-z0-9]+]]: memref<64xf32, #gpu.address_space<workgroup>>, %[[DTILE:[a-z0-9]+]]: memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK-DAG: %[[WINNERS:.*]] = nabla.tape %[[SHARE:.*]] : memref<?xi32>
// CHECK-DAG: %[[MOVED:.*]] = nabla.tape %[[SHARE]] : memref<?xi32>
// CHECK: arith.uitofp
// CHECK: memref.store %{{.*}}, %[[DTILE]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: %[[A:.*]] = memref.load %[[TILE]]
// CHECK: %[[B:.*]] = memref.load %[[TILE]]
// CHECK: %[[M:.*]] = arith.maximumf %[[A]], %[[B]]
// CHECK: %[[IA:.*]] = memref.load %[[DTILE]]
// CHECK: %[[IB:.*]] = memref.load %[[DTILE]]
// CHECK: %[[KEEP:.*]] = arith.cmpf oge, %[[A]], %[[B]]
// CHECK: %[[W:.*]] = arith.select %[[KEEP]], %[[IA]], %[[IB]]
// CHECK: memref.store %[[W]], %[[DTILE]]
// CHECK: memref.store %[[M]], %[[TILE]]
// CHECK: gpu.barrier
// CHECK: arith.fptoui
// CHECK: memref.store %{{.*}}, %[[WINNERS]]
// CHECK: memref.store %{{.*}}, %[[DTILE]]
// CHECK: gpu.barrier
// The reverse sweep.
// CHECK: gpu.barrier
// CHECK: memref.load %[[WINNERS]]
// CHECK: memref.store %{{.*}}, %[[MOVED]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[MOVED]]
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[DTILE]]
// CHECK: gpu.barrier
// CHECK: return
gpu.module @m {
  gpu.func @max(%X: memref<?xf32>, %Out: memref<?xf32>)
      workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %i = gpu.global_id x
    %blk = gpu.block_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c6 = arith.constant 6 : index
    %c32 = arith.constant 32 : index
    %x = memref.load %X[%i] : memref<?xf32>
    memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    // expected-remark @below {{loop reversed as a reduction: a max tree in workgroup memory whose merges' winners the forward sweep tracks; each position's adjoint goes to its winner (no reversed steps, no taped operands)}}
    scf.for %k = %c0 to %c6 step %c1 {
      %s = arith.shrui %c32, %k : index
      %active = arith.cmpi ult, %t, %s : index
      scf.if %active {
        %j = arith.addi %t, %s : index
        %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
        %r = arith.maximumf %a, %b : f32
        memref.store %r, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
    }
    %first = arith.cmpi eq, %t, %c0 : index
    scf.if %first {
      // expected-remark @below {{adjoint accumulation keeps an atomic}}
      %r = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      // expected-remark @below {{adjoint accumulation keeps an atomic}}
      %p = memref.load %tile[%c1] : memref<64xf32, #gpu.address_space<workgroup>>
      %o = arith.mulf %r, %p : f32
      %at = arith.muli %blk, %c2 : index
      memref.store %o, %Out[%at] : memref<?xf32>
    }
    gpu.return
  }
  nabla.kernel_adjoint @max -> @max_adjoint
      {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>]}
}
