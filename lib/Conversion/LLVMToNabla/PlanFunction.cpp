//===- PlanFunction.cpp - Roots and element types of one function ---------===//
//
// The part of --nabla-raise-llvm's plan (PlanModule.cpp) that looks at one
// function: traces every pointer to its root (a parameter, an alloca, a
// global, a byval field), types each root by the accesses made through it
// (loads, stores, atomics, and the parameters of the functions it is passed
// to) and fixes the raised function's parameter list. Nothing is rewritten
// here; every refusal is a located error naming the instruction.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nabla::raise;

/// The byval struct type of argument `index`, if it is a byval pointer.
static Type getByvalType(LLVM::LLVMFuncOp func, unsigned index) {
  // AMDGPU passes a kernel's struct `byref` in constant (kernarg) memory:
  // read the same way.
  for (StringRef name : {LLVM::LLVMDialect::getByValAttrName(),
                         LLVM::LLVMDialect::getByRefAttrName()})
    if (auto attr = func.getArgAttrOfType<TypeAttr>(index, name))
      return attr.getValue();
  return nullptr;
}

namespace {

/// Traces pointers to roots and types the roots of one function.
class FunctionPlanner {
public:
  FunctionPlanner(ModulePlan &module, FunctionPlan &plan)
      : module(module), plan(plan), layout(DataLayout::closest(plan.func)) {}

  LogicalResult run();

private:
  /// The root of pointer `value`; std::nullopt while a phi cycle is being
  /// resolved.
  FailureOr<std::optional<unsigned>> resolve(Value value);
  FailureOr<std::optional<unsigned>> resolveDefinition(Value value,
                                                       Operation *user);
  /// `exact`: the object is passed to a function expecting this element
  /// type, so it cannot be viewed as another.
  LogicalResult recordElementType(Operation *op, unsigned root, Type type,
                                  bool exact = false);
  /// Names `root` module-wide: a global by its name, others by function
  /// and root number.
  std::pair<const void *, unsigned> objectKey(unsigned root) const {
    const Root &r = plan.roots[root];
    if (r.global && (r.kind == Root::Shared || r.kind == Root::HostGlobal ||
                     r.kind == Root::Address))
      return {r.global.getAsOpaquePointer(), ~0u};
    return {plan.func.getNameAttr().getAsOpaquePointer(), root};
  }
  LogicalResult recordAccess(Operation *op, Value address, Type type,
                             bool exact = false);
  LogicalResult planCall(LLVM::CallOp call);
  LogicalResult planParams();
  /// The fields of struct parameter `index` (of type `aggregate`).
  LogicalResult planFields(unsigned index, Type aggregate);
  /// The constant byte offset a GEP adds; failure if an index is dynamic.
  FailureOr<int64_t> getConstantOffset(LLVM::GEPOp gep);

  ModulePlan &module;
  FunctionPlan &plan;
  DataLayout layout;
  DenseSet<Value> visiting;
};

} // namespace

FailureOr<int64_t> FunctionPlanner::getConstantOffset(LLVM::GEPOp gep) {
  Type current = gep.getElemType();
  int64_t offset = 0;
  for (auto [i, index] : llvm::enumerate(gep.getIndices())) {
    int64_t value;
    APInt constant;
    if (auto attr = dyn_cast<IntegerAttr>(index))
      value = attr.getInt();
    else if (matchPattern(cast<Value>(index), m_ConstantInt(&constant)))
      value = constant.getSExtValue();
    else
      return failure();
    if (i == 0) {
      offset += value * getTypeSize(layout, current);
      continue;
    }
    if (auto structType = dyn_cast<LLVM::LLVMStructType>(current)) {
      if (value < 0 || value >= int64_t(structType.getBody().size()))
        return failure();
      offset += getFieldOffset(layout, structType, value);
      current = structType.getBody()[value];
      continue;
    }
    if (auto arrayType = dyn_cast<LLVM::LLVMArrayType>(current)) {
      current = arrayType.getElementType();
      offset += value * getTypeSize(layout, current);
      continue;
    }
    return failure();
  }
  return offset;
}

FailureOr<std::optional<unsigned>> FunctionPlanner::resolve(Value value) {
  auto known = plan.rootOf.find(value);
  if (known != plan.rootOf.end())
    return std::optional<unsigned>(known->second);
  if (visiting.contains(value))
    return std::optional<unsigned>();
  visiting.insert(value);
  FailureOr<std::optional<unsigned>> root = resolveDefinition(value, nullptr);
  visiting.erase(value);
  if (succeeded(root) && *root)
    plan.rootOf[value] = **root;
  return root;
}

