//===- Compile.cpp - Compile a module to target artifacts -----------------===//
//
// Runs a `nabla-to-*` pipeline and turns the resulting gpu.binary objects
// into files, with a manifest computed from the kernels' signatures before
// lowering. The parameter ABI recorded per target is:
//   - nvvm/rocdl: each memref expands into the LLVM memref descriptor fields
//     (allocated ptr, aligned ptr, offset, sizes..., strides...), index is
//     i64, other scalars are passed as themselves;
//   - spirv/metal: descriptor set 0, binding = position; buffers are storage
//     buffers, scalars one-element storage buffers (index as i32); dynamic
//     multi-dimensional memrefs are 1-D buffers plus trailing size bindings,
//     then the buffers of module globals the loader owns (kind "global",
//     nabla-bind-module-globals), then the printf buffer.
// Relocation records are described after differentiation (which may pair
// shadows with them) and kernels after reloc-lower, so that the parameters the
// table strategy adds are listed, marked with the key of their record.
//
//===----------------------------------------------------------------------===//

#include "nabla/Compile/Compile.h"

#include "nabla/Dialect/Nabla/IR/NablaDialect.h"
#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Dialect/Reloc/IR/RelocOps.h"
#include "nabla/Dialect/Reloc/Transforms/Passes.h"
#include "nabla/Host/Passes.h"
#include "nabla/Pipelines/Pipelines.h"
#include "nabla/Support/ModuleGlobals.h"
#include "nabla/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace nabla;

std::optional<CompileTarget> nabla::parseCompileTarget(StringRef name) {
  return llvm::StringSwitch<std::optional<CompileTarget>>(name)
      .Case("nvvm", CompileTarget::NVVM)
      .Case("rocdl", CompileTarget::ROCDL)
      .Case("spirv", CompileTarget::SPIRV)
      .Case("metal", CompileTarget::Metal)
      .Default(std::nullopt);
}

StringRef nabla::stringifyCompileTarget(CompileTarget target) {
  switch (target) {
  case CompileTarget::NVVM:
    return "nvvm";
  case CompileTarget::ROCDL:
    return "rocdl";
  case CompileTarget::SPIRV:
    return "spirv";
  case CompileTarget::Metal:
    return "metal";
  }
  llvm_unreachable("unknown target");
}

/// Prints an MLIR type for the manifest.
static std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static bool isSPIRVFamily(CompileTarget target) {
  return target == CompileTarget::SPIRV || target == CompileTarget::Metal;
}

/// Adds the element type and shape of a memref to `entry`.
static void describeMemRef(MemRefType memref, llvm::json::Object &entry) {
  llvm::json::Array shape;
  for (int64_t extent : memref.getShape())
    shape.push_back(ShapedType::isDynamic(extent) ? llvm::json::Value(nullptr)
                                                  : llvm::json::Value(extent));
  entry["element"] = typeString(memref.getElementType());
  entry["shape"] = std::move(shape);
}

/// The manifest entry of one kernel parameter, without its ABI.
static llvm::json::Object describeParameter(unsigned index, Type type,
                                            StringAttr relocKey,
                                            IntegerAttr presenceOf,
                                            bool dynamicSharedBytes,
                                            bool tape, bool splitTape) {
  llvm::json::Object param{{"index", index}, {"type", typeString(type)}};
  if (relocKey)
    param["reloc"] = relocKey.getValue();
  if (presenceOf)
    param["presence_of"] = presenceOf.getInt();
  if (dynamicSharedBytes)
    param["dynamic_shared_memory_bytes"] = true;
  if (tape)
    param["tape"] = true;
  if (splitTape)
    param["split_tape"] = true;
  if (auto memref = dyn_cast<MemRefType>(type)) {
    param["kind"] = "buffer";
    describeMemRef(memref, param);
  } else {
    param["kind"] = "scalar";
  }
  return param;
}

