// nabla-bind-module-globals: globals SPIR-V cannot hold become trailing
// buffer parameters of the kernels that read them (module order), recorded
// with their contents in nabla.module_globals; small constant 1-D tables,
// relocation records and workgroup memory stay.
// RUN: nabla-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(gpu.module(nabla-bind-module-globals))" | FileCheck %s
// RUN: nabla-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(gpu.module(nabla-bind-module-globals{max-private-elements=2}))" | FileCheck %s --check-prefix=SMALL

// CHECK-LABEL: gpu.module @kernels
// CHECK-SAME: nabla.module_globals = {buffers = [
// CHECK-SAME: {name = "count", type = memref<1xi32>, value = dense<0> : tensor<1xi32>}
// CHECK-SAME: {name = "grid", type = memref<2x2xf32>}
// CHECK-SAME: {constant, name = "big", type = memref<100xf32>, value = dense<5.000000e-01> : tensor<100xf32>}
// CHECK-SAME: kernels = {first = ["count", "big"], second = ["count", "grid"]}
// CHECK-NOT: memref.global {{.*}}@count
// CHECK-NOT: memref.global {{.*}}@grid
// CHECK-NOT: memref.global {{.*}}@big
// CHECK: memref.global "private" constant @small : memref<4xf32>
// CHECK: memref.global "public" @patched : memref<4xf32> {reloc.key = "host.x"}
// CHECK: gpu.func @first(%{{.*}}: memref<?xf32>, %{{.*}}: index, %[[COUNT:.*]]: memref<1xi32> {nabla.module_global = "count"}, %[[BIG:.*]]: memref<100xf32> {nabla.module_global = "big"}) kernel
// CHECK-NOT: memref.get_global @count
// CHECK-NOT: memref.get_global @big
// CHECK: memref.get_global @small
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[COUNT]]
// CHECK: memref.load %[[BIG]]
// CHECK: gpu.func @second(%{{.*}}: memref<?xf32>, %{{.*}}: memref<1xi32> {nabla.module_global = "count"}, %[[GRID:.*]]: memref<2x2xf32> {nabla.module_global = "grid"}) kernel
// CHECK: memref.store %{{.*}}, %[[GRID]]
// CHECK: gpu.func @none(
// CHECK-SAME: memref<4xf32>) kernel

// SMALL: {constant, name = "small", type = memref<4xf32>
// SMALL: kernels = {first = ["count", "big", "small"], second = ["count", "grid"]}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" @count : memref<1xi32> = dense<0>
    memref.global "private" @grid : memref<2x2xf32>
    memref.global "private" constant @big : memref<100xf32> = dense<0.5>
    memref.global "private" constant @small : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    memref.global "public" @patched : memref<4xf32> {reloc.key = "host.x"}
    gpu.func @first(%out: memref<?xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      %count = memref.get_global @count : memref<1xi32>
      %big = memref.get_global @big : memref<100xf32>
      %small = memref.get_global @small : memref<4xf32>
      %t = memref.atomic_rmw addi %one, %count[%c0] : (i32, memref<1xi32>) -> i32
      %a = memref.load %big[%n] : memref<100xf32>
      %b = memref.load %small[%c0] : memref<4xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %out[%c0] : memref<?xf32>
      gpu.return
    }
    gpu.func @second(%out: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %grid = memref.get_global @grid : memref<2x2xf32>
      %count = memref.get_global @count : memref<1xi32>
      %c = memref.load %count[%c0] : memref<1xi32>
      %f = arith.sitofp %c : i32 to f32
      memref.store %f, %grid[%c0, %c0] : memref<2x2xf32>
      memref.store %f, %out[%c0] : memref<?xf32>
      gpu.return
    }
    gpu.func @none(%out: memref<4xf32>) kernel {
      %p = memref.get_global @patched : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A device function reading a global must be inlined into its kernels first.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" @count : memref<1xi32> = dense<0>
    gpu.func @helper() -> i32 {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'memref.get_global' op reads @count outside a kernel: on SPIR-V a module global is a buffer each kernel binds, so the function reading it must be inlined into its kernels}}
      %count = memref.get_global @count : memref<1xi32>
      %v = memref.load %count[%c0] : memref<1xi32>
      gpu.return %v : i32
    }
  }
}
