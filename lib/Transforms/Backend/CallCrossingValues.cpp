//===- CallCrossingValues.cpp - Values kept across many calls, in memory --===//
//
// The reverse sweep of a long straight-line computation reads what its
// forward sweep computed, in the opposite order: the value the first sin
// received is read last. When the device library's functions stay out of line
// (nabla-module-to-binary's `outline-calls`), each of those values lives across
// every call in between: at 2000 ops, 667 values across 1300 calls. ptxas's
// time on such a function grows with the product (the gradient's 12,700 PTX
// lines took 1.8 s to assemble against 0.15 s for its primal's 6,000, and 131 s
// at 8000 ops; -O0 did not help much: 7.5 s), and so does LLVM's register
// allocator on AMDGPU.
//
// Such a value goes to the stack frame instead: a volatile store right after
// its definition, a volatile load before each use that a call separates from
// the value's previous definition or load. The registers across each call
// are then the few values used next; what the assembler would have spilled
// anyway is in local memory from the start. Volatile, because the back ends'
// own SROA would otherwise promote the slots back into registers. A value
// whose uses are all in its own block (its live range one stretch of that
// block) moves when it crosses more than `threshold` calls there; slots are
// reused once a value's last use is past. A value read in other blocks (a
// preaccumulated loop's derivative, read by the reverse sweep after hundreds
// of loops) moves when more than `threshold` calls lie between it and a use
// in the function's layout, into a slot of its own; it is loaded before each
// such use (for a phi, at the end of the incoming block). Kernels whose values
// cross few calls are left alone.
//
//===----------------------------------------------------------------------===//

#include "CallCrossingValues.h"
#include "CallChunks.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

#include <map>
#include <utility>

using namespace llvm;

