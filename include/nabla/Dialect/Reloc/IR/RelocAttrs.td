//===- RelocAttrs.td - Attributes of the reloc dialect --------*- tablegen -*-===//
//
// The record kind `#reloc.kind<object|word>`.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_IR_RELOCATTRS_TD
#define NABLA_DIALECT_RELOC_IR_RELOCATTRS_TD

include "nabla/Dialect/Reloc/IR/RelocBase.td"
include "mlir/IR/EnumAttr.td"

def Reloc_KindObject : I32EnumAttrCase<"Object", 0, "object">;
def Reloc_KindWord : I32EnumAttrCase<"Word", 1, "word">;

def Reloc_RecordKind : I32EnumAttr<"RecordKind",
    "what part of a host object a relocation record refers to",
    [Reloc_KindObject, Reloc_KindWord]> {
  let cppNamespace = "::nabla::reloc";
  let genSpecializedAttr = 0;
}

def Reloc_RecordKindAttr : EnumAttr<Reloc_Dialect, Reloc_RecordKind, "kind"> {
  let summary = "Whether a record is a whole host object or one word inside it";
  let description = [{
    `object` (the default) refers to a whole host object; `word` to the
    pointer-sized word at the record's `offset` inside the object named by
    its key (a field of a runtime structure, say).

    ```mlir
    reloc.global @tag : !llvm.ptr<1> {key = "Core.Int64.tag", kind = #reloc.kind<word>, offset = 8}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

#endif // NABLA_DIALECT_RELOC_IR_RELOCATTRS_TD
