// nabla-rocdl-private-allocas: stack slots in AMDGPU's private address space
// (5), handed to their users as generic pointers.
// RUN: nabla-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(nabla-rocdl-private-allocas))" | FileCheck %s

// A fixed-size slot keeps its element type, count and alignment; a slot
// already private is left alone.
// CHECK-LABEL: llvm.func @slots
// CHECK-SAME: (%[[N:.*]]: i64)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(16 : index) : i64
// CHECK: %[[SLOT:.*]] = llvm.alloca %[[ONE]] x f32 {alignment = 16 : i64} : (i64) -> !llvm.ptr<5>
// CHECK: %[[GENERIC:.*]] = llvm.addrspacecast %[[SLOT]] : !llvm.ptr<5> to !llvm.ptr
// CHECK: llvm.store %{{.*}}, %[[GENERIC]] : f32, !llvm.ptr
// CHECK: %[[PRIVATE:.*]] = llvm.alloca %[[N]] x i32 : (i64) -> !llvm.ptr<5>
// CHECK-NOT: llvm.addrspacecast
// CHECK: llvm.store %{{.*}}, %[[PRIVATE]] : i32, !llvm.ptr<5>
gpu.module @kernels {
  llvm.func @slots(%n: i64) {
    %c16 = llvm.mlir.constant(16 : index) : i64
    %p = llvm.alloca %c16 x f32 {alignment = 16 : i64} : (i64) -> !llvm.ptr
    %x = llvm.mlir.constant(1.0 : f32) : f32
    llvm.store %x, %p : f32, !llvm.ptr
    %q = llvm.alloca %n x i32 : (i64) -> !llvm.ptr<5>
    %y = llvm.mlir.constant(2 : i32) : i32
    llvm.store %y, %q : i32, !llvm.ptr<5>
    llvm.return
  }
}

// -----

// Slots outside the entry block (a memref.alloca under an scf.if) move too.
// CHECK-LABEL: llvm.func @branch
// CHECK: ^bb1:
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x f32 : (i64) -> !llvm.ptr<5>
// CHECK: llvm.addrspacecast %[[SLOT]] : !llvm.ptr<5> to !llvm.ptr
gpu.module @kernels {
  llvm.func @branch(%c: i1) {
    llvm.cond_br %c, ^bb1, ^bb2
  ^bb1:
    %c4 = llvm.mlir.constant(4 : index) : i64
    %p = llvm.alloca %c4 x f32 : (i64) -> !llvm.ptr
    llvm.br ^bb2
  ^bb2:
    llvm.return
  }
}
