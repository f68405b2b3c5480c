//===- TargetOptions.cpp - Checks of a target's options -------------------===//

#include "nabla/Support/TargetOptions.h"

#include "nabla/Support/Limits.h"
#include "nabla/Support/TargetChips.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace llvm;

namespace {

/// `chip` is `prefix` then digits of `radix`, with an optional a/f suffix.
bool hasChipForm(StringRef chip, StringRef prefix, unsigned radix) {
  if (!chip.consume_front(prefix))
    return false;
  StringRef digits = chip.rtrim("af");
  unsigned value;
  return !digits.empty() && !digits.getAsInteger(radix, value);
}

/// A `+ptxNN` in the features must be at least the chip's minimum: LLVM's
/// NVPTX back end aborts on a lower one (found by fuzzing, sm_88).
std::string checkPTXFeatures(StringRef chip, StringRef features) {
  unsigned minimum = nabla::getMinimumPTXVersion(chip);
  for (StringRef item : split(features, ',')) {
    StringRef digits = item.trim();
    unsigned version;
    if (!digits.consume_front("+ptx") || digits.getAsInteger(10, version))
      continue;
    if (version < minimum)
      return ("features '" + item.trim() + "' select PTX " +
              Twine(version / 10) + "." + Twine(version % 10) + ", but " +
              chip + " needs PTX " + Twine(minimum / 10) + "." +
              Twine(minimum % 10) +
              " or later (leave features empty for the lowest that fits)")
          .str();
  }
  return "";
}

std::string checkChip(StringRef target, StringRef chip, bool requireChip) {
  if (chip.empty()) {
    if (requireChip)
      return ("the " + target + " target needs a chip (e.g. " +
              (target == "rocdl" ? "gfx90a" : "sm_90") + ")")
          .str();
    return "";
  }
  if (target == "nvvm" && !hasChipForm(chip, "sm_", 10))
    return ("invalid chip '" + chip +
            "' for the nvvm target (expected sm_NN, e.g. sm_90)")
        .str();
  if (target == "rocdl" && !hasChipForm(chip, "gfx", 16))
    return ("invalid chip '" + chip +
            "' for the rocdl target (expected gfxNNN, e.g. gfx90a)")
        .str();
  if (target == "nvvm" &&
      !nabla::isKnownProcessor("nvptx64-nvidia-cuda", chip))
    return ("unknown chip '" + chip +
            "': LLVM " LLVM_VERSION_STRING
            "'s NVPTX back end has no such processor")
        .str();
  if (target == "rocdl" && !nabla::isKnownProcessor("amdgcn-amd-amdhsa", chip))
    return ("unknown chip '" + chip +
            "': LLVM " LLVM_VERSION_STRING
            "'s AMDGPU back end has no such processor")
        .str();
  return "";
}

} // namespace

std::string nabla::checkTargetOptions(const TargetOptionValues &values) {
  if (!is_contained({"nvvm", "rocdl", "spirv", "metal"}, values.target))
    return ("unknown target '" + values.target +
            "' (expected nvvm, rocdl, spirv or metal)")
        .str();
  if (values.abi != "v1" && values.abi != "v2")
    return ("unknown abi '" + values.abi + "' (expected v1 or v2)").str();
  if (!values.toolkit.empty() && !sys::fs::is_directory(values.toolkit))
    return ("toolkit '" + values.toolkit + "' is not a directory").str();
  if (values.workgroupSize.size() > 3)
    return "workgroup-size takes at most 3 values";
  for (int64_t extent : values.workgroupSize)
    if (extent < 1 || extent > kMaxWorkgroupExtent)
      return ("workgroup size " + Twine(extent) + " is out of range (1 to " +
              Twine(kMaxWorkgroupExtent) + ")")
          .str();
  std::string error = checkChip(values.target, values.chip, values.requireChip);
  if (error.empty() && values.target == "nvvm" && !values.chip.empty())
    error = checkPTXFeatures(values.chip, values.features);
  return error;
}

std::string nabla::findPtxas(StringRef toolkit) {
  SmallVector<std::string> roots;
  if (!toolkit.empty())
    roots.push_back(toolkit.str());
  if (const char *env = std::getenv("CUDA_PATH"))
    roots.push_back(env);
  roots.push_back("/usr/local/cuda");
  for (const std::string &root : roots) {
    SmallString<128> candidate(root);
    sys::path::append(candidate, "bin", "ptxas");
    if (sys::fs::can_execute(candidate))
      return std::string(candidate);
  }
  if (ErrorOr<std::string> onPath = sys::findProgramByName("ptxas"))
    return *onPath;
  return "";
}

std::string nabla::findNvlink(StringRef ptxas) {
  SmallString<128> nvlink = sys::path::parent_path(ptxas);
  sys::path::append(nvlink, "nvlink");
  return sys::fs::can_execute(nvlink) ? std::string(nvlink) : std::string();
}
