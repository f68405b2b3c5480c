//===- SPIRVToBinary.cpp - Package SPIR-V modules as gpu.binary -----------===//
//
// The last step of the SPIR-V and Metal pipelines: serialize the spirv.module
// inside each gpu.module, validate it with SPIRV-Tools (never hand a driver
// an invalid module), optionally cross-compile it to MSL with SPIRV-Cross's C
// API, and replace the gpu.module by a gpu.binary holding the result.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "nabla/Support/ModuleGlobals.h"
#include "nabla/Support/OptionNames.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Target/SPIRV/Serialization.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

#include "spirv-tools/libspirv.hpp"
#include "spirv_cross/spirv_cross_c.h"

namespace nabla {
#define GEN_PASS_DEF_SPIRVTOBINARY
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// Owns a SPIRV-Cross context and collects its error messages.
struct CrossContext {
  spvc_context context = nullptr;
  std::string errors;

  CrossContext() {
    if (spvc_context_create(&context) != SPVC_SUCCESS)
      return;
    spvc_context_set_error_callback(
        context,
        [](void *userData, const char *message) {
          auto *self = static_cast<CrossContext *>(userData);
          self->errors += message;
        },
        this);
  }
  ~CrossContext() {
    if (context)
      spvc_context_destroy(context);
  }
};

/// Strips the preamble SPIRV-Cross puts on every translation unit.
std::string stripPreamble(StringRef source) {
  std::string body;
  for (StringRef line : llvm::split(source, '\n')) {
    if (line.starts_with("#include") || line.starts_with("#pragma") ||
        line.starts_with("using namespace metal;"))
      continue;
    body += line.str();
    body += '\n';
  }
  return body;
}

/// SPIRV-Cross 2021.01 (Debian 12) prints OpAtomicFAddEXT as the GLSL
/// builtin `atomicAdd(x, v)`, which is not MSL. Rewrites each such call into
/// MSL 3.0's device-memory float atomic. Integer atomics are already printed
/// as atomic_fetch_*_explicit and never use this spelling.
std::string rewriteFloatAtomics(StringRef source) {
  std::string out;
  StringRef rest = source;
  constexpr StringLiteral call = "atomicAdd(";
  while (true) {
    size_t at = rest.find(call);
    if (at == StringRef::npos)
      break;
    out += rest.take_front(at).str();
    rest = rest.drop_front(at + call.size());
    // Split the two arguments at the top-level comma.
    int depth = 0;
    size_t comma = StringRef::npos, end = StringRef::npos;
    for (size_t i = 0; i < rest.size(); ++i) {
      char c = rest[i];
      if (c == '(' || c == '[')
        ++depth;
      else if ((c == ')' || c == ']') && depth > 0)
        --depth;
      else if (c == ',' && depth == 0 && comma == StringRef::npos)
        comma = i;
      else if (c == ')' && depth == 0) {
        end = i;
        break;
      }
    }
    if (comma == StringRef::npos || end == StringRef::npos) {
      out += call.str();
      continue;
    }
    StringRef target = rest.take_front(comma).trim();
    StringRef value = rest.slice(comma + 1, end).trim();
    out += "atomic_fetch_add_explicit((device atomic_float *)&(" +
           target.str() + "), " + value.str() + ", memory_order_relaxed)";
    rest = rest.drop_front(end + 1);
  }
  out += rest.str();
  return out;
}

/// Decorates the composite of the workgroup-size specialization constants
/// (nabla::specializeWorkgroupSize) BuiltIn WorkgroupSize, which MLIR's
/// serializer does not emit for a spirv.SpecConstantComposite. The
/// decoration goes after the module's last annotation.
void decorateWorkgroupSizeBuiltin(SmallVectorImpl<uint32_t> &words) {
  constexpr uint32_t opDecorate = 71, opSpecConstantComposite = 51;
  constexpr uint32_t decorationSpecId = 1, decorationBuiltIn = 11;
  constexpr uint32_t builtInWorkgroupSize = 25;
  llvm::DenseMap<uint32_t, uint32_t> specIds;
  size_t lastAnnotationEnd = 0;
  std::optional<uint32_t> composite;
  for (size_t at = 5; at < words.size();) {
    uint32_t opcode = words[at] & 0xffff, count = words[at] >> 16;
    if (count == 0 || at + count > words.size())
      return;
    if (opcode == opDecorate && count >= 4 && words[at + 2] == decorationSpecId)
      specIds[words[at + 1]] = words[at + 3];
    // OpDecorate, OpMemberDecorate, decoration groups, OpDecorateId and
    // OpDecorateString form the annotation section.
    if ((opcode >= 71 && opcode <= 75) || opcode == 332 || opcode == 5632)
      lastAnnotationEnd = at + count;
    if (opcode == opSpecConstantComposite && count == 6) {
      bool matches = true;
      for (unsigned d = 0; d < 3; ++d) {
        auto it = specIds.find(words[at + 3 + d]);
        matches &= it != specIds.end() &&
                   it->second == nabla::kWorkgroupSizeSpecId + d;
      }
      if (matches)
        composite = words[at + 2];
    }
    at += count;
  }
  if (!composite || !lastAnnotationEnd)
    return;
  uint32_t decoration[] = {(4u << 16) | opDecorate, *composite,
                           decorationBuiltIn, builtInWorkgroupSize};
  words.insert(words.begin() + lastAnnotationEnd, std::begin(decoration),
               std::end(decoration));
}

struct SPIRVToBinary : public nabla::SuggestOptionNames<
                           nabla::impl::SPIRVToBinaryBase<SPIRVToBinary>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    if (format != "spirv" && format != "msl") {
      getOperation().emitError("unknown SPIR-V object format '")
          << format << "' (expected spirv or msl)";
      return signalPassFailure();
    }
    SmallVector<gpu::GPUModuleOp> modules;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      if (!module.getOps<spirv::ModuleOp>().empty())
        modules.push_back(module);
    });
    for (gpu::GPUModuleOp module : modules)
      if (failed(package(module)))
        return signalPassFailure();
  }

  /// spirv-update-vce misses requirements that SPIRV-Tools enforces: the
  /// subgroup built-ins need GroupNonUniform, a float atomic add on f64
  /// needs AtomicFloat64AddEXT and 64-bit integer atomics (emulated f64
  /// adds) Int64Atomics. Completes the module's triple.
  void addBuiltinCapabilities(spirv::ModuleOp spirvModule) {
    bool usesF64AtomicAdd = false;
    spirvModule.walk([&](spirv::EXTAtomicFAddOp op) {
      usesF64AtomicAdd |= op.getType().isF64();
    });
    bool uses64BitAtomics = false;
    spirvModule.walk([&](Operation *op) {
      if (op->getName().getStringRef().starts_with("spirv.Atomic") &&
          op->getNumResults() && op->getResult(0).getType().isInteger(64))
        uses64BitAtomics = true;
    });
    bool usesSubgroupBuiltins = false;
    spirvModule.walk([&](spirv::GlobalVariableOp variable) {
      std::optional<StringRef> builtin = variable.getBuiltIn();
      usesSubgroupBuiltins |=
          builtin && (*builtin == "SubgroupLocalInvocationId" ||
                      *builtin == "SubgroupSize" || *builtin == "SubgroupId" ||
                      *builtin == "NumSubgroups");
    });
    std::optional<spirv::VerCapExtAttr> triple = spirvModule.getVceTriple();
    if (!triple)
      return;
    SmallVector<spirv::Capability> capabilities(triple->getCapabilities());
    auto require = [&](bool needed, spirv::Capability capability) {
      if (needed && !llvm::is_contained(capabilities, capability))
        capabilities.push_back(capability);
    };
    size_t before = capabilities.size();
    require(usesSubgroupBuiltins, spirv::Capability::GroupNonUniform);
    require(usesF64AtomicAdd, spirv::Capability::AtomicFloat64AddEXT);
    require(uses64BitAtomics, spirv::Capability::Int64Atomics);
    if (capabilities.size() == before)
      return;
    SmallVector<spirv::Extension> extensions(triple->getExtensions());
    // GroupNonUniform exists from SPIR-V 1.3 on.
    spirv::Version version =
        std::max(triple->getVersion(), spirv::Version::V_1_3);
    spirvModule.setVceTripleAttr(spirv::VerCapExtAttr::get(
        version, capabilities, extensions, &getContext()));
  }

  LogicalResult package(gpu::GPUModuleOp module) {
    auto spirvModules = module.getOps<spirv::ModuleOp>();
    if (std::next(spirvModules.begin()) != spirvModules.end())
      return module.emitError("expected one spirv.module per gpu.module");
    spirv::ModuleOp spirvModule = *spirvModules.begin();
    addBuiltinCapabilities(spirvModule);

    SmallVector<uint32_t> words;
    spirv::SerializationOptions options;
    if (failed(spirv::serialize(spirvModule, words, options)))
      return module.emitError("SPIR-V serialization failed");
    decorateWorkgroupSizeBuiltin(words);
    if (failed(validate(module, words)))
      return failure();

    std::string object;
    gpu::CompilationTarget objectFormat = gpu::CompilationTarget::Binary;
    if (format == "spirv") {
      object.assign(reinterpret_cast<const char *>(words.data()),
                    words.size() * sizeof(uint32_t));
    } else {
      FailureOr<std::string> msl = compileToMSL(module, spirvModule, words);
      if (failed(msl))
        return failure();
      object = std::move(*msl);
      objectFormat = gpu::CompilationTarget::Assembly;
    }

    Attribute target = spirv::lookupTargetEnvOrDefault(spirvModule);
    Builder builder(&getContext());
    NamedAttrList properties;
    if (format == "msl")
      properties.append("language", builder.getStringAttr("msl"));
    // The printf formats the runtime prints the kernels' records with
    // (nabla-lower-printf-to-buffer).
    if (Attribute printf = module->getAttr("nabla.printf"))
      properties.append("nabla.printf", printf);
    // The buffers the runtime owns for module globals
    // (nabla-bind-module-globals).
    if (Attribute globals = module->getAttr(nabla::kModuleGlobalsAttrName))
      properties.append(nabla::kModuleGlobalsAttrName, globals);
    auto objectAttr = gpu::ObjectAttr::get(
        &getContext(), target, objectFormat, builder.getStringAttr(object),
        properties.empty() ? DictionaryAttr()
                           : properties.getDictionary(&getContext()),
        nullptr);
    OpBuilder opBuilder(module);
    gpu::BinaryOp::create(opBuilder, module.getLoc(), module.getName(),
                          /*offloadingHandler=*/nullptr,
                          builder.getArrayAttr({objectAttr}));
    module.erase();
    return success();
  }

  /// Validates `words` for Vulkan 1.1 with SPIRV-Tools.
  LogicalResult validate(gpu::GPUModuleOp module, ArrayRef<uint32_t> words) {
    spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
    std::string messages;
    tools.SetMessageConsumer([&](spv_message_level_t, const char *,
                                 const spv_position_t &, const char *message) {
      if (!messages.empty())
        messages += "; ";
      messages += message;
    });
    spvtools::ValidatorOptions validatorOptions;
    if (tools.Validate(words.data(), words.size(), validatorOptions))
      return success();
    return module.emitError("generated SPIR-V failed validation: ") << messages;
  }

  /// Compiles every entry point of `words` to MSL; each kernel's code goes in
  /// a namespace named after it so that SPIRV-Cross's per-entry-point type
  /// declarations do not collide.
  FailureOr<std::string> compileToMSL(gpu::GPUModuleOp module,
                                      spirv::ModuleOp spirvModule,
                                      ArrayRef<uint32_t> words) {
    unsigned major = 3, minor = 0;
    if (StringRef(mslVersion).split('.').first.getAsInteger(10, major) ||
        StringRef(mslVersion).split('.').second.getAsInteger(10, minor))
      return module.emitError("invalid msl-version '") << mslVersion << "'";

    std::string unit = "#include <metal_stdlib>\n#include <simd/simd.h>\n\n"
                       "using namespace metal;\n";
    for (auto entry : spirvModule.getOps<spirv::EntryPointOp>()) {
      StringRef name = entry.getFn();
      CrossContext cross;
      spvc_parsed_ir ir = nullptr;
      spvc_compiler compiler = nullptr;
      spvc_compiler_options options = nullptr;
      const char *source = nullptr;
      bool ok =
          cross.context &&
          spvc_context_parse_spirv(cross.context, words.data(), words.size(),
                                   &ir) == SPVC_SUCCESS &&
          spvc_context_create_compiler(cross.context, SPVC_BACKEND_MSL, ir,
                                       SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                       &compiler) == SPVC_SUCCESS &&
          spvc_compiler_set_entry_point(compiler, name.str().c_str(),
                                        SpvExecutionModelGLCompute) ==
              SPVC_SUCCESS &&
          spvc_compiler_create_compiler_options(compiler, &options) ==
              SPVC_SUCCESS &&
          spvc_compiler_options_set_uint(
              options, SPVC_COMPILER_OPTION_MSL_VERSION,
              SPVC_MAKE_MSL_VERSION(major, minor, 0)) == SPVC_SUCCESS &&
          spvc_compiler_install_compiler_options(compiler, options) ==
              SPVC_SUCCESS &&
          spvc_compiler_compile(compiler, &source) == SPVC_SUCCESS;
      if (!ok)
        return module.emitError("SPIRV-Cross cannot express kernel @")
               << name << " in MSL " << mslVersion << ": " << cross.errors;
      unit += "\nnamespace " + name.str() + "_msl {\n" +
              rewriteFloatAtomics(stripPreamble(source)) + "} // namespace " +
              name.str() + "_msl\n";
    }
    return unit;
  }
};

} // namespace
