//===- Passes.td - Passes of the reloc dialect ---------------*- tablegen -*-===//
//
// Raising legacy host-object references into reloc ops.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_TRANSFORMS_PASSES_TD
#define NABLA_DIALECT_RELOC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RelocRaise : Pass<"reloc-raise", "mlir::ModuleOp"> {
  let summary = "Turn legacy host-object references into reloc ops";
  let description = [{
    Raises the shapes frontends leave for host objects into `reloc.global`
    records and `reloc.addressof` uses whose type is already the address
    space they are used in (the `llvm.addrspacecast` chain is folded away):

    - an external `llvm.mlir.global` declaration listed in the module
      attribute `reloc.gv_to_value = {"<global>" = "<key>"}` (the v2
      "keep it symbolic" convention);
    - an `llvm.inttoptr` of a constant address listed in
      `reloc.address_map = {"<address>" = "<key>"}` (the v1 "bake" convention):
      the record keeps the known address. Without the map the constant stays
      as it is (a known constant base).

    Globals with initializers (materialized objects) are left alone. Records
    are named `@reloc_<n>` in key order; a key used with two address spaces
    is an error.

    ```mlir
    // module attributes {reloc.gv_to_value = {"jl_global#12889" = "Main.:x"}}
    %p = llvm.mlir.addressof @"jl_global#12889" : !llvm.ptr
    %q = llvm.addrspacecast %p : !llvm.ptr to !llvm.ptr<1>
    // becomes
    reloc.global @reloc_0 : !llvm.ptr<1> {key = "Main.:x"}
    %q = reloc.addressof @reloc_0 : !llvm.ptr<1>
    ```
  }];
  let dependentDialects = ["nabla::reloc::RelocDialect"];
}

def RelocLower : Pass<"reloc-lower", "mlir::ModuleOp"> {
  let summary = "Lower reloc ops with a relocation strategy";
  let description = [{
    Replaces every `reloc.global` record and its uses:

    - `bake` (the v1 convention): the record's known `address` becomes a
      constant (`llvm.inttoptr`) in the use's address space; pointer records
      only, and each must have an `address`;
    - `materialize`: a memref record with a known `value` becomes a private
      constant `memref.global` in the GPU module, read through
      `memref.get_global`;
    - `defer`: the frontend relocates itself: each record becomes an external
      declaration named after its key (`llvm.mlir.global` for pointers,
      `memref.global` for memrefs) that the loader resolves; the records are
      still handed back in nabla-compile's manifest.

    `patch` and `table` (load-time patching by Nabla's runtime) are not
    implemented yet and are reported as such. A record a strategy cannot
    lower is a located error naming the record.

    ```mlir
    reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant, value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}
    %c = reloc.get_global @coeffs : memref<4xf32>
    // strategy=materialize
    memref.global "private" constant @coeffs : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    %c = memref.get_global @coeffs : memref<4xf32>
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", [{"bake"}],
           "bake, patch, table, materialize or defer">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::memref::MemRefDialect"];
}

#endif // NABLA_DIALECT_RELOC_TRANSFORMS_PASSES_TD
