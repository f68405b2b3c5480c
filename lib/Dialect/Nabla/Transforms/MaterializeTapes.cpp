//===- MaterializeTapes.cpp - Global-memory tapes as kernel parameters ----===//
//
// `nabla.tape` ops (reverse mode's slots for loops with trip counts known
// at run time) become slices of one buffer per kernel that the launch
// provides:
//  1. functions holding tapes are inlined into the kernels calling them;
//  2. each kernel gains a trailing `memref<?xi32>` parameter (`nabla.tape`),
//     laid out thread-minor: word w of thread t at `w * threads + t`, where
//     threads is the grid's thread count and t the thread's linear global
//     id; every load and store of a tape op's slots becomes one of it;
//  3. the words per thread, the sum over the kernel's tape ops, must be a
//     function of the kernel's integer scalar parameters and constants: the
//     kernel's `nabla.tape` attribute records it as a formula (JSON, read by
//     every launcher from the manifest, and as text);
//  4. every `gpu.launch_func` of the kernel in host code (also code set
//     aside by nabla-set-aside-host-code) allocates the tape around the
//     launch from the launch's own operands and frees it after.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Transforms/InliningUtils.h"

#include "GPUDerivatives.h"
#include "SplitDerivative.h"
#include "TapeFormulas.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <limits>

namespace nabla {
#define GEN_PASS_DEF_MATERIALIZETAPES
#include "nabla/Dialect/Nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;
using namespace nabla;
using namespace nabla::tapes;

namespace {

/// The attribute names the manifest writer reads.
constexpr llvm::StringLiteral kTapeAttrName = "nabla.tape";

Value product(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  Value result = values.front();
  for (Value v : values.drop_front())
    result = arith::MulIOp::create(b, loc, result, v);
  return result;
}

/// A materialized tape of one kernel.
struct KernelTape {
  gpu::GPUFuncOp kernel;
  /// Words per thread, computed from the kernel's parameters.
  Value words;
  /// The words per thread as text, for messages.
  std::string formula;
  /// Its size also follows a capacity the launcher raises as needed: the
  /// kernel's value of it (the launch's, mapped when sizing at a launch).
  bool growable = false;
  Value capacity;
};

class MaterializeTapesPass
    : public nabla::impl::MaterializeTapesBase<MaterializeTapesPass> {
public:
  using MaterializeTapesBase::MaterializeTapesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    strings.clear();
    symbolTable.reset();
    if (!module.walk([](TapeOp) { return WalkResult::interrupt(); })
             .wasInterrupted()) {
      dropSlotlessCapacities();
      return answerEmptyQueries();
    }
    if (failed(inlineTapeHolders(module)))
      return signalPassFailure();
    SmallVector<gpu::GPUFuncOp> kernels;
    bool stray = false;
    module.walk([&](TapeOp tape) {
      auto kernel = tape->getParentOfType<gpu::GPUFuncOp>();
      if (kernel && kernel.isKernel()) {
        if (kernels.empty() || kernels.back() != kernel)
          kernels.push_back(kernel);
        return;
      }
      tape.emitOpError("is not inside a kernel: a global tape belongs to the "
                       "kernel that launches the derivative, so the function "
                       "holding it must be called from a gpu.func kernel");
      stray = true;
    });
    if (stray)
      return signalPassFailure();
    llvm::SetVector<gpu::GPUFuncOp> unique(kernels.begin(), kernels.end());
    for (gpu::GPUFuncOp kernel : unique)
      if (failed(materialize(kernel)))
        return signalPassFailure();
    dropSlotlessCapacities();
    answerEmptyQueries();
  }

  /// A growing tape none of whose slots is read back (so none allocated):
  /// nothing can overflow, its capacity is unbounded.
  void dropSlotlessCapacities() {
    SmallVector<Operation *> growing;
    getOperation().walk([&](Operation *op) {
      if (isa<TapeCapacityOp, TapeOverflowOp>(op))
        growing.push_back(op);
    });
    for (Operation *op : growing) {
      if (isa<TapeCapacityOp>(op)) {
        OpBuilder b(op);
        op->getResult(0).replaceAllUsesWith(
            arith::ConstantIndexOp::create(b, op->getLoc(),
                                           std::numeric_limits<int32_t>::max())
                .getResult());
      }
      op->erase();
    }
  }

