//===- ProgramHeap.h - The heap of a host program nabla-run runs -*- C++ -*-===//
//
// A host program's own code allocates with the C library (memref.alloc
// becomes malloc or aligned_alloc) and, like upstream's GPU integration
// tests, often never frees. nabla-run resolves the program's allocation
// functions to ones that record each live block and, once the program has
// returned and its module destructors have run, frees what is left: a
// program's leaks end with its run instead of being the tool's (they would
// fail LeakSanitizer in scripts/sanitize.sh). Memory that the runtime
// libraries allocate is theirs and untouched.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TOOLS_NABLA_RUN_PROGRAMHEAP_H
#define NABLA_TOOLS_NABLA_RUN_PROGRAMHEAP_H

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

namespace nabla {

/// The C library allocation functions (malloc, calloc, realloc, free,
/// aligned_alloc, posix_memalign) as recording versions, for
/// ExecutionEngine::registerSymbols.
llvm::orc::SymbolMap programHeapSymbols(llvm::orc::MangleAndInterner interner);

/// Frees every block the program allocated and did not free; returns how
/// many there were.
size_t releaseProgramHeap();

} // namespace nabla

#endif // NABLA_TOOLS_NABLA_RUN_PROGRAMHEAP_H
