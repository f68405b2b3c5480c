//===- CheckTargetSupport.cpp - Report ops a target cannot lower ----------===//
//
// The first pass of every `nabla-to-*` pipeline. A conversion that meets an
// op it has no pattern for fails with a generic legalization message deep in
// the pipeline, or worse, an LLVM back end aborts; this pass instead names
// the op, the target and the location up front.
//
//===----------------------------------------------------------------------===//

#include "nabla/Support/OptionNames.h"
#include "nabla/Transforms/Passes.h"

#include "nabla/Dialect/Nabla/IR/NablaOps.h"

#include "nabla/Support/Limits.h"
#include "nabla/Support/TargetOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"

namespace nabla {
#define GEN_PASS_DEF_CHECKTARGETSUPPORT
#include "nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;

namespace {

/// Dialects every target lowers from inside a gpu.module.
constexpr llvm::StringLiteral kCommonDialects[] = {
    "builtin", "arith", "math",  "scf", "cf",     "func",
    "memref",  "gpu",   "index", "ub",  "affine", "vector"};

/// True if `name` is an assembler symbol of PTX ([A-Za-z_$][A-Za-z0-9_$]*),
/// or with `allowDot` of the AMDGPU assembler ('.' too).
bool isAssemblerName(StringRef name, bool allowDot) {
  auto valid = [&](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$' || (allowDot && c == '.');
  };
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, valid);
}

/// True if `dim` asks for a dynamic extent of a kernel's 1-D (or strided)
/// buffer parameter (through memref.cast), or for an extent chosen at run
/// time. Multi-dimensional buffers get their sizes as extra parameters
/// (nabla-linearize-kernel-memrefs), and a device function's parameter may
/// become a static buffer once inlined.
bool isDynamicParameterDim(memref::DimOp dim) {
  Value source = dim.getSource();
  while (auto cast = source.getDefiningOp<memref::CastOp>())
    source = cast.getSource();
  auto type = dyn_cast<MemRefType>(source.getType());
  auto kernel = dyn_cast_or_null<gpu::GPUFuncOp>(
      source.getParentBlock() ? source.getParentBlock()->getParentOp()
                              : nullptr);
  if (!isa<BlockArgument>(source) || !type || !kernel || !kernel.isKernel() ||
      (type.getRank() >= 2 && type.getLayout().isIdentity()))
    return false;
  std::optional<int64_t> index = dim.getConstantIndex();
  if (!index)
    return !type.hasStaticShape();
  return *index >= 0 && *index < type.getRank() && type.isDynamicDim(*index);
}

/// True if `type` is or contains f64.
/// Memory the targets allocate per workgroup (a global variable on SPIR-V).
bool isWorkgroupMemory(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

bool containsF64(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.getElementType().isF64();
  return type.isF64();
}

struct CheckTargetSupport
    : public nabla::SuggestOptionNames<
          nabla::impl::CheckTargetSupportBase<CheckTargetSupport>> {
  using SuggestOptionNames::SuggestOptionNames;

  void runOnOperation() override {
    llvm::StringSet<> dialects;
    for (StringRef name : kCommonDialects)
      dialects.insert(name);
    if (target == "nvvm") {
      dialects.insert("llvm");
      dialects.insert("nvvm");
    } else if (target == "rocdl") {
      dialects.insert("llvm");
      dialects.insert("rocdl");
      dialects.insert("amdgpu");
    } else if (target == "spirv" || target == "metal") {
      dialects.insert("spirv");
    }
    bool isMetal = target == "metal";
    std::string error = nabla::checkTargetOptions(
        {target, chip, requireChip, abi, toolkit, features, workgroupSize});
    if (!error.empty()) {
      getOperation().emitError(error);
      return signalPassFailure();
    }

    bool failed = false;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      module.walk([&](Operation *op) {
        if (op == module.getOperation())
          return;
        if (std::optional<std::string> reason = check(op, dialects, isMetal)) {
          op->emitOpError() << *reason;
          failed = true;
        }
      });
    });
    // Static workgroup memory beyond what a kernel may declare (an adjoint
    // doubles its primal's: each tile gets a shadow); ptxas would refuse it
    // without naming the kernel's source.
    int64_t limit = target == "nvvm" ? 48 * 1024 : target == "rocdl" ? 64 * 1024 : 0;
    if (limit)
      getOperation().walk([&](gpu::GPUFuncOp kernel) {
        int64_t bytes = 0;
        for (BlockArgument attribution : kernel.getWorkgroupAttributions()) {
          auto type = dyn_cast<MemRefType>(attribution.getType());
          if (type && type.hasStaticShape())
            bytes += type.getNumElements() *
                     llvm::divideCeil(type.getElementTypeBitWidth(), 8);
        }
        if (bytes > limit) {
          kernel.emitOpError()
              << "declares " << bytes
              << " bytes of static workgroup memory, over the " << limit
              << " a kernel may declare on " << target
              << (kernel.getName().starts_with("__nabla_adjoint")
                      ? " (an adjoint holds a shadow of each of its primal's "
                        "workgroup arrays): use smaller tiles"
                      : ": use smaller tiles");
          failed = true;
        }
      });
    if (failed)
      signalPassFailure();
  }

