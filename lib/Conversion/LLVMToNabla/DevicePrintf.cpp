//===- DevicePrintf.cpp - CUDA's device printf as gpu.printf --------------===//
//
// clang lowers `printf(fmt, args...)` in CUDA device code to
// `vprintf(@fmt, %buffer)`: the arguments, promoted as for C varargs (float
// to double, char and short to int), are stored into the fields of a
// private struct whose address is the second argument (null without
// arguments). Before the module is planned, each such call becomes
// `gpu.printf` with the format string and the stored values (a float
// promoted to double prints from the float itself, so targets without
// float64 print it too); the buffer, its stores and the string global go.
// Every pipeline lowers gpu.printf (NVVM to vprintf again, SPIR-V and Metal to
// a buffer the runtime prints, docs/HostPrograms.md). What cannot be
// recovered (a string argument, a buffer written elsewhere, a used result) is
// a located error.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace nabla::raise;

namespace {

/// The format of `call`'s first operand: a constant string global.
FailureOr<std::string> formatOf(LLVM::CallOp call) {
  auto address = call.getArgOperands()[0].getDefiningOp<LLVM::AddressOfOp>();
  auto module = call->getParentOfType<ModuleOp>();
  LLVM::GlobalOp global =
      address ? module.lookupSymbol<LLVM::GlobalOp>(address.getGlobalName())
              : nullptr;
  auto text =
      global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull()) : nullptr;
  if (!text)
    return call.emitError("printf's format must be a string literal");
  std::string format = text.getValue().str();
  if (!format.empty() && format.back() == '\0')
    format.pop_back();
  return format;
}

/// Bytes and alignment of a printf argument's promoted type.
std::optional<unsigned> scalarBytes(Type type) {
  if (type.isInteger(32) || type.isF32())
    return 4;
  if (type.isInteger(64) || type.isF64() || isa<LLVM::LLVMPointerType>(type))
    return 8;
  return std::nullopt;
}

/// The byte offset `address` adds to `buffer`, if it is the buffer or a
/// constant GEP of it.
std::optional<int64_t> offsetInto(Value address, Value buffer,
                                  LLVM::LLVMStructType fields,
                                  ArrayRef<int64_t> offsets) {
  if (address == buffer)
    return 0;
  auto gep = address.getDefiningOp<LLVM::GEPOp>();
  if (!gep || gep.getBase() != buffer)
    return std::nullopt;
  // The indices, constant attributes or constant values.
  SmallVector<int64_t> indices;
  for (LLVM::GEPIndicesAdaptor<ValueRange>::value_type index :
       gep.getIndices()) {
    if (auto attr = dyn_cast<IntegerAttr>(index)) {
      indices.push_back(attr.getInt());
      continue;
    }
    auto constant = cast<Value>(index).getDefiningOp<LLVM::ConstantOp>();
    auto value =
        constant ? dyn_cast<IntegerAttr>(constant.getValue()) : IntegerAttr();
    if (!value)
      return std::nullopt;
    indices.push_back(value.getInt());
  }
  Type element = gep.getElemType();
  if (element.isInteger(8) && indices.size() == 1)
    return indices[0];
  if (element == fields && indices.size() == 2 && indices[0] == 0 &&
      indices[1] >= 0 && size_t(indices[1]) < offsets.size())
    return offsets[indices[1]];
  return std::nullopt;
}

