//===- OrderedAccumulation.cpp - Deterministic accumulation ---------------===//
//
// nabla-differentiate{deterministic=true}: adjoints many threads add into one
// element are summed in a fixed order (per-thread accumulators, ordered block
// reductions, per-block partials added in block order by the last block).
//
//===----------------------------------------------------------------------===//

#include "ReverseEmitter.h"

#include "ActivityAnalysis.h"
#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "RecordShadows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace nabla;

/// True if src `v` has one value across the grid (or, `perBlock`, across
/// the block) and can be recomputed anywhere: constants, launch sizes, a
/// kernel's scalar parameters, arguments every call passes uniform values
/// (uniformArgs), block ids (`perBlock`) and arith of those.
bool VJPEmitter::isUniform(Value v, bool perBlock) {
  return isUniformAcrossThreads(v, perBlock, [&](BlockArgument arg) {
    return arg.getOwner() == primalBody &&
           !isa<BaseMemRefType>(arg.getType()) &&
           (ordering->scratch || uniformArgs.contains(arg));
  });
}

/// Clones the computation of the uniform src value `v` at the current
/// point.
Value VJPEmitter::rematerialize(Value v, IRMapping &map) {
  if (Value known = map.lookupOrNull(v))
    return known;
  if (isa<BlockArgument>(v))
    return fwd.lookup(v);
  Operation *op = v.getDefiningOp();
  for (Value operand : op->getOperands())
    map.map(operand, rematerialize(operand, map));
  return b.clone(*op, map)->getResult(cast<OpResult>(v).getResultNumber());
}

SmallVector<Value> VJPEmitter::rematerialize(ArrayRef<Value> values) {
  IRMapping map;
  return llvm::map_to_vector(values,
                             [&](Value v) { return rematerialize(v, map); });
}

int64_t VJPEmitter::wordsOf(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 32);
}

LogicalResult VJPEmitter::accumulateOrdered(Operation *src, Value value) {
  auto load = cast<memref::LoadOp>(src);
  auto arg = dyn_cast<BlockArgument>(load.getMemRef());
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      load.getMemRefType().getMemorySpace());
  bool workgroup = space && space.getValue() == gpu::AddressSpace::Workgroup;
  if (!arg || arg.getOwner() != primalBody ||
      !llvm::all_of(load.getIndices(),
                    [&](Value i) { return isUniform(i, workgroup); }))
    return src->emitOpError(
        "has an adjoint that deterministic=true cannot order: its index "
        "varies across threads without being proven thread-exclusive "
        "(ordered accumulation covers an element every thread of the grid "
        "reads, or of the block for workgroup memory, through a parameter "
        "of the function)");
  if (!isa<FloatType>(value.getType()))
    return src->emitOpError("has a non-scalar adjoint that "
                            "deterministic=true cannot order");
  if (!workgroup && !ordering->scratch)
    return src->emitOpError(
        "has an adjoint that many threads of the grid accumulate into one "
        "element; deterministic=true orders that only in a kernel adjoint "
        "(nabla.kernel_adjoint), whose scratch parameter holds the "
        "per-block partials");
  if (workgroup && !ordering->scratch &&
      !primalBody->walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
           .wasInterrupted())
    return src->emitOpError(
        "has an adjoint that the block accumulates into one workgroup "
        "element; deterministic=true orders it with block reductions, which "
        "need a function that the whole block calls together (one holding "
        "a barrier) or a kernel adjoint");
  OrderedSite *site = nullptr;
  for (OrderedSite &s : orderedSites)
    if (s.memref == arg && llvm::equal(s.indices, load.getIndices()))
      site = &s;
  Location loc = src->getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  if (!site) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entry);
    Type type = value.getType();
    Value acc = memref::AllocaOp::create(b, loc, MemRefType::get({1}, type));
    memref::StoreOp::create(
        b, loc, createZero(b, loc, type), acc,
        arith::ConstantIndexOp::create(b, loc, 0).getResult());
    orderedSites.push_back({arg, llvm::to_vector(load.getIndices()),
                            shadows.lookup(arg), acc, workgroup,
                            workgroup ? 0 : ordering->wordsPerBlock});
    if (!workgroup)
      ordering->wordsPerBlock += wordsOf(type);
    site = &orderedSites.back();
  }
  Value old = memref::LoadOp::create(b, loc, site->acc, zero);
  memref::StoreOp::create(b, loc, addDerivatives(b, loc, old, value), site->acc,
                          zero);
  return success();
}

Value VJPEmitter::blockSum(Location loc, Value v) {
  return gpu::AllReduceOp::create(
             b, loc, v.getType(), v,
             gpu::AllReduceOperationAttr::get(b.getContext(),
                                              gpu::AllReduceOperation::ADD),
             b.getUnitAttr())
      .getResult();
}

