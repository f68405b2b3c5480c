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
    records and `reloc.addressof` / `reloc.get_global` uses whose type is
    already the address space they are used in (the `llvm.addrspacecast` /
    `memref.memory_space_cast` chain is folded away):

    - an external `llvm.mlir.global` or `memref.global` declaration listed in
      the module attribute `reloc.gv_to_value = {"<global>" = "<key>"}` (the
      v2 "keep it symbolic" convention);
    - an `llvm.inttoptr` of a constant address listed in
      `reloc.address_map = {"<address>" = "<key>"}` (the v1 "bake" convention),
      inline or as the initializer of a slot global that kernels load: the
      record keeps the known address. Without the map the constant stays as
      it is (a known constant base).

    Globals with initializers (materialized objects) are left alone. Records
    are named `@reloc_<n>` in key order; a key used with two types is an
    error.

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

def RelocLink : Pass<"reloc-link", "mlir::ModuleOp"> {
  let summary = "Check that records of one key agree across modules; order them";
  let description = [{
    The loader provides one object per key for every module of a
    compilation, so all `reloc.global` records of a key, in any gpu.module,
    must describe the same object: same type, kind and offset, constness,
    known address and (where both have them) known contents. A disagreement is
    a located error with a note at the first record. Records are then ordered
    by key within each symbol table. Every pipeline runs it before
    `reloc-lower`.

    ```mlir
    gpu.module @a { reloc.global @t : memref<4xf32> {key = "host.t", constant} }
    gpu.module @b { reloc.global @t : memref<8xf32> {key = "host.t", constant} }
    // error: 'reloc.global' op records host object "host.t" with another
    // type than reloc.global @t; the loader provides one object per key
    ```
  }];
}

def RelocLower : Pass<"reloc-lower", "mlir::ModuleOp"> {
  let summary = "Lower reloc ops with a relocation strategy";
  let description = [{
    Replaces every `reloc.global` record and its uses. Records that nothing
    uses are pruned first (nothing has to provide them). Every name the
    strategies create is derived from the record's key, so the output is the
    same in every session (cacheable) except under `bake`, whose addresses
    belong to one host session.

    - `bake` (the v1 convention): the record's known `address` becomes a
      constant (`llvm.inttoptr`) in the use's address space; pointer records
      only, and each must have an `address`;
    - `materialize`: a constant memref record with a known `value` becomes a
      private constant `memref.global`, read through `memref.get_global`
      (never for writable records: a private copy would lose the writes);
    - `bake-or-materialize`: what `abi=v1` uses: `bake` for pointer records,
      `materialize` for memref records, an error for what neither can do;
    - `patch` (NVVM, ROCDL): a zero-initialised writable global per record,
      named `__reloc_<key>_<hash of key>` and carrying `reloc.key`, that the
      loader writes before the launch (CUDA `cuModuleGetGlobal`, HIP
      `hipModuleGetGlobal`): the object's bytes for a statically shaped memref
      record, the object's address for a pointer record (a pointer slot in
      global memory, read with `llvm.load`);
    - `table` (SPIR-V, Metal, which cannot look symbols up): every function
      using records, directly or through calls, gets one trailing memref
      parameter per record in key order, with the argument attribute
      `reloc.key = "<key>"`; calls pass them on, and kernels thus get one
      extra buffer binding per record, listed in the manifest;
    - `defer`: the frontend relocates itself: each record becomes an external
      declaration named after its key (`llvm.mlir.global` for pointers,
      `memref.global` for memrefs) with `reloc.key`; the records are still
      handed back in nabla-compile's manifest.

    A record a strategy cannot lower is a located error naming the record.

    ```mlir
    reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant}
    gpu.func @k(%out: memref<4xf32>) kernel {
      %c = reloc.get_global @coeffs : memref<4xf32>
      ...
    }
    // strategy=table
    gpu.func @k(%out: memref<4xf32>, %c: memref<4xf32> {reloc.key = "host.coeffs"}) kernel
    // strategy=patch
    memref.global "public" @__reloc_host_coeffs_1f0d4a9c : memref<4xf32> = dense<0.0> {reloc.key = "host.coeffs"}
    %c = memref.get_global @__reloc_host_coeffs_1f0d4a9c : memref<4xf32>
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", [{"bake"}],
           "bake, patch, table, materialize, defer or bake-or-materialize">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect"];
}

#endif // NABLA_DIALECT_RELOC_TRANSFORMS_PASSES_TD
