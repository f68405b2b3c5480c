//===- NablaOps.td - Operations of the nabla dialect ----------*- tablegen -*-===//
//
// `nabla.autodiff` (reverse mode) and `nabla.fwddiff` (forward mode), custom
// derivative registration and kernel adjoint requests. The first two share
// one textual form and one verifier; their operand and result lists follow
// from the callee's signature and the activities (see DerivativeSignature.h).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLAOPS_TD
#define NABLA_DIALECT_NABLA_IR_NABLAOPS_TD

include "nabla/Dialect/Nabla/IR/NablaBase.td"
include "nabla/Dialect/Nabla/IR/NablaAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Nabla_Op<string mnemonic, list<Trait> traits = []>
    : Op<Nabla_Dialect, mnemonic, traits>;

// Both differentiation ops: a callee symbol, the expanded operand list and the
// activities of the callee's arguments and results. No memory-effect traits:
// the derivative reads and writes the shadows, so the ops are conservatively
// side-effecting.
class Nabla_DifferentiateOp<string mnemonic, string mode>
    : Nabla_Op<mnemonic, [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$inputs,
                       Nabla_ActivityArrayAttr:$activity,
                       Nabla_ActivityArrayAttr:$ret_activity);
  let results = (outs Variadic<AnyType>:$outputs);
  let assemblyFormat = [{
    $callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The differentiation mode of this op.
    static constexpr ::nabla::DerivativeMode getMode() {
      return ::nabla::DerivativeMode::}] # mode # [{;
    }

    /// The activities as enum values, in callee argument/result order.
    ::llvm::SmallVector<::nabla::Activity> getArgumentActivities();
    ::llvm::SmallVector<::nabla::Activity> getResultActivities();

    /// The function-like op named by `callee`, or null if it does not resolve.
    ::mlir::FunctionOpInterface
    resolveCallee(::mlir::SymbolTableCollection &symbolTable);
  }];
  // Both ops share one implementation (templates in NablaOps.cpp).
  let extraClassDefinition = [{
    ::llvm::SmallVector<::nabla::Activity> $cppClass::getArgumentActivities() {
      return toActivities(getActivity());
    }
    ::llvm::SmallVector<::nabla::Activity> $cppClass::getResultActivities() {
      return toActivities(getRetActivity());
    }
    ::mlir::FunctionOpInterface
    $cppClass::resolveCallee(::mlir::SymbolTableCollection &symbolTable) {
      return ::llvm::dyn_cast_or_null<::mlir::FunctionOpInterface>(
          symbolTable.lookupNearestSymbolFrom(*this, getCalleeAttr()));
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyActivitiesForMode(*this);
    }
    ::llvm::LogicalResult
    $cppClass::verifySymbolUses(::mlir::SymbolTableCollection &symbolTable) {
      return verifyAgainstCallee(*this, symbolTable);
    }
  }];
}

def Nabla_AutodiffOp : Nabla_DifferentiateOp<"autodiff", "Reverse"> {
  let summary = "Reverse-mode derivative (vector-Jacobian product) of a function";
  let description = [{
    Calls the reverse-mode derivative of `callee`. Operands: for each callee
    argument its primal value, followed for `dup`/`dupnoneed` arguments by its
    shadow (same type); then one seed (cotangent) per callee result whose
    ret_activity is `active` or `activenoneed`. Results: the primal result of
    each `const`/`active` callee result, then one gradient per `active`
    argument.

    Memory follows Enzyme's semantics: on entry a `dup` shadow holds a cotangent
    of the buffer's final state; on exit it holds the cotangent of its initial
    state (so a buffer that is only read accumulates into its shadow).

    In reverse mode `active` is for floating-point scalars (and vectors or
    complex numbers of them) and `dup`/`dupnoneed` for memory (memrefs and
    pointers); results may be `const`, `active` or `activenoneed`.

    ```mlir
    nabla.autodiff @mul(%A, %dA, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>],
                                      ret_activity = []} : (memref<?xf32>, memref<?xf32>, index) -> ()
    // d(x*y)/dx and d(x*y)/dy seeded with %seed; the primal product is not needed.
    %gx, %gy = nabla.autodiff @prod(%x, %y, %seed)
        {activity = [#nabla.activity<active>, #nabla.activity<active>],
         ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32, f32) -> (f32, f32)
    ```
  }];
}

