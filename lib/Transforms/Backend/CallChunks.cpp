//===- CallChunks.cpp - Long call sequences split into functions ----------===//
//
// ptxas's time on one function grows with the square of the calls it makes
// (and of its size): a function of 8,000 calls of a one-line device function
// took 12 s to assemble, the same calls in 32 functions of 250 took 1 s
// (`ptxas -c`, CUDA 13.0). A gradient of a few thousand ops with its
// device-library functions out of line (a sin's derivative is a cos) makes
// thousands of calls, from one block when straight-line, from hundreds of
// loops one after the other when the primal has them.
//
// A function making more than twice `callsPerChunk` calls is split: first
// each block making more than that is cut after every `callsPerChunk` calls
// (a straight run becomes a chain of blocks); then the blocks every path to
// a return passes through (the dominators of the returns) divide the function
// into runs with one entry and one exit, and consecutive runs are grouped
// until a group makes `callsPerChunk` calls. Each group but the one holding
// the entry block and the one holding the returns becomes a function of its
// own, which the function calls in its place (LLVM's CodeExtractor: the
// values a group reads from before it are its parameters, those read after
// it are returned through pointers). Run after CallCrossingValues, a group's
// interface is small: the values living across many calls are already in
// the stack frame, only its base crosses.
//
//===----------------------------------------------------------------------===//

#include "CallChunks.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Attributes.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"

#include <algorithm>

using namespace llvm;

bool nabla::isBackEndCall(const Instruction &instruction) {
  const auto *call = dyn_cast<CallBase>(&instruction);
  if (!call || call->isInlineAsm())
    return false;
  const Function *callee = call->getCalledFunction();
  return !callee || !callee->isIntrinsic();
}