FailureOr<std::optional<unsigned>>
FunctionPlanner::resolveDefinition(Value value, Operation *user) {
  auto merge = [&](ArrayRef<Value> incoming,
                   Operation *at) -> FailureOr<std::optional<unsigned>> {
    std::optional<unsigned> result;
    std::optional<int64_t> byval;
    for (Value in : incoming) {
      FailureOr<std::optional<unsigned>> root = resolve(in);
      if (failed(root))
        return failure();
      if (!*root)
        continue;
      if (result && *result != **root)
        return emitError(plainLoc(at->getLoc()))
               << "a pointer that chooses between two different objects (a "
                  "select or a phi) cannot be raised here: only loads, stores "
                  "and atomics through one are (each becomes a branch), and "
                  "only between parameters, local arrays and globals";
      result = *root;
      if (plan.byvalOffset.count(in)) {
        if (byval && *byval != plan.byvalOffset[in])
          return emitError(plainLoc(at->getLoc()))
                 << "a pointer that selects between two fields of a byval "
                    "parameter cannot be raised";
        byval = plan.byvalOffset[in];
      }
    }
    if (byval)
      plan.byvalOffset[value] = *byval;
    return result;
  };

  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Block *block = arg.getOwner();
    if (block->isEntryBlock()) {
      unsigned index = arg.getArgNumber();
      if (getByvalType(plan.func, index))
        plan.byvalOffset[value] = 0;
      return std::optional<unsigned>(
          plan.getOrAddRoot({Root::Argument, index}));
    }
    SmallVector<Value> incoming;
    for (auto it = block->pred_begin(), e = block->pred_end(); it != e; ++it) {
      auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
      if (!branch)
        return emitError(plainLoc(block->getParentOp()->getLoc()))
               << "unsupported branch into a block with pointer arguments";
      SuccessorOperands operands =
          branch.getSuccessorOperands(it.getSuccessorIndex());
      Value in = operands[arg.getArgNumber()];
      if (!in)
        return emitError(plainLoc(branch->getLoc()))
               << "unsupported pointer phi";
      incoming.push_back(in);
    }
    // Located at the phi's first use (the block has no line of its own).
    Operation *at = arg.use_empty() ? block->getParentOp()
                                    : *arg.getUsers().begin();
    return merge(incoming, at);
  }

  Operation *def = value.getDefiningOp();
  return llvm::TypeSwitch<Operation *, FailureOr<std::optional<unsigned>>>(def)
      .Case([&](LLVM::GEPOp gep) -> FailureOr<std::optional<unsigned>> {
        FailureOr<std::optional<unsigned>> root = resolve(gep.getBase());
        if (failed(root) || !*root)
          return root;
        if (plan.byvalOffset.count(gep.getBase())) {
          FailureOr<int64_t> offset = getConstantOffset(gep);
          if (failed(offset))
            return emitError(plainLoc(gep.getLoc()))
                   << "a dynamic index into a byval struct parameter cannot "
                      "be raised";
          plan.byvalOffset[value] = plan.byvalOffset[gep.getBase()] + *offset;
        }
        return root;
      })
      .Case<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(
          [&](Operation *cast) -> FailureOr<std::optional<unsigned>> {
            Value source = cast->getOperand(0);
            FailureOr<std::optional<unsigned>> root = resolve(source);
            if (succeeded(root) && plan.byvalOffset.count(source))
              plan.byvalOffset[value] = plan.byvalOffset[source];
            return root;
          })
      .Case([&](LLVM::SelectOp select) {
        return merge({select.getTrueValue(), select.getFalseValue()}, select);
      })
      .Case(
          [&](LLVM::AddressOfOp address) -> FailureOr<std::optional<unsigned>> {
            StringAttr name = address.getGlobalNameAttr().getAttr();
            if (module.module.lookupSymbol<LLVM::LLVMFuncOp>(name))
              return std::optional<unsigned>(
                  plan.getOrAddRoot({Root::Function, 0, 0, nullptr, name}));
            LLVM::GlobalOp global = module.lookupGlobal(name);
            if (!global)
              return emitError(plainLoc(address.getLoc()))
                     << "cannot raise the address of @" << name.getValue();
            Root::Kind kind = getMarkerActivity(name.getValue()) ||
                                      isSplitMarker(name.getValue())
                                  ? Root::Marker
                              : global.getAddrSpace() == 3       ? Root::Shared
                                                           : Root::HostGlobal;
            return std::optional<unsigned>(
                plan.getOrAddRoot({kind, 0, 0, nullptr, name}));
          })
      .Case([&](LLVM::IntToPtrOp cast) -> FailureOr<std::optional<unsigned>> {
        // A round trip through an integer (HIP converts kernel pointers to
        // the generic address space so) keeps the pointer.
        auto toInt = cast.getArg().getDefiningOp<LLVM::PtrToIntOp>();
        APInt address;
        if (!toInt && matchPattern(cast.getArg(), m_ConstantInt(&address))) {
          // A baked address (v1): an object when the frontend lists it.
          std::string text = std::to_string(address.getZExtValue());
          auto map =
              module.module->getAttrOfType<DictionaryAttr>("reloc.address_map");
          if (!map || !map.get(text))
            return emitError(plainLoc(cast.getLoc()))
                   << "cannot raise the baked address " << text
                   << ": list it with its key and size in !nabla.address_map "
                      "(the v1 convention)";
          return std::optional<unsigned>(
              plan.getOrAddRoot({Root::Address, 0, 0, nullptr,
                                 StringAttr::get(cast.getContext(),
                                                 getAddressGlobalName(text))}));
        }
        if (!toInt)
          return emitError(plainLoc(cast.getLoc()))
                 << "cannot raise a pointer made from a computed integer";
        FailureOr<std::optional<unsigned>> root = resolve(toInt.getArg());
        if (succeeded(root) && plan.byvalOffset.count(toInt.getArg()))
          plan.byvalOffset[value] = plan.byvalOffset[toInt.getArg()];
        return root;
      })
      .Case([&](LLVM::ExtractValueOp extract)
                -> FailureOr<std::optional<unsigned>> {
        auto arg = dyn_cast<BlockArgument>(extract.getContainer());
        std::optional<std::pair<int64_t, Type>> leaf;
        if (arg && arg.getOwner()->isEntryBlock())
          leaf = getAggregateLeaf(layout, arg.getType(), extract.getPosition());
        if (!leaf)
          return emitError(plainLoc(extract.getLoc()))
                 << "cannot raise a pointer extracted from an aggregate that "
                    "is not a parameter";
        return std::optional<unsigned>(plan.getOrAddRoot(
            {Root::ByvalField, arg.getArgNumber(), leaf->first}));
      })
      .Case([&](LLVM::CallIntrinsicOp call)
                -> FailureOr<std::optional<unsigned>> {
        StringRef name = call.getIntrin();
        if (name != "llvm.amdgcn.implicitarg.ptr" &&
            name != "llvm.amdgcn.dispatch.ptr")
          return emitError(plainLoc(call.getLoc()))
                 << "cannot raise a pointer produced by '" << name << "'";
        plan.byvalOffset[value] = 0;
        return std::optional<unsigned>(plan.getOrAddRoot(
            {Root::Dispatch, name == "llvm.amdgcn.implicitarg.ptr" ? 0u : 1u}));
      })
      .Case([&](LLVM::AllocaOp alloca) -> FailureOr<std::optional<unsigned>> {
        return std::optional<unsigned>(
            plan.getOrAddRoot({Root::Alloca, 0, 0, alloca, {}}));
      })
      .Case([&](LLVM::LoadOp load) -> FailureOr<std::optional<unsigned>> {
        FailureOr<std::optional<unsigned>> root = resolve(load.getAddr());
        if (failed(root))
          return failure();
        if (!*root || !plan.byvalOffset.count(load.getAddr()))
          return emitError(plainLoc(load.getLoc()))
                 << "a pointer loaded from memory cannot be raised (only the "
                    "pointer fields of byval struct parameters can be)";
        return std::optional<unsigned>(
            plan.getOrAddRoot({Root::ByvalField,
                               plan.roots[**root].index,
                               plan.byvalOffset[load.getAddr()],
                               nullptr,
                               {}}));
      })
      .Default([&](Operation *op) -> FailureOr<std::optional<unsigned>> {
        // The null pointer: its uses say what the source did with it (the
        // importer gives constants their first user's location).
        if (isa<LLVM::ZeroOp>(op)) {
          // Compared with a kernel's pointer parameter: its presence flag
          // answers. Another null test, or a null used otherwise, has no
          // raised form.
          Operation *unsupported = nullptr;
          for (Operation *user : op->getUsers()) {
            auto compare = dyn_cast<LLVM::ICmpOp>(user);
            Value tested = compare ? getNullTestedPointer(compare) : nullptr;
            auto arg = dyn_cast_or_null<BlockArgument>(tested);
            bool answered =
                arg && arg.getOwner()->isEntryBlock() &&
                llvm::any_of(plan.params, [&](const Param &param) {
                  return param.kind == Param::Presence &&
                         param.llvmArgument == arg.getArgNumber();
                });
            if (!answered && !isa<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(user))
              unsupported = user;
          }
          if (!unsupported)
            return std::optional<unsigned>();
          bool compared = isa<LLVM::ICmpOp>(unsupported);
          return emitError(plainLoc(unsupported->getLoc()))
                 << (compared
                         ? "a null test of a pointer is raised only for a "
                           "function's pointer parameters (`if (bias != "
                           "NULL)`), which the launch may pass as null; "
                           "this pointer is derived from one (an offset "
                           "into it) or from another object"
                         : "a null pointer cannot be raised (stored, passed "
                           "or selected): every pointer must derive from a "
                           "parameter, an alloca or a global");
        }
        return emitError(plainLoc(op->getLoc()))
               << "cannot raise a pointer produced by '" << op->getName()
               << "': every pointer must derive from a parameter, an alloca "
                  "or a global";
      });
}

