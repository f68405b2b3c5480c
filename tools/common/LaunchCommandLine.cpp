//===- LaunchCommandLine.cpp - The launchers' shared front end -----------===//
//
// Flag parsing, loading and checking every argument against the kernel's
// parameters (count, kind, type, dtype, rank and static extents), the launch
// on the selected device through launchKernel (repeated and timed on
// request: --repeat, --time) and the DIR/arg<k>.npy outputs.
//
//===----------------------------------------------------------------------===//

#include "LaunchCommandLine.h"

#include "nabla/Support/Limits.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sys/stat.h>

using namespace nabla::runtime;
using nabla::kMaxDynamicSharedMemory;
using nabla::kMaxGridExtent;
using nabla::kMaxLaunchRepeat;
using nabla::kMaxWorkgroupExtent;

/// Parses "X[,Y[,Z]]" into `dim`; all extents must be in [1, max].
static bool parseDim3(const std::string &text, Dim3 &dim, int64_t max) {
  uint32_t values[3] = {1, 1, 1};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno || v == 0 || v > uint64_t(max) ||
        item[0] == '-')
      return false;
    values[i] = static_cast<uint32_t>(v);
    if (comma == std::string::npos) {
      dim = {values[0], values[1], values[2]};
      return true;
    }
    start = comma + 1;
  }
  return false;
}

const char *nabla::runtime::launchFlagsHelp() {
  return "  --kernel=NAME          kernel to launch (required)\n"
         "  --grid=X[,Y,Z]         number of workgroups (required)\n"
         "  --block=X[,Y,Z]        workgroup size (required)\n"
         "  --arg=SPEC             one per kernel parameter, in order: "
         "PATH.npy, f32:V, f64:V, i8:V, i16:V, i32:V, i64:V, index:V, or "
         "null for a buffer the kernel tests for null\n"
         "  --reloc=KEY=FILE.npy   contents of a relocated host object\n"
         "  --target=vulkan|cuda|hip  back end (default $NABLA_TARGET, else "
         "vulkan)\n"
         "  --device=N             device index (default $NABLA_DEVICE, else "
         "the preferred one: a GPU before lavapipe)\n"
         "  --out=DIR              where arg<k>.npy are written (default .)\n"
         "  --timeout=SECONDS      give up waiting for the device (and for the "
         "driver creating a pipeline) after this long (default 60)\n"
         "  --print                print every buffer after the launch\n"
         "  --repeat=N             launch N times on the same device objects, "
         "each from the same inputs (default 1, at most 100000)\n"
         "  --time[=text|json]     print the kernel's device-measured time "
         "(min/median/max over the repeats, transfers excluded) and the "
         "transfer times; json: one line\n"
         "  --dynamic-shared-memory=BYTES  dynamic shared memory of the "
         "launch (extern __shared__; CUDA's third launch parameter)\n"
         "  --max-tape-bytes=N     the most bytes of a gradient kernel's "
         "global-memory tape, which the launch allocates (default a quarter "
         "of the device's memory where the driver reports it, else 1 GiB)\n";
}

