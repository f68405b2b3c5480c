// nabla-lower-printf-to-buffer: gpu.printf appends a record to a trailing
// printf buffer parameter; the module lists the formats.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(gpu.module(nabla-lower-printf-to-buffer{capacity=64}))" | FileCheck %s

// CHECK: gpu.module @kernels attributes {nabla.printf = {capacity = 64 : i32, formats = ["x = %f, i = %d\0A"], kernels = ["k"]}}
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: %[[BUF:arg[0-9]+]]: memref<?xi32> {nabla.printf_buffer}
// CHECK: %[[X:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: arith.bitcast %[[X]] : f64 to i64
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: %[[AT:.*]] = memref.atomic_rmw addi %{{.*}}, %[[BUF]][%{{.*}}]
// CHECK: arith.cmpi sle, %{{.*}}, %c64_i32
// CHECK: scf.if
// CHECK-COUNT-6: memref.store
// CHECK-NOT: gpu.printf
gpu.module @kernels {
  gpu.func @k(%x: f32, %i: i32) kernel {
    gpu.printf "x = %f, i = %d\n", %x, %i : f32, i32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%x: f32) kernel {
    // expected-error @below {{format needs one integer or float argument per conversion}}
    gpu.printf "%s\n", %x : f32
    gpu.return
  }
}
