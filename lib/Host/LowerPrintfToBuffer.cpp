//===- LowerPrintfToBuffer.cpp - gpu.printf through a record buffer -------===//
//
// Vulkan kernels cannot print, so a gpu.printf appends a record to a buffer
// that the runtime prints after the launch, as CUDA's runtime does with its
// own printf buffer. Record layout (i32 words): format index, record length
// in words, then one 64-bit slot (low word first) per argument. Word 0 of
// the buffer counts the words reserved, also past the capacity, so that the
// runtime can report what was lost.
//
//===----------------------------------------------------------------------===//

#include "nabla/Host/Passes.h"
#include "nabla/Support/OptionNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace nabla {
#define GEN_PASS_DEF_LOWERPRINTFTOBUFFER
#include "nabla/Host/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// The conversion characters of a printf format, in order (`%%` skipped);
/// failure on a conversion Nabla cannot pass (`%s`, `%p`, `%n`, `*` widths).
FailureOr<SmallVector<char>> conversions(StringRef format) {
  SmallVector<char> found;
  for (size_t at = 0; at < format.size(); ++at) {
    if (format[at] != '%')
      continue;
    if (++at < format.size() && format[at] == '%')
      continue;
    while (at < format.size() && StringRef("-+ #0").contains(format[at]))
      ++at;
    while (at < format.size() && (isdigit(format[at]) || format[at] == '.'))
      ++at;
    while (at < format.size() && StringRef("hljztL").contains(format[at]))
      ++at;
    if (at >= format.size() ||
        !StringRef("diuxXocfFeEgGaA").contains(format[at]))
      return failure();
    found.push_back(format[at]);
  }
  return found;
}

struct LowerPrintfToBuffer
    : public nabla::SuggestOptionNames<
          nabla::impl::LowerPrintfToBufferBase<LowerPrintfToBuffer>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<gpu::PrintfOp> all;
    module.walk([&](gpu::PrintfOp op) { all.push_back(op); });
    if (all.empty())
      return;
    SmallVector<Attribute> formats, kernels;
    llvm::StringMap<unsigned> formatIndex;
    llvm::DenseMap<Operation *, Value> buffers;
    auto i32 = IntegerType::get(context, 32);
    auto bufferType = MemRefType::get({ShapedType::kDynamic}, i32);
    for (gpu::PrintfOp op : all) {
      auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
      if (!kernel || !kernel.isKernel()) {
        op.emitOpError("outside a kernel cannot reach the printf buffer "
                       "(device functions are inlined first)");
        return signalPassFailure();
      }
      FailureOr<SmallVector<char>> kinds = conversions(op.getFormat());
      if (failed(kinds) || kinds->size() != op.getArgs().size()) {
        op.emitOpError("format needs one integer or float argument per "
                       "conversion (%d %i %u %x %o %c %f %e %g %a; no %s, %p, "
                       "%n or * widths)");
        return signalPassFailure();
      }
      Value &buffer = buffers[kernel];
      if (!buffer) {
        unsigned position = kernel.getNumArguments();
        kernel.insertArgument(
            position, bufferType,
            DictionaryAttr::get(
                context,
                {NamedAttribute(StringAttr::get(context, "nabla.printf_buffer"),
                                UnitAttr::get(context))}),
            op.getLoc());
        buffer = kernel.getArgument(position);
        kernels.push_back(kernel.getNameAttr());
      }
      auto [it, inserted] =
          formatIndex.try_emplace(op.getFormat(), formats.size());
      if (inserted)
        formats.push_back(op.getFormatAttr());
      if (failed(lower(op, buffer, it->second, *kinds)))
        return signalPassFailure();
    }
    Builder builder(context);
    module->setAttr(
        "nabla.printf",
        builder.getDictionaryAttr(
            {builder.getNamedAttr("formats", builder.getArrayAttr(formats)),
             builder.getNamedAttr("kernels", builder.getArrayAttr(kernels)),
             builder.getNamedAttr("capacity",
                                  builder.getI32IntegerAttr(capacity))}));
  }

  /// The argument as a 64-bit integer, extended as its conversion reads it.
  FailureOr<Value> widen(OpBuilder &b, Location loc, Value value, char kind) {
    Type i64 = b.getI64Type();
    Type type = value.getType();
    bool isFloatConversion = StringRef("fFeEgGaA").contains(kind);
    if (auto floatType = dyn_cast<FloatType>(type)) {
      if (!isFloatConversion)
        return failure();
      Value wide = value;
      if (floatType.getWidth() < 64)
        wide = arith::ExtFOp::create(b, loc, b.getF64Type(), value);
      else if (floatType.getWidth() > 64)
        return failure();
      return arith::BitcastOp::create(b, loc, i64, wide).getResult();
    }
    if (isFloatConversion)
      return failure();
    if (type.isIndex())
      value = arith::IndexCastOp::create(b, loc, i64, value);
    auto intType = dyn_cast<IntegerType>(value.getType());
    if (!intType || intType.getWidth() > 64)
      return failure();
    if (intType.getWidth() == 64)
      return value;
    bool isSigned = kind == 'd' || kind == 'i';
    if (isSigned && intType.getWidth() > 1)
      return arith::ExtSIOp::create(b, loc, i64, value).getResult();
    return arith::ExtUIOp::create(b, loc, i64, value).getResult();
  }

  LogicalResult lower(gpu::PrintfOp op, Value buffer, unsigned format,
                      ArrayRef<char> kinds) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i32 = b.getI32Type();
    SmallVector<Value> words;
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(b, loc, i32, value);
    };
    int64_t length = 2 + 2 * op.getArgs().size();
    words.push_back(constant(format));
    words.push_back(constant(length));
    for (auto [arg, kind] : llvm::zip(op.getArgs(), kinds)) {
      FailureOr<Value> wide = widen(b, loc, arg, kind);
      if (failed(wide))
        return op.emitOpError("argument of type ")
               << arg.getType() << " does not match conversion '%" << kind
               << "'";
      Value low = arith::TruncIOp::create(b, loc, i32, *wide);
      Value shift = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32);
      Value high = arith::TruncIOp::create(
          b, loc, i32, arith::ShRUIOp::create(b, loc, *wide, shift));
      words.push_back(low);
      words.push_back(high);
    }
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value start = memref::AtomicRMWOp::create(
        b, loc, arith::AtomicRMWKind::addi, constant(length), buffer, zero);
    // Records start at word 1 (word 0 counts); one fits when it ends within
    // the capacity.
    Value end = arith::AddIOp::create(b, loc, start, constant(length));
    Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, end,
                                       constant(capacity));
    auto store = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/false);
    b.setInsertionPointToStart(store.thenBlock());
    Value first = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        arith::AddIOp::create(b, loc, start, constant(1)));
    for (auto [k, word] : llvm::enumerate(words)) {
      Value at = arith::AddIOp::create(
          b, loc, first, arith::ConstantIndexOp::create(b, loc, k));
      memref::StoreOp::create(b, loc, word, buffer, at);
    }
    op.erase();
    return success();
  }
};

} // namespace
