// nabla-emulate-bf16: a mixed-precision kernel (bf16 storage, f32 math, and
// an adjoint's bf16 sum) becomes f32 arithmetic on i16 bits, as SPIR-V and
// Metal need; a bf16 atomic becomes a compare-exchange loop on the bits.
// RUN: nabla-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(nabla-emulate-bf16))' | FileCheck %s

// CHECK-LABEL: gpu.func @scale
// CHECK-SAME: (%[[X:.*]]: memref<?xi16>, %[[Y:.*]]: memref<?xi16>, %[[I:.*]]: index)
// CHECK-SAME: workgroup(%[[TILE:.*]] : memref<64xi16, #gpu.address_space<workgroup>>)
// CHECK-NOT: bf16
// The load widened: the bits are the f32's upper half.
// CHECK: %[[H:.*]] = memref.load %[[X]][%[[I]]] : memref<?xi16>
// CHECK: %[[W:.*]] = arith.extui %[[H]] : i16 to i32
// CHECK: %[[S:.*]] = arith.shli %[[W]]
// CHECK: %[[F:.*]] = arith.bitcast %[[S]] : i32 to f32
// CHECK: arith.mulf %[[F]]
// The product rounded to nearest even, NaN kept: integer ops, then i16.
// CHECK: arith.shrui
// CHECK: arith.trunci {{.*}} : i32 to i16
// CHECK: memref.store {{.*}}, %[[TILE]][%[[I]]] : memref<64xi16, #gpu.address_space<workgroup>>
// A bf16 sum runs in f32 (its constant widened) and rounds once.
// CHECK: arith.addf {{.*}} : f32
// CHECK: arith.trunci {{.*}} : i32 to i16
// CHECK: memref.store {{.*}}, %[[Y]][%[[I]]] : memref<?xi16>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xbf16>, %y: memref<?xbf16>, %i: index)
        workgroup(%tile : memref<64xbf16, #gpu.address_space<workgroup>>) kernel {
      %h = memref.load %x[%i] : memref<?xbf16>
      %f = arith.extf %h : bf16 to f32
      %c = arith.constant 1.5 : f32
      %p = arith.mulf %f, %c : f32
      %r = arith.truncf %p : f32 to bf16
      memref.store %r, %tile[%i] : memref<64xbf16, #gpu.address_space<workgroup>>
      %t = memref.load %tile[%i] : memref<64xbf16, #gpu.address_space<workgroup>>
      %one = arith.constant 1.0 : bf16
      %s = arith.addf %t, %one : bf16
      memref.store %s, %y[%i] : memref<?xbf16>
      gpu.return
    }
  }
}

// -----

// A device function's signature, a select of bf16 bits, a constant's bits.
// CHECK-LABEL: func.func @pick
// CHECK-SAME: (%[[C:.*]]: i1, %[[A:.*]]: i16, %{{.*}}: i16) -> i16
// CHECK: %[[ONE:.*]] = arith.constant 16256 : i16
// CHECK: %[[R:.*]] = arith.select %[[C]], %[[A]], %[[ONE]] : i16
// CHECK: return %[[R]] : i16
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @pick(%c: i1, %a: bf16, %b: bf16) -> bf16 {
      %one = arith.constant 1.0 : bf16
      %r = arith.select %c, %a, %one : bf16
      return %r : bf16
    }
  }
}

// -----

// An atomic add: the loop's body adds in f32 and rounds back; an exchange
// stores the bits as they are.
// CHECK-LABEL: gpu.func @accumulate
// CHECK-SAME: (%[[D:.*]]: memref<?xi16>, %[[V:.*]]: i16, %[[I:.*]]: index)
// CHECK: memref.generic_atomic_rmw %[[D]][%[[I]]] : memref<?xi16> {
// CHECK: ^bb0(%[[CUR:.*]]: i16):
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: memref.atomic_yield %{{.*}} : i16
// CHECK: memref.generic_atomic_rmw %[[D]][%[[I]]] : memref<?xi16> {
// CHECK-NEXT: ^bb0(%{{.*}}: i16):
// CHECK-NEXT: memref.atomic_yield %[[V]] : i16
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @accumulate(%d: memref<?xbf16>, %v: bf16, %i: index) kernel {
      %old = memref.atomic_rmw addf %v, %d[%i] : (bf16, memref<?xbf16>) -> bf16
      %taken = memref.atomic_rmw assign %v, %d[%i] : (bf16, memref<?xbf16>) -> bf16
      gpu.return
    }
  }
}
