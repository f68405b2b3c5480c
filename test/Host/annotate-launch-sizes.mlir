// nabla-annotate-launch-sizes: kernels take the sizes their launches agree on.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-annotate-launch-sizes | FileCheck %s

// Two launches with the same constant sizes: both sizes become known.
// CHECK-LABEL: gpu.module @agree
// CHECK: gpu.func @k() kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 2, 1, 1>}
module attributes {gpu.container_module} {
  gpu.module @agree {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @agree::@k blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
    gpu.launch_func @agree::@k blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
    return
  }
}

// -----

// Block sizes differ, grids agree; a run-time size leaves the kernel as is.
// CHECK-LABEL: gpu.module @differ
// CHECK: gpu.func @k() kernel attributes {known_grid_size = array<i32: 1, 1, 1>}
// CHECK: gpu.func @dynamic() kernel {
module attributes {gpu.container_module} {
  gpu.module @differ {
    gpu.func @k() kernel {
      gpu.return
    }
    gpu.func @dynamic() kernel {
      gpu.return
    }
  }
  func.func @main(%n: index) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @differ::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    gpu.launch_func @differ::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
    gpu.launch_func @differ::@dynamic blocks in (%n, %c1, %c1) threads in (%n, %c1, %c1)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @contradict {
    // expected-note @below {{kernel declared here}}
    gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    // expected-error @below {{launches kernel @k with block size 64, 1, 1, but the kernel declares known_block_size 32, 1, 1}}
    gpu.launch_func @contradict::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
    return
  }
}

// -----

// A kernel viewing dynamic shared memory gets the bytes its launches agree
// on (SPIR-V and Metal compile them in).
// CHECK-LABEL: gpu.module @shared
// CHECK: gpu.func @k() kernel attributes {known_block_size = array<i32: 4, 1, 1>, known_grid_size = array<i32: 1, 1, 1>, nabla.dynamic_shared_memory = 16 : i64}
module attributes {gpu.container_module} {
  gpu.module @shared {
    gpu.func @k() kernel {
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %bytes = arith.constant 16 : i32
    gpu.launch_func @shared::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) dynamic_shared_memory_size %bytes
    gpu.launch_func @shared::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) dynamic_shared_memory_size %bytes
    return
  }
}
