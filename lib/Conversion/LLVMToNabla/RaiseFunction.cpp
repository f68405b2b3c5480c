//===- RaiseFunction.cpp - Rewrite one LLVM function over memrefs ---------===//
//
// Walks the blocks of an LLVM function in reverse post order and emits the
// raised function: every pointer becomes an element offset into the memref
// of its root (planned by PlanModule.cpp), loads/stores/atomics become
// memref ops, integer and float ops become arith, intrinsics and device
// library calls become math/gpu ops, branches become cf (lifted to scf by
// the driver), and Enzyme requests become nabla.autodiff / nabla.fwddiff
// (calls: RaiseCalls.cpp).
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

#include "nabla/Dialect/Nabla/IR/NablaDialect.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nabla::raise;

Value FunctionRaiser::indexConstant(Location loc, int64_t value) {
  if (value == 0 && zero)
    return zero;
  return arith::ConstantIndexOp::create(builder, loc, value);
}

Value FunctionRaiser::toIndex(Location loc, Value integer) {
  if (integer.getType().isIndex())
    return integer;
  return arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                    integer);
}

Value FunctionRaiser::getPresenceFlag(Location loc, Value pointer) {
  while (Operation *def = pointer.getDefiningOp()) {
    if (!isa<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def))
      break;
    pointer = def->getOperand(0);
  }
  if (auto arg = dyn_cast<BlockArgument>(pointer);
      arg && arg.getOwner()->isEntryBlock())
    for (const Param &param : plan.params)
      if (param.kind == Param::Presence &&
          param.llvmArgument == arg.getArgNumber())
        return presenceFlags.lookup(param.root);
  return arith::ConstantIntOp::create(builder, loc, 1, 32);
}

Value FunctionRaiser::lookup(Operation *user, Value value) {
  if (Value mapped = scalars.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  InFlightDiagnostic diag = emitError(plainLoc(user->getLoc()))
                            << "cannot raise '" << user->getName()
                            << "': an operand";
  if (def)
    diag << " (defined by '" << def->getName() << "')";
  diag << " has no raised form";
  return nullptr;
}

FailureOr<std::pair<Value, Value>>
FunctionRaiser::lookupPointer(Operation *user, Value value) {
  auto root = plan.rootOf.find(value);
  auto offset = offsets.find(value);
  if (root == plan.rootOf.end() || offset == offsets.end() ||
      !rootBases[root->second])
    return emitError(plainLoc(user->getLoc()))
           << "cannot raise '" << user->getName()
           << "': its pointer operand does not point into a known buffer";
  return std::make_pair(rootBases[root->second], offset->second);
}

Value FunctionRaiser::castToDynamic(Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.hasStaticShape())
    return memref;
  auto dynamic =
      MemRefType::get({ShapedType::kDynamic}, type.getElementType(),
                      MemRefLayoutAttrInterface(), type.getMemorySpace());
  return memref::CastOp::create(builder, loc, dynamic, memref);
}

