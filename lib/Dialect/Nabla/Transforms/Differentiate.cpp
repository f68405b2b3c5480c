//===- Differentiate.cpp - Expand derivative requests ---------------------===//
//
// The `nabla-differentiate` pass. Kernel adjoint requests become kernels with
// a `nabla.autodiff` (KernelAdjoint.cpp). Then, for every distinct (callee,
// mode, activities), it generates one derivative function next to the callee
// and replaces each request by a call of it:
//
//  1. The callee is cloned and its calls inlined (nested device functions are
//     differentiated transitively), execute_regions inlined and unstructured
//     control flow lifted to scf; floats moved as integer bits become float
//     moves again (FloatBits.cpp).
//  2. Activity analysis (ActivityAnalysis.cpp) marks the float values that
//     depend on an active input and the memrefs that have shadows; a
//     differentiated float's bits that become a float again through integer
//     operations are a located error (FloatBits.cpp).
//  3. Forward mode (ForwardMode.cpp) or reverse mode (ReverseMode.cpp) emits
//     the derivative; the local rules come from DifferentiableOpInterface
//     (DerivativeRules.cpp) and the GPU collectives' from GPUDerivatives.cpp.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Nabla/Transforms/Passes.h"
#include "nabla/Support/OptionNames.h"

#include "ActivityAnalysis.h"
#include "FloatBits.h"
#include "Forward/ForwardMode.h"
#include "HostDerivative.h"
#include "KernelAdjoint.h"
#include "LastBlockReductions.h"
#include "CountedWhileLoops.h"
#include "PromoteLoopElements.h"
#include "SplitDerivative.h"
#include "RecordShadows.h"
#include "UnreadAttributions.h"
#include "Reverse/ReverseMode.h"
#include "nabla/Dialect/Nabla/IR/NablaOps.h"
#include "nabla/Dialect/Nabla/Transforms/DerivativeRuleModels.h"
#include "nabla/Transforms/InliningUtils.h"

#include "mlir/Conversion/ControlFlowToSCF/ControlFlowToSCF.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/InliningUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/ScopeExit.h"

namespace nabla {
#define GEN_PASS_DEF_DIFFERENTIATE
#define GEN_PASS_DEF_DIFFERENTIATEHOST
#include "nabla/Dialect/Nabla/Transforms/Passes.h.inc"
} // namespace nabla

using namespace mlir;
using namespace nabla;

namespace {

//===----------------------------------------------------------------------===//
// Preparation: clone the callee and inline its calls
//===----------------------------------------------------------------------===//

/// The function registered by a `nabla.custom_derivative` in `table` for
/// `callee` in `mode` with exactly these activities, or null.
func::FuncOp findCustomRule(Operation *table, StringRef callee,
                            DerivativeMode mode, ArrayRef<Activity> args,
                            ArrayRef<Activity> rets) {
  for (Block &block : table->getRegion(0))
    for (auto rule : block.getOps<CustomDerivativeOp>())
      if (rule.getCallee() == callee && rule.getDerivativeMode() == mode &&
          ArrayRef<Activity>(rule.getArgumentActivities()) == args &&
          ArrayRef<Activity>(rule.getResultActivities()) == rets)
        return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            rule, rule.getRuleAttr());
  return {};
}

/// True if some `nabla.custom_derivative` in `table` is for `callee`.
bool hasCustomRule(Operation *table, StringRef callee) {
  for (Block &block : table->getRegion(0))
    for (auto rule : block.getOps<CustomDerivativeOp>())
      if (rule.getCallee() == callee)
        return true;
  return false;
}

/// True if `target` is `from` or is reached from it through func.call ops
/// (resolved in `table`).
bool reachesThroughCalls(func::FuncOp from, Operation *target,
                         Operation *table) {
  SmallVector<func::FuncOp> worklist{from};
  DenseSet<Operation *> visited;
  while (!worklist.empty()) {
    func::FuncOp function = worklist.pop_back_val();
    if (!function || !visited.insert(function).second)
      continue;
    if (function.getOperation() == target)
      return true;
    function.walk([&](func::CallOp call) {
      worklist.push_back(SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          table, call.getCalleeAttr()));
    });
  }
  return false;
}

