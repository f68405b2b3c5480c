// A loop with a trip count known at run time whose iterations read memory
// it overwrites cannot be checkpointed: its values go to slots of the
// kernel's global-memory tape (nabla.tape), sized from the trip count
// computed at the derivative's entry. A loop nested in it is taped there too.
// RUN: nabla-opt %s --nabla-differentiate="remarks=true" -split-input-file 2>/dev/null | FileCheck %s
// RUN: nabla-opt %s --nabla-differentiate="remarks=true" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// REMARK: remark: loop reversed with a global-memory tape of 0 bytes per iteration and thread, its trip count known at run time
// REMARK: remark: loop reversed with a global-memory tape of 4 bytes per iteration (4 iterations) and thread
// CHECK-LABEL: func.func private @__nabla_vjp_f_dc(
// CHECK-SAME: %[[A:.*]]: memref<?xf32>, %[[DA:.*]]: memref<?xf32>, %[[N:.*]]: index)
// The outer trip count at the entry, times the inner loop's 4 slots.
// CHECK: %[[COUNT:.*]] = arith.select
// CHECK: %[[SLOTS:.*]] = arith.muli %{{.*}}, %[[COUNT]] : index
// CHECK: %[[TAPE:.*]] = nabla.tape %[[SLOTS]] : memref<?xi32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[X:.*]] = memref.load %[[A]]
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: memref.store %[[BITS]], %[[TAPE]][%{{.*}}] : memref<?xi32>
// The reverse sweep reads it back.
// CHECK: memref.load %[[TAPE]][%{{.*}}] : memref<?xi32>
module {
  func.func @f(%A: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %x = memref.load %A[%j] : memref<?xf32>
        %y = arith.mulf %x, %x : f32
        memref.store %y, %A[%j] : memref<?xf32>
      }
    }
    return
  }
  func.func @grad(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) {
    nabla.autodiff @f(%A, %dA, %n)
        {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
        : (memref<?xf32>, memref<?xf32>, index) -> ()
    return
  }
}

// -----

// In-place scaling of a row after the loop that summed it: both loops read
// what the second overwrites. A 64-bit value takes two words per slot.
// CHECK-LABEL: func.func private @__nabla_vjp_g_dc(
// CHECK: nabla.tape %{{.*}} : memref<?xi32>
// CHECK: nabla.tape %{{.*}} : memref<?xi32>
// CHECK-NOT: memref.alloca
func.func @g(%row: memref<?xf32>, %n: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %m = arith.index_cast %n : i32 to index
  %sum = scf.for %j = %c0 to %m step %c1 iter_args(%s = %zero) -> f32 {
    %x = memref.load %row[%j] : memref<?xf32>
    %t = arith.addf %s, %x : f32
    scf.yield %t : f32
  }
  %inv = arith.divf %one, %sum : f32
  scf.for %j = %c0 to %m step %c1 {
    %x = memref.load %row[%j] : memref<?xf32>
    %y = arith.mulf %x, %inv : f32
    memref.store %y, %row[%j] : memref<?xf32>
  }
  return
}
func.func @grad_g(%row: memref<?xf32>, %drow: memref<?xf32>, %n: i32) {
  nabla.autodiff @g(%row, %drow, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, i32) -> ()
  return
}

// -----

