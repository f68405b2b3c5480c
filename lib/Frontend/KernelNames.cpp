//===- KernelNames.cpp - Kernels and parameters by their source names -----===//
//
// Demangling with LLVM's Itanium demangler to match the names users write
// against the IR's, and a second, plain parse of the LLVM IR for parameter
// names: MLIR's importer drops them (its values have no names), and the
// raise flattens byval and aggregate parameters, which the names follow.
//
//===----------------------------------------------------------------------===//

#include "nabla/Frontend/KernelNames.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdlib>

using namespace nabla;

std::string nabla::getDemangledName(llvm::StringRef symbol) {
  return llvm::demangle(symbol);
}

/// A demangler query's result as a string (the demangler hands out malloc'd
/// buffers).
template <typename Query> static std::string demanglerString(Query query) {
  size_t size = 0;
  char *buffer = query(nullptr, &size);
  std::string text = buffer ? std::string(buffer) : std::string();
  std::free(buffer);
  return text;
}

/// `a::b<int>` without its trailing template arguments: `a::b`.
static llvm::StringRef withoutTemplateArguments(llvm::StringRef name) {
  if (!name.ends_with(">"))
    return name;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    depth += name[i] == '>' ? 1 : name[i] == '<' ? -1 : 0;
    if (depth == 0)
      return name.take_front(i);
  }
  return name;
}

bool nabla::kernelNameMatches(llvm::StringRef symbol, llvm::StringRef name) {
  if (symbol == name)
    return true;
  // The demangler's names point into the mangled string: keep it alive.
  std::string mangled = symbol.str();
  llvm::ItaniumPartialDemangler demangler;
  if (demangler.partialDemangle(mangled.c_str()) || !demangler.isFunction())
    return false;
  std::string function = demanglerString([&](char *buffer, size_t *size) {
    return demangler.getFunctionName(buffer, size);
  });
  std::string base = demanglerString([&](char *buffer, size_t *size) {
    return demangler.getFunctionBaseName(buffer, size);
  });
  std::string parameters = demanglerString([&](char *buffer, size_t *size) {
    return demangler.getFunctionParameters(buffer, size);
  });
  return name == function || name == withoutTemplateArguments(function) ||
         name == base || name == function + parameters ||
         name == getDemangledName(symbol);
}

llvm::Expected<std::string>
nabla::resolveKernelName(llvm::ArrayRef<std::string> kernels,
                         llvm::StringRef name) {
  if (llvm::is_contained(kernels, name))
    return name.str();
  std::vector<std::string> matches;
  for (const std::string &kernel : kernels)
    if (kernelNameMatches(kernel, name))
      matches.push_back(kernel);
  if (matches.size() == 1)
    return matches.front();
  auto describe = [](llvm::ArrayRef<std::string> names) {
    std::string text;
    for (const std::string &kernel : names) {
      if (!text.empty())
        text += ", ";
      text += kernel;
      std::string demangled = getDemangledName(kernel);
      if (demangled != kernel)
        text += " (" + demangled + ")";
    }
    return text;
  };
  if (matches.empty())
    return llvm::createStringError(
        "no kernel named '%s' (kernels: %s)", name.str().c_str(),
        kernels.empty() ? "none" : describe(kernels).c_str());
  return llvm::createStringError(
      "'%s' names several kernels: %s; give the IR name or the signature",
      name.str().c_str(), describe(matches).c_str());
}

std::vector<std::string> nabla::getLLVMKernelNames(mlir::ModuleOp module) {
  std::vector<std::string> kernels;
  for (auto func : module.getOps<mlir::LLVM::LLVMFuncOp>()) {
    if (func.isExternal())
      continue;
    mlir::LLVM::CConv convention = func.getCConv();
    if (convention == mlir::LLVM::CConv::PTX_Kernel ||
        convention == mlir::LLVM::CConv::AMDGPU_KERNEL ||
        convention == mlir::LLVM::CConv::SPIR_KERNEL ||
        func->hasAttr("nvvm.kernel") || func->hasAttr("rocdl.kernel"))
      kernels.push_back(func.getName().str());
  }
  return kernels;
}

/// Appends the names of the scalar leaves of a `type` value named `name`.
static void appendLeafNames(llvm::Type *type, const std::string &name,
                            std::vector<std::string> &names) {
  if (auto *structType = llvm::dyn_cast<llvm::StructType>(type)) {
    for (unsigned k = 0, e = structType->getNumElements(); k < e; ++k)
      appendLeafNames(structType->getElementType(k),
                      name.empty() ? "" : name + "." + std::to_string(k),
                      names);
    return;
  }
  if (auto *arrayType = llvm::dyn_cast<llvm::ArrayType>(type)) {
    for (uint64_t k = 0, e = arrayType->getNumElements(); k < e; ++k)
      appendLeafNames(arrayType->getElementType(),
                      name.empty() ? "" : name + "." + std::to_string(k),
                      names);
    return;
  }
  names.push_back(name);
}

std::map<std::string, std::vector<std::string>>
nabla::getParameterNames(llvm::MemoryBufferRef llvmIR) {
  std::map<std::string, std::vector<std::string>> result;
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module =
      llvm::parseIR(llvmIR, diagnostic, context);
  if (!module)
    return result;
  for (llvm::Function &function : *module) {
    if (function.isDeclaration())
      continue;
    std::vector<std::string> &names = result[function.getName().str()];
    for (llvm::Argument &argument : function.args()) {
      std::string name = argument.getName().str();
      if (llvm::Type *byval = argument.getParamByValType())
        appendLeafNames(byval, name, names);
      else
        appendLeafNames(argument.getType(), name, names);
    }
  }
  return result;
}