def Nabla_FwddiffOp : Nabla_DifferentiateOp<"fwddiff", "Forward"> {
  let summary = "Forward-mode derivative (Jacobian-vector product) of a function";
  let description = [{
    Calls the forward-mode derivative of `callee`. Operands: for each callee
    argument its primal value, followed for `dup`/`dupnoneed` arguments by its
    shadow: the tangent of a scalar, or a buffer holding the tangent of a
    memory argument's initial state (on exit, of its final state). Results: for
    each callee result, the primal unless its ret_activity is `dupnoneed`, then
    its tangent if its ret_activity is `dup` or `dupnoneed`.

    Forward mode takes `const`, `dup` and `dupnoneed` only; `dup` applies to
    memrefs, pointers and floating-point scalars.

    ```mlir
    %y, %dy = nabla.fwddiff @f(%x, %dx) {activity = [#nabla.activity<dup>],
                                         ret_activity = [#nabla.activity<dup>]} : (f32, f32) -> (f32, f32)
    ```
  }];
}

def Nabla_SplitAutodiffOp : Nabla_Op<"split_autodiff", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "One half of a split-mode gradient, its tape in the caller's memory";
  let description = [{
    Enzyme's `__enzyme_augmentfwd` (`half = "augmented"`) and
    `__enzyme_reverse` (`half = "reverse"`) with a caller-allocated tape:
    the operands are those of `nabla.autodiff` of `callee` with the same
    activities, and `tape[tape_offset]` is where this thread's tape starts
    (elements of `tape`'s type: `i8`, `i32` or `f32`). The augmented forward
    runs the primal and writes the values the reverse needs into the
    `nabla.split_tape_bytes` bytes from there; the reverse, called later
    with the same arguments and tape, reads them and accumulates the
    adjoints as `nabla.autodiff` would. The tape's size must be known at
    compile time (trip counts known only at run time need the kernel-level
    split form, whose tape is sized at launch).

    ```mlir
    %bytes = nabla.split_tape_bytes @f {activity = [#nabla.activity<dup>], ret_activity = []} : index
    nabla.split_autodiff "augmented" @f(%x, %dx) tape(%tape[%offset] : memref<?xi8>)
        {activity = [#nabla.activity<dup>], ret_activity = []} : (memref<?xf32>, memref<?xf32>) -> ()
    ```
  }];
  let arguments = (ins StrAttr:$half,
                       FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$inputs,
                       AnyMemRef:$tape,
                       Index:$tape_offset,
                       Nabla_ActivityArrayAttr:$activity,
                       Nabla_ActivityArrayAttr:$ret_activity);
  let results = (outs Variadic<AnyType>:$outputs);
  let assemblyFormat = [{
    $half $callee `(` $inputs `)` `tape` `(` $tape `[` $tape_offset `]` `:`
    type($tape) `)` attr-dict `:` functional-type($inputs, $outputs)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    static constexpr ::nabla::DerivativeMode getMode() {
      return ::nabla::DerivativeMode::Reverse;
    }
    ::llvm::SmallVector<::nabla::Activity> getArgumentActivities() {
      return toActivities(getActivity());
    }
    ::llvm::SmallVector<::nabla::Activity> getResultActivities() {
      return toActivities(getRetActivity());
    }
  }];
}

def Nabla_SplitTapeBytesOp : Nabla_Op<"split_tape_bytes", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The bytes of a split-mode gradient's caller-allocated tape";
  let description = [{
    Enzyme's `__enzyme_augmentsize`: the bytes per call of the tape that
    `nabla.split_autodiff` of `callee` with these activities reads and
    writes. `nabla-differentiate` replaces it by a constant.
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Nabla_ActivityArrayAttr:$activity,
                       Nabla_ActivityArrayAttr:$ret_activity);
  let results = (outs Index:$bytes);
  let assemblyFormat = "$callee attr-dict `:` type($bytes)";
}

