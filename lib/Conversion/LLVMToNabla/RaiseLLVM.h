//===- RaiseLLVM.h - Raising LLVM-dialect kernels (internal) ----*- C++ -*-===//
//
// The plan `--nabla-raise-llvm` makes before it rewrites anything: for every
// LLVM function, where each pointer points (its *root*: a parameter, a field
// of a byval struct parameter, an alloca, a workgroup global, a host global),
// the element type each root is accessed with, and the parameter list of the
// raised function. The rewrite then maps every pointer to (root, element
// offset) and every root to a memref.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_CONVERSION_LLVMTONABLA_RAISELLVM_H
#define NABLA_LIB_CONVERSION_LLVMTONABLA_RAISELLVM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace nabla::raise {

/// The object a pointer value points into.
struct Root {
  enum Kind {
    Argument,   ///< a pointer parameter (`index`); a byval one is a struct
    ByvalField, ///< a pointer field at byte `offset` of byval parameter `index`
    Alloca,     ///< `op`, an llvm.alloca
    Shared,     ///< `global`, an addrspace(3) global (workgroup memory)
    HostGlobal, ///< `global`, any other global (table or host object)
    Marker,     ///< `global`, an Enzyme activity marker (enzyme_dup, ...)
    Function,   ///< `global`, a function (the first operand of an Enzyme call)
    Dispatch, ///< AMDGPU launch data: `index` 0 implicitarg.ptr, 1 dispatch.ptr
    Address,  ///< `global`, a baked address (v1) listed in reloc.address_map
  };
  Kind kind;
  unsigned index = 0;
  int64_t offset = 0;
  mlir::Operation *op = nullptr;
  mlir::StringAttr global;

  bool operator==(const Root &other) const {
    return kind == other.kind && index == other.index &&
           offset == other.offset && op == other.op && global == other.global;
  }
  /// A root a memref stands for (not a marker or function).
  bool isMemory() const {
    return kind != Marker && kind != Function && kind != Dispatch;
  }
};

/// One parameter of a raised function, in order.
struct Param {
  enum Kind {
    Buffer, ///< memref of root `root`
    Offset, ///< element offset (index) of the preceding buffer (device fns)
    Scalar, ///< a scalar of type `type`: an LLVM parameter or a byval field
    /// An i32 that is 0 when the pointer parameter of root `root` is null
    /// (a kernel's: the runtime's `null` argument; a device function's: its
    /// caller's flag, or 1), else 1: the raised form of `p != NULL`.
    Presence,
  };
  Kind kind;
  unsigned root = 0;
  mlir::Type type;
  unsigned llvmArgument = 0;
  int64_t fieldOffset = -1; ///< byte offset inside a byval parameter
};

/// A workgroup global a function uses (directly or through calls), or the
/// shadow of one that an Enzyme request inside it differentiates.
struct SharedSlot {
  mlir::StringAttr global;
  bool shadow = false;
  bool operator==(const SharedSlot &other) const {
    return global == other.global && shadow == other.shadow;
  }
};

/// The pointer `value` compares with, through address-space casts and
/// bitcasts, when `compare` tests a pointer against null (the null constant
/// on either side); null otherwise.
mlir::Value getNullTestedPointer(mlir::LLVM::ICmpOp compare);

/// `value` without address-space casts and bitcasts.
mlir::Value stripPointerCasts(mlir::Value value);

/// The activity marker `value` loads (`enzyme_dup`, ...), if it is one.
std::optional<llvm::StringRef> getLoadedMarker(mlir::Value value);

/// True if parameter `arg` is tested for null in its function (NullTests.cpp).
bool isNullTested(mlir::Value arg);

/// Everything known about one LLVM function before it is rewritten.
struct FunctionPlan {
  mlir::LLVM::LLVMFuncOp func;
  bool isKernel = false;
  llvm::SmallVector<Root> roots;
  llvm::SmallVector<mlir::Type> elementTypes; ///< per root; null = unknown
  llvm::DenseMap<mlir::Value, unsigned> rootOf;
  /// Pointers into byval struct parameters and AMDGPU launch data: their
  /// constant byte offset.
  llvm::DenseMap<mlir::Value, int64_t> byvalOffset;
  llvm::SmallVector<Param> params;
  llvm::SmallVector<SharedSlot> shared;
  /// Roots of pointer parameters the code (or a callee) tests for null:
  /// each has a Presence parameter.
  llvm::DenseSet<unsigned> presenceRoots;

  unsigned getOrAddRoot(const Root &root);
  /// The element type of `root`: the accessed one, or i8 when none is known.
  mlir::Type getElementType(unsigned root) const;
};

