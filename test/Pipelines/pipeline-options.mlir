// Options of Nabla's pipelines and passes, checked before any pass runs: a
// mistyped name gets the nearest valid one and the list (upstream printed
// "<Pass-Options-Parser>: no such option", and for a pipeline only "failed
// to add"), a bad value its reason (an unknown abi surfaced after
// differentiation, with the module printed), and no failure prints the
// module unless --mlir-print-op-on-diagnostic asks.
// RUN: not nabla-opt %s --nabla-to-spirv="workgroup_size=64" 2>&1 | FileCheck %s --check-prefix=TYPO
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{remark=1})" 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not nabla-opt %s --nabla-differentiate="remark=true" 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not nabla-opt %s --pass-pipeline="builtin.module(reloc-lower{stategy=table})" 2>&1 | FileCheck %s --check-prefix=RELOC
// RUN: not nabla-opt %s --nabla-to-spirv="abi=v3" 2>&1 | FileCheck %s --check-prefix=ABI
// RUN: not nabla-opt %s --nabla-to-nvvm="chip=sm80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not nabla-opt %s --nabla-to-rocdl="opt-level=4" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not nabla-opt %s --nabla-to-spirv="reloc-strategy=baked" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not nabla-opt %s --nabla-to-spirv="subgroup-size=48" 2>&1 | FileCheck %s --check-prefix=SUBGROUP
// A pass's error on the module: the diagnostic alone, or with the IR if asked.
// RUN: not nabla-opt %s --nabla-check-target-support="target=spirv abi=v3" 2>&1 | FileCheck %s --check-prefix=NODUMP
// RUN: not nabla-opt %s --nabla-check-target-support="target=spirv abi=v3" --mlir-print-op-on-diagnostic 2>&1 | FileCheck %s --check-prefix=DUMP

// TYPO: error: nabla-to-spirv has no option 'workgroup_size'; did you mean 'workgroup-size'? (its options: abi, dynamic-shared-memory, emulate-float-atomics, host-lowering, loop-limit, opt-level, reloc-strategy, subgroup-size, workgroup-size)
// LIST: error: nabla-to-metal has no option 'remark' (its options: abi, dynamic-shared-memory, emulate-float-atomics, host-lowering, msl-version, opt-level, reloc-strategy, subgroup-size, workgroup-size)
// PASS: error: nabla-differentiate has no option 'remark'; did you mean 'remarks'? (its options: checkpoints, deterministic, remarks, tape-budget)
// RELOC: error: reloc-lower has no option 'stategy'; did you mean 'strategy'?
// ABI: error: nabla-to-spirv: unknown abi 'v3' (expected v1 or v2)
// CHIP: error: nabla-to-nvvm: invalid chip 'sm80' for the nvvm target (expected sm_NN, e.g. sm_90)
// OPT: error: nabla-to-rocdl: opt-level 4 is out of range (0 to 3)
// STRATEGY: error: nabla-to-spirv: unknown reloc-strategy 'baked' (expected bake, patch, table, materialize, defer or bake-or-materialize)
// SUBGROUP: error: nabla-to-spirv: subgroup-size 48 is not a power of two from 1 to 128
// NODUMP: pipeline-options.mlir:[[# @LINE + 6]]:1: error: unknown abi 'v3' (expected v1 or v2)
// NODUMP-NOT: see current operation
// DUMP: error: unknown abi 'v3' (expected v1 or v2)
// DUMP-NEXT: module attributes
// DUMP: note: see current operation

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%X: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
