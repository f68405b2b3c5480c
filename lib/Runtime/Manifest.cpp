//===- Manifest.cpp - The kernel manifest written by nabla-compile --------===//
//
// Converts the parsed JSON of manifest.json into typed records, rejecting
// manifests that lack what a launch needs. Every member is type-checked
// before it is read (nlohmann's at()/get<>() would throw on unchecked input),
// and every rejection names the member by its path, e.g.
// `malformed manifest: kernels[0].bindings[2]: missing "param"`. Optional
// members may be absent; present ones must have the documented type.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Manifest.h"
#include "nabla/Support/Limits.h"

#include "Json.h"
#include "ModuleGlobalsJson.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <tuple>

using namespace nabla::runtime;
using json = nlohmann::json;

const KernelInfo *Manifest::findKernel(const std::string &name) const {
  for (const KernelInfo &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

namespace {

constexpr int64_t kMaxUnsigned = std::numeric_limits<uint32_t>::max();
constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

/// Typed, located reads of manifest members. Each read returns false after
/// setting `error` on a type or range mismatch (or a missing required member).
class ManifestReader {
public:
  explicit ManifestReader(std::string &error) : error(error) {}

  static std::string member(const std::string &path, const char *key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string element(const std::string &path, size_t index) {
    return path + "[" + std::to_string(index) + "]";
  }

  bool fail(const std::string &path, const std::string &what) {
    error = "malformed manifest: " + (path.empty() ? "top level" : path) +
            ": " + what;
    return false;
  }

  bool expectObject(const json &value, const std::string &path) {
    return value.is_object() ||
           fail(path,
                std::string("expected an object, found ") + value.type_name());
  }

  /// Member `key` of `object` (an object), or null when absent.
  static const json *find(const json &object, const char *key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  /// Reads string member `key` into `out`. Absent: an error if `required`
  /// (also when empty), else `out` keeps its value.
  bool readString(const json &object, const char *key, const std::string &path,
                  std::string &out, bool required = false) {
    const json *value = find(object, key);
    if (!value)
      return !required || fail(path, std::string("missing \"") + key + "\"");
    if (!value->is_string())
      return fail(member(path, key), std::string("expected a string, found ") +
                                         value->type_name());
    out = value->get_ref<const std::string &>();
    if (required && out.empty())
      return fail(member(path, key), "must not be empty");
    return true;
  }

  /// Reads an integer `value` in [min, max] into `out`.
  bool readInteger(const json &value, const std::string &path, int64_t min,
                   int64_t max, int64_t &out) {
    if (!value.is_number_integer())
      return fail(path, std::string("expected an integer, found ") +
                            (value.is_number() ? "a non-integer number"
                                               : value.type_name()));
    bool inRange;
    if (value.is_number_unsigned()) {
      uint64_t v = value.get<uint64_t>();
      inRange = v <= static_cast<uint64_t>(max);
      out = inRange ? static_cast<int64_t>(v) : 0;
      inRange = inRange && out >= min;
    } else {
      out = value.get<int64_t>();
      inRange = out >= min && out <= max;
    }
    return inRange || fail(path, value.dump() + " is out of range [" +
                                     std::to_string(min) + ", " +
                                     std::to_string(max) + "]");
  }

  /// Reads integer member `key` into `out`, like readString.
  template <typename T>
  bool readInteger(const json &object, const char *key, const std::string &path,
                   int64_t min, int64_t max, T &out, bool required = false) {
    const json *value = find(object, key);
    if (!value)
      return !required || fail(path, std::string("missing \"") + key + "\"");
    int64_t v;
    if (!readInteger(*value, member(path, key), min, max, v))
      return false;
    out = static_cast<T>(v);
    return true;
  }

  bool readBool(const json &object, const char *key, const std::string &path,
                bool &out) {
    const json *value = find(object, key);
    if (!value)
      return true;
    if (!value->is_boolean())
      return fail(member(path, key),
                  std::string("expected true or false, found ") +
                      value->type_name());
    out = value->get<bool>();
    return true;
  }

  /// Sets `out` to array member `key`, or to null when absent (or, with
  /// `nullable`, null).
  bool readArray(const json &object, const char *key, const std::string &path,
                 const json *&out, bool nullable = false) {
    out = find(object, key);
    if (!out || (nullable && out->is_null())) {
      out = nullptr;
      return true;
    }
    return out->is_array() ||
           fail(member(path, key),
                std::string(nullable ? "expected an array or null, found "
                                     : "expected an array, found ") +
                    out->type_name());
  }

  /// Reads a shape: extents, null for a dynamic one (-1).
  bool readShape(const json &object, const std::string &path,
                 std::vector<int64_t> &out) {
    const json *shape;
    if (!readArray(object, "shape", path, shape))
      return false;
    if (!shape)
      return true;
    for (size_t d = 0; d < shape->size(); ++d) {
      const json &extent = (*shape)[d];
      int64_t value = -1;
      if (!extent.is_null() &&
          !readInteger(extent, element(member(path, "shape"), d), 0,
                       std::numeric_limits<int64_t>::max(), value))
        return false;
      out.push_back(value);
    }
    return true;
  }

private:
  std::string &error;
};

bool readParam(ManifestReader &reader, const json &p, const std::string &path,
               ParamInfo &param) {
  std::string kind;
  if (!reader.expectObject(p, path) ||
      !reader.readInteger(p, "index", path, 0, kMaxUnsigned, param.index,
                          /*required=*/true) ||
      !reader.readString(p, "kind", path, kind) ||
      !reader.readString(p, "type", path, param.type) ||
      !reader.readString(p, "element", path, param.element) ||
      !reader.readShape(p, path, param.shape) ||
      !reader.readString(p, "reloc", path, param.relocKey) ||
      !reader.readInteger(p, "presence_of", path, 0, kMaxUnsigned,
                          param.presenceOf) ||
      !reader.readBool(p, "dynamic_shared_memory_bytes", path,
                       param.dynamicSharedBytes) ||
      !reader.readBool(p, "tape", path, param.tape) ||
      !reader.readBool(p, "split_tape", path, param.splitTape))
    return false;
  if (!kind.empty() && kind != "buffer" && kind != "scalar")
    return reader.fail(ManifestReader::member(path, "kind"),
                       "expected \"buffer\" or \"scalar\", found \"" + kind +
                           "\"");
  param.isBuffer = kind == "buffer";
  return true;
}

/// The ops of a tape formula with their operand counts (-1: a leaf whose
/// third element is an integer).
int sizeExprArity(const std::string &op) {
  static const std::map<std::string, int> arity = {
      {"arg", -1},         {"const", -1},     {"thread_id", -1},
      {"block_id", -1},    {"block_dim", -1}, {"grid_dim", -1},
      {"addi", 2},         {"subi", 2},       {"muli", 2},
      {"divui", 2},        {"divsi", 2},      {"remui", 2},
      {"remsi", 2},        {"ceildivui", 2},  {"ceildivsi", 2},
      {"floordivsi", 2},   {"maxsi", 2},      {"minsi", 2},
      {"maxui", 2},        {"minui", 2},      {"andi", 2},
      {"ori", 2},          {"xori", 2},       {"shli", 2},
      {"shrui", 2},        {"shrsi", 2},      {"extsi", 1},
      {"extui", 1},        {"trunci", 1},     {"index_cast", 1},
      {"index_castui", 1}, {"select", 3},     {"cmpi", 2},
      {"dim", -1},         {"load", 1},       {"capacity", -1}};
  auto it = arity.find(op);
  return it == arity.end() ? -2 : it->second;
}

bool readSizeExpr(ManifestReader &reader, const json &e,
                  const std::string &path, SizeExpr &expr, unsigned depth) {
  if (depth > 256)
    return reader.fail(path, "formula nested too deeply");
  if (!e.is_array() || e.size() < 3 || !e[0].is_string() ||
      !e[1].is_number_integer())
    return reader.fail(path, "expected [op, bits, operands...]");
  expr.op = e[0].get<std::string>();
  int64_t bits = e[1].get<int64_t>();
  if (bits < 1 || bits > 64)
    return reader.fail(path, "bits must be 1 to 64");
  expr.bits = unsigned(bits);
  int arity = sizeExprArity(expr.op);
  if (arity == -2)
    return reader.fail(path, "unknown formula op \"" + expr.op + "\"");
  if (arity == -1) {
    if (e.size() != 3 || !e[2].is_number_integer())
      return reader.fail(path, "expected [\"" + expr.op + "\", bits, integer]");
    expr.value = e[2].get<int64_t>();
    return true;
  }
  size_t first = 2;
  if (expr.op == "cmpi") {
    if (!e[2].is_string())
      return reader.fail(path, "expected [\"cmpi\", 1, predicate, a, b]");
    expr.predicate = e[2].get<std::string>();
    first = 3;
  }
  if (expr.op == "load") {
    if (!e[2].is_number_integer())
      return reader.fail(path, "expected [\"load\", bits, param, index]");
    expr.value = e[2].get<int64_t>();
    first = 3;
  }
  if (e.size() != first + size_t(arity))
    return reader.fail(path, "\"" + expr.op + "\" takes " +
                                 std::to_string(arity) + " operands");
  for (size_t i = first; i < e.size(); ++i) {
    SizeExpr operand;
    if (!readSizeExpr(reader, e[i], ManifestReader::element(path, i), operand,
                      depth + 1))
      return false;
    expr.operands.push_back(std::move(operand));
  }
  return true;
}

bool readTape(ManifestReader &reader, const json &t, const std::string &path,
              KernelInfo &kernel, bool split) {
  TapeInfo tape;
  if (!reader.expectObject(t, path) ||
      !reader.readInteger(t, "param", path, 0, kMaxUnsigned, tape.param,
                          /*required=*/true) ||
      !reader.readString(t, "formula", path, tape.formula) ||
      !reader.readBool(t, "growable", path, tape.growable))
    return false;
  auto words = t.find("words_per_thread");
  if (words == t.end())
    return reader.fail(path, "missing \"words_per_thread\"");
  if (!readSizeExpr(reader, *words,
                    ManifestReader::member(path, "words_per_thread"),
                    tape.wordsPerThread, 0))
    return false;
  if (tape.param >= kernel.params.size() ||
      (split ? !kernel.params[tape.param].splitTape
             : !kernel.params[tape.param].tape) ||
      !kernel.params[tape.param].isBuffer)
    return reader.fail(ManifestReader::member(path, "param"),
                       "does not name the kernel's tape parameter");
  (split ? kernel.splitTape : kernel.tape) = std::move(tape);
  return true;
}

bool readKernel(ManifestReader &reader, const json &k, const std::string &path,
                KernelInfo &kernel) {
  const json *params, *workgroup, *bindings, *arguments;
  if (!reader.expectObject(k, path) ||
      !reader.readString(k, "name", path, kernel.name, /*required=*/true) ||
      !reader.readString(k, "module", path, kernel.module,
                         /*required=*/true) ||
      !reader.readArray(k, "params", path, params) ||
      !reader.readArray(k, "workgroup_size", path, workgroup,
                        /*nullable=*/true) ||
      !reader.readArray(k, "bindings", path, bindings) ||
      !reader.readArray(k, "arguments", path, arguments))
    return false;
  int64_t dynamicShared = -2;
  if (!reader.readInteger(k, "dynamic_shared_memory", path, -1,
                          nabla::kMaxDynamicSharedMemory, dynamicShared))
    return false;
  if (dynamicShared != -2)
    kernel.dynamicSharedMemory = dynamicShared;
  if (params) {
    std::string at = ManifestReader::member(path, "params");
    for (size_t i = 0; i < params->size(); ++i) {
      ParamInfo param;
      if (!readParam(reader, (*params)[i], ManifestReader::element(at, i),
                     param))
        return false;
      kernel.params.push_back(std::move(param));
    }
    // A presence flag is an i32 of the kernel's own naming one of its
    // buffers.
    for (size_t i = 0; i < kernel.params.size(); ++i) {
      const ParamInfo &flag = kernel.params[i];
      if (flag.presenceOf < 0)
        continue;
      size_t of = flag.presenceOf;
      if (flag.isBuffer || flag.type != "i32" || !flag.relocKey.empty() ||
          of >= kernel.params.size() || !kernel.params[of].isBuffer ||
          !kernel.params[of].relocKey.empty())
        return reader.fail(
            ManifestReader::member(ManifestReader::element(at, i),
                                   "presence_of"),
            "a presence flag is an i32 parameter naming a buffer parameter");
    }
    // The launch's dynamic shared bytes: one i32 of the kernel's own, of a
    // kernel that uses dynamic shared memory.
    size_t sizes = 0;
    for (size_t i = 0; i < kernel.params.size(); ++i) {
      const ParamInfo &size = kernel.params[i];
      if (!size.dynamicSharedBytes)
        continue;
      if (size.isBuffer || size.type != "i32" || !size.relocKey.empty() ||
          size.presenceOf >= 0 || ++sizes > 1 || !kernel.dynamicSharedMemory)
        return reader.fail(
            ManifestReader::member(ManifestReader::element(at, i),
                                   "dynamic_shared_memory_bytes"),
            "the launch's dynamic shared memory size is one i32 parameter "
            "of a kernel that uses dynamic shared memory");
    }
  }

  // The tape parameter belongs to the kernel's tape entry, and back.
  for (bool split : {false, true}) {
    const char *key = split ? "split_tape" : "tape";
    auto tape = k.find(key);
    if (tape != k.end() &&
        !readTape(reader, *tape, ManifestReader::member(path, key), kernel,
                  split))
      return false;
  }
  for (size_t i = 0; i < kernel.params.size(); ++i)
    if (kernel.params[i].splitTape &&
        (!kernel.splitTape || kernel.splitTape->param != i))
      return reader.fail(
          ManifestReader::member(
              ManifestReader::element(ManifestReader::member(path, "params"),
                                      i),
              "split_tape"),
          "a split tape parameter needs the kernel's \"split_tape\" entry "
          "naming it");
  for (size_t i = 0; i < kernel.params.size(); ++i)
    if (kernel.params[i].tape && (!kernel.tape || kernel.tape->param != i))
      return reader.fail(
          ManifestReader::member(
              ManifestReader::element(ManifestReader::member(path, "params"),
                                      i),
              "tape"),
          "a tape parameter needs the kernel's \"tape\" entry naming it");

  if (workgroup) {
    std::string at = ManifestReader::member(path, "workgroup_size");
    if (workgroup->empty() || workgroup->size() > 3)
      return reader.fail(at, "expected 1 to 3 extents, found " +
                                 std::to_string(workgroup->size()));
    std::vector<int64_t> size;
    for (size_t d = 0; d < workgroup->size(); ++d) {
      int64_t extent;
      if (!reader.readInteger((*workgroup)[d], ManifestReader::element(at, d),
                              1, kMaxUnsigned, extent))
        return false;
      size.push_back(extent);
    }
    kernel.workgroupSize = size;
  }

  // A binding or argument that names no parameter cannot be filled: reject
  // it rather than skip it (the kernel would read an unbound descriptor).
  if (bindings) {
    std::string at = ManifestReader::member(path, "bindings");
    for (size_t i = 0; i < bindings->size(); ++i) {
      const json &b = (*bindings)[i];
      std::string where = ManifestReader::element(at, i);
      BindingInfo binding;
      if (!reader.expectObject(b, where) ||
          !reader.readString(b, "kind", where, binding.kind) ||
          !reader.readInteger(b, "binding", where, 0, kMaxUnsigned,
                              binding.binding, /*required=*/true) ||
          !reader.readInteger(b, "param", where, 0, kMaxUnsigned, binding.param,
                              /*required=*/binding.kind != "printf" &&
                                  binding.kind != "global") ||
          !reader.readString(b, "type", where, binding.type) ||
          !reader.readString(b, "global", where, binding.global,
                             /*required=*/binding.kind == "global") ||
          !reader.readInteger(b, "dim", where, -1, kMaxInt, binding.dim))
        return false;
      kernel.bindings.push_back(std::move(binding));
    }
  }

  if (arguments) {
    std::string at = ManifestReader::member(path, "arguments");
    for (size_t i = 0; i < arguments->size(); ++i) {
      const json &a = (*arguments)[i];
      std::string where = ManifestReader::element(at, i);
      ArgumentInfo argument;
      if (!reader.expectObject(a, where) ||
          !reader.readInteger(a, "param", where, 0, kMaxUnsigned,
                              argument.param, /*required=*/true) ||
          !reader.readString(a, "field", where, argument.field,
                             /*required=*/true) ||
          !reader.readString(a, "type", where, argument.type) ||
          !reader.readInteger(a, "dim", where, -1, kMaxInt, argument.dim))
        return false;
      kernel.arguments.push_back(std::move(argument));
    }
  }
  return true;
}

bool readRelocation(ManifestReader &reader, const json &r,
                    const std::string &path, RelocationInfo &record) {
  return reader.expectObject(r, path) &&
         reader.readString(r, "key", path, record.key, /*required=*/true) &&
         reader.readString(r, "module", path, record.module) &&
         reader.readString(r, "strategy", path, record.strategy) &&
         reader.readString(r, "symbol", path, record.symbol) &&
         reader.readString(r, "type", path, record.type) &&
         reader.readBool(r, "pointer", path, record.pointer) &&
         reader.readBool(r, "constant", path, record.constant) &&
         reader.readString(r, "element", path, record.element) &&
         reader.readShape(r, path, record.shape) &&
         reader.readString(r, "shadow_of", path, record.shadowOf);
}

} // namespace

bool nabla::runtime::parseManifest(const std::string &text, Manifest &manifest,
                                   std::string &error) {
  json root;
  if (!parseJson(text, root, error)) {
    error = "malformed manifest: " + error;
    return false;
  }
  const json *format =
      root.is_object() ? ManifestReader::find(root, "format") : nullptr;
  if (!format || !format->is_string() || *format != "nabla-manifest") {
    error = "not a Nabla manifest (missing \"format\": \"nabla-manifest\")";
    return false;
  }

  ManifestReader reader(error);
  int64_t version = 1;
  if (!reader.readInteger(root, "version", "", 0, kMaxUnsigned, version))
    return false;
  if (version != 1)
    return reader.fail("version", "unsupported manifest version " +
                                      std::to_string(version) +
                                      " (this runtime reads version 1)");

  manifest = Manifest();
  const json *kernels, *relocations;
  if (!reader.readString(root, "target", "", manifest.target) ||
      !reader.readString(root, "chip", "", manifest.chip) ||
      !reader.readArray(root, "kernels", "", kernels) ||
      !reader.readArray(root, "relocations", "", relocations))
    return false;

  if (const json *modules = ManifestReader::find(root, "modules")) {
    if (!reader.expectObject(*modules, "modules"))
      return false;
    for (const auto &[name, files] : modules->items()) {
      std::string at = ManifestReader::member("modules", name.c_str());
      if (!files.is_array())
        return reader.fail(at, std::string("expected an array, found ") +
                                   files.type_name());
      std::vector<std::string> &names = manifest.modules[name];
      for (size_t i = 0; i < files.size(); ++i) {
        // Artifacts lie next to manifest.json: a path would read elsewhere.
        const json &file = files[i];
        if (!file.is_string() || file.get_ref<const std::string &>().empty() ||
            file.get_ref<const std::string &>().find('/') != std::string::npos)
          return reader.fail(ManifestReader::element(at, i),
                             "expected a file name in the manifest's "
                             "directory, found " +
                                 file.dump());
        names.push_back(file.get<std::string>());
      }
    }
  }

  if (kernels)
    for (size_t i = 0; i < kernels->size(); ++i) {
      KernelInfo kernel;
      if (!readKernel(reader, (*kernels)[i],
                      ManifestReader::element("kernels", i), kernel))
        return false;
      manifest.kernels.push_back(std::move(kernel));
    }

  if (const json *printf = ManifestReader::find(root, "printf")) {
    if (!reader.expectObject(*printf, "printf"))
      return false;
    for (const auto &[name, info] : printf->items()) {
      std::string at = ManifestReader::member("printf", name.c_str());
      PrintfLayout layout;
      int64_t capacity = 0;
      const json *formats, *kernels;
      if (!reader.expectObject(info, at) ||
          !reader.readInteger(info, "capacity", at, 1, kMaxUnsigned, capacity,
                              /*required=*/true) ||
          !reader.readArray(info, "formats", at, formats) ||
          !reader.readArray(info, "kernels", at, kernels))
        return false;
      layout.capacity = static_cast<uint32_t>(capacity);
      for (auto [list, out, key] :
           {std::tuple(formats, &layout.formats, "formats"),
            std::tuple(kernels, &layout.kernels, "kernels")}) {
        if (!list)
          continue;
        for (size_t i = 0; i < list->size(); ++i) {
          if (!(*list)[i].is_string())
            return reader.fail(
                ManifestReader::element(ManifestReader::member(at, key), i),
                "expected a string");
          out->push_back((*list)[i].get<std::string>());
        }
      }
      manifest.printf[name] = std::move(layout);
    }
  }

  if (const json *globals = ManifestReader::find(root, "module_globals")) {
    if (!reader.expectObject(*globals, "module_globals"))
      return false;
    for (const auto &[name, info] : globals->items())
      if (!readModuleGlobals(info, "module_globals." + name,
                             manifest.globals[name], error)) {
        error = "malformed manifest: " + error;
        return false;
      }
  }

  if (relocations)
    for (size_t i = 0; i < relocations->size(); ++i) {
      RelocationInfo record;
      if (!readRelocation(reader, (*relocations)[i],
                          ManifestReader::element("relocations", i), record))
        return false;
      manifest.relocations.push_back(std::move(record));
    }
  return true;
}