/// A host global becomes a memref.global of the gpu.module: with the LLVM
/// global's constant contents when it has them (a table), a declaration
/// otherwise (a host object, recorded by reloc-raise when listed in
/// reloc.gv_to_value).
Value FunctionRaiser::getHostGlobal(Location loc, unsigned root) {
  StringAttr name = plan.roots[root].global;
  MemRefType type = getRootMemRefType(module, plan, root);
  auto *gpuModule = into.getParentOp();
  if (plan.roots[root].kind == Root::Address) {
    // A baked address (v1): a declaration of the object, named in
    // reloc.gv_to_value with the key reloc.address_map gives it, so that
    // reloc-raise makes it a record like any host object.
    if (type.getDimSize(0) == 0) {
      emitError(loc) << "the baked address of " << name.getValue()
                     << " needs its size in bytes in !nabla.address_map";
      return nullptr;
    }
    if (!SymbolTable::lookupSymbolIn(gpuModule, name)) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&into);
      // Constant unless some kernel writes through the address.
      memref::GlobalOp::create(
          builder, loc, name, builder.getStringAttr("public"), type,
          Attribute(), !module.writtenGlobals.contains(name),
          /*alignment=*/nullptr);
      ModuleOp top = module.module;
      StringRef address =
          name.getValue().drop_front(getAddressGlobalName("").size());
      auto map = top->getAttrOfType<DictionaryAttr>("reloc.address_map");
      NamedAttrList entries;
      if (auto existing =
              top->getAttrOfType<DictionaryAttr>("reloc.gv_to_value"))
        entries.append(existing.getValue());
      entries.set(name, map.get(address));
      top->setAttr("reloc.gv_to_value",
                   entries.getDictionary(top.getContext()));
    }
    return memref::GetGlobalOp::create(builder, loc, type, name);
  }
  if (!SymbolTable::lookupSymbolIn(gpuModule, name)) {
    LLVM::GlobalOp global = module.lookupGlobal(name);
    // The importer places globals at line 0 of the source file: errors and
    // notes about the global name the .ll line of its first use instead.
    Location globalLoc = plainLoc(global.getLoc());
    if (auto file = dyn_cast<FileLineColLoc>(globalLoc);
        file && file.getLine() == 0)
      globalLoc = loc;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&into);
    FailureOr<DenseElementsAttr> initial = raiseGlobalInitializer(global, type);
    if (failed(initial)) {
      emitError(globalLoc)
          << "cannot raise the initializer of @" << name.getValue()
          << " (only numbers, and arrays and structs of numbers of the type "
             "the kernels access it as)";
      return nullptr;
    }
    memref::GlobalOp::create(
        builder, globalLoc, name,
        builder.getStringAttr(*initial ? "private" : "public"), type,
        *initial ? Attribute(*initial) : Attribute(), global.getConstant(),
        /*alignment=*/nullptr);
  }
  return memref::GetGlobalOp::create(builder, loc, type, name);
}

LogicalResult FunctionRaiser::createSignature() {
  LLVM::LLVMFuncOp func = plan.func;
  SmallVector<Type> inputs;
  for (const Param &param : plan.params) {
    switch (param.kind) {
    case Param::Buffer:
      inputs.push_back(getRootMemRefType(module, plan, param.root));
      break;
    case Param::Offset:
      inputs.push_back(builder.getIndexType());
      break;
    case Param::Presence:
      inputs.push_back(builder.getI32Type());
      break;
    case Param::Scalar:
      // A kernel's `bool` is a byte at launch (C++'s bool in memory; SPIR-V
      // cannot pass an i1): the kernel takes an i8 and tests it.
      inputs.push_back(plan.isKernel && param.type.isInteger(1) &&
                               param.fieldOffset < 0
                           ? builder.getI8Type()
                           : param.type);
      break;
    }
  }
  for (const SharedSlot &slot : plan.shared)
    inputs.push_back(getSlotType(module, slot));
  SmallVector<Type> results;
  Type resultType = func.getFunctionType().getReturnType();
  if (!isa<LLVM::LLVMVoidType>(resultType)) {
    if (!resultType.isIntOrFloat())
      return fail(func) << "cannot raise a function returning " << resultType
                        << " (scalars only)";
    results.push_back(resultType);
  }
  builder.setInsertionPointToEnd(&into);
  result =
      func::FuncOp::create(builder, plainLoc(func.getLoc()), func.getName(),
                           builder.getFunctionType(inputs, results));
  Block *entry = result.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  zero = arith::ConstantIndexOp::create(builder, result.getLoc(), 0);

  rootBases.assign(plan.roots.size(), nullptr);
  for (auto [i, param] : llvm::enumerate(plan.params)) {
    Value arg = entry->getArgument(i);
    Value llvmArg = func.getArgument(param.llvmArgument);
    switch (param.kind) {
    case Param::Buffer:
      rootBases[param.root] = arg;
      if (plan.roots[param.root].kind == Root::Argument)
        offsets[llvmArg] = zero;
      break;
    case Param::Offset:
      offsets[llvmArg] = arg;
      break;
    case Param::Presence: {
      presenceFlags[param.root] = arg;
      auto buffer = llvm::find_if(plan.params, [&](const Param &other) {
        return other.kind == Param::Buffer && other.root == param.root;
      });
      result.setArgAttr(
          i, nabla::kPresenceAttrName,
          builder.getI64IntegerAttr(buffer - plan.params.begin()));
      break;
    }
    case Param::Scalar:
      if (arg.getType() != param.type)
        arg = arith::CmpIOp::create(
            builder, result.getLoc(), arith::CmpIPredicate::ne, arg,
            arith::ConstantIntOp::create(builder, result.getLoc(),
                                         arg.getType(), 0));
      if (param.fieldOffset < 0)
        scalars.map(llvmArg, arg);
      break;
    }
  }
  for (auto [i, slot] : llvm::enumerate(plan.shared))
    slotValues.push_back(entry->getArgument(plan.params.size() + i));
  for (auto [i, root] : llvm::enumerate(plan.roots)) {
    Location loc = plainLoc(root.op ? root.op->getLoc() : func.getLoc());
    if (root.kind == Root::Alloca) {
      rootBases[i] = memref::AllocaOp::create(
          builder, loc, getRootMemRefType(module, plan, i));
    } else if (root.kind == Root::Shared) {
      for (auto [k, slot] : llvm::enumerate(plan.shared))
        if (slot.global == root.global && !slot.shadow)
          rootBases[i] = slotValues[k];
    } else if (root.kind == Root::HostGlobal || root.kind == Root::Address) {
      rootBases[i] = getHostGlobal(loc, i);
      if (!rootBases[i])
        return failure();
    }
  }
  return success();
}