Type nabla::raise::mergeAccessTypes(Type a, Type b) {
  if (a == b)
    return a;
  if (!a.isIntOrFloat() || !b.isIntOrFloat() || a.isInteger(1) ||
      b.isInteger(1))
    return {};
  unsigned wa = a.getIntOrFloatBitWidth(), wb = b.getIntOrFloatBitWidth();
  if (wa == wb)
    return isa<FloatType>(a) ? a : b; // floats stay floats for the AD
  unsigned narrow = std::min(wa, wb), wide = std::max(wa, wb);
  if (narrow < 8 || narrow % 8 || wide % narrow)
    return {};
  return IntegerType::get(a.getContext(), narrow);
}

LogicalResult FunctionPlanner::recordElementType(Operation *op, unsigned root,
                                                 Type type, bool exact) {
  const Root &r = plan.roots[root];
  if (isa<VectorType, LLVM::LLVMStructType, LLVM::LLVMArrayType>(type))
    return fail(op) << "cannot raise an access of type " << type
                    << " (scalar loads and stores only)";
  if (isa<LLVM::LLVMPointerType>(type))
    return fail(op) << "cannot raise a pointer stored in memory";
  // An integer atomic's object keeps the integer view: its atomic has no
  // float form (the float accesses are reinterpreted instead).
  bool integerAtomic = false;
  if (auto rmw = dyn_cast<LLVM::AtomicRMWOp>(op);
      rmw && isa<IntegerType>(type)) {
    module.integerAtomicObjects.insert(objectKey(root));
    integerAtomic = true;
  }
  Type *slot = nullptr;
  if (r.kind == Root::Shared || r.kind == Root::HostGlobal ||
      r.kind == Root::Address)
    slot = &module.globalElementTypes[r.global];
  else
    slot = &plan.elementTypes[root];
  if (*slot && *slot != type) {
    // One object accessed as several scalar types (a flag byte inside a
    // float, `__float_as_int` through a pointer cast, bf16 pairs read as
    // 32-bit words): it is viewed as the narrowest, the raise splits and
    // reinterprets the wider accesses (RaiseFunction.cpp).
    // Not an object a function takes with one element type (pinned).
    Type merged = mergeAccessTypes(*slot, type);
    if (merged && isa<FloatType>(merged) &&
        module.integerAtomicObjects.count(objectKey(root)))
      merged = integerAtomic ? type : *slot;
    if (merged && !exact && !module.pinnedObjects.count(objectKey(root))) {
      *slot = merged;
      return success();
    }
    InFlightDiagnostic diag = fail(op)
                              << "cannot raise an object accessed "
                                 "both as "
                              << *slot << " and as " << type
                              << " (a pointer cast between element types)";
    if (r.kind == Root::Argument)
      diag << ": parameter #" << r.index;
    else if (r.global)
      diag << ": @" << r.global.getValue();
    return diag;
  }
  *slot = type;
  if (exact)
    module.pinnedObjects.insert(objectKey(root));
  return success();
}

