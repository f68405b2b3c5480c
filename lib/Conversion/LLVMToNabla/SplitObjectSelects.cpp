//===- SplitObjectSelects.cpp - Pointers that select between objects ------===//
//
// The raise gives every pointer one root buffer and an element offset into
// it. A pointer that selects between two objects (`const float *src = flip ?
// a : b;`) has no such form, so each access through it is split before the
// raise: the select is pushed through the address computations that follow
// it (a GEP of a select is a select of GEPs), and a load, store or atomic
// whose address selects between two objects becomes a branch on the
// condition with the access on each side (the raise lifts it to scf.if).
// Nothing is speculated: only the selected side's access runs. A pointer
// phi among several objects (control flow picking a buffer) first becomes
// selects on a phi of which object was chosen. A select between offsets
// into one object keeps its form.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using nabla::raise::getBaseObject;

namespace {

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

/// A pointer that is the same everywhere in `func`: an argument, an alloca
/// of the entry block or a global's address (rematerialized before `at`),
/// cast to `type`; null for other objects.
Value materializeObject(Value object, Type type, Operation *at) {
  OpBuilder builder(at);
  Location loc = at->getLoc();
  Value pointer;
  if (auto argument = dyn_cast<BlockArgument>(object)) {
    if (!argument.getOwner()->isEntryBlock())
      return nullptr;
    pointer = argument;
  } else if (auto alloca = object.getDefiningOp<LLVM::AllocaOp>()) {
    if (!alloca->getBlock()->isEntryBlock())
      return nullptr;
    pointer = alloca;
  } else if (auto address = object.getDefiningOp<LLVM::AddressOfOp>()) {
    pointer = LLVM::AddressOfOp::create(builder, loc, address.getType(),
                                        address.getGlobalName());
  } else {
    return nullptr;
  }
  if (pointer.getType() == type)
    return pointer;
  return LLVM::AddrSpaceCastOp::create(builder, loc, type, pointer);
}

/// A pointer phi between several objects (control flow choosing a buffer:
/// a stencil's neighbour from one of several shared arrays) becomes one
/// phi per object, each passing its object's pointer where another was
/// chosen, a phi of which object was chosen, and a chain of selects on it,
/// which the access splitting then turns into branches.
void splitObjectPhis(LLVM::LLVMFuncOp func) {
  constexpr unsigned kMaxObjects = 8;
  SmallVector<BlockArgument> phis;
  for (Block &block : llvm::drop_begin(func.getBody()))
    for (BlockArgument argument : block.getArguments())
      if (isa<LLVM::LLVMPointerType>(argument.getType()))
        phis.push_back(argument);
  for (BlockArgument phi : llvm::reverse(phis)) {
    Block *block = phi.getOwner();
    unsigned index = phi.getArgNumber();
    // The incoming values and the objects they point into.
    struct Edge {
      BranchOpInterface branch;
      unsigned successor;
      Value value;
    };
    SmallVector<Edge> edges;
    SmallVector<Value> objects;
    bool usable = true;
    for (auto it = block->pred_begin(); it != block->pred_end(); ++it) {
      auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
      if (!branch) {
        usable = false;
        break;
      }
      SuccessorOperands operands =
          branch.getSuccessorOperands(it.getSuccessorIndex());
      if (index < operands.getProducedOperandCount()) {
        usable = false;
        break;
      }
      Value value = operands[index];
      edges.push_back({branch, it.getSuccessorIndex(), value});
      Value object = getBaseObject(value);
      if (!llvm::is_contained(objects, object))
        objects.push_back(object);
    }
    if (!usable || objects.size() < 2 || objects.size() > kMaxObjects ||
        llvm::any_of(objects, [&](Value o) { return o == phi; }))
      continue;
    // Every object must be nameable on every edge.
    SmallVector<SmallVector<Value>> perEdge;
    for (Edge &edge : edges) {
      SmallVector<Value> passed;
      for (Value object : objects) {
        if (getBaseObject(edge.value) == object) {
          passed.push_back(edge.value);
          continue;
        }
        Value stand = materializeObject(object, phi.getType(), edge.branch);
        if (!stand) {
          usable = false;
          break;
        }
        passed.push_back(stand);
      }
      if (!usable)
        break;
      OpBuilder builder(edge.branch);
      int32_t chosen =
          llvm::find(objects, getBaseObject(edge.value)) - objects.begin();
      passed.push_back(LLVM::ConstantOp::create(
          builder, edge.branch.getLoc(), builder.getI32Type(),
          builder.getI32IntegerAttr(chosen)));
      perEdge.push_back(std::move(passed));
    }
    if (!usable)
      continue; // the planner names the phi
    // New arguments after the existing ones; then the phi goes.
    Location loc = phi.getLoc();
    SmallVector<Value> perObject;
    for (size_t k = 0; k < objects.size(); ++k)
      perObject.push_back(block->addArgument(phi.getType(), loc));
    Value which =
        block->addArgument(IntegerType::get(func.getContext(), 32), loc);
    for (auto [edge, passed] : llvm::zip(edges, perEdge)) {
      MutableOperandRange range =
          edge.branch.getSuccessorOperands(edge.successor)
              .getMutableForwardedOperands();
      auto values = llvm::to_vector(OperandRange(range));
      llvm::append_range(values, passed);
      range.assign(values);
    }
    OpBuilder builder = OpBuilder::atBlockBegin(block);
    Value chosen = perObject.back();
    for (int k = static_cast<int>(objects.size()) - 2; k >= 0; --k) {
      Value is = LLVM::ICmpOp::create(
          builder, loc, LLVM::ICmpPredicate::eq, which,
          LLVM::ConstantOp::create(builder, loc, builder.getI32Type(),
                                   builder.getI32IntegerAttr(k)));
      chosen = LLVM::SelectOp::create(builder, loc, is, perObject[k], chosen);
    }
    phi.replaceAllUsesWith(chosen);
    for (Edge &edge : edges) {
      MutableOperandRange range =
          edge.branch.getSuccessorOperands(edge.successor)
              .getMutableForwardedOperands();
      auto values = llvm::to_vector(OperandRange(range));
      values.erase(values.begin() + index);
      range.assign(values);
    }
    block->eraseArgument(index);
  }
}

} // namespace

void nabla::raise::splitObjectSelects(ModuleOp module) {
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal())
      splitObjectPhis(func);
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

Value nabla::raise::getBaseObject(Value pointer) {
  while (Operation *def = pointer.getDefiningOp()) {
    if (!isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def))
      break;
    pointer = def->getOperand(0);
  }
  return pointer;
}
