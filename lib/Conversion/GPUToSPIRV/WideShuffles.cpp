//===- WideShuffles.cpp - Shuffles wider than the device's subgroup -------===//
//
// CUDA code shuffles across a 32-lane warp; Vulkan devices have subgroups of
// 4 to 128 lanes (lavapipe: 8), and SPIR-V's shuffles stay inside one
// subgroup and take its width. A gpu.shuffle of any other width (wider, as
// CUDA's 32 on lavapipe's 8, narrower, or known only at run time, such as a
// block dimension of 13) is therefore exchanged through workgroup memory: the
// block's threads form groups of `width` consecutive linear thread ids (CUDA's
// warps), each thread stores its value in a scratch attribution, waits at a
// barrier, reads its source lane's slot, and waits again before the scratch is
// reused. Lanes without a source (past the segment, or past the block's
// last thread in a partial group) keep their own value (CUDA's result) and
// `valid` is false for them. The barriers require every thread of the block
// to reach the shuffle (CUDA requires it of the warp only): the branches
// around it that only some threads take are if-converted first
// (ConvergentBranches.h).
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/Support/Limits.h"
#include "nabla/Transforms/ConvergentBranches.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

/// The 32-bit words of `value` (an integer or float of at most 64 bits).
static SmallVector<Value, 2> toWords(OpBuilder &b, Location loc, Value value) {
  Type i32 = b.getI32Type();
  unsigned width = value.getType().getIntOrFloatBitWidth();
  Value bits = value;
  if (isa<FloatType>(value.getType()))
    bits = arith::BitcastOp::create(b, loc, b.getIntegerType(width), value);
  if (width < 32)
    return {arith::ExtUIOp::create(b, loc, i32, bits)};
  if (width == 32)
    return {bits};
  Value low = arith::TruncIOp::create(b, loc, i32, bits);
  Value shift = arith::ConstantIntOp::create(b, loc, bits.getType(), 32);
  Value high = arith::TruncIOp::create(
      b, loc, i32, arith::ShRUIOp::create(b, loc, bits, shift));
  return {low, high};
}

/// The inverse of toWords for `type`.
static Value fromWords(OpBuilder &b, Location loc, Type type,
                       ArrayRef<Value> words) {
  unsigned width = type.getIntOrFloatBitWidth();
  Type intType = b.getIntegerType(width);
  Value bits;
  if (width < 32) {
    bits = arith::TruncIOp::create(b, loc, intType, words[0]);
  } else if (width == 32) {
    bits = words[0];
  } else {
    Value low = arith::ExtUIOp::create(b, loc, intType, words[0]);
    Value high = arith::ExtUIOp::create(b, loc, intType, words[1]);
    Value shift = arith::ConstantIntOp::create(b, loc, intType, 32);
    bits = arith::OrIOp::create(b, loc, low,
                                arith::ShLIOp::create(b, loc, high, shift));
  }
  if (isa<FloatType>(type))
    return arith::BitcastOp::create(b, loc, type, bits);
  return bits;
}