func::FuncOp FunctionRaiser::run() {
  if (failed(createSignature()))
    return nullptr;
  Block *llvmEntry = &plan.func.getBody().front();
  blocks[llvmEntry] = &result.getBody().front();
  llvm::ReversePostOrderTraversal<Block *> order(llvmEntry);
  for (Block *block : order) {
    if (block == llvmEntry)
      continue;
    Block *raised = new Block();
    result.getBody().push_back(raised);
    blocks[block] = raised;
    for (BlockArgument arg : block->getArguments()) {
      Location loc = plainLoc(arg.getLoc());
      if (isa<LLVM::LLVMPointerType>(arg.getType())) {
        offsets[arg] = raised->addArgument(builder.getIndexType(), loc);
      } else if (arg.getType().isIntOrFloat()) {
        scalars.map(arg, raised->addArgument(arg.getType(), loc));
      } else {
        emitError(loc) << "cannot raise a phi of type " << arg.getType();
        return nullptr;
      }
    }
  }
  for (Block *block : order) {
    builder.setInsertionPointToEnd(blocks[block]);
    for (Operation &op : *block)
      if (failed(raiseOp(&op)))
        return nullptr;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

LogicalResult FunctionRaiser::raisePointerOp(Operation *op) {
  Location loc = plainLoc(op->getLoc());
  Value result = op->getResult(0);
  // Pointers into byval parameters, markers and functions have no offset;
  // their uses are resolved through the plan.
  auto rootIt = plan.rootOf.find(result);
  if (rootIt == plan.rootOf.end() || plan.byvalOffset.count(result) ||
      !plan.roots[rootIt->second].isMemory())
    return success();
  unsigned root = rootIt->second;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LLVM::GEPOp gep) -> LogicalResult {
        auto base = offsets.find(gep.getBase());
        if (base == offsets.end())
          return fail(gep) << "cannot raise a GEP of an unknown pointer";
        int64_t elementSize =
            getTypeSize(layout, module.getElementType(plan, root));
        Value offset = base->second;
        Value bytes; // terms that are not a multiple of the element size
        int64_t constantBytes = 0;
        Type current = gep.getElemType();
        auto addTerm = [&](Value index, int64_t scale) -> LogicalResult {
          Value mapped = lookup(gep, index);
          if (!mapped)
            return failure();
          Value idx = toIndex(loc, mapped);
          if (scale % elementSize == 0) {
            Value term = scale == elementSize
                             ? idx
                             : arith::MulIOp::create(
                                   builder, loc, idx,
                                   indexConstant(loc, scale / elementSize));
            offset = arith::AddIOp::create(builder, loc, offset, term);
            return success();
          }
          Value term = arith::MulIOp::create(builder, loc, idx,
                                             indexConstant(loc, scale));
          bytes =
              bytes ? arith::AddIOp::create(builder, loc, bytes, term) : term;
          return success();
        };
        for (auto [i, index] : llvm::enumerate(gep.getIndices())) {
          int64_t scale;
          if (i == 0) {
            scale = getTypeSize(layout, current);
          } else if (auto structType =
                         dyn_cast<LLVM::LLVMStructType>(current)) {
            auto attr = dyn_cast<IntegerAttr>(index);
            if (!attr)
              return fail(gep) << "a dynamic struct field index";
            constantBytes += getFieldOffset(layout, structType, attr.getInt());
            current = structType.getBody()[attr.getInt()];
            continue;
          } else if (auto arrayType = dyn_cast<LLVM::LLVMArrayType>(current)) {
            current = arrayType.getElementType();
            scale = getTypeSize(layout, current);
          } else {
            return fail(gep) << "cannot raise a GEP into " << current;
          }
          if (auto attr = dyn_cast<IntegerAttr>(index))
            constantBytes += attr.getInt() * scale;
          else if (failed(addTerm(cast<Value>(index), scale)))
            return failure();
        }
        if (constantBytes % elementSize == 0) {
          if (constantBytes)
            offset = arith::AddIOp::create(
                builder, loc, offset,
                indexConstant(loc, constantBytes / elementSize));
        } else {
          Value c = indexConstant(loc, constantBytes);
          bytes = bytes ? arith::AddIOp::create(builder, loc, bytes, c) : c;
        }
        if (bytes)
          offset = arith::AddIOp::create(
              builder, loc, offset,
              arith::DivSIOp::create(builder, loc, bytes,
                                     indexConstant(loc, elementSize)));
        offsets[result] = offset;
        return success();
      })
      .Case<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(
          [&](Operation *cast) -> LogicalResult {
            auto source = offsets.find(cast->getOperand(0));
            if (source == offsets.end())
              return fail(cast) << "cannot raise a cast of an unknown pointer";
            offsets[result] = source->second;
            return success();
          })
      .Case([&](LLVM::SelectOp select) -> LogicalResult {
        Value condition = lookup(op, select.getCondition());
        auto t = offsets.find(select.getTrueValue());
        auto f = offsets.find(select.getFalseValue());
        if (!condition || t == offsets.end() || f == offsets.end())
          return failure();
        offsets[result] = arith::SelectOp::create(builder, loc, condition,
                                                  t->second, f->second);
        return success();
      })
      .Case([&](LLVM::IntToPtrOp cast) -> LogicalResult {
        if (plan.roots[root].kind == Root::Address) {
          offsets[result] = zero;
          return success();
        }
        auto toInt = cast.getArg().getDefiningOp<LLVM::PtrToIntOp>();
        auto source = toInt ? offsets.find(toInt.getArg()) : offsets.end();
        if (source == offsets.end())
          return fail(cast) << "cannot raise a pointer made from an integer";
        offsets[result] = source->second;
        return success();
      })
      .Case<LLVM::AddressOfOp, LLVM::AllocaOp, LLVM::LoadOp,
            LLVM::ExtractValueOp>([&](Operation *) -> LogicalResult {
        offsets[result] = zero;
        return success();
      })
      .Default([&](Operation *) -> LogicalResult {
        return fail(op) << "cannot raise this pointer operation";
      });
}