/// Inlines every func.call in `func` (resolved in `symbols`), transitively,
/// except calls of functions with custom derivatives, which differentiation
/// calls instead.
LogicalResult inlineCalls(func::FuncOp func, SymbolTable &symbols) {
  return inlineFuncCalls(func, [&](func::CallOp call) -> FailureOr<func::FuncOp> {
    if (hasCustomRule(symbols.getOp(), call.getCallee()))
      return func::FuncOp();
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal())
      return call.emitOpError("calls @")
             << call.getCallee()
             << ", which has no body to differentiate (give it a custom "
                "derivative or mark the call's operands const)";
    return callee;
  });
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// `<callee>_<argument codes>[_<result codes>]`, the part of a generated
/// derivative's name after its kind (`__nabla_vjp_`, `__nabla_aug_`...).
std::string derivativeCodes(func::FuncOp callee, ArrayRef<Activity> args,
                            ArrayRef<Activity> rets) {
  std::string codes = callee.getName().str() + "_" + activityCode(args);
  if (!rets.empty())
    codes += "_" + activityCode(rets);
  return codes;
}

/// Removes what the emitters produced but nothing uses (zero adjoints of
/// inactive paths, unused partials, primal values only a rule would need),
/// innermost first, until nothing is left to remove.
void eraseDeadCode(func::FuncOp function) {
  for (bool changed = true; changed;) {
    changed = false;
    function.walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (op != function.getOperation() && isOpTriviallyDead(op)) {
        op->erase();
        changed = true;
      }
    });
  }
}

/// Host-level requests (HostDerivative.h), after outlining the gpu.launch
/// regions of the host programs they name (`runPipeline`: the pass's).
LogicalResult expandHostLevelRequests(
    ModuleOp module, bool remarks,
    function_ref<LogicalResult(OpPassManager &)> runPipeline) {
  if (hostRequestsNeedOutlining(module)) {
    OpPassManager outline(ModuleOp::getOperationName());
    outline.addPass(createGpuKernelOutliningPass());
    if (failed(runPipeline(outline)))
      return failure();
  }
  return expandHostRequests(module, remarks);
}

struct DifferentiateHost
    : public nabla::impl::DifferentiateHostBase<DifferentiateHost> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(expandHostLevelRequests(
            getOperation(), remarks, [&](OpPassManager &pm) {
              return runPipeline(pm, getOperation());
            })))
      signalPassFailure();
  }
};

