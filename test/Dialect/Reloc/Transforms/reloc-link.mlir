// reloc-link: records of one key must describe one object in every module of
// a compilation; records are ordered by key.
// RUN: nabla-opt %s -split-input-file --reloc-link -verify-diagnostics | FileCheck %s

// Agreeing records in two modules are fine; each table is sorted by key.
// CHECK-LABEL: gpu.module @a
// CHECK-NEXT: reloc.global @y : memref<4xf32> {constant, key = "host.a"}
// CHECK-NEXT: reloc.global @x : memref<4xf32> {constant, key = "host.b"}
// CHECK-LABEL: gpu.module @b
// CHECK-NEXT: reloc.global @t : memref<4xf32> {constant, key = "host.b"}
module attributes {gpu.container_module} {
  gpu.module @a {
    reloc.global @x : memref<4xf32> {key = "host.b", constant}
    reloc.global @y : memref<4xf32> {key = "host.a", constant}
  }
  gpu.module @b {
    reloc.global @t : memref<4xf32> {key = "host.b", constant}
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @a {
    // expected-note @below {{first recorded here}}
    reloc.global @t : memref<4xf32> {key = "host.t", constant}
  }
  gpu.module @b {
    // expected-error @below {{'reloc.global' op records host object "host.t" with another type than reloc.global @t; the loader provides one object per key}}
    reloc.global @t : memref<8xf32> {key = "host.t", constant}
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @a {
    // expected-note @below {{first recorded here}}
    reloc.global @t : memref<4xf32> {key = "host.t", constant}
  }
  gpu.module @b {
    // expected-error @below {{'reloc.global' op records host object "host.t" with another constness than reloc.global @t; the loader provides one object per key}}
    reloc.global @t : memref<4xf32> {key = "host.t"}
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @a {
    // expected-note @below {{first recorded here}}
    reloc.global @p : !llvm.ptr<1> {key = "Main.:x", constant, address = 4096}
  }
  gpu.module @b {
    // expected-error @below {{'reloc.global' op records host object "Main.:x" with another address than reloc.global @p; the loader provides one object per key}}
    reloc.global @p : !llvm.ptr<1> {key = "Main.:x", constant, address = 8192}
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @a {
    // expected-note @below {{first recorded here}}
    reloc.global @p : memref<2xf32> {key = "host.c", constant, value = dense<[1.0, 2.0]> : tensor<2xf32>}
  }
  gpu.module @b {
    // expected-error @below {{'reloc.global' op records host object "host.c" with another contents than reloc.global @p; the loader provides one object per key}}
    reloc.global @p : memref<2xf32> {key = "host.c", constant, value = dense<[1.0, 3.0]> : tensor<2xf32>}
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @a {
    // expected-note @below {{first recorded here}}
    reloc.global @w : memref<8xi8> {key = "Main.obj", kind = #reloc.kind<word>, offset = 8}
  }
  gpu.module @b {
    // expected-error @below {{'reloc.global' op records host object "Main.obj" with another kind or offset than reloc.global @w; the loader provides one object per key}}
    reloc.global @w : memref<8xi8> {key = "Main.obj", kind = #reloc.kind<word>, offset = 16}
  }
}
