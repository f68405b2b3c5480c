//===- LoopStrategies.h - How one loop is reversed -------------*- C++ -*-===//
//
// Reverse mode reverses each loop on an active path with one strategy,
// chosen once by VJPEmitter::planLoop (LoopReversal.cpp). Each strategy is a
// class that owns what it needs between the forward and the reverse sweep;
// the emission itself is in the strategy's file:
//
//  - TapeStrategy (LoopTape.cpp): the values each iteration defines go to
//    per-thread slots; needs a static bound on the trip count.
//  - CheckpointStrategy (LoopCheckpointing.cpp): binomial checkpointing of
//    the loop state; iterations are recomputed from snapshots (or, for a
//    loop overwriting workgroup buffers, every step's snapshot in the
//    global-memory tape).
//  - PreaccumulationStrategy (LoopPreaccumulation.cpp): the forward loop
//    carries the Jacobian of its state; the reverse applies its transpose.
//  - ReductionTreeStrategy (ReductionTree.cpp): a workgroup-memory sum tree
//    whose root alone is read after it, its adjoint a broadcast; or a max/min
//    tree, each position's adjoint going to its winner.
//  - WhileTapeStrategy (LoopWhileTape.cpp): an scf.while whose trip count is
//    known only as it runs, its values in a growing global-memory tape.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_LOOPSTRATEGIES_H
#define NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_LOOPSTRATEGIES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Value.h"
#include "llvm/Support/Casting.h"

namespace nabla {

class VJPEmitter;
struct AdjointScope;

/// A number of tape slots: `fixed`, times `dynamic` when set (an index value
/// at the derivative function's entry: a trip count known at run time).
struct SlotCount {
  int64_t fixed = 1;
  mlir::Value dynamic;

  bool isDynamic() const { return static_cast<bool>(dynamic); }
};

class LoopStrategy {
public:
  enum class Kind {
    Tape,
    Checkpoint,
    Preaccumulation,
    ReductionTree,
    WhileTape
  };

  virtual ~LoopStrategy();
  Kind getKind() const { return kind; }

  /// The forward sweep of `op` (an scf.for).
  virtual mlir::LogicalResult forward(VJPEmitter &emitter,
                                      mlir::scf::ForOp op) = 0;
  /// The reverse sweep of `op`: the adjoints of its results in `outer` go
  /// to its inits and to the values from outside it uses.
  virtual mlir::LogicalResult reverse(VJPEmitter &emitter, mlir::scf::ForOp op,
                                      AdjointScope &outer) = 0;
  /// The remark reporting the choice with its private bytes per thread.
  virtual void remark(mlir::Operation *loop, int64_t bytes) const = 0;

protected:
  explicit LoopStrategy(Kind kind) : kind(kind) {}

private:
  Kind kind;
};

/// Every value the body defines (the induction variable, iter_args, results
/// of body ops) stored per iteration in a per-thread tape: private memory
/// for a static bound, else (a trip count known at run time, or an
/// enclosing loop's) slots of the kernel's global-memory tape (nabla.tape).
class TapeStrategy final : public LoopStrategy {
public:
  TapeStrategy() : LoopStrategy(Kind::Tape) {}
  static bool classof(const LoopStrategy *s) {
    return s->getKind() == Kind::Tape;
  }

  mlir::LogicalResult forward(VJPEmitter &emitter,
                              mlir::scf::ForOp op) override;
  mlir::LogicalResult reverse(VJPEmitter &emitter, mlir::scf::ForOp op,
                              AdjointScope &outer) override;
  void remark(mlir::Operation *loop, int64_t bytes) const override;

