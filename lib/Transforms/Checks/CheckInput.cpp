//===- CheckInput.cpp - Reject modules the pipelines cannot handle --------===//
//
// Upstream conversions and LLVM's back ends trust their input: a gpu op at
// module scope, a tensor kernel parameter or a 16 GiB splat constant crash
// or exhaust memory deep inside them, a nested gpu.module is silently not
// compiled, and a module named "../x" names a file outside the output
// directory. This pass runs first and turns each such shape into a located
// error. The limits live in nabla/Support/Limits.h.
//
//===----------------------------------------------------------------------===//

#include "nabla/Transforms/Passes.h"

#include "nabla/Support/Limits.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

namespace nabla {
#define GEN_PASS_DEF_CHECKINPUT
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;
using namespace nabla;

namespace {

/// `a * b`, or std::nullopt if it overflows int64 or exceeds `limit`.
std::optional<int64_t> boundedProduct(int64_t a, int64_t b, int64_t limit) {
  if (a < 0 || b < 0)
    return std::nullopt;
  if (b != 0 && a > limit / b)
    return std::nullopt;
  return a * b;
}

/// Bytes of one element of `type` in memory (0: unknown, not checked).
int64_t elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * elementBytes(complex.getElementType());
  if (auto vector = dyn_cast<VectorType>(type))
    if (vector.hasStaticShape() &&
        vector.getNumElements() <= kMaxVectorElements)
      return vector.getNumElements() * elementBytes(vector.getElementType());
  return isa<LLVM::LLVMPointerType>(type) ? 8 : 0;
}

/// The static byte size of `shaped` (dynamic extents count as 1), or
/// std::nullopt if it exceeds `limit`.
std::optional<int64_t> staticBytes(ShapedType shaped, int64_t limit) {
  int64_t bytes = std::max<int64_t>(elementBytes(shaped.getElementType()), 1);
  for (int64_t extent : shaped.getShape()) {
    if (ShapedType::isDynamic(extent))
      continue;
    std::optional<int64_t> product = boundedProduct(bytes, extent, limit);
    if (!product)
      return std::nullopt;
    bytes = *product;
  }
  return bytes;
}

/// Why `type` is too large for any target, or an empty string.
std::string checkTypeSize(Type type) {
  if (auto vector = dyn_cast<VectorType>(type)) {
    int64_t elements = 1;
    for (int64_t extent : vector.getShape()) {
      std::optional<int64_t> product =
          boundedProduct(elements, extent, kMaxVectorElements);
      if (!product)
        return "has " + std::string(vector.getRank() > 1 ? "a " : "") +
               "vector type with more than " +
               std::to_string(kMaxVectorElements) +
               " elements, which the targets scalarize into as many "
               "instructions; use a memref";
      elements = *product;
    }
    return "";
  }
  if (isa<MemRefType, RankedTensorType>(type) &&
      !staticBytes(cast<ShapedType>(type), kMaxStaticBytes))
    return "has a type whose static size exceeds " +
           std::to_string(kMaxStaticBytes) +
           " bytes, more than any target can address";
  return "";
}

/// True if `type` can be a kernel parameter on some target.
bool isKernelParameterType(Type type) {
  if (type.isIntOrIndexOrFloat() || isa<LLVM::LLVMPointerType>(type))
    return true;
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.getElementType().isIntOrIndexOrFloat();
}

/// True if `name` can be used as a file name inside an output directory.
bool isPlainFileName(StringRef name) {
  return !name.empty() && name.size() <= 200 && !name.starts_with(".") &&
         llvm::all_of(name, [](char c) {
           return llvm::isAlnum(c) || c == '_' || c == '$' || c == '-' ||
                  c == '.';
         });
}

/// Thread-count attributes of the targets and the limit of their values.
struct ExtentAttribute {
  StringLiteral name;
  int64_t max;
};
constexpr ExtentAttribute kExtentAttributes[] = {
    {"known_block_size", kMaxWorkgroupExtent},
    {"gpu.known_block_size", kMaxWorkgroupExtent},
    {"known_grid_size", kMaxGridExtent},
    {"gpu.known_grid_size", kMaxGridExtent},
    {"nvvm.maxntid", kMaxWorkgroupExtent},
    {"nvvm.reqntid", kMaxWorkgroupExtent},
    {"rocdl.reqd_work_group_size", kMaxWorkgroupExtent},
};

/// True if `name` may stand on the function op `op`: one of the op's own
/// attributes (its ODS attributes, symbol and function-interface names,
/// gpu.func's attribution count) or a dialect-prefixed one.
bool isOwnFunctionAttribute(Operation *op, StringAttr name) {
  if (name.strref().contains('.') ||
      llvm::is_contained(op->getName().getAttributeNames(), name))
    return true;
  return llvm::is_contained(
      {SymbolTable::getSymbolAttrName(), SymbolTable::getVisibilityAttrName(),
       StringRef("function_type"), StringRef("arg_attrs"),
       StringRef("res_attrs"),
       gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName()},
      name.strref());
}

struct CheckInput : public nabla::impl::CheckInputBase<CheckInput> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp root = getOperation();
    bool failed = false;
    auto fail = [&](InFlightDiagnostic &&diagnostic) {
      failed = true;
      return std::move(diagnostic);
    };
    root.walk([&](gpu::GPUModuleOp module) {
      if (module->getParentOp() != root.getOperation())
        fail(module.emitOpError(
            "must be a direct child of the top-level module: a nested module "
            "is not compiled"));
      if (!isPlainFileName(module.getName()))
        fail(module.emitOpError("name '")
             << module.getName()
             << "' cannot name an output file (use letters, digits, '_', "
                "'$', '-' and '.', not a leading '.')");
      for (Operation &op : module.getBody()->getOperations()) {
        StringRef dialect = op.getName().getDialectNamespace();
        if (!isa<SymbolOpInterface>(op) && dialect != "nabla" &&
            dialect != "reloc" && dialect != "llvm")
          fail(op.emitOpError("cannot appear directly in a gpu.module body "
                              "(only kernels, functions, globals and "
                              "declarations)"));
      }
      module.walk([&](Operation *op) {
        if (!succeeded(checkOp(op)))
          failed = true;
      });
    });
    if (failed)
      signalPassFailure();
  }

  LogicalResult checkOp(Operation *op) {
    LogicalResult result = success();
    auto report = [&](const std::string &why) {
      if (why.empty())
        return;
      op->emitOpError() << why;
      result = failure();
    };
    for (Type type : op->getResultTypes())
      report(checkTypeSize(type));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          report(checkTypeSize(arg.getType()));
    // A type attribute of an LLVM-dialect op (a GEP's or alloca's element
    // type) must be an LLVM type: `index` crashed LLVM IR translation.
    bool llvmOp =
        op->getDialect() && op->getDialect()->getNamespace() ==
                                LLVM::LLVMDialect::getDialectNamespace();
    for (NamedAttribute attr : op->getAttrs()) {
      if (auto typeAttr = dyn_cast<TypeAttr>(attr.getValue())) {
        report(checkTypeSize(typeAttr.getValue()));
        if (llvmOp && !isa<FunctionType>(typeAttr.getValue()) &&
            !LLVM::isCompatibleType(typeAttr.getValue()))
          report("has " + attr.getName().str() + " of type '" +
                 llvm::formatv("{0}", typeAttr.getValue()).str() +
                 "', which is not an LLVM type (use i64 for index)");
      }
      for (const ExtentAttribute &extent : kExtentAttributes)
        if (attr.getName() == extent.name)
          report(checkExtents(attr, extent.max));
    }
    if (auto global = dyn_cast<memref::GlobalOp>(op))
      if (global.getInitialValue() && !global.isUninitialized() &&
          staticBytes(global.getType(), kMaxStaticBytes) &&
          !staticBytes(global.getType(), kMaxInitializedBytes))
        report("has an initial value larger than " +
               std::to_string(kMaxInitializedBytes) +
               " bytes; initialize it at run time instead");
    if (auto dim = dyn_cast<memref::DimOp>(op)) {
      APInt index;
      int64_t rank = cast<ShapedType>(dim.getSource().getType()).getRank();
      if (matchPattern(dim.getIndex(), m_ConstantInt(&index)) &&
          (index.isNegative() || index.sge(rank)))
        report("index " + std::to_string(index.getSExtValue()) +
               " is not a dimension of a rank-" + std::to_string(rank) +
               " memref");
    }
    // The lowerings copy a function's attributes onto the target's function
    // op (spirv.func, llvm.func), where an unprefixed name may be one of its
    // own of another type: `function_control = array<i32: ...>` on a gpu.func
    // crashed the SPIR-V conversion (found by fuzzing).
    if (isa<FunctionOpInterface>(op))
      for (NamedAttribute attr : op->getAttrs())
        if (!isOwnFunctionAttribute(op, attr.getName()))
          report("has attribute '" + attr.getName().str() +
                 "' without a dialect prefix, which the lowerings would copy "
                 "onto the target's function op (name it 'mydialect." +
                 attr.getName().str() + "')");
    if (auto kernel = dyn_cast<gpu::GPUFuncOp>(op); kernel && kernel.isKernel())
      for (auto [index, type] : llvm::enumerate(kernel.getArgumentTypes()))
        if (!isKernelParameterType(type)) {
          std::string text;
          llvm::raw_string_ostream os(text);
          os << "parameter #" << index << " has type '" << type
             << "', which no target passes to a kernel (use a memref of "
                "integers or floats, an integer, a float or index)";
          report(text);
        }
    return result;
  }

  /// Why the extents in `attr` are out of [1, max], or an empty string.
  static std::string checkExtents(NamedAttribute attr, int64_t max) {
    SmallVector<int64_t> values;
    if (auto array = dyn_cast<DenseI32ArrayAttr>(attr.getValue()))
      values.assign(array.asArrayRef().begin(), array.asArrayRef().end());
    else if (auto array = dyn_cast<DenseI64ArrayAttr>(attr.getValue()))
      values.assign(array.asArrayRef().begin(), array.asArrayRef().end());
    for (int64_t value : values)
      if (value < 1 || value > max)
        return "has " + attr.getName().str() + " value " +
               std::to_string(value) + " out of range (1 to " +
               std::to_string(max) + ")";
    return "";
  }
};

} // namespace