def Nabla_SplitTapeElementsOp : Nabla_Op<"split_tape_elements"> {
  let summary = "Host code: the int32 elements of a split kernel's tape for a launch";
  let description = [{
    The elements of the caller-owned tape (`nabla.split_tape` parameter) that
    a launch of the split-mode kernel `kernel` (either half of
    `nabla.kernel_adjoint ... reverse ...`) with these sizes and arguments
    (the kernel's parameters before the tape) needs: host code allocates it
    once and passes it to both launches. `nabla-materialize-tapes` replaces
    the op by the computation of the kernel's tape formula from these
    operands.

    ```mlir
    %n = nabla.split_tape_elements @kernels::@grad_fwd blocks in (%c1, %c1, %c1)
        threads in (%c8, %c1, %c1) args(%x, %dx, %cols : memref<?xf32>, memref<?xf32>, index) : index
    %tape = gpu.alloc (%n) : memref<?xi32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$kernel, Index:$gridSizeX, Index:$gridSizeY,
                       Index:$gridSizeZ, Index:$blockSizeX, Index:$blockSizeY,
                       Index:$blockSizeZ, Variadic<AnyType>:$kernelOperands);
  let results = (outs Index:$elements);
  let assemblyFormat = [{
    $kernel `blocks` `in` `(` $gridSizeX `,` $gridSizeY `,` $gridSizeZ `)`
    `threads` `in` `(` $blockSizeX `,` $blockSizeY `,` $blockSizeZ `)`
    (`args` `(` $kernelOperands^ `:` type($kernelOperands) `)`)? attr-dict
    `:` type($elements)
  }];
}

def Nabla_CustomDerivativeOp : Nabla_Op<"custom_derivative", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Registers a hand-written derivative of a function";
  let description = [{
    Declares that `rule` computes the `mode` (`reverse` or `forward`)
    derivative of `callee` for the given activities, with exactly the
    operand and result convention of `nabla.autodiff` / `nabla.fwddiff`. The
    verifier checks that the rule's signature is the one those activities
    expand to. `nabla-differentiate` then calls the rule instead of
    generating a derivative, both for direct requests and for calls of
    `callee` inside a differentiated function, which is how external device
    library functions (no body) and faster hand-written adjoints enter
    differentiation.

    ```mlir
    func.func private @fast_exp(f32) -> f32
    func.func @fast_exp_vjp(%x: f32, %seed: f32) -> (f32, f32) { ... }
    nabla.custom_derivative @fast_exp reverse @fast_exp_vjp
        {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Nabla_DerivativeModeAttr:$mode,
                       FlatSymbolRefAttr:$rule,
                       Nabla_ActivityArrayAttr:$activity,
                       Nabla_ActivityArrayAttr:$ret_activity);
  let assemblyFormat = "$callee $mode $rule attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::nabla::DerivativeMode getDerivativeMode() {
      return getMode() == ::nabla::DerivativeModeKind::Reverse
                 ? ::nabla::DerivativeMode::Reverse
                 : ::nabla::DerivativeMode::Forward;
    }
    ::llvm::SmallVector<::nabla::Activity> getArgumentActivities() {
      return toActivities(getActivity());
    }
    ::llvm::SmallVector<::nabla::Activity> getResultActivities() {
      return toActivities(getRetActivity());
    }
  }];
}

