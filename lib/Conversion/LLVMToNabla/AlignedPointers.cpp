//===- AlignedPointers.cpp - Pointers aligned down through their address --===//
//
// Code that updates halves in pairs aligns a pointer down to its 32-bit word
// and asks which half it points at through the address as an integer:
//
//   uintptr_t p = reinterpret_cast<uintptr_t>(addr);
//   auto *word = reinterpret_cast<__nv_bfloat162 *>(p & ~uintptr_t(3));
//   bool high = p & 3;
//
// (llm.c's atomicAddX, PyTorch's fastAtomicAdd of halves). The raise follows
// pointers, not integers. When the integer is the address of a pointer into
// an object at least as aligned as the mask (kernel buffers: every runtime
// allocates them at 16 bytes or more; workgroup globals and allocas by their
// declared alignment) and the pointer is the object plus GEPs, the masks are
// about the pointer's byte offset in its object:
//
//   ptrtoint(p) & m     ->  offset(p) & m                 (m = 2^k - 1)
//   inttoptr(ptrtoint(p) & ~m)  ->  gep i8, p, -(offset(p) & m)
//
// for 2^k up to 16. A device function's pointer parameter is taken to be
// that aligned too (its caller's offset is not known here): such code uses
// the alignment to choose how it reaches an element (the word holding it,
// a vector access after a scalar prologue), and reaches the same elements
// with the same values whatever the origin, which is all the raised kernel
// keeps (a pair of halves becomes its two halves). Other address
// arithmetic is left to the raise, which refuses it with a located error.
// A pointer read as an integer and converted back (`inttoptr(load i64, p)`)
// is read as the pointer.
//
//===----------------------------------------------------------------------===//

#include "RaiseLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

using namespace mlir;

namespace {

/// The largest mask (2^k - 1) whose low bits are about the offset alone.
constexpr int64_t kMaxAlignment = 16;

/// The alignment in bytes the object `base` is known to have, or 0.
int64_t knownAlignment(LLVM::LLVMFuncOp func, Value base) {
  // A parameter: a kernel's buffers are that aligned; a device function's
  // pointer is taken as its own origin (see above).
  if (auto arg = dyn_cast<BlockArgument>(base))
    return arg.getOwner()->isEntryBlock() &&
                   arg.getOwner()->getParentOp() == func.getOperation()
               ? kMaxAlignment
               : 0;
  if (auto alloca = base.getDefiningOp<LLVM::AllocaOp>())
    return alloca.getAlignment().value_or(0);
  if (auto address = base.getDefiningOp<LLVM::AddressOfOp>())
    if (auto global = dyn_cast_or_null<LLVM::GlobalOp>(
            SymbolTable::lookupNearestSymbolFrom(address,
                                                 address.getGlobalNameAttr())))
      return global.getAlignment().value_or(0);
  return 0;
}

/// The byte offset of `pointer` from its base object as an i64 built before
/// `b`'s insertion point from the GEPs between them, or null when something
/// else (a phi, a select, a load) stands between them.
Value byteOffset(OpBuilder &b, Location loc, const DataLayout &layout,
                 Value pointer) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Operation *def = pointer.getDefiningOp();
  if (!def || !isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp>(def))
    return pointer == nabla::raise::getBaseObject(pointer) ? constant(0)
                                                           : Value();
  Value offset = byteOffset(b, loc, layout, def->getOperand(0));
  auto gep = dyn_cast<LLVM::GEPOp>(def);
  if (!offset || !gep)
    return offset;
  Type type = gep.getElemType();
  bool first = true;
  for (auto index : gep.getIndices()) {
    Value term;
    int64_t scale = 0;
    if (first) {
      scale = nabla::raise::getTypeSize(layout, type);
    } else if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
      auto field = dyn_cast<IntegerAttr>(index);
      if (!field)
        return {};
      int64_t k = field.getInt();
      term = constant(nabla::raise::getFieldOffset(layout, structType, k));
      type = structType.getBody()[k];
    } else if (auto arrayType = dyn_cast<LLVM::LLVMArrayType>(type)) {
      type = arrayType.getElementType();
      scale = nabla::raise::getTypeSize(layout, type);
    } else {
      return {};
    }
    first = false;
    if (!term) {
      Value count;
      if (auto attr = dyn_cast<IntegerAttr>(index)) {
        count = constant(attr.getInt());
      } else {
        count = cast<Value>(index);
        if (count.getType() != i64)
          count = LLVM::SExtOp::create(b, loc, i64, count);
      }
      term = LLVM::MulOp::create(b, loc, count, constant(scale));
    }
    offset = LLVM::AddOp::create(b, loc, offset, term);
  }
  return offset;
}

