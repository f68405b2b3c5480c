// gpu.printf of integers and floats in a kernel: on Vulkan the records go
// through a printf buffer that libnabla_mgpu prints when the launch ends.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// Threads print in the order they reserve their records.
// CHECK-DAG: thread 0: x = 0.000000, -123456789012, hex ff, 0.00e+00 100%
// CHECK-DAG: thread 1: x = 0.500000, -123456789012, hex fe, 5.00e-01 100%
// CHECK-DAG: thread 2: x = 1.000000, -123456789012, hex fd, 1.00e+00 100%
// CHECK-DAG: thread 3: x = 1.500000, -123456789012, hex fc, 1.50e+00 100%
// CHECK: after the launch
func.func @main() {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %t = arith.index_cast %tx : index to i32
    %f = arith.sitofp %t : i32 to f32
    %half = arith.constant 0.5 : f32
    %x = arith.mulf %f, %half : f32
    %big = arith.constant -123456789012 : i64
    %ff = arith.constant 255 : i8
    %t8 = arith.trunci %t : i32 to i8
    %byte = arith.subi %ff, %t8 : i8
    gpu.printf "thread %d: x = %f, %lld, hex %x, %5.2e 100%%\n", %t, %x, %big, %byte, %x : i32, f32, i64, i8, f32
    gpu.terminator
  }
  call @printString() : () -> ()
  return
}

func.func private @printString() {
  %c = llvm.mlir.addressof @message : !llvm.ptr
  llvm.call @puts(%c) : (!llvm.ptr) -> i32
  return
}
llvm.mlir.global internal constant @message("after the launch\00") {addr_space = 0 : i32}
llvm.func @puts(!llvm.ptr) -> i32
