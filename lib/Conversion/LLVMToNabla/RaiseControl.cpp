//===- RaiseControl.cpp - GPU intrinsics and terminators --------------===//
//
// NVVM/AMDGPU special registers, barriers and shuffles become gpu ops;
// branches, switches and returns become cf/func terminators.
//
//===----------------------------------------------------------------------===//

#include "FunctionRaiser.h"

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

//===----------------------------------------------------------------------===//
// GPU intrinsics and terminators
//===----------------------------------------------------------------------===//

/// True for the constant mask 0xffffffff: the whole warp.
static bool isFullMask(Value mask) {
  APInt value;
  return matchPattern(mask, m_ConstantInt(&value)) && value.isAllOnes();
}

/// Decodes the clamp operand of an NVVM shfl.sync into the shuffle width.
static std::optional<int64_t> getShuffleWidth(StringRef kind, Value clamp) {
  APInt value;
  if (!matchPattern(clamp, m_ConstantInt(&value)))
    return std::nullopt;
  int64_t c = value.getSExtValue();
  int64_t segment = kind == "up" ? c >> 8 : (c >> 8) & 0x1f;
  return 32 - segment;
}

LogicalResult FunctionRaiser::raiseNamedOp(Operation *op) {
  Location loc = plainLoc(op->getLoc());
  StringRef name = op->getName().getStringRef();
  if (auto intrinsic = dyn_cast<LLVM::CallIntrinsicOp>(op))
    name = intrinsic.getIntrin();
  auto dimension = [](char c) {
    return c == 'x'   ? gpu::Dimension::x
           : c == 'y' ? gpu::Dimension::y
                      : gpu::Dimension::z;
  };
  auto mapId = [&](Value index) {
    scalars.map(op->getResult(0),
                arith::IndexCastOp::create(builder, loc,
                                           op->getResult(0).getType(), index));
    return success();
  };
  for (auto [prefix, kind] : {std::make_pair("nvvm.read.ptx.sreg.tid.", 0),
                              std::make_pair("nvvm.read.ptx.sreg.ntid.", 1),
                              std::make_pair("nvvm.read.ptx.sreg.ctaid.", 2),
                              std::make_pair("nvvm.read.ptx.sreg.nctaid.", 3),
                              std::make_pair("rocdl.workitem.id.", 0),
                              std::make_pair("rocdl.workgroup.id.", 2),
                              std::make_pair("llvm.amdgcn.workitem.id.", 0),
                              std::make_pair("llvm.amdgcn.workgroup.id.", 2)}) {
    if (!name.starts_with(prefix) || name.size() != strlen(prefix) + 1)
      continue;
    gpu::Dimension d = dimension(name.back());
    switch (kind) {
    case 0:
      return mapId(gpu::ThreadIdOp::create(builder, loc, d));
    case 1:
      return mapId(gpu::BlockDimOp::create(builder, loc, d));
    case 2:
      return mapId(gpu::BlockIdOp::create(builder, loc, d));
    default:
      return mapId(gpu::GridDimOp::create(builder, loc, d));
    }
  }
  // CUDA's warps are 32 consecutive linear thread ids on every target (on
  // devices with smaller subgroups the SPIR-V lowering exchanges 32-wide
  // shuffles through workgroup memory), so the lane is computed, not read.
  // Special registers read through the intrinsic (cooperative groups'
  // inline assembly becomes one, InlineAsm.cpp) or the NVVM op.
  if (name.starts_with("llvm.nvvm.read.ptx.sreg."))
    name = name.drop_front(strlen("llvm."));
  if (name == "nvvm.read.ptx.sreg.laneid") {
    return mapId(arith::RemUIOp::create(builder, loc, linearThreadId(loc),
                                        indexConstant(loc, 32)));
  }
  // The lanes below, at or above the calling one: eq 1 << lane, lt eq - 1,
  // le lt | eq, gt ~le, ge ~lt.
  if (name.consume_front("nvvm.read.ptx.sreg.lanemask.")) {
    Type i32 = builder.getI32Type();
    if (op->getNumResults() != 1 || op->getResult(0).getType() != i32)
      return fail(op) << "cannot raise this lane mask read";
    Value lane = buildWarpLane(builder, loc);
    Value one = arith::ConstantIntOp::create(builder, loc, i32, 1);
    Value ones = arith::ConstantIntOp::create(builder, loc, i32, -1);
    Value eq = arith::ShLIOp::create(builder, loc, one, lane);
    Value lt = arith::SubIOp::create(builder, loc, eq, one);
    Value le = arith::OrIOp::create(builder, loc, lt, eq);
    Value mask = name == "eq"   ? eq
                 : name == "lt" ? lt
                 : name == "le" ? le
                 : name == "gt" ? Value(arith::XOrIOp::create(builder, loc, le,
                                                              ones))
                 : name == "ge" ? Value(arith::XOrIOp::create(builder, loc, lt,
                                                              ones))
                                : Value();
    if (!mask)
      return fail(op) << "cannot raise the lane mask '" << name << "'";
    scalars.map(op->getResult(0), mask);
    return success();
  }
  if (name == "nvvm.read.ptx.sreg.warpsize")
    return mapId(indexConstant(loc, 32));
  if (name == "nvvm.barrier0" || name == "nvvm.barrier" ||
      name == "rocdl.s.barrier" || name == "rocdl.barrier" ||
      name == "llvm.nvvm.barrier0" ||
      name == "llvm.nvvm.barrier.cta.sync.aligned.all" ||
      name == "llvm.nvvm.barrier.cta.sync.all" ||
      name == "llvm.nvvm.barrier.sync" || name == "llvm.amdgcn.s.barrier") {
    gpu::BarrierOp::create(builder, loc);
    return success();
  }
  // __syncwarp(mask) (NVVM), HIP's __syncwarp (a wave barrier between
  // wavefront-scope fences, which raise to nothing): the lanes of a
  // subgroup, not the block.
  if (name == "llvm.nvvm.bar.warp.sync" || name == "nvvm.bar.warp.sync" ||
      name == "llvm.amdgcn.wave.barrier" || name == "rocdl.wave.barrier") {
    // Over a partial mask every lane waits (ConvergeWarps.cpp makes them
    // all reach it): the lanes of the mask see each other's accesses.
    auto barrier = nabla::SubgroupBarrierOp::create(builder, loc);
    if (op->getNumOperands() == 1 && !isFullMask(op->getOperand(0)))
      barrier->setAttr(kPartialMaskAttrName, builder.getUnitAttr());
    return success();
  }
  // __threadfence_block / __threadfence / __threadfence_system.
  if (name == "llvm.nvvm.membar.cta" || name == "llvm.nvvm.membar.gl" ||
      name == "llvm.nvvm.membar.sys") {
    StringRef scope = name.ends_with("cta")  ? "workgroup"
                      : name.ends_with("gl") ? "device"
                                             : "system";
    nabla::MemoryFenceOp::create(builder, loc, builder.getStringAttr(scope));
    return success();
  }
  if (name.starts_with("llvm.nvvm.shfl.sync.")) {
    // llvm.nvvm.shfl.sync.<kind>.<type>(mask, value, offset, clamp)
    StringRef kind =
        name.drop_front(strlen("llvm.nvvm.shfl.sync.")).split('.').first;
    std::optional<gpu::ShuffleMode> mode =
        llvm::StringSwitch<std::optional<gpu::ShuffleMode>>(kind)
            .Case("down", gpu::ShuffleMode::DOWN)
            .Case("up", gpu::ShuffleMode::UP)
            .Case("bfly", gpu::ShuffleMode::XOR)
            .Case("idx", gpu::ShuffleMode::IDX)
            .Default(std::nullopt);
    std::optional<int64_t> width =
        op->getNumOperands() == 4 ? getShuffleWidth(kind, op->getOperand(3))
                                  : std::nullopt;
    if (!mode || !width || op->getNumResults() != 1 ||
        !op->getResult(0).getType().isIntOrFloat())
      return fail(op) << "cannot raise the shuffle " << name
                      << " (a constant width and a scalar value are needed)";
    Value value = lookup(op, op->getOperand(1));
    Value offset = lookup(op, op->getOperand(2));
    if (!value || !offset)
      return failure();
    Value widthValue = arith::ConstantOp::create(
        builder, loc, builder.getI32IntegerAttr(*width));
    auto shuffle = gpu::ShuffleOp::create(
        builder, loc, value.getType(), builder.getI1Type(), value, offset,
        widthValue, gpu::ShuffleModeAttr::get(op->getContext(), *mode));
    if (isFullMask(op->getOperand(0))) {
      scalars.map(op->getResult(0), shuffle.getShuffleResult());
      return success();
    }
    // The mask names the lanes taking part; every lane runs the shuffle
    // (ConvergeWarps.cpp). A lane reading one outside the mask (a lane past
    // the block's last thread included) reads a value CUDA leaves
    // undefined: zero here, so that a sum over the mask's lanes adds
    // nothing for the others (reduce7's shuffles down over the lanes that
    // hold partials). A source outside the segment gives the own value, as
    // in CUDA.
    shuffle->setAttr(kPartialMaskAttrName, builder.getUnitAttr());
    Value mask = lookup(op, op->getOperand(0));
    if (!mask)
      return failure();
    Type i32 = builder.getI32Type();
    auto i32Constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(builder, loc, i32, v);
    };
    Value lane = buildWarpLane(builder, loc);
    Value delta = offset.getType() == i32
                      ? offset
                      : Value(arith::TruncIOp::create(builder, loc, i32, offset));
    // The source lane, and whether it is in the calling lane's segment of
    // `width` lanes (computed: where subgroups are narrower, the shuffle's
    // `valid` is also false for a lane past the block's last thread).
    Value source;
    Value inSegment = arith::ConstantIntOp::create(builder, loc,
                                                   builder.getI1Type(), 1);
    Value laneInSegment =
        arith::AndIOp::create(builder, loc, lane, i32Constant(*width - 1));
    switch (*mode) {
    case gpu::ShuffleMode::XOR:
      source = arith::XOrIOp::create(builder, loc, lane, delta);
      break;
    case gpu::ShuffleMode::DOWN:
      source = arith::AddIOp::create(builder, loc, lane, delta);
      inSegment = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::ult,
          arith::AddIOp::create(builder, loc, laneInSegment, delta),
          i32Constant(*width));
      break;
    case gpu::ShuffleMode::UP:
      source = arith::SubIOp::create(builder, loc, lane, delta);
      inSegment = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::uge, laneInSegment, delta);
      break;
    case gpu::ShuffleMode::IDX: {
      Value segment = i32Constant(~(*width - 1));
      source = arith::OrIOp::create(
          builder, loc, arith::AndIOp::create(builder, loc, lane, segment),
          arith::AndIOp::create(builder, loc, delta, i32Constant(*width - 1)));
      break;
    }
    }
    source = arith::AndIOp::create(builder, loc, source, i32Constant(31));
    Value outsideMask = arith::XOrIOp::create(
        builder, loc, buildMaskBit(builder, loc, mask, source),
        arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1));
    Value outside =
        arith::AndIOp::create(builder, loc, inSegment, outsideMask);
    Value zero = arith::ConstantOp::create(
        builder, loc, builder.getZeroAttr(value.getType()));
    scalars.map(op->getResult(0),
                arith::SelectOp::create(builder, loc, outside, zero,
                                        shuffle.getShuffleResult()));
    return success();
  }
  FailureOr<bool> collective = raiseWarpCollective(op, name);
  if (failed(collective))
    return failure();
  if (*collective)
    return success();
  // Hints with no effect on the raised kernel.
  if (name.starts_with("llvm.nvvm.fence") || name == "llvm.amdgcn.s.waitcnt")
    return success();
  return fail(op) << "cannot raise '" << name
                  << "' (an intrinsic Nabla does not know)";
}