/// The LLVM-ABI argument list (nvvm/rocdl) of a kernel.
static llvm::json::Array describeLLVMArguments(TypeRange params) {
  llvm::json::Array arguments;
  for (auto [index, type] : llvm::enumerate(params)) {
    unsigned k = index;
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref) {
      arguments.push_back(llvm::json::Object{
          {"param", k},
          {"field", "value"},
          {"type", type.isIndex() ? "i64" : typeString(type)}});
      continue;
    }
    arguments.push_back(llvm::json::Object{
        {"param", k}, {"field", "allocated"}, {"type", "ptr"}});
    arguments.push_back(llvm::json::Object{
        {"param", k}, {"field", "aligned"}, {"type", "ptr"}});
    arguments.push_back(
        llvm::json::Object{{"param", k}, {"field", "offset"}, {"type", "i64"}});
    for (StringRef field : {"size", "stride"})
      for (int64_t d = 0; d < memref.getRank(); ++d)
        arguments.push_back(llvm::json::Object{
            {"param", k}, {"field", field}, {"dim", d}, {"type", "i64"}});
  }
  return arguments;
}

/// True if `function` or a function it calls (the pipelines inline them)
/// prints (gpu.printf).
static bool printsTransitively(FunctionOpInterface function) {
  SmallVector<Operation *> work{function};
  DenseSet<Operation *> seen{function};
  SymbolTableCollection symbols;
  while (!work.empty()) {
    Operation *current = work.pop_back_val();
    bool prints = false;
    current->walk([&](Operation *op) {
      if (isa<gpu::PrintfOp>(op)) {
        prints = true;
        return WalkResult::interrupt();
      }
      if (auto call = dyn_cast<CallOpInterface>(op))
        if (Operation *callee = call.resolveCallableInTable(&symbols))
          if (seen.insert(callee).second)
            work.push_back(callee);
      return WalkResult::advance();
    });
    if (prints)
      return true;
  }
  return false;
}

/// The SPIR-V binding list (spirv/metal) of a kernel; a kernel that prints
/// (gpu.printf, lowered to a buffer for Vulkan) has the printf buffer last.
static llvm::json::Array describeBindings(TypeRange params, bool prints) {
  llvm::json::Array bindings;
  SmallVector<std::pair<unsigned, int64_t>> sizes;
  for (auto [index, type] : llvm::enumerate(params)) {
    unsigned k = index;
    llvm::json::Object binding{{"set", 0}, {"binding", k}, {"param", k}};
    auto memref = dyn_cast<MemRefType>(type);
    if (memref) {
      bool flattened = memref.getRank() >= 2 && !memref.hasStaticShape() &&
                       memref.getLayout().isIdentity();
      binding["kind"] = "buffer";
      binding["type"] = typeString(memref.getElementType());
      binding["layout"] = memref.hasStaticShape() ? "array" : "runtime_array";
      if (flattened)
        for (auto [d, extent] : llvm::enumerate(memref.getShape()))
          if (ShapedType::isDynamic(extent))
            sizes.push_back({k, static_cast<int64_t>(d)});
    } else {
      binding["kind"] = "scalar";
      binding["type"] = type.isIndex() ? "i32" : typeString(type);
    }
    bindings.push_back(std::move(binding));
  }
  unsigned next = params.size();
  for (auto [param, dim] : sizes)
    bindings.push_back(llvm::json::Object{{"set", 0},
                                          {"binding", next++},
                                          {"param", param},
                                          {"kind", "size"},
                                          {"dim", dim},
                                          {"type", "i32"}});
  if (prints)
    bindings.push_back(llvm::json::Object{
        {"set", 0}, {"binding", next++}, {"kind", "printf"}, {"type", "i32"}});
  return bindings;
}

