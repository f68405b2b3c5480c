//===- ReverseEmitter.h - The reverse-mode emitter's state ------*- C++ -*-===//
//
// VJPEmitter, shared by the files of reverse mode, one concept each:
// ForwardSweep.cpp (the primal again, caching what the reverse sweep needs),
// LoopReversal.cpp (loops: tapes, checkpointing, recomputation),
// ReverseSweep.cpp (adjoints op by op), AdjointAccumulation.cpp (GPU-correct
// accumulation into shadows) and OrderedAccumulation.cpp (deterministic
// ordering). ReverseMode.cpp drives them.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_REVERSEEMITTER_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_REVERSEEMITTER_H

#include "ActivityAnalysis.h"
#include "DerivativeRules.h"
#include "GPUDerivatives.h"
#include "LoopStrategies.h"
#include "RecordShadows.h"
#include "ReverseMode.h"

#include "nabla/Dialect/Nabla/IR/NablaInterfaces.h"

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <functional>

namespace nabla {
using namespace mlir;

/// `v` without integer extensions and index casts (i32 arithmetic on thread
/// ids, as clang's code has it): what an index is a function of.
Value stripIntegerCasts(Value v);

/// Private slots (loop tapes, checkpoints): `count` slots for values of
/// `type` in a per-thread array, or null for types a slot cannot hold. Index
/// values are kept as i64 (index has no storage size on every target) and
/// 64-bit values as two 32-bit words: lavapipe's LLVM 15 back end cannot
/// select some 64-bit stores into private arrays (`Cannot select: store ...
/// trunc to f64`), and GPU registers are 32-bit anyway.
Value createPrivateSlots(OpBuilder &b, Location loc, Type type, int64_t count);
void storePrivateSlot(OpBuilder &b, Location loc, Value value, Value slots,
                      Value index);
Value loadPrivateSlot(OpBuilder &b, Location loc, Value slots, Value index,
                      Type type);
/// The bytes one private slot of `type` takes (0 if none can hold it).
int64_t privateSlotBytes(Type type);
/// The bytes one tape slot of `type` takes: private, or in the global tape
/// (whole 32-bit words).
int64_t tapeSlotBytes(Type type, bool global);
/// `count` slots for values of `type` in the kernel's global tape
/// (nabla.tape), or null for types a slot cannot hold; loaded and stored
/// with loadPrivateSlot/storePrivateSlot.
Value createGlobalSlots(OpBuilder &b, Location loc, Type type, Value count);
/// The indices of element `linear` (row-major) of a static memref of `type`.
SmallVector<Value> elementIndices(OpBuilder &b, Location loc, MemRefType type,
                                  Value linear);

/// Adjoint contributions gathered in one region of the reverse sweep.
struct AdjointScope {
  DenseMap<Value, Value> adjoints; // src value → accumulated adjoint

  void add(OpBuilder &b, Location loc, Value src, Value adjoint) {
    if (!adjoint)
      return;
    Value &slot = adjoints[src];
    slot = addDerivatives(b, loc, slot, adjoint);
  }
  Value get(Value src) const { return adjoints.lookup(src); }
};

class VJPEmitter final : public ReverseEmitter {
public:
  VJPEmitter(OpBuilder &builder, const Activities &act, bool remarks,
             RuleFinder findRule, RecordShadows &records)
      : b(builder), act(act), remarks(remarks), findRule(std::move(findRule)),
        records(records) {}

  //--- ReverseEmitter (the API of ReverseModeOpInterface rules) -----------//

  OpBuilder &builder() override { return b; }
  bool isVaried(Value value) const override { return act.isVaried(value); }
  bool isShadowed(Value value) const override { return act.isShadowed(value); }
  bool isActive(Operation *op) const override {
    return nabla::regionTouchesActive(op, act);
  }
  Value primal(Value value) override { return fwd.lookup(value); }
  void setPrimal(Value value, Value primal) override { defined(value, primal); }
  /// Skips writes no read observes (unneededWrites) and, while recomputing
  /// a checkpointed loop, writes to memory from outside it.
  Operation *clonePrimal(Operation *op) override;
  Value shadow(Value value) override { return shadowOf(value); }
  void setShadow(Value value, Value shadow) override {
    shadows[value] = shadow;
  }
  /// The forward sweep's or the reverse sweep's emission of `block`.
  LogicalResult emitBlock(Block &block) override {
    return scope ? reverseBlock(block, *scope) : forwardBlock(block);
  }
  LogicalResult unsupported(Operation *op) override {
    return nabla::unsupported(op, "reverse");
  }
  LogicalResult checkUnshadowedWrite(Operation *op, Value stored) override {
    return nabla::checkUnshadowedWrite(op, stored, act);
  }
  Value adjoint(Value value) override { return scope->get(value); }
  void addAdjoint(Value value, Value adjoint) override {
    if (adjoint)
      scope->add(b, adjoint.getLoc(), value, adjoint);
  }
  Value readShadow(Location loc, Value memref, Value shadow,
                   ValueRange indices) override;
  bool isDeterministic() const override { return ordering->enabled; }