FailureOr<SmallVector<Value>>
FunctionRaiser::successorOperands(Operation *op, Block *dest,
                                  OperandRange operands) {
  SmallVector<Value> values;
  for (Value operand : operands) {
    if (isa<LLVM::LLVMPointerType>(operand.getType())) {
      auto offset = offsets.find(operand);
      if (offset == offsets.end())
        return fail(op) << "cannot raise a branch passing a pointer that "
                           "does not point into a known buffer";
      values.push_back(offset->second);
      continue;
    }
    Value value = lookup(op, operand);
    if (!value)
      return failure();
    values.push_back(value);
  }
  return values;
}

LogicalResult FunctionRaiser::raiseTerminator(Operation *op) {
  Location loc = plainLoc(op->getLoc());
  if (auto br = dyn_cast<LLVM::BrOp>(op)) {
    auto operands = successorOperands(op, br.getDest(), br.getDestOperands());
    if (failed(operands))
      return failure();
    cf::BranchOp::create(builder, loc, blocks[br.getDest()], *operands);
    return success();
  }
  if (auto condBr = dyn_cast<LLVM::CondBrOp>(op)) {
    Value condition = lookup(op, condBr.getCondition());
    auto trueOperands = successorOperands(op, condBr.getTrueDest(),
                                          condBr.getTrueDestOperands());
    auto falseOperands = successorOperands(op, condBr.getFalseDest(),
                                           condBr.getFalseDestOperands());
    if (!condition || failed(trueOperands) || failed(falseOperands))
      return failure();
    cf::CondBranchOp::create(builder, loc, condition,
                             blocks[condBr.getTrueDest()], *trueOperands,
                             blocks[condBr.getFalseDest()], *falseOperands);
    return success();
  }
  if (auto sw = dyn_cast<LLVM::SwitchOp>(op)) {
    Value flag = lookup(op, sw.getValue());
    auto defaultOperands = successorOperands(op, sw.getDefaultDestination(),
                                             sw.getDefaultOperands());
    if (!flag || failed(defaultOperands))
      return failure();
    SmallVector<APInt> values;
    if (auto caseValues = sw.getCaseValues())
      for (APInt value : caseValues->getValues<APInt>())
        values.push_back(value);
    SmallVector<SmallVector<Value>> caseOperands;
    SmallVector<Block *> caseBlocks;
    for (auto [i, dest] : llvm::enumerate(sw.getCaseDestinations())) {
      auto operands = successorOperands(op, dest, sw.getCaseOperands(i));
      if (failed(operands))
        return failure();
      caseOperands.push_back(*operands);
      caseBlocks.push_back(blocks[dest]);
    }
    SmallVector<ValueRange> caseRanges(caseOperands.begin(),
                                       caseOperands.end());
    cf::SwitchOp::create(builder, loc, flag, blocks[sw.getDefaultDestination()],
                         *defaultOperands, values, caseBlocks, caseRanges);
    return success();
  }
  if (auto ret = dyn_cast<LLVM::ReturnOp>(op)) {
    SmallVector<Value> values;
    if (ret.getArg()) {
      Value value = lookup(op, ret.getArg());
      if (!value)
        return failure();
      values.push_back(value);
    }
    func::ReturnOp::create(builder, loc, values);
    return success();
  }
  if (isa<LLVM::UnreachableOp>(op)) {
    // Reached only after a trap or undefined behaviour: the thread returns.
    SmallVector<Value> values;
    for (Type type : result.getResultTypes())
      values.push_back(
          arith::ConstantOp::create(builder, loc, builder.getZeroAttr(type)));
    func::ReturnOp::create(builder, loc, values);
    return success();
  }
  return fail(op) << "cannot raise this terminator";
}
