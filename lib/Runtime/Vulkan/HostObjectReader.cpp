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
#include "../ModuleGlobalsJson.h"

#include "nabla/Runtime/HostObject.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

using namespace nabla::runtime;
using json = nlohmann::json;

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
    const std::string &kernelName = name->get_ref<const std::string &>();
    object.kernels[kernelName] = std::move(list);
    auto prints = kernel.find("printf");
    if (prints != kernel.end() && prints->is_boolean() && prints->get<bool>())
      object.printing.insert(kernelName);
  }
  auto printf = root.find("printf");
  if (printf != root.end()) {
    auto formats =
        printf->is_object() ? printf->find("formats") : printf->end();
    auto capacity =
        printf->is_object() ? printf->find("capacity") : printf->end();
    if (!printf->is_object() || formats == printf->end() ||
        !formats->is_array() || capacity == printf->end() ||
        !capacity->is_number_unsigned() ||
        capacity->get<uint64_t>() > (1u << 28)) {
      error = "malformed launch description: \"printf\" needs \"formats\" "
              "and a \"capacity\" of at most 2^28 words";
      return false;
    }
    for (const json &format : *formats) {
      if (!format.is_string()) {
        error = "malformed launch description: printf formats are strings";
        return false;
      }
      object.printfFormats.push_back(format.get<std::string>());
    }
    object.printfCapacity = static_cast<uint32_t>(capacity->get<uint64_t>());
  }
  auto globals = root.find("module_globals");
  if (globals != root.end() &&
      !readModuleGlobals(*globals, "module_globals", object.globals, error)) {
    error = "malformed launch description: " + error;
    return false;
  }
  return true;
}

/// One conversion of `format` (from its '%' at `at`) applied to `slot`.
std::string formatConversion(const std::string &format, size_t &at,
                             uint64_t slot) {
  size_t start = at++;
  while (at < format.size() &&
         std::string("-+ #0").find(format[at]) != std::string::npos)
    ++at;
  while (at < format.size() && (isdigit(format[at]) || format[at] == '.'))
    ++at;
  std::string spec = format.substr(start, at - start);
  while (at < format.size() &&
         std::string("hljztL").find(format[at]) != std::string::npos)
    ++at;
  if (at >= format.size())
    return spec;
  char kind = format[at++];
  char text[512];
  if (std::string("fFeEgGaA").find(kind) != std::string::npos) {
    double value;
    std::memcpy(&value, &slot, 8);
    std::snprintf(text, sizeof(text), (spec + kind).c_str(), value);
  } else if (kind == 'c') {
    std::snprintf(text, sizeof(text), (spec + kind).c_str(),
                  static_cast<int>(slot));
  } else if (kind == 'd' || kind == 'i') {
    std::snprintf(text, sizeof(text), (spec + "ll" + kind).c_str(),
                  static_cast<long long>(slot));
  } else {
    std::snprintf(text, sizeof(text), (spec + "ll" + kind).c_str(),
                  static_cast<unsigned long long>(slot));
  }
  return text;
}

} // namespace

bool nabla::runtime::readHostObject(const void *data, size_t size,
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

std::string
nabla::runtime::formatPrintfRecords(const uint32_t *words, uint32_t capacity,
                                    const std::vector<std::string> &formats) {
  std::string out;
  uint32_t reserved = words[0];
  uint32_t end = std::min(reserved, capacity);
  for (uint32_t at = 0; at + 2 <= end;) {
    uint32_t index = words[1 + at], length = words[2 + at];
    if (index >= formats.size() || length < 2 || at + length > end ||
        length % 2 != 0) {
      out += "nabla_mgpu: malformed printf record\n";
      break;
    }
    const std::string &format = formats[index];
    uint32_t slot = 0, slots = (length - 2) / 2;
    for (size_t k = 0; k < format.size();) {
      if (format[k] != '%') {
        out.push_back(format[k++]);
        continue;
      }
      if (k + 1 < format.size() && format[k + 1] == '%') {
        out.push_back('%');
        k += 2;
        continue;
      }
      uint64_t value = 0;
      if (slot < slots)
        value = uint64_t(words[3 + at + 2 * slot]) |
                (uint64_t(words[4 + at + 2 * slot]) << 32);
      ++slot;
      out += formatConversion(format, k, value);
    }
    at += length;
  }
  if (reserved > capacity)
    out += "nabla_mgpu: printf buffer full, output of " +
           std::to_string(reserved - capacity) + " words lost\n";
  return out;
}