  /// The scope of the reverse sweep's current block (null in the forward
  /// sweep).
  AdjointScope *scope = nullptr;

  /// src value → forward value available at function scope.
  IRMapping fwd;
  DenseMap<Value, Value> shadows; // src memref → shadow (function scope)

  //--- Forward sweep -------------------------------------------------------//

  /// Views of shadowed buffers taken inside a region, by result.
  DenseMap<Value, Operation *> branchViews;

  /// The shadow of src memref `memref` at the current point: a view taken
  /// inside a region is taken again from its source's shadow.
  Value shadowOf(Value memref);

  /// Src values defined in the innermost branch being cloned (to cache).
  SmallVector<SmallVector<Value>> branchScopes;

  void defined(Value src, Value forward);

  /// Writes to `dupnoneed` argument buffers (stores, atomic adds whose old
  /// value is unused, through views) that no read of the buffer can observe:
  /// every read comes before them, outside any loop holding both. The
  /// primal's final value of such a buffer is not wanted, so the forward
  /// sweep skips them (the reverse sweep needs only their shadows).
  DenseSet<Operation *> unneededWrites;

  void collectUnneededBuffers(Block &body, ArrayRef<Activity> args);

  LogicalResult forwardBlock(Block &src);

  LogicalResult forwardOp(Operation *op);

  /// Clones an scf.if and yields every value defined in its branches, so
  /// that the reverse sweep can use them after the if.
  LogicalResult forwardIf(scf::IfOp op);

  /// True if `op` or anything nested in it touches differentiated data.
  bool regionTouchesActive(Operation *op) { return isActive(op); }

  //--- Loops (LoopReversal.cpp) -------------------------------------------//

  /// Bases (through views) of the buffers the differentiated function may
  /// write, and the ops writing each.
  DenseSet<Value> writtenBuffers;
  DenseMap<Value, SmallVector<Operation *>> writersOf;

  void collectWrittenBuffers(Block &body);

  LoopReversalOptions loopOptions;
  /// The src function's arguments that are kernel attributions
  /// (loopOptions.attributions).
  llvm::DenseSet<Value> attributionArgs;
  /// Integer arguments of the body uniform across the grid at every call
  /// (LoopReversalOptions::uniformArgs).
  llvm::DenseSet<Value> uniformArgs;

  /// How each loop is reversed (LoopStrategies.h).
  DenseMap<Operation *, std::unique_ptr<LoopStrategy>> loopPlans;

  /// At most how many iterations `op` runs, proven from the ranges of its
  /// bounds (upstream's integer range analysis of the primal function:
  /// `for (i = 0; i < min(n, 32); ++i)` runs at most 32), or none.
  std::optional<int64_t> tripCountBound(scf::ForOp op);
  /// The range of the integer `v` where `at` runs: the analysis's,
  /// narrowed by recomputing it from its operands' narrowed ranges (to
  /// `depth` definitions up) and by the scf.if tests `at` is under that
  /// compare it with a constant. None for a non-integer.
  std::optional<ConstantIntRanges> refinedRange(Value v, Operation *at,
                                                unsigned depth = 8);
  /// The range analysis behind tripCountBound, run once per function.
  std::unique_ptr<DataFlowSolver> ranges;
  Operation *rangesRoot = nullptr;

  /// Chooses (once) how `loop` (scf.for or scf.while) is reversed, and
  /// remarks on it (remarks=true); a loop that no strategy can reverse is a
  /// located error (null).
  std::unique_ptr<LoopStrategy> planLoop(Operation *loop);

