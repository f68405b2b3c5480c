//===- ProgramHeap.cpp - The heap of a host program nabla-run runs --------===//
//
// Blocks are recorded in a set under a mutex: async.execute regions run the
// program's code on the async runtime's worker threads.
//
//===----------------------------------------------------------------------===//

#include "ProgramHeap.h"

#include "llvm/ExecutionEngine/Orc/Shared/ExecutorSymbolDef.h"

#include <cstdlib>
#include <mutex>
#include <unordered_set>

namespace {

struct LiveBlocks {
  std::mutex mutex;
  std::unordered_set<void *> blocks;
};

LiveBlocks &live() {
  // Never destroyed: the program's threads may outlive static destructors.
  static LiveBlocks *blocks = new LiveBlocks;
  return *blocks;
}

void *record(void *block) {
  if (block) {
    std::lock_guard<std::mutex> lock(live().mutex);
    live().blocks.insert(block);
  }
  return block;
}

void forget(void *block) {
  if (!block)
    return;
  std::lock_guard<std::mutex> lock(live().mutex);
  live().blocks.erase(block);
}

extern "C" {

void *nablaProgramMalloc(size_t bytes) { return record(std::malloc(bytes)); }

void *nablaProgramCalloc(size_t count, size_t bytes) {
  return record(std::calloc(count, bytes));
}

void *nablaProgramRealloc(void *block, size_t bytes) {
  // Forgotten first: once realloc has freed it, another thread may be given
  // the same address.
  forget(block);
  void *moved = std::realloc(block, bytes);
  // A failed realloc leaves `block` allocated.
  record(moved || bytes == 0 ? moved : block);
  return moved;
}

void *nablaProgramAlignedAlloc(size_t alignment, size_t bytes) {
  return record(std::aligned_alloc(alignment, bytes));
}

int nablaProgramPosixMemalign(void **block, size_t alignment, size_t bytes) {
  int status = posix_memalign(block, alignment, bytes);
  if (status == 0)
    record(*block);
  return status;
}

void nablaProgramFree(void *block) {
  forget(block);
  std::free(block);
}

} // extern "C"

} // namespace

llvm::orc::SymbolMap
nabla::programHeapSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char *name, auto *function) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                               llvm::JITSymbolFlags::Exported};
  };
  add("malloc", &nablaProgramMalloc);
  add("calloc", &nablaProgramCalloc);
  add("realloc", &nablaProgramRealloc);
  add("aligned_alloc", &nablaProgramAlignedAlloc);
  add("posix_memalign", &nablaProgramPosixMemalign);
  add("free", &nablaProgramFree);
  return symbols;
}

size_t nabla::releaseProgramHeap() {
  std::lock_guard<std::mutex> lock(live().mutex);
  size_t count = live().blocks.size();
  for (void *block : live().blocks)
    std::free(block);
  live().blocks.clear();
  return count;
}
