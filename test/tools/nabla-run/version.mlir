// nabla-run --version names the tool, Nabla's version and the LLVM/MLIR it
// links, and exits 0, wherever the flag appears.
// RUN: nabla-run --version | FileCheck %s
// RUN: nabla-run some.mlir --kernel=k --version | FileCheck %s
// CHECK: nabla-run (Nabla) {{[0-9]+\.[0-9]+\.[0-9]+$}}
// CHECK-NEXT: LLVM/MLIR {{[0-9]+}}
