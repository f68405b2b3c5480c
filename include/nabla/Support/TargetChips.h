//===- TargetChips.h - What LLVM's GPU back ends know about chips -*- C++
//-*-===//
//
// Chip names reach LLVM's NVPTX and AMDGPU back ends, which abort or fall
// back to a generic processor on names they do not know, and abort when the
// PTX version is too old for the chip. These queries let the pipelines check
// first and choose a PTX version that fits.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_SUPPORT_TARGETCHIPS_H
#define NABLA_SUPPORT_TARGETCHIPS_H

#include "llvm/ADT/StringRef.h"

namespace nabla {

/// True if LLVM's back end for `triple` knows the processor `chip` (target
/// features after a ':' ignored, e.g. gfx90a:xnack+); also true when this
/// LLVM has no back end for `triple` (the pipeline reports that).
bool isKnownProcessor(llvm::StringRef triple, llvm::StringRef chip);

/// The lowest PTX ISA version (e.g. 78 for 7.8) that supports `chip`
/// (sm_NN[a|f]): what LLVM's NVPTX back end implies for the processor, and
/// at least the PTX ISA release notes' minimum; 60 for a chip neither knows.
unsigned getMinimumPTXVersion(llvm::StringRef chip);

} // namespace nabla

#endif // NABLA_SUPPORT_TARGETCHIPS_H