bool nabla::runtime::parseLaunchFlags(int argc, char **argv,
                                      LaunchOptions &options,
                                      std::vector<std::string> &positional,
                                      std::vector<std::string> &unknown,
                                      std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag, std::string &out) {
      std::string prefix = std::string(flag) + "=";
      if (arg.rfind(prefix, 0) != 0)
        return false;
      out = arg.substr(prefix.size());
      return true;
    };
    std::string v;
    if (value("--kernel", v)) {
      options.kernel = v;
    } else if (value("--grid", v)) {
      if (!parseDim3(v, options.grid, kMaxGridExtent)) {
        error = "malformed --grid '" + v + "' (expected X[,Y,Z], each 1 to " +
                std::to_string(kMaxGridExtent) + ")";
        return false;
      }
      options.hasGrid = true;
    } else if (value("--block", v)) {
      if (!parseDim3(v, options.block, kMaxWorkgroupExtent)) {
        error = "malformed --block '" + v + "' (expected X[,Y,Z], each 1 to " +
                std::to_string(kMaxWorkgroupExtent) + ")";
        return false;
      }
      options.hasBlock = true;
    } else if (value("--dynamic-shared-memory", v)) {
      char *end = nullptr;
      errno = 0;
      long long bytes = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || errno || bytes < 0 ||
          bytes > kMaxDynamicSharedMemory) {
        error = "malformed --dynamic-shared-memory '" + v +
                "' (expected bytes, 0 to 2^31)";
        return false;
      }
      options.dynamicSharedMemory = bytes;
    } else if (value("--max-tape-bytes", v)) {
      char *end = nullptr;
      errno = 0;
      unsigned long long bytes = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v.front() == '-' || *end || errno || bytes == 0) {
        error = "malformed --max-tape-bytes '" + v +
                "' (expected a positive number of bytes)";
        return false;
      }
      options.maxTapeBytes = bytes;
    } else if (value("--arg", v)) {
      options.args.push_back(v);
    } else if (value("--reloc", v)) {
      if (v.find('=') == std::string::npos || v.front() == '=') {
        error = "malformed --reloc '" + v + "' (expected KEY=FILE.npy)";
        return false;
      }
      options.relocs.push_back(v);
    } else if (value("--out", v)) {
      options.outDir = v;
    } else if (value("--target", v)) {
      if (v != "vulkan" && v != "cuda" && v != "hip") {
        error = "unknown --target '" + v + "' (expected vulkan, cuda or hip)";
        return false;
      }
      options.target = v;
    } else if (value("--device", v)) {
      char *end = nullptr;
      errno = 0;
      long index = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno || index < 0 || index > 4096) {
        error = "malformed --device '" + v + "'";
        return false;
      }
      options.device = static_cast<int>(index);
    } else if (value("--timeout", v)) {
      char *end = nullptr;
      errno = 0;
      long seconds = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno || seconds <= 0 ||
          seconds > 86400 * 365) {
        error = "malformed --timeout '" + v + "'";
        return false;
      }
      options.timeoutSeconds = static_cast<unsigned>(seconds);
    } else if (value("--repeat", v)) {
      char *end = nullptr;
      errno = 0;
      long long count = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno || count < 1 ||
          count > kMaxLaunchRepeat) {
        error = "malformed --repeat '" + v + "' (expected 1 to " +
                std::to_string(kMaxLaunchRepeat) + ")";
        return false;
      }
      options.repeat = static_cast<unsigned>(count);
    } else if (arg == "--time") {
      options.timeFormat = "text";
    } else if (value("--time", v)) {
      if (v != "text" && v != "json") {
        error = "malformed --time=" + v +
                " (expected --time, --time=text or "
                "--time=json)";
        return false;
      }
      options.timeFormat = v;
    } else if (arg == "--print") {
      options.print = true;
    } else if (arg.rfind("--", 0) == 0) {
      unknown.push_back(arg);
    } else {
      positional.push_back(arg);
    }
  }
  return true;
}

std::string nabla::runtime::resolveTarget(const LaunchOptions &options) {
  if (!options.target.empty())
    return options.target;
  if (const char *env = std::getenv("NABLA_TARGET"))
    if (*env)
      return env;
  return "vulkan";
}

/// Byte size of a scalar MLIR type, or 0 if it is not a parameter scalar.
static unsigned scalarSize(const std::string &type) {
  if (type == "i8")
    return 1;
  if (type == "i16")
    return 2;
  if (type == "f32" || type == "i32")
    return 4;
  if (type == "f64" || type == "i64" || type == "index")
    return 8;
  return 0;
}