LogicalResult FunctionPlanner::recordAccess(Operation *op, Value address,
                                            Type type, bool exact) {
  FailureOr<std::optional<unsigned>> root = resolve(address);
  if (failed(root))
    return failure();
  if (!*root)
    return fail(op) << "cannot find the object this access is into";
  const Root &r = plan.roots[**root];
  if (r.kind == Root::Function)
    return fail(op) << "cannot raise an access to a function's code";
  if (r.kind == Root::Marker) {
    if (!isa<LLVM::LoadOp>(op))
      return fail(op) << "an Enzyme activity marker can only be loaded";
    return success();
  }
  if (plan.byvalOffset.count(address) && r.kind == Root::Dispatch) {
    if (!isa<LLVM::LoadOp>(op) ||
        !getDispatchField(r.index, plan.byvalOffset[address], type))
      return fail(op) << "cannot raise this access to AMDGPU launch data "
                         "(byte "
                      << plan.byvalOffset[address]
                      << "): only the workgroup size and count are known";
    return success();
  }
  if (plan.byvalOffset.count(address)) {
    if (!isa<LLVM::LoadOp>(op))
      return fail(op) << "cannot raise a write into a byval parameter";
    int64_t offset = plan.byvalOffset[address];
    Type structType = getByvalType(plan.func, r.index);
    for (auto [leafOffset, leafType] : getStructLeaves(layout, structType))
      if (leafOffset == offset && leafType == type)
        return success();
    // Consecutive fields copied as one integer (a float2 as an i64).
    if (!getCoveredLeaves(layout, structType, offset, type).empty())
      return success();
    return fail(op) << "cannot raise a load of " << type << " at byte "
                    << offset << " of a byval parameter: it is not a field of "
                    << structType;
  }
  if (r.global && !isa<LLVM::LoadOp>(op))
    module.writtenGlobals.insert(r.global);
  return recordElementType(op, **root, type, exact);
}

