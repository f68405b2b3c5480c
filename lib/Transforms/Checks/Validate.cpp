//===- Validate.cpp - Every pointer and memref base must resolve ----------===//
//
// The check that replaces an AD engine's IR validator crash on a dangling
// host-object reference by a diagnostic: every memref and pointer operand in
// a gpu.module is traced to its base, which must be something a kernel can
// legitimately address.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace nabla {
#define GEN_PASS_DEF_VALIDATE
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

bool isAddress(Type type) {
  return isa<BaseMemRefType, LLVM::LLVMPointerType>(type);
}

/// Ops whose result is an address derived from their address operand.
bool isAddressArithmetic(Operation *op) {
  return isa<ViewLikeOpInterface, LLVM::AddrSpaceCastOp, LLVM::GEPOp,
             memref::MemorySpaceCastOp, memref::CastOp,
             UnrealizedConversionCastOp>(op);
}

/// A declaration `reloc-lower{strategy=defer}` made: the frontend relocates
/// it, and its record is in the manifest.
bool isDeferredRecord(Operation *global) {
  return global->hasAttr(nabla::reloc::kRecordKeyAttrName);
}

struct Validate : public nabla::impl::ValidateBase<Validate> {
  using Base::Base;

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      module.walk([&](Operation *op) {
        // Address arithmetic only forwards a base; check where it is used.
        if (isAddressArithmetic(op))
          return WalkResult::advance();
        for (Value operand : op->getOperands())
          if (isAddress(operand.getType())) {
            DenseSet<Value> visited;
            if (!resolves(operand, op, visited)) {
              failed = true;
              return WalkResult::interrupt();
            }
          }
        return WalkResult::advance();
      });
    });
    if (failed)
      signalPassFailure();
  }

  /// Reports the unresolved global `name` used by `user`.
  bool unresolvedGlobal(Operation *user, Operation *reference,
                        FlatSymbolRefAttr name) {
    InFlightDiagnostic diag =
        user->emitOpError("uses the host object ")
        << name
        << ", an external declaration with no initializer: the kernel "
           "references an object the loader must relocate. Record it with "
           "reloc.global (or list it in the module attribute "
           "reloc.gv_to_value and run --reloc-raise)";
    diag.attachNote(reference->getLoc()) << "referenced here";
    return false;
  }

  /// True if `value`'s base resolves; reports at `user` otherwise.
  bool resolves(Value value, Operation *user, DenseSet<Value> &visited) {
    if (!visited.insert(value).second || isa<BlockArgument>(value))
      return true;
    Operation *def = value.getDefiningOp();
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          def, get.getNameAttr());
      if (global && global.isExternal() && !isDeferredRecord(global))
        return unresolvedGlobal(user, def, get.getNameAttr());
      return true;
    }
    if (auto addressOf = dyn_cast<LLVM::AddressOfOp>(def)) {
      Operation *symbol = SymbolTable::lookupNearestSymbolFrom(
          def, addressOf.getGlobalNameAttr());
      if (auto global = dyn_cast_or_null<LLVM::GlobalOp>(symbol))
        if (!global.getValue() && global.getInitializerRegion().empty() &&
            !isDeferredRecord(global))
          return unresolvedGlobal(user, def, addressOf.getGlobalNameAttr());
      return true;
    }
    // Allocations, relocation ops, runtime-computed addresses, null.
    if (isa<memref::AllocOp, memref::AllocaOp, LLVM::AllocaOp,
            gpu::DynamicSharedMemoryOp, nabla::reloc::GetGlobalOp,
            nabla::reloc::AddressOfOp, LLVM::LoadOp, memref::LoadOp,
            LLVM::CallOp, LLVM::ZeroOp, LLVM::UndefOp, LLVM::PoisonOp>(def) ||
        def->hasTrait<OpTrait::ConstantLike>())
      return true;
    if (isa<CallOpInterface>(def))
      return true;
    // A baked (v1) address, or an integer computed at run time.
    if (isa<LLVM::IntToPtrOp>(def))
      return true;
    // Casts, views and address arithmetic: the base is the source.
    if (isAddressArithmetic(def) || def->getNumOperands() > 0) {
      for (Value operand : def->getOperands())
        if (isAddress(operand.getType()) && !resolves(operand, user, visited))
          return false;
      return true;
    }
    user->emitOpError("uses an address whose base (")
        << def->getName() << ") does not resolve to an argument, allocation, "
        << "initialized global or relocation record";
    return false;
  }
};

} // namespace