// Ragged rows: the bounds are elements of a buffer nothing writes, read
// where the primal reads them (`if (r < rows)`). The trip count is recomputed
// at the entry from a read guarded by that condition (0 where the thread has
// no row), and the global tape is sized from it.
// CHECK-LABEL: func.func private @__nabla_vjp_ragged_dcc(
// CHECK-SAME: %[[X:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[OFFSETS:.*]]: memref<?xi32>, %[[ROWS:.*]]: index)
// CHECK: %[[R:.*]] = gpu.thread_id x
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[R]], %[[ROWS]] : index
// CHECK: %[[FIRST:.*]] = scf.if %[[IN]] -> (i32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[OFFSETS]][%[[R]]] : memref<?xi32>
// CHECK-NEXT: scf.yield %[[V]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: scf.yield %[[Z]] : i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[R]], %{{.*}} : index
// CHECK: %[[LAST:.*]] = scf.if %[[IN]] -> (i32) {
// CHECK-NEXT: memref.load %[[OFFSETS]][%[[NEXT]]] : memref<?xi32>
// CHECK: nabla.tape %{{.*}} : memref<?xi32>
func.func @ragged(%x: memref<?xf32>, %offsets: memref<?xi32>, %rows: index) {
  %c1 = arith.constant 1 : index
  %r = gpu.thread_id x
  %inside = arith.cmpi ult, %r, %rows : index
  scf.if %inside {
    %next = arith.addi %r, %c1 : index
    %first = memref.load %offsets[%r] : memref<?xi32>
    %last = memref.load %offsets[%next] : memref<?xi32>
    %begin = arith.index_cast %first : i32 to index
    %end = arith.index_cast %last : i32 to index
    scf.for %k = %begin to %end step %c1 {
      %v = memref.load %x[%k] : memref<?xf32>
      %q = arith.mulf %v, %v : f32
      memref.store %q, %x[%k] : memref<?xf32>
    }
  }
  return
}
func.func @grad_ragged(%x: memref<?xf32>, %dx: memref<?xf32>, %offsets: memref<?xi32>, %rows: index) {
  nabla.autodiff @ragged(%x, %dx, %offsets, %rows)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, memref<?xi32>, index) -> ()
  return
}

// -----

// A triangular nest (`for i < n: for j < i`, the inner bound the outer's
// position, here through a counter the outer loop carries as clang's
// rotated loops do) that overwrites what it reads: the inner loop's slots
// per outer iteration are its largest trip count, the maximum over the
// corners of the outer loop's range computed at the entry; the forward
// sweep stores a slot only under it (the reverse sweep checks the count).
// REMARK: remark: loop reversed with a global-memory tape of 8 bytes per iteration and thread, sized by its largest trip count over the enclosing loops' iterations
// CHECK-LABEL: func.func private @__nabla_vjp_tri_dc(
// CHECK: %[[OUTER:.*]] = arith.select
// The inner count at the outer loop's first and last position.
// CHECK: %[[FIRST:.*]] = arith.select
// CHECK: %[[LAST:.*]] = arith.select
// CHECK: %[[MAX:.*]] = arith.maxui %[[FIRST]], %[[LAST]] : index
// CHECK: %[[SLOTS:.*]] = arith.muli %[[OUTER]], %[[MAX]] : index
// CHECK: %[[TAPE:.*]] = nabla.tape %[[SLOTS]] : memref<?xi32>
// CHECK: scf.for
// CHECK: scf.for %[[J:.*]] = %{{.*}} to
// CHECK: %[[LOCAL:.*]] = arith.divui
// CHECK: %[[FITS:.*]] = arith.cmpi ult, %[[LOCAL]], %[[MAX]] : index
// CHECK-NEXT: scf.if %[[FITS]] {
// CHECK: memref.store %{{.*}}, %[[TAPE]]
// The reverse sweep clamps the count to the slots (NaN adjoints past them).
// CHECK: %[[OVER:.*]] = arith.cmpi ugt, %{{.*}}, %[[MAX]] : index
// CHECK: arith.select %[[OVER]], %[[MAX]]
func.func @tri(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i0 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %last = scf.for %k = %c0 to %n step %c1 iter_args(%i = %i0) -> i32 {
    %m = arith.index_cast %i : i32 to index
    scf.for %j = %c0 to %m step %c1 {
      %a = memref.load %x[%j] : memref<?xf32>
      %b = memref.load %x[%m] : memref<?xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %x[%j] : memref<?xf32>
    }
    %next = arith.addi %i, %one : i32
    scf.yield %next : i32
  }
  return
}
func.func @grad_tri(%x: memref<?xf32>, %dx: memref<?xf32>, %n: index) {
  nabla.autodiff @tri(%x, %dx, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, index) -> ()
  return
}