/// Records the element types a callee expects for the pointers passed to it.
LogicalResult FunctionPlanner::planCall(LLVM::CallOp call) {
  std::optional<StringRef> name = call.getCallee();
  if (!name)
    return fail(call)
           << "cannot raise an indirect call (call a function by name)";
  StringAttr calleeName = StringAttr::get(call.getContext(), *name);
  if (std::optional<bool> reverse = getEnzymeMode(*name)) {
    module.enzymeReverse[calleeName] = *reverse;
    if (call.getNumOperands() == 0)
      return fail(call) << "an Enzyme request needs the function to "
                           "differentiate as its first argument";
    FailureOr<std::optional<unsigned>> fnRoot = resolve(call.getOperand(0));
    if (failed(fnRoot))
      return failure();
    if (!*fnRoot || plan.roots[**fnRoot].kind != Root::Function)
      return fail(call) << "the first argument of an Enzyme request must be "
                           "a function of this module";
    FunctionPlan *callee = module.lookup(plan.roots[**fnRoot].global);
    if (!callee)
      return fail(call) << "cannot differentiate @"
                        << plan.roots[**fnRoot].global.getValue()
                        << ": it has no body in this module";
    // Walk the arguments as the rewrite will: markers tag the next
    // argument; pointers (and dup scalars) are followed by a shadow. Split
    // mode's prefix (the caller's tape) comes first.
    unsigned param = 0;
    std::optional<StringRef> activity;
    EnzymeSplitPrefix prefix = getEnzymeSplitPrefix(call);
    if (getEnzymeSplitHalf(*name) && !prefix.tape)
      return fail(call) << "a split-mode Enzyme request needs its tape: "
                           "enzyme_allocated, SIZE, enzyme_tape, POINTER "
                           "after the function";
    auto operands = call.getArgOperands().drop_front(1 + prefix.size);
    for (unsigned i = 0; i < operands.size(); ++i) {
      Value operand = operands[i];
      if (auto load = operand.getDefiningOp<LLVM::LoadOp>()) {
        FailureOr<std::optional<unsigned>> root = resolve(load.getAddr());
        if (succeeded(root) && *root &&
            plan.roots[**root].kind == Root::Marker) {
          activity = getMarkerActivity(plan.roots[**root].global.getValue());
          continue;
        }
      }
      if (param >= callee->func.getNumArguments())
        return fail(call) << "this Enzyme request passes more arguments "
                             "than @"
                          << callee->func.getName() << " takes";
      Type paramType = callee->func.getArgumentTypes()[param];
      bool pointer = isa<LLVM::LLVMPointerType>(paramType);
      bool hasShadow =
          activity ? (*activity == "dup" || *activity == "dupnoneed")
                   : (pointer || (!*reverse && isa<FloatType>(paramType)));
      SmallVector<Value, 2> values{operand};
      if (hasShadow) {
        if (i + 1 >= operands.size())
          return fail(call) << "this Enzyme request lacks the shadow of "
                               "argument #"
                            << param << " of @" << callee->func.getName();
        values.push_back(operands[++i]);
      }
      if (pointer) {
        // The callee's buffer parameter for `param`.
        for (const Param &p : callee->params)
          if (p.kind == Param::Buffer && p.llvmArgument == param &&
              callee->elementTypes[p.root])
            for (Value v : values)
              if (failed(recordAccess(call, v, callee->elementTypes[p.root],
                                      /*exact=*/true)))
                return failure();
      }
      activity.reset();
      ++param;
    }
    return success();
  }

  if (isEnzymeAugmentSize(*name)) {
    FailureOr<std::optional<unsigned>> fnRoot =
        call.getNumOperands() ? resolve(call.getOperand(0))
                              : FailureOr<std::optional<unsigned>>(
                                    std::optional<unsigned>());
    if (failed(fnRoot))
      return failure();
    if (!*fnRoot || plan.roots[**fnRoot].kind != Root::Function)
      return fail(call) << "the first argument of __enzyme_augmentsize must "
                           "be a function of this module";
    return success();
  }
  FunctionPlan *callee = module.lookup(calleeName);
  if (!callee)
    return success(); // device library calls, checked by the rewrite
  for (const Param &p : callee->params) {
    if (p.kind != Param::Buffer || !callee->elementTypes[p.root])
      continue;
    Value operand = call.getArgOperands()[p.llvmArgument];
    if (failed(recordAccess(call, operand, callee->elementTypes[p.root],
                            /*exact=*/true)))
      return failure();
  }
  return success();
}