llvm::json::Array nabla::describeKernels(ModuleOp module,
                                         const CompileOptions &options) {
  llvm::json::Array kernels;
  module.walk([&](gpu::GPUFuncOp kernel) {
    if (!kernel.isKernel())
      return;
    auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
    TypeRange params = kernel.getArgumentTypes();
    llvm::json::Array described;
    for (auto [index, type] : llvm::enumerate(params))
      described.push_back(
          describeParameter(
              index, type,
              kernel.getArgAttrOfType<StringAttr>(index,
                                                  reloc::kRecordKeyAttrName),
              kernel.getArgAttrOfType<IntegerAttr>(index, kPresenceAttrName),
              static_cast<bool>(
                  kernel.getArgAttr(index, kDynamicSharedBytesAttrName)),
              static_cast<bool>(kernel.getArgAttr(index, "nabla.tape")),
              static_cast<bool>(kernel.getArgAttr(index, "nabla.split_tape"))));

    llvm::json::Value workgroup = nullptr;
    if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize()) {
      workgroup = llvm::json::Array(llvm::map_range(
          *known, [](int32_t v) { return llvm::json::Value(v); }));
    } else if (isSPIRVFamily(options.target) &&
               !options.workgroupSize.empty()) {
      llvm::json::Array size;
      for (unsigned d = 0; d < 3; ++d)
        size.push_back(d < options.workgroupSize.size()
                           ? options.workgroupSize[d]
                           : int64_t(1));
      workgroup = std::move(size);
    }

    llvm::json::Object entry{{"name", kernel.getName()},
                             {"module", gpuModule.getName()},
                             {"params", std::move(described)},
                             {"workgroup_size", std::move(workgroup)}};
    // A deterministic kernel adjoint's scratch (its last parameter) needs
    // 1 + words * blocks i32 words.
    if (auto words =
            kernel->getAttrOfType<IntegerAttr>("nabla.scratch_words_per_block"))
      entry["scratch_words_per_block"] = words.getInt();
    // A global-memory tape (nabla-materialize-tapes): its parameter and the
    // words per thread as a formula of the launch.
    for (StringRef attrName : {"nabla.tape", "nabla.split_tape"}) {
      auto tape = kernel->getAttrOfType<DictionaryAttr>(attrName);
      auto words = tape ? tape.getAs<StringAttr>("words_per_thread")
                        : StringAttr();
      if (!words)
        continue;
      auto formula = tape.getAs<StringAttr>("formula");
      llvm::Expected<llvm::json::Value> parsed =
          llvm::json::parse(words.getValue());
      if (!parsed) {
        llvm::consumeError(parsed.takeError());
        continue;
      }
      bool growable = static_cast<bool>(tape.get("growable"));
      for (auto [index, type] : llvm::enumerate(params))
        if (kernel.getArgAttr(index, attrName)) {
          llvm::json::Object described{
              {"param", int64_t(index)},
              {"words_per_thread", std::move(*parsed)},
              {"formula", formula ? formula.getValue().str() : ""}};
          // The launcher writes the capacity into the last word and reads
          // the capacity a thread needed from the one before.
          if (growable)
            described["growable"] = true;
          entry[attrName.drop_front(strlen("nabla."))] = std::move(described);
        }
    }
    // Dynamic shared memory: the bytes compiled in (SPIR-V, Metal) or -1
    // (any size, given at launch).
    bool dynamicShared = kernel
                             .walk([](gpu::DynamicSharedMemoryOp) {
                               return WalkResult::interrupt();
                             })
                             .wasInterrupted();
    if (dynamicShared)
      entry["dynamic_shared_memory"] = isSPIRVFamily(options.target)
                                           ? options.dynamicSharedMemory
                                           : int64_t(-1);
    bool prints = printsTransitively(kernel);
    if (isSPIRVFamily(options.target))
      entry["bindings"] = describeBindings(params, prints);
    else
      entry["arguments"] = describeLLVMArguments(params);
    kernels.push_back(std::move(entry));
  });
  return kernels;
}