  /// Returns why `op` cannot be lowered for the target, or std::nullopt.
  std::optional<std::string>
  check(Operation *op, const llvm::StringSet<> &dialects, bool isMetal) {
    StringRef dialect = op->getName().getDialectNamespace();
    std::string where = "the " + target + " target";
    // Every target lowers the subgroup barrier (__syncwarp).
    if (isa<nabla::SubgroupBarrierOp, nabla::MemoryFenceOp>(op))
      return std::nullopt;
    if (isa<nabla::ActiveLanesOp>(op))
      return "cannot be lowered by " + where +
             ": the LLVM IR frontend resolves it (--nabla-raise-llvm); it has "
             "no lowering of its own";
    if (dialect == "nabla")
      return "cannot be lowered by " + where +
             ": derivative requests must be expanded by "
             "--nabla-differentiate first";
    if (dialect == "reloc")
      return "cannot be lowered by " + where +
             ": relocation ops must be lowered by --reloc-lower first";
    if (!dialects.contains(dialect))
      return "is not supported by " + where;
    // Symbols become assembler names: PTX takes letters, digits, '_' and
    // '$' (a '-' aborted LLVM's NVPTX printer, a '.' or a leading digit
    // failed in ptxas; found by fuzzing LLVM IR), the AMDGPU assembler also
    // '.'. SPIR-V and MSL (SPIRV-Cross renames) take any name.
    if (auto symbol = dyn_cast<SymbolOpInterface>(op);
        symbol && isa_and_nonnull<gpu::GPUModuleOp>(op->getParentOp()) &&
        (target == "nvvm" || target == "rocdl") &&
        !isAssemblerName(symbol.getName(), /*allowDot=*/target == "rocdl"))
      return "is named '" + symbol.getName().str() + "', which " + where +
             " cannot emit: its symbols are letters, digits, '_' and '$'" +
             (target == "rocdl" ? " and '.'" : "") +
             ", not starting with a digit (rename it in the frontend)";
    // A stack slot of run-time size: SPIR-V has only fixed-size Function
    // variables, PTX needs ISA 7.3 (more than sm_80's default) and AMDGPU a
    // dynamic scratch stack; rejected on every target, so that a
    // target-neutral kernel compiles everywhere or nowhere.
    if (auto alloca = dyn_cast<memref::AllocaOp>(op);
        alloca && !alloca.getType().hasStaticShape())
      return "has a dynamic size, which " + where +
             " cannot allocate; give the private buffer a static shape";
    // A heap allocation left by --nabla-promote-private-allocs (run-time
    // size, too large, or leaving its function): Vulkan and Metal kernels
    // have no device heap (it was upstream's bare "failed to legalize").
    if (auto alloc = dyn_cast<memref::AllocOp>(op);
        alloc && (target == "spirv" || isMetal) &&
        !isWorkgroupMemory(alloc.getType()))
      return std::string(alloc.getType().hasStaticShape()
                             ? "allocates device memory"
                             : "allocates device memory of run-time size") +
             ", which " + where +
             " cannot: Vulkan and Metal kernels have no device heap. Give it "
             "a static shape of at most 64 KiB used only in its function (it "
             "becomes per-thread private memory), or pass a buffer";
    // GLSL.std.450's transcendental functions (and the erf/erfc expansions)
    // are 16/32-bit only.
    if ((target == "spirv" || isMetal) &&
        isa<math::SinOp, math::CosOp, math::TanOp, math::AsinOp, math::AcosOp,
            math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
            math::Log1pOp, math::Log2Op, math::Log10Op, math::TanhOp,
            math::SinhOp, math::CoshOp, math::AsinhOp, math::AcoshOp,
            math::AtanhOp, math::AtanOp, math::Atan2Op, math::PowFOp,
            math::ErfOp, math::ErfcOp, math::CbrtOp>(op) &&
        llvm::any_of(op->getResultTypes(), containsF64))
      return "on f64 has no lowering for " + where +
             " (GLSL.std.450 transcendentals are 32-bit); use f32, or the "
             "nvvm/rocdl targets";
    // Vulkan and Metal pass a buffer without its size: the run-time extent
    // of a parameter has nothing to lower to (it was "failed to legalize";
    // difftest seed 5009). Static extents and those of subviews fold away.
    if (auto dim = dyn_cast<memref::DimOp>(op);
        dim && (target == "spirv" || isMetal) && isDynamicParameterDim(dim))
      return "reads the run-time size of a buffer parameter, which " + where +
             " does not pass to kernels; pass the size as a scalar parameter";
    // SPIR-V's index is 32-bit: a larger constant has no lowering.
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && (target == "spirv" || isMetal))
      if (auto value = dyn_cast<IntegerAttr>(constant.getValue());
          value && value.getType().isIndex() &&
          !value.getValue().isSignedIntN(32))
        return "has index value " + std::to_string(value.getInt()) +
               ", which does not fit the 32-bit index of " + where;
    if (!isMetal)
      return std::nullopt;
    // Vulkan prints through a buffer Nabla's runtime reads after the
    // launch; a Metal host has no such reader.
    if (isa<gpu::PrintfOp>(op))
      return "prints, which " + where +
             " does not support (no host reads a printf buffer); remove it "
             "or compile for spirv, nvvm or rocdl";
    for (Type type :
         llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (containsF64(type))
        return "uses f64, which " + where + " does not support";
    return std::nullopt;
  }
};

} // namespace
