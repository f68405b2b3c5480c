//===- ImportLLVMIR.cpp - Read a tool's input: MLIR or LLVM IR ------------===//
//
// LLVM IR is read with LLVM's own parser (text, keeping each instruction's
// position through an AsmParserContext) or bitcode reader, verified, and
// imported with MLIR's LLVM IR importer. Instructions of a text file without
// debug locations get one at their position in the file, so every later
// diagnostic (of the raise, the AD or a pipeline) points at the `.ll` line.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/LLVMToNabla/ImportLLVMIR.h"
#include "nabla/Support/SourceChecks.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Import.h"
#include "llvm/AsmParser/AsmParserContext.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DIBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Transforms/Scalar/DCE.h"
#include "llvm/Transforms/Scalar/InstSimplifyPass.h"
#include "llvm/Transforms/Scalar/Scalarizer.h"

using namespace mlir;

bool nabla::isLLVMIRInput(StringRef fileName,
                          const llvm::MemoryBuffer &buffer) {
  if (llvm::identify_magic(buffer.getBuffer()) == llvm::file_magic::bitcode)
    return true;
  StringRef ext = llvm::sys::path::extension(fileName);
  return ext == ".ll" || ext == ".bc";
}

/// Gives every instruction of a function without debug information the
/// location of its text in the file (1-based line and column), under one
/// compile unit for the file.
static void attachTextLocations(llvm::Module &module,
                                const llvm::AsmParserContext &parsed,
                                StringRef fileName) {
  llvm::DIBuilder builder(module);
  llvm::DIFile *file =
      builder.createFile(llvm::sys::path::filename(fileName),
                         llvm::sys::path::parent_path(fileName));
  bool any = false;
  llvm::DISubroutineType *type = nullptr;
  for (llvm::Function &function : module) {
    if (function.isDeclaration() || function.getSubprogram())
      continue;
    if (!any) {
      // Directives only (no DWARF sections in PTX): a full compile unit made
      // NVPTX mark the module `.target sm_XX, debug`, which ptxas refuses at
      // -O2 ("Optimized debugging not supported") when the info survived
      // into the kernel (rodinia's pathfinder, hotspot, nw).
      builder.createCompileUnit(
          llvm::dwarf::DW_LANG_C, file, "nabla", /*isOptimized=*/true, "", 0,
          "", llvm::DICompileUnit::DebugEmissionKind::DebugDirectivesOnly);
      type = builder.createSubroutineType(builder.getOrCreateTypeArray({}));
      any = true;
    }
    unsigned line = 0;
    if (auto range = parsed.getFunctionLocation(&function))
      line = range->Start.Line + 1;
    llvm::DISubprogram *subprogram = builder.createFunction(
        file, function.getName(), function.getName(), file, line, type, line,
        llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition);
    function.setSubprogram(subprogram);
    for (llvm::Instruction &inst : llvm::instructions(function)) {
      if (inst.getDebugLoc())
        continue;
      unsigned instLine = line, column = 1;
      if (auto range = parsed.getInstructionLocation(&inst)) {
        instLine = range->Start.Line + 1;
        column = range->Start.Col + 1;
      }
      inst.setDebugLoc(llvm::DILocation::get(module.getContext(), instLine,
                                             column, subprogram));
    }
  }
  if (!any)
    return;
  builder.finalize();
  if (!module.getModuleFlag("Debug Info Version"))
    module.addModuleFlag(llvm::Module::Warning, "Debug Info Version",
                         llvm::DEBUG_METADATA_VERSION);
}

/// Vector values (a `uchar4` stored whole, `__nv_bfloat162` pairs, loops the
/// SLP vectorizer packed at -O3) become their elements: LLVM's scalarizer,
/// with loads and stores, keeps each instruction's location. Kernels are
/// raised element-wise; every target has its own vector units.
static void scalarizeVectors(llvm::Module &module) {
  bool vectors = false;
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function)) {
      vectors |= inst.getType()->isVectorTy();
      for (llvm::Value *operand : inst.operands())
        vectors |= operand->getType()->isVectorTy();
    }
  if (!vectors)
    return;
  llvm::PassBuilder builder;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ScalarizerPassOptions options;
  options.ScalarizeLoadStore = true;
  options.ScalarizeVariableInsertExtract = true;
  llvm::FunctionPassManager passes;
  passes.addPass(llvm::ScalarizerPass(options));
  passes.addPass(llvm::InstSimplifyPass());
  passes.addPass(llvm::DCEPass());
  llvm::ModulePassManager pipeline;
  pipeline.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(passes)));
  pipeline.run(module, modules);
}

/// Constants and constant expressions have no line in the `.ll` (MLIR's
/// importer gives them an unknown location): each takes the location of its
/// first user that has one, so that every error about them points at the
/// instruction using them (`if (bias != NULL)` names the comparison).
static void locateConstants(ModuleOp module) {
  module.walk([](LLVM::LLVMFuncOp func) {
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) { ops.push_back(op); });
    // Users come after their operands' definitions: fix them first.
    for (Operation *op : llvm::reverse(ops)) {
      if (!isa<UnknownLoc>(op->getLoc()))
        continue;
      for (Operation *user : op->getUsers())
        if (!isa<UnknownLoc>(user->getLoc())) {
          op->setLoc(user->getLoc());
          break;
        }
    }
  });
}

