//===- HostObjectReader.cpp - Read Nabla host objects and SPIR-V ----------===//
//
// The header and JSON description of nabla/Runtime/HostObject.h, checked
// member by member (the object comes from a compiled program, but a
// hand-written or corrupted one must be a message, not a crash), then the
// entry points of the SPIR-V it wraps (SPIRVReflection.h).
//
//===----------------------------------------------------------------------===//

#include "HostObjectReader.h"

#include "../Json.h"
#include "../SPIRVReflection.h"

#include "nabla/Runtime/HostObject.h"

#include <cstring>

using namespace nabla::mgpu;
using json = nlohmann::json;

bool KernelParam::hasSizeBindings() const {
  if (!buffer || shape.size() < 2)
    return false;
  for (int64_t extent : shape)
    if (extent < 0)
      return true;
  return false;
}

unsigned nabla::mgpu::hostElementBytes(const std::string &type) {
  if (type == "index")
    return 8;
  if (type == "bf16")
    return 2;
  if (type.size() >= 2 && (type[0] == 'i' || type[0] == 'f')) {
    unsigned bits = 0;
    for (size_t k = 1; k < type.size(); ++k) {
      if (type[k] < '0' || type[k] > '9' || bits > 1024)
        return 0;
      bits = bits * 10 + (type[k] - '0');
    }
    if (bits == 0 || (type[0] == 'f' && bits != 16 && bits != 32 &&
                      bits != 64))
      return 0;
    return (bits + 7) / 8;
  }
  return 0;
}

unsigned nabla::mgpu::deviceElementBytes(const std::string &type) {
  return type == "index" ? 4 : hostElementBytes(type);
}

namespace {

bool readParam(const json &entry, const std::string &where, KernelParam &param,
               std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "malformed launch description: " + where + ": " + why;
    return false;
  };
  if (!entry.is_object())
    return fail("expected an object");
  auto kind = entry.find("kind");
  if (kind == entry.end() || !kind->is_string())
    return fail("missing \"kind\"");
  const std::string &kindName = kind->get_ref<const std::string &>();
  param.buffer = kindName == "buffer";
  if (!param.buffer && kindName != "scalar")
    return fail("unknown kind '" + kindName + "'");
  auto type = entry.find(param.buffer ? "element" : "type");
  if (type == entry.end() || !type->is_string())
    return fail(param.buffer ? "missing \"element\"" : "missing \"type\"");
  param.type = type->get_ref<const std::string &>();
  if (!hostElementBytes(param.type))
    return fail("unsupported type '" + param.type + "'");
  if (!param.buffer)
    return true;
  auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array() || shape->size() > 16)
    return fail("missing \"shape\" (an array of at most 16 extents)");
  for (const json &extent : *shape) {
    if (!extent.is_number_integer() || extent.get<int64_t>() < -1)
      return fail("extents must be integers >= -1");
    param.shape.push_back(extent.get<int64_t>());
  }
  auto layout = entry.find("layout");
  if (layout != entry.end()) {
    if (!layout->is_string() ||
        layout->get_ref<const std::string &>() != "strided")
      return fail("\"layout\" must be \"strided\" when present");
    param.strided = true;
  }
  return true;
}

bool readDescription(const std::string &text, HostObject &object,
                     std::string &error) {
  json root;
  if (!nabla::runtime::parseJson(text, root, error)) {
    error = "malformed launch description: " + error;
    return false;
  }
  auto kernels = root.is_object() ? root.find("kernels") : root.end();
  if (!root.is_object() || kernels == root.end() || !kernels->is_array()) {
    error = "malformed launch description: missing \"kernels\"";
    return false;
  }
  for (size_t k = 0; k < kernels->size(); ++k) {
    const json &kernel = (*kernels)[k];
    std::string where = "kernels[" + std::to_string(k) + "]";
    auto name = kernel.is_object() ? kernel.find("name") : kernel.end();
    auto params = kernel.is_object() ? kernel.find("params") : kernel.end();
    if (!kernel.is_object() || name == kernel.end() || !name->is_string() ||
        params == kernel.end() || !params->is_array()) {
      error = "malformed launch description: " + where +
              ": expected {\"name\": ..., \"params\": [...]}";
      return false;
    }
    std::vector<KernelParam> list(params->size());
    for (size_t p = 0; p < params->size(); ++p)
      if (!readParam((*params)[p], where + ".params[" + std::to_string(p) + "]",
                     list[p], error))
        return false;
    object.kernels[name->get_ref<const std::string &>()] = std::move(list);
  }
  return true;
}

} // namespace

bool nabla::mgpu::readHostObject(const void *data, size_t size,
                                 HostObject &object, std::string &error) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  size_t first = 0;
  if (size >= nabla::runtime::kHostObjectHeaderBytes &&
      std::memcmp(bytes, nabla::runtime::kHostObjectMagic, 8) == 0) {
    uint32_t version, length;
    std::memcpy(&version, bytes + 8, 4);
    std::memcpy(&length, bytes + 12, 4);
    if (version != nabla::runtime::kHostObjectVersion) {
      error = "host object format version " + std::to_string(version) +
              " is not supported (this library reads version " +
              std::to_string(nabla::runtime::kHostObjectVersion) + ")";
      return false;
    }
    if (length > size - nabla::runtime::kHostObjectHeaderBytes) {
      error = "truncated host object";
      return false;
    }
    std::string text(reinterpret_cast<const char *>(bytes) +
                         nabla::runtime::kHostObjectHeaderBytes,
                     length);
    if (!readDescription(text, object, error))
      return false;
    object.described = true;
    first = (nabla::runtime::kHostObjectHeaderBytes + length + 3) / 4 * 4;
  }
  if (first > size || (size - first) % 4 != 0) {
    error = "the SPIR-V module is not a whole number of words";
    return false;
  }
  object.words.resize((size - first) / 4);
  std::memcpy(object.words.data(), bytes + first, size - first);
  return nabla::runtime::reflectEntryPoints(
      object.words.data(), object.words.size(), object.entryPoints, error);
}