LogicalResult FunctionRaiser::raiseMemoryOp(Operation *op) {
  Location loc = plainLoc(op->getLoc());
  if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
    if (isa<LLVM::LLVMPointerType>(load.getType()))
      return raisePointerOp(op);
    auto root = plan.rootOf.find(load.getAddr());
    if (root != plan.rootOf.end() &&
        plan.roots[root->second].kind == Root::Marker) {
      auto name = getMarkerActivity(plan.roots[root->second].global.getValue());
      // Split mode's markers (enzyme_tape...) are read where they stand.
      if (name)
        markers[load.getResult()] = *nabla::symbolizeActivity(*name);
      return success();
    }
    if (root != plan.rootOf.end() &&
        plan.roots[root->second].kind == Root::Dispatch) {
      std::optional<DispatchField> field =
          getDispatchField(plan.roots[root->second].index,
                           plan.byvalOffset[load.getAddr()], load.getType());
      auto d = static_cast<gpu::Dimension>(field->dim);
      Value value = gpu::BlockDimOp::create(builder, loc, d);
      if (field->grid) {
        Value blocks = gpu::GridDimOp::create(builder, loc, d);
        value = field->inItems
                    ? Value(arith::MulIOp::create(builder, loc, blocks, value))
                    : blocks;
      }
      scalars.map(load.getResult(), arith::IndexCastOp::create(
                                        builder, loc, load.getType(), value));
      return success();
    }
    if (plan.byvalOffset.count(load.getAddr())) {
      unsigned argument = plan.roots[root->second].index;
      int64_t offset = plan.byvalOffset[load.getAddr()];
      for (auto [i, param] : llvm::enumerate(plan.params))
        if (param.kind == Param::Scalar && param.llvmArgument == argument &&
            param.fieldOffset == offset && param.type == load.getType()) {
          scalars.map(load.getResult(), result.getArgument(i));
          return success();
        }
      // Consecutive fields copied as one integer (a float2 as an i64; the
      // planner checked they cover it): their bits, the first lowest.
      if (auto integer = dyn_cast<IntegerType>(load.getType())) {
        int64_t end = offset + integer.getWidth() / 8;
        Value word;
        for (auto [i, param] : llvm::enumerate(plan.params)) {
          if (param.kind != Param::Scalar || param.llvmArgument != argument ||
              param.fieldOffset < offset || param.fieldOffset >= end)
            continue;
          Value field = result.getArgument(i);
          if (isa<IndexType>(field.getType()))
            field = arith::IndexCastOp::create(builder, loc,
                                               builder.getI64Type(), field);
          unsigned bits = field.getType().getIntOrFloatBitWidth();
          if (isa<FloatType>(field.getType()))
            field = arith::BitcastOp::create(
                builder, loc, builder.getIntegerType(bits), field);
          if (bits < integer.getWidth())
            field = arith::ExtUIOp::create(builder, loc, integer, field);
          if (int64_t shift = (param.fieldOffset - offset) * 8)
            field = arith::ShLIOp::create(
                builder, loc, field,
                arith::ConstantIntOp::create(builder, loc, integer, shift));
          word = word ? arith::OrIOp::create(builder, loc, word, field)
                      : field;
        }
        if (word) {
          scalars.map(load.getResult(), word);
          return success();
        }
      }
      return fail(load) << "cannot raise this load of a byval field";
    }
    FailureOr<std::pair<Value, Value>> ptr = lookupPointer(op, load.getAddr());
    if (failed(ptr))
      return failure();
    scalars.map(load.getResult(),
                loadAs(loc, ptr->first, ptr->second, load.getType()));
    return success();
  }
  if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
    Value value = lookup(op, store.getValue());
    FailureOr<std::pair<Value, Value>> ptr = lookupPointer(op, store.getAddr());
    if (!value || failed(ptr))
      return failure();
    storeAs(loc, value, ptr->first, ptr->second);
    return success();
  }
  return raiseAtomic(cast<LLVM::AtomicRMWOp>(op));
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

