// reloc-raise: legacy host-object references become reloc ops in the address
// space they are used in, and then pass nabla-validate.
// RUN: nabla-opt %s -split-input-file --reloc-raise | FileCheck %s
// RUN: nabla-opt %s -split-input-file --reloc-raise --nabla-validate -o /dev/null

// v2: an external declaration behind an address space cast.
// CHECK-LABEL: gpu.module @kernels
// CHECK: reloc.global @reloc_0 : !llvm.ptr<1> {constant, key = "Main.:x"}
// CHECK-NOT: llvm.mlir.global external
// CHECK: %[[P:.*]] = reloc.addressof @reloc_0 : !llvm.ptr<1>
// CHECK-NOT: llvm.addrspacecast
// CHECK: llvm.load %[[P]]
module attributes {gpu.container_module, reloc.gv_to_value = {"jl_global#12889" = "Main.:x"}} {
  gpu.module @kernels {
    llvm.mlir.global external constant @"jl_global#12889"() {addr_space = 0 : i32} : !llvm.ptr
    gpu.func @k() kernel {
      %p = llvm.mlir.addressof @"jl_global#12889" : !llvm.ptr
      %q = llvm.addrspacecast %p : !llvm.ptr to !llvm.ptr<1>
      %v = llvm.load %q : !llvm.ptr<1> -> f32
      gpu.return
    }
  }
}

// -----

// v1: a baked address listed in the address map keeps the address.
// CHECK-LABEL: gpu.module @kernels
// CHECK: reloc.global @reloc_0 : !llvm.ptr<1> {address = 140737488355328 : i64, constant, key = "Core.Int64"}
// CHECK: %[[P:.*]] = reloc.addressof @reloc_0 : !llvm.ptr<1>
// CHECK: llvm.load %[[P]]
module attributes {gpu.container_module, reloc.address_map = {"140737488355328" = "Core.Int64"}} {
  gpu.module @kernels {
    gpu.func @k() kernel {
      %a = llvm.mlir.constant(140737488355328 : i64) : i64
      %p = llvm.inttoptr %a : i64 to !llvm.ptr<1>
      %v = llvm.load %p : !llvm.ptr<1> -> f32
      gpu.return
    }
  }
}

// -----

// Initialized globals (materialized objects) are left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK-NOT: reloc.global
// CHECK: llvm.mlir.global internal constant @table
module attributes {gpu.container_module, reloc.gv_to_value = {"table" = "host.table"}} {
  gpu.module @kernels {
    llvm.mlir.global internal constant @table(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
    gpu.func @k() kernel {
      %p = llvm.mlir.addressof @table : !llvm.ptr
      %v = llvm.load %p : !llvm.ptr -> f32
      gpu.return
    }
  }
}

// -----

// v1 slot: a global initialised with a baked address, loaded and cast; the
// slot goes away, the record keeps the address.
// CHECK-LABEL: gpu.module @slots
// CHECK: reloc.global @reloc_0 : !llvm.ptr<1> {address = 8192 : i64, constant, key = "Main.slot"}
// CHECK-NOT: llvm.mlir.global
// CHECK: %[[P:.*]] = reloc.addressof @reloc_0 : !llvm.ptr<1>
// CHECK-NEXT: llvm.load %[[P]] : !llvm.ptr<1> -> f32
module attributes {gpu.container_module, reloc.address_map = {"8192" = "Main.slot"}} {
  gpu.module @slots {
    llvm.mlir.global internal constant @slot() : !llvm.ptr {
      %a = llvm.mlir.constant(8192 : i64) : i64
      %p = llvm.inttoptr %a : i64 to !llvm.ptr
      llvm.return %p : !llvm.ptr
    }
    gpu.func @k() kernel {
      %s = llvm.mlir.addressof @slot : !llvm.ptr
      %p = llvm.load %s : !llvm.ptr -> !llvm.ptr
      %q = llvm.addrspacecast %p : !llvm.ptr to !llvm.ptr<1>
      %v = llvm.load %q : !llvm.ptr<1> -> f32
      gpu.return
    }
  }
}

// -----

// v2 memref declaration behind a memref.memory_space_cast: the record has the
// type the kernel uses.
// CHECK-LABEL: gpu.module @memrefs
// CHECK: reloc.global @reloc_0 : memref<4xf32, #gpu.address_space<global>> {constant, key = "host.table"}
// CHECK-NOT: memref.global
// CHECK: %[[T:.*]] = reloc.get_global @reloc_0 : memref<4xf32, #gpu.address_space<global>>
// CHECK-NOT: memref.memory_space_cast
// CHECK: memref.load %[[T]]
module attributes {gpu.container_module, reloc.gv_to_value = {"jl_table" = "host.table"}} {
  gpu.module @memrefs {
    memref.global "public" constant @jl_table : memref<4xf32>
    gpu.func @k(%i: index) kernel {
      %t = memref.get_global @jl_table : memref<4xf32>
      %g = memref.memory_space_cast %t : memref<4xf32> to memref<4xf32, #gpu.address_space<global>>
      %v = memref.load %g[%i] : memref<4xf32, #gpu.address_space<global>>
      gpu.return
    }
  }
}

// -----

// Without the address map a slot stays: its base is a known constant.
// CHECK-LABEL: gpu.module @unmapped
// CHECK: llvm.mlir.global internal constant @slot
// CHECK-NOT: reloc.
module attributes {gpu.container_module, reloc.gv_to_value = {}} {
  gpu.module @unmapped {
    llvm.mlir.global internal constant @slot() : !llvm.ptr {
      %a = llvm.mlir.constant(8192 : i64) : i64
      %p = llvm.inttoptr %a : i64 to !llvm.ptr
      llvm.return %p : !llvm.ptr
    }
    gpu.func @k() kernel {
      %s = llvm.mlir.addressof @slot : !llvm.ptr
      %p = llvm.load %s : !llvm.ptr -> !llvm.ptr
      %v = llvm.load %p : !llvm.ptr -> f32
      gpu.return
    }
  }
}
