// nabla-compile --version names the tool, Nabla's version and the LLVM/MLIR
// it was built with, and exits 0 (without the otherwise required flags).
// RUN: nabla-compile --version | FileCheck %s
// CHECK: nabla-compile (Nabla) {{[0-9]+\.[0-9]+\.[0-9]+$}}
// CHECK-NEXT: LLVM/MLIR 22.
