//===- KernelNames.h - Kernels and parameters by source names ---*- C++ -*-===//
//
// A frontend's kernels keep their LLVM names, which for C++ sources are
// mangled (`_Z10mul_kernelPfi`). These helpers let users name a kernel as
// the source does (`mul_kernel`, `ns::scale<float>`, or the full signature
// `mul_kernel(float*, int)` among overloads), and recover the source names of
// a kernel's parameters from the LLVM IR, which the raised MLIR does not
// keep: the launchers quote them in their messages.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_FRONTEND_KERNELNAMES_H
#define NABLA_FRONTEND_KERNELNAMES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <map>
#include <string>
#include <vector>

namespace nabla {

/// The C++ reading of an IR function name (`mul_kernel(float*, int)`); the
/// name itself when it is not a mangled C++ name.
std::string getDemangledName(llvm::StringRef symbol);

/// Whether `name` designates the function `symbol`: it is the symbol, or
/// the demangled function name with or without its template arguments and
/// enclosing scopes (`ns::scale<float>`, `ns::scale`, `scale`), or the
/// signature with its parameter list (`ns::scale<float>(float*, int)`, also
/// with the return type templates demangle with).
bool kernelNameMatches(llvm::StringRef symbol, llvm::StringRef name);

/// The kernel of `kernels` (IR names) that `name` designates: `name` itself
/// when it is one, else the only kernel it matches. An error lists the
/// kernels (demangled) when it matches none or several.
llvm::Expected<std::string>
resolveKernelName(llvm::ArrayRef<std::string> kernels, llvm::StringRef name);

/// The kernels defined in an LLVM dialect module (as importLLVMIR makes it):
/// the functions with a kernel calling convention or attribute.
std::vector<std::string> getLLVMKernelNames(mlir::ModuleOp module);

/// {function: parameter names} of every function defined in the LLVM IR
/// (text or bitcode), in the order the raise passes the parameters: a byval
/// or aggregate parameter `a` by its scalar leaves `a.0`, `a.1`, ... (nested
/// structs and arrays flattened, `a.1.0`); an unnamed parameter is "". Empty
/// when the IR does not parse.
std::map<std::string, std::vector<std::string>>
getParameterNames(llvm::MemoryBufferRef llvmIR);

} // namespace nabla

#endif // NABLA_FRONTEND_KERNELNAMES_H
