// An inherent attribute given in the attribute dictionary with a value of the
// wrong kind is stored as null by MLIR's parser, and upstream verifiers then
// dereference it: `addr_space = i32` on llvm.mlir.global crashed
// llvm.mlir.addressof's symbol verifier in mlir-opt itself (found by fuzzing
// the spirv pipeline). Every tool parses, checks, then verifies; with
// -split-input-file each chunk is checked at its own lines.
// RUN: %expect_exit 1 nabla-opt %s 2>&1 | FileCheck %s
// RUN: %expect_exit 1 nabla-opt %s -split-input-file 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: %expect_exit 1 nabla-compile %s --target=spirv -o %t.out 2>&1 | FileCheck %s

// CHECK: inherent-attributes.mlir:[[@LINE+4]]:5: error: 'llvm.mlir.global' op attribute 'addr_space' has a value of the wrong kind (expected one like 0 : i32)
// SPLIT: inherent-attributes.mlir:[[@LINE+3]]:5: error: 'llvm.mlir.global' op attribute 'addr_space' has a value of the wrong kind
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.mlir.global external @g() {addr_space = i32} : !llvm.ptr
    gpu.func @k() kernel {
      %p = llvm.mlir.addressof @g : !llvm.ptr
      gpu.return
    }
  }
}

// -----

// SPLIT: inherent-attributes.mlir:[[@LINE+1]]:1: error: 'llvm.mlir.global' op attribute 'addr_space' has a value of the wrong kind
llvm.mlir.global external @h() {addr_space = "one"} : !llvm.ptr