/// The plan for a whole module.
struct ModulePlan {
  mlir::ModuleOp module;
  /// Defined functions, callees before callers.
  llvm::MapVector<mlir::StringAttr, FunctionPlan> functions;
  /// Element types of global roots (Shared and HostGlobal), by name.
  llvm::DenseMap<mlir::StringAttr, mlir::Type> globalElementTypes;
  /// Global roots (and baked addresses) some function writes to.
  llvm::DenseSet<mlir::StringAttr> writtenGlobals;
  /// Names of declarations that are Enzyme requests, with their mode.
  llvm::DenseMap<mlir::StringAttr, bool> enzymeReverse;
  /// Objects passed to a function that takes them with one element type
  /// (objectKey in PlanModule.cpp): they are not viewed as another.
  llvm::DenseSet<std::pair<const void *, unsigned>> pinnedObjects;
  /// Objects an integer atomic updates (a flag or counter kept in a float
  /// scratch buffer): viewed as the integer where accesses of one width
  /// disagree, the float accesses reinterpreting it.
  llvm::DenseSet<std::pair<const void *, unsigned>> integerAtomicObjects;

  /// The element type of `root` of `plan` (global roots are typed module
  /// wide).
  mlir::Type getElementType(const FunctionPlan &plan, unsigned root) const;

  FunctionPlan *lookup(mlir::StringAttr name) {
    auto it = functions.find(name);
    return it == functions.end() ? nullptr : &it->second;
  }
  mlir::LLVM::GlobalOp lookupGlobal(mlir::StringAttr name) const {
    return mlir::ModuleOp(module).lookupSymbol<mlir::LLVM::GlobalOp>(name);
  }
};

/// The location to give raised ops and errors: the file position of the LLVM
/// instruction, without the debug scope the importer fuses in.
inline mlir::Location plainLoc(mlir::Location loc) {
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location inner : fused.getLocations())
      if (llvm::isa<mlir::FileLineColLoc>(inner))
        return inner;
  return loc;
}

/// A located error at `op`'s instruction (the op itself is not printed: it
/// is LLVM-dialect noise to a frontend's user).
inline mlir::InFlightDiagnostic fail(mlir::Operation *op) {
  return mlir::emitError(plainLoc(op->getLoc()));
}
inline mlir::InFlightDiagnostic fail(mlir::OpState op) {
  return fail(op.getOperation());
}

/// Whether `func` is a kernel (calling convention or kernel attribute).
bool isKernel(mlir::LLVM::LLVMFuncOp func);

/// Which Enzyme entry point `name` is: reverse (true), forward (false).
std::optional<bool> getEnzymeMode(llvm::StringRef name);

/// The activity a marker global stands for (`enzyme_dup` → "dup", ...).
std::optional<llvm::StringRef> getMarkerActivity(llvm::StringRef name);

/// True for Enzyme's split-mode markers (`enzyme_allocated`, `enzyme_tape`,
/// `enzyme_nofree`), which tag no argument of the function.
bool isSplitMarker(llvm::StringRef name);

/// The half of split mode an Enzyme entry point asks for: "augmented"
/// (`__enzyme_augmentfwd`), "reverse" (`__enzyme_reverse`), or none.
std::optional<llvm::StringRef> getEnzymeSplitHalf(llvm::StringRef name);

/// True for `__enzyme_augmentsize`.
bool isEnzymeAugmentSize(llvm::StringRef name);

/// The split-mode prefix of an Enzyme request's operands after the
/// function (`enzyme_allocated, SIZE, enzyme_tape, PTR, enzyme_nofree` in
/// any order): how many operands it takes, and the tape pointer.
struct EnzymeSplitPrefix {
  unsigned size = 0;
  mlir::Value tape;
};
EnzymeSplitPrefix getEnzymeSplitPrefix(mlir::LLVM::CallOp call);

/// A field of AMDGPU launch data: the workgroup size (`grid` false) or the
/// grid (true; in workgroups, or in work-items when `inItems`) along
/// dimension `dim`.
struct DispatchField {
  bool grid;
  unsigned dim;
  bool inItems;
};

/// The field at byte `offset` of launch data `table` (0: implicit kernel
/// arguments of code object v5, 1: the HSA dispatch packet) loaded as `type`.
std::optional<DispatchField> getDispatchField(unsigned table, int64_t offset,
                                              mlir::Type type);

/// True if `arg` (through casts) is passed, as itself or an Enzyme
/// request's primal or shadow, to a parameter with a presence flag of a
/// function already planned (NullTests.cpp).
bool flowsToPresence(ModulePlan &module, mlir::Value arg);

/// Plans one function (PlanFunction.cpp): traces its pointers to roots,
/// types the roots, fixes its parameters; its callees are planned already.
mlir::LogicalResult planFunction(ModulePlan &module, FunctionPlan &plan);

/// Builds the plan: kernels, call order, roots, element types, parameters,
/// workgroup slots. Emits located errors for what cannot be raised.
/// Only `kernel` and what it reaches are planned when it is not empty.
mlir::LogicalResult planModule(mlir::ModuleOp module, ModulePlan &plan,
                               llvm::StringRef kernel = {});