LogicalResult nabla::emulateWideShuffles(gpu::GPUFuncOp kernel,
                                         unsigned subgroupSize,
                                         ArrayRef<int32_t> workgroupSize) {
  SmallVector<gpu::ShuffleOp> wide;
  unsigned words = 1;
  WalkResult walk = kernel.walk([&](gpu::ShuffleOp op) -> WalkResult {
    // SPIR-V's own shuffles take exactly the subgroup's width; any other
    // width, also one known only at run time (a block dimension), goes
    // through memory.
    APInt width;
    bool constant = matchPattern(op.getWidth(), m_ConstantInt(&width));
    if (constant && width.getZExtValue() == subgroupSize)
      return WalkResult::advance();
    Type type = op.getValue().getType();
    if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() > 64) {
      InFlightDiagnostic diag = op.emitOpError("cannot exchange ") << type;
      if (constant)
        diag << " across " << width.getZExtValue() << " lanes";
      diag << " on a device with " << subgroupSize << "-lane subgroups";
      return WalkResult::interrupt();
    }
    words = std::max(words, (type.getIntOrFloatBitWidth() + 31) / 32);
    wide.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // The exchange's barriers, and a warp barrier that is the block's (a
  // subgroup narrower than a warp), need every thread of the block: the
  // branches only some threads take around them (`if (warp == 0)`, an early
  // return of the threads past the data) run in every thread under a
  // predicate where it can (best effort). Vulkan leaves a barrier in
  // divergent control flow undefined; lavapipe happens to let it pass,
  // narrower subgroups on GPUs need not.
  llvm::DenseSet<Operation *> needAll(wide.begin(), wide.end());
  if (subgroupSize < 32)
    kernel.walk([&](nabla::SubgroupBarrierOp op) { needAll.insert(op); });
  if (!needAll.empty()) {
    nabla::ConvergenceOptions options;
    options.mustReach = [&](Operation *op) { return needAll.contains(op); };
    // A branch that cannot be converted (a loop whose trip count a thread
    // reads from a tape, say) keeps its former lowering, which lavapipe
    // runs.
    options.required = false;
    options.what = "warp shuffle or barrier (the device's " +
                   std::to_string(subgroupSize) +
                   "-lane subgroups hold part of a warp, whose values are "
                   "exchanged through workgroup memory between barriers)";
    if (failed(nabla::convergeBranches(kernel, options)))
      return failure();
  }
  if (wide.empty())
    return success();

  // One slot per thread of the block: its size when known at compile time,
  // otherwise (specialized at launch) the most threads a launch may have.
  int64_t threads = workgroupSize.empty() ? nabla::kMaxWorkgroupExtent : 1;
  for (int32_t extent : workgroupSize)
    threads *= extent;
  MLIRContext *context = kernel.getContext();
  auto scratchType = MemRefType::get(
      {threads * words}, IntegerType::get(context, 32),
      MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
  Value scratch = kernel.addWorkgroupAttribution(scratchType, kernel.getLoc());

  for (gpu::ShuffleOp op : wide) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto id = [&](gpu::Dimension d) -> Value {
      return gpu::ThreadIdOp::create(b, loc, d);
    };
    auto dim = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    Value linear = arith::AddIOp::create(
        b, loc, id(gpu::Dimension::x),
        arith::MulIOp::create(
            b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::x),
            arith::AddIOp::create(
                b, loc, id(gpu::Dimension::y),
                arith::MulIOp::create(
                    b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::y),
                    id(gpu::Dimension::z)))));
    Value width =
        arith::IndexCastUIOp::create(b, loc, b.getIndexType(), op.getWidth());
    Value offset =
        arith::IndexCastUIOp::create(b, loc, b.getIndexType(), op.getOffset());
    Value lane = arith::RemUIOp::create(b, loc, linear, width);
    Value base = arith::SubIOp::create(b, loc, linear, lane);
    Value source, valid;
    switch (op.getMode()) {
    case gpu::ShuffleMode::XOR:
      source = arith::XOrIOp::create(b, loc, lane, offset);
      break;
    case gpu::ShuffleMode::DOWN:
      source = arith::AddIOp::create(b, loc, lane, offset);
      break;
    case gpu::ShuffleMode::IDX:
      source = offset;
      break;
    case gpu::ShuffleMode::UP:
      // lane - offset, valid when offset <= lane.
      valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, offset,
                                    lane);
      source = arith::SelectOp::create(
          b, loc, valid, arith::SubIOp::create(b, loc, lane, offset), lane);
      break;
    }
    if (!valid)
      valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, source,
                                    width);
    // A source past the block's last thread (a partial last group) has no
    // slot written: no source either.
    Value threadCount = arith::MulIOp::create(
        b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::x),
        arith::MulIOp::create(
            b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::y),
            gpu::BlockDimOp::create(b, loc, gpu::Dimension::z)));
    valid = arith::AndIOp::create(
        b, loc, valid,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                              arith::AddIOp::create(b, loc, base, source),
                              threadCount));
    Value from = arith::AddIOp::create(
        b, loc, base, arith::SelectOp::create(b, loc, valid, source, lane));
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value, 2> stored = toWords(b, loc, op.getValue());
    for (auto [k, word] : llvm::enumerate(stored))
      memref::StoreOp::create(
          b, loc, word, scratch,
          ValueRange{arith::AddIOp::create(b, loc, linear, dim(k * threads))});
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value, 2> loaded;
    for (size_t k = 0; k < stored.size(); ++k)
      loaded.push_back(memref::LoadOp::create(
          b, loc, scratch,
          ValueRange{arith::AddIOp::create(b, loc, from, dim(k * threads))}));
    Value result = fromWords(b, loc, op.getValue().getType(), loaded);
    op.getShuffleResult().replaceAllUsesWith(result);
    op.getValid().replaceAllUsesWith(valid);
    op.erase();
  }
  return success();
}