  /// The nabla.split_tape_elements left: of split kernels whose tape has no
  /// slot (0 elements); any other is an error.
  void answerEmptyQueries() {
    SmallVector<SplitTapeElementsOp> queries;
    getOperation().walk(
        [&](SplitTapeElementsOp query) { queries.push_back(query); });
    for (SplitTapeElementsOp query : queries) {
      // Host code may be set aside in a nested module: look the kernel up
      // from the top.
      gpu::GPUFuncOp kernel;
      getOperation().walk([&](gpu::GPUFuncOp candidate) {
        auto parent = candidate->getParentOfType<gpu::GPUModuleOp>();
        if (parent &&
            parent.getNameAttr() == query.getKernel().getRootReference() &&
            candidate.getNameAttr() == query.getKernel().getLeafReference())
          kernel = candidate;
      });
      bool split = kernel && llvm::any_of(
                                 llvm::seq(kernel.getNumArguments()),
                                 [&](unsigned i) {
                                   return static_cast<bool>(kernel.getArgAttr(
                                       i, kSplitTapeAttrName));
                                 });
      if (!split) {
        query.emitOpError("names ")
            << query.getKernel()
            << ", which is not a split-mode kernel (nabla.kernel_adjoint ... "
               "reverse ...)";
        signalPassFailure();
        continue;
      }
      OpBuilder b(query);
      query.replaceAllUsesWith(
          arith::ConstantIndexOp::create(b, query.getLoc(), 0).getResult());
      query.erase();
    }
  }

private:
  /// Inlines the calls of functions holding tapes (transitively) into their
  /// callers, then erases the private ones no longer called.
  LogicalResult inlineTapeHolders(ModuleOp module) {
    DenseSet<Operation *> holders;
    module.walk([&](TapeOp tape) {
      if (auto f = tape->getParentOfType<func::FuncOp>())
        holders.insert(f);
    });
    // Callers of holders hold tapes once inlined.
    for (bool changed = true; changed;) {
      changed = false;
      module.walk([&](func::CallOp call) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (!callee || !holders.contains(callee))
          return;
        Operation *caller = call->getParentOfType<FunctionOpInterface>();
        if (caller && holders.insert(caller).second)
          changed = true;
      });
    }
    auto select = [&](func::CallOp call) -> FailureOr<func::FuncOp> {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      return callee && holders.contains(callee) ? callee : func::FuncOp();
    };
    SmallVector<Operation *> callers;
    module.walk([&](FunctionOpInterface f) {
      if (holders.contains(f) || isa<gpu::GPUFuncOp>(f))
        callers.push_back(f);
    });
    for (Operation *caller : callers)
      if (failed(inlineFuncCalls(caller, select)))
        return failure();
    for (Operation *holder : holders) {
      auto f = dyn_cast<func::FuncOp>(holder);
      if (f && f.isPrivate() &&
          SymbolTable::symbolKnownUseEmpty(f, f->getParentOp()))
        f.erase();
    }
    return success();
  }