// -----

// A while loop whose trip count is known only as it runs (a linked list
// walked) and that overwrites what it reads: its steps go to slots of a
// growing tape, nabla.tape_capacity per thread. Step k stores the before
// region's arguments and values, and the after region's, at slot k while k
// is below the capacity; a thread that needed more reports its steps with
// nabla.tape_overflow; the reverse sweep reloads the steps backwards and
// skips them all (NaN adjoints) after an overflow.
// REMARK: remark: loop reversed with a growing global-memory tape of 12 bytes per step and thread, nabla.tape_capacity steps per thread
// CHECK-LABEL: func.func private @__nabla_vjp_walk_dcc(
// CHECK: %[[CAP:.*]] = nabla.tape_capacity : index
// CHECK: %[[I:.*]] = nabla.tape %[[CAP]] : memref<?xi32>
// CHECK: %[[CARRY:.*]] = nabla.tape %[[CAP]] : memref<?xi32>
// CHECK: %[[V:.*]] = nabla.tape %[[CAP]] : memref<?xi32>
// CHECK: %[[LOOP:.*]]:3 = scf.while (%[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}}, %[[STEP:.*]] = %{{.*}})
// CHECK: %[[FITS:.*]] = arith.cmpi ult, %[[STEP]], %[[CAP]] : index
// CHECK-NEXT: scf.if %[[FITS]] {
// CHECK-NEXT: memref.store %[[A]], %[[I]][%[[STEP]]]
// CHECK: } do {
// CHECK: memref.store %{{.*}}, %[[V]][%{{.*}}]
// CHECK: %[[STEPS:.*]] = arith.addi %[[LOOP]]#2, %{{.*}} : index
// CHECK: %[[OVER:.*]] = arith.cmpi ugt, %[[STEPS]], %[[CAP]] : index
// CHECK-NEXT: scf.if %[[OVER]] {
// CHECK-NEXT: nabla.tape_overflow %[[STEPS]]
// CHECK: scf.for
// CHECK: memref.load %[[I]]
// CHECK: memref.load %[[CARRY]]
// CHECK: memref.load %[[V]]
func.func @walk(%x: memref<?xf32>, %next: memref<?xi32>, %first: i32) {
  %zero = arith.constant 0 : i32
  %c = arith.constant 0.5 : f32
  %r:2 = scf.while (%i = %first, %carry = %c) : (i32, f32) -> (i32, f32) {
    %go = arith.cmpi sge, %i, %zero : i32
    scf.condition(%go) %i, %carry : i32, f32
  } do {
  ^bb0(%i: i32, %carry: f32):
    %k = arith.index_cast %i : i32 to index
    %v = memref.load %x[%k] : memref<?xf32>
    %w = arith.mulf %v, %carry : f32
    memref.store %w, %x[%k] : memref<?xf32>
    %n = memref.load %next[%k] : memref<?xi32>
    scf.yield %n, %v : i32, f32
  }
  return
}
func.func @grad_walk(%x: memref<?xf32>, %dx: memref<?xf32>, %next: memref<?xi32>, %first: i32) {
  nabla.autodiff @walk(%x, %dx, %next, %first)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, memref<?xi32>, i32) -> ()
  return
}

// -----