/// True if NumPy dtype `dtype` (f4, f8, f2, i1, i2, i4, i8, u1...) holds
/// elements of `type`.
static bool dtypeHolds(StringRef dtype, Type type) {
  if (dtype.size() != 2 || !type.isIntOrIndexOrFloat())
    return false;
  unsigned bytes = dtype[1] - '0';
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  if (bytes * 8 != std::max(8u, width))
    return false;
  if (isa<FloatType>(type))
    return dtype[0] == 'f';
  return dtype[0] == 'i' || dtype[0] == 'u' || dtype[0] == 'b';
}

/// Gives the records named in `values` their contents (CompileOptions::
/// relocValues); a key no record has, or contents that do not fit the
/// record's static type, is an error.
static LogicalResult applyRelocValues(
    ModuleOp module,
    const std::map<std::string, std::pair<std::string, std::vector<uint8_t>>>
        &values) {
  std::map<std::string, bool> used;
  for (const auto &entry : values)
    used[entry.first] = false;
  bool failed = false;
  module.walk([&](reloc::GlobalOp record) {
    auto found = values.find(record.getKey().str());
    if (found == values.end())
      return;
    used[found->first] = true;
    const auto &[dtype, bytes] = found->second;
    auto type = dyn_cast<MemRefType>(record.getGlobalType());
    if (!type || !type.hasStaticShape()) {
      record.emitOpError("of '")
          << record.getKey() << "' has no static shape to give contents to ("
          << record.getGlobalType() << ")";
      failed = true;
      return;
    }
    Type element = type.getElementType();
    uint64_t width =
        element.isIndex() ? 8 : element.getIntOrFloatBitWidth() / 8;
    uint64_t expected =
        uint64_t(type.getNumElements()) * std::max<uint64_t>(1, width);
    if (!dtypeHolds(dtype, element) || bytes.size() != expected) {
      record.emitOpError("of '")
          << record.getKey() << "' is " << type << " (" << expected
          << " bytes): the contents given are " << bytes.size()
          << " bytes of dtype '" << dtype << "'";
      failed = true;
      return;
    }
    auto tensor = RankedTensorType::get(type.getShape(), element);
    record.setValueAttr(DenseElementsAttr::getFromRawBuffer(
        tensor, ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()),
                               bytes.size())));
  });
  for (const auto &[key, seen] : used)
    if (!seen) {
      emitError(module.getLoc())
          << "no relocation record has the key '" << key
          << "' given contents (--reloc=" << key << "=FILE.npy)";
      failed = true;
    }
  return failure(failed);
}

/// The records of every gpu.module that kernels use (reloc-lower prunes the
/// rest), sorted by module and key, with how `strategy` lowers them: the
/// symbol a loader patches (patch), resolves (defer) or nothing (table: the
/// kernels' parameters carry the key; bake and materialize: nothing to load).
static llvm::json::Array describeRelocations(ModuleOp module,
                                             StringRef strategy) {
  SmallVector<reloc::GlobalOp> globals;
  module.walk([&](reloc::GlobalOp global) {
    if (!global.collectUses().empty())
      globals.push_back(global);
  });
  auto moduleName = [](reloc::GlobalOp global) {
    auto parent = global->getParentOfType<gpu::GPUModuleOp>();
    return parent ? parent.getName() : StringRef();
  };
  llvm::sort(globals, [&](reloc::GlobalOp a, reloc::GlobalOp b) {
    return std::make_pair(moduleName(a), a.getKey()) <
           std::make_pair(moduleName(b), b.getKey());
  });
  llvm::json::Array records;
  for (reloc::GlobalOp global : globals) {
    std::string lowering = strategy.str();
    bool pointer = isa<LLVM::LLVMPointerType>(global.getGlobalType());
    if (strategy == "bake-or-materialize")
      lowering = pointer ? "bake" : "materialize";
    llvm::json::Object record{
        {"key", global.getKey()},
        {"module", moduleName(global)},
        {"strategy", lowering},
        {"kind", reloc::stringifyRecordKind(global.getKind())},
        {"type", typeString(global.getGlobalType())},
        {"pointer", pointer},
        {"constant", global.getConstant()}};
    if (lowering == "patch")
      record["symbol"] = reloc::getPatchSymbol(global.getKey());
    else if (lowering == "defer")
      record["symbol"] = reloc::getKeySymbol(global.getKey());
    if (auto memref = dyn_cast<MemRefType>(global.getGlobalType()))
      describeMemRef(memref, record);
    if (std::optional<int64_t> offset = global.getOffset())
      record["offset"] = *offset;
    if (std::optional<int64_t> size = global.getByteSize())
      record["size"] = *size;
    if (std::optional<int64_t> address = global.getAddress())
      record["address"] = *address;
    if (std::optional<StringRef> shadowOf = global.getShadowOf())
      if (auto primal = SymbolTable::lookupNearestSymbolFrom<reloc::GlobalOp>(
              global, global.getShadowOfAttr()))
        record["shadow_of"] = primal.getKey();
    records.push_back(std::move(record));
  }
  return records;
}

