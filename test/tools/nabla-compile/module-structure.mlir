// nabla-compile compiles the gpu.modules of one top-level module and writes
// only inside -o: a nested module or a second top-level module (silently
// not compiled, exit 0, before) and a module name that is a path are located
// errors; out-of-range sizes are usage errors.
// RUN: rm -rf %t && split-file %s %t && mkdir -p %t/work
// RUN: %expect_exit 1 nabla-compile %t/nested.mlir --target=spirv --block=4 -o %t/out1 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: %expect_exit 1 nabla-compile %t/two.mlir --target=nvvm -o %t/out2 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: cd %t/work && %expect_exit 1 nabla-compile %t/path.mlir --target=spirv --block=4 -o out 2>&1 | FileCheck %s --check-prefix=PATH
// RUN: not ls %t/x.spv %t/work/x.spv
// RUN: %expect_exit 2 nabla-compile %t/path.mlir --target=spirv --block=4294967297 -o %t/out3 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: %expect_exit 2 nabla-compile %t/path.mlir --target=spirv --block=4 --opt-level=9 -o %t/out3 2>&1 | FileCheck %s --check-prefix=OPT

// NESTED: error: 'gpu.module' op must be a direct child of the top-level module: a nested module is not compiled
// PATH: path.mlir:2:3: error: 'gpu.module' op name '../x' cannot name an output file
// BLOCK: nabla-compile: workgroup size 4294967297 is out of range (1 to 1024)
// OPT: nabla-compile: --opt-level must be 0 to 3

//--- nested.mlir
module {
  module attributes {gpu.container_module} {
    gpu.module @m {
      gpu.func @k(%A: memref<?xf32>) kernel {
        gpu.return
      }
    }
  }
}
//--- two.mlir
module attributes {gpu.container_module} {
  gpu.module @a {
    gpu.func @k(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
module attributes {gpu.container_module} {
  gpu.module @b {
    gpu.func @k2(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
//--- path.mlir
module attributes {gpu.container_module} {
  gpu.module @"../x" {
    gpu.func @k(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
