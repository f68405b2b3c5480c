//===- HostHelperKernels.cpp - Kernels host-level AD launches -------------===//
//
// `gpu.module @__nabla_host_ad` holds `copy_<T>`, `accumulate_<T>` and
// `zero_<T>`: 256 threads per block (known_block_size, which SPIR-V needs),
// a grid-stride loop over the elements, so a launch of at most 65535 blocks
// covers any count.
//
//===----------------------------------------------------------------------===//

#include "HostHelperKernels.h"

#include "DerivativeRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace nabla;

namespace {

constexpr StringLiteral kHelperModuleName = "__nabla_host_ad";
constexpr int64_t kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

std::string typeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
  return name;
}

} // namespace

Value HostHelperKernels::numElements(OpBuilder &b, Location loc,
                                     Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    Value extent =
        type.isDynamicDim(d)
            ? Value(memref::DimOp::create(b, loc, memref, d))
            : Value(arith::ConstantIndexOp::create(b, loc, type.getDimSize(d)));
    count = arith::MulIOp::create(b, loc, count, extent);
  }
  return count;
}

Value HostHelperKernels::flatten(OpBuilder &b, Location loc, Value memref,
                                 Value count) {
  auto type = cast<MemRefType>(memref.getType());
  auto flat = MemRefType::get({ShapedType::kDynamic}, type.getElementType(),
                              MemRefLayoutAttrInterface(),
                              type.getMemorySpace());
  if (type == flat)
    return memref;
  return memref::ReinterpretCastOp::create(
      b, loc, flat, memref, OpFoldResult(b.getIndexAttr(0)),
      ArrayRef<OpFoldResult>{count}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

SymbolRefAttr HostHelperKernels::getKernel(Kind kind, Type element) {
  MLIRContext *context = module.getContext();
  std::string name =
      (kind == Kind::Copy         ? "copy_"
       : kind == Kind::Accumulate ? "accumulate_"
                                  : "zero_") +
      typeName(element);
  auto reference = SymbolRefAttr::get(
      context, kHelperModuleName, {FlatSymbolRefAttr::get(context, name)});
  auto helpers = module.lookupSymbol<gpu::GPUModuleOp>(kHelperModuleName);
  if (!helpers) {
    OpBuilder b(context);
    b.setInsertionPointToEnd(module.getBody());
    helpers = gpu::GPUModuleOp::create(b, module.getLoc(), kHelperModuleName);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
  }
  if (helpers.lookupSymbol(name))
    return reference;

  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(helpers.getBody());
  Type index = b.getIndexType();
  auto view = MemRefType::get({ShapedType::kDynamic}, element);
  SmallVector<Type> inputs;
  if (kind == Kind::Copy)
    inputs = {view, index, view, index, index};
  else if (kind == Kind::Accumulate)
    inputs = {view, view, index};
  else
    inputs = {view, index};
  auto kernel = gpu::GPUFuncOp::create(b, loc, name,
                                       FunctionType::get(context, inputs, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(kThreads), 1, 1}));
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value threads = arith::ConstantIndexOp::create(b, loc, kThreads);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value blocks = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value start = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, block, threads), thread);
  Value stride = arith::MulIOp::create(b, loc, blocks, threads);
  Value count = entry.getArguments().back();
  scf::ForOp::create(
      b, loc, start, count, stride, ValueRange{},
      [&](OpBuilder &lb, Location l, Value i, ValueRange) {
        if (kind == Kind::Copy) {
          Value from = arith::AddIOp::create(lb, l, entry.getArgument(3), i);
          Value to = arith::AddIOp::create(lb, l, entry.getArgument(1), i);
          Value v =
              memref::LoadOp::create(lb, l, entry.getArgument(2), from);
          memref::StoreOp::create(lb, l, v, entry.getArgument(0), to);
        } else if (kind == Kind::Accumulate) {
          Value into = memref::LoadOp::create(lb, l, entry.getArgument(0), i);
          Value add = memref::LoadOp::create(lb, l, entry.getArgument(1), i);
          Value sum = arith::AddFOp::create(lb, l, into, add);
          memref::StoreOp::create(lb, l, sum, entry.getArgument(0), i);
        } else {
          memref::StoreOp::create(lb, l, createZero(lb, l, element),
                                  entry.getArgument(0), i);
        }
        scf::YieldOp::create(lb, l);
      });
  gpu::ReturnOp::create(b, loc);
  return reference;
}

void HostHelperKernels::launch(OpBuilder &b, Location loc, SymbolRefAttr kernel,
                               ValueRange operands, Value count) {
  // ceil(count / threads), at least one block, at most kMaxBlocks.
  Value threads = arith::ConstantIndexOp::create(b, loc, kThreads);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value blocks = arith::CeilDivUIOp::create(b, loc, count, threads);
  blocks = arith::MaxUIOp::create(b, loc, blocks, one);
  blocks = arith::MinUIOp::create(
      b, loc, blocks, arith::ConstantIndexOp::create(b, loc, kMaxBlocks));
  gpu::LaunchFuncOp::create(b, loc, kernel,
                            gpu::KernelDim3{blocks, one, one},
                            gpu::KernelDim3{threads, one, one},
                            /*dynamicSharedMemorySize=*/Value(), operands);
}

void HostHelperKernels::copy(OpBuilder &b, Location loc, Value dst,
                             Value dstOffset, Value src, Value srcOffset,
                             Value count) {
  Type element = cast<MemRefType>(dst.getType()).getElementType();
  launch(b, loc, getKernel(Kind::Copy, element),
         {dst, dstOffset, src, srcOffset, count}, count);
}

void HostHelperKernels::accumulate(OpBuilder &b, Location loc, Value dst,
                                   Value src, Value count) {
  Type element = cast<MemRefType>(dst.getType()).getElementType();
  launch(b, loc, getKernel(Kind::Accumulate, element), {dst, src, count},
         count);
}

void HostHelperKernels::zero(OpBuilder &b, Location loc, Value dst,
                             Value count) {
  Type element = cast<MemRefType>(dst.getType()).getElementType();
  launch(b, loc, getKernel(Kind::Zero, element), {dst, count}, count);
}