def Nabla_KernelAdjointOp : Nabla_Op<"kernel_adjoint", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Requests the reverse-mode adjoint of a whole kernel as a new kernel";
  let description = [{
    `nabla-differentiate` generates `adjoint`, a `gpu.func` kernel with the
    launch shape of `kernel` (same `known_block_size`) whose parameters are
    those of `kernel`, each `dup` one followed by its shadow: launched like
    `kernel`, it computes Enzyme's reverse-mode semantics of the whole kernel
    (the shadows hold the cotangent of the final state on entry and that of
    the initial state on exit), so a frontend need not write the wrapper.
    Workgroup and private attributions with float elements get shadow
    attributions of their own, zeroed (with a barrier for workgroup memory)
    before the derivative runs. Activities: `const`, `dup` or `dupnoneed`
    (an output whose final primal contents are not wanted: writes to it that
    no read observes are skipped, and what computed only them) per
    parameter; a kernel returns nothing, so an `active` scalar has nowhere
    to put its gradient.

    With `deterministic` (or `nabla-differentiate{deterministic=true}`) the
    adjoint kernel takes one more, trailing parameter, a `memref<?xi32>`
    scratch buffer of at least `1 + W * blocks` words, zero before the first
    launch (the kernel leaves it reusable), where `W` is the adjoint's
    `nabla.scratch_words_per_block` attribute: adjoints that every thread
    accumulates into one element are summed per thread, per block (ordered
    block reduction) and over blocks in block order (per-block partials in
    the scratch, added up by the last block to finish), so repeated launches
    with the same shape give bit-identical gradients. Other accumulations
    that may collide are rejected (docs/AD.md).

    ```mlir
    gpu.func @mul_kernel(%A: memref<?xf32>, %n: index) kernel { ... }
    nabla.kernel_adjoint @mul_kernel -> @grad_mul_kernel
        {activity = [#nabla.activity<dup>, #nabla.activity<const>]}
    // generates gpu.func @grad_mul_kernel(%A, %dA, %n) kernel
    ```

    **Split form** (`reverse @rev`): two kernels instead of one, with the
    parameters of `adjoint` followed by a caller-owned tape `%tape:
    memref<?xi32>` (argument attribute `nabla.split_tape`). `adjoint` is the
    augmented forward: it runs the primal and writes into the tape what the
    reverse needs (values the reverse sweep uses, loops' tapes, checkpoints,
    Jacobians; every loop is taped, none recomputed from memory). `rev`
    reads the tape and computes the adjoints without rerunning the forward:
    launched later (other kernels may run in between) with the same grid,
    block, arguments and tape, it leaves the shadows as `adjoint`'s combined
    form would. As in Enzyme's split mode, the memory the kernel reads must
    hold, when `rev` runs, what the augmented forward left in it. The tape
    holds `words` i32 per thread of the grid, thread-minor, where `words` is
    the formula `nabla-materialize-tapes` records (the kernel's
    `nabla.split_tape` attribute, the manifest's `split_tape`); a launch
    with a smaller buffer is refused naming the size.

    ```mlir
    nabla.kernel_adjoint @softmax -> @softmax_fwd reverse @softmax_rev
        {activity = [#nabla.activity<dup>, #nabla.activity<const>]}
    // generates gpu.func @softmax_fwd(%x, %dx, %n, %tape) kernel
    //       and gpu.func @softmax_rev(%x, %dx, %n, %tape) kernel
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       FlatSymbolRefAttr:$adjoint,
                       OptionalAttr<FlatSymbolRefAttr>:$reverse,
                       Nabla_ActivityArrayAttr:$activity,
                       UnitAttr:$deterministic);
  let assemblyFormat = "$kernel `->` $adjoint (`reverse` $reverse^)? attr-dict";
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::nabla::Activity> getArgumentActivities() {
      return toActivities(getActivity());
    }
  }];
}

def Nabla_KernelTangentOp : Nabla_Op<"kernel_tangent", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Requests the forward-mode derivative of a whole kernel as a new kernel";
  let description = [{
    The forward-mode counterpart of `nabla.kernel_adjoint`:
    `nabla-differentiate` generates `tangent`, a `gpu.func` kernel with the
    launch shape of `kernel` whose parameters are those of `kernel`, each
    `dup` one followed by its tangent (a buffer's tangent buffer, a float
    scalar's tangent value). Launched like `kernel`, it runs the kernel and
    leaves in each tangent buffer `J` applied to the tangents of the initial
    state (Enzyme's forward-mode memory semantics). Workgroup and private
    attributions with float elements get tangent attributions of their own,
    zeroed before the derivative runs. Host-level forward mode
    (`nabla.fwddiff` of a host function) launches these kernels.

    ```mlir
    gpu.func @scale(%x: memref<?xf32>, %a: f32) kernel { ... }
    nabla.kernel_tangent @scale -> @scale_tangent
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>]}
    // generates gpu.func @scale_tangent(%x, %dx, %a, %da) kernel
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       FlatSymbolRefAttr:$tangent,
                       Nabla_ActivityArrayAttr:$activity);
  let assemblyFormat = "$kernel `->` $tangent attr-dict";
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::nabla::Activity> getArgumentActivities() {
      return toActivities(getActivity());
    }
  }];
}

