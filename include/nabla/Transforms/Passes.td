//===- Passes.td - Nabla's GPU preparation passes ------------*- tablegen -*-===//
//
// Target-independent and target-preparing passes on gpu.module ops that the
// `nabla-to-*` pipelines are made of. Conversions live in
// nabla/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TRANSFORMS_PASSES_TD
#define NABLA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckTargetSupport : Pass<"nabla-check-target-support", "mlir::ModuleOp"> {
  let summary = "Report ops in GPU modules that a target pipeline cannot lower";
  let description = [{
    Walks every `gpu.module` and emits a located error for each op the
    selected target cannot lower, naming the op and the target: derivative
    requests not yet expanded (`nabla.*`), unlowered relocation ops
    (`reloc.*`), ops of dialects the pipeline has no lowering for, and
    target-specific limits (no `f64` in Metal, no f64 transcendentals in
    SPIR-V). Pipelines run it first so that a user sees one clear diagnostic
    instead of a legalization failure deep inside a conversion.

    ```mlir
    // nabla-opt --nabla-check-target-support=target=metal
    %x = arith.addf %a, %b : f64   // error: 'f64' is not supported by the metal target
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", [{"nvvm"}],
           "Target pipeline to check for: nvvm, rocdl, spirv or metal">,
    Option<"chip", "chip", "std::string", [{""}],
           "Chip the pipeline compiles for (sm_NN for nvvm, gfxNNN for rocdl)">,
    Option<"requireChip", "require-chip", "bool", "false",
           "An empty chip is an error (the nvvm and rocdl pipelines set it: "
           "their back ends need one)">,
    Option<"features", "features", "std::string", [{""}],
           "Target features the pipeline was given (nvvm: a +ptxNN must be "
           "at least the chip's minimum PTX version)">,
    Option<"abi", "abi", "std::string", [{"v2"}],
           "Relocation convention the pipeline was asked for: v1 or v2">,
    Option<"toolkit", "toolkit", "std::string", [{""}],
           "Toolkit directory the pipeline was given (must exist if set)">,
    ListOption<"workgroupSize", "workgroup-size", "int64_t",
               "Workgroup size the pipeline was given (each 1 to 1024)">,
  ];
}

def CheckInput : Pass<"nabla-check-input", "mlir::ModuleOp"> {
  let summary = "Reject modules whose shape or sizes the pipelines cannot handle";
  let description = [{
    The first pass of every `nabla-to-*` pipeline and of `nabla-compile`. It
    checks what upstream passes and LLVM's back ends assume without checking,
    and reports each problem at its op instead of a crash, a hang or silently
    missing output:

    - every `gpu.module` is a direct child of the top-level module (a nested
      one would not be compiled) and its name is a plain file name (it names
      the output file);
    - a `gpu.module` body holds only kernels, functions, globals and
      declarations;
    - kernel parameters are memrefs of integers/floats/index, integers,
      floats, index or LLVM pointers;
    - `known_block_size`/`known_grid_size` and the targets' thread-count
      attributes (`nvvm.maxntid`, `nvvm.reqntid`,
      `rocdl.reqd_work_group_size`) are positive and within limits;
    - static sizes stay within `nabla/Support/Limits.h`: memrefs under 4 GiB,
      initialized globals under 256 MiB, vectors of at most 1024 elements;
    - `memref.dim` with a constant index names an existing dimension.

    ```mlir
    gpu.module @m {
      gpu.barrier   // error: cannot appear directly in a gpu.module body
    }
    ```
  }];
}

def Validate : Pass<"nabla-validate", "mlir::ModuleOp"> {
  let summary = "Check that every pointer and memref base in GPU code resolves";
  let description = [{
    Traces the base of every memref and LLVM pointer that GPU code uses
    (through casts, views, address space casts and GEPs) and requires it to
    be a function argument or attribution, an allocation, an initialized
    global, a `reloc` op, a known constant address (`llvm.inttoptr` of a
    constant) or a value computed at run time (loaded, returned by a call).
    A global that is only an external declaration, the shape a frontend's
    "keep it symbolic" (v2) convention leaves behind, is a located error
    naming the global and how to fix it, instead of the crash an AD engine's
    validator hits on it.

    ```mlir
    llvm.mlir.global external @"jl_global#12889"() : !llvm.ptr
    %p = llvm.mlir.addressof @"jl_global#12889" : !llvm.ptr
    %q = llvm.addrspacecast %p : !llvm.ptr to !llvm.ptr<1>   // error: unresolved host object
    ```
  }];
}

def InlineDeviceCalls : Pass<"nabla-inline-device-calls", "mlir::gpu::GPUModuleOp"> {
  let summary = "Inline every device-function call into the kernels of a GPU module";
  let description = [{
    Inlines each `func.call` reachable from a `gpu.func` kernel, transitively,
    and erases device functions left without uses. Targets without a calling
    convention for memref arguments (SPIR-V for Vulkan, Metal through SPIR-V)
    need this; recursion and multi-block callees inside structured regions are
    reported as errors.

    ```mlir
    gpu.func @k(%A: memref<?xf32>) kernel {
      func.call @f(%A) : (memref<?xf32>) -> ()   // replaced by the body of @f
      gpu.return
    }
    ```
  }];
  let dependentDialects = ["mlir::cf::ControlFlowDialect"];
}

def AssembleCubin : Pass<"nabla-assemble-cubin", "mlir::ModuleOp"> {
  let summary = "Add a cubin assembled by ptxas next to each PTX object";
  let description = [{
    For every `gpu.binary` object holding PTX (`assembly` format of an
    `#nvvm.target`), runs `ptxas` from the CUDA toolkit and appends a second
    object with the cubin (`bin` format) for the same target. A failure of
    ptxas is a located error carrying its output. PTX making more than
    `relocatable-calls` calls is assembled as relocatable code (`ptxas -c`)
    and linked alone by the toolkit's `nvlink` (whole-program ptxas grows
    with the square of the calls a kernel reaches).

    ```mlir
    gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "...">,
                         #gpu.object<#nvvm.target<chip = "sm_90">, bin = "\7FELF...">]
    ```
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", [{""}],
           "CUDA toolkit holding bin/ptxas (default: $CUDA_PATH or /usr/local/cuda)">,
    Option<"optLevel", "opt-level", "int", "2", "ptxas optimization level">,
    Option<"largePtxLines", "large-ptx-lines", "int64_t", "40000",
           "Assemble PTX longer than this many lines with ptxas -O0 (0: never)">,
    Option<"relocatableCalls", "relocatable-calls", "int64_t", "256",
           "Assemble PTX making more than this many calls as relocatable code (ptxas -c) linked by nvlink (0: never)">,
  ];
}

