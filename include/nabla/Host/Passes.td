//===- Passes.td - Host program lowering passes ------------*- tablegen -*-===//
//
// Passes that prepare and lower the host half of a GPU program (the code
// around gpu.launch_func / gpu.launch) so that it runs against the `mgpu*` C
// API of libnabla_mgpu.so. The `nabla-to-*` pipelines run them after the
// device code has become gpu.binary ops.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_HOST_PASSES_TD
#define NABLA_HOST_PASSES_TD

include "mlir/Pass/PassBase.td"

def AnnotateLaunchSizes : Pass<"nabla-annotate-launch-sizes", "mlir::ModuleOp"> {
  let summary = "Give kernels the block and grid sizes all their launches agree on";
  let description = [{
    For every kernel that the module's host code launches, sets
    `known_block_size` (and `known_grid_size`) when every `gpu.launch_func`
    of the kernel passes the same constant sizes. SPIR-V then takes its
    workgroup size from the launch instead of a `workgroup-size` option, and
    every target may fold `gpu.block_dim`. A kernel whose existing
    `known_block_size` contradicts a constant launch is a located error.

    ```mlir
    gpu.launch_func @kernels::@k blocks in (%c2, %c1, %c1)
        threads in (%c64, %c1, %c1) args(%buffer : memref<?xf32>)
    // @k gets known_block_size = array<i32: 64, 1, 1>,
    //          known_grid_size = array<i32: 2, 1, 1>
    ```
  }];
}

def WrapHostObjects : Pass<"nabla-wrap-host-objects", "mlir::ModuleOp"> {
  let summary = "Record the launch ABI of SPIR-V kernels in their gpu.binary objects";
  let description = [{
    Vulkan binds kernel arguments as descriptors, so the runtime behind
    `mgpuLaunchKernel` must know which of the flat LLVM arguments
    (memref descriptor fields and scalars) form which binding. For every
    SPIR-V `gpu.binary` object that host code launches from, this pass
    prefixes the SPIR-V words with a Nabla host-object header: the magic
    `NBLAHOST`, a version, and a JSON list of the launched kernels with their
    parameters (buffer: element type and shape; scalar: type). See
    docs/HostPrograms.md. A launch argument that no kernel parameter can
    receive (a non-memref aggregate, a memref of vectors) is a located error.

    ```mlir
    gpu.binary @kernels [#gpu.object<#spirv.target_env<...>, bin = "...">]
    // becomes, for `gpu.launch_func @kernels::@k args(%a : memref<?xf32>)`,
    gpu.binary @kernels [#gpu.object<#spirv.target_env<...>,
        bin = "NBLAHOST<version><length>{\"kernels\": ...}<SPIR-V>">]
    ```
  }];
}

