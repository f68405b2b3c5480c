//===- OptionNames.h - Unknown pass and pipeline options, worded -*- C++ -*-===//
//
// Upstream's option parser answers a mistyped option with
// "<Pass-Options-Parser>: no such option workgroup_size" and, for a pipeline,
// "failed to add `nabla-to-spirv`". Nabla's passes and pipelines answer with
// the nearest valid name and the list of their options:
//
//   nabla-to-spirv has no option 'workgroup_size'; did you mean
//   'workgroup-size'? (its options: abi, dynamic-shared-memory, ...)
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_OPTIONNAMES_H
#define NABLA_SUPPORT_OPTIONNAMES_H

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace nabla {

/// The option names of a textual option string (`a=1 b={x y} c="p q" d`):
/// the part before '=' of each item separated by spaces outside braces,
/// brackets and quotes.
llvm::SmallVector<llvm::StringRef> getOptionKeys(llvm::StringRef options);

/// The error for the option `key`, which `owner` does not have: the nearest
/// of `valid` when one is close, and the list.
std::string describeUnknownOption(llvm::StringRef owner, llvm::StringRef key,
                                  llvm::ArrayRef<std::string> valid);

/// Checks each option name in `options` against `valid`; reports the first
/// unknown one through `errorHandler`.
mlir::LogicalResult
checkOptionKeys(llvm::StringRef owner, llvm::StringRef options,
                llvm::ArrayRef<std::string> valid,
                llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
                    errorHandler);

/// `Pass::initializeOptions`, with an unknown option's error worded by
/// describeUnknownOption (the names from the pass's printed options).
mlir::LogicalResult initializePassOptions(
    mlir::Pass &pass, llvm::StringRef options,
    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler);

/// A pass base (the TableGen'd `impl::XBase<X>`) whose option errors suggest
/// the intended name:
///   struct X : nabla::SuggestOptionNames<impl::XBase<X>> {
///     using SuggestOptionNames::SuggestOptionNames;
template <typename BaseT>
class SuggestOptionNames : public BaseT {
public:
  using BaseT::BaseT;

  mlir::LogicalResult initializeOptions(
      llvm::StringRef options,
      llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
          errorHandler) override {
    return initializePassOptions(*this, options, errorHandler);
  }
};

} // namespace nabla

#endif // NABLA_SUPPORT_OPTIONNAMES_H
