// A block's sum tree in workgroup memory reversed as a reduction
// (ReductionTree.cpp): when the root alone is read after it, the adjoint is a
// broadcast of the root's (one barrier, the path test per element, no tape,
// no atomics), and with the output dupnoneed the forward tree is dropped
// (UnreadAttributions.cpp). Trees read elsewhere, inside another loop or in
// a buffer that is not a kernel attribution keep the stepwise reversal. A
// loop whose only state is its index restarts each step from it
// (LoopCheckpointing.cpp). Runs: test_reduction_trees.py.
// RUN: nabla-opt %s -split-input-file --nabla-differentiate=remarks=true -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func private @__nabla_kernel_sum
// CHECK-SAME: {nabla.attribution}
// CHECK-LABEL: func.func private @__nabla_vjp___nabla_kernel_sum_dnd
// CHECK-SAME: %[[TILE:[a-z0-9]+]]: memref<64xf32, #gpu.address_space<workgroup>>, %[[DTILE:[a-z0-9]+]]: memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.store {{.*}}, %[[TILE]][
// CHECK-NOT: memref.alloca
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[DTILE]]
// CHECK: %[[THREADS:.*]] = gpu.block_dim x
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
// is restarted from its index in the reverse sweep, no snapshots.
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
      // expected-remark @below {{adjoint accumulation keeps an atomic}}
      %x = memref.load %X[%j] : memref<?xf32>
      %y = arith.mulf %x, %x : f32
      // expected-remark @below {{the adjoint of this store is taken with an atomic exchange}}
      memref.store %y, %Y[%j] : memref<?xf32>
    }
    gpu.return
  }
  nabla.kernel_adjoint @rows -> @rows_adjoint
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
}