  /// Slots per iteration of the enclosing loops: the static trip count or
  /// the hint.
  int64_t bound = -1;
  /// `bound` is `nabla.max_trip_count` (checked when the kernel runs).
  bool hinted = false;
  /// `bound` is proven from the ranges of the loop's bounds (for the
  /// remark).
  bool derived = false;
  /// A trip count known at run time (no `bound`): the loop's, computed at
  /// the derivative function's entry.
  mlir::Value dynamicBound;
  /// `dynamicBound` is the largest trip count over the iterations of the
  /// loops around it (its bounds depend on their induction variables).
  bool largest = false;
  /// `dynamicBound` is nabla.tape_capacity: the trip count is known only
  /// when the loop starts (bounds read from memory the kernel writes); a
  /// count past it is reported (nabla.tape_overflow) and the launch runs
  /// again.
  bool growing = false;
  /// The slots live in global memory (nabla.tape): a dynamic bound here or
  /// in an enclosing taped loop.
  bool global = false;
  /// Chosen by split mode (which recomputes nothing), for the remark.
  bool split = false;

  /// The slots per execution the forward sweep checks the trip count
  /// against (the hint, or the largest trip count), else null.
  mlir::Value checkedCapacity(mlir::OpBuilder &b, mlir::Location loc) const;
  /// The slots one execution of the loop takes.
  SlotCount slotsPerIteration() const {
    return dynamicBound ? SlotCount{1, dynamicBound} : SlotCount{bound, {}};
  }
  /// The values stored per iteration, and the body ops the reverse loop
  /// repeats instead (pure ops, loads of buffers the function never
  /// writes), in order (collectTaped).
  llvm::SmallVector<mlir::Value> taped;
  llvm::SmallVector<mlir::Operation *> recomputed;
  /// Src value → its tape (filled by the forward sweep).
  llvm::SmallVector<std::pair<mlir::Value, mlir::Value>> tapes;
};

/// Binomial checkpointing (revolve) of the loop state with `snapshots`
/// snapshots; iterations are recomputed with writes to memory from outside
/// the loop skipped (the reads it recomputes are checked to be stable).
/// Also the strategy of every scf.while. A top-level loop that overwrites
/// and reads small buffers of its own (shared-memory tiles, a block
/// reduction's partial sums, a thread's local array) keeps them in its
/// snapshots too: the buffers are restored with the state, and the
/// recomputation writes them.
class CheckpointStrategy final : public LoopStrategy {
public:
  explicit CheckpointStrategy(int64_t snapshots)
      : LoopStrategy(Kind::Checkpoint), snapshots(snapshots) {}
  static bool classof(const LoopStrategy *s) {
    return s->getKind() == Kind::Checkpoint;
  }

  mlir::LogicalResult forward(VJPEmitter &emitter,
                              mlir::scf::ForOp op) override;
  mlir::LogicalResult reverse(VJPEmitter &emitter, mlir::scf::ForOp op,
                              AdjointScope &outer) override;
  void remark(mlir::Operation *loop, int64_t bytes) const override;

  int64_t snapshots;
  /// An scf.for with no iter_args and no snapshotted buffers: its state is
  /// the step's index, so each step restarts from it (a grid-stride loop);
  /// no snapshots are taken.
  bool restartable = false;
  /// The snapshotted buffers (src view sources: static rank-1 workgroup or
  /// private memrefs defined outside the loop) and, once the forward sweep
  /// made them, their slots: `snapshots` copies of each, per thread (a
  /// workgroup buffer's copy holds the elements the thread saves, strided
  /// by the block's thread count).
  llvm::SmallVector<mlir::Value> memories;
  llvm::SmallVector<mlir::Value> memorySlots;