/// `mask` as 2^k - 1 (low) or its complement (high) for 2^k up to
/// kMaxAlignment: the 2^k - 1, or 0 when it is neither.
int64_t lowBitsOf(int64_t mask, bool &complement) {
  for (int64_t align = 2; align <= kMaxAlignment; align *= 2) {
    if (mask == align - 1) {
      complement = false;
      return mask;
    }
    if (mask == ~(align - 1)) {
      complement = true;
      return align - 1;
    }
  }
  return 0;
}

/// A pointer read from memory as an integer and converted back,
/// `inttoptr(load i64, p)` (thrust's and cub's functors copy their
/// `device_ptr` fields so), is a load of the pointer: the raise then follows
/// it as it follows any pointer read from `p` (a byval struct's pointer
/// field), or refuses it as one. The integer load stays for its other uses.
void rewriteIntegerLoadedPointers(LLVM::LLVMFuncOp func,
                                  const DataLayout &layout) {
  SmallVector<LLVM::IntToPtrOp> conversions;
  func.walk([&](LLVM::IntToPtrOp op) { conversions.push_back(op); });
  for (LLVM::IntToPtrOp toPointer : conversions) {
    auto load = toPointer.getArg().getDefiningOp<LLVM::LoadOp>();
    if (!load || load.getVolatile_() || load.getOrdering() !=
                                            LLVM::AtomicOrdering::not_atomic ||
        layout.getTypeSizeInBits(load.getType()) !=
            layout.getTypeSizeInBits(toPointer.getType()))
      continue;
    OpBuilder b(load);
    auto pointer = LLVM::LoadOp::create(b, load.getLoc(), toPointer.getType(),
                                        load.getAddr(), load.getAlignment()
                                                            .value_or(0));
    toPointer.replaceAllUsesWith(pointer.getResult());
    toPointer.erase();
    if (load->use_empty())
      load.erase();
  }
}

} // namespace

void nabla::raise::rewriteAlignedPointers(LLVM::LLVMFuncOp func) {
  DataLayout layout = DataLayout::closest(func);
  SmallVector<LLVM::PtrToIntOp> addresses;
  func.walk([&](LLVM::PtrToIntOp address) { addresses.push_back(address); });
  for (LLVM::PtrToIntOp address : addresses) {
    Value pointer = address.getArg();
    int64_t alignment = knownAlignment(func, getBaseObject(pointer));
    for (Operation *user : llvm::make_early_inc_range(address->getUsers())) {
      auto mask = dyn_cast<LLVM::AndOp>(user);
      APInt bits;
      if (!mask || !matchPattern(mask.getRhs(), m_ConstantInt(&bits)) ||
          mask.getLhs() != address.getResult())
        continue;
      bool complement = false;
      int64_t low = lowBitsOf(bits.getSExtValue(), complement);
      if (!low || low >= alignment ||
          (complement && !llvm::all_of(mask->getUsers(), [](Operation *use) {
            return isa<LLVM::IntToPtrOp>(use);
          })))
        continue;
      OpBuilder b(mask);
      Location loc = mask.getLoc();
      Value offset = byteOffset(b, loc, layout, pointer);
      if (!offset)
        continue;
      Type i64 = b.getI64Type();
      Value lowBits = LLVM::AndOp::create(
          b, loc, offset,
          LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(low)));
      if (!complement) {
        Value result = lowBits;
        if (mask.getType() != i64)
          result = LLVM::TruncOp::create(b, loc, mask.getType(), lowBits);
        mask.replaceAllUsesWith(result);
        mask.erase();
        continue;
      }
      Value back = LLVM::SubOp::create(
          b, loc, LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0)),
          lowBits);
      for (Operation *use : llvm::make_early_inc_range(mask->getUsers())) {
        auto toPointer = cast<LLVM::IntToPtrOp>(use);
        OpBuilder at(toPointer);
        Value aligned = LLVM::GEPOp::create(
            at, toPointer.getLoc(), pointer.getType(), at.getI8Type(), pointer,
            ArrayRef<LLVM::GEPArg>{back});
        if (aligned.getType() != toPointer.getType())
          aligned = LLVM::AddrSpaceCastOp::create(at, toPointer.getLoc(),
                                                  toPointer.getType(), aligned);
        toPointer.replaceAllUsesWith(aligned);
        toPointer.erase();
      }
      mask.erase();
    }
    if (address->use_empty())
      address.erase();
  }
  rewriteIntegerLoadedPointers(func, layout);
}
