//===- Passes.td - Nabla's conversion passes -----------------*- tablegen -*-===//
//
// Dialect conversions used by the `nabla-to-*` pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_CONVERSION_PASSES_TD
#define NABLA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGPUToSPIRV : Pass<"nabla-convert-gpu-to-spirv", "mlir::ModuleOp"> {
  let summary = "Convert target-neutral GPU modules to Vulkan-flavoured SPIR-V";
  let description = [{
    Converts each `gpu.module` (kernels already inlined, see
    `nabla-inline-device-calls`) into a `spirv.module` placed inside it:

    - attaches a `spirv.target_env` (unless the module has one) for the
      selected client (`vulkan`, or `metal` which drops `Float64`);
    - records `subgroup-size` in the resource limits and folds
      `gpu.subgroup_size` to it, so that shuffles written with the
      subgroup size as their width lower for any device;
    - sets `spirv.entry_point_abi` on each kernel from `workgroup-size`, or
      from the kernel's `known_block_size`;
    - maps memory spaces: default → `StorageBuffer` (kernel buffers),
      `#gpu.address_space<workgroup>` → `Workgroup`, `memref.alloca` and
      `#gpu.address_space<private>` → `Function`;
    - gives dynamic shared memory (`gpu.dynamic_shared_memory` viewed as one
      element type) the size `dynamic-shared-memory`, as workgroup memory;
    - converts gpu, arith, math, scf, cf, func, memref, index, vector and ub
      ops, plus `memref.atomic_rmw addf` (absent upstream) to
      `spirv.EXT.AtomicFAdd` when the target environment allows
      `SPV_EXT_shader_atomic_float_add` (and `emulate-float-atomics` is off),
      or otherwise to a compare-exchange loop: the buffer (a kernel
      parameter or an allocation) is retyped to integers of the same width,
      every access bitcasts, and the add becomes a
      `memref.generic_atomic_rmw`, lowered to `spirv.AtomicCompareExchange`
      in a `spirv.mlir.loop`.

    Buffer parameter *k* gets descriptor set 0, binding *k*; a scalar
    parameter is a one-element storage buffer at its binding (see
    docs/Targets.md).

    ```mlir
    gpu.module @kernels {
      spirv.module @__spv__kernels Logical GLSL450 { ... }
    }
    ```
  }];
  let options = [
    ListOption<"workgroupSize", "workgroup-size", "int64_t",
               "Workgroup size (x[,y[,z]]) of every kernel without known_block_size">,
    Option<"client", "client", "std::string", [{"vulkan"}],
           "Target environment flavour: vulkan or metal">,
    Option<"use64bitIndex", "use-64bit-index", "bool", "false",
           "Lower index to i64 instead of i32">,
    Option<"subgroupSize", "subgroup-size", "unsigned", "32",
           "Subgroup size of the device (gpu.subgroup_size and shuffle widths)">,
    Option<"emulateFloatAtomics", "emulate-float-atomics", "bool", "false",
           "Lower float atomic add to a compare-exchange loop even where the "
           "target environment has SPV_EXT_shader_atomic_float_add">,
    Option<"dynamicSharedMemory", "dynamic-shared-memory", "int64_t", "-1",
           "Bytes of dynamic shared memory (gpu.dynamic_shared_memory, CUDA's "
           "extern __shared__) the kernels are launched with; -1: not given">,
  ];
  let dependentDialects = ["mlir::spirv::SPIRVDialect", "mlir::scf::SCFDialect",
                           "mlir::math::MathDialect"];
}


def RaiseLLVM : Pass<"nabla-raise-llvm", "mlir::ModuleOp"> {
  let summary = "Raise a frontend's LLVM-dialect kernels to Nabla's target-neutral form";
  let description = [{
    Turns a module imported from LLVM IR (clang CUDA/HIP, Julia-style IR:
    top-level `llvm.func`s) into one `gpu.module` of `gpu.func` kernels and
    `func.func` device functions over memrefs, arith, math, scf, gpu ids,
    barriers, shuffles and atomics, ready for `nabla-differentiate` and every
    `nabla-to-*` pipeline (see docs/Frontends.md):

    - kernels are the functions with the `ptx_kernel`, `amdgpu_kernel` or
      `spir_kernel` calling convention (or `nvvm.kernel`/`rocdl.kernel`);
      they keep their LLVM names;
    - every pointer is traced to its object (a parameter, a field of a
      `byval` struct parameter, an `alloca`, an `addrspace(3)` global, a
      host global) and becomes an element offset into that object's memref,
      typed by the accesses; `byval` structs are flattened into their fields;
    - special registers, barriers, shuffles, atomics, LLVM math intrinsics and
      libdevice/OCML calls become `gpu`, `memref` and `math` ops;
    - calls of `__enzyme_autodiff*` / `__enzyme_fwddiff*` with Enzyme's
      activity markers become `nabla.autodiff` / `nabla.fwddiff`;
    - control flow is lifted to `scf`.

    What cannot be raised (inline assembly, indirect calls, a pointer whose
    object is not known, an object accessed with two element types, unknown
    calls and intrinsics, recursion) is a located error. Modules without
    top-level `llvm.func` definitions are left unchanged.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string", [{"kernels"}],
           "Name of the gpu.module that receives the raised functions">,
    Option<"kernel", "kernel", "std::string", [{""}],
           "Raise only this kernel and what it reaches (nabla-run: errors "
           "in other kernels of the file do not matter)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect",
    "mlir::func::FuncDialect", "mlir::gpu::GPUDialect",
    "mlir::math::MathDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect", "nabla::NablaDialect",
    "nabla::reloc::RelocDialect",
    "mlir::ub::UBDialect",
  ];
}

#endif // NABLA_CONVERSION_PASSES_TD
