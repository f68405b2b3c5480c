//===- Nabla.td - Top-level TableGen file of the nabla dialect -*- tablegen -*-===//
//
// Gathers the dialect, attribute and op definitions of the `nabla` dialect so
// that every generator (decls, defs, docs) sees one consistent record set.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLA_TD
#define NABLA_DIALECT_NABLA_IR_NABLA_TD

include "nabla/Dialect/Nabla/IR/NablaBase.td"
include "nabla/Dialect/Nabla/IR/NablaAttrs.td"
include "nabla/Dialect/Nabla/IR/NablaOps.td"

#endif // NABLA_DIALECT_NABLA_IR_NABLA_TD
