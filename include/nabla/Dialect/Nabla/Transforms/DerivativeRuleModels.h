//===- DerivativeRuleModels.h - Nabla's built-in derivative rules -*- C++
//-*-===//
//
// Registers the external models through which the ops Nabla differentiates
// get their derivatives (NablaInterfaces.td). nabla-differentiate adds them
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

/// Attaches Nabla's derivative rules to the ops it differentiates, when
/// their dialects load: `DifferentiableOpInterface` to the arith and math
/// ops with scalar rules, `ForwardModeOpInterface` and
/// `ReverseModeOpInterface` to the scf, memref, gpu, func, reloc and float
/// conversion ops (lib/Dialect/Nabla/Transforms/Implementations/).
void registerDerivativeRuleModels(mlir::DialectRegistry &registry);

} // namespace nabla

#endif // NABLA_DIALECT_NABLA_TRANSFORMS_DERIVATIVERULEMODELS_H
