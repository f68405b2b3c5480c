// Every diagnostic of the reloc dialect, one case each.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{'reloc.global' op requires a non-empty 'key'}}
reloc.global @g : memref<4xf32> {key = ""}

// -----

reloc.global @a : memref<4xf32> {key = "host.x"}
// Keys are unique among the records of one symbol table.
// expected-error @below {{'reloc.global' op key "host.x" is already recorded by reloc.global @a}}
reloc.global @b : memref<4xf32> {key = "host.x"}

// -----

// Records are memrefs or LLVM pointers.
// expected-error @below {{'reloc.global' op type must be a ranked memref or an !llvm.ptr, got 'f32'}}
reloc.global @g : f32 {key = "k"}

// -----

// Their elements are plain numbers (the loader reads them from .npy data).
// expected-error @below {{'reloc.global' op memref elements must be integers, floats or index, got 'complex<f32>'}}
reloc.global @g : memref<4xcomplex<f32>> {key = "k"}

// -----

// expected-error @below {{'reloc.global' op a 'word' record requires an 'offset'}}
reloc.global @g : !llvm.ptr {key = "k", kind = #reloc.kind<word>}

// -----

// expected-error @below {{'reloc.global' op 'offset' is only valid on a 'word' record}}
reloc.global @g : !llvm.ptr {key = "k", offset = 8}

// -----

// expected-error @below {{'reloc.global' op 'offset' must be non-negative, got -8}}
reloc.global @g : !llvm.ptr {key = "k", kind = #reloc.kind<word>, offset = -8}

// -----

// expected-error @below {{'reloc.global' op 'size' must be positive, got 0}}
reloc.global @g : !llvm.ptr {key = "k", size = 0}

// -----

// expected-error @below {{'reloc.global' op 'size' (12 bytes) disagrees with the 16 bytes of 'memref<4xf32>'}}
reloc.global @g : memref<4xf32> {key = "k", size = 12}

// -----

// expected-error @below {{'reloc.global' op 'value' of type 'tensor<3xf32>' does not match the shape and element type of 'memref<4xf32>'}}
reloc.global @g : memref<4xf32> {key = "k", value = dense<1.0> : tensor<3xf32>}

// -----

// expected-error @below {{'reloc.global' op 'value' holds 8 bytes but the object has 4}}
reloc.global @g : !llvm.ptr {key = "k", size = 4, value = dense<1> : tensor<2xi32>}

// -----

// expected-error @below {{'reloc.global' op cannot be its own shadow}}
reloc.global @g : memref<4xf32> {key = "k", shadow_of = @g}

// -----

// expected-error @below {{'reloc.global' op 'shadow_of' @nothing does not name a reloc.global}}
reloc.global @g : memref<4xf32> {key = "k", shadow_of = @nothing}

// -----

reloc.global @p : memref<4xf32> {key = "p"}
// expected-error @below {{'reloc.global' op shadow type 'memref<4xf64>' differs from the type 'memref<4xf32>' of its primal @p}}
reloc.global @dp : memref<4xf64> {key = "dp", shadow_of = @p}

// -----

reloc.global @p : memref<4xf32> {key = "p"}
reloc.global @dp : memref<4xf32> {key = "dp", shadow_of = @p}
// expected-error @below {{'reloc.global' op 'shadow_of' @dp names a record that is itself a shadow}}
reloc.global @ddp : memref<4xf32> {key = "ddp", shadow_of = @dp}

// -----

// expected-error @below {{attribute 'key' failed to satisfy constraint: string attribute}}
reloc.global @g : memref<4xf32> {key = 3}

// -----

func.func @f() {
  // expected-error @below {{'reloc.get_global' op @missing does not reference a reloc.global}}
  %m = reloc.get_global @missing : memref<4xf32>
  return
}

// -----

func.func private @other()
func.func @f() {
  // A symbol that is not a record.
  // expected-error @below {{'reloc.addressof' op @other does not reference a reloc.global}}
  %p = reloc.addressof @other : !llvm.ptr
  return
}

// -----

reloc.global @g : memref<4xf32> {key = "k"}
func.func @f() {
  // expected-error @below {{'reloc.get_global' op result type 'memref<8xf32>' does not match the type 'memref<4xf32>' of reloc.global @g}}
  %m = reloc.get_global @g : memref<8xf32>
  return
}

// -----

reloc.global @p : !llvm.ptr<1> {key = "k"}
func.func @f() {
  // The use is in the address space of the record: no implicit cast.
  // expected-error @below {{'reloc.addressof' op result type '!llvm.ptr' does not match the type '!llvm.ptr<1>' of reloc.global @p}}
  %p = reloc.addressof @p : !llvm.ptr
  return
}

// -----

reloc.global @p : !llvm.ptr {key = "k"}
func.func @f() {
  // get_global returns memrefs only.
  // expected-error @below {{'reloc.get_global' op result #0 must be memref of any type values, but got '!llvm.ptr'}}
  %p = reloc.get_global @p : !llvm.ptr
  return
}