bool nabla::runtime::parseScalarValue(const std::string &spec,
                                      unsigned char *bytes, unsigned &size,
                                      std::string &error) {
  size_t colon = spec.find(':');
  std::string type = spec.substr(0, colon);
  std::string text = colon == std::string::npos ? "" : spec.substr(colon + 1);
  size = scalarSize(type);
  if (size == 0) {
    error = "'" + spec + "' names no scalar type (f32, f64, i8, i16, i32, "
            "i64, index)";
    return false;
  }
  char *end = nullptr;
  errno = 0;
  if (type == "f32" || type == "f64") {
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE) {
      error = "malformed value in '" + spec + "'";
      return false;
    }
    if (type == "f32") {
      float f = static_cast<float>(v);
      std::memcpy(bytes, &f, 4);
    } else {
      std::memcpy(bytes, &v, 8);
    }
    return true;
  }
  long long v = std::strtoll(text.c_str(), &end, 0);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    error = "malformed value in '" + spec + "'";
    return false;
  }
  if (type == "i8" || type == "i16") {
    // Signless: a signed or an unsigned value of the width (`char c` and
    // `unsigned char c` alike).
    int bits = type == "i8" ? 8 : 16;
    if (v < -(1ll << (bits - 1)) || v >= (1ll << bits)) {
      error = "value in '" + spec + "' does not fit " + type;
      return false;
    }
    uint16_t i = static_cast<uint16_t>(v);
    std::memcpy(bytes, &i, bits / 8);
  } else if (type == "i32") {
    if (v < INT32_MIN || v > INT32_MAX) {
      error = "value in '" + spec + "' does not fit i32";
      return false;
    }
    int32_t i = static_cast<int32_t>(v);
    std::memcpy(bytes, &i, 4);
  } else {
    int64_t i = v;
    std::memcpy(bytes, &i, 8);
  }
  return true;
}

/// Fills `param` from a TYPE:VALUE spec.
static bool loadScalar(const std::string &spec, HostParam &param,
                       std::string &error) {
  std::string type = spec.substr(0, spec.find(':'));
  const std::string &expected = param.info->type;
  if (type != expected) {
    error = "parameter #" + std::to_string(param.info->index) + " is " +
            expected + ", got '" + spec + "'";
    return false;
  }
  return parseScalarValue(spec, param.scalar, param.scalarBytes, error);
}

/// Reads `spec` into `array` and checks it against a buffer of `element`
/// type and `shape` (-1: any extent); `what` names the buffer in errors.
static bool loadArray(const std::string &spec, const std::string &what,
                      const std::string &element,
                      const std::vector<int64_t> &shape, NpyArray &array,
                      std::string &error) {
  if (!readNpy(spec, array, error))
    return false;
  std::string want = dtypeForElementType(element);
  if (want.empty()) {
    error = what + " has element type " + element +
            ", which .npy buffers do not support";
    return false;
  }
  // A 1-D byte buffer (an object raised as bytes because the kernel
  // accesses it as several types, a pointer nothing reads) takes any array:
  // the kernel sees its bytes; the output keeps the array's dtype and shape
  // (restoreByteView).
  if (element == "i8" && shape.size() == 1 && shape[0] < 0 &&
      array.elementSize() > 1) {
    array.viewedDtype = array.dtype;
    array.viewedShape = array.shape;
    array.shape = {int64_t(array.data.size())};
    array.dtype = "u1";
    return true;
  }
  if (!dtypeMatchesElementType(array.dtype, element)) {
    error =
        what + " needs dtype " + want + ", '" + spec + "' has " + array.dtype;
    return false;
  }
  if (array.shape.size() != shape.size()) {
    error = what + " has rank " + std::to_string(shape.size()) + ", '" + spec +
            "' has rank " + std::to_string(array.shape.size());
    return false;
  }
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] >= 0 && shape[d] != array.shape[d]) {
      error = what + " needs extent " + std::to_string(shape[d]) +
              " in dimension " + std::to_string(d) + ", '" + spec + "' has " +
              std::to_string(array.shape[d]);
      return false;
    }
  return true;
}

