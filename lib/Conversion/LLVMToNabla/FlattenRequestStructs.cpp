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
// A struct marked `enzyme_dup`/`enzyme_dupnoneed` comes with a shadow struct
// (Enzyme's `Duplicated` of a Julia device array, a struct of buffers): its
// pointer fields become duplicated buffers, the shadow struct's fields their
// shadows, and its other fields constants. A float field of such a struct,
// or a struct marked active, is refused: a struct passed by value returns no
// derivative of its fields (pass a differentiated float as a scalar of its
// own).
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

/// A duplicated struct the ABI expanded into `size` fields at a request
/// (size 0: the operands fit no such reading); its shadow is the struct
/// operand after them (`shadowStruct` its type) or `size` more fields.
struct ExpandedPair {
  unsigned size = 0;
  Type shadowStruct;
};

/// Reads operands[i...] of a request as a duplicated struct the AMDGPU ABI
/// expanded into its fields, which are parameters `param...` of `func`:
/// std::nullopt when operand i and the next are a plain primal and shadow
/// of one type. `getSiteStruct` gives an operand's byref/byval struct.
std::optional<ExpandedPair>
findExpandedPair(OperandRange operands, unsigned i, LLVM::LLVMFuncOp func,
                 unsigned param,
                 llvm::function_ref<Type(unsigned)> getSiteStruct) {
  // Only a pointer followed by a non-pointer cannot be a primal and its
  // shadow (a struct's first field is what the ABI expands first).
  if (i + 1 >= operands.size() ||
      !isa<LLVM::LLVMPointerType>(operands[i].getType()) ||
      isa<LLVM::LLVMPointerType>(operands[i + 1].getType()) || getSiteStruct(i))
    return std::nullopt;
  auto takes = [&](unsigned k) {
    // Operands i .. i + k are the function's next k parameters.
    if (param + k > func.getNumArguments() || i + k > operands.size())
      return false;
    for (unsigned j = 0; j < k; ++j)
      if (operands[i + j].getType() != func.getArgumentTypes()[param + j] ||
          getLoadedMarker(operands[i + j]) || getSiteStruct(i + j))
        return false;
    return true;
  };
  for (unsigned k = 2; i + k < operands.size(); ++k) {
    if (!takes(k))
      break;
    // The shadow as a struct operand of those fields.
    if (Type shadow = getSiteStruct(i + k)) {
      AggregateFields fields = getAggregateFields(shadow);
      bool same = fields.size() == k;
      for (unsigned j = 0; same && j < k; ++j)
        same = fields[j].second == operands[i + j].getType();
      if (same)
        return ExpandedPair{k, shadow};
      break;
    }
    // The shadow expanded too, then a marker or the end.
    if (i + 2 * k > operands.size())
      continue;
    bool same = true;
    for (unsigned j = 0; same && j < k; ++j)
      same = operands[i + k + j].getType() == operands[i + j].getType() &&
             !getLoadedMarker(operands[i + k + j]);
    if (same &&
        (i + 2 * k == operands.size() || getLoadedMarker(operands[i + 2 * k])))
      return ExpandedPair{k, Type()};
  }
  return ExpandedPair{};
}