/// Scalar arith ops an LLVM op maps to one to one.
template <typename From, typename To>
static bool raiseSame(OpBuilder &builder, Operation *op, ValueRange operands,
                      IRMapping &scalars) {
  if (!isa<From>(op))
    return false;
  Value value = To::create(builder, plainLoc(op->getLoc()),
                           op->getResult(0).getType(), operands)
                    .getResult();
  scalars.map(op->getResult(0), value);
  return true;
}

LogicalResult FunctionRaiser::raiseOp(Operation *op) {
  Location loc = plainLoc(op->getLoc());
  if (op->hasTrait<OpTrait::IsTerminator>())
    return raiseTerminator(op);
  if (isa<LLVM::LoadOp, LLVM::StoreOp, LLVM::AtomicRMWOp>(op))
    return raiseMemoryOp(op);
  // The float-atomic loops were rewritten to atomics before the raise
  // (CompareExchangeLoops.cpp); what is left has no target-neutral form.
  if (isa<LLVM::AtomicCmpXchgOp>(op))
    return fail(op)
           << "cannot raise this compare-exchange (atomicCAS): only a loop "
              "that applies a float add, subtract, fmaxf or fminf to a "
              "value's bits until the exchange succeeds (a float atomic "
              "written with atomicCAS) is raised, as that atomic; a lock or "
              "another use has no target-neutral form";
  if (isa<LLVM::MemsetOp, LLVM::MemcpyOp, LLVM::MemmoveOp>(op)) {
    FailureOr<bool> raised = raiseMemoryIntrinsic(op);
    return failure(failed(raised));
  }
  // The null a kernel's pointer parameter is tested against: its presence
  // flag answers the test (below); the constant itself has no raised form.
  if (op->getNumResults() == 1 &&
      isa<LLVM::LLVMPointerType>(op->getResult(0).getType()) &&
      (isa<LLVM::ZeroOp>(op) ||
       (isa<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(op) &&
        !plan.rootOf.count(op->getResult(0)) &&
        !plan.rootOf.count(op->getOperand(0)))))
    return success();
  if (auto compare = dyn_cast<LLVM::ICmpOp>(op))
    if (Value tested = getNullTestedPointer(compare)) {
      auto arg = dyn_cast<BlockArgument>(tested);
      Value flag;
      for (const Param &param : plan.params)
        if (param.kind == Param::Presence && arg &&
            arg.getOwner()->isEntryBlock() &&
            param.llvmArgument == arg.getArgNumber())
          flag = presenceFlags.lookup(param.root);
      if (!flag)
        return fail(op) << "cannot raise this null test of a pointer";
      // p == NULL: the launch passed null (flag 0); p != NULL: it did not.
      Value zeroFlag = arith::ConstantIntOp::create(builder, loc, 0, 32);
      scalars.map(compare.getResult(),
                  arith::CmpIOp::create(
                      builder, loc,
                      compare.getPredicate() == LLVM::ICmpPredicate::eq
                          ? arith::CmpIPredicate::eq
                          : arith::CmpIPredicate::ne,
                      flag, zeroFlag));
      return success();
    }
  if (op->getNumResults() == 1 &&
      isa<LLVM::LLVMPointerType>(op->getResult(0).getType()))
    return raisePointerOp(op);
  if (auto print = dyn_cast<gpu::PrintfOp>(op)) {
    SmallVector<Value> args;
    for (Value arg : print.getArgs()) {
      Value value = lookup(op, arg);
      if (!value)
        return failure();
      args.push_back(value);
    }
    gpu::PrintfOp::create(builder, loc, print.getFormatAttr(), args);
    return success();
  }
  if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    if (!call.getCallee())
      return fail(call)
             << "cannot raise an indirect call (call a function by name)";
    return raiseCall(call);
  }
  // Fences (HIP's __threadfence*, C++ atomics' fences): ordering within a
  // wavefront or a thread is implied by the program order the targets keep.
  if (auto fence = dyn_cast<LLVM::FenceOp>(op)) {
    StringRef syncscope =
        fence.getSyncscope() ? *fence.getSyncscope() : StringRef();
    if (syncscope == "wavefront" || syncscope == "singlethread" ||
        syncscope.starts_with("wavefront-") ||
        syncscope.starts_with("singlethread-"))
      return success();
    StringRef scope = syncscope.starts_with("workgroup") ? "workgroup"
                      : syncscope.starts_with("agent")   ? "device"
                                                         : "system";
    nabla::MemoryFenceOp::create(builder, op->getLoc(),
                                 builder.getStringAttr(scope));
    return success();
  }
  // Hints and debug information.
  if (isa<LLVM::AssumeOp, LLVM::LifetimeStartOp, LLVM::LifetimeEndOp,
          LLVM::NoAliasScopeDeclOp, LLVM::DbgValueOp, LLVM::DbgDeclareOp,
          LLVM::DbgLabelOp, LLVM::InvariantStartOp, LLVM::InvariantEndOp>(op))
    return success();
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
    StringRef text = asmOp.getAsmString().ltrim();
    // CUDA's texture and surface objects (tex2D, tex1Dfetch, surf2Dread...)
    // are handles the runtime binds to images: no target here has them.
    if (text.starts_with("tex.") || text.starts_with("tld4.") ||
        text.starts_with("suld.") || text.starts_with("sust."))
      return fail(op) << "cannot raise a texture or surface access ('"
                      << text.take_until([](char c) { return c == ' ' ||
                                                             c == '\t'; })
                      << "'): textures are not supported; read the image "
                         "from a buffer parameter instead";
    return fail(op) << "cannot raise inline assembly";
  }
  if (auto extract = dyn_cast<LLVM::ExtractValueOp>(op)) {
    // Gradients returned by an Enzyme request, mapped there.
    if (scalars.contains(extract.getResult()))
      return success();
    // A field of an aggregate parameter.
    auto arg = dyn_cast<BlockArgument>(extract.getContainer());
    if (arg && arg.getOwner()->isEntryBlock())
      if (auto leaf =
              getAggregateLeaf(layout, arg.getType(), extract.getPosition()))
        for (auto [i, param] : llvm::enumerate(plan.params))
          if (param.kind == Param::Scalar &&
              param.llvmArgument == arg.getArgNumber() &&
              param.fieldOffset == leaf->first) {
            scalars.map(extract.getResult(), result.getArgument(i));
            return success();
          }
    return fail(op) << "cannot raise an aggregate value";
  }
  if (auto constant = dyn_cast<LLVM::ConstantOp>(op)) {
    auto attr = dyn_cast<TypedAttr>(constant.getValue());
    if (!attr || !constant.getType().isIntOrFloat())
      return fail(op) << "cannot raise a constant of type "
                      << constant.getType();
    if (isa<IntegerAttr>(attr) && attr.getType() != constant.getType())
      attr = IntegerAttr::get(constant.getType(),
                              cast<IntegerAttr>(attr).getValue());
    scalars.map(constant.getResult(),
                arith::ConstantOp::create(builder, loc, attr));
    return success();
  }
  if (isa<LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp>(op)) {
    Type type = op->getResult(0).getType();
    if (!type.isIntOrFloat())
      return fail(op) << "cannot raise an aggregate constant";
    scalars.map(op->getResult(0), arith::ConstantOp::create(
                                      builder, loc, builder.getZeroAttr(type)));
    return success();
  }
  if (isa<LLVM::CallIntrinsicOp>(op) ||
      op->getDialect()->getNamespace() == "nvvm" ||
      op->getDialect()->getNamespace() == "rocdl")
    return raiseNamedOp(op);

  if (isa<LLVM::PtrToIntOp>(op) &&
      llvm::all_of(op->getUsers(),
                   [](Operation *user) { return isa<LLVM::IntToPtrOp>(user); }))
    return success(); // a round trip, raised at the inttoptr
  if (isa<LLVM::PtrToIntOp, LLVM::IntToPtrOp>(op))
    return fail(op) << "cannot raise a conversion between pointers and "
                       "integers";

  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    Value value = lookup(op, operand);
    if (!value)
      return failure();
    operands.push_back(value);
  }
  if (auto freeze = dyn_cast<LLVM::FreezeOp>(op)) {
    scalars.map(freeze.getResult(), operands[0]);
    return success();
  }
  if (auto icmp = dyn_cast<LLVM::ICmpOp>(op)) {
    auto predicate = static_cast<arith::CmpIPredicate>(icmp.getPredicate());
    scalars.map(icmp.getResult(),
                arith::CmpIOp::create(builder, loc, predicate, operands[0],
                                      operands[1]));
    return success();
  }
  if (auto fcmp = dyn_cast<LLVM::FCmpOp>(op)) {
    auto predicate = static_cast<arith::CmpFPredicate>(fcmp.getPredicate());
    scalars.map(fcmp.getResult(),
                arith::CmpFOp::create(builder, loc, predicate, operands[0],
                                      operands[1]));
    return success();
  }
  if (auto select = dyn_cast<LLVM::SelectOp>(op)) {
    scalars.map(select.getResult(),
                arith::SelectOp::create(builder, loc, operands[0], operands[1],
                                        operands[2]));
    return success();
  }
  if (auto bitcast = dyn_cast<LLVM::BitcastOp>(op)) {
    if (!bitcast.getType().isIntOrFloat())
      return fail(op) << "cannot raise a bitcast to " << bitcast.getType();
    scalars.map(
        bitcast.getResult(),
        arith::BitcastOp::create(builder, loc, bitcast.getType(), operands[0]));
    return success();
  }
  if (raiseSame<LLVM::AddOp, arith::AddIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::SubOp, arith::SubIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::MulOp, arith::MulIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::SDivOp, arith::DivSIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::UDivOp, arith::DivUIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::SRemOp, arith::RemSIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::URemOp, arith::RemUIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::AndOp, arith::AndIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::OrOp, arith::OrIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::XOrOp, arith::XOrIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::ShlOp, arith::ShLIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::LShrOp, arith::ShRUIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::AShrOp, arith::ShRSIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::FAddOp, arith::AddFOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::FSubOp, arith::SubFOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::FMulOp, arith::MulFOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::FDivOp, arith::DivFOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::FRemOp, arith::RemFOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::FNegOp, arith::NegFOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::SExtOp, arith::ExtSIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::ZExtOp, arith::ExtUIOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::TruncOp, arith::TruncIOp>(builder, op, operands,
                                                scalars) ||
      raiseSame<LLVM::FPExtOp, arith::ExtFOp>(builder, op, operands, scalars) ||
      raiseSame<LLVM::FPTruncOp, arith::TruncFOp>(builder, op, operands,
                                                  scalars) ||
      raiseSame<LLVM::SIToFPOp, arith::SIToFPOp>(builder, op, operands,
                                                 scalars) ||
      raiseSame<LLVM::UIToFPOp, arith::UIToFPOp>(builder, op, operands,
                                                 scalars) ||
      raiseSame<LLVM::FPToSIOp, arith::FPToSIOp>(builder, op, operands,
                                                 scalars) ||
      raiseSame<LLVM::FPToUIOp, arith::FPToUIOp>(builder, op, operands,
                                                 scalars))
    return success();
  FailureOr<Value> intrinsic = buildIntrinsic(builder, op, operands);
  if (succeeded(intrinsic)) {
    if (op->getNumResults())
      scalars.map(op->getResult(0), *intrinsic);
    return success();
  }
  return fail(op) << "cannot raise '" << op->getName()
                  << "' (not supported by --nabla-raise-llvm)";
}

func::FuncOp nabla::raise::raiseFunction(ModulePlan &module, FunctionPlan &plan,
                                         Block &into) {
  return FunctionRaiser(module, plan, into).run();
}
