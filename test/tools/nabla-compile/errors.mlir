// nabla-compile exit status: 2 for usage errors, 1 for compile errors, with a
// message each time and never a crash.
// RUN: %expect_exit 2 nabla-compile %s --target=cuda -o %t 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: %expect_exit 2 nabla-compile %s --target=spirv --abi=v9 -o %t 2>&1 | FileCheck %s --check-prefix=ABI
// RUN: %expect_exit 2 nabla-compile %s --target=spirv 2>&1 | FileCheck %s --check-prefix=NOOUT
// RUN: %expect_exit 2 nabla-compile %s --target=spirv --block=1,2,3,4 -o %t 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: %expect_exit 1 nabla-compile %t.missing.mlir --target=spirv -o %t 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: %expect_exit 1 nabla-compile %s --target=nvvm --chip=gfx90a -o %t 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: %expect_exit 1 nabla-compile %S/../nabla-opt/malformed.mlir --target=spirv -o %t 2>&1 | FileCheck %s --check-prefix=PARSE

// TARGET: unknown --target 'cuda' (expected nvvm, rocdl, spirv or metal)
// ABI: unknown --abi 'v9' (expected v1 or v2)
// NOOUT: for the -o option: must be specified at least once!
// NOOUT-NOT: Stack dump
// BLOCK: --workgroup-size takes at most 3 values
// MISSING: cannot open input file
// CHIP: error: invalid chip 'gfx90a' for the nvvm target
// PARSE: malformed.mlir:{{[0-9]+}}:{{[0-9]+}}: error: expected
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