/// Adds `v` to `site`'s shadow element on thread 0 of the block.
void VJPEmitter::addOnFirstThread(Location loc, const OrderedSite &site,
                                  Value tid, Value v) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(first.thenBlock());
  SmallVector<Value> indices = rematerialize(site.indices);
  Value old = memref::LoadOp::create(b, loc, site.shadow, indices);
  memref::StoreOp::create(b, loc, addDerivatives(b, loc, old, v), site.shadow,
                          indices);
}

/// The block's accumulators of workgroup elements, reduced in order and
/// added by thread 0 (before a barrier publishes them).
void VJPEmitter::flushWorkgroupSites(Location loc) {
  Value tid;
  for (const OrderedSite &site : orderedSites) {
    if (!site.workgroup)
      continue;
    if (!tid)
      tid = emitLinearIdAndCount(b, loc).first;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value mine = memref::LoadOp::create(b, loc, site.acc, zero);
    memref::StoreOp::create(b, loc, createZero(b, loc, mine.getType()),
                            site.acc, zero);
    addOnFirstThread(loc, site, tid, blockSum(loc, mine));
  }
}

SmallVector<Value> VJPEmitter::toWords(Location loc, Value v) {
  unsigned width = v.getType().getIntOrFloatBitWidth();
  Value bits = arith::BitcastOp::create(b, loc, b.getIntegerType(width), v);
  if (width < 32)
    return {arith::ExtUIOp::create(b, loc, b.getI32Type(), bits)};
  SmallVector<Value> words;
  for (unsigned low = 0; low < width; low += 32) {
    Value shifted =
        low ? arith::ShRUIOp::create(
                  b, loc, bits,
                  arith::ConstantIntOp::create(b, loc, bits.getType(), low))
            : bits;
    words.push_back(
        width == 32 ? shifted
                    : arith::TruncIOp::create(b, loc, b.getI32Type(), shifted));
  }
  return words;
}

Value VJPEmitter::fromWords(Location loc, ArrayRef<Value> words, Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  Type intType = b.getIntegerType(width);
  Value bits;
  for (auto [k, word] : llvm::enumerate(words)) {
    Value part = word;
    if (width < 32)
      part = arith::TruncIOp::create(b, loc, intType, word);
    else if (width > 32)
      part = arith::ShLIOp::create(
          b, loc, arith::ExtUIOp::create(b, loc, intType, word),
          arith::ConstantIntOp::create(b, loc, intType, 32 * k));
    bits = bits ? arith::OrIOp::create(b, loc, bits, part) : part;
  }
  return arith::BitcastOp::create(b, loc, type, bits);
}

