//===- Reloc.td - Top-level TableGen file of the reloc dialect -*- tablegen -*-===//
//
// Gathers the dialect, attribute and op definitions of the `reloc` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_IR_RELOC_TD
#define NABLA_DIALECT_RELOC_IR_RELOC_TD

include "nabla/Dialect/Reloc/IR/RelocBase.td"
include "nabla/Dialect/Reloc/IR/RelocAttrs.td"
include "nabla/Dialect/Reloc/IR/RelocOps.td"

#endif // NABLA_DIALECT_RELOC_IR_RELOC_TD
