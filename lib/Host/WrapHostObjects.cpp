//===- WrapHostObjects.cpp - Launch ABI in SPIR-V host objects ------------===//
//
// Prefixes every SPIR-V object that host code launches from with the Nabla
// host-object header (nabla/Runtime/HostObject.h): the parameter list of each
// launched kernel, taken from the launches' operand types, which are the
// kernels' parameter types (gpu.launch_func verifies them while the kernels
// are still gpu.func ops). Objects of other targets stay as they are: CUDA
// and HIP take the flat LLVM argument list directly.
//
//===----------------------------------------------------------------------===//

#include "nabla/Host/Passes.h"
#include "nabla/Runtime/HostObject.h"
#include "nabla/Support/ModuleGlobals.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace nabla {
#define GEN_PASS_DEF_WRAPHOSTOBJECTS
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream(text) << type;
  return text;
}

/// True if a SPIR-V kernel parameter can hold values of `type` (a scalar, or
/// an element of a buffer).
bool isBindableScalar(Type type) {
  return type.isIndex() || type.isIntOrFloat();
}

/// The header entry of one launch argument, or failure after a diagnostic.
FailureOr<llvm::json::Object> describeArgument(gpu::LaunchFuncOp launch,
                                               unsigned index, Type type) {
  if (auto memref = dyn_cast<MemRefType>(type)) {
    if (!isBindableScalar(memref.getElementType()))
      return launch.emitOpError("argument #")
             << index << " has type " << type
             << ", whose elements a SPIR-V kernel cannot bind (use a memref "
                "of integers, floats or index)";
    llvm::json::Array shape;
    for (int64_t extent : memref.getShape())
      shape.push_back(ShapedType::isDynamic(extent) ? int64_t(-1) : extent);
    llvm::json::Object param{{"kind", "buffer"},
                             {"element", typeName(memref.getElementType())},
                             {"shape", std::move(shape)}};
    if (!memref.getLayout().isIdentity()) {
      // The kernel applies a static layout itself, to the whole buffer from
      // the descriptor's aligned pointer on.
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(memref.getStridesAndOffset(strides, offset)) ||
          ShapedType::isDynamic(offset) ||
          llvm::any_of(strides, ShapedType::isDynamic))
        return launch.emitOpError("argument #")
               << index << " has type " << type
               << ", whose layout a SPIR-V kernel cannot receive (only the "
                  "identity layout or static strides and offset)";
      param["layout"] = "strided";
    }
    return param;
  }
  if (isBindableScalar(type))
    return llvm::json::Object{{"kind", "scalar"}, {"type", typeName(type)}};
  return launch.emitOpError("argument #")
         << index << " has type " << type
         << ", which a SPIR-V kernel cannot receive (use a memref, an "
            "integer, a float or index)";
}

bool isSPIRVObject(gpu::ObjectAttr object) {
  return isa<spirv::TargetEnvAttr>(object.getTarget()) &&
         object.getFormat() == gpu::CompilationTarget::Binary;
}

struct WrapHostObjects
    : public nabla::impl::WrapHostObjectsBase<WrapHostObjects> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Binary name -> kernel name -> parameters (sorted: deterministic).
    std::map<std::string, std::map<std::string, llvm::json::Array>> launched;
    std::map<std::string, std::map<std::string, SmallVector<Type>>> types;
    bool failed = false;
    module.walk([&](gpu::LaunchFuncOp launch) {
      std::string binary = launch.getKernelModuleName().str();
      std::string kernel = launch.getKernelName().str();
      SmallVector<Type> operandTypes(launch.getKernelOperands().getTypes());
      auto &seen = types[binary];
      if (auto it = seen.find(kernel); it != seen.end()) {
        if (it->second != operandTypes) {
          launch.emitOpError("launches @")
              << binary << "::@" << kernel
              << " with other argument types than an earlier launch";
          failed = true;
        }
        return;
      }
      seen[kernel] = operandTypes;
      llvm::json::Array params;
      for (auto [index, type] : llvm::enumerate(operandTypes)) {
        FailureOr<llvm::json::Object> param =
            describeArgument(launch, index, type);
        if (mlir::failed(param)) {
          failed = true;
          return;
        }
        params.push_back(std::move(*param));
      }
      launched[binary][kernel] = std::move(params);
    });
    if (failed)
      return signalPassFailure();

    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      auto it = launched.find(binary.getName().str());
      if (it == launched.end())
        continue;
      // Kernels that print, and the formats of their records; the module
      // globals the loader keeps in buffers.
      DictionaryAttr printf, globals;
      for (Attribute attr : binary.getObjects())
        if (DictionaryAttr properties =
                cast<gpu::ObjectAttr>(attr).getProperties()) {
          if (auto found = properties.getAs<DictionaryAttr>("nabla.printf"))
            printf = found;
          if (auto found = properties.getAs<DictionaryAttr>(
                  nabla::kModuleGlobalsAttrName))
            globals = found;
        }
      auto printing = [&](StringRef kernel) {
        auto names = printf ? printf.getAs<ArrayAttr>("kernels") : nullptr;
        return names &&
               llvm::is_contained(names.getAsValueRange<StringAttr>(), kernel);
      };
      llvm::json::Array kernels;
      for (auto &[name, params] : it->second) {
        llvm::json::Object kernel{{"name", name},
                                  {"params", std::move(params)}};
        if (printing(name))
          kernel["printf"] = true;
        kernels.push_back(std::move(kernel));
      }
      llvm::json::Object root{{"kernels", std::move(kernels)}};
      if (printf) {
        llvm::json::Array formats;
        if (auto list = printf.getAs<ArrayAttr>("formats"))
          for (StringRef format : list.getAsValueRange<StringAttr>())
            formats.push_back(format.str());
        int64_t capacity = 0;
        if (auto words = printf.getAs<IntegerAttr>("capacity"))
          capacity = words.getInt();
        root["printf"] = llvm::json::Object{{"formats", std::move(formats)},
                                            {"capacity", capacity}};
      }
      if (globals)
        root["module_globals"] = nabla::describeModuleGlobals(globals);
      std::string description;
      llvm::raw_string_ostream(description)
          << llvm::json::Value(std::move(root));

      SmallVector<Attribute> objects;
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        StringRef bytes = object.getObject().getValue();
        if (!isSPIRVObject(object) ||
            bytes.starts_with(StringRef(nabla::runtime::kHostObjectMagic, 8))) {
          objects.push_back(object);
          continue;
        }
        objects.push_back(gpu::ObjectAttr::get(
            &getContext(), object.getTarget(), object.getFormat(),
            StringAttr::get(&getContext(), wrap(description, bytes)),
            object.getProperties(), object.getKernels()));
      }
      binary.setObjectsAttr(ArrayAttr::get(&getContext(), objects));
    }
  }

  /// The host object: header, description, padding, SPIR-V words.
  static std::string wrap(StringRef description, StringRef spirv) {
    std::string object(nabla::runtime::kHostObjectMagic, 8);
    auto appendWord = [&](uint32_t word) {
      for (int shift = 0; shift < 32; shift += 8)
        object.push_back(static_cast<char>((word >> shift) & 0xff));
    };
    appendWord(nabla::runtime::kHostObjectVersion);
    appendWord(static_cast<uint32_t>(description.size()));
    object += description.str();
    object.resize((object.size() + 3) / 4 * 4, '\0');
    object += spirv.str();
    return object;
  }
};

} // namespace