LogicalResult rewritePrintf(LLVM::CallOp call) {
  OpBuilder builder(call);
  Location loc = call.getLoc();
  if (call.getArgOperands().size() != 2)
    return call.emitError("vprintf takes a format and an argument buffer");
  FailureOr<std::string> format = formatOf(call);
  if (failed(format))
    return failure();
  if (!call.getResult().use_empty())
    return call.emitError(
        "the result of printf in device code is not supported");
  SmallVector<Value> args;
  Value buffer = call.getArgOperands()[1];
  auto alloca = buffer.getDefiningOp<LLVM::AllocaOp>();
  if (alloca) {
    auto fields = dyn_cast<LLVM::LLVMStructType>(alloca.getElemType());
    if (!fields)
      return call.emitError("printf's argument buffer is not a struct");
    // Natural layout: each promoted scalar at its own alignment.
    SmallVector<int64_t> offsets;
    int64_t offset = 0;
    for (Type field : fields.getBody()) {
      std::optional<unsigned> bytes = scalarBytes(field);
      if (!bytes)
        return call.emitError("printf argument of type ")
               << field << " is not supported";
      offset = llvm::alignTo(offset, *bytes);
      offsets.push_back(offset);
      offset += *bytes;
    }
    // The value each field holds at the call: the last store to it before
    // the call in its block.
    SmallVector<Value> values(offsets.size());
    for (Operation *op = call->getPrevNode(); op; op = op->getPrevNode()) {
      auto store = dyn_cast<LLVM::StoreOp>(op);
      if (!store)
        continue;
      std::optional<int64_t> at =
          offsetInto(store.getAddr(), buffer, fields, offsets);
      if (!at)
        continue;
      auto field = llvm::find(offsets, *at);
      if (field == offsets.end())
        continue;
      Value &slot = values[field - offsets.begin()];
      if (!slot)
        slot = store.getValue();
    }
    for (auto [k, value] : llvm::enumerate(values)) {
      if (!value)
        return call.emitError("cannot find printf argument #")
               << k << " (it is not stored before the call, in its block)";
      if (isa<LLVM::LLVMPointerType>(value.getType()))
        return call.emitError("printf argument #")
               << k
               << " is a pointer or string (%s, %p), which device printf "
                  "on every target cannot print: print numbers";
      if (auto ext = value.getDefiningOp<LLVM::FPExtOp>())
        if (ext.getArg().getType().isF32())
          value = ext.getArg();
      args.push_back(value);
    }
  } else if (!buffer.getDefiningOp<LLVM::ZeroOp>()) {
    return call.emitError("printf's argument buffer is not a local struct");
  }
  gpu::PrintfOp::create(builder, loc, builder.getStringAttr(*format), args);
  call.erase();
  return success();
}

/// Erases the argument buffer `alloca` once only its stores remain (through
/// constant GEPs).
void eraseDeadBuffer(LLVM::AllocaOp alloca) {
  SmallVector<Operation *> stores, geps;
  std::function<bool(Value)> onlyStoredTo = [&](Value address) {
    for (Operation *user : address.getUsers()) {
      if (auto store = dyn_cast<LLVM::StoreOp>(user);
          store && store.getAddr() == address && store.getValue() != address) {
        stores.push_back(user);
        continue;
      }
      auto gep = dyn_cast<LLVM::GEPOp>(user);
      if (!gep || gep.getBase() != address || !onlyStoredTo(gep.getResult()))
        return false;
      geps.push_back(user);
    }
    return true;
  };
  if (!onlyStoredTo(alloca.getResult()))
    return;
  for (Operation *store : stores)
    store->erase();
  // Inner GEPs were collected before the GEPs they are based on.
  for (Operation *gep : geps)
    gep->erase();
  alloca->erase();
}

} // namespace

LogicalResult nabla::raise::rewriteDevicePrintf(ModuleOp module) {
  SmallVector<LLVM::CallOp> calls;
  module.walk([&](LLVM::CallOp call) {
    if (call.getCallee() == "vprintf")
      calls.push_back(call);
  });
  bool failed = false;
  for (LLVM::CallOp call : calls) {
    Value buffer =
        call.getArgOperands().size() == 2 ? call.getArgOperands()[1] : Value();
    auto alloca = buffer ? buffer.getDefiningOp<LLVM::AllocaOp>() : nullptr;
    if (mlir::failed(rewritePrintf(call))) {
      failed = true;
      continue;
    }
    if (alloca)
      eraseDeadBuffer(alloca);
  }
  // Format strings nothing uses any more, and vprintf's declaration.
  SmallVector<Operation *> unused;
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (isa_and_nonnull<StringAttr>(global.getValueOrNull()) &&
        SymbolTable::symbolKnownUseEmpty(global, module))
      unused.push_back(global);
  if (auto vprintf = module.lookupSymbol<LLVM::LLVMFuncOp>("vprintf"))
    if (vprintf.isExternal() &&
        SymbolTable::symbolKnownUseEmpty(vprintf, module))
      unused.push_back(vprintf);
  for (Operation *op : unused)
    op->erase();
  return mlir::failure(failed);
}
