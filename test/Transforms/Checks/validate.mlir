// nabla-validate: every address base in GPU code must resolve.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-validate

// Resolving bases pass: arguments, attributions, allocations, initialized
// globals, relocation ops, baked constant addresses, loaded pointers.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" constant @table : memref<4xf32> = dense<1.0>
    llvm.mlir.global internal @slot(0 : i64) : i64
    reloc.global @coeffs : memref<8xf32> {key = "host.coeffs", constant}
    reloc.global @sym : !llvm.ptr<1> {key = "Main.:x", constant}
    gpu.func @ok(%A: memref<?xf32>, %p: !llvm.ptr<1>)
        workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %a = memref.load %A[%c0] : memref<?xf32>
      %t = memref.load %tile[%c0] : memref<8xf32, #gpu.address_space<workgroup>>
      %m = memref.alloca() : memref<2xf32>
      memref.store %a, %m[%c0] : memref<2xf32>
      %g = memref.get_global @table : memref<4xf32>
      %gv = memref.load %g[%c0] : memref<4xf32>
      %c = reloc.get_global @coeffs : memref<8xf32>
      %cv = memref.load %c[%c0] : memref<8xf32>
      %s = reloc.addressof @sym : !llvm.ptr<1>
      %sv = llvm.load %s : !llvm.ptr<1> -> f32
      %slot = llvm.mlir.addressof @slot : !llvm.ptr
      %sl = llvm.load %slot : !llvm.ptr -> i64
      %addr = llvm.mlir.constant(140737488355328 : i64) : i64
      %baked = llvm.inttoptr %addr : i64 to !llvm.ptr<1>
      %bv = llvm.load %baked : !llvm.ptr<1> -> f32
      %loaded = llvm.load %p : !llvm.ptr<1> -> !llvm.ptr<1>
      %lv = llvm.load %loaded : !llvm.ptr<1> -> f32
      gpu.return
    }
  }
}

// -----

// The v2 shape without a record: an external declaration behind an address
// space cast (what crashed an AD engine's validator).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.mlir.global external @"jl_global#12889"() {addr_space = 0 : i32} : !llvm.ptr
    gpu.func @k() kernel {
      // expected-note @below {{referenced here}}
      %p = llvm.mlir.addressof @"jl_global#12889" : !llvm.ptr
      %q = llvm.addrspacecast %p : !llvm.ptr to !llvm.ptr<1>
      // expected-error @below {{'llvm.load' op uses the host object @"jl_global#12889", an external declaration with no initializer: the kernel references an object the loader must relocate. Record it with reloc.global (or list it in the module attribute reloc.gv_to_value and run --reloc-raise)}}
      %v = llvm.load %q : !llvm.ptr<1> -> f32
      gpu.return
    }
  }
}

// -----

// The same through a memref global declaration.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global @host_table : memref<4xf32>
    gpu.func @k() kernel {
      %c0 = arith.constant 0 : index
      // expected-note @below {{referenced here}}
      %g = memref.get_global @host_table : memref<4xf32>
      // expected-error @below {{'memref.load' op uses the host object @host_table}}
      %v = memref.load %g[%c0] : memref<4xf32>
      gpu.return
    }
  }
}
