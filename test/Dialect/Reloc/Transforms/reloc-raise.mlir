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
