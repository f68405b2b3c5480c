//===- SPIRVReflection.cpp - Entry points and workgroup sizes -------------===//
//
// Walks the instructions once, collecting OpEntryPoint names, LocalSize
// execution modes, SpecId and BuiltIn WorkgroupSize decorations and
// OpSpecConstantComposite constituents, then resolves the WorkgroupSize
// composite (module-wide) to its three SpecIds.
//
//===----------------------------------------------------------------------===//

#include "SPIRVReflection.h"

#include <set>
#include <vector>

using namespace nabla::runtime;

namespace {

constexpr uint32_t kSPIRVMagic = 0x07230203;

/// The SPIR-V literal string in words [first, end).
std::string literalString(const uint32_t *words, size_t first, size_t end) {
  std::string text;
  for (size_t w = first; w < end; ++w)
    for (int byte = 0; byte < 4; ++byte) {
      char c = static_cast<char>((words[w] >> (8 * byte)) & 0xff);
      if (!c)
        return text;
      text.push_back(c);
    }
  return text;
}

} // namespace

bool nabla::runtime::reflectEntryPoints(
    const uint32_t *words, size_t count,
    std::map<std::string, SPIRVEntryPoint> &entryPoints, std::string &error) {
  if (count < 5 || words[0] != kSPIRVMagic) {
    error = "the module is not SPIR-V (no SPIR-V magic number)";
    return false;
  }
  std::map<uint32_t, std::string> entryNames;
  std::map<uint32_t, std::array<uint32_t, 3>> localSizes;
  std::map<uint32_t, uint32_t> specIds;
  std::set<uint32_t> workgroupSizeIds;
  std::map<uint32_t, std::vector<uint32_t>> specComposites;
  for (size_t at = 5; at < count;) {
    uint32_t opcode = words[at] & 0xffff, length = words[at] >> 16;
    if (length == 0 || at + length > count) {
      error = "malformed SPIR-V: an instruction runs past the module's end";
      return false;
    }
    const uint32_t *op = words + at;
    switch (opcode) {
    case 15: // OpEntryPoint
      if (length >= 4)
        entryNames[op[2]] = literalString(words, at + 3, at + length);
      break;
    case 16:                          // OpExecutionMode
      if (length >= 6 && op[2] == 17) // LocalSize
        localSizes[op[1]] = {op[3], op[4], op[5]};
      break;
    case 71:                         // OpDecorate
      if (length >= 4 && op[2] == 1) // SpecId
        specIds[op[1]] = op[3];
      if (length >= 4 && op[2] == 11 && op[3] == 25) // BuiltIn WorkgroupSize
        workgroupSizeIds.insert(op[1]);
      break;
    case 51: // OpSpecConstantComposite
      if (length >= 3)
        specComposites[op[2]].assign(op + 3, op + length);
      break;
    default:
      break;
    }
    at += length;
  }
  std::optional<std::array<uint32_t, 3>> sizeSpecIds;
  for (uint32_t id : workgroupSizeIds) {
    auto composite = specComposites.find(id);
    if (composite == specComposites.end() || composite->second.size() != 3)
      continue;
    std::array<uint32_t, 3> ids{};
    bool all = true;
    for (int d = 0; d < 3 && all; ++d) {
      auto spec = specIds.find(composite->second[d]);
      all = spec != specIds.end();
      if (all)
        ids[d] = spec->second;
    }
    if (all)
      sizeSpecIds = ids;
  }
  for (auto &[id, name] : entryNames) {
    SPIRVEntryPoint &entry = entryPoints[name];
    if (auto size = localSizes.find(id); size != localSizes.end())
      entry.localSize = size->second;
    entry.sizeSpecIds = sizeSpecIds;
  }
  return true;
}