LogicalResult FunctionPlanner::planFields(unsigned index, Type aggregate) {
  if (!plan.isKernel)
    return fail(plan.func) << "cannot raise a struct parameter (byval or by "
                              "value) of a device function: only kernels take "
                              "them";
  for (auto [offset, leaf] : getStructLeaves(layout, aggregate)) {
    if (isa<LLVM::LLVMPointerType>(leaf)) {
      unsigned root = plan.getOrAddRoot({Root::ByvalField, index, offset});
      plan.params.push_back({Param::Buffer, root, nullptr, index, offset});
    } else if (leaf.isIntOrIndexOrFloat()) {
      plan.params.push_back({Param::Scalar, 0, leaf, index, offset});
    } else {
      return fail(plan.func) << "cannot raise a struct field of type " << leaf;
    }
  }
  return success();
}

LogicalResult FunctionPlanner::planParams() {
  LLVM::LLVMFuncOp func = plan.func;
  SmallVector<Param> presence;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    // A byval struct, or an aggregate passed by value (Julia's device
    // arrays, read with extractvalue): its fields.
    Type aggregate = getByvalType(func, index);
    if (!aggregate && isa<LLVM::LLVMStructType, LLVM::LLVMArrayType>(type))
      aggregate = type;
    if (aggregate) {
      if (failed(planFields(index, aggregate)))
        return failure();
      continue;
    }
    if (auto pointer = dyn_cast<LLVM::LLVMPointerType>(type)) {
      if (pointer.getAddressSpace() == 3 || pointer.getAddressSpace() == 5)
        return fail(func) << "cannot raise a parameter pointing into "
                             "workgroup or private memory (parameter #"
                          << index << ")";
      unsigned root =
          plan.getOrAddRoot({Root::Argument, static_cast<unsigned>(index)});
      plan.params.push_back(
          {Param::Buffer, root, nullptr, static_cast<unsigned>(index)});
      if (!plan.isKernel)
        plan.params.push_back(
            {Param::Offset, root, nullptr, static_cast<unsigned>(index)});
      // `p != NULL` of a parameter, here or in a function it is passed to:
      // a flag after the function's own parameters (so that theirs keep
      // their positions) says whether it is null; a kernel's comes from the
      // launch, a device function's from its caller.
      if (isNullTested(func.getArgument(index)) ||
          flowsToPresence(module, func.getArgument(index))) {
        plan.presenceRoots.insert(root);
        presence.push_back({Param::Presence, root,
                            IntegerType::get(func.getContext(), 32),
                            static_cast<unsigned>(index)});
      }
      continue;
    }
    if (!type.isIntOrFloat())
      return fail(func) << "cannot raise a parameter of type " << type
                        << " (parameter #" << index << ")";
    plan.params.push_back(
        {Param::Scalar, 0, type, static_cast<unsigned>(index)});
  }
  llvm::append_range(plan.params, presence);
  return success();
}