/// Appends the printf buffer's binding to the described bindings of the
/// kernels of module `moduleName` named in `printing` that lack one (a
/// kernel the pipeline made print: their description was written before).
static void addPrintfBindings(llvm::json::Array &kernels, StringRef moduleName,
                              ArrayAttr printing) {
  if (!printing)
    return;
  for (llvm::json::Value &value : kernels) {
    llvm::json::Object &kernel = *value.getAsObject();
    std::optional<StringRef> name = kernel.getString("name");
    llvm::json::Array *bindings = kernel.getArray("bindings");
    if (!name || !bindings || kernel.getString("module") != moduleName ||
        !llvm::is_contained(printing.getAsValueRange<StringAttr>(), *name))
      continue;
    if (!bindings->empty() && bindings->back().getAsObject()->getString(
                                  "kind") == StringRef("printf"))
      continue;
    bindings->push_back(
        llvm::json::Object{{"set", 0},
                           {"binding", int64_t(bindings->size())},
                           {"kind", "printf"},
                           {"type", "i32"}});
  }
}

/// Inserts the global bindings that nabla-bind-module-globals gave the
/// kernels of module `moduleName` (`info`, its record) into their described
/// bindings: after the size bindings, before the printf buffer.
static void addGlobalBindings(llvm::json::Array &kernels, StringRef moduleName,
                              DictionaryAttr info) {
  auto bound = info.getAs<DictionaryAttr>("kernels");
  auto buffers = info.getAs<ArrayAttr>("buffers");
  if (!bound || !buffers)
    return;
  llvm::StringMap<Type> elements;
  for (auto global : buffers.getAsRange<DictionaryAttr>())
    elements[global.getAs<StringAttr>("name").getValue()] =
        cast<MemRefType>(global.getAs<TypeAttr>("type").getValue())
            .getElementType();
  for (llvm::json::Value &value : kernels) {
    llvm::json::Object &kernel = *value.getAsObject();
    std::optional<StringRef> name = kernel.getString("name");
    std::optional<StringRef> module = kernel.getString("module");
    llvm::json::Array *bindings = kernel.getArray("bindings");
    auto names = name ? bound.getAs<ArrayAttr>(*name) : ArrayAttr();
    if (!names || !bindings || module != moduleName)
      continue;
    std::optional<llvm::json::Value> printf;
    if (!bindings->empty() && bindings->back().getAsObject()->getString(
                                  "kind") == StringRef("printf")) {
      printf = std::move(bindings->back());
      bindings->erase(bindings->end() - 1);
    }
    for (StringRef global : names.getAsValueRange<StringAttr>())
      bindings->push_back(
          llvm::json::Object{{"set", 0},
                             {"binding", int64_t(bindings->size())},
                             {"kind", "global"},
                             {"global", global},
                             {"type", typeString(elements.lookup(global))}});
    if (printf) {
      (*printf->getAsObject())["binding"] = int64_t(bindings->size());
      bindings->push_back(std::move(*printf));
    }
  }
}

