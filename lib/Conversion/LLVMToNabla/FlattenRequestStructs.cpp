//===- FlattenRequestStructs.cpp - Structs by value to gradient requests --===//
//
// A gradient request (`__enzyme_autodiff(f, ...)`) may differentiate a
// function that takes a struct by value (`f(const float *x, float *y,
// Params p)`, `p` marked `enzyme_const`). The raise gives the functions it
// differentiates scalars and buffers, so the request is rewritten to
// differentiate a wrapper instead: the wrapper takes the struct's fields,
// rebuilds the struct and calls `f`, whose call the raise then inlines like
// any call passing a struct (InlineAggregateCalls.cpp). The request passes
// the fields, each `enzyme_const`, read from the caller's struct.
//
// A struct with an active or duplicated activity is refused: its fields
// would need shadows of their own (pass a differentiated field as a pointer
// or scalar of its own).
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace nabla::raise;

namespace {

/// The struct a parameter of `func` passes by value: its `byval`/`byref`
/// type or its first-class aggregate type; null otherwise.
Type getStructByValue(LLVM::LLVMFuncOp func, unsigned index) {
  for (StringRef name : {LLVM::LLVMDialect::getByValAttrName(),
                         LLVM::LLVMDialect::getByRefAttrName()})
    if (auto attr = func.getArgAttrOfType<TypeAttr>(index, name))
      return attr.getValue();
  Type type = func.getArgumentTypes()[index];
  return isa<LLVM::LLVMStructType, LLVM::LLVMArrayType>(type) ? type : Type();
}

/// The GEP indices of field `position` of a struct in memory.
SmallVector<LLVM::GEPArg> fieldIndices(ArrayRef<int64_t> position) {
  SmallVector<LLVM::GEPArg> indices = {0};
  for (int64_t i : position)
    indices.push_back(static_cast<int32_t>(i));
  return indices;
}

/// The wrapper of `func` taking each struct parameter as its fields (made
/// once per function).
LLVM::LLVMFuncOp getOrMakeWrapper(LLVM::LLVMFuncOp func,
                                  SymbolTable &symbols) {
  std::string name = (func.getName() + "_fields").str();
  if (auto existing = symbols.lookup<LLVM::LLVMFuncOp>(name))
    return existing;
  SmallVector<Type> params;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (Type structType = getStructByValue(func, i)) {
      for (auto &[position, type] : getAggregateFields(structType))
        params.push_back(type);
      continue;
    }
    params.push_back(func.getArgumentTypes()[i]);
  }
  OpBuilder builder(func);
  Type result = func.getFunctionType().getReturnType();
  auto wrapper = LLVM::LLVMFuncOp::create(
      builder, func.getLoc(), name,
      LLVM::LLVMFunctionType::get(result, params));
  symbols.insert(wrapper);
  Block *entry = wrapper.addEntryBlock(builder);
  builder.setInsertionPointToStart(entry);
  Location loc = func.getLoc();
  auto pointerType = LLVM::LLVMPointerType::get(func.getContext());
  SmallVector<Value> operands;
  unsigned next = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Type structType = getStructByValue(func, i);
    if (!structType) {
      operands.push_back(entry->getArgument(next++));
      continue;
    }
    AggregateFields fields = getAggregateFields(structType);
    if (!isa<LLVM::LLVMPointerType>(func.getArgumentTypes()[i])) {
      // A first-class aggregate: rebuilt with insertvalue.
      Value rebuilt = LLVM::PoisonOp::create(builder, loc, structType);
      for (auto &[position, type] : fields)
        rebuilt = LLVM::InsertValueOp::create(
            builder, loc, rebuilt, entry->getArgument(next++), position);
      operands.push_back(rebuilt);
      continue;
    }
    // In memory: a local copy the fields are stored into.
    Value one = LLVM::ConstantOp::create(builder, loc, builder.getI64Type(),
                                         builder.getI64IntegerAttr(1));
    Value copy =
        LLVM::AllocaOp::create(builder, loc, pointerType, structType, one);
    for (auto &[position, type] : fields) {
      Value address = LLVM::GEPOp::create(builder, loc, pointerType,
                                          structType, copy,
                                          fieldIndices(position));
      LLVM::StoreOp::create(builder, loc, entry->getArgument(next++), address);
    }
    operands.push_back(copy);
  }
  auto call = LLVM::CallOp::create(builder, loc, func, operands);
  // The callee's by-value attributes go with the call (the inliner copies
  // a byval argument, as a call would).
  SmallVector<Attribute> argAttrs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    argAttrs.push_back(func.getArgAttrDict(i)
                           ? Attribute(func.getArgAttrDict(i))
                           : builder.getDictionaryAttr({}));
  call.setArgAttrsAttr(builder.getArrayAttr(argAttrs));
  if (isa<LLVM::LLVMVoidType>(result))
    LLVM::ReturnOp::create(builder, loc, ValueRange{});
  else
    LLVM::ReturnOp::create(builder, loc, call.getResult());
  return wrapper;
}

} // namespace

