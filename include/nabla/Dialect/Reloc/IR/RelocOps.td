//===- RelocOps.td - Operations of the reloc dialect ----------*- tablegen -*-===//
//
// `reloc.global` (the record), `reloc.get_global` (memref use) and
// `reloc.addressof` (pointer use).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_IR_RELOCOPS_TD
#define NABLA_DIALECT_RELOC_IR_RELOCOPS_TD

include "nabla/Dialect/Reloc/IR/RelocBase.td"
include "nabla/Dialect/Reloc/IR/RelocAttrs.td"
include "mlir/Dialect/LLVMIR/LLVMTypes.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Reloc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Reloc_Dialect, mnemonic, traits>;

def Reloc_GlobalOp : Reloc_Op<"global", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Relocation record of a host object referenced from kernels";
  let description = [{
    Declares a host object that the loader (or the frontend) provides, with a
    deterministic record:

    - `key`: stable, content-derived identity of the object (never a session
      counter); unique among the records of one symbol table.
    - `global_type`: how kernels see the object: a memref, or an `!llvm.ptr`
      in the address space it is used in.
    - `kind`: `#reloc.kind<object>` (default) or `#reloc.kind<word>` with an
      `offset` in bytes inside the object named by `key`.
    - `constant`: the kernel never writes the object.
    - `size`: byte size of the object; derived for static memrefs.
    - `value`: known contents (dense elements of the memref's shape and element
      type, or any dense elements for a pointer), enough to materialize a copy.
    - `address`: known host/device address (the v1 "bake" convention), as the
      64-bit pattern of the address.
    - `shadow_of`: this record is the AD shadow of another `reloc.global` of
      the same type; the loader provides both.

    ```mlir
    reloc.global @coeffs : memref<4xf32> {constant, key = "host.coeffs",
                                          value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}
    reloc.global @state : memref<?xf32> {key = "Main.state", address = 140737488355328}
    reloc.global @d_state : memref<?xf32> {key = "Main.state#shadow", shadow_of = @state}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttr:$global_type,
                       StrAttr:$key,
                       UnitAttr:$constant,
                       DefaultValuedAttr<Reloc_RecordKindAttr,
                                         "::nabla::reloc::RecordKind::Object">:$kind,
                       OptionalAttr<I64Attr>:$offset,
                       OptionalAttr<I64Attr>:$size,
                       OptionalAttr<ElementsAttr>:$value,
                       OptionalAttr<I64Attr>:$address,
                       OptionalAttr<FlatSymbolRefAttr>:$shadow_of);
  let assemblyFormat = "$sym_name `:` $global_type attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The object's size in bytes: `size` if present, else derived from a
    /// statically shaped memref type; std::nullopt when unknown.
    std::optional<int64_t> getByteSize();

    /// The `reloc.get_global` / `reloc.addressof` ops that use this record
    /// (`shadow_of` references are not uses), in IR order.
    ::llvm::SmallVector<::mlir::Operation *> collectUses();
  }];
}

// Common shape of the two use ops: a symbol reference and a result whose type
// equals the record's type.
class Reloc_UseOp<string mnemonic, Type resultType>
    : Reloc_Op<mnemonic, [Pure,
                          DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let arguments = (ins FlatSymbolRefAttr:$global_name);
  let results = (outs resultType:$result);
  let assemblyFormat = "$global_name attr-dict `:` qualified(type($result))";
}

def Reloc_GetGlobalOp : Reloc_UseOp<"get_global", AnyMemRef> {
  let summary = "Memref view of a relocated host object";
  let description = [{
    Returns the memref through which kernel code reads (or, for non-constant
    records, writes) the object recorded by `global_name`. The result type
    equals the record's type.

    ```mlir
    %c = reloc.get_global @coeffs : memref<8xf32>
    ```
  }];
}

def Reloc_AddressOfOp : Reloc_UseOp<"addressof", LLVM_AnyPointer> {
  let summary = "Pointer to a relocated host object";
  let description = [{
    Returns the address of the object recorded by `global_name`, already in
    the address space it is used in (no address space cast follows). The
    result type equals the record's type.

    ```mlir
    %p = reloc.addressof @sym_x : !llvm.ptr<1>
    ```
  }];
}

#endif // NABLA_DIALECT_RELOC_IR_RELOCOPS_TD