struct Differentiate : public nabla::SuggestOptionNames<
                           nabla::impl::DifferentiateBase<Differentiate>> {
  using SuggestOptionNames::SuggestOptionNames;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerDerivativeRuleModels(registry);
  }

  void runOnOperation() override {
    if (checkpoints < 1 || tapeBudget < 0) {
      getOperation().emitError("nabla-differentiate: checkpoints must be at "
                               "least 1 and tape-budget not negative");
      return signalPassFailure();
    }
    // Host functions first: their derivatives request kernels' adjoints.
    if (failed(expandHostLevelRequests(
            getOperation(), remarks, [&](OpPassManager &pm) {
              return runPipeline(pm, getOperation());
            })))
      return signalPassFailure();
    // Requests created while generating (none today, since calls are
    // inlined) would be picked up by the next round.
    // Kernel adjoints first: each becomes a kernel holding a request.
    SmallVector<KernelAdjointOp> kernelRequests;
    getOperation().walk(
        [&](KernelAdjointOp op) { kernelRequests.push_back(op); });
    for (KernelAdjointOp request : kernelRequests)
      if (failed(expandKernelAdjoint(request, deterministic)))
        return signalPassFailure();
    SmallVector<KernelTangentOp> tangentRequests;
    getOperation().walk(
        [&](KernelTangentOp op) { tangentRequests.push_back(op); });
    for (KernelTangentOp request : tangentRequests)
      if (failed(expandKernelTangent(request)))
        return signalPassFailure();
    SmallVector<Operation *> requests;
    getOperation().walk([&](Operation *op) {
      if (isa<AutodiffOp, FwddiffOp>(op))
        requests.push_back(op);
    });
    for (Operation *request : requests)
      if (failed(expand(request)))
        return signalPassFailure();
    // Enzyme's split calls: their tape in the caller's memory.
    SmallVector<Operation *> callerTapeRequests;
    getOperation().walk([&](Operation *op) {
      if (isa<SplitAutodiffOp, SplitTapeBytesOp>(op))
        callerTapeRequests.push_back(op);
    });
    for (Operation *request : callerTapeRequests)
      if (failed(expandCallerTapeRequest(request)))
        return signalPassFailure();
    // Every request is expanded: the registrations have served their
    // purpose, and no target lowers them.
    SmallVector<CustomDerivativeOp> rules;
    getOperation().walk(
        [&](CustomDerivativeOp rule) { rules.push_back(rule); });
    for (CustomDerivativeOp rule : rules)
      rule.erase();
    // The kernel adjoints' marks of attribution arguments have served too
    // (no target knows them: LLVM's translation warned about each).
    getOperation().walk([](FunctionOpInterface function) {
      for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
        function.removeArgAttr(i, kAttributionArgAttrName);
    });
  }

  template <typename OpTy> static ValueRange inputsOf(Operation *op) {
    return cast<OpTy>(op).getInputs();
  }

  LogicalResult expand(Operation *request) {
    SymbolTableCollection tables;
    FunctionOpInterface calleeInterface;
    DerivativeMode mode;
    SmallVector<Activity> args, rets;
    if (auto ad = dyn_cast<AutodiffOp>(request)) {
      calleeInterface = ad.resolveCallee(tables);
      mode = DerivativeMode::Reverse;
      args = ad.getArgumentActivities();
      rets = ad.getResultActivities();
    } else {
      auto fd = cast<FwddiffOp>(request);
      calleeInterface = fd.resolveCallee(tables);
      mode = DerivativeMode::Forward;
      args = fd.getArgumentActivities();
      rets = fd.getResultActivities();
    }
    if (!calleeInterface)
      return request->emitOpError("callee does not resolve");
    // Deterministic accumulation; a kernel adjoint's request also passes the
    // kernel's trailing scratch parameter on.
    bool ordered = mode == DerivativeMode::Reverse &&
                   (deterministic || request->hasAttr(kScratchAttrName));
    Value scratch;
    gpu::GPUFuncOp kernel;
    if (ordered && request->hasAttr(kScratchAttrName)) {
      kernel = request->getParentOfType<gpu::GPUFuncOp>();
      scratch = kernel.getArgument(kernel.getNumArguments() - 1);
    }
    // A registered custom derivative wins, also for body-less callees.
    Operation *tableOp =
        SymbolTable::getNearestSymbolTable(calleeInterface.getOperation());
    func::FuncOp derivative =
        findCustomRule(tableOp, calleeInterface.getName(), mode, args, rets);
    // A rule that requests its own primal's derivative would call itself
    // forever once the request is replaced by a call of the rule.
    if (derivative) {
      auto enclosing = request->getParentOfType<FunctionOpInterface>();
      if (enclosing &&
          reachesThroughCalls(derivative, enclosing.getOperation(), tableOp))
        return request->emitOpError("requests the derivative of @")
               << calleeInterface.getName() << " inside its own custom "
               << "derivative @" << derivative.getName()
               << ", which would call itself forever; compute the derivative "
                  "in the rule without a request";
    }
    if (!derivative) {
      auto callee = dyn_cast<func::FuncOp>(calleeInterface.getOperation());
      if (!callee || callee.isExternal())
        return request->emitOpError("can only differentiate a func.func with "
                                    "a body or a custom derivative; @")
               << calleeInterface.getName() << " has neither";
      std::string codes = derivativeCodes(callee, args, rets);
      std::string name =
          (mode == DerivativeMode::Reverse ? "__nabla_vjp_" : "__nabla_jvp_") +
          codes;
      if (ordered)
        name += scratch ? "_det_scratch" : "_det";
      // Kernel attributions at this call (the callee's own marks need no
      // name: they hold at every call).
      SmallVector<unsigned> attributions;
      if (mode == DerivativeMode::Reverse)
        for (unsigned i : attributionOperands(request, args))
          if (!callee.getArgAttr(i, kAttributionArgAttrName)) {
            attributions.push_back(i);
            name += "_w" + std::to_string(i);
          }
      // Integer arguments that index memory and have one value across the
      // grid at this call (a buffer's offset): indices built on them and
      // on the thread id can be proven thread-exclusive
      // (ExclusiveAccess.cpp), so the adjoint accumulates without atomics.
      // The name records them (`_u<i>`).
      SmallVector<unsigned> uniform;
      if (mode == DerivativeMode::Reverse)
        for (unsigned i : uniformOperands(request, args))
          if (indexesMemory(callee.getArgument(i))) {
            uniform.push_back(i);
            name += "_u" + std::to_string(i);
          }
      SymbolTable symbols(tableOp);
      // Split mode: the augmented forward or the reverse of one split.
      std::optional<StringRef> half;
      if (auto split = request->getAttrOfType<StringAttr>(kSplitAttrName)) {
        if (split.getValue() != "augmented" && split.getValue() != "reverse")
          return request->emitOpError(kSplitAttrName)
                 << " must be \"augmented\" or \"reverse\", got " << split;
        if (mode != DerivativeMode::Reverse || ordered)
          return request->emitOpError(
              "split mode is a reverse-mode request without deterministic "
              "accumulation");
        if (callee.getNumResults())
          return request->emitOpError(
              "cannot be split: split mode differentiates functions returning "
              "nothing (a kernel's body); @")
                 << callee.getName() << " returns values";
        half = split.getValue();
        name = (*half == "augmented" ? "__nabla_aug_" : "__nabla_rev_") + codes;
      }
      derivative = symbols.lookup<func::FuncOp>(name);
      if (!derivative && half) {
        if (failed(ensureSplitPair(callee, symbols, codes, args, rets,
                                   request)))
          return failure();
        derivative = symbols.lookup<func::FuncOp>(name);
      }
      if (!derivative) {
        FailureOr<func::FuncOp> generated =
            generate(callee, symbols, name, mode, args, rets, request, ordered,
                     scratch, /*split=*/false, attributions, uniform);
        if (failed(generated))
          return failure();
        derivative = *generated;
      }
    }
    OpBuilder builder(request);
    SmallVector<Value> operands(request->getOperands());
    if (scratch) {
      operands.push_back(scratch);
      if (Attribute words = derivative->getAttr(kScratchWordsAttrName))
        kernel->setAttr(kScratchWordsAttrName, words);
    }
    auto call =
        func::CallOp::create(builder, request->getLoc(), derivative, operands);
    request->replaceAllUsesWith(call.getResults());
    request->erase();
    return success();
  }

  /// Generates `__nabla_aug_<codes>` and `__nabla_rev_<codes>`, the halves
  /// of split mode, unless they exist.
  LogicalResult ensureSplitPair(func::FuncOp callee, SymbolTable &symbols,
                                const std::string &codes,
                                ArrayRef<Activity> args,
                                ArrayRef<Activity> rets, Operation *request) {
    std::string augmented = "__nabla_aug_" + codes;
    std::string reverse = "__nabla_rev_" + codes;
    if (symbols.lookup(augmented) && symbols.lookup(reverse))
      return success();
    FailureOr<func::FuncOp> combined =
        generate(callee, symbols, "__nabla_split_" + codes,
                 DerivativeMode::Reverse, args, rets, request,
                 /*ordered=*/false, /*scratch=*/Value(), /*split=*/true);
    if (failed(combined))
      return failure();
    LogicalResult halves = splitDerivative(*combined, splitForwardEnd, symbols,
                                           augmented, reverse);
    symbols.erase(*combined);
    if (failed(halves))
      return failure();
    for (StringRef generated : {StringRef(augmented), StringRef(reverse)})
      eraseDeadCode(symbols.lookup<func::FuncOp>(generated));
    return success();
  }

  /// Enzyme's split calls with a caller-allocated tape
  /// (nabla.split_autodiff, nabla.split_tape_bytes): the halves of split
  /// mode with their tape in the caller's memory.
  LogicalResult expandCallerTapeRequest(Operation *request) {
    auto calleeAttr = request->getAttrOfType<FlatSymbolRefAttr>("callee");
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        request, calleeAttr);
    if (!callee || callee.isExternal())
      return request->emitOpError("can only split a func.func with a body; @")
             << calleeAttr.getValue() << " has none";
    if (callee.getNumResults())
      return request->emitOpError(
                 "cannot be split: split mode differentiates functions "
                 "returning nothing; @")
             << callee.getName() << " returns values";
    SmallVector<Activity> args = toActivities(
        request->getAttrOfType<ArrayAttr>("activity"));
    std::string codes = derivativeCodes(callee, args, {});
    Operation *tableOp = SymbolTable::getNearestSymbolTable(callee);
    SymbolTable symbols(tableOp);
    if (failed(ensureSplitPair(callee, symbols, codes, args, {}, request)))
      return failure();
    auto augmented = symbols.lookup<func::FuncOp>("__nabla_aug_" + codes);
    FailureOr<int64_t> words = callerTapeWords(augmented, request);
    if (failed(words))
      return failure();
    OpBuilder builder(request);
    if (auto size = dyn_cast<SplitTapeBytesOp>(request)) {
      Value bytes =
          arith::ConstantIndexOp::create(builder, request->getLoc(), 4 * *words);
      size.replaceAllUsesWith(bytes);
      size.erase();
      return success();
    }
    auto split = cast<SplitAutodiffOp>(request);
    Type element = cast<MemRefType>(split.getTape().getType()).getElementType();
    std::string elementName;
    llvm::raw_string_ostream(elementName) << element;
    bool isAugmented = split.getHalf() == "augmented";
    std::string half = isAugmented ? "__nabla_aug_" : "__nabla_rev_";
    std::string name = half + codes + "_tape_" + elementName;
    auto derivative = symbols.lookup<func::FuncOp>(name);
    if (!derivative) {
      auto source = symbols.lookup<func::FuncOp>(half + codes);
      FailureOr<func::FuncOp> made = lowerToCallerTape(
          source, symbols, name, split.getTape().getType(), request);
      if (failed(made))
        return failure();
      derivative = *made;
    }
    SmallVector<Value> operands(split.getInputs());
    operands.push_back(split.getTape());
    operands.push_back(split.getTapeOffset());
    auto call = func::CallOp::create(builder, request->getLoc(), derivative,
                                     operands);
    request->replaceAllUsesWith(call.getResults());
    request->erase();
    return success();
  }

  FailureOr<func::FuncOp> generate(func::FuncOp callee, SymbolTable &symbols,
                                   StringRef name, DerivativeMode mode,
                                   ArrayRef<Activity> args,
                                   ArrayRef<Activity> rets, Operation *request,
                                   bool ordered, Value scratch,
                                   bool split = false,
                                   ArrayRef<unsigned> attributions = {},
                                   ArrayRef<unsigned> uniform = {}) {
    DerivativeSignature signature = DerivativeSignature::expand(
        mode, callee.getArgumentTypes(), callee.getResultTypes(), args, rets);

    // A private, call-inlined working copy of the callee.
    OpBuilder builder(callee);
    auto work = cast<func::FuncOp>(builder.clone(*callee));
    work.setName((name + "_primal").str());
    symbols.insert(work);
    llvm::scope_exit eraseWork([&] { work.erase(); });
    if (failed(inlineCalls(work, symbols)))
      return failure();
    // scf.execute_region is only a scope: inline its body (a multi-block body
    // becomes unstructured control flow, lifted below).
    if (work->walk([](scf::ExecuteRegionOp) { return WalkResult::interrupt(); })
            .wasInterrupted()) {
      RewritePatternSet patterns(&getContext());
      scf::ExecuteRegionOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
      walkAndApplyPatterns(work, std::move(patterns));
    }
    // Unstructured control flow (cf.br, cf.cond_br, cf.switch, also from
    // inlined multi-block callees) is lifted to scf first.
    if (!work.getBody().hasOneBlock()) {
      OpPassManager lift(func::FuncOp::getOperationName());
      lift.addPass(createLiftControlFlowToSCFPass());
      if (failed(runPipeline(lift, work)) || !work.getBody().hasOneBlock())
        return request->emitOpError("cannot differentiate @")
               << callee.getName()
               << ": its control flow could not be made structured";
    }

    // Floats moved as integer bits (shuffles of `__float_as_int(v)`) become
    // float moves again, so their derivatives are not lost.
    forwardFloatBits(work);

    // Reverse mode: elements loops update in place become loop-carried, so
    // their iterations can be recomputed from the loop state.
    // Counted do-while loops (clang's rotated loops) become scf.for first.
    if (mode == DerivativeMode::Reverse) {
      countWhileLoops(work);
      promoteLoopElements(work);
    }

    SmallVector<Type> operandTypes(signature.getOperandTypes());
    if (scratch)
      operandTypes.push_back(scratch.getType());
    auto funcType = FunctionType::get(&getContext(), operandTypes,
                                      signature.getResultTypes());
    builder.setInsertionPointAfter(callee);
    auto derivative =
        func::FuncOp::create(builder, callee.getLoc(), name, funcType);
    derivative.setPrivate();
    symbols.insert(derivative);
    Block *entry = derivative.addEntryBlock();
    builder.setInsertionPointToStart(entry);

    // Map the callee's arguments to primal/shadow arguments.
    Block &body = work.getBody().front();
    Activities act;
    SmallVector<Value> primalArgs(body.getNumArguments()),
        shadowArgs(body.getNumArguments());
    unsigned next = 0;
    for (auto [i, activity] : llvm::enumerate(args)) {
      primalArgs[i] = entry->getArgument(next++);
      if (hasShadow(activity))
        shadowArgs[i] = entry->getArgument(next++);
      Value arg = body.getArgument(i);
      if (activity == Activity::Const)
        continue;
      if (isa<BaseMemRefType>(arg.getType()))
        act.shadowed.insert(arg);
      else if (isFloatLike(arg.getType()))
        act.varied.insert(arg);
    }
    act.propagate(work);
    if (mode == DerivativeMode::Reverse &&
        failed(checkLastBlockReductions(work, act))) {
      derivative.erase();
      return failure();
    }
    if (failed(checkFloatBits(work, act))) {
      derivative.erase();
      return failure();
    }
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Operation *tableOp = symbols.getOp();
    RuleFinder findRule = [tableOp](StringRef name, DerivativeMode ruleMode,
                                    ArrayRef<Activity> ruleArgs,
                                    ArrayRef<Activity> ruleRets) {
      return findCustomRule(tableOp, name, ruleMode, ruleArgs, ruleRets);
    };

    RecordShadows records(symbols);
    ValueRange seeds = entry->getArguments().drop_front(next);
    LoopReversalOptions loops;
    loops.checkpoints = checkpoints;
    loops.tapeBudget = tapeBudget;
    loops.split = split;
    for (unsigned i = 0; i < callee.getNumArguments(); ++i)
      if (callee.getArgAttr(i, kAttributionArgAttrName) ||
          llvm::is_contained(attributions, i))
        loops.attributions.push_back(i);
    loops.uniformArgs.assign(uniform.begin(), uniform.end());
    splitForwardEnd = nullptr;
    OrderedAccumulation ordering;
    ordering.enabled = ordered;
    if (scratch) {
      ordering.scratch = entry->getArguments().back();
      seeds = seeds.drop_back();
    }
    LogicalResult result =
        mode == DerivativeMode::Forward
            ? emitForwardDerivative(builder, body, ret, act, args, rets,
                                    primalArgs, shadowArgs, findRule, records)
            : emitReverseDerivative(builder, body, ret, act, args, rets,
                                    primalArgs, shadowArgs, seeds, remarks,
                                    ordering, loops, findRule, records,
                                    split ? &splitForwardEnd : nullptr);
    if (failed(result)) {
      derivative.erase();
      return failure();
    }
    if (ordering.scratch)
      derivative->setAttr(kScratchWordsAttrName,
                          builder.getI64IntegerAttr(ordering.wordsPerBlock));
    // Split mode cuts the function first (SplitDerivative.h).
    if (!split) {
      eraseDeadCode(derivative);
      // Attributions whose values only feed their own writes (a reduction
      // tree whose adjoint needs no primal values) are computed for nothing.
      SmallVector<Value> attributions;
      for (unsigned i : loops.attributions)
        attributions.push_back(primalArgs[i]);
      if (eraseUnreadAttributions(attributions)) {
        eraseDeadCode(derivative);
        if (mergeAdjacentBarriers(derivative))
          eraseDeadCode(derivative);
      }
    }
    return derivative;
  }

  /// The forward sweep's last op in the split-mode function `generate` made.
  Operation *splitForwardEnd = nullptr;
};

} // namespace