/// The size in bytes of `type` under the module's data layout.
int64_t getTypeSize(const mlir::DataLayout &layout, mlir::Type type);

/// The byte offset of field `index` of struct `type` (ABI alignment unless
/// packed).
int64_t getFieldOffset(const mlir::DataLayout &layout,
                       mlir::LLVM::LLVMStructType type, unsigned index);

/// The byte offsets and types of the scalar leaves of a struct (nested
/// structs and arrays flattened), in order.
llvm::SmallVector<std::pair<int64_t, mlir::Type>>
getStructLeaves(const mlir::DataLayout &layout, mlir::Type type);

/// The scalar leaves of struct `type` (offset, type) that an integer load
/// of `loaded` at byte `offset` covers exactly, one after the other with no
/// padding (clang copies a `float2` field as one i64): empty if none do.
llvm::SmallVector<std::pair<int64_t, mlir::Type>>
getCoveredLeaves(const mlir::DataLayout &layout, mlir::Type type,
                 int64_t offset, mlir::Type loaded);

/// The scalar leaves of an aggregate type (nested structs and arrays
/// flattened), in order: each one's position (extractvalue indices) and type.
using AggregateFields =
    llvm::SmallVector<std::pair<llvm::SmallVector<int64_t>, mlir::Type>>;
AggregateFields getAggregateFields(mlir::Type type);

/// The byte offset and type of the leaf at `position` of aggregate `type`.
std::optional<std::pair<int64_t, mlir::Type>>
getAggregateLeaf(const mlir::DataLayout &layout, mlir::Type type,
                 llvm::ArrayRef<int64_t> position);

/// The operations a warp reduction combines with (WarpCollectives.cpp).
enum class WarpCombine { Add, Min, Max, MinU, MaxU, And, Or, Xor };

/// Marks the warp operations that stand for CUDA's over a partial mask:
/// every lane of the warp must run them (ConvergeWarps.cpp).
inline constexpr llvm::StringLiteral kPartialMaskAttrName =
    "nabla.partial_mask";

/// x + X * (y + Y * z): the thread's position in its block.
mlir::Value buildLinearThreadId(mlir::OpBuilder &b, mlir::Location loc);

/// The calling thread's lane in its 32-lane warp, as an i32.
mlir::Value buildWarpLane(mlir::OpBuilder &b, mlir::Location loc);

/// Whether bit `lane` (i32, below 32) of `mask` (i32) is set, as an i1.
mlir::Value buildMaskBit(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value mask, mlir::Value lane);

/// `value` (i32) combined by `kind` over the 32 lanes of the calling
/// thread's warp (a butterfly of xor shuffles), in every lane; partners past
/// the block's last thread count as the identity. `partialMask` marks the
/// shuffles with kPartialMaskAttrName.
mlir::Value buildWarpReduce(mlir::OpBuilder &b, mlir::Location loc,
                            WarpCombine kind, mlir::Value value,
                            bool partialMask);

/// CUDA's ballot of `predicate` (i1) over the calling thread's warp.
mlir::Value buildWarpBallot(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value predicate, bool partialMask);

/// Makes every lane of the warp run the warp operations over a partial mask
/// and resolves `nabla.active_lanes`: the branches around them whose
/// condition may differ between a block's threads run in every lane under a
/// predicate. Located errors for what cannot be (ConvergeWarps.cpp).
mlir::LogicalResult convergeWarps(mlir::Operation *root);

/// The name of the memref.global a baked address (v1) becomes.
std::string getAddressGlobalName(llvm::StringRef address);

/// The memref type that stands for `root` of `plan` inside a function
/// (parameters: `memref<?xT>`; allocas, globals: static; workgroup: with the
/// workgroup address space).
mlir::MemRefType getRootMemRefType(const ModulePlan &module,
                                   const FunctionPlan &plan, unsigned root);

/// The memref type of a workgroup slot.
mlir::MemRefType getSlotType(const ModulePlan &module, const SharedSlot &slot);

/// True for `extern __shared__ T s[]`: an external workgroup array of no
/// elements, sized by the launch's dynamic shared memory. Its slot is
/// `memref<?xT, workgroup>`, in a kernel a view of gpu.dynamic_shared_memory.
bool isDynamicSharedGlobal(mlir::LLVM::GlobalOp global);

/// The element type an object accessed as both `a` and `b` is viewed as:
/// either for one type, the float of two of one width, the integer of the
/// narrower width when it divides the wider; null when there is none.
mlir::Type mergeAccessTypes(mlir::Type a, mlir::Type b);

