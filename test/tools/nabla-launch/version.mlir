// nabla-launch --version names the tool and Nabla's version (it links no
// LLVM) and exits 0, wherever the flag appears.
// RUN: nabla-launch --version | FileCheck %s
// RUN: nabla-launch some-dir --kernel=k --version | FileCheck %s
// CHECK: nabla-launch (Nabla) {{[0-9]+\.[0-9]+\.[0-9]+$}}
// CHECK-NOT: LLVM
