//===- ROCDLMathToOCML.cpp - Math ops to OCML calls, first ----------------===//
//
// Upstream's convert-gpu-to-rocdl gathers the LLVM conversion patterns of every
// loaded dialect ahead of its math-to-OCML patterns at equal benefit, so a
// context that happens to hold the NVVM dialect lowers math.atan2 to an LLVM
// intrinsic the AMDGPU back end cannot select. Applying the OCML patterns alone
// beforehand makes the lowering independent of what the context has loaded.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/OptionNames.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToROCDL/MathToROCDL.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace nabla {
#define GEN_PASS_DEF_ROCDLMATHTOOCML
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

struct ROCDLMathToOCML
    : public nabla::SuggestOptionNames<
          nabla::impl::ROCDLMathToOCMLBase<ROCDLMathToOCML>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Scalars and vectors of floats keep their types; only the index width
    // matters to the converter here and the ROCDL pipeline uses 64 bits.
    LowerToLLVMOptions options(context);
    options.overrideIndexBitwidth(64);
    LLVMTypeConverter converter(context, options);

    std::optional<amdgpu::Chipset> chipset;
    if (!chip.empty())
      if (FailureOr<amdgpu::Chipset> parsed = amdgpu::Chipset::parse(chip);
          succeeded(parsed))
        chipset = *parsed;

    RewritePatternSet patterns(context);
    populateMathToROCDLConversionPatterns(converter, patterns, chipset);
    // A partial conversion with nothing illegal: the patterns rewrite the math
    // ops they handle and every other op stays for convert-gpu-to-rocdl.
    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
