// nabla-promote-private-allocs: a fixed-size heap allocation that stays in
// its function becomes private memory in its place, its deallocations gone;
// run-time sizes, workgroup memory, allocations that leave their region and
// those over max-bytes stay.
// RUN: nabla-opt %s --pass-pipeline='builtin.module(gpu.module(nabla-promote-private-allocs{max-bytes=1024}))' | FileCheck %s

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @in_loop
    // CHECK: scf.for
    // CHECK-NEXT: %[[T:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4xf32>
    // CHECK: memref.store %{{.*}}, %[[T]]
    // CHECK-NOT: memref.dealloc
    // CHECK: gpu.return
    gpu.func @in_loop(%X: memref<?xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {
        %t = memref.alloc() {alignment = 16 : i64} : memref<4xf32>
        %x = memref.load %X[%i] : memref<?xf32>
        memref.store %x, %t[%c0] : memref<4xf32>
        %y = memref.load %t[%c0] : memref<4xf32>
        memref.store %y, %X[%i] : memref<?xf32>
        memref.dealloc %t : memref<4xf32>
      }
      gpu.return
    }

    // A deallocation through a view, index and vector elements, private
    // memory space: all promoted.
    // CHECK-LABEL: func.func @views
    // CHECK: %[[A:.*]] = memref.alloca() : memref<2x3xindex>
    // CHECK: memref.collapse_shape %[[A]]
    // CHECK: memref.alloca() : memref<8xvector<4xf32>>
    // CHECK: memref.alloca() : memref<4xf32, #gpu.address_space<private>>
    // CHECK-NOT: memref.alloc(
    // CHECK-NOT: memref.dealloc
    // CHECK: return
    func.func @views() {
      %a = memref.alloc() : memref<2x3xindex>
      %v = memref.collapse_shape %a [[0, 1]] : memref<2x3xindex> into memref<6xindex>
      memref.dealloc %v : memref<6xindex>
      %b = memref.alloc() : memref<8xvector<4xf32>>
      %c = memref.alloc() : memref<4xf32, #gpu.address_space<private>>
      return
    }

    // CHECK-LABEL: func.func @stays
    // Run-time size.
    // CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
    // Workgroup memory.
    // CHECK: memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
    // Over max-bytes (1024 here).
    // CHECK: memref.alloc() : memref<257xf32>
    // Returned.
    // CHECK: memref.alloc() : memref<4xf32>
    // Yielded out of a loop iteration.
    // CHECK: memref.alloc() : memref<2xf32>
    func.func @stays(%n: index) -> memref<4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %d = memref.alloc(%n) : memref<?xf32>
      %w = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
      %big = memref.alloc() : memref<257xf32>
      %r = memref.alloc() : memref<4xf32>
      %init = memref.alloca() : memref<2xf32>
      %last = scf.for %i = %c0 to %n step %c1 iter_args(%prev = %init) -> (memref<2xf32>) {
        %next = memref.alloc() : memref<2xf32>
        %v = memref.load %prev[%c0] : memref<2xf32>
        memref.store %v, %next[%c0] : memref<2xf32>
        scf.yield %next : memref<2xf32>
      }
      return %r : memref<4xf32>
    }
  }
}
