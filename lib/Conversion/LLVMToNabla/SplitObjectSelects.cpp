//===- SplitObjectSelects.cpp - Pointers that select between objects ------===//
//
// The raise gives every pointer one root buffer and an element offset into
// it. A pointer that selects between two objects (`const float *src = flip ?
// a : b;`) has no such form, so each access through it is split before the
// raise: the select is pushed through the address computations that follow
// it (a GEP of a select is a select of GEPs), and a load, store or atomic
// whose address selects between two objects becomes a branch on the
// condition with the access on each side (the raise lifts it to scf.if).
// Nothing is speculated: only the selected side's access runs. A select
// between offsets into one object keeps its form.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace {

/// The object `pointer` points into, as far as address computations show:
/// the value before GEPs and casts.
Value getBaseObject(Value pointer) {
  while (Operation *def = pointer.getDefiningOp()) {
    if (!isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def))
      break;
    pointer = def->getOperand(0);
  }
  return pointer;
}

bool selectsBetweenObjects(LLVM::SelectOp select) {
  return isa<LLVM::LLVMPointerType>(select.getType()) &&
         getBaseObject(select.getTrueValue()) !=
             getBaseObject(select.getFalseValue());
}

/// A GEP or cast of `select` becomes a select of the GEP or cast of each
/// side; returns the selects made.
SmallVector<LLVM::SelectOp> sinkThroughAddressing(LLVM::SelectOp select) {
  SmallVector<LLVM::SelectOp> made;
  for (OpOperand &use : llvm::make_early_inc_range(select->getUses())) {
    Operation *user = use.getOwner();
    if (!isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(user) ||
        use.getOperandNumber() != 0)
      continue;
    OpBuilder builder(user);
    Operation *onTrue = builder.clone(*user);
    onTrue->setOperand(0, select.getTrueValue());
    Operation *onFalse = builder.clone(*user);
    onFalse->setOperand(0, select.getFalseValue());
    auto sunk = LLVM::SelectOp::create(
        builder, user->getLoc(), select.getCondition(), onTrue->getResult(0),
        onFalse->getResult(0));
    user->getResult(0).replaceAllUsesWith(sunk.getResult());
    user->erase();
    made.push_back(sunk);
  }
  return made;
}

/// The address operand of a memory access the split handles.
OpOperand *getAddressOperand(Operation *op) {
  if (auto load = dyn_cast<LLVM::LoadOp>(op))
    return &load.getAddrMutable();
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return &store.getAddrMutable();
  if (auto atomic = dyn_cast<LLVM::AtomicRMWOp>(op))
    return &atomic.getPtrMutable();
  return nullptr;
}

/// Branches on `select`'s condition around `access`, with the access of
/// each side in its own block.
void splitAccess(Operation *access, LLVM::SelectOp select) {
  Location loc = access->getLoc();
  Block *before = access->getBlock();
  Block *after = before->splitBlock(access);
  Region *region = before->getParent();
  auto *onTrue = new Block();
  auto *onFalse = new Block();
  region->getBlocks().insert(after->getIterator(), onTrue);
  region->getBlocks().insert(after->getIterator(), onFalse);
  OpBuilder builder = OpBuilder::atBlockEnd(before);
  LLVM::CondBrOp::create(builder, loc, select.getCondition(), onTrue,
                         onFalse);
  Value result;
  if (access->getNumResults())
    result = after->addArgument(access->getResult(0).getType(), loc);
  unsigned addressIndex = getAddressOperand(access)->getOperandNumber();
  for (auto [block, address] :
       {std::make_pair(onTrue, select.getTrueValue()),
        std::make_pair(onFalse, select.getFalseValue())}) {
    builder.setInsertionPointToEnd(block);
    Operation *side = builder.clone(*access);
    side->setOperand(addressIndex, address);
    LLVM::BrOp::create(builder, loc, side->getResults(), after);
  }
  if (result)
    access->getResult(0).replaceAllUsesWith(result);
  access->erase();
}

} // namespace

void nabla::raise::splitObjectSelects(ModuleOp module) {
  SmallVector<LLVM::SelectOp> worklist;
  module.walk([&](LLVM::SelectOp select) {
    if (selectsBetweenObjects(select))
      worklist.push_back(select);
  });
  while (!worklist.empty()) {
    LLVM::SelectOp select = worklist.pop_back_val();
    for (LLVM::SelectOp sunk : sinkThroughAddressing(select))
      worklist.push_back(sunk);
    for (Operation *user : llvm::to_vector(select->getUsers())) {
      OpOperand *address = getAddressOperand(user);
      if (!address || address->get() != select.getResult())
        continue;
      // A store of the selected pointer itself is not an access through it.
      if (auto store = dyn_cast<LLVM::StoreOp>(user);
          store && store.getValue() == select.getResult())
        continue;
      splitAccess(user, select);
    }
    if (select->use_empty())
      select->erase();
    // Other uses (a call, a comparison) stay: the planner names them.
  }
}