def ModuleToBinary : Pass<"nabla-module-to-binary", "mlir::ModuleOp"> {
  let summary = "gpu-module-to-binary, keeping heavily used device-library functions out of line";
  let description = [{
    Serializes every `gpu.module` with its target attribute, as upstream's
    `gpu-module-to-binary` does, with one difference: after the device
    library (libdevice, OCML) is linked, a library function called from more
    than `outline-calls` places is kept as one function the kernels call
    (`noinline`) instead of being inlined at each call (libdevice marks its
    functions `alwaysinline`). A gradient of a long computation calls `sinf`
    and `cosf` thousands of times: inlined, each call adds the function's
    whole body (with its slow path) to the PTX, and the assembler's time and
    memory grow with it. 0 inlines every call, as upstream does.

    On the optimized LLVM IR, before the back end: a value that lives across
    more than `call-crossing` calls of its block is kept in the stack frame
    (a volatile store after its definition, a volatile load before each use
    a call separates from the previous one), and a block making more than
    twice `call-chunk` calls keeps its first and last runs of that many calls
    and calls each run between as a function of its own. ptxas's time grows
    with the calls a function makes and with the values living across them.
    0 turns either off. ROCDL modules are serialized by a subclass of
    upstream's ROCDL serializer that runs these steps too (upstream's drops
    the callbacks they hang on).
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", [{""}],
           "Toolkit path (CUDA for NVVM, ROCm for ROCDL)">,
    Option<"compilationTarget", "format", "std::string", [{"isa"}],
           "What to produce: llvm, isa, bin or fatbin">,
    Option<"outlineCalls", "outline-calls", "int64_t", "16",
           "Keep a device-library function out of line once this many calls use it (0: never)">,
    Option<"callCrossing", "call-crossing", "int64_t", "16",
           "Keep a value in the stack frame once it lives across more than this many calls (0: never)">,
    Option<"callChunk", "call-chunk", "int64_t", "128",
           "Move each run of this many calls of a block making more than twice as many into a function of its own (0: never)">,
  ];
}