// A loop whose bound is read from memory the function writes (a count it
// then clears), overwriting what it reads: no formula at the entry, so its
// tape grows (nabla.tape_capacity slots); a trip count past the capacity is
// reported after the loop.
// REMARK: remark: loop reversed with a global-memory tape of 8 bytes per iteration and thread, nabla.tape_capacity iterations (a growing tape: its trip count is known only when it starts)
// CHECK-LABEL: func.func private @__nabla_vjp_drain_dc(
// CHECK: %[[CAP:.*]] = nabla.tape_capacity : index
// CHECK: %[[SLOTS:.*]] = nabla.tape %[[CAP]] : memref<?xi32>
// CHECK: scf.for
// CHECK: %[[FITS:.*]] = arith.cmpi ult, %{{.*}}, %[[CAP]] : index
// CHECK-NEXT: scf.if %[[FITS]] {
// CHECK-NEXT: arith.bitcast
// CHECK-NEXT: memref.store %{{.*}}, %[[SLOTS]]
// CHECK: %[[OVER:.*]] = arith.cmpi ugt, %[[COUNT:.*]], %[[CAP]] : index
// CHECK-NEXT: scf.if %[[OVER]] {
// CHECK-NEXT: nabla.tape_overflow %[[COUNT]]
func.func @drain(%x: memref<?xf32>, %count: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.load %count[%c0] : memref<1xindex>
  scf.for %j = %c1 to %n step %c1 {
    %p = arith.subi %j, %c1 : index
    %a = memref.load %x[%p] : memref<?xf32>
    %v = memref.load %x[%j] : memref<?xf32>
    %w = arith.mulf %a, %v : f32
    memref.store %w, %x[%j] : memref<?xf32>
  }
  memref.store %c0, %count[%c0] : memref<1xindex>
  return
}
func.func @grad_drain(%x: memref<?xf32>, %dx: memref<?xf32>, %count: memref<1xindex>) {
  nabla.autodiff @drain(%x, %dx, %count)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, memref<1xindex>) -> ()
  return
}

// -----

// The same walk inside a loop taped in global memory (its trip count a
// parameter): the while's slots are the capacity's per iteration of it
// (slot = iteration * capacity + step), and its step count is taped per
// iteration too, for the reverse sweep of each.
// REMARK: remark: loop reversed with a growing global-memory tape of 12 bytes per step and thread, nabla.tape_capacity steps per thread and iteration of the taped loops around it
// CHECK-LABEL: func.func private @__nabla_vjp_walk_dccc(
// CHECK: %[[OUTER:.*]] = arith.select
// CHECK: %[[CAP:.*]] = nabla.tape_capacity : index
// CHECK: %[[ALL:.*]] = arith.muli %[[OUTER]], %[[CAP]] : index
// CHECK: %[[COUNTS:.*]] = nabla.tape %[[OUTER]] : memref<?x2xi32>
// CHECK: %[[I:.*]] = nabla.tape %[[ALL]] : memref<?xi32>
// CHECK: scf.for
// CHECK: %[[ITER:.*]] = arith.divui
// CHECK: scf.while
// CHECK: %[[BASE:.*]] = arith.muli %[[ITER]], %[[CAP]] : index
// CHECK: %[[SLOT:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK: memref.store %{{.*}}, %[[I]][%[[SLOT]]]
// CHECK: memref.store %{{.*}}, %[[COUNTS]][%[[ITER]], %{{.*}}] : memref<?x2xi32>
// CHECK: nabla.tape_overflow
func.func @walk(%x: memref<?xf32>, %next: memref<?xi32>, %first: i32, %n: index) {
  %zero = arith.constant 0 : i32
  %c = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %p = %c0 to %n step %c1 {
  %r:2 = scf.while (%i = %first, %carry = %c) : (i32, f32) -> (i32, f32) {
    %go = arith.cmpi sge, %i, %zero : i32
    scf.condition(%go) %i, %carry : i32, f32
  } do {
  ^bb0(%i: i32, %carry: f32):
    %k = arith.index_cast %i : i32 to index
    %v = memref.load %x[%k] : memref<?xf32>
    %w = arith.mulf %v, %carry : f32
    memref.store %w, %x[%k] : memref<?xf32>
    %nx = memref.load %next[%k] : memref<?xi32>
    scf.yield %nx, %v : i32, f32
  }
  }
  return
}
func.func @grad_walk(%x: memref<?xf32>, %dx: memref<?xf32>, %next: memref<?xi32>, %first: i32, %n: index) {
  nabla.autodiff @walk(%x, %dx, %next, %first, %n)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, memref<?xi32>, i32, index) -> ()
  return
}
