//===- IsolatedConstructs.cpp - Blocks the serializer names right ---------===//
//
// MLIR's SPIR-V serializer names an OpPhi's incoming block after the MLIR
// block that branches (or, for a loop's initial values, the block holding
// the spirv.mlir.loop). When that block also holds a nested structured
// construct (spirv.mlir.selection or spirv.mlir.loop) before the branch or
// the loop, or is a loop header the serializer splits at its OpLoopMerge,
// the SPIR-V predecessor is another block (the construct's merge block, the
// header's continuation), and spirv-val rejects the module: "OpPhi's incoming
// basic block is not a predecessor". clang's loops at -O1/-O2 have exactly
// these shapes (a loop nest inside an `if`, a loop whose header holds an
// `if`).
//
// Every nested construct therefore gets a block of its own: the block holding
// it is split before it (also when it comes first) and after it, joined by
// unconditional branches, so every branch and loop entry sits in a block the
// serializer emits under its own label.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

void nabla::isolateStructuredConstructs(spirv::ModuleOp module) {
  SmallVector<Operation *> constructs;
  module.walk([&](Operation *op) {
    if (isa<spirv::LoopOp, spirv::SelectionOp>(op))
      constructs.push_back(op);
  });
  for (Operation *construct : constructs) {
    Block *block = construct->getBlock();
    Location loc = construct->getLoc();
    // Also when it comes first: the block may be a loop header, which the
    // serializer splits at its OpLoopMerge (an llm.c attention backward's
    // zeroing loop first in a loop body).
    Block *own = block->splitBlock(construct);
    OpBuilder::atBlockEnd(block).create<spirv::BranchOp>(loc, own);
    block = own;
    Block *rest = block->splitBlock(construct->getNextNode());
    OpBuilder::atBlockEnd(block).create<spirv::BranchOp>(loc, rest);
  }
}