  /// The first op inside `loop` whose recomputation from the loop state
  /// would differ from the primal (a read of memory the loop or later code
  /// overwrites, an atomic whose result is used, a call passing memory), or
  /// null when the loop can be checkpointed.
  Operation *findCheckpointObstacle(Operation *loop,
                                    const llvm::DenseSet<Value> &snapshotted =
                                        {});

  /// True if a loop nested in `loop` reads memory it cannot recompute and
  /// has no static bound (or holds a while): while `loop`'s checkpoints
  /// are recomputed it could be neither snapshotted nor taped, so `loop`
  /// must keep its reads in a global tape instead.
  bool holdsUntapeableLoop(Operation *loop);

  /// The buffers a top-level `loop` overwrites and reads that its
  /// checkpoints can hold (static workgroup or private memrefs of identity
  /// layout defined outside it, copied element by element in row-major
  /// order; workgroup ones only in a loop with a barrier, whose trip
  /// count is then uniform).
  llvm::SmallVector<Value> findSnapshotMemories(Operation *loop);

  /// Copies the snapshotted buffers into (`save`) or out of their copy
  /// `slot` of `strategy`'s slots, each thread its share of a workgroup
  /// buffer between barriers.
  void copyMemorySnapshot(const CheckpointStrategy &strategy, Value slot,
                          bool save, Location loc);

  /// Makes the slots of `strategy`'s buffers and saves snapshot 0 (the
  /// forward sweep, before the loop runs).
  void beginMemorySnapshots(CheckpointStrategy &strategy, Location loc);

  /// Every-step snapshots for top-level `op` with `memories` (some in
  /// workgroup memory): slots in the global tape made at the entry; null
  /// when the trip count is not computable there or a state value fits no
  /// slot.
  std::unique_ptr<CheckpointStrategy>
  planStepSnapshots(scf::ForOp op, ArrayRef<Value> memories);
  /// Copies each thread's share of `strategy`'s buffers into (`save`) or
  /// out of their every-step slots of `step`, between barriers.
  void copyStepSnapshot(const CheckpointStrategy &strategy, Value step,
                        bool save, Location loc);
  /// The forward sweep of an every-step snapshotted scf.for: the primal
  /// loop, each iteration first saving its state and buffers.
  LogicalResult forwardStepSnapshottedFor(scf::ForOp op,
                                          const CheckpointStrategy &strategy);

  /// True if src `buffer` (a view source) holds, for every read inside
  /// `loop`, the value the primal read, also when the reverse sweep reads
  /// it again: no write to it inside the loop, after it, or in an enclosing
  /// loop.
  bool isStableIn(Value buffer, Operation *loop);

  /// While set, the forward code being emitted recomputes iterations of this
  /// src loop: writes to memory defined outside it are skipped (the primal
  /// already made them) and barriers are not repeated.
  Operation *recomputeRoot = nullptr;
  /// The src buffers the loop being reversed snapshots: recomputation
  /// writes them (and keeps its barriers) instead of skipping the writes.
  llvm::DenseSet<Value> snapshotMemories;

  /// True if `op` is skipped while recomputing (see recomputeRoot).
  bool isSkippedWrite(Operation *op);

  /// Clones `op` with `mapping`, recursively skipping what recomputation
  /// skips; returns null when `op` itself is skipped.
  Operation *cloneRecomputed(Operation *op, IRMapping &mapping);

  /// The values a taped loop stores per iteration and the ops its reverse
  /// recomputes instead.
  void collectTaped(scf::ForOp op, SmallVector<Value> &taped,
                    SmallVector<Operation *> &recomputed);

  /// True if the reverse loop can repeat `op` from the values it has (taped
  /// or loop-invariant): a pure op, or a load of a function argument buffer
  /// the function never writes, using no memref defined inside a region.
  bool isRecomputable(Operation *op);
  /// An atomic's old value that neither the primal nor the reverse reads.
  bool isUnneededAtomicResult(Value result);

  /// The tape slot of the taped loops being emitted, outermost first, with
  /// the number of slots so far: forward sweep and reverse sweep.
  SmallVector<std::pair<Value, SlotCount>> forwardIterations,
      reverseIterations;

  /// `iteration` of a loop with `count` iterations, linearized after the
  /// enclosing loops' slot.
  Value linearize(Location loc, ArrayRef<std::pair<Value, SlotCount>> enclosing,
                  Value iteration, SlotCount count);
  /// `count` as an index value at the insertion point.
  Value materializeCount(Location loc, SlotCount count);
  /// The derivative function's entry block, where tapes are allocated.
  Block *entry = nullptr;

