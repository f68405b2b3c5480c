//===- CallChunks.cpp - Long call sequences split into functions ----------===//
//
// ptxas's time on one function grows with the square of the calls it makes:
// a function of 8,000 calls of a one-line device function took 12 s to
// assemble, the same calls in 32 functions of 250 took 1 s (`ptxas -c`,
// CUDA 13.0). A gradient of a few thousand ops with its device-library
// functions out of line (a sin's derivative is a cos) makes thousands of calls
// from one block. Such a block is cut after every `callsPerChunk` calls and
// each piece but the first and the last becomes a function of its own, which
// the block calls in order (LLVM's CodeExtractor: the values a piece reads
// from before it are its parameters, those read after it are returned through
// pointers). Run after CallCrossingValues, a piece's interface is small: the
// values that live across many calls are already in the stack frame, only its
// base crosses.
//
//===----------------------------------------------------------------------===//

#include "CallChunks.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Attributes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"

using namespace llvm;

bool nabla::isBackEndCall(const Instruction &instruction) {
  const auto *call = dyn_cast<CallBase>(&instruction);
  if (!call || call->isInlineAsm())
    return false;
  const Function *callee = call->getCalledFunction();
  return !callee || !callee->isIntrinsic();
}

namespace {

/// Cuts `block` after every `callsPerChunk` calls; returns the pieces
/// between the first and the last (none when it makes at most twice as many
/// calls).
SmallVector<BasicBlock *> cutBlock(BasicBlock &block, int64_t callsPerChunk) {
  SmallVector<Instruction *> cuts;
  int64_t calls = 0;
  for (Instruction &instruction : block)
    if (nabla::isBackEndCall(instruction) && !instruction.isTerminator() &&
        ++calls % callsPerChunk == 0)
      cuts.push_back(instruction.getNextNode());
  if (calls <= 2 * callsPerChunk)
    return {};
  SmallVector<BasicBlock *> pieces;
  BasicBlock *current = &block;
  for (Instruction *cut : cuts) {
    current = current->splitBasicBlock(cut, block.getName() + ".calls");
    pieces.push_back(current);
  }
  // The last piece holds the terminator and stays.
  pieces.pop_back();
  return pieces;
}

int64_t splitFunction(Function &function, int64_t callsPerChunk) {
  SmallVector<BasicBlock *> blocks;
  for (BasicBlock &block : function)
    blocks.push_back(&block);
  SmallVector<BasicBlock *> pieces;
  for (BasicBlock *block : blocks)
    pieces.append(cutBlock(*block, callsPerChunk));
  if (pieces.empty())
    return 0;
  CodeExtractorAnalysisCache cache(function);
  int64_t made = 0;
  for (BasicBlock *piece : pieces) {
    CodeExtractor extractor({piece}, /*DT=*/nullptr, /*AggregateArgs=*/false,
                            /*BFI=*/nullptr, /*BPI=*/nullptr, /*AC=*/nullptr,
                            /*AllowVarArgs=*/false, /*AllowAlloca=*/false,
                            /*AllocationBlock=*/nullptr, "calls");
    if (!extractor.isEligible())
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