  /// Snapshots of every step instead (a top-level scf.for overwriting
  /// workgroup buffers, its trip count known at the derivative's entry):
  /// the forward sweep saves each step's state and each thread's share of
  /// the buffers into the global-memory tape, and the reverse sweep restores
  /// step k from slot k, so nothing is recomputed but the step reversed and
  /// no thread keeps a private copy of a whole block's tile. `stateSlots`
  /// hold the iter_args (`stepCount` slots each), `memorySlots` the buffers
  /// (`stepCount` × `shares` slots each), all made at the entry.
  bool everyStep = false;
  llvm::SmallVector<mlir::Value> stateSlots;
  /// Per buffer: the elements a thread saves per step (a workgroup buffer's
  /// size over the block's thread count, rounded up; a private buffer's
  /// size), at the entry.
  llvm::SmallVector<mlir::Value> shares;
};

/// The forward loop also carries the Jacobian of its state (forward mode
/// along each column); the reverse sweep applies its transpose.
class PreaccumulationStrategy final : public LoopStrategy {
public:
  PreaccumulationStrategy() : LoopStrategy(Kind::Preaccumulation) {}
  static bool classof(const LoopStrategy *s) {
    return s->getKind() == Kind::Preaccumulation;
  }

  mlir::LogicalResult forward(VJPEmitter &emitter,
                              mlir::scf::ForOp op) override;
  mlir::LogicalResult reverse(VJPEmitter &emitter, mlir::scf::ForOp op,
                              AdjointScope &outer) override;
  void remark(mlir::Operation *loop, int64_t bytes) const override;

  /// The positions of the differentiated iter_args (the state) and the
  /// Jacobian's columns: the distinct differentiated values from outside the
  /// loop the state depends on (its inits, what the body reads).
  llvm::SmallVector<unsigned> state;
  llvm::SmallVector<mlir::Value> inputs;
  /// The Jacobian's slots (function entry), state-major.
  mlir::Value jacobian;
};

/// An scf.while with a data-dependent exit whose iterations read memory
/// that it or later code overwrites (no trip count to size a tape by, no
/// repeatable reads to checkpoint): step k (the k-th execution of the before
/// region, and of the after region when the loop goes on) stores its values
/// into slot k of global-memory tapes of `nabla.tape_capacity` slots per
/// thread, a capacity the launcher gives and raises when a thread reports
/// (`nabla.tape_overflow`) that it needed more; the reverse sweep runs the
/// steps backwards, reloading them.
class WhileTapeStrategy final : public LoopStrategy {
public:
  WhileTapeStrategy() : LoopStrategy(Kind::WhileTape) {}
  static bool classof(const LoopStrategy *s) {
    return s->getKind() == Kind::WhileTape;
  }

  /// Not an scf.for strategy: LoopWhileTape.cpp's emitters run it.
  mlir::LogicalResult forward(VJPEmitter &emitter,
                              mlir::scf::ForOp op) override;
  mlir::LogicalResult reverse(VJPEmitter &emitter, mlir::scf::ForOp op,
                              AdjointScope &outer) override;
  void remark(mlir::Operation *loop, int64_t bytes) const override;

  /// What each region stores per step (its arguments for the before region,
  /// the values its ops define) and the ops its reverse repeats instead.
  llvm::SmallVector<mlir::Value> beforeTaped, afterTaped;
  llvm::SmallVector<mlir::Operation *> beforeRecomputed, afterRecomputed;
  /// Src value → its slots (filled by the forward sweep).
  llvm::SmallVector<std::pair<mlir::Value, mlir::Value>> tapes;
  /// The slots per thread (nabla.tape_capacity at the entry).
  mlir::Value capacity;
  /// Inside taped loops: the step count of each of their iterations (their
  /// reverse sweep has nothing else of the forward one).
  mlir::Value countSlots;
  bool nested = false;
  /// The slots of each value: the capacity times the enclosing taped
  /// loops' slots.
  mlir::Value stepSlots;
};

/// A block's sum tree in workgroup memory, the idiom of every block
/// reduction: `for (s = s_0; s > 0; s >>= 1) { if (t < s) W[t] += W[t + s];
/// barrier }`, t a thread id, as an scf.for of constant strides or as the
/// scf.while clang makes of a run-time first stride (`blockDim.x / 2`).
/// Element j of W reaches the root W[0] along at most one path (it moves
/// down by s while it is in [s, 2s), when thread j - s exists; a value left
/// at p >= s never moves again), so when W[0] alone is read after the tree
/// the adjoint of every element on a path to the root is W[0]'s: a
/// broadcast, one barrier, no reversed steps, no atomics, no tape (Futhark's
/// rule for the adjoint of a reduction with +). The forward sweep runs the
/// tree as is.
class ReductionTreeStrategy final : public LoopStrategy {
public:
  ReductionTreeStrategy() : LoopStrategy(Kind::ReductionTree) {}
  static bool classof(const LoopStrategy *s) {
    return s->getKind() == Kind::ReductionTree;
  }

