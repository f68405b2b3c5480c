// nabla-internalize-device-functions: after the GPU-to-NVVM conversion, a GPU
// module's private functions lose their C wrappers, become internal, and go
// when nothing calls them; kernels and public functions stay as they are.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(convert-gpu-to-nvvm,nabla-internalize-device-functions))" | FileCheck %s
// The end of the NVVM pipeline: the dead primal copy of a gradient module
// is not in the PTX, the called helper is not .visible.
// RUN: nabla-opt %s --nabla-to-nvvm | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.module @m
// CHECK-NOT: _mlir_ciface_
// CHECK-NOT: @dead
// CHECK-DAG: llvm.func internal @helper(
// CHECK-DAG: llvm.func internal @leaf(
// CHECK-DAG: llvm.func @exported(
// CHECK-DAG: llvm.func @_mlir_ciface_exported(
// CHECK-DAG: llvm.func @k(
// CHECK-NOT: llvm.emit_c_interface, sym_visibility = "private"

// PTX-NOT: .visible .func helper
// PTX-NOT: dead
// PTX: .entry k
module attributes {gpu.container_module} {
  gpu.module @m {
    func.func private @leaf(%a: memref<?xf32>) {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<?xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %a[%c0] : memref<?xf32>
      return
    }
    func.func private @helper(%a: memref<?xf32>) {
      func.call @leaf(%a) : (memref<?xf32>) -> ()
      func.call @leaf(%a) : (memref<?xf32>) -> ()
      return
    }
    // Unused, and so is what only it calls.
    func.func private @dead_leaf(%a: memref<?xf32>) {
      return
    }
    func.func private @dead(%a: memref<?xf32>) {
      func.call @dead_leaf(%a) : (memref<?xf32>) -> ()
      return
    }
    func.func @exported(%a: memref<?xf32>) {
      return
    }
    gpu.func @k(%a: memref<?xf32>) kernel {
      func.call @helper(%a) : (memref<?xf32>) -> ()
      gpu.return
    }
  }
}
