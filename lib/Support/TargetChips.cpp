//===- TargetChips.cpp - What LLVM's GPU back ends know about chips -------===//

#include "nabla/Support/TargetChips.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>

using namespace llvm;

namespace {
/// LLVM's back end for `triple`, or null when it is not built in.
const Target *lookupTarget(const Triple &triple) {
  static bool initialized = [] {
    InitializeAllTargetInfos();
    InitializeAllTargetMCs();
    return true;
  }();
  (void)initialized;
  std::string error;
  return TargetRegistry::lookupTarget(triple, error);
}

/// LLVM's subtarget description of `chip` for `triple`; null when the back
/// end is not built in or does not know the chip (asked first: creating one
/// for an unknown CPU prints a warning).
std::unique_ptr<MCSubtargetInfo> getSubtarget(StringRef triple,
                                              StringRef chip) {
  Triple parsed(triple);
  const Target *target = lookupTarget(parsed);
  if (!target)
    return nullptr;
  std::unique_ptr<MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(parsed, "", ""));
  if (!generic || !generic->isCPUStringValid(chip))
    return nullptr;
  return std::unique_ptr<MCSubtargetInfo>(
      target->createMCSubtargetInfo(parsed, chip, ""));
}

/// The PTX version LLVM's NVPTX back end writes (`.version X.Y`) for an empty
/// module compiled for `chip` without PTX features: the lowest that supports
/// the chip. std::nullopt when LLVM does not know the chip or cannot say.
std::optional<unsigned> getPickedPTXVersion(StringRef chip) {
  static std::mutex mutex;
  static StringMap<std::optional<unsigned>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto [entry, inserted] = cache.try_emplace(chip);
  if (!inserted)
    return entry->second;
  Triple triple("nvptx64-nvidia-cuda");
  const Target *target = lookupTarget(triple);
  if (!target || !getSubtarget(triple.str(), chip))
    return std::nullopt;
  static bool initialized = [] {
    InitializeAllTargets();
    InitializeAllAsmPrinters();
    return true;
  }();
  (void)initialized;
  std::unique_ptr<TargetMachine> machine(target->createTargetMachine(
      triple, chip, "", TargetOptions(), std::nullopt));
  if (!machine)
    return std::nullopt;
  LLVMContext context;
  Module module("ptx-version", context);
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());
  SmallString<1024> text;
  raw_svector_ostream stream(text);
  legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, stream, nullptr,
                                   CodeGenFileType::AssemblyFile))
    return std::nullopt;
  passes.run(module);
  StringRef version = StringRef(text).split(".version ").second;
  unsigned major, minor;
  if (version.consumeInteger(10, major) || !version.consume_front(".") ||
      version.consumeInteger(10, minor))
    return std::nullopt;
  entry->second = major * 10 + minor;
  return entry->second;
}
} // namespace

bool nabla::isKnownProcessor(StringRef triple, StringRef chip) {
  if (!lookupTarget(Triple(triple)))
    return true;
  return getSubtarget(triple, chip.split(':').first) != nullptr;
}

unsigned nabla::getMinimumPTXVersion(StringRef chip) {
  // Minimum PTX ISA version per SM architecture (PTX ISA release notes), for
  // an LLVM that cannot say, and as a floor where it does.
  static const std::pair<unsigned, unsigned> kMinimumPTX[] = {
      {120, 87}, {101, 86}, {100, 86}, {90, 78}, {89, 78}, {87, 74},
      {86, 71},  {80, 70},  {75, 63},  {72, 61}, {70, 60}};
  unsigned sm = 0;
  StringRef digits = chip;
  if (!digits.consume_front("sm_") ||
      digits.take_while([](char c) { return c >= '0' && c <= '9'; })
          .getAsInteger(10, sm))
    return 60;
  unsigned ptx = 60;
  for (auto [minimumSM, version] : kMinimumPTX)
    if (sm >= minimumSM) {
      ptx = version;
      break;
    }
  // Architecture-specific variants (sm_90a, sm_100a) need PTX 8.0+.
  if (digits.ends_with("a") && sm >= 90)
    ptx = std::max(ptx, 80u);
  // LLVM knows chips newer than the table (sm_88 needs PTX 9.0, sm_103 8.8),
  // and a version below the chip's aborts its back end (found by fuzzing):
  // ask the back end which version it picks when none is given.
  if (std::optional<unsigned> picked = getPickedPTXVersion(chip))
    ptx = std::max(ptx, *picked);
  return ptx;
}
