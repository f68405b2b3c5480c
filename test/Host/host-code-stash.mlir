// nabla-set-aside-host-code moves host code next to stand-in binaries;
// nabla-restore-host-code moves it back.
// RUN: nabla-opt %s --nabla-set-aside-host-code | FileCheck %s --check-prefix=ASIDE
// RUN: nabla-opt %s --nabla-set-aside-host-code --nabla-restore-host-code | FileCheck %s --check-prefix=BACK

// ASIDE: gpu.module @kernels
// ASIDE: module @nabla_host_code attributes {gpu.container_module}
// ASIDE-NEXT: gpu.binary @kernels
// ASIDE: func.func @main
// ASIDE: gpu.launch_func @kernels::@k
// BACK-NOT: nabla_host_code
// BACK: gpu.module @kernels
// BACK: func.func @main
// BACK-NOT: gpu.binary
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<?x?xf32>) kernel {
      gpu.return
    }
  }
  func.func @main(%a: memref<?x?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x?xf32>)
    return
  }
}