LogicalResult FunctionPlanner::run() {
  plan.isKernel = isKernel(plan.func);
  if (failed(planParams()))
    return failure();
  WalkResult walk = plan.func.walk([&](Operation *op) -> WalkResult {
    for (Value result : op->getResults())
      if (isa<LLVM::LLVMPointerType>(result.getType()) && !result.use_empty())
        if (failed(resolve(result)))
          return WalkResult::interrupt();
    LogicalResult ok = success();
    if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
      if (!isa<LLVM::LLVMPointerType>(load.getType()))
        ok = recordAccess(op, load.getAddr(), load.getType());
    } else if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
      ok = recordAccess(op, store.getAddr(), store.getValue().getType());
    } else if (auto rmw = dyn_cast<LLVM::AtomicRMWOp>(op)) {
      ok = recordAccess(op, rmw.getPtr(), rmw.getVal().getType());
    } else if (auto call = dyn_cast<LLVM::CallOp>(op)) {
      ok = planCall(call);
    }
    return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // An object only copied (a local struct array copied out) takes the
  // element type of the object it is copied from or to.
  WalkResult copies = plan.func.walk([&](Operation *copy) -> WalkResult {
    if (!isa<LLVM::MemcpyOp, LLVM::MemmoveOp>(copy))
      return WalkResult::advance();
    Value dstPointer = copy->getOperand(0), srcPointer = copy->getOperand(1);
    FailureOr<std::optional<unsigned>> dst = resolve(dstPointer);
    FailureOr<std::optional<unsigned>> src = resolve(srcPointer);
    if (failed(dst) || failed(src) || !*dst || !*src)
      return WalkResult::advance(); // the raise reports it
    Type dstType = module.getElementType(plan, **dst);
    Type srcType = module.getElementType(plan, **src);
    bool dstKnown =
        dstType && !dstType.isInteger(8) && plan.roots[**dst].isMemory();
    bool srcKnown =
        srcType && !srcType.isInteger(8) && plan.roots[**src].isMemory();
    LogicalResult ok = success();
    if (dstKnown && !srcKnown)
      ok = recordAccess(copy, srcPointer, dstType);
    else if (srcKnown && !dstKnown)
      ok = recordAccess(copy, dstPointer, srcType);
    return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (copies.wasInterrupted())
    return failure();
  // Block arguments of pointer type (phis).
  for (Block &block : plan.func.getBody())
    if (!block.isEntryBlock())
      for (BlockArgument arg : block.getArguments())
        if (isa<LLVM::LLVMPointerType>(arg.getType()) && !arg.use_empty()) {
          FailureOr<std::optional<unsigned>> root = resolve(arg);
          if (failed(root))
            return failure();
          if (!*root)
            return emitError(plainLoc(plan.func.getLoc()))
                   << "cannot find the object a pointer phi points into";
        }
  // A device function's pointer parameter that it never reads or writes
  // (nor a function it passes it to: callees are planned first) is not
  // raised: its callers and Enzyme requests pass nothing for it, whatever
  // their pointer points at (an unused `const int *` in a request).
  if (!plan.isKernel)
    llvm::erase_if(plan.params, [&](const Param &param) {
      return (param.kind == Param::Buffer || param.kind == Param::Offset) &&
             plan.roots[param.root].kind == Root::Argument &&
             !plan.elementTypes[param.root];
    });
  return success();
}

LogicalResult nabla::raise::planFunction(ModulePlan &module,
                                         FunctionPlan &plan) {
  return FunctionPlanner(module, plan).run();
}
