// nabla-lower-all-reduce: workgroup reductions become subgroup reductions
// whose partials meet in a kernel scratch attribution.
// RUN: nabla-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(nabla-lower-all-reduce{subgroup-size=32}))" -verify-diagnostics | FileCheck %s
// RUN: nabla-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(nabla-lower-all-reduce{subgroup-builtins=true}))" -verify-diagnostics | FileCheck %s --check-prefix=BUILTINS

// A reduction in a device function moves into the kernel, whose known block
// size (128 threads, 4 subgroups of 32) sizes one scratch for both.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: workgroup(%[[SCRATCH:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[P:.*]] = gpu.subgroup_reduce maximumf
// CHECK: %[[SG:.*]] = arith.divui %{{.*}}, %c32
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[P]], %[[SCRATCH]][%[[SG]]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK: gpu.barrier
// CHECK: gpu.subgroup_reduce add %{{.*}} uniform
// CHECK: arith.addf
// CHECK-NOT: gpu.all_reduce
// CHECK-NOT: func.func @f
// Vulkan subgroups need not follow the linear thread id: a slot per thread
// and a tree of halving strides (64, 32, ..., 1 for 128 slots).
// BUILTINS-LABEL: gpu.func @k
// BUILTINS-SAME: memref<128xf32, #gpu.address_space<workgroup>>
// BUILTINS-NOT: gpu.subgroup_id
// BUILTINS: memref.store %{{.*}}, %[[SLOTS:.*]][%[[T:.*]]] : memref<128xf32
// BUILTINS: gpu.barrier
// BUILTINS: scf.for %{{.*}} = %c0 to %c7 step %c1
// BUILTINS: arith.shrui %c128
// BUILTINS: scf.if
// BUILTINS: arith.maximumf
// BUILTINS: gpu.barrier
// BUILTINS: memref.load %[[SLOTS]][%c0]
gpu.module @kernels {
  func.func @f(%x: f32) -> f32 {
    %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
    return %s : f32
  }
  gpu.func @k(%X: memref<?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %i = gpu.thread_id x
    %x = memref.load %X[%i] : memref<?xf32>
    %m = gpu.all_reduce maximumf %x {} : (f32) -> f32
    %s = func.call @f(%m) : (f32) -> f32
    memref.store %s, %X[%i] : memref<?xf32>
    gpu.return
  }
}

// -----

// Without a known block size the scratch holds 1024 / 32 partials.
// CHECK-LABEL: gpu.func @unknown
// CHECK-SAME: memref<32xi32, #gpu.address_space<workgroup>>
gpu.module @kernels {
  gpu.func @unknown(%x: i32, %out: memref<1xi32>) kernel {
    %r = gpu.all_reduce minsi %x {} : (i32) -> i32
    %c0 = arith.constant 0 : index
    memref.store %r, %out[%c0] : memref<1xi32>
    gpu.return
  }
}

// -----

// A custom combiner region is inlined into the tree's combining step.
// CHECK-LABEL: gpu.func @custom
// CHECK-SAME: memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: %[[M:.*]] = arith.mulf
// CHECK: arith.addf %[[M]]
// CHECK-NOT: gpu.all_reduce
gpu.module @kernels {
  gpu.func @custom(%x: f32, %out: memref<1xf32>) kernel {
    %r = gpu.all_reduce %x {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %m, %b : f32
      gpu.yield %s : f32
    } : (f32) -> f32
    %c0 = arith.constant 0 : index
    memref.store %r, %out[%c0] : memref<1xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @blocks(%x: f32) kernel {
    // expected-error @+1 {{'gpu.all_reduce' op with a multi-block combiner region is not supported}}
    %r = gpu.all_reduce %x {
    ^bb0(%a: f32, %b: f32):
      cf.br ^bb1
    ^bb1:
      gpu.yield %a : f32
    } : (f32) -> f32
    gpu.return
  }
}
