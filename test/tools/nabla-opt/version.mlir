// nabla-opt --version names the tool, Nabla's version and the LLVM/MLIR it
// was built with, and exits 0.
// RUN: nabla-opt --version | FileCheck %s
// CHECK: nabla-opt (Nabla) {{[0-9]+\.[0-9]+\.[0-9]+$}}
// CHECK-NEXT: LLVM/MLIR 22.