  /// `value` (a forward value) recomputed at the start of `entry` from the
  /// function's arguments and constants through pure ops and reads of
  /// buffers the primal never writes, or null when it depends on anything
  /// else (other loads, a region's value). EntryHoisting.cpp.
  Value hoistToEntry(Value value);
  /// `load` (of an integer from a buffer argument nothing writes, at an
  /// index known at entry) read again at `entry` where the primal reads it
  /// (pathCondition), 0 elsewhere; null otherwise.
  Value hoistReadOnlyLoad(memref::LoadOp load);
  /// At `entry`: whether a thread executes `op`, an op of the primal (the
  /// conditions of the scf.if ops around it, and the scf.for ops around it
  /// running at all), or null when another region op (a while loop) decides.
  Value pathCondition(Operation *op);
  /// Puts `b` at the end of what was computed at the start of `entry` (the
  /// hoisted values, global tape sizes).
  void setInsertionPointAtEntry();
  DenseMap<Value, Value> hoisted;
  Operation *hoistAnchor = nullptr;
  /// `value` (a primal value) recomputed at `entry` through pure ops, with
  /// the values `at` maps (the induction variables and counters of loops
  /// around it) replaced; null when it depends on anything else.
  Value hoistAt(Value value, const IRMapping &at);
  /// The largest trip count of `op` (a primal loop whose bounds depend on
  /// the positions of at most three loops around it: a triangular nest's
  /// `for (j = i; j < n; ++j)`) over their iterations, at `entry`: the
  /// maximum over the corners of the box of their ranges (exact when the
  /// count is monotone in each position). Null when the bounds depend on
  /// anything else than pure ops of those positions and entry values.
  Value maxTripCountAtEntry(scf::ForOp op);

  /// A global-memory tape for `op` (no static bound), its trip count (or
  /// its largest over the enclosing loops' iterations) computed at `entry`;
  /// null when the bounds are not computable there.
  std::unique_ptr<TapeStrategy> planGlobalTape(scf::ForOp op);
  /// A global-memory tape for `op` whose trip count is known only when it
  /// starts: nabla.tape_capacity slots per execution, a longer run reported
  /// to the launcher; null while recomputing a checkpointed loop.
  std::unique_ptr<TapeStrategy> planGrowingTape(scf::ForOp op);
  /// True if `op`'s bounds can be computed at the derivative's entry (what
  /// a global tape's size needs); computes them there.
  bool boundsKnownAtEntry(scf::ForOp op);
  /// planLoop in split mode: preaccumulated or taped in global memory.
  std::unique_ptr<LoopStrategy> planSplitLoop(Operation *loop);

  /// max(0, ceildiv(ub - lb, step)) for a positive step.
  Value emitTripCount(Location loc, Value lb, Value ub, Value step);

  /// The forward sweep of an scf.for: per its strategy.
  LogicalResult forwardFor(scf::ForOp op);

  /// The forward sweep of a checkpointed scf.for: the primal loop as is
  /// (without its writes to memory from outside an enclosing loop being
  /// recomputed).
  LogicalResult forwardCheckpointedFor(scf::ForOp op);

  /// Clones an scf.for and records, per iteration, every value its body
  /// defines into per-thread tapes for the reverse sweep.
  LogicalResult forwardTapedFor(scf::ForOp op, TapeStrategy &tape);

  /// The reverse of an scf.for, per its strategy.
  LogicalResult reverseFor(scf::ForOp op, AdjointScope &outer);

  /// The reverse of a taped scf.for: iterations in reverse order, each
  /// reloading its values from the tapes.
  LogicalResult reverseTapedFor(scf::ForOp op, const TapeStrategy &tape,
                                AdjointScope &outer);

  /// The reverse of a checkpointed scf.for.
  LogicalResult reverseCheckpointedFor(scf::ForOp op,
                                       const CheckpointStrategy &strategy,
                                       AdjointScope &outer);

  /// True if `op`'s Jacobian can be preaccumulated (filling the plan's state
  /// and columns): outside every other loop, a body of ops without regions
  /// whose differentiated results are scalars of one float type computed by
  /// memory-free ops with rules, no access to differentiated memory, and a
  /// Jacobian of at most kMaxPreaccumulated entries.
  bool canPreaccumulate(scf::ForOp op, PreaccumulationStrategy &plan);