/// Rewrites `plan.func` into a func.func (kernels too; the driver turns them
/// into gpu.func after lifting control flow) at the end of `into`.
mlir::func::FuncOp raiseFunction(ModulePlan &module, FunctionPlan &plan,
                                 mlir::Block &into);

/// Emits the math op a libdevice/OCML call named `name` stands for; null
/// (nothing emitted) when the name is not known.
mlir::Value buildDeviceLibraryCall(mlir::OpBuilder &builder, mlir::Location loc,
                                   llvm::StringRef name,
                                   mlir::ValueRange operands);

/// Emits the op an LLVM intrinsic op (`llvm.intr.*`) stands for; failure when
/// `op` is not one that is raised this way.
mlir::FailureOr<mlir::Value> buildIntrinsic(mlir::OpBuilder &builder,
                                            mlir::Operation *op,
                                            mlir::ValueRange operands);

/// Rewrites every scf.while under `root` whose trip count is a compile-time
/// constant into an scf.for (ConstantTripLoops.cpp).
void convertConstantTripLoops(mlir::Operation *root);

/// Turns the PTX inline assembly of CUDA's cache-hinted loads and stores into
/// plain LLVM loads and stores and drops unread assembly without side
/// effects (InlineAsm.cpp); other assembly is left for the raise to refuse.
void rewriteKnownInlineAsm(mlir::ModuleOp module);

/// An inline assembly text without an enclosing `{ }` and with every run of
/// white space one blank (InlineAsm.cpp).
std::string normalizeInlineAsm(llvm::StringRef text);

/// Rewrites CUB's warp shuffles in PTX assembly (a word shuffle, or a
/// shuffle whose valid lanes add) into `llvm.nvvm.shfl.sync` calls, adds
/// and selects; false (nothing changed) for other assembly (ShuffleAsm.cpp).
bool rewriteShuffleAsm(mlir::LLVM::InlineAsmOp asmOp);

/// Turns the calls of sine-and-cosine functions that return through
/// pointers (`sincosf(x, &s, &c)` of libdevice, OCML and C, their `sincospi`
/// forms, `llvm.sincos`) into a sine, a cosine and stores
/// (DeviceLibrary.cpp); calls of another signature are left to refuse.
void rewriteSinCosCalls(mlir::ModuleOp module);

/// Pointers aligned down through their address (`p & ~3`) and tests of
/// their low bits (`p & 3`) as byte offsets in their object, when it is
/// that aligned (AlignedPointers.cpp).
void rewriteAlignedPointers(mlir::LLVM::LLVMFuncOp func);

/// Inlines the calls of device functions that take or return structs, or
/// are given pointers into local or workgroup memory
/// (InlineAggregateCalls.cpp); a located error when one cannot be.
mlir::LogicalResult inlineAggregateCalls(mlir::ModuleOp module);

/// The object `pointer` points into, as far as address computations show:
/// the value before GEPs and casts (SplitObjectSelects.cpp).
mlir::Value getBaseObject(mlir::Value pointer);

/// Retypes the integer loads whose every use reinterprets them as a float of
/// the same width, and the stores of a float's bits, to the float
/// (ReinterpretedAccesses.cpp): a half buffer of CUDA's headers is then
/// viewed as f16/bf16.
void retypeReinterpretedAccesses(mlir::LLVM::LLVMFuncOp func);

/// Rewrites gradient requests of functions that take structs by value to
/// differentiate a wrapper taking the fields, each enzyme_const
/// (FlattenRequestStructs.cpp); a located error for a struct of another
/// activity.
mlir::LogicalResult flattenRequestStructs(mlir::ModuleOp module);

/// Splits each load, store and atomic through a pointer that selects between
/// two objects into a branch with the access on each side
/// (SplitObjectSelects.cpp).
void splitObjectSelects(mlir::ModuleOp module);

/// Turns each compare-exchange loop that applies a float add, subtract,
/// maxnum or minnum to a value's bits (CUDA's atomicMax on floats, the
/// guide's atomicAdd on doubles) into the `llvm.atomicrmw` it implements
/// (CompareExchangeLoops.cpp); other compare-exchanges are left to refuse.
void rewriteCompareExchangeLoops(mlir::ModuleOp module);

/// The initial contents of `global` as the elements of `type`, its raised
/// memref type; null for a declaration, failure for contents other than
/// numbers laid out as `type`'s elements (GlobalInitializers.cpp).
mlir::FailureOr<mlir::DenseElementsAttr>
raiseGlobalInitializer(mlir::LLVM::GlobalOp global, mlir::MemRefType type);

/// Turns CUDA device printf (`vprintf` with a format global and an argument
/// buffer) into gpu.printf (DevicePrintf.cpp); false after a located error.
mlir::LogicalResult rewriteDevicePrintf(mlir::ModuleOp module);

} // namespace nabla::raise

#endif // NABLA_LIB_CONVERSION_LLVMTONABLA_RAISELLVM_H