def Nabla_MemoryFenceOp : Nabla_Op<"memory_fence"> {
  let summary = "Orders the thread's memory accesses at a scope (CUDA's __threadfence)";
  let description = [{
    The accesses to global and workgroup memory this thread made before the
    op are observed, by any thread in `scope`, before those it makes after
    it (sequentially consistent). `scope` is `workgroup` (CUDA's
    `__threadfence_block`), `device` (`__threadfence`) or `system`
    (`__threadfence_system`). Unlike a barrier, no thread waits for another.
    The LLVM IR frontend raises `llvm.nvvm.membar.{cta,gl,sys}` and LLVM
    `fence` instructions (syncscope `workgroup`, `agent`, none) to it.

    Lowered per target: `nvvm.memory.barrier` (`membar.cta/gl/sys`); an LLVM
    `fence seq_cst` at syncscope `workgroup`/`agent`/system on AMDGPU;
    `OpMemoryBarrier` at Workgroup/Device/CrossDevice scope with
    acquire-release semantics on workgroup and storage-buffer memory on
    SPIR-V (and Metal). Both AD modes keep it at its (mirrored) place.

    ```mlir
    memref.store %partial, %partials[%block] : memref<?xf32>
    nabla.memory_fence device
    %ticket = memref.atomic_rmw addi %one, %count[%c0] : (i32, memref<1xi32>) -> i32
    ```
  }];
  let arguments = (ins StrAttr:$scope);
  let assemblyFormat = "$scope attr-dict";
  let hasVerifier = 1;
}

def Nabla_TapeOp : Nabla_Op<"tape"> {
  let summary = "Slots of the calling thread in the kernel's global-memory tape";
  let description = [{
    `count` slots private to the calling thread, in global memory that the
    launch provides: reverse mode keeps in them, per iteration, the values
    of a loop whose trip count is known only at run time and whose reads
    cannot be recomputed (memory the loop or later code overwrites). The
    result is `memref<?xi32>` (32-bit values) or `memref<?x2xi32>` (64-bit
    values, two words per slot); only `memref.load` and `memref.store` may
    use it.

    `nabla-materialize-tapes` lowers it: the kernel the op ends up in (after
    inlining the functions that hold one) gains a trailing
    `memref<?xi32>` parameter (argument attribute `nabla.tape`), the tape
    of all its threads, laid out thread-minor (word `w` of thread `t` at
    `w * threads + t`, so a warp's accesses coalesce); `count` must be
    computable before the launch from the kernel's scalar parameters and
    constants. The kernel's `nabla.tape_words_per_thread` attribute holds
    that formula; the manifest declares it, and every launcher (nabla-run,
    nabla-launch, Python, host programs) allocates `4 * words * threads`
    bytes itself.

    ```mlir
    %n = arith.index_cast %len : i32 to index
    %slots = nabla.tape %n : memref<?xi32>
    memref.store %bits, %slots[%i] : memref<?xi32>
    ```
  }];
  let arguments = (ins Index:$count);
  let results = (outs MemRefOf<[I32]>:$slots);
  let assemblyFormat = "$count attr-dict `:` type($slots)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The word, from this tape's first, that the access at `indices` of
    /// its slots reads or writes: `i`, or `2 * i + j` for 64-bit slots.
    ::mlir::Value emitWord(::mlir::OpBuilder &builder, ::mlir::Location loc,
                           ::mlir::ValueRange indices);
  }];
}