namespace {

int64_t countCalls(const BasicBlock &block) {
  return llvm::count_if(block, [](const Instruction &instruction) {
    return nabla::isBackEndCall(instruction);
  });
}

/// Cuts each block making more than `callsPerChunk` calls after every
/// `callsPerChunk`-th call: a straight run becomes a chain of blocks.
void cutLongBlocks(Function &function, int64_t callsPerChunk) {
  SmallVector<BasicBlock *> blocks;
  for (BasicBlock &block : function)
    if (countCalls(block) > callsPerChunk)
      blocks.push_back(&block);
  for (BasicBlock *block : blocks) {
    SmallVector<Instruction *> cuts;
    int64_t calls = 0;
    for (Instruction &instruction : *block)
      if (nabla::isBackEndCall(instruction) && !instruction.isTerminator() &&
          ++calls % callsPerChunk == 0)
        cuts.push_back(instruction.getNextNode());
    BasicBlock *current = block;
    for (Instruction *cut : cuts)
      current = current->splitBasicBlock(cut, block->getName() + ".calls");
  }
}

/// The regions to extract from `function`: runs of the blocks between two
/// blocks that every path to a return passes through (so each run has one
/// entry and one exit), each run making at least `callsPerChunk` calls; the
/// run holding the entry block and the one holding the returns stay. The
/// first block of each region is its entry.
SmallVector<SmallVector<BasicBlock *>> findRegions(Function &function,
                                                   int64_t callsPerChunk) {
  DominatorTree tree(function);
  BasicBlock *last = nullptr;
  for (BasicBlock &block : function)
    if (isa<ReturnInst>(block.getTerminator()) && tree.getNode(&block))
      last = last ? tree.findNearestCommonDominator(last, &block) : &block;
  if (!last)
    return {};
  // The chain of blocks every run passes through, from the entry.
  SmallVector<BasicBlock *> chain;
  for (DomTreeNode *node = tree.getNode(last); node; node = node->getIDom())
    chain.push_back(node->getBlock());
  std::reverse(chain.begin(), chain.end());
  DenseMap<BasicBlock *, unsigned> link;
  for (auto [index, block] : llvm::enumerate(chain))
    link[block] = index;
  // Segment i: the blocks whose nearest dominator on the chain is chain[i].
  SmallVector<SmallVector<BasicBlock *>> segments(chain.size());
  SmallVector<int64_t> calls(chain.size(), 0);
  for (BasicBlock &block : function) {
    DomTreeNode *node = tree.getNode(&block);
    if (!node)
      return {}; // An unreachable block: leave the function alone.
    while (!link.count(node->getBlock()))
      node = node->getIDom();
    unsigned index = link[node->getBlock()];
    segments[index].push_back(&block);
    calls[index] += countCalls(block);
  }
  SmallVector<SmallVector<BasicBlock *>> regions;
  SmallVector<BasicBlock *> region;
  int64_t regionCalls = 0;
  for (unsigned index = 1; index + 1 < chain.size(); ++index) {
    // The chain block first: the region's entry.
    llvm::append_range(region, segments[index]);
    std::stable_partition(region.end() - segments[index].size(), region.end(),
                          [&](BasicBlock *b) { return b == chain[index]; });
    regionCalls += calls[index];
    if (regionCalls >= callsPerChunk) {
      regions.push_back(std::move(region));
      region.clear();
      regionCalls = 0;
    }
  }
  return regions;
}

/// Whether only `region`'s first block is entered from outside it (a block
/// that never returns, reached from two runs, would break that).
bool hasSingleEntry(ArrayRef<BasicBlock *> region) {
  SmallPtrSet<BasicBlock *, 32> inside(region.begin(), region.end());
  return llvm::all_of(region.drop_front(), [&](BasicBlock *block) {
    return llvm::all_of(predecessors(block), [&](BasicBlock *predecessor) {
      return inside.contains(predecessor);
    });
  });
}

int64_t splitFunction(Function &function, int64_t callsPerChunk) {
  int64_t total = 0;
  for (BasicBlock &block : function)
    total += countCalls(block);
  if (total <= 2 * callsPerChunk)
    return 0;
  cutLongBlocks(function, callsPerChunk);
  SmallVector<SmallVector<BasicBlock *>> regions =
      findRegions(function, callsPerChunk);
  if (regions.empty())
    return 0;
  CodeExtractorAnalysisCache cache(function);
  int64_t made = 0;
  for (ArrayRef<BasicBlock *> region : regions) {
    CodeExtractor extractor(region, /*DT=*/nullptr, /*AggregateArgs=*/false,
                            /*BFI=*/nullptr, /*BPI=*/nullptr, /*AC=*/nullptr,
                            /*AllowVarArgs=*/false, /*AllowAlloca=*/false,
                            /*AllocationBlock=*/nullptr, "calls");
    if (!hasSingleEntry(region) || !extractor.isEligible())
      continue;
    Function *chunk = extractor.extractCodeRegion(cache);
    if (!chunk)
      continue;
    // A device function, whatever the block's function was (a kernel's
    // calling convention and launch bounds are not a piece's).
    chunk->setCallingConv(CallingConv::C);
    chunk->removeFnAttr("nvvm.maxntid");
    chunk->removeFnAttr("nvvm.reqntid");
    chunk->removeFnAttr("nvvm.minctasm");
    chunk->removeFnAttr("amdgpu-flat-work-group-size");
    chunk->addFnAttr(Attribute::NoInline);
    for (User *user : chunk->users())
      if (auto *call = dyn_cast<CallBase>(user))
        call->setCallingConv(CallingConv::C);
    ++made;
  }
  return made;
}

} // namespace

int64_t nabla::splitLongCallSequences(Module &module, int64_t callsPerChunk) {
  if (callsPerChunk <= 0)
    return 0;
  SmallVector<Function *> functions;
  for (Function &function : module)
    if (!function.isDeclaration())
      functions.push_back(&function);
  int64_t made = 0;
  for (Function *function : functions)
    made += splitFunction(*function, callsPerChunk);
  return made;
}
