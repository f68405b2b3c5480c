//===- TargetOptions.h - Checks of a target's options -----------*- C++ -*-===//
//
// The options that select and shape a target (chip, ABI, toolkit, workgroup
// size, PTX features) reach LLVM's back ends and Nabla's lowerings, which
// abort or fail late on values they do not know. One check serves the
// named pipelines, which run it while the pipeline is built (before any pass
// runs), and nabla-check-target-support, which runs it on its own options.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_TARGETOPTIONS_H
#define NABLA_SUPPORT_TARGETOPTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace nabla {

struct TargetOptionValues {
  /// nvvm, rocdl, spirv or metal.
  llvm::StringRef target;
  /// sm_NN (nvvm), gfxNNN (rocdl); empty on spirv/metal.
  llvm::StringRef chip;
  bool requireChip = false;
  llvm::StringRef abi = "v2";
  llvm::StringRef toolkit;
  llvm::StringRef features;
  llvm::ArrayRef<int64_t> workgroupSize;
};

/// Why `values` cannot compile for their target, in the words of an error
/// message; empty when they can.
std::string checkTargetOptions(const TargetOptionValues &values);

/// The ptxas that nabla-assemble-cubin runs: `<toolkit>/bin/ptxas`, else
/// `$CUDA_PATH/bin/ptxas`, else `/usr/local/cuda/bin/ptxas`, else the first
/// on PATH; empty when there is none.
std::string findPtxas(llvm::StringRef toolkit);

/// nvlink next to `ptxas` (a path findPtxas returned), or empty.
std::string findNvlink(llvm::StringRef ptxas);

} // namespace nabla

#endif // NABLA_SUPPORT_TARGETOPTIONS_H