  /// The forward loop carrying its state's tangents along every column;
  /// stores the final Jacobian into slots for the reverse sweep.
  LogicalResult forwardPreaccumulatedFor(scf::ForOp op,
                                         PreaccumulationStrategy &plan);

  /// The reverse of a preaccumulated scf.for: the transposed Jacobian times
  /// the results' adjoints, added to the inits' and the inputs' adjoints.
  LogicalResult reversePreaccumulatedFor(scf::ForOp op,
                                         const PreaccumulationStrategy &plan,
                                         AdjointScope &outer);

  /// Keys standing for the iteration count of each forward while: the count
  /// is not a value of the callee, but mapping it like one lets enclosing
  /// scf.ifs cache it for the reverse sweep.
  Block countKeys;
  DenseMap<Operation *, Value> whileCounts; // src while → count key

  /// Emits `block`'s ops with `mapping` (block arguments already mapped) and
  /// returns its terminator's mapped operands (a condition's forwarded
  /// values).
  SmallVector<Value> cloneBody(Block &block, IRMapping &mapping);

  /// The forward while again, counting its iterations.
  LogicalResult forwardWhile(scf::WhileOp op);
  /// At `b`: an scf.while with `op`'s mapped inits and one more, a step
  /// counter from 0, and its two empty blocks (arguments `op`'s, then the
  /// counter), for the forward sweeps of `op` to fill.
  std::tuple<scf::WhileOp, Block *, Block *>
  createCountingWhile(scf::WhileOp op);

  /// The forward while storing each step's values into a growing tape
  /// (LoopWhileTape.cpp).
  LogicalResult forwardTapedWhile(scf::WhileOp op, WhileTapeStrategy &tape);
  /// The reverse of a while taped so: its steps backwards, reloaded.
  LogicalResult reverseTapedWhile(scf::WhileOp op,
                                  const WhileTapeStrategy &tape,
                                  AdjointScope &outer);
  /// The strategy for `op` (a while reading memory overwritten, outside
  /// every other loop); null where it cannot be taped so.
  std::unique_ptr<WhileTapeStrategy> planWhileTape(scf::WhileOp op);
  /// The first region op inside `loop` on an active path that a taped loop
  /// cannot hold (other than scf.if, scf.for, scf.while and collectives).
  Operation *findUntapeableRegion(Operation *loop);
  /// collectTaped for the ops of `body` (not its arguments).
  void collectTapedOps(Block &body, SmallVector<Value> &taped,
                       SmallVector<Operation *> &recomputed);

  /// The reverse of an scf.while run N times: checkpointed over N + 1 steps,
  /// the last being the final execution of the before region.
  LogicalResult reverseWhile(scf::WhileOp op, AdjointScope &outer);

  /// A loop seen as `count` steps over a state (scf.for: the iter_args;
  /// scf.while: the before-arguments), for checkpointing.
  struct SteppedLoop {
    Operation *op;
    ValueRange srcInits;           // the initial state, src values
    SmallVector<Value> inits;      // the initial state, at the reverse point
    Value count;                   // the number of steps
    SmallVector<unsigned> carried; // state entries with adjoints
    /// Emits primal step `t` from `state` (writes skipped), returns the
    /// next state.
    std::function<SmallVector<Value>(Value t, ValueRange state)> advance;
    /// Emits the forward and reverse sweep of step `t` from `state`, with
    /// the adjoints of the carried entries of the next state; returns those
    /// of `state`. Contributions to values from outside go into `scope`.
    std::function<FailureOr<SmallVector<Value>>(
        Value t, ValueRange state, ValueRange adjoints, AdjointScope &scope)>
        reverseStep;
  };

  /// Binomial checkpointing (revolve) of `loop` with `snapshots` state
  /// snapshots: `adjoints` are those of the carried entries of the final
  /// state; adds those of the initial state (to its varied src values) and
  /// the contributions to the src values `outside` into `outer`.
  LogicalResult reverseCheckpointed(SteppedLoop &loop,
                                    const CheckpointStrategy &strategy,
                                    ValueRange adjoints,
                                    ArrayRef<Value> outside,
                                    AdjointScope &outer);

