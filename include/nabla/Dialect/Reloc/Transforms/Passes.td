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

#endif // NABLA_DIALECT_RELOC_TRANSFORMS_PASSES_TD