def Nabla_TapeCapacityOp : Nabla_Op<"tape_capacity", [Pure]> {
  let summary = "Slots per loop execution the launch gives growing tapes";
  let description = [{
    The number of slots that the launch gives, per thread, to the tape of
    each loop whose trip count is known only as it runs (an `scf.while` with
    a data-dependent exit that reads memory it overwrites): reverse mode
    sizes such a loop's `nabla.tape` by it, stores the slots that fit, and
    reports a thread that needed more with `nabla.tape_overflow`. The same
    value in every thread of a launch.

    `nabla-materialize-tapes` lowers it to a read of the kernel's tape
    buffer's first word, which the launcher writes (the slots then start at
    the third); the tape's formula names
    it `capacity` (`["capacity", 64]`). Launchers start with a small
    capacity and, after a launch that overflowed, run the kernel again from
    its inputs with the capacity it needed (Runtime.md).

    ```mlir
    %capacity = nabla.tape_capacity : index
    %slots = nabla.tape %capacity : memref<?xi32>
    ```
  }];
  let results = (outs Index:$capacity);
  let assemblyFormat = "attr-dict `:` type($capacity)";
}

def Nabla_TapeOverflowOp : Nabla_Op<"tape_overflow"> {
  let summary = "Reports that the calling thread's growing tape was too small";
  let description = [{
    The calling thread needed `needed` slots per execution of a loop taped
    with `nabla.tape_capacity` slots, more than it had: the slots past the
    capacity were not stored and the thread's adjoints through the loop are
    NaN. `nabla-materialize-tapes` lowers it to an atomic maximum into the
    tape buffer's second word, which the launcher reads after the launch.

    ```mlir
    nabla.tape_overflow %steps
    ```
  }];
  let arguments = (ins Index:$needed);
  let assemblyFormat = "$needed attr-dict";
}

def Nabla_SubgroupBarrierOp : Nabla_Op<"subgroup_barrier"> {
  let summary = "Synchronizes the lanes of a subgroup (CUDA's __syncwarp)";
  let description = [{
    Waits until every active lane of the subgroup has reached this op, and
    makes the memory accesses each lane made before it visible to the
    others after it (workgroup and global memory). Unlike `gpu.barrier`, the
    workgroup's other subgroups need not arrive: the op may sit in control
    flow that only some subgroups take (`if (tid < 32) { ...; __syncwarp();
    }`), but every active lane of the subgroup must execute it, as CUDA asks
    of `__syncwarp()` with a full mask. The LLVM IR frontend raises
    `llvm.nvvm.bar.warp.sync` to it; over a partial mask it makes every lane
    of the warp reach it (the branches around it run in every lane under a
    predicate).

    Lowered per target: `nvvm.bar.warp.sync` with a full mask; on AMDGPU a
    wavefront-scope release and acquire fence around the wave barrier; on
    SPIR-V (and Metal) `OpControlBarrier` at Subgroup scope with
    acquire-release semantics on workgroup and storage-buffer memory. Reverse
    mode replays it at the mirrored point, as it does `gpu.barrier`: the
    adjoints lanes accumulate before it are read by other lanes after it.

    ```mlir
    memref.store %v, %shared[%lane] : memref<32xf32, #gpu.address_space<workgroup>>
    nabla.subgroup_barrier
    %w = memref.load %shared[%partner] : memref<32xf32, #gpu.address_space<workgroup>>
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Nabla_ActiveLanesOp : Nabla_Op<"active_lanes"> {
  let summary = "The lanes of the warp executing this op (CUDA's __activemask)";
  let description = [{
    A 32-bit mask with bit `l` set when lane `l` of the calling thread's
    warp (32 consecutive linear thread ids) executes this op at the same
    point. The LLVM IR frontend raises `llvm.nvvm.activemask` to it and
    resolves it before the raise ends: it makes every lane of the warp
    execute the branches around the op with a predicate (the lanes that
    took them) and replaces the op with a ballot of that predicate. It has
    no lowering of its own; one left in a kernel is a located error of the
    target checks. No operands, and not `Pure`: two of them in different
    branches differ.

    ```mlir
    %active = nabla.active_lanes : i32
    ```
  }];
  let results = (outs I32:$mask);
  let assemblyFormat = "attr-dict `:` type($mask)";
}

#endif // NABLA_DIALECT_NABLA_IR_NABLAOPS_TD
