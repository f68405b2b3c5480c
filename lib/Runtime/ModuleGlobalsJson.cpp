//===- ModuleGlobalsJson.cpp - Read a module's global buffers -------------===//

#include "ModuleGlobalsJson.h"

#include <limits>

using namespace nabla::runtime;
using json = nlohmann::json;

namespace {

/// The most bytes one global may take (a SPIR-V storage buffer's range is a
/// 32-bit quantity on most drivers).
constexpr uint64_t kMaxGlobalBytes = uint64_t(1) << 31;

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool readBuffer(const json &b, const std::string &where, ModuleGlobal &global,
                std::string &error) {
  auto fail = [&](const std::string &why) {
    error = where + ": " + why;
    return false;
  };
  if (!b.is_object())
    return fail("expected an object");
  auto name = b.find("name"), element = b.find("element"),
       bytes = b.find("bytes"), constant = b.find("constant"),
       data = b.find("data");
  if (name == b.end() || !name->is_string() ||
      name->get_ref<const std::string &>().empty())
    return fail("expected a \"name\"");
  if (element == b.end() || !element->is_string() ||
      !hostElementBytes(element->get<std::string>()))
    return fail("expected an \"element\" type");
  if (bytes == b.end() || !bytes->is_number_unsigned() ||
      bytes->get<uint64_t>() == 0 || bytes->get<uint64_t>() > kMaxGlobalBytes)
    return fail("expected \"bytes\" between 1 and 2^31");
  if (constant != b.end() && !constant->is_boolean())
    return fail("\"constant\" must be true or false");
  global.name = name->get<std::string>();
  global.type = element->get<std::string>();
  global.bytes = bytes->get<uint64_t>();
  global.constant = constant != b.end() && constant->get<bool>();
  if (data == b.end())
    return true;
  if (!data->is_string())
    return fail("\"data\" must be a string of hex digits");
  const std::string &hex = data->get_ref<const std::string &>();
  if (hex.size() % 2 || hex.size() / 2 > global.bytes)
    return fail("\"data\" must be whole bytes, at most \"bytes\" of them");
  global.initial.resize(hex.size() / 2);
  for (size_t k = 0; k < global.initial.size(); ++k) {
    int high = hexDigit(hex[2 * k]), low = hexDigit(hex[2 * k + 1]);
    if (high < 0 || low < 0)
      return fail("\"data\" must be a string of hex digits");
    global.initial[k] = static_cast<uint8_t>(high * 16 + low);
  }
  return true;
}

} // namespace

bool nabla::runtime::readModuleGlobals(const json &value,
                                       const std::string &path,
                                       ModuleGlobals &globals,
                                       std::string &error) {
  auto buffers = value.is_object() ? value.find("buffers") : value.end();
  auto kernels = value.is_object() ? value.find("kernels") : value.end();
  if (!value.is_object() || buffers == value.end() || !buffers->is_array() ||
      kernels == value.end() || !kernels->is_object()) {
    error = path + ": expected {\"buffers\": [...], \"kernels\": {...}}";
    return false;
  }
  for (size_t i = 0; i < buffers->size(); ++i) {
    ModuleGlobal global;
    if (!readBuffer((*buffers)[i], path + ".buffers[" + std::to_string(i) + "]",
                    global, error))
      return false;
    if (globals.find(global.name)) {
      error = path + ": two buffers named '" + global.name + "'";
      return false;
    }
    globals.buffers.push_back(std::move(global));
  }
  for (const auto &[kernel, names] : kernels->items()) {
    std::string where = path + ".kernels." + kernel;
    if (!names.is_array()) {
      error = where + ": expected a list of global names";
      return false;
    }
    std::vector<std::string> &bound = globals.kernels[kernel];
    for (const json &name : names) {
      if (!name.is_string() || !globals.find(name.get<std::string>())) {
        error = where + ": names a global the buffers do not have";
        return false;
      }
      bound.push_back(name.get<std::string>());
    }
  }
  return true;
}