OwningOpRef<ModuleOp> nabla::importLLVMIR(llvm::SourceMgr &sourceMgr,
                                          MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef fileName = buffer->getBufferIdentifier();
  auto fileLoc = [&](unsigned line, unsigned column) {
    return FileLineColLoc::get(context, fileName, line, column);
  };

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module;
  bool isBitcode =
      llvm::identify_magic(buffer->getBuffer()) == llvm::file_magic::bitcode;
  if (isBitcode) {
    llvm::Expected<std::unique_ptr<llvm::Module>> parsed =
        llvm::parseBitcodeFile(buffer->getMemBufferRef(), llvmContext);
    if (!parsed) {
      emitError(fileLoc(0, 0))
          << "invalid LLVM bitcode: " << llvm::toString(parsed.takeError());
      return {};
    }
    module = std::move(*parsed);
  } else {
    llvm::SMDiagnostic diagnostic;
    llvm::AsmParserContext positions;
    module = llvm::parseAssembly(
        buffer->getMemBufferRef(), diagnostic, llvmContext, /*Slots=*/nullptr,
        /*DataLayoutCallback=*/
        [](StringRef, StringRef) { return std::nullopt; }, &positions);
    if (!module) {
      emitError(fileLoc(diagnostic.getLineNo(), diagnostic.getColumnNo() + 1))
          << "invalid LLVM IR: " << diagnostic.getMessage();
      return {};
    }
    attachTextLocations(*module, positions, fileName);
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    emitError(fileLoc(0, 0))
        << "invalid LLVM IR (verifier): " << StringRef(problems).trim();
    return {};
  }
  scalarizeVectors(*module);

  // Relocation conventions travel as named metadata (MLIR's importer drops
  // it): !nabla.gv_to_value = !{!{!"<global>", !"<key>"}, ...} (v2) and
  // !nabla.address_map = !{!{!"<address>", !"<key>", i64 <bytes>}, ...} (v1).
  SmallVector<NamedAttribute> gvToValue, addressMap, addressSizes;
  auto readTable = [&](StringRef name, SmallVectorImpl<NamedAttribute> &keys,
                       SmallVectorImpl<NamedAttribute> *sizes) -> bool {
    llvm::NamedMDNode *table = module->getNamedMetadata(name);
    if (!table)
      return true;
    for (llvm::MDNode *entry : table->operands()) {
      auto *first = entry->getNumOperands() >= 2
                        ? dyn_cast<llvm::MDString>(entry->getOperand(0))
                        : nullptr;
      auto *second =
          first ? dyn_cast<llvm::MDString>(entry->getOperand(1)) : nullptr;
      if (!second) {
        emitError(fileLoc(0, 0))
            << "!" << name << " entries must be !{!\"<name>\", !\"<key>\""
            << (sizes ? ", i64 <bytes>}" : "}");
        return false;
      }
      keys.emplace_back(StringAttr::get(context, first->getString()),
                        StringAttr::get(context, second->getString()));
      if (sizes && entry->getNumOperands() >= 3)
        if (auto *size = llvm::mdconst::dyn_extract<llvm::ConstantInt>(
                entry->getOperand(2)))
          sizes->emplace_back(StringAttr::get(context, first->getString()),
                              IntegerAttr::get(IntegerType::get(context, 64),
                                               size->getSExtValue()));
    }
    return true;
  };
  if (!readTable("nabla.gv_to_value", gvToValue, nullptr) ||
      !readTable("nabla.address_map", addressMap, &addressSizes))
    return {};

  // The importer warns about data layout entries MLIR does not model (vector
  // alignments of NVPTX); they do not matter for kernels, so only errors are
  // reported.
  ScopedDiagnosticHandler onlyErrors(context, [](Diagnostic &diagnostic) {
    return success(diagnostic.getSeverity() != DiagnosticSeverity::Error);
  });
  OwningOpRef<ModuleOp> imported =
      translateLLVMIRToModule(std::move(module), context,
                              /*emitExpensiveWarnings=*/false,
                              /*dropDICompositeTypeElements=*/true);
  if (!imported) {
    emitError(fileLoc(0, 0)) << "cannot import this LLVM IR into MLIR";
    return imported;
  }
  locateConstants(*imported);
  if (!gvToValue.empty())
    (*imported)->setAttr("reloc.gv_to_value",
                         DictionaryAttr::get(context, gvToValue));
  if (!addressMap.empty())
    (*imported)->setAttr("reloc.address_map",
                         DictionaryAttr::get(context, addressMap));
  if (!addressSizes.empty())
    (*imported)->setAttr("nabla.address_sizes",
                         DictionaryAttr::get(context, addressSizes));
  return imported;
}

OwningOpRef<ModuleOp> nabla::parseInputModule(llvm::SourceMgr &sourceMgr,
                                              MLIRContext *context,
                                              bool *isLLVMIR) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  bool llvmIR = isLLVMIRInput(buffer->getBufferIdentifier(), *buffer);
  if (isLLVMIR)
    *isLLVMIR = llvmIR;
  if (llvmIR)
    return importLLVMIR(sourceMgr, context);
  return parseCheckedModule(sourceMgr, context);
}

void nabla::registerLLVMIRImport(DialectRegistry &registry) {
  registerAllFromLLVMIRTranslations(registry);
}