def LinearizeKernelMemRefs : Pass<"nabla-linearize-kernel-memrefs", "mlir::gpu::GPUModuleOp"> {
  let summary = "Pass multi-dimensional dynamic memref kernel parameters as 1-D buffers plus sizes";
  let description = [{
    SPIR-V storage buffers are runtime arrays: a `memref<?x?xT>` parameter
    has no shape to index with. This pass rewrites each kernel parameter that
    is a ranked memref of rank ≥ 2 with dynamic sizes and the identity layout
    into a `memref<?xT>` (row-major data, same position) and appends one
    `index` parameter per dynamic size, in order, at the end of the kernel's
    parameter list; the kernel body sees the original shape again through
    `memref.expand_shape`. The manifest of `nabla-compile` records the
    appended parameters (`"kind": "size"`).

    ```mlir
    gpu.func @k(%A: memref<?x?xf32>) kernel
    // becomes
    gpu.func @k(%A: memref<?xf32>, %A_size0: index, %A_size1: index) kernel
    ```
  }];
  let dependentDialects = ["mlir::affine::AffineDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def BindModuleGlobals : Pass<"nabla-bind-module-globals", "mlir::gpu::GPUModuleOp"> {
  let summary = "Pass module globals that SPIR-V cannot hold as kernel storage buffers the runtime owns";
  let description = [{
    Vulkan has no writable module-scope device memory and no large constant
    arrays outside a buffer: a `__device__` variable (a counter, a table the
    kernels update) or a big `__constant__` table has nowhere to live in a
    SPIR-V module. This pass gives each such `memref.global` of the module a
    storage buffer that the runtime owns for as long as the module is loaded
    (CUDA's lifetime of a module's `__device__` variables): every kernel that
    reads it gets one more parameter of the global's type, after all others
    (size parameters included), marked `nabla.module_global = "name"`, and
    its `memref.get_global` ops become that parameter. The module records
    the globals, their initial contents (zeros when none) and which kernels
    bind which in `nabla.module_globals`, which the binary's object keeps;
    the runtime allocates and fills each buffer once, when it loads the
    module, and binds it at every launch of those kernels.

    Globals that stay: constant 1-D globals of at most `max-private-elements`
    known elements (copied into each kernel, `nabla-convert-gpu-to-spirv`),
    relocation records (`reloc.key`), workgroup memory and globals of types a
    buffer cannot hold (index, vectors).

    ```mlir
    memref.global "private" @count : memref<1xi32> = dense<0>
    gpu.func @k(%out: memref<?xi32>) kernel {
      %c = memref.get_global @count : memref<1xi32>
    // becomes
    gpu.func @k(%out: memref<?xi32>,
                %c: memref<1xi32> {nabla.module_global = "count"}) kernel {
    ```
  }];
  let options = [
    Option<"maxPrivateElements", "max-private-elements", "int64_t", "64",
           "Constant 1-D globals of at most this many known elements are "
           "left to be copied into the kernels">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def LowerAllReduce : Pass<"nabla-lower-all-reduce", "mlir::gpu::GPUModuleOp"> {
  let summary = "Lower gpu.all_reduce to subgroup reductions combined through workgroup memory";
  let description = [{
    No upstream conversion lowers `gpu.all_reduce` for every target (upstream's
    rewrite assumes 32 lanes and is only reachable from a test pass). Each
    workgroup-wide reduction with an `op` attribute becomes a
    `gpu.subgroup_reduce` per subgroup, one partial per subgroup stored by its
    lane 0 into a workgroup scratch attribution of the kernel, a barrier,
    every thread combining the partials in subgroup order (the same order on
    every run), and a barrier so that the scratch can be reused. Kernels get
    one scratch attribution per element type, sized for the largest
    workgroup (`known_block_size`, else `max-workgroup-size`) over the
    subgroup size. Device functions holding an all_reduce are inlined into their
    kernels first (the scratch belongs to the kernel).

    Subgroups are the linear thread id divided by the subgroup size (CUDA
    warps, AMD wavefronts). With `subgroup-builtins` (SPIR-V), where Vulkan
    does not promise that layout (lavapipe splits each row of a 13x4x2
    workgroup into subgroups of 8 and 5), and for a custom combiner region,
    every thread stores its value in a slot of its own and a tree of
    halving strides combines the slots, with a barrier per level.

    ```mlir
    %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
    // becomes
    %p = gpu.subgroup_reduce add %x uniform : (f32) -> f32
    scf.if %lane_is_0 { memref.store %p, %scratch[%subgroup] }
    gpu.barrier
    %s = scf.for %k = %c1 to %subgroups iter_args(%acc = %first) ... // addf
    gpu.barrier
    ```
    A custom combiner region is inlined at each tree level; one with more
    than one block is a located error.
  }];
  let options = [
    Option<"subgroupSize", "subgroup-size", "unsigned", "32",
           "Lanes per subgroup (sizes the scratch; divides the thread id "
           "without subgroup-builtins)">,
    Option<"subgroupBuiltins", "subgroup-builtins", "bool", "false",
           "The device's subgroups need not be the linear thread id divided "
           "by the subgroup size (Vulkan): reduce by a tree over a slot per "
           "thread">,
    Option<"maxWorkgroupSize", "max-workgroup-size", "unsigned", "1024",
           "Threads per workgroup at most, for kernels without "
           "known_block_size">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def LowerSubgroupReduce : Pass<"nabla-lower-subgroup-reduce", "mlir::gpu::GPUModuleOp"> {
  let summary = "Lower gpu.subgroup_reduce to shuffles";
  let description = [{
    Also replaces `gpu.subgroup_size` by the target's constant.

    The NVVM and ROCDL conversions have no lowering for floating-point
    `gpu.subgroup_reduce`; this pass rewrites it (after splitting wide
    vectors) into butterfly `gpu.shuffle xor` sequences over the target's
    subgroup size (`nabla-lower-all-reduce` runs before it).

    ```mlir
    %r = gpu.subgroup_reduce add %x : (f32) -> f32   // 5 shuffle-xor + add steps for 32 lanes
    ```
  }];
  let options = [
    Option<"subgroupSize", "subgroup-size", "unsigned", "32",
           "Lanes per subgroup (32 on NVIDIA, 64 on AMD wave64)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def ExpandAtomics : Pass<"nabla-expand-atomics", "mlir::gpu::GPUModuleOp"> {
  let summary = "Rewrite atomics no GPU target has as one instruction into compare-exchange loops";
  let description = [{
    `memref.atomic_rmw muli` on integers has no hardware atomic on PTX,
    AMDGPU or SPIR-V (LLVM's `atomicrmw` has no `mul`); it becomes a
    `memref.generic_atomic_rmw` whose body multiplies, which each target
    lowers to a compare-exchange loop. Every Nabla pipeline runs it before
    lowering the kernels.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def EmulateBFloat16 : Pass<"nabla-emulate-bf16", "mlir::gpu::GPUModuleOp"> {
  let summary = "Keep bf16 values as their bits (i16) for targets without bf16";
  let description = [{
    Vulkan and Metal (through SPIR-V) have no bf16 type a Vulkan 1.3 device is
    required to support; mixed-precision kernels keep their activations in
    it. This pass makes such a kernel one of f32 arithmetic and i16 storage:
    arithmetic on bf16 runs in f32 and rounds its result back (exact for
    shuffles, selects and comparisons; one rounding per op, as the bf16 op
    rounds), `arith.extf`/`arith.truncf` between bf16 and f32 become integer
    operations on the bits (round to nearest even, NaN kept quiet), and every
    bf16 value, memref, constant and signature holds the bits as i16. The
    kernel's parameters keep their meaning (a buffer of bf16 bits).
    An atomic read-modify-write of bf16 memory becomes a compare-exchange
    loop (`memref.generic_atomic_rmw`) on the bits, combining in f32; the
    SPIR-V conversion runs it on the 32-bit word that holds the element
    (Vulkan has no 16-bit atomics).

    ```mlir
    // nabla-opt --pass-pipeline='builtin.module(gpu.module(nabla-emulate-bf16))'
    %h = memref.load %buf[%i] : memref<?xbf16>
    %x = arith.extf %h : bf16 to f32
    // becomes: %h = memref.load %buf[%i] : memref<?xi16>, then
    // extui to i32, shli 16, bitcast to f32
    ```
    The SPIR-V and Metal pipelines run it after inlining device calls.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def PromotePrivateAllocs : Pass<"nabla-promote-private-allocs", "mlir::gpu::GPUModuleOp"> {
  let summary = "Turn a kernel's fixed-size heap allocations into private memory";
  let description = [{
    A `memref.alloc` in device code allocates per thread (CUDA's in-kernel
    `malloc`): Vulkan and Metal have no device heap (upstream's lowering
    failed with a bare "failed to legalize"), and on NVVM/ROCDL it is a slow
    call that can fail. An allocation of static shape in the default (or
    private) memory space of at most `max-bytes` bytes, whose memref does not
    leave its function or region (its uses, through view ops, are not
    returned or yielded), becomes a `memref.alloca` in its place, and its
    `memref.dealloc`s are erased. Allocated in a loop body, it stays the
    iteration's own memory, from which reverse mode recomputes; the kernel
    inliner later moves fixed-size private memory to the kernel's entry.
    Workgroup allocations are left alone (the targets lower them);
    allocations of run-time size remain, and the target-support check
    reports them on the targets without a device heap.

    ```mlir
    scf.for ... { %t = memref.alloc() : memref<16xf32> ... memref.dealloc %t }
    // becomes
    scf.for ... { %t = memref.alloca() : memref<16xf32> ... }
    ```
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", "65536",
           "Largest allocation, in bytes, that becomes private memory">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def LowerSubgroupBarrier : Pass<"nabla-lower-subgroup-barrier", "mlir::gpu::GPUModuleOp"> {
  let summary = "Lower nabla.subgroup_barrier (__syncwarp) to NVVM or AMDGPU";
  let description = [{
    Runs on the kernels of the NVVM and ROCDL pipelines before their
    conversion to the LLVM dialect (the SPIR-V conversion has its own
    pattern: `OpControlBarrier` at Subgroup scope).

    ```mlir
    nabla.subgroup_barrier
    // target=nvvm
    %all = llvm.mlir.constant(-1 : i32) : i32
    nvvm.bar.warp.sync %all : i32
    // target=rocdl: a wavefront executes in lockstep; the fences order the
    // lanes' memory accesses, the wave barrier keeps code from moving across
    llvm.fence syncscope("wavefront") release
    llvm.call_intrinsic "llvm.amdgcn.wave.barrier"() : () -> ()
    llvm.fence syncscope("wavefront") acquire
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", "\"nvvm\"",
           "nvvm or rocdl">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect"];
}

def InternalizeDeviceFunctions : Pass<"nabla-internalize-device-functions", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give a GPU module's private device functions internal linkage and drop their C wrappers";
  let description = [{
    Upstream's `convert-gpu-to-nvvm` and `convert-gpu-to-rocdl` request a C
    wrapper (`_mlir_ciface_<name>`) for every `func.func` of a GPU module and
    lower `private` functions with external linkage: in the PTX or HSACO each
    device function and its wrapper stay `.visible`, so LLVM can neither
    inline a function called once nor drop one nobody calls. A gradient
    module keeps the primal's private copy, called by nothing after
    differentiation, and its whole body reached the assembler (a quarter of
    a long gradient's PTX). Runs after that conversion: erases the wrappers
    of private functions (no device code calls them), gives every private
    `llvm.func` with a body `internal` linkage, and erases those left
    without uses. Kernels and public functions are untouched.

    ```mlir
    llvm.func @f(...) attributes {llvm.emit_c_interface, sym_visibility = "private"}
    llvm.func @_mlir_ciface_f(...) attributes {llvm.emit_c_interface, sym_visibility = "private"}
    // becomes
    llvm.func internal @f(...) attributes {sym_visibility = "private"}
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ROCDLPrivateAllocas : Pass<"nabla-rocdl-private-allocas", "mlir::gpu::GPUModuleOp"> {
  let summary = "Move the stack allocations of an AMDGPU module into private memory";
  let description = [{
    The memref-to-LLVM lowering places `memref.alloca` in the generic address
    space 0, but AMDGPU stack slots live in the private address space 5: the
    back end cannot select an `alloca` anywhere else and aborts
    (`Cannot select: FrameIndex`, or `dynamic_stackalloc` for an allocation
    outside the entry block). Like clang, this pass allocates each
    address-space-0 `llvm.alloca` in address space 5 and casts the pointer to
    the generic one its users expect; LLVM's address-space inference turns
    the accesses back into private ones. Runs on ROCDL modules after their
    conversion to the LLVM dialect.

    ```mlir
    %p = llvm.alloca %n x f32 : (i64) -> !llvm.ptr
    // becomes
    %s = llvm.alloca %n x f32 : (i64) -> !llvm.ptr<5>
    %p = llvm.addrspacecast %s : !llvm.ptr<5> to !llvm.ptr
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ROCDLMathToOCML : Pass<"nabla-rocdl-math-to-ocml", "mlir::gpu::GPUModuleOp"> {
  let summary = "Lower math ops to ROCm device library (OCML) calls before the GPU-to-ROCDL conversion";
  let description = [{
    Upstream's `convert-gpu-to-rocdl` collects the LLVM conversion patterns of
    every dialect loaded in the context before its own math-to-OCML patterns,
    at the same benefit, so which lowering a math op gets depends on what else
    the context holds: with the NVVM (or AMX) dialect loaded, for instance
    because the input names an `nvvm.*` attribute, `math.atan2`, `acos`,
    `asin`, `atan`, `cosh`, `sinh`, `tan`, `tanh` become LLVM intrinsics the
    AMDGPU back end cannot select ("no libcall available for fatan2"), and
    `log1p`, `expm1`, `rsqrt` lose accuracy. This pass applies only the
    math-to-OCML patterns first, so every math op with an OCML function
    becomes a call to it whatever is loaded; the rest is left to
    `convert-gpu-to-rocdl`.

    ```mlir
    %r = math.atan2 %y, %x : f32
    // becomes
    %r = llvm.call @__ocml_atan2_f32(%y, %x) : (f32, f32) -> f32
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "AMDGPU chip (gfx90a, ...): chip-specific lowerings; none when empty or unknown">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def SPIRVToBinary : Pass<"nabla-spirv-to-binary", "mlir::ModuleOp"> {
  let summary = "Serialize, validate and package SPIR-V modules as gpu.binary ops";
  let description = [{
    Replaces each `gpu.module` holding a `spirv.module` (the output of
    `nabla-convert-gpu-to-spirv`) by a `gpu.binary` of the same name. The
    SPIR-V words are validated in-process with SPIRV-Tools for the Vulkan 1.1
    environment; a validation failure is a located error with the
    validator's message. With `format=msl` the validated SPIR-V is compiled
    to Metal Shading Language with SPIRV-Cross, one translation unit holding
    every kernel (each in a namespace named after it).

    ```mlir
    gpu.binary @kernels [#gpu.object<#spirv.target_env<...>, bin = "\03\02\23\07...">]
    ```
  }];
  let options = [
    Option<"format", "format", "std::string", [{"spirv"}],
           "Object to produce: spirv (binary) or msl (source)">,
    Option<"mslVersion", "msl-version", "std::string", [{"3.0"}],
           "Metal Shading Language version for format=msl">,
  ];
}

#endif // NABLA_TRANSFORMS_PASSES_TD
