//===- DerivativeRuleModels.h - Nabla's built-in derivative rules -*- C++ -*-===//
//
// Registers the external models of `DifferentiableOpInterface` through which
// the arith and math ops get their derivatives. nabla-differentiate adds them
// to its context itself; a frontend registers its own dialect's models the
// same way (see NablaInterfaces.td).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_TRANSFORMS_DERIVATIVERULEMODELS_H
#define NABLA_DIALECT_NABLA_TRANSFORMS_DERIVATIVERULEMODELS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace nabla {

/// Attaches `DifferentiableOpInterface` to the arith and math ops Nabla
/// differentiates, when their dialects load.
void registerDerivativeRuleModels(mlir::DialectRegistry &registry);

} // namespace nabla

#endif // NABLA_DIALECT_NABLA_TRANSFORMS_DERIVATIVERULEMODELS_H