  /// reverseCheckpointed for a loop whose steps start from what they need
  /// alone: the step's index (CheckpointStrategy::restartable, no state) or
  /// the step's own snapshot (everyStep). The steps in reverse order, each
  /// restored and reversed; nothing recomputed from earlier steps.
  LogicalResult reverseStepByStep(SteppedLoop &loop,
                                  const CheckpointStrategy &strategy,
                                  ValueRange adjoints, ArrayRef<Value> outside,
                                  AdjointScope &outer);

  /// Emits the primal steps `from` up to `to` of `loop` from `state`;
  /// returns the state reached.
  SmallVector<Value> advanceSteps(SteppedLoop &loop, Value from, Value to,
                                  ValueRange state);

  /// Runs `emit` as a local sweep: the forward and reverse code of one step
  /// of checkpointed `loop`, with writes skipped and no enclosing caches.
  LogicalResult inLocalSweep(Operation *loop,
                             llvm::function_ref<LogicalResult()> emit);


  //--- Reverse sweep -------------------------------------------------------//

  LogicalResult reverseBlock(Block &src, AdjointScope &scope);

  //--- Ordered (deterministic) accumulation --------------------------------//

  /// An element many threads accumulate into: each thread sums its
  /// contributions in a private accumulator; the block's accumulators are
  /// reduced in a fixed order (gpu.all_reduce) at each replayed barrier
  /// (workgroup memory) or at the end (kernel parameters, then per-block
  /// partials in the scratch, added up in block order by the last block).
  struct OrderedSite {
    Value memref;               // src memref, a function argument
    SmallVector<Value> indices; // src indices, uniform
    Value shadow;               // function-level shadow
    Value acc;                  // memref<1xT> per-thread accumulator
    bool workgroup;
    int64_t word; // first scratch word (kernel parameters)
  };
  OrderedAccumulation *ordering = nullptr;
  Block *primalBody = nullptr;
  SmallVector<OrderedSite> orderedSites;
  SmallVector<Operation *> replayedBarriers;
  /// Shadow reads (reverse of stores and atomic adds) with their src memref:
  /// the reading thread's own pending contributions to the element join them.
  SmallVector<std::pair<memref::LoadOp, Value>> shadowReads;

  /// True if src `v` has one value across the grid (or, `perBlock`, across
  /// the block) and can be recomputed anywhere: constants, launch sizes, a
  /// kernel's scalar parameters, block ids (`perBlock`) and arith of those.
  bool isUniform(Value v, bool perBlock);

  /// Clones the computation of the uniform src value `v` at the current
  /// point.
  Value rematerialize(Value v, IRMapping &map);

  SmallVector<Value> rematerialize(ArrayRef<Value> values);

  static int64_t wordsOf(Type type);

  LogicalResult accumulateOrdered(Operation *src, Value value);

  Value blockSum(Location loc, Value v);

  /// Adds `v` to `site`'s shadow element on thread 0 of the block.
  void addOnFirstThread(Location loc, const OrderedSite &site, Value tid,
                        Value v);

  /// The block's accumulators of workgroup elements, reduced in order and
  /// added by thread 0 (before a barrier publishes them).
  void flushWorkgroupSites(Location loc);

  SmallVector<Value> toWords(Location loc, Value v);

  Value fromWords(Location loc, ArrayRef<Value> words, Type type);

  /// Kernel parameters' elements: block sums stored as the block's partials,
  /// then the last block to arrive (counter in scratch word 0, incremented
  /// with acquire-release semantics after the stores) adds the partials up in
  /// block order and resets the counter.
  void flushGridSites(Location loc);

  /// Completes ordered accumulation at the end of the reverse sweep: shadow
  /// reads take the reading thread's pending contributions to their element,
  /// each replayed barrier and the end flush the workgroup accumulators, and
  /// the end the grid ones.
  void finishOrdered(Location loc);

  /// Accumulates `value` into `shadowMemref[indices]`: a plain
  /// load-add-store when the access is thread-exclusive (a private shadow,
  /// the thread id into a workgroup buffer, or the global id into an
  /// argument), an atomic add otherwise. Thread and global ids along x are
  /// unique only in 1-D blocks (and grids): that is checked when the kernel
  /// runs, with the atomic as the fallback.
  LogicalResult accumulate(Operation *src, Value shadowMemref,
                           ValueRange indices, Value value) override;