def LowerHostToLLVM : Pass<"nabla-lower-host-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower a GPU program's host code to LLVM calling the mgpu* API";
  let description = [{
    Does nothing unless the module holds host code that uses the GPU
    (`gpu.launch_func`, `gpu.alloc`, `gpu.memcpy`, `gpu.host_register`,
    `gpu.wait`, ... outside a `gpu.module`). Otherwise runs, on the whole
    module: `nabla-wrap-host-objects` (SPIR-V targets), `gpu-async-region`
    (every GPU op on a stream, as `gpu-to-llvm` lowers only asynchronous
    allocations and copies), `gpu-to-llvm`, the async runtime lowering when
    `async` ops are present, and the remaining standard conversions to the
    LLVM dialect. The result runs under `mlir-runner` with libnabla_mgpu.so
    and the runner utilities, or through `nabla-run --entry`.

    ```mlir
    func.func @main() {
      gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1)
          threads in (%c8, %c1, %c1) args(%buffer : memref<8xf32>)
      return
    }
    // becomes llvm.func @main with calls of mgpuStreamCreate,
    // mgpuLaunchKernel (at translation) and mgpuStreamSynchronize.
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", [{"spirv"}],
           "Target the kernels were compiled for: nvvm, rocdl, spirv or metal">,
  ];
}

def SetAsideHostCode : Pass<"nabla-set-aside-host-code", "mlir::ModuleOp"> {
  let summary = "Move a program's host code out of the way of kernel lowering";
  let description = [{
    Kernel lowering changes kernel signatures (SPIR-V flattens dynamic
    multi-dimensional memrefs into a buffer plus sizes, then replaces the
    `gpu.func` ops by a `spirv.module`), after which the host's
    `gpu.launch_func` ops no longer verify against their kernels. When the
    module holds GPU host code, this pass moves every top-level op other than
    `gpu.module` and `gpu.binary` into a nested module
    `@nabla_host_code`, where each launched kernel module is stood in for by
    an empty `gpu.binary`; `nabla-restore-host-code` moves the host code back
    once the kernels are binaries.

    ```mlir
    module attributes {gpu.container_module} {
      gpu.module @kernels { ... }
      func.func @main() { gpu.launch_func @kernels::@k ... }
    }
    // becomes
    module attributes {gpu.container_module} {
      gpu.module @kernels { ... }
      module @nabla_host_code attributes {gpu.container_module} {
        gpu.binary @kernels [#gpu.object<...placeholder...>]
        func.func @main() { gpu.launch_func @kernels::@k ... }
      }
    }
    ```
  }];
  let dependentDialects = ["mlir::spirv::SPIRVDialect"];
}

def RestoreHostCode : Pass<"nabla-restore-host-code", "mlir::ModuleOp"> {
  let summary = "Move host code set aside by nabla-set-aside-host-code back";
  let description = [{
    Moves the ops of the nested `@nabla_host_code` module back to the top
    level, dropping its stand-in `gpu.binary` ops, and erases it. A kernel
    module that host code launches but that is neither a `gpu.binary` nor a
    `gpu.module` any more is a located error. Does nothing without such a
    module.

    ```mlir
    // nabla-opt --nabla-set-aside-host-code --nabla-restore-host-code
    // returns the input unchanged.
    ```
  }];
}

def DetectLoopLimit : Pass<"nabla-detect-loop-limit", "mlir::gpu::GPUModuleOp"> {
  let summary = "Report a thread whose loops the device ended early";
  let description = [{
    Mesa's llvmpipe (lavapipe, the default Vulkan device) ends every loop of
    a shader invocation once the invocation has run 65535 loop iterations in
    all (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS), and the kernel goes on with
    whatever its loops had computed: a silently wrong result. Each kernel
    that loops records, before every back edge, whether its loop goes on
    (a while loop's condition, a for loop's next index below its bound) in
    a workgroup-memory word of the thread's, cleared before the loop: a loop
    left by its own exit leaves it false, one the device ended leaves it
    true. Workgroup memory keeps the compilers from folding that check (a
    private variable's last value on the loop's only exit is known). A thread
    that saw one prints the record `nabla-runtime: loop limit: ...`
    (gpu.printf: run this before nabla-lower-printf-to-buffer), which the
    Vulkan launcher turns into an error on lavapipe. With `limit` given, a
    kernel whose loops provably run at most that many iterations per thread
    in all (every loop an scf.for of constant upper bound from a constant or
    thread-id lower bound, nested counts multiplied) is left as is: the
    check costs lavapipe time (a workgroup store per iteration).
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "0",
           "Threads per workgroup of kernels without known_block_size (the "
           "size of the workgroup-memory words); 0: do nothing">,
    Option<"limit", "limit", "int64_t", "0",
           "The device's loop-iteration limit: kernels proven to stay within "
           "it are not instrumented (0: instrument every kernel that loops)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def LowerPrintfToBuffer : Pass<"nabla-lower-printf-to-buffer",
                               "mlir::gpu::GPUModuleOp"> {
  let summary = "Turn gpu.printf into records in a buffer the runtime prints";
  let description = [{
    SPIR-V for Vulkan has no printf. Each kernel that calls `gpu.printf` gets
    a trailing `memref<?xi32>` parameter (argument attribute
    `nabla.printf_buffer`), the printf buffer; each `gpu.printf` reserves a
    record with an atomic add on word 0 and, if the record fits in
    `capacity` words, writes the format's index, the record's length and one
    64-bit slot per argument (integers sign- or zero-extended as their
    conversion needs, floats as f64, as C's variadic promotion does).
    libnabla_mgpu binds the buffer after the kernel's other bindings, reads
    it when the launch completes and prints each record with its format. The
    gpu.module records the formats, the kernels and the capacity in its
    `nabla.printf` attribute, which the binary's object keeps.

    ```mlir
    gpu.printf "x = %f\n", %x : f32
    // becomes (schematically)
    %at = memref.atomic_rmw addi %c4, %printf[%c0] : (i32, memref<?xi32>) -> i32
    // store [format 0, length 4, low and high word of (f64) %x] at %at + 1
    ```
  }];
  let options = [
    Option<"capacity", "capacity", "unsigned", "262144",
           "Words of records a launch's printf buffer holds; later records "
           "are counted and reported as lost">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

#endif // NABLA_HOST_PASSES_TD
