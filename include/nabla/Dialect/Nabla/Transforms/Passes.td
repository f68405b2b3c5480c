//===- Passes.td - Passes of the nabla dialect ---------------*- tablegen -*-===//
//
// The differentiation pass.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_TRANSFORMS_PASSES_TD
#define NABLA_DIALECT_NABLA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def Differentiate : Pass<"nabla-differentiate", "mlir::ModuleOp"> {
  let summary = "Expand nabla.autodiff and nabla.fwddiff into generated derivative functions";
  let description = [{
    Replaces every `nabla.autodiff` (reverse mode) and `nabla.fwddiff`
    (forward mode) by a `func.call` of a generated `func.func` placed next
    to the callee. Generated functions are named deterministically from the
    callee, the mode and the activities
    (`__nabla_vjp_<callee>_<codes>`, `__nabla_jvp_<callee>_<codes>` with one
    letter per activity: c const, d dup, n dupnoneed, a active, x
    activenoneed), and shared between identical requests.

    Calls inside the differentiated function are inlined first, so nested
    device functions are differentiated transitively. Only values that depend
    on an active input get derivative code (integer and index computation,
    thread ids and constants stay inactive).

    Reverse mode follows Enzyme's memory semantics: the adjoint of a load
    accumulates into the shadow (`memref.atomic_rmw addf`, or a plain
    load-add-store when the index is the thread's global id, so the access is
    thread-exclusive); the adjoint of a store reads and zeroes the shadow.
    Values the reverse sweep needs from inside `scf.if` regions are cached by
    yielding them from the forward `scf.if`. With `remarks=true` every kept
    atomic is reported with its reason, and every loop with the strategy that
    reverses it and its private bytes per thread.

    Loops (`scf.for`, `scf.while`, any nesting, inside regions) are reversed
    by one of two strategies, chosen per loop: a per-thread *tape* of the
    values each iteration defines, when a static bound on the trip count is
    known (constant bounds, or the hint `nabla.max_trip_count = N` on the
    loop, checked when the kernel runs: an exceeded hint turns the loop's
    adjoints into NaN) and the tape fits `tape-budget`; otherwise binomial
    *checkpointing* (revolve) with `checkpoints` snapshots of the loop state
    (per loop: `nabla.checkpoints = K`), which recomputes iterations from the
    snapshots. A checkpointed loop may not read memory that it or later code
    overwrites (loop-invariant elements it updates in place are promoted to
    loop-carried values first); such a loop is taped in the kernel's
    global-memory tape (`nabla.tape`, sized at launch; see
    `nabla-materialize-tapes`) when its trip count is computable at the
    derivative's entry, else it needs the hint.

    With `deterministic=true` (per request: `nabla.kernel_adjoint ...
    {deterministic}`) adjoints that many threads accumulate into one element
    (an index uniform across the grid, or across the block for workgroup
    memory) are summed in a fixed order instead: per thread, then an ordered
    block reduction, then, for kernel parameters, per-block partials in a
    trailing scratch parameter added up in block order by the last block.
    Accumulations that may collide in an unknown pattern are errors.

    ```mlir
    nabla.autodiff @mul(%A, %dA, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                      ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
    // becomes
    func.call @__nabla_vjp_mul_dc(%A, %dA, %n) : (memref<?xf32>, memref<?xf32>, index) -> ()
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark where an adjoint accumulation keeps an atomic">,
    Option<"deterministic", "deterministic", "bool", "false",
           "Accumulate colliding adjoints in a fixed order (no float atomics) "
           "so repeated runs give bit-identical gradients; every kernel "
           "adjoint takes a trailing scratch buffer">,
    Option<"checkpoints", "checkpoints", "int64_t", "8",
           "Snapshots per checkpointed loop (binomial checkpointing of loops "
           "without a static trip-count bound; per loop: nabla.checkpoints)">,
    Option<"tapeBudget", "tape-budget", "int64_t", "4096",
           "Bytes per thread up to which a loop with a static trip-count "
           "bound (constant bounds or nabla.max_trip_count) keeps a private "
           "tape instead of being checkpointed">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::func::FuncDialect",
                           "mlir::math::MathDialect", "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect", "mlir::gpu::GPUDialect"];
}

def DifferentiateHost : Pass<"nabla-differentiate-host", "mlir::ModuleOp"> {
  let summary = "Expand nabla.autodiff and nabla.fwddiff of host functions that launch kernels";
  let description = [{
    The host-level part of `nabla-differentiate` (which also runs it first),
    for pipelines that set host code aside before differentiating kernels:
    every request naming a host `func.func` (outside every `gpu.module`)
    that launches kernels becomes a call of a generated host function
    (`__nabla_vjp_<callee>_<codes>` / `__nabla_jvp_...`). Kernels it launches
    get adjoint (tangent) kernels `__nabla_adjoint_<kernel>_<codes>`
    (`__nabla_tangent_...`) in their `gpu.module`, holding requests that
    `nabla-differentiate` expands; copies, accumulations and zeroing of
    buffers run as kernels of `gpu.module @__nabla_host_ad`. `gpu.launch`
    regions in such functions are outlined first. docs/HostAD.md says what
    the generated function does.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark for every copy of a buffer the reverse sweep keeps">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
                           "mlir::gpu::GPUDialect"];
}

def MaterializeTapes : Pass<"nabla-materialize-tapes", "mlir::ModuleOp"> {
  let summary = "Turn nabla.tape ops into a kernel parameter the launch allocates";
  let description = [{
    Reverse mode keeps the values of a loop whose trip count is known only at
    run time, and whose reads cannot be recomputed, in `nabla.tape` slots.
    This pass gives each kernel holding such slots (after inlining the
    functions that hold them) a trailing `memref<?xi32>` parameter with the
    argument attribute `nabla.tape`: the tape of every thread, laid out
    thread-minor (word `w` of thread `t` at `w * threads + t`, `t` the linear
    global thread id, `threads` the grid's thread count). The words per
    thread must be computable from the kernel's integer scalar parameters
    and constants; the kernel's `nabla.tape` attribute holds that formula
    (`words_per_thread`: JSON for launchers, `formula`: text), which
    `nabla-compile` writes into the manifest. Each `gpu.launch_func` of such
    a kernel in host code allocates the tape before the launch (`gpu.alloc`
    of `words * threads` words, computed from the launch's operands) and
    frees it after; before the allocation it calls libnabla_mgpu's
    `nabla_mgpu_check_tape(words, kernel, formula)`, which ends the program
    with the bytes needed when they exceed the limit
    (`$NABLA_MAX_TAPE_BYTES`, `nabla-run --max-tape-bytes`). With
    `remarks=true` each kernel reports its formula.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark with each kernel's tape size per thread">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
                           "mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect"];
}

#endif // NABLA_DIALECT_NABLA_TRANSFORMS_PASSES_TD