  /// True if the function also reads the buffer `src` loads from at other
  /// indices: threads can then meet at one element through different reads
  /// (x[i] of thread i, x[i - 1] of thread i + 1), so the thread-indexed read's
  /// accumulation is not exclusive. Broadcast reads the ordered accumulation
  /// takes publish only after a barrier and do not count.
  bool readElsewhere(Operation *src);
  bool loadsCollected = false;
  DenseMap<Value, SmallVector<memref::LoadOp>> loadsByBuffer;

  /// True if the function makes an `AccessOp` (a memref.load or a
  /// memref.store) at the element `access` (a load or a store) makes: same
  /// memref, same index values.
  template <typename AccessOp>
  static bool accessedAtSamePlace(Operation *access);

  /// True if a plain store to the element `load` reads (same memref, same
  /// index values) sits in `load`'s block with no barrier between them: in a
  /// race-free primal no other thread touches that element between the
  /// barriers around them, so none accumulates into its shadow between the
  /// replayed ones either (a tree level's `tile[t] = tile[t] + tile[t + s]`).
  static bool storesInSameInterval(Operation *load);

  //--- Thread-exclusive accesses (ExclusiveAccess.cpp) ---------------------//

  /// An access no two threads make to one element, provided the listed
  /// launch dimensions have size one (checked when the kernel runs).
  struct Exclusivity {
    SmallVector<gpu::Dimension> unitBlockDims, unitGridDims;
    bool isStatic() const {
      return unitBlockDims.empty() && unitGridDims.empty();
    }
  };

  /// Proves that the src `access` at src `indices` of `memref` reaches an
  /// element no other thread reaches through it: its indices and the
  /// conditions of the `scf.if`s around it identify the thread along every
  /// dimension but those of the result. Failure when nothing identifies it.
  FailureOr<Exclusivity> proveExclusive(Operation *access, Value memref,
                                        ValueRange indices);

  /// The run-time condition under which `proof` holds (true when static).
  Value emitExclusivityCheck(Location loc, const Exclusivity &proof);

  /// True if the elements at src indices `a` and `b`, each of one thread,
  /// never meet across threads: `base + ca` and `base + cb` with one base
  /// whose thread-varying part is a multiple of a stride S > |ca - cb| > 0
  /// (a packed access's lanes: `8 * gid + k`).
  bool apartAcrossThreads(ValueRange a, ValueRange b, bool perBlock);

  /// The adjoint a src store leaves at `shadowMemref[indices]`, taken and
  /// zeroed: exactly one of the threads that may store to the element gets
  /// it (plain read-and-zero where the store is proven thread-exclusive or
  /// the shadow is private, an atomic exchange with zero otherwise).
  FailureOr<Value> takeStoredAdjoint(Operation *store, Value shadowMemref,
                                     ValueRange indices) override;

  SmallVector<Value> mapped(ValueRange values);

  /// The adjoint of `op` with the adjoints of `scope`.
  LogicalResult reverseOp(Operation *op, AdjointScope &scope);
  /// The adjoint of `op` in the current scope.
  LogicalResult reverseOpInScope(Operation *op);

  //--- Primal float min/max atomics ---------------------------------------//

  /// r = atomic max(v, M[i]): the location's final value F came from the
  /// one thread (and iteration) whose atomic stored it, the one that saw a
  /// smaller old value and had v = F; that atomic takes the location's
  /// cotangent and zeroes it. Ties between equal values thus go to the
  /// first atomic in the order the hardware performed them; when no atomic
  /// raised the initial value, the cotangent stays with it.
  LogicalResult reverseAtomicMinMax(memref::AtomicRMWOp atomic,
                                    Value shadowMemref, AdjointScope &scope);

  /// A call with a custom reverse rule: the forward sweep ran the primal
  /// call; here the rule gets the primal arguments, the shadows and the
  /// results' adjoints as seeds, and returns the active arguments' gradients.
  LogicalResult reverseCall(func::CallOp call, AdjointScope &scope);

  /// Varied src values defined outside `op` and used inside it.
  SmallVector<Value> usedFromOutside(Operation *op);

  LogicalResult reverseIf(scf::IfOp op, AdjointScope &outer);

  RecordShadows &recordShadows() { return records; }

private:
  OpBuilder &b;
  const Activities &act;
  bool remarks;
  RuleFinder findRule;
  RecordShadows &records;
};

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_REVERSEEMITTER_H