/// A load of Enzyme's `enzyme_const` marker before `builder`'s point (the
/// global declared when the module has none).
Value getConstMarker(OpBuilder &builder, Location loc, ModuleOp module,
                     SymbolTable &symbols) {
  auto global = symbols.lookup<LLVM::GlobalOp>("enzyme_const");
  if (!global) {
    OpBuilder atModule = OpBuilder::atBlockBegin(module.getBody());
    global =
        LLVM::GlobalOp::create(atModule, loc, builder.getI32Type(),
                               /*isConstant=*/false, LLVM::Linkage::External,
                               "enzyme_const", Attribute());
    symbols.insert(global);
  }
  Value address = LLVM::AddressOfOp::create(builder, loc, global);
  return LLVM::LoadOp::create(builder, loc, global.getType(), address);
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
      bool duplicated =
          activity && (*activity == "dup" || *activity == "dupnoneed");
      // A duplicated struct the AMDGPU ABI expanded into its fields at the
      // request (the function takes the fields): its shadow follows as a
      // `byref` struct or expanded too.
      std::optional<ExpandedPair> expandedPair;
      if (!structType && !siteStruct && duplicated) {
        expandedPair =
            findExpandedPair(operands, i, func, param, getSiteStruct);
        if (expandedPair && expandedPair->size == 0)
          return call.emitError("argument #")
                 << param << " of @" << func.getName() << " is marked enzyme_"
                 << *activity
                 << " but its shadow is not of its type (a struct the ABI "
                    "expanded into its fields at the request is read up to "
                    "its shadow, a struct of the same fields)";
      }
      if (structType || siteStruct || expandedPair) {
        Type passed = structType ? structType : siteStruct;
        if (!activity || (*activity != "const" && !duplicated))
          return call.emitError("argument #")
                 << param << " of @" << func.getName()
                 << " is a struct passed by value: a gradient request takes "
                    "it marked enzyme_const, enzyme_dup or enzyme_dupnoneed "
                    "(a struct of pointers with a shadow struct); pass an "
                    "active float field as a scalar of its own";
        // The field at `position` of struct operand `source`.
        auto readField = [&](Value source, ArrayRef<int64_t> position,
                             Type fieldType) -> Value {
          if (!isa<LLVM::LLVMPointerType>(source.getType()))
            return LLVM::ExtractValueOp::create(builder, loc, source, position);
          Value fieldAddress =
              LLVM::GEPOp::create(builder, loc, source.getType(), passed,
                                  source, fieldIndices(position));
          return LLVM::LoadOp::create(builder, loc, fieldType, fieldAddress);
        };
        // The fields of the primal struct, and of its shadow struct when
        // duplicated (as a struct operand of the same type or expanded).
        SmallVector<Type> fieldTypes;
        SmallVector<Value> primalFields, shadowFields;
        unsigned consumed = 1;
        if (expandedPair) {
          passed = expandedPair->shadowStruct;
          for (unsigned k = 0; k < expandedPair->size; ++k) {
            fieldTypes.push_back(operands[i + k].getType());
            primalFields.push_back(operands[i + k]);
          }
          if (passed) {
            for (auto &[position, fieldType] : getAggregateFields(passed))
              shadowFields.push_back(readField(operands[i + expandedPair->size],
                                               position, fieldType));
            consumed = expandedPair->size + 1;
          } else {
            for (unsigned k = 0; k < expandedPair->size; ++k)
              shadowFields.push_back(operands[i + expandedPair->size + k]);
            consumed = 2 * expandedPair->size;
          }
        } else {
          AggregateFields fields = getAggregateFields(passed);
          for (auto &[position, fieldType] : fields) {
            fieldTypes.push_back(fieldType);
            primalFields.push_back(readField(operands[i], position, fieldType));
          }
          if (duplicated) {
            // The shadow struct: an operand like the primal's, or its
            // fields (the ABI expands one and not the other).
            bool asStruct =
                i + 1 < operands.size() &&
                operands[i + 1].getType() == operands[i].getType() &&
                (!isa<LLVM::LLVMPointerType>(operands[i].getType()) ||
                 structType || getSiteStruct(i + 1) == passed);
            bool asFields = !asStruct && i + fields.size() < operands.size();
            for (unsigned k = 0; asFields && k < fields.size(); ++k)
              asFields = operands[i + 1 + k].getType() == fieldTypes[k];
            if (!asStruct && !asFields)
              return call.emitError("argument #")
                     << param << " of @" << func.getName()
                     << " is a struct marked enzyme_" << *activity
                     << " without a shadow struct of its type after it";
            for (auto [k, field] : llvm::enumerate(fields))
              shadowFields.push_back(
                  asStruct
                      ? readField(operands[i + 1], field.first, field.second)
                      : operands[i + 1 + k]);
            consumed = asStruct ? 2 : 1 + fields.size();
          }
        }
        // A duplicated struct's pointers are duplicated buffers (the shadow
        // struct's fields are their shadows, as Enzyme's Duplicated of a
        // Julia device array); its other fields are constants. A float
        // field has nowhere to return its derivative (the shadow struct is
        // a copy), so it is refused rather than dropped.
        if (duplicated)
          for (auto [k, fieldType] : llvm::enumerate(fieldTypes))
            if (isa<FloatType, VectorType>(fieldType))
              return call.emitError("argument #")
                     << param << " of @" << func.getName()
                     << " is a struct marked enzyme_" << *activity
                     << " with a float field (#" << k
                     << "): a struct passed by value returns no derivative "
                        "of its fields; pass the float as a scalar of its "
                        "own, or the struct enzyme_const";
        // Each field gets its own marker (the one already pushed is
        // replaced).
        rewritten.pop_back();
        Value constMarker =
            duplicated ? getConstMarker(builder, loc, module, symbols) : marker;
        for (auto [k, fieldType] : llvm::enumerate(fieldTypes)) {
          bool pointer = isa<LLVM::LLVMPointerType>(fieldType);
          rewritten.push_back(duplicated && pointer ? marker : constMarker);
          rewritten.push_back(primalFields[k]);
          if (duplicated && pointer)
            rewritten.push_back(shadowFields[k]);
        }
        i += consumed - 1;
        activity.reset();
        param += structType ? 1 : fieldTypes.size();
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