namespace {

/// A value a plain load and store can carry.
bool isStorable(const Instruction &value) {
  Type *type = value.getType();
  return !type->isVoidTy() && !type->isTokenTy() && type->isSized() &&
         !type->isAggregateType() && !isa<AllocaInst>(value) &&
         !value.isTerminator() && !value.isEHPad() && !value.use_empty();
}

/// Whether the live range of `value` is one stretch of its block.
bool isBlockLocal(const Instruction &value) {
  return llvm::all_of(value.users(), [&](const User *user) {
    const auto *instruction = dyn_cast<Instruction>(user);
    return instruction && instruction->getParent() == value.getParent() &&
           !isa<PHINode>(instruction);
  });
}

bool isMovable(const Instruction &value) {
  return isStorable(value) && isBlockLocal(value);
}

/// A user of a value to move: its position in the block, and whether a call
/// separates it from the user before it (or from the definition), so that
/// it reads the value from memory.
struct CrossingUse {
  unsigned position;
  Instruction *user;
  bool reload = false;
};

/// One value to move, with its users in block order.
struct Crossing {
  Instruction *value;
  unsigned definition;
  SmallVector<CrossingUse> users;
  uint64_t offset = 0;
};

/// The values of `block` crossing more than `threshold` calls, in
/// definition order, with `callsBefore[i]` the number of calls among the
/// block's first i instructions.
SmallVector<Crossing> findCrossings(BasicBlock &block, int64_t threshold) {
  DenseMap<const Instruction *, unsigned> position;
  SmallVector<unsigned> callsBefore{0};
  for (Instruction &instruction : block) {
    position[&instruction] = callsBefore.size() - 1;
    callsBefore.push_back(callsBefore.back() +
                          nabla::isBackEndCall(instruction));
  }
  SmallVector<Crossing> crossings;
  if (callsBefore.back() <= static_cast<uint64_t>(threshold))
    return crossings;
  for (Instruction &instruction : block) {
    if (!isMovable(instruction) || instruction.use_empty())
      continue;
    Crossing crossing{&instruction, position[&instruction], {}};
    for (User *user : instruction.users()) {
      auto *userInstruction = cast<Instruction>(user);
      crossing.users.push_back({position[userInstruction], userInstruction});
    }
    auto byPosition = [](const CrossingUse &a, const CrossingUse &b) {
      return a.position < b.position;
    };
    llvm::sort(crossing.users, byPosition);
    crossing.users.erase(
        llvm::unique(crossing.users,
                     [](const CrossingUse &a, const CrossingUse &b) {
                       return a.user == b.user;
                     }),
        crossing.users.end());
    unsigned last = crossing.users.back().position;
    if (callsBefore[last] - callsBefore[crossing.definition + 1] <=
        static_cast<uint64_t>(threshold))
      continue;
    unsigned previous = crossing.definition;
    for (CrossingUse &use : crossing.users) {
      use.reload = callsBefore[use.position] != callsBefore[previous + 1];
      previous = use.position;
    }
    crossings.push_back(std::move(crossing));
  }
  return crossings;
}

/// Frame offsets for `crossings` (one block's, in definition order), reusing
/// the slot of a value whose last use came before; returns the bytes used.
uint64_t assignSlots(MutableArrayRef<Crossing> crossings,
                     const DataLayout &layout) {
  uint64_t frameEnd = 0;
  // Free slots and live ones by (size, alignment).
  std::map<std::pair<uint64_t, uint64_t>, SmallVector<uint64_t>> free;
  std::multimap<unsigned, std::pair<std::pair<uint64_t, uint64_t>, uint64_t>>
      live;
  for (Crossing &crossing : crossings) {
    unsigned definition = crossing.definition;
    while (!live.empty() && live.begin()->first < definition) {
      free[live.begin()->second.first].push_back(live.begin()->second.second);
      live.erase(live.begin());
    }
    Type *type = crossing.value->getType();
    uint64_t size = layout.getTypeStoreSize(type).getFixedValue();
    uint64_t align = layout.getPrefTypeAlign(type).value();
    std::pair<uint64_t, uint64_t> key{size, align};
    SmallVector<uint64_t> &slots = free[key];
    if (!slots.empty()) {
      crossing.offset = slots.pop_back_val();
    } else {
      frameEnd = alignTo(frameEnd, align);
      crossing.offset = frameEnd;
      frameEnd += size;
    }
    live.insert({crossing.users.back().position, {key, crossing.offset}});
  }
  return frameEnd;
}

/// Moves `crossings` into the frame `base`.
void moveToFrame(ArrayRef<Crossing> crossings, Value *base) {
  for (const Crossing &crossing : crossings) {
    Instruction *value = crossing.value;
    Type *type = value->getType();
    IRBuilder<> builder(value->getContext());
    if (isa<PHINode>(value))
      builder.SetInsertPoint(value->getParent(),
                             value->getParent()->getFirstInsertionPt());
    else
      builder.SetInsertPoint(value->getNextNode());
    // The slot's address is computed next to each access (it folds into the
    // access's addressing), so that nothing but the frame's base lives across
    // the calls (and into CallChunks' functions).
    auto slot = [&] {
      return builder.CreateConstInBoundsGEP1_64(
          builder.getInt8Ty(), base, crossing.offset, "crossing.slot");
    };
    builder.CreateStore(value, slot(), /*isVolatile=*/true);
    Value *current = value;
    for (const CrossingUse &use : crossing.users) {
      if (use.reload) {
        builder.SetInsertPoint(use.user);
        current = builder.CreateLoad(type, slot(), /*isVolatile=*/true,
                                     value->getName() + ".reload");
      }
      use.user->replaceUsesOfWith(value, current);
    }
  }
}

/// The values of `function` used outside their block (or by a phi) that
/// more than `threshold` calls separate from a use, counted in the
/// function's layout order (a use laid out before its value, in a loop, is
/// separated by the calls after the value and those before the use).
SmallVector<Instruction *> findWideCrossings(Function &function,
                                             int64_t threshold) {
  DenseMap<const Instruction *, unsigned> position;
  SmallVector<unsigned> callsBefore{0};
  for (BasicBlock &block : function)
    for (Instruction &instruction : block) {
      position[&instruction] = callsBefore.size() - 1;
      callsBefore.push_back(callsBefore.back() +
                            nabla::isBackEndCall(instruction));
    }
  SmallVector<Instruction *> wide;
  unsigned total = callsBefore.back();
  if (total <= static_cast<uint64_t>(threshold))
    return wide;
  for (BasicBlock &block : function)
    for (Instruction &instruction : block) {
      if (!isStorable(instruction) || isBlockLocal(instruction))
        continue;
      unsigned definition = position[&instruction];
      unsigned crossed = 0;
      for (Use &use : instruction.uses()) {
        auto *user = cast<Instruction>(use.getUser());
        if (auto *phi = dyn_cast<PHINode>(user))
          user = phi->getIncomingBlock(use)->getTerminator();
        unsigned at = position[user];
        unsigned between =
            at > definition
                ? callsBefore[at] - callsBefore[definition + 1]
                : total - callsBefore[definition + 1] + callsBefore[at];
        crossed = std::max(crossed, between);
      }
      if (crossed > static_cast<uint64_t>(threshold))
        wide.push_back(&instruction);
    }
  return wide;
}

/// Moves `value` (from findWideCrossings) to the frame slot at `offset`: a
/// load before each use outside its block (for a phi, at the end of the
/// incoming block) or after a call in its block.
void moveWideToFrame(Instruction *value, uint64_t offset, Value *base) {
  Type *type = value->getType();
  IRBuilder<> builder(value->getContext());
  auto slot = [&] {
    return builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), base, offset,
                                              "crossing.slot");
  };
  BasicBlock *home = value->getParent();
  if (isa<PHINode>(value))
    builder.SetInsertPoint(home, home->getFirstInsertionPt());
  else
    builder.SetInsertPoint(value->getNextNode());
  builder.CreateStore(value, slot(), /*isVolatile=*/true);
  SmallVector<Use *> uses;
  for (Use &use : value->uses())
    uses.push_back(&use);
  for (Use *use : uses) {
    auto *user = cast<Instruction>(use->getUser());
    Instruction *before = user;
    if (auto *phi = dyn_cast<PHINode>(user)) {
      before = phi->getIncomingBlock(*use)->getTerminator();
    } else if (user->getParent() == home && value->comesBefore(user)) {
      bool call = false;
      for (Instruction *at = value->getNextNode(); at != user;
           at = at->getNextNode())
        call |= nabla::isBackEndCall(*at);
      if (!call)
        continue;
    }
    builder.SetInsertPoint(before);
    use->set(builder.CreateLoad(type, slot(), /*isVolatile=*/true,
                                value->getName() + ".reload"));
  }
}