/// Fills `param` from a .npy spec and checks dtype, rank and extents.
static bool loadBuffer(const std::string &spec, HostParam &param,
                       std::string &error) {
  const ParamInfo &info = *param.info;
  std::string what =
      info.relocKey.empty()
          ? "parameter #" + std::to_string(info.index) + " (" + info.type + ")"
          : "relocation record '" + info.relocKey + "' (" + info.type + ")";
  return loadArray(spec, what, info.element, info.shape, param.buffer, error);
}

/// The file name part for a record's key, as reloc-lower's symbols spell it.
static std::string keyFileName(const std::string &key) {
  std::string name;
  for (char c : key)
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return name;
}

/// Prints one element of a buffer of `dtype` stored at `p`.
static void printElement(const std::string &dtype, const uint8_t *p) {
  auto load = [&](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  if (dtype == "f2") {
    // IEEE half: sign, 5-bit exponent, 10-bit fraction.
    uint16_t h = load(uint16_t());
    int exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
    double magnitude = exponent == 0 ? std::ldexp(fraction, -24)
                       : exponent == 31
                           ? (fraction ? NAN : INFINITY)
                           : std::ldexp(fraction + 1024, exponent - 25);
    std::printf("%g", (h & 0x8000) ? -magnitude : magnitude);
  } else if (dtype == "f4") {
    std::printf("%g", load(float()));
  } else if (dtype == "f8") {
    std::printf("%g", load(double()));
  } else if (dtype == "b1") {
    std::printf("%s", *p ? "True" : "False");
  } else if (dtype == "i1") {
    std::printf("%d", int(load(int8_t())));
  } else if (dtype == "u1") {
    std::printf("%u", unsigned(*p));
  } else if (dtype == "i2") {
    std::printf("%d", int(load(int16_t())));
  } else if (dtype == "u2") {
    std::printf("%u", unsigned(load(uint16_t())));
  } else if (dtype == "i4") {
    std::printf("%d", load(int32_t()));
  } else if (dtype == "u4") {
    std::printf("%u", load(uint32_t()));
  } else if (dtype == "u8") {
    std::printf("%" PRIu64, load(uint64_t()));
  } else {
    std::printf("%" PRId64, load(int64_t()));
  }
}

/// Prints a buffer's values (all of them up to 64, else the first 64).
static void printBuffer(unsigned index, const NpyArray &array) {
  std::printf("arg%u = [", index);
  int64_t n = array.numElements(), shown = n < 64 ? n : 64;
  for (int64_t i = 0; i < shown; ++i) {
    const uint8_t *p = array.data.data() + i * array.elementSize();
    if (i)
      std::printf(", ");
    printElement(array.dtype, p);
  }
  std::printf("%s]\n", shown < n ? ", ..." : "");
}

/// True if the manifest records `key` as a constant object.
static bool isConstantRecord(const Manifest &manifest, const std::string &key) {
  for (const RelocationInfo &record : manifest.relocations)
    if (record.key == key)
      return record.constant;
  return false;
}

namespace {

/// --reloc KEY=FILE.npy by record key.
using RelocFiles = std::map<std::string, std::string>;

/// The object of `kernel`'s module for `device`'s back end; "" or an error.
std::string
selectImage(const Device &device, const Manifest &manifest,
            const KernelInfo &kernel,
            const std::map<std::string, std::vector<uint8_t>> &artifacts,
            const LaunchOptions &options, const std::vector<uint8_t> *&image,
            std::string &imageKind) {
  std::string backend = device.info().backend;
  std::vector<std::string> wanted;
  if (backend == "vulkan")
    wanted = {"spv"};
  else if (backend == "cuda")
    wanted = {"cubin", "ptx"};
  else
    wanted = {"hsaco"};
  for (const std::string &ext : wanted) {
    auto it = artifacts.find(kernel.module + "." + ext);
    if (it != artifacts.end()) {
      image = &it->second;
      imageKind = ext;
      break;
    }
  }
  if (!image)
    return "no " + wanted.front() + " object for module '" + kernel.module +
           "' (the kernels were compiled for '" + manifest.target +
           "', which the " + backend + " back end cannot run)";
  if (backend == "vulkan" && kernel.workgroupSize) {
    const std::vector<int64_t> &wg = *kernel.workgroupSize;
    Dim3 b = options.block;
    if (wg.size() != 3 || wg[0] != b.x || wg[1] != b.y || wg[2] != b.z)
      return "kernel '" + kernel.name + "' was compiled for workgroup size " +
             std::to_string(wg.size() > 0 ? wg[0] : 0) + "," +
             std::to_string(wg.size() > 1 ? wg[1] : 0) + "," +
             std::to_string(wg.size() > 2 ? wg[2] : 0) +
             "; launch with that --block or recompile with --block=" +
             std::to_string(b.x) + "," + std::to_string(b.y) + "," +
             std::to_string(b.z);
  }
  std::string error;
  if (!checkDynamicSharedMemory(kernel, options.dynamicSharedMemory, error))
    return error;
  return "";
}

/// Every --reloc must name a record these kernels receive at load time
/// (patch or table).
std::string collectRelocFiles(const Manifest &manifest,
                              const LaunchOptions &options, RelocFiles &files) {
  for (const std::string &reloc : options.relocs) {
    std::string key = reloc.substr(0, reloc.find('='));
    const RelocationInfo *record = nullptr;
    for (const RelocationInfo &candidate : manifest.relocations)
      if (candidate.key == key)
        record = &candidate;
    if (!record)
      return "--reloc names '" + key +
             "', which is not a relocation record of these kernels";
    if (record->strategy != "patch" && record->strategy != "table")
      return "--reloc names '" + key + "', which was compiled with the " +
             record->strategy +
             " strategy: its contents are fixed at compile time or resolved "
             "by the frontend, not by the loader";
    files[key] = reloc.substr(reloc.find('=') + 1);
  }
  return "";
}

/// One argument per parameter of the kernel's own; the table strategy's
/// parameters come from --reloc.
std::string loadParams(const KernelInfo &kernel, const LaunchOptions &options,
                       const RelocFiles &relocFiles,
                       std::vector<HostParam> &params) {
  // The kernel's own parameters take one argument each; relocation tables
  // come from --reloc, presence flags from the optional buffers' arguments.
  auto isOwn = [](const ParamInfo &param) { return param.isOwn(); };
  auto isOptional = [&](size_t k) {
    return std::any_of(kernel.params.begin(), kernel.params.end(),
                       [&](const ParamInfo &flag) {
                         return flag.presenceOf == static_cast<int>(k);
                       });
  };
  size_t ownParams =
      std::count_if(kernel.params.begin(), kernel.params.end(), isOwn);
  if (options.args.size() != ownParams) {
    std::string signature;
    for (const ParamInfo &param : kernel.params)
      if (isOwn(param))
        signature += (signature.empty() ? "" : ", ") + param.type +
                     (isOptional(param.index) ? " or null" : "");
    return "kernel '" + kernel.name + "' takes " + std::to_string(ownParams) +
           " arguments, got " + std::to_string(options.args.size()) + ": " +
           kernel.name + "(" + signature +
           ") (pass one --arg per parameter: a .npy file for a memref, "
           "TYPE:VALUE for a scalar, null for an optional buffer)";
  }
  params.assign(kernel.params.size(), HostParam());
  size_t nextArg = 0;
  std::string error;
  for (size_t k = 0; k < params.size(); ++k) {
    const ParamInfo &info = kernel.params[k];
    params[k].info = &info;
    if (info.presenceOf >= 0 || info.dynamicSharedBytes || info.tape)
      continue; // set below, or by the launch
    if (!info.relocKey.empty()) {
      auto file = relocFiles.find(info.relocKey);
      if (file == relocFiles.end())
        return "kernel '" + kernel.name + "' reads the relocated object '" +
               info.relocKey + "': pass --reloc=" + info.relocKey + "=FILE.npy";
      if (!loadBuffer(file->second, params[k], error))
        return error;
      continue;
    }
    const std::string &spec = options.args[nextArg++];
    bool isScalarSpec = spec.find(':') != std::string::npos &&
                        scalarSize(spec.substr(0, spec.find(':'))) != 0;
    if (spec == "null") {
      if (!info.isBuffer || !isOptional(k))
        return "parameter #" + std::to_string(k) + " (" + info.type +
               ") cannot be null: only a buffer the kernel tests for null "
               "(`if (p != NULL)`) is optional";
      // A placeholder: no elements (the runtime binds a few bytes), of the
      // parameter's rank.
      params[k].null = true;
      params[k].buffer.shape.assign(std::max<size_t>(info.shape.size(), 1),
                                    0);
      continue;
    }
    if (info.isBuffer) {
      if (isScalarSpec)
        return "parameter #" + std::to_string(k) + " is a buffer (" +
               info.type + "), got the scalar '" + spec + "'";
      if (!loadBuffer(spec, params[k], error))
        return error;
    } else {
      if (!isScalarSpec)
        return "parameter #" + std::to_string(k) + " is a scalar (" +
               info.type + "), got '" + spec + "'";
      if (!loadScalar(spec, params[k], error))
        return error;
    }
  }
  // Each presence flag: 0 for a null buffer, else 1.
  for (HostParam &flag : params)
    if (flag.info->presenceOf >= 0) {
      int32_t present = params[flag.info->presenceOf].null ? 0 : 1;
      std::memcpy(flag.scalar, &present, sizeof(present));
      flag.scalarBytes = sizeof(present);
    }
  return "";
}

/// The objects of the patch records of `kernel`'s module (`objects` holds
/// them; `patches` points into it).
std::string loadPatches(const Manifest &manifest, const KernelInfo &kernel,
                        const RelocFiles &relocFiles,
                        std::vector<NpyArray> &objects,
                        std::vector<PatchObject> &patches) {
  std::vector<const RelocationInfo *> patched;
  for (const RelocationInfo &record : manifest.relocations) {
    if (record.module != kernel.module)
      continue;
    if (record.strategy == "defer")
      return "relocation record '" + record.key +
             "' was compiled with the defer strategy: the frontend resolves "
             "@" +
             record.symbol + " itself, so this loader cannot launch '" +
             kernel.name + "'";
    if (record.strategy == "patch")
      patched.push_back(&record);
  }
  objects.assign(patched.size(), NpyArray());
  for (size_t i = 0; i < patched.size(); ++i) {
    const RelocationInfo &record = *patched[i];
    auto file = relocFiles.find(record.key);
    if (file == relocFiles.end())
      return "module '" + kernel.module + "' reads the relocated object '" +
             record.key + "': pass --reloc=" + record.key + "=FILE.npy";
    std::string what =
        "relocation record '" + record.key + "' (" + record.type + ")";
    std::string error;
    bool loaded = record.pointer ? readNpy(file->second, objects[i], error)
                                 : loadArray(file->second, what, record.element,
                                             record.shape, objects[i], error);
    if (!loaded)
      return error;
    patches.push_back({record.key, record.symbol, record.pointer,
                       record.constant, &objects[i]});
  }
  return "";
}

/// DIR/arg<k>.npy for every buffer, DIR/reloc-<key>.npy for every writable
/// relocated object (printed too with --print).
std::string writeOutputs(const Manifest &manifest, const LaunchOptions &options,
                         const std::vector<PatchObject> &patches,
                         std::vector<HostParam> &params) {
  ::mkdir(options.outDir.c_str(), 0755);
  std::string error;
  auto writeObject = [&](const std::string &key, const NpyArray &object) {
    return writeNpy(options.outDir + "/reloc-" + keyFileName(key) + ".npy",
                    object, error);
  };
  for (const PatchObject &patch : patches)
    if (!patch.constant && !writeObject(patch.key, *patch.object))
      return error;
  for (HostParam &param : params) {
    if (!param.info->isBuffer || param.null)
      continue;
    if (!param.info->relocKey.empty()) {
      if (!isConstantRecord(manifest, param.info->relocKey) &&
          !writeObject(param.info->relocKey, param.buffer))
        return error;
      continue;
    }
    std::string path =
        options.outDir + "/arg" + std::to_string(param.info->index) + ".npy";
    if (!param.buffer.viewedDtype.empty()) {
      param.buffer.dtype = param.buffer.viewedDtype;
      param.buffer.shape = param.buffer.viewedShape;
    }
    if (!writeNpy(path, param.buffer, error))
      return error;
    if (options.print)
      printBuffer(param.info->index, param.buffer);
  }
  return "";
}

} // namespace

int nabla::runtime::runKernel(
    Device &device, const Manifest &manifest,
    const std::map<std::string, std::vector<uint8_t>> &artifacts,
    const LaunchOptions &options) {
  auto fail = [](const std::string &message) {
    std::cerr << "error: " << message << "\n";
    return 1;
  };
  const KernelInfo *kernel = manifest.findKernel(options.kernel);
  if (!kernel) {
    std::string names;
    for (const KernelInfo &k : manifest.kernels)
      names += (names.empty() ? "" : ", ") + k.name;
    return fail("unknown kernel '" + options.kernel + "' (kernels: " + names +
                ")");
  }
  LaunchSpec spec;
  RelocFiles relocFiles;
  std::vector<HostParam> params;
  std::vector<NpyArray> patchObjects;
  for (const std::string &problem :
       {selectImage(device, manifest, *kernel, artifacts, options, spec.image,
                    spec.imageKind),
        collectRelocFiles(manifest, options, relocFiles)})
    if (!problem.empty())
      return fail(problem);
  if (std::string problem = loadParams(*kernel, options, relocFiles, params);
      !problem.empty())
    return fail(problem);
  if (std::string problem = loadPatches(manifest, *kernel, relocFiles,
                                        patchObjects, spec.patches);
      !problem.empty())
    return fail(problem);

  spec.kernel = kernel;
  if (auto printf = manifest.printf.find(kernel->module);
      printf != manifest.printf.end())
    spec.printf = &printf->second;
  if (auto globals = manifest.globals.find(kernel->module);
      globals != manifest.globals.end())
    spec.globals = &globals->second;
  spec.grid = options.grid;
  spec.block = options.block;
  spec.dynamicSharedMemory =
      static_cast<uint32_t>(std::max<int64_t>(0, options.dynamicSharedMemory));
  spec.maxTapeBytes = options.maxTapeBytes;
  spec.repeat = options.repeat;
  LaunchTiming timing;
  if (!options.timeFormat.empty())
    spec.timing = &timing;
  device.setTimeout(options.timeoutSeconds);
  device.setEndProcessOnTimeout(true);
  auto launchStart = std::chrono::steady_clock::now();
  if (Error e = launchKernel(device, spec, params))
    return fail(e.message());
  timing.launchWallNs = elapsedNs(launchStart);

  if (std::string problem =
          writeOutputs(manifest, options, spec.patches, params);
      !problem.empty())
    return fail(problem);
  if (!options.timeFormat.empty()) {
    TimingSubject subject{kernel->name, device.info().backend,
                          device.info().name};
    std::string text = options.timeFormat == "json"
                           ? formatTimingJson(subject, timing) + "\n"
                           : formatTimingText(subject, timing);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
  return 0;
}