/// Builds the target's pipeline into `pm`; returns why its options cannot
/// be used (nothing built), or "".
static std::string buildPipeline(OpPassManager &pm,
                                 const CompileOptions &options) {
  switch (options.target) {
  case CompileTarget::NVVM: {
    NablaToNVVMOptions nvvm;
    if (!options.chip.empty())
      nvvm.chip = options.chip;
    nvvm.abi = options.abi;
    nvvm.hostLowering = false;
    nvvm.relocStrategy = options.relocStrategy;
    nvvm.optLevel = options.optLevel;
    std::string error = checkPipelineOptions(nvvm);
    if (error.empty())
      buildNablaToNVVMPipeline(pm, nvvm);
    return error;
  }
  case CompileTarget::ROCDL: {
    NablaToROCDLOptions rocdl;
    if (!options.chip.empty())
      rocdl.chip = options.chip;
    rocdl.abi = options.abi;
    rocdl.hostLowering = false;
    rocdl.relocStrategy = options.relocStrategy;
    rocdl.optLevel = options.optLevel;
    std::string error = checkPipelineOptions(rocdl);
    if (error.empty())
      buildNablaToROCDLPipeline(pm, rocdl);
    return error;
  }
  case CompileTarget::SPIRV: {
    NablaToSPIRVOptions spirv;
    spirv.abi = options.abi;
    spirv.hostLowering = false;
    spirv.relocStrategy = options.relocStrategy;
    spirv.optLevel = options.optLevel;
    spirv.workgroupSize = options.workgroupSize;
    spirv.subgroupSize = options.subgroupSize;
    spirv.emulateFloatAtomics = options.emulateFloatAtomics;
    spirv.dynamicSharedMemory = options.dynamicSharedMemory;
    spirv.loopLimit = options.loopLimit;
    std::string error = checkPipelineOptions(spirv);
    if (error.empty())
      buildNablaToSPIRVPipeline(pm, spirv);
    return error;
  }
  case CompileTarget::Metal: {
    NablaToMetalOptions metal;
    metal.abi = options.abi;
    metal.hostLowering = false;
    metal.relocStrategy = options.relocStrategy;
    metal.optLevel = options.optLevel;
    metal.workgroupSize = options.workgroupSize;
    metal.subgroupSize = options.subgroupSize;
    metal.emulateFloatAtomics = options.emulateFloatAtomics;
    metal.dynamicSharedMemory = options.dynamicSharedMemory;
    std::string error = checkPipelineOptions(metal);
    if (error.empty())
      buildNablaToMetalPipeline(pm, metal);
    return error;
  }
  }
  return "unknown target";
}

/// File extension of an object of `format` on `target`.
static StringRef getExtension(CompileTarget target,
                              gpu::CompilationTarget format) {
  switch (target) {
  case CompileTarget::NVVM:
    return format == gpu::CompilationTarget::Assembly ? "ptx" : "cubin";
  case CompileTarget::ROCDL:
    return format == gpu::CompilationTarget::Assembly ? "s" : "hsaco";
  case CompileTarget::SPIRV:
    return "spv";
  case CompileTarget::Metal:
    return "metal";
  }
  llvm_unreachable("unknown target");
}