/// Kernel parameters' elements: block sums stored as the block's partials,
/// then the last block to arrive (counter in scratch word 0, incremented
/// with acquire-release semantics after the stores) adds the partials up in
/// block order and resets the counter.
void VJPEmitter::flushGridSites(Location loc) {
  if (llvm::none_of(orderedSites,
                    [](const OrderedSite &s) { return !s.workgroup; }))
    return;
  Value scratch = ordering->scratch;
  // (Plain values: lambdas below capture them.)
  Value tid, threads, blk, blocks;
  std::tie(tid, threads) = emitLinearIdAndCount(b, loc);
  std::tie(blk, blocks) = emitLinearIdAndCount(b, loc, /*ofBlocks=*/true);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Word `word` of `site`'s partial of `block`: after the counter, one
  // row of `blocks` words per partial word.
  auto slot = [&](const OrderedSite &site, int64_t word, Value block) {
    Value row = arith::ConstantIndexOp::create(b, loc, site.word + word);
    Value base = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, blocks), one);
    return arith::AddIOp::create(b, loc, base, block).getResult();
  };
  SmallVector<Value> sums;
  for (const OrderedSite &site : orderedSites)
    if (!site.workgroup)
      sums.push_back(
          blockSum(loc, memref::LoadOp::create(b, loc, site.acc, zero)));
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero);
  Type i32 = b.getI32Type();
  auto publish = scf::IfOp::create(b, loc, TypeRange{i32}, isFirst,
                                   /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(publish.thenBlock());
    unsigned k = 0;
    for (const OrderedSite &site : orderedSites) {
      if (site.workgroup)
        continue;
      for (auto [w, word] : llvm::enumerate(toWords(loc, sums[k++])))
        memref::StoreOp::create(b, loc, word, scratch, slot(site, w, blk));
    }
    Value arrived = memref::AtomicRMWOp::create(
        b, loc, arith::AtomicRMWKind::addi,
        arith::ConstantIntOp::create(b, loc, i32, 1), scratch, zero);
    Value lastIndex = arith::IndexCastOp::create(
        b, loc, i32, arith::SubIOp::create(b, loc, blocks, one));
    Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       arrived, lastIndex);
    scf::YieldOp::create(b, loc,
                         arith::ExtUIOp::create(b, loc, i32, last).getResult());
    b.setInsertionPointToStart(publish.elseBlock());
    scf::YieldOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, i32, 0).getResult());
  }
  Value isLast = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, blockSum(loc, publish.getResult(0)),
      arith::ConstantIntOp::create(b, loc, i32, 0));
  auto finish = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(finish.thenBlock());
  for (const OrderedSite &site : orderedSites) {
    if (site.workgroup)
      continue;
    Type type = cast<MemRefType>(site.acc.getType()).getElementType();
    // Thread t adds blocks t, t + threads, ... in order (reading with
    // atomics, coherent with the other blocks' publication); the block sum
    // combines the threads in a fixed order. Every thread runs the same
    // number of rounds (lavapipe mishandles atomics in loops whose trip
    // count differs between the lanes).
    Value rounds = arith::DivUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, blocks,
                              arith::SubIOp::create(b, loc, threads, one)),
        threads);
    auto loop = scf::ForOp::create(b, loc, zero, rounds, one,
                                   ValueRange{createZero(b, loc, type)});
    {
      OpBuilder::InsertionGuard inner(b);
      clearTerminator(*loop.getBody());
      b.setInsertionPointToEnd(loop.getBody());
      Value block = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, loop.getInductionVar(), threads), tid);
      auto read = scf::IfOp::create(
          b, loc, TypeRange{type},
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, block,
                                blocks),
          /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard branch(b);
        b.setInsertionPointToStart(read.thenBlock());
        SmallVector<Value> words;
        for (int64_t w = 0; w < wordsOf(type); ++w)
          words.push_back(memref::AtomicRMWOp::create(
              b, loc, arith::AtomicRMWKind::ori,
              arith::ConstantIntOp::create(b, loc, i32, 0), scratch,
              slot(site, w, block)));
        scf::YieldOp::create(b, loc, fromWords(loc, words, type));
        b.setInsertionPointToStart(read.elseBlock());
        scf::YieldOp::create(b, loc, createZero(b, loc, type));
      }
      scf::YieldOp::create(b, loc,
                           addDerivatives(b, loc, loop.getRegionIterArgs()[0],
                                          read.getResult(0)));
    }
    addOnFirstThread(loc, site, tid, blockSum(loc, loop.getResult(0)));
  }
  auto reset = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
  b.setInsertionPointToStart(reset.thenBlock());
  memref::StoreOp::create(b, loc, arith::ConstantIntOp::create(b, loc, i32, 0),
                          scratch, zero);
}

/// Completes ordered accumulation at the end of the reverse sweep: shadow
/// reads take the reading thread's pending contributions to their element,
/// each replayed barrier and the end flush the workgroup accumulators, and
/// the end the grid ones.
void VJPEmitter::finishOrdered(Location loc) {
  if (orderedSites.empty())
    return;
  OpBuilder::InsertionGuard guard(b);
  for (auto [read, memref] : shadowReads) {
    for (const OrderedSite &site : orderedSites) {
      if (site.memref != memref)
        continue;
      b.setInsertionPointAfter(read);
      Location readLoc = read.getLoc();
      Value same;
      for (auto [mine, theirs] :
           llvm::zip(read.getIndices(), rematerialize(site.indices))) {
        Value eq = arith::CmpIOp::create(b, readLoc, arith::CmpIPredicate::eq,
                                         mine, theirs);
        same = same ? arith::AndIOp::create(b, readLoc, same, eq) : eq;
      }
      Type type = read.getType();
      auto take = scf::IfOp::create(b, readLoc, TypeRange{type}, same,
                                    /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(take.thenBlock());
        Value zero = arith::ConstantIndexOp::create(b, readLoc, 0);
        Value pending = memref::LoadOp::create(b, readLoc, site.acc, zero);
        memref::StoreOp::create(b, readLoc, createZero(b, readLoc, type),
                                site.acc, zero);
        scf::YieldOp::create(b, readLoc, pending);
        b.setInsertionPointToStart(take.elseBlock());
        scf::YieldOp::create(b, readLoc, createZero(b, readLoc, type));
      }
      Value total =
          addDerivatives(b, readLoc, read.getResult(), take.getResult(0));
      read.getResult().replaceAllUsesExcept(total, total.getDefiningOp());
    }
  }
  for (Operation *barrier : replayedBarriers) {
    b.setInsertionPoint(barrier);
    flushWorkgroupSites(barrier->getLoc());
  }
}