  LogicalResult materialize(gpu::GPUFuncOp kernel) {
    Location loc = kernel.getLoc();
    Block &entry = kernel.getBody().front();
    SmallVector<TapeOp> tapes;
    kernel.walk([&](TapeOp tape) {
      // Slots nothing reads back (a sum's accumulator, whose adjoint needs
      // no value) take no memory. A split half's slots are read by the
      // other half: all kept.
      bool unread = !tape->hasAttr(kSplitTapeAttrName) &&
                    llvm::all_of(tape->getUsers(), [](Operation *user) {
                      return isa<memref::StoreOp>(user);
                    });
      if (!unread) {
        tapes.push_back(tape);
        return;
      }
      for (Operation *user : llvm::make_early_inc_range(tape->getUsers()))
        user->erase();
      tape.erase();
    });
    if (tapes.empty()) {
      if (remarks)
        kernel.emitRemark() << "global-memory tape: every slot unread, none "
                               "allocated";
      return success();
    }

    // The words per thread, as a formula and at the kernel's entry.
    FormulaBuilder formulas(kernel);
    OpBuilder b(&entry, entry.begin());
    IRMapping atEntry;
    for (BlockArgument arg : entry.getArguments())
      atEntry.map(arg, arg);
    // Words per distinct count (tapes of one loop share it).
    llvm::MapVector<Value, int64_t> perCount;
    SmallVector<Value> offsets;
    Value words = arith::ConstantIndexOp::create(b, loc, 0);
    for (TapeOp tape : tapes) {
      std::optional<Formula> count = formulas.build(tape.getCount());
      if (!count) {
        InFlightDiagnostic diag =
            tape.emitOpError("needs a size computable before the launch from "
                             "the kernel's integer scalar parameters, "
                             "constants and elements of integer buffers, but "
                             "it depends on ");
        if (Operation *def = formulas.blocker.getDefiningOp())
          diag << "'" << def->getName() << "'";
        else
          diag << "a value that is not a kernel parameter";
        diag.attachNote(formulas.blocker.getLoc())
            << "this value (a trip count that varies between threads or "
               "reads memory needs the hint nabla.max_trip_count = N on "
               "its loop)";
        return failure();
      }
      unsigned width = cast<MemRefType>(tape.getType()).getRank() == 2 ? 2 : 1;
      perCount[tape.getCount()] += width;
      offsets.push_back(words);
      Value n = rematerialize(b, tape.getCount(), atEntry);
      if (width == 2)
        n = arith::MulIOp::create(b, loc, n,
                                  arith::ConstantIndexOp::create(b, loc, 2));
      words = arith::AddIOp::create(b, loc, words, n);
    }

    Formula total;
    for (auto [count, times] : perCount) {
      Formula f = *formulas.build(count);
      if (times != 1)
        f = {"[\"muli\",64," + f.json + ",[\"const\",64," +
                 std::to_string(times) + "]]",
             std::to_string(times) + " * " + f.text,
             std::nullopt};
      total = total.json.empty()
                  ? f
                  : Formula{"[\"addi\",64," + total.json + "," + f.json + "]",
                            total.text + " + " + f.text, std::nullopt};
    }

    // The tape parameter and the thread's place in it: a split kernel's is
    // the caller's (its nabla.split_tape parameter), else a new one the
    // launch allocates.
    bool split = llvm::any_of(tapes, [](TapeOp tape) {
      return tape->hasAttr(kSplitTapeAttrName);
    });
    if (split && !llvm::all_of(tapes, [](TapeOp tape) {
          return tape->hasAttr(kSplitTapeAttrName);
        }))
      return kernel.emitOpError(
          "holds the tapes of a split-mode derivative and of another one; a "
          "split kernel differentiates only its own body");
    std::optional<unsigned> callerTape;
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (kernel.getArgAttr(i, kSplitTapeAttrName))
        callerTape = i;
    if (split && !callerTape)
      return tapes.front().emitOpError(
          "belongs to a split-mode derivative, whose kernel needs a "
          "caller-owned tape parameter (nabla.kernel_adjoint ... reverse ...)");
    unsigned index = callerTape ? *callerTape : kernel.getNumArguments();
    if (!callerTape) {
      Type tapeType = MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
      if (failed(kernel.insertArgument(
              index, tapeType,
              b.getDictionaryAttr(
                  b.getNamedAttr(kTapeAttrName, b.getUnitAttr())),
              loc)))
        return kernel.emitOpError("cannot take a tape parameter");
    }
    Value buffer = entry.getArgument(index);
    // A growing tape (loops whose trip counts are known only as they run):
    // the launcher writes the capacity into the buffer's first word; a
    // thread that needed more raises the second; the slots follow them.
    bool growable = false;
    Value header, capacityValue;
    SmallVector<Operation *> growing;
    kernel.walk([&](Operation *op) {
      if (isa<TapeCapacityOp, TapeOverflowOp>(op))
        growing.push_back(op);
    });
    if (!growing.empty()) {
      growable = true;
      if (split)
        return growing.front()->emitOpError(
            "grows with its loop's trip count, which a split-mode tape "
            "(sized by its caller) cannot");
      OpBuilder top(&entry, entry.begin());
      Value capacityAt = arith::ConstantIndexOp::create(top, loc, 0);
      Value overflowAt = arith::ConstantIndexOp::create(top, loc, 1);
      header = arith::ConstantIndexOp::create(top, loc, 2);
      Value capacity = arith::IndexCastOp::create(
          top, loc, top.getIndexType(),
          memref::LoadOp::create(top, loc, buffer, capacityAt));
      capacityValue = capacity;
      for (Operation *op : growing) {
        if (isa<TapeCapacityOp>(op)) {
          op->getResult(0).replaceAllUsesWith(capacity);
        } else {
          OpBuilder at(op);
          Value needed = arith::IndexCastOp::create(
              at, op->getLoc(), at.getI32Type(), op->getOperand(0));
          memref::AtomicRMWOp::create(at, op->getLoc(),
                                      arith::AtomicRMWKind::maxs, needed,
                                      buffer, ValueRange{overflowAt});
        }
        op->erase();
      }
    }
    auto [inBlock, blockThreads] = emitLinearIdAndCount(b, loc);
    auto [blockId, blocks] = emitLinearIdAndCount(b, loc, /*ofBlocks=*/true);
    Value threads = arith::MulIOp::create(b, loc, blocks, blockThreads);
    Value thread = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, blockId, blockThreads), inBlock);

    // Every access of a tape's slots, into the buffer.
    for (auto [tape, offset] : llvm::zip(tapes, offsets)) {
      for (Operation *user : llvm::make_early_inc_range(tape->getUsers())) {
        auto load = dyn_cast<memref::LoadOp>(user);
        auto store = dyn_cast<memref::StoreOp>(user);
        if (!load && !store)
          return user->emitOpError("uses a global tape's slots; only "
                                   "memref.load and memref.store may");
        OpBuilder at(user);
        Location l = user->getLoc();
        Value word = arith::AddIOp::create(
            at, l, offset,
            tape.emitWord(at, l,
                          load ? load.getIndices() : store.getIndices()));
        Value element = arith::AddIOp::create(
            at, l, arith::MulIOp::create(at, l, word, threads), thread);
        if (header)
          element = arith::AddIOp::create(at, l, element, header);
        if (load)
          load.replaceAllUsesWith(
              memref::LoadOp::create(at, l, buffer, element).getResult());
        else
          memref::StoreOp::create(at, l, store.getValue(), buffer, element);
        user->erase();
      }
      tape.erase();
    }
    SmallVector<NamedAttribute> described{
        b.getNamedAttr("words_per_thread", b.getStringAttr(total.json)),
        b.getNamedAttr("formula", b.getStringAttr(total.text))};
    if (growable)
      described.push_back(b.getNamedAttr("growable", b.getUnitAttr()));
    kernel->setAttr(split ? StringRef(kSplitTapeAttrName)
                          : StringRef(kTapeAttrName),
                    b.getDictionaryAttr(described));
    if (remarks)
      kernel.emitRemark() << "global-memory tape: 4 * (" << total.text
                          << ") bytes per thread (parameter #" << index
                          << (split ? "), the caller's (split mode)"
                                    : "), allocated by the launch");
    KernelTape materialized{kernel, words, total.text, growable, capacityValue};
    if (split)
      return updateSizeQueries(materialized, index);
    return updateLaunches(materialized);
  }

  /// The tape's int32 elements for a launch of `tape.kernel` with `grid`,
  /// `block` and the kernel's leading parameters `operands`, computed at
  /// `b`: words per thread (the largest over the grid when the formula reads
  /// thread ids) times the grid's threads.
  Value elementsAtLaunch(OpBuilder &b, Location loc, const KernelTape &tape,
                         ValueRange operands, gpu::KernelDim3 grid,
                         gpu::KernelDim3 block, Value capacity = {}) {
    gpu::GPUFuncOp kernel = tape.kernel;
    Block &entry = kernel.getBody().front();
    IRMapping mapping;
    if (capacity)
      mapping.map(tape.capacity, capacity);
    for (auto [arg, operand] :
         llvm::zip(entry.getArguments().take_front(operands.size()),
                   operands))
      mapping.map(arg, operand);
    auto pick = [](const gpu::KernelDim3 &v, gpu::Dimension d) {
      return d == gpu::Dimension::x   ? v.x
             : d == gpu::Dimension::y ? v.y
                                      : v.z;
    };
    Value threads = product(
        b, loc, {grid.x, grid.y, grid.z, block.x, block.y, block.z});
    // Buffers the size reads (ragged rows' offsets): read from host copies,
    // as device memory may not be the host's.
    DenseSet<Value> visited;
    llvm::SetVector<Value> read;
    collectReadBuffers(tape.words, visited, read);
    SmallVector<Value> copies;
    for (Value buffer : read) {
      Value device = mapping.lookupOrNull(buffer);
      auto type = device ? dyn_cast<MemRefType>(device.getType()) : nullptr;
      if (!type || type.getRank() != 1)
        continue;
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value size = memref::DimOp::create(b, loc, device, zero);
      Value host = memref::AllocOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()),
          type.isDynamicDim(0) ? ValueRange{size} : ValueRange{});
      gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), host, device);
      mapping.map(buffer, host);
      copies.push_back(host);
    }
    Value words;
    DenseSet<Value> seen;
    if (!readsIds(tape.words, seen)) {
      words = rematerialize(b, tape.words, mapping,
                            [&](const char *name, gpu::Dimension d) {
                              return pick(StringRef(name) == "grid_dim"
                                              ? grid
                                              : block,
                                          d);
                            });
    } else {
      // The largest words over the grid's threads.
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto loop = scf::ForOp::create(b, loc, zero, threads, one,
                                     ValueRange{zero});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      // thread = ((bz * gy + by) * gx + bx) * (bx * by * bz) + tid.
      Value rest = loop.getInductionVar();
      DenseMap<std::pair<StringRef, unsigned>, Value> ids;
      for (auto [name, sizes] : {std::make_pair("thread_id", block),
                                 std::make_pair("block_id", grid)})
        for (gpu::Dimension d : {gpu::Dimension::x, gpu::Dimension::y,
                                 gpu::Dimension::z}) {
          ids[{name, unsigned(d)}] =
              arith::RemUIOp::create(b, loc, rest, pick(sizes, d));
          rest = arith::DivUIOp::create(b, loc, rest, pick(sizes, d));
        }
      IRMapping perThread = mapping;
      Value mine = rematerialize(
          b, tape.words, perThread,
          [&](const char *name, gpu::Dimension d) -> Value {
            StringRef n(name);
            if (n == "grid_dim")
              return pick(grid, d);
            if (n == "block_dim")
              return pick(block, d);
            return ids.lookup({n, unsigned(d)});
          });
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::MaxSIOp::create(b, loc, loop.getRegionIterArgs()[0],
                                            mine)
                         .getResult()});
      words = loop.getResult(0);
    }
    for (Value host : copies)
      memref::DeallocOp::create(b, loc, host);
    return arith::MulIOp::create(b, loc, words, threads);
  }

  /// Replaces every nabla.split_tape_elements of the split kernel
  /// `tape.kernel` (its tape parameter #`tapeIndex`) by the elements its
  /// launch needs.
  LogicalResult updateSizeQueries(const KernelTape &tape, unsigned tapeIndex) {
    gpu::GPUFuncOp kernel = tape.kernel;
    auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
    SmallVector<SplitTapeElementsOp> queries;
    getOperation().walk([&](SplitTapeElementsOp query) {
      SymbolRefAttr ref = query.getKernel();
      if (ref.getRootReference() == gpuModule.getNameAttr() &&
          ref.getLeafReference() == kernel.getNameAttr())
        queries.push_back(query);
    });
    for (SplitTapeElementsOp query : queries) {
      if (query.getKernelOperands().size() != tapeIndex)
        return query.emitOpError("names ")
               << query.getKernelOperands().size() << " arguments of @"
               << kernel.getName() << ", whose parameters before its tape are "
               << tapeIndex;
      OpBuilder b(query);
      Value elements = elementsAtLaunch(
          b, query.getLoc(), tape, query.getKernelOperands(),
          {query.getGridSizeX(), query.getGridSizeY(), query.getGridSizeZ()},
          {query.getBlockSizeX(), query.getBlockSizeY(),
           query.getBlockSizeZ()});
      query.replaceAllUsesWith(elements);
      query.erase();
    }
    return success();
  }

  /// A NUL-terminated string constant in `module`, named after `prefix`;
  /// one global per distinct text, shared by every launch that names it.
  Value stringConstant(OpBuilder &b, Location loc, ModuleOp module,
                       StringRef prefix, StringRef text) {
    std::string bytes = (text + Twine('\0')).str();
    LLVM::GlobalOp &global = strings[(prefix + Twine('\0') + bytes).str()];
    if (!global) {
      auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      global = LLVM::GlobalOp::create(top, loc, type, /*isConstant=*/true,
                                      LLVM::Linkage::Internal, prefix,
                                      b.getStringAttr(bytes));
      symbols(module).insert(global);
    }
    return LLVM::AddressOfOp::create(b, loc, global);
  }

  /// The module's symbol table, built once (it renames clashing globals).
  SymbolTable &symbols(ModuleOp module) {
    if (!symbolTable)
      symbolTable = std::make_shared<SymbolTable>(module);
    return *symbolTable;
  }

  /// Prefix and text -> the string global made for them.
  llvm::StringMap<LLVM::GlobalOp> strings;
  std::shared_ptr<SymbolTable> symbolTable;

  /// Before the tape's gpu.alloc: libnabla_mgpu's nabla_mgpu_check_tape
  /// ends the program when the tape's `elements` words exceed the limit,
  /// naming the kernel, its bytes and the formula, as nabla-run's and
  /// nabla-launch's own launches do.
  void checkTapeSize(OpBuilder &b, Location loc, ModuleOp module,
                     const KernelTape &tape, Value elements) {
    constexpr StringLiteral kCheck = "nabla_mgpu_check_tape";
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto type = b.getFunctionType({b.getI64Type(), ptr, ptr}, {});
    if (!module.lookupSymbol<func::FuncOp>(kCheck)) {
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      func::FuncOp::create(top, loc, kCheck, type).setPrivate();
    }
    Value kernel = stringConstant(b, loc, module, "__nabla_tape_kernel",
                                  gpu::GPUFuncOp(tape.kernel).getName());
    Value formula = stringConstant(b, loc, module, "__nabla_tape_formula",
                                   tape.formula);
    Value count =
        arith::IndexCastOp::create(b, loc, b.getI64Type(), elements);
    func::CallOp::create(b, loc, kCheck, TypeRange{},
                         ValueRange{count, kernel, formula});
  }

  /// A call of libnabla_mgpu's `name` (declared in `module` on first use)
  /// with `args`, returning `result` (none when null).
  Value callRuntime(OpBuilder &b, Location loc, ModuleOp module, StringRef name,
                    ValueRange args, Type result) {
    SmallVector<Type> results;
    if (result)
      results.push_back(result);
    auto type = b.getFunctionType(TypeRange(args), results);
    if (!module.lookupSymbol<func::FuncOp>(name)) {
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      func::FuncOp::create(top, loc, name, type).setPrivate();
    }
    auto call = func::CallOp::create(b, loc, name, results, args);
    return result ? call.getResult(0) : Value();
  }

  /// Allocates the tape around every launch of `tape.kernel` in host code.
  LogicalResult updateLaunches(const KernelTape &tape) {
    gpu::GPUFuncOp kernel = tape.kernel;
    auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
    StringRef moduleName = gpuModule.getName(), name = kernel.getName();
    SmallVector<gpu::LaunchFuncOp> launches;
    getOperation().walk([&](gpu::LaunchFuncOp launch) {
      if (launch.getKernelModuleName() == moduleName &&
          launch.getKernelName() == name)
        launches.push_back(launch);
    });
    unsigned params = kernel.getNumArguments() - 1;
    for (gpu::LaunchFuncOp launch : launches) {
      Location loc = launch.getLoc();
      Value token = launch.getAsyncToken();
      if (tape.growable && token)
        return launch.emitOpError("launches @")
               << name
               << " asynchronously, whose tape grows with a loop's trip count "
                  "known only as it runs; a host program checks such a tape "
                  "after a synchronous launch (drop `async`)";
      if (launch.getKernelOperands().size() != params)
        return launch.emitOpError("launches @")
               << name << " with " << launch.getKernelOperands().size()
               << " operands, but it takes " << params;
      OpBuilder b(launch);
      // A growing tape: the capacity from libnabla_mgpu ($NABLA_TAPE_CAPACITY,
      // else 32), two header words in front.
      Value capacity, capacity64;
      ModuleOp module = launch->getParentOfType<ModuleOp>();
      if (tape.growable) {
        capacity64 = callRuntime(b, loc, module, "nabla_mgpu_tape_capacity", {},
                                 b.getI64Type());
        capacity =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), capacity64);
      }
      Value elements =
          elementsAtLaunch(b, loc, tape, launch.getKernelOperands(),
                           launch.getGridSizeOperandValues(),
                           launch.getBlockSizeOperandValues(), capacity);
      if (tape.growable)
        elements = arith::AddIOp::create(
            b, loc, elements, arith::ConstantIndexOp::create(b, loc, 2));
      checkTapeSize(b, loc, launch->getParentOfType<ModuleOp>(), tape,
                    elements);
      auto type = MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
      Value buffer;
      if (token) {
        auto alloc = gpu::AllocOp::create(
            b, loc, TypeRange{type, token.getType()},
            launch.getAsyncDependencies(), ValueRange{elements}, ValueRange{},
            /*hostShared=*/false);
        buffer = alloc.getMemref();
        launch.getAsyncDependenciesMutable().assign(alloc.getAsyncToken());
      } else {
        buffer = gpu::AllocOp::create(b, loc, TypeRange{type}, ValueRange{},
                                      ValueRange{elements}, ValueRange{},
                                      /*hostShared=*/false)
                     .getMemref();
      }
      // Every word the capacity: the first is read as it, the second (the
      // overflow) stays it unless a thread needed more.
      if (tape.growable)
        gpu::MemsetOp::create(
            b, loc, TypeRange{}, ValueRange{}, buffer,
            arith::TruncIOp::create(b, loc, b.getI32Type(), capacity64));
      launch.getKernelOperandsMutable().append(buffer);
      b.setInsertionPointAfter(launch);
      // After it: a thread that needed more ends the program, naming the
      // capacity to rerun with.
      if (tape.growable) {
        Value address =
            memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
        Value kernelName =
            stringConstant(b, loc, module, "__nabla_tape_kernel", name);
        callRuntime(
            b, loc, module, "nabla_mgpu_check_tape_overflow",
            {arith::IndexCastOp::create(b, loc, b.getI64Type(), address),
             capacity64, kernelName},
            Type());
      }
      if (token) {
        auto dealloc = gpu::DeallocOp::create(
            b, loc, token.getType(), ValueRange{token}, buffer);
        token.replaceAllUsesExcept(dealloc.getAsyncToken(), dealloc);
      } else {
        gpu::DeallocOp::create(b, loc, TypeRange{}, ValueRange{}, buffer);
      }
    }
    return success();
  }
};

} // namespace