  /// The strategy when `loop` (scf.for or scf.while) is such a tree over a
  /// buffer in `attributions` (their shadows start at zero and nothing reads
  /// them after the function), W[0] alone is read after it (a sum), and no
  /// loop encloses it; null otherwise.
  static std::unique_ptr<ReductionTreeStrategy>
  match(mlir::Operation *loop,
        const llvm::DenseSet<mlir::Value> &attributions);

  mlir::LogicalResult forward(VJPEmitter &emitter,
                              mlir::scf::ForOp op) override {
    return forwardTree(emitter, op);
  }
  mlir::LogicalResult reverse(VJPEmitter &emitter, mlir::scf::ForOp op,
                              AdjointScope &) override {
    return reverseTree(emitter, op);
  }
  void remark(mlir::Operation *loop, int64_t bytes) const override;

  /// The tree as is (scf.for or scf.while), and its broadcast adjoint (a
  /// max/min tree: the Selection forms).
  mlir::LogicalResult forwardTree(VJPEmitter &emitter, mlir::Operation *loop);
  mlir::LogicalResult reverseTree(VJPEmitter &emitter, mlir::Operation *loop);
  mlir::LogicalResult forwardSelectionTree(VJPEmitter &emitter,
                                           mlir::Operation *loop);
  /// Whether element `j` (index) reaches the root, walking its path with the
  /// primal's guards (`first`: the first stride; `threads`: the block's
  /// size along the tree's dimension).
  mlir::Value pathReachesRoot(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value j, mlir::Value first,
                              mlir::Value threads);
  mlir::LogicalResult reverseSelectionTree(VJPEmitter &emitter,
                                           mlir::Operation *loop);

  /// The tree's buffer (a src value), the dimension of its thread id, and
  /// its strides: constant (`strides`) or halving from the src value
  /// `firstStride` (an integer) down to 1.
  mlir::Value buffer;
  mlir::gpu::Dimension dimension = mlir::gpu::Dimension::x;
  llvm::SmallVector<int64_t> strides;
  mlir::Value firstStride;

  /// A max or min tree (`W[t] = max(W[t], W[t + s])`): the comparison under
  /// which the combiner keeps its first operand (the derivative rule's), and
  /// the src combiner and the thread's own load. Each position's final value is
  /// one element's (the winner of its last merge), so its adjoint goes to that
  /// element alone (Futhark's rule for a reduction with max): the forward sweep
  /// runs the tree with each position's winner index alongside (in W's shadow,
  /// zero until the reverse sweep) and keeps the indices of the thread's
  /// positions; the reverse sweep moves every position's adjoint to its winner.
  /// No reversed steps, no taped operands.
  std::optional<mlir::arith::CmpFPredicate> selection;
  mlir::Operation *combiner = nullptr;
  mlir::Value own;
  /// The thread's positions' winners and adjoints (global slots, `share`
  /// per thread: W's size over the block's threads along `dimension`,
  /// rounded up; made at the entry).
  mlir::Value winners, moved, share;
};

} // namespace nabla

#endif // NABLA_LIB_DIALECT_NABLA_TRANSFORMS_REVERSE_LOOPSTRATEGIES_H
