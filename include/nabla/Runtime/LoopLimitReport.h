//===- LoopLimitReport.h - The loop-limit record's text ---------*- C++ -*-===//
//
// The printf record nabla-detect-loop-limit (lib/Host) puts into kernels for
// devices that end loops early, and that the Vulkan launcher turns into a
// launch error (docs/Runtime.md, *Loop limit*). Shared by both so that they
// cannot drift apart; header-only, for the runtime links no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_RUNTIME_LOOPLIMITREPORT_H
#define NABLA_RUNTIME_LOOPLIMITREPORT_H

namespace nabla::runtime {

/// The start of the record (what the launcher looks for).
inline constexpr const char *kLoopLimitReport = "nabla-runtime: loop limit: ";

/// The whole record a flagged thread prints.
inline constexpr const char *kLoopLimitRecord =
    "nabla-runtime: loop limit: the device ended a thread's loops before "
    "they were done\n";

} // namespace nabla::runtime

#endif // NABLA_RUNTIME_LOOPLIMITREPORT_H