int64_t moveInFunction(Function &function, int64_t threshold) {
  const DataLayout &layout = function.getParent()->getDataLayout();
  SmallVector<SmallVector<Crossing>> perBlock;
  uint64_t frameSize = 0;
  for (BasicBlock &block : function) {
    SmallVector<Crossing> crossings = findCrossings(block, threshold);
    if (crossings.empty())
      continue;
    // Blocks' stretches never overlap in time: each block starts the frame
    // afresh.
    frameSize = std::max(frameSize, assignSlots(crossings, layout));
    perBlock.push_back(std::move(crossings));
  }
  // Values living across blocks get slots of their own, after those.
  SmallVector<std::pair<Instruction *, uint64_t>> wide;
  for (Instruction *value : findWideCrossings(function, threshold)) {
    Type *type = value->getType();
    frameSize = alignTo(frameSize, layout.getPrefTypeAlign(type));
    wide.push_back({value, frameSize});
    frameSize += layout.getTypeStoreSize(type).getFixedValue();
  }
  if (perBlock.empty() && wide.empty())
    return 0;
  BasicBlock &entry = function.getEntryBlock();
  IRBuilder<> builder(&entry, entry.getFirstInsertionPt());
  AllocaInst *frame = builder.CreateAlloca(
      ArrayType::get(builder.getInt8Ty(), frameSize),
      layout.getAllocaAddrSpace(), nullptr, "crossing.frame");
  frame->setAlignment(Align(16));
  int64_t moved = wide.size();
  for (const SmallVector<Crossing> &crossings : perBlock) {
    moveToFrame(crossings, frame);
    moved += crossings.size();
  }
  for (auto [value, offset] : wide)
    moveWideToFrame(value, offset, frame);
  return moved;
}

} // namespace

int64_t nabla::keepCallCrossingValuesInMemory(Module &module,
                                              int64_t threshold) {
  if (threshold <= 0)
    return 0;
  int64_t moved = 0;
  for (Function &function : module)
    if (!function.isDeclaration())
      moved += moveInFunction(function, threshold);
  return moved;
}
