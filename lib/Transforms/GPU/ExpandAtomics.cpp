//===- ExpandAtomics.cpp - Atomics no target has as one instruction -------===//
//
// `memref.atomic_rmw muli` has no hardware atomic on any GPU target (PTX,
// AMDGPU and SPIR-V have none, LLVM's atomicrmw has no `mul`): upstream left
// it as an unrealized cast on NVVM/ROCDL ("LLVM Translation failed") and a
// "failed to legalize" on SPIR-V. It becomes a `memref.generic_atomic_rmw`,
// which every lowering turns into a compare-exchange loop.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"
#include "nabla/Transforms/GenericAtomics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace nabla {
#define GEN_PASS_DEF_EXPANDATOMICS
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {
struct ExpandAtomics : public nabla::impl::ExpandAtomicsBase<ExpandAtomics> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::AtomicRMWOp> atomics;
    getOperation().walk([&](memref::AtomicRMWOp op) {
      if (op.getKind() == arith::AtomicRMWKind::muli &&
          isa<IntegerType>(op.getType()))
        atomics.push_back(op);
    });
    for (memref::AtomicRMWOp atomic : atomics)
      nabla::expandToGenericAtomic(atomic);
  }
};
} // namespace

memref::GenericAtomicRMWOp
nabla::expandToGenericAtomic(memref::AtomicRMWOp atomic) {
  OpBuilder b(atomic);
  Location loc = atomic.getLoc();
  auto generic = memref::GenericAtomicRMWOp::create(b, loc, atomic.getMemref(),
                                                    atomic.getIndices());
  OpBuilder body = OpBuilder::atBlockEnd(generic.getBody());
  Value combined = atomic.getKind() == arith::AtomicRMWKind::assign
                       ? atomic.getValue()
                       : arith::getReductionOp(atomic.getKind(), body, loc,
                                               generic.getCurrentValue(),
                                               atomic.getValue());
  memref::AtomicYieldOp::create(body, loc, combined);
  atomic.replaceAllUsesWith(generic.getResult());
  atomic.erase();
  return generic;
}