LogicalResult nabla::raise::flattenRequestStructs(ModuleOp module) {
  SymbolTable symbols(module);
  SmallVector<LLVM::CallOp> requests;
  module.walk([&](LLVM::CallOp call) {
    if (call.getCallee() && getEnzymeMode(*call.getCallee()) &&
        !call.getArgOperands().empty())
      requests.push_back(call);
  });
  unsigned renamed = 0;
  for (LLVM::CallOp call : requests) {
    bool reverse = *getEnzymeMode(*call.getCallee());
    auto address = stripPointerCasts(call.getArgOperands()[0])
                       .getDefiningOp<LLVM::AddressOfOp>();
    auto func = address ? symbols.lookup<LLVM::LLVMFuncOp>(
                              address.getGlobalName())
                        : LLVM::LLVMFuncOp();
    if (!func || func.isExternal())
      continue; // the planner reports it
    if (isa<LLVM::LLVMStructType, LLVM::LLVMArrayType>(
            func.getFunctionType().getReturnType()))
      continue; // the inliner or the planner reports it

    // The request's operands, the struct ones replaced by their fields. A
    // struct is by value in the function (NVPTX: `byval`), or only at the
    // request, the function taking its fields (AMDGPU expands small
    // structs into scalars; the variadic request passes them `byref`).
    OpBuilder builder(call);
    Location loc = call.getLoc();
    // Split mode's prefix (the caller's tape) is kept as it is.
    unsigned prefix = getEnzymeSplitPrefix(call).size;
    auto operands = call.getArgOperands().drop_front(1 + prefix);
    ArrayAttr siteAttrs = call.getArgAttrsAttr();
    auto getSiteStruct = [&](unsigned operand) -> Type {
      operand += prefix;
      if (!siteAttrs || operand + 1 >= siteAttrs.size())
        return Type();
      auto dict = dyn_cast<DictionaryAttr>(siteAttrs[operand + 1]);
      for (StringRef name : {LLVM::LLVMDialect::getByValAttrName(),
                             LLVM::LLVMDialect::getByRefAttrName()})
        if (auto attr = dict ? dict.getAs<TypeAttr>(name) : TypeAttr())
          return attr.getValue();
      return Type();
    };
    SmallVector<Value> rewritten(
        call.getArgOperands().drop_front().take_front(prefix));
    bool needsWrapper = false, changed = false;
    unsigned param = 0;
    std::optional<StringRef> activity;
    Value marker;
    for (unsigned i = 0; i < operands.size(); ++i) {
      if (std::optional<StringRef> found = getLoadedMarker(operands[i])) {
        activity = found;
        marker = operands[i];
        rewritten.push_back(operands[i]);
        continue;
      }
      if (param >= func.getNumArguments())
        break; // the planner reports the mismatch
      Type type = func.getArgumentTypes()[param];
      Type structType = getStructByValue(func, param);
      Type siteStruct = structType ? Type() : getSiteStruct(i);
      if (siteStruct) {
        // Expanded by the ABI: the function's next parameters must be the
        // fields.
        AggregateFields fields = getAggregateFields(siteStruct);
        bool expanded = param + fields.size() <= func.getNumArguments();
        for (unsigned k = 0; expanded && k < fields.size(); ++k)
          expanded = func.getArgumentTypes()[param + k] == fields[k].second;
        if (!expanded)
          siteStruct = Type();
      }
      if (structType || siteStruct) {
        Type passed = structType ? structType : siteStruct;
        if (!activity || *activity != "const")
          return call.emitError("argument #")
                 << param << " of @" << func.getName()
                 << " is a struct passed by value: a gradient request takes "
                    "it marked enzyme_const (its fields are then constants); "
                    "pass a differentiated field as a pointer or scalar of "
                    "its own";
        // The marker already pushed tags the first field; each further
        // field gets its own.
        bool first = true;
        AggregateFields fields = getAggregateFields(passed);
        for (auto &[position, fieldType] : fields) {
          if (!first)
            rewritten.push_back(marker);
          first = false;
          if (!isa<LLVM::LLVMPointerType>(operands[i].getType())) {
            rewritten.push_back(LLVM::ExtractValueOp::create(
                builder, loc, operands[i], position));
            continue;
          }
          Value fieldAddress = LLVM::GEPOp::create(
              builder, loc, operands[i].getType(), passed, operands[i],
              fieldIndices(position));
          rewritten.push_back(
              LLVM::LoadOp::create(builder, loc, fieldType, fieldAddress));
        }
        activity.reset();
        param += structType ? 1 : fields.size();
        needsWrapper |= static_cast<bool>(structType);
        changed = true;
        continue;
      }
      bool hasShadow =
          activity ? (*activity == "dup" || *activity == "dupnoneed")
                   : (isa<LLVM::LLVMPointerType>(type) ||
                      (!reverse && isa<FloatType>(type)));
      rewritten.push_back(operands[i]);
      if (hasShadow && i + 1 < operands.size())
        rewritten.push_back(operands[++i]);
      activity.reset();
      ++param;
    }
    if (!changed)
      continue;
    LLVM::LLVMFuncOp target =
        needsWrapper ? getOrMakeWrapper(func, symbols) : func;
    rewritten.insert(rewritten.begin(),
                     LLVM::AddressOfOp::create(builder, loc, target));
    // A declaration of the request of the new operand types (the name keeps
    // Enzyme's, which says the mode).
    SmallVector<Type> types = llvm::to_vector(
        llvm::map_range(rewritten, [](Value v) { return v.getType(); }));
    Type result = call.getNumResults() ? call.getResult().getType()
                                       : LLVM::LLVMVoidType::get(
                                             call.getContext());
    OpBuilder atModule = OpBuilder::atBlockEnd(module.getBody());
    auto declaration = LLVM::LLVMFuncOp::create(
        atModule, loc,
        (*call.getCallee() + "_fields" + Twine(renamed++)).str(),
        LLVM::LLVMFunctionType::get(result, types));
    symbols.insert(declaration);
    auto replacement =
        LLVM::CallOp::create(builder, loc, declaration, rewritten);
    Value oldFunction = call.getArgOperands()[0];
    call->replaceAllUsesWith(replacement);
    call.erase();
    // The function's address, now unused, would keep it raised.
    while (Operation *def = oldFunction.getDefiningOp()) {
      if (!def->use_empty() ||
          !isa<LLVM::AddressOfOp, LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def))
        break;
      oldFunction = def->getNumOperands() ? def->getOperand(0) : Value();
      def->erase();
      if (!oldFunction)
        break;
    }
  }
  return success();
}