FailureOr<CompileResult> nabla::compileModule(ModuleOp module,
                                              const CompileOptions &options) {
  CompileResult result;
  // Options first, before anything runs.
  PassManager pm(module.getContext());
  std::string error = buildPipeline(pm, options);
  if (!error.empty())
    return emitError(module.getLoc(), error), failure();
  // An unknown name compiles everything: the launch then reports it.
  if (!options.onlyKernel.empty())
    (void)keepOnlyKernel(module, options.onlyKernel);
  StringRef target = stringifyCompileTarget(options.target);
  std::string strategy =
      getRelocStrategy(target, options.abi, options.relocStrategy);
  // The pipeline's first passes, run here to describe what they produce;
  // when the pipeline runs them again they find nothing left to do.
  PassManager prepare(module.getContext());
  // Host programs: kernels outlined from gpu.launch and sized by their
  // launches are described like the others. Host code is not lowered: only
  // the kernels' objects become files.
  prepare.addPass(createGpuKernelOutliningPass());
  prepare.addPass(createAnnotateLaunchSizes());
  prepare.addPass(createCheckInput());
  prepare.addPass(createValidate());
  prepare.addNestedPass<gpu::GPUModuleOp>(createPromotePrivateAllocs());
  prepare.addPass(createDifferentiate());
  prepare.addPass(createMaterializeTapes());
  prepare.addPass(reloc::createRelocLink());
  if (failed(prepare.run(module)))
    return failure();
  if (failed(applyRelocValues(module, options.relocValues)))
    return failure();
  llvm::json::Array relocations = describeRelocations(module, strategy);
  PassManager lowerRecords(module.getContext());
  lowerRecords.addPass(reloc::createRelocLower({strategy}));
  if (failed(lowerRecords.run(module)))
    return failure();
  llvm::json::Array kernels = describeKernels(module, options);

  if (failed(pm.run(module)))
    return failure();

  llvm::json::Object modules, printf, globals;
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    llvm::json::Array files;
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      // The formats and capacity of a SPIR-V module's printf buffer, for the
      // loader that prints its records.
      if (DictionaryAttr properties = object.getProperties())
        if (auto info = properties.getAs<DictionaryAttr>("nabla.printf")) {
          llvm::json::Array formats, printing;
          for (Attribute format : info.getAs<ArrayAttr>("formats"))
            formats.push_back(cast<StringAttr>(format).getValue());
          for (Attribute kernel : info.getAs<ArrayAttr>("kernels"))
            printing.push_back(cast<StringAttr>(kernel).getValue());
          printf[binary.getName()] = llvm::json::Object{
              {"capacity", info.getAs<IntegerAttr>("capacity").getInt()},
              {"formats", std::move(formats)},
              {"kernels", std::move(printing)}};
        }
      // The buffers the loader owns for module globals, and the kernels'
      // bindings of them.
      if (DictionaryAttr properties = object.getProperties())
        if (auto info =
                properties.getAs<DictionaryAttr>(kModuleGlobalsAttrName)) {
          globals[binary.getName()] = describeModuleGlobals(info);
          addGlobalBindings(kernels, binary.getName(), info);
        }
      // Kernels the pipeline made print (nabla-detect-loop-limit's report)
      // get the printf buffer they now take, last.
      if (DictionaryAttr properties = object.getProperties())
        if (auto info = properties.getAs<DictionaryAttr>("nabla.printf"))
          addPrintfBindings(kernels, binary.getName(),
                            info.getAs<ArrayAttr>("kernels"));
      Artifact artifact{binary.getName().str(),
                        getExtension(options.target, object.getFormat()).str(),
                        object.getObject().str()};
      files.push_back(artifact.fileName());
      result.artifacts.push_back(std::move(artifact));
    }
    modules[binary.getName()] = std::move(files);
  }

  result.manifest =
      llvm::json::Object{{"format", "nabla-manifest"},
                         {"version", 1},
                         {"target", stringifyCompileTarget(options.target)},
                         {"chip", options.chip},
                         {"abi", options.abi},
                         {"reloc_strategy", strategy},
                         {"modules", std::move(modules)},
                         {"kernels", std::move(kernels)},
                         {"relocations", std::move(relocations)}};
  if (!printf.empty())
    result.manifest["printf"] = std::move(printf);
  if (!globals.empty())
    result.manifest["module_globals"] = std::move(globals);
  return result;
}
