// nabla-detect-loop-limit: a kernel that loops records, before every back
// edge, whether the loop goes on (a for loop's next index below its bound, a
// while loop's condition) in the thread's word of a workgroup attribution,
// cleared before the loop, and ORs it into a private flag after the loop; a
// thread whose flag is set prints the record the Vulkan launcher turns into
// an error on lavapipe. Kernels without loops, device functions and
// threads=0 are left alone.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(nabla-detect-loop-limit{threads=64}))" | FileCheck %s
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(nabla-detect-loop-limit{threads=0}))" | FileCheck %s --check-prefix=OFF
// With the device's limit, kernels whose loops provably stay under it (a
// block-stride loop to a constant, nested in a constant loop: at most
// 64 + 64 * 16 iterations) are left alone; a 1000 x 100 nest and run-time
// bounds are not.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(nabla-detect-loop-limit{threads=64 limit=65535}))" | FileCheck %s --check-prefix=LIMIT

// CHECK-LABEL: gpu.func @loops
// CHECK-SAME: workgroup(%[[WORDS:[a-z0-9]+]] : memref<64xi32, #gpu.address_space<workgroup>>)
// CHECK: %[[CUT:.*]] = memref.alloca() : memref<1xi32>
// CHECK: memref.store %{{.*}}, %[[WORDS]][%[[OWN:[a-z0-9]+]]]
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N:[a-z0-9]+]] step %[[STEP:[a-z0-9]+]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[I]], %[[STEP]] : index
// CHECK: %[[ON:.*]] = arith.cmpi slt, %[[NEXT]], %[[N]] : index
// CHECK: %[[W:.*]] = arith.extui %[[ON]] : i1 to i32
// CHECK: memref.store %[[W]], %[[WORDS]][%[[OWN]]]
// CHECK-NEXT: scf.yield
// CHECK: %[[HELD:.*]] = memref.load %[[WORDS]][%[[OWN]]]
// CHECK: %[[OLD:.*]] = memref.load %[[CUT]]
// CHECK: %[[NEW:.*]] = arith.ori %[[OLD]], %[[HELD]] : i32
// CHECK: memref.store %[[NEW]], %[[CUT]]
// CHECK: scf.while
// CHECK: %[[MORE:.*]] = arith.cmpi ult
// CHECK: arith.extui %[[MORE]] : i1 to i32
// CHECK: memref.store %{{.*}}, %[[WORDS]][%[[OWN]]]
// CHECK-NEXT: scf.condition(%[[MORE]])
// CHECK: memref.load %[[WORDS]][%[[OWN]]]
// CHECK: memref.store %{{.*}}, %[[CUT]]
// CHECK: %[[FLAG:.*]] = memref.load %[[CUT]]
// CHECK: %[[REACHED:.*]] = arith.cmpi ne, %[[FLAG]], %{{.*}} : i32
// CHECK: scf.if %[[REACHED]] {
// CHECK-NEXT: gpu.printf "nabla-runtime: loop limit: the device ended a thread's loops before they were done\0A"
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @straight
// CHECK-NOT: workgroup(
// CHECK-NOT: gpu.printf
// CHECK-LABEL: func.func @helper
// CHECK-NOT: gpu.printf

// OFF-NOT: workgroup(
// OFF-NOT: gpu.printf

// LIMIT-LABEL: gpu.func @loops
// LIMIT-SAME: workgroup(
// LIMIT: gpu.printf
// LIMIT-LABEL: gpu.func @bounded
// LIMIT-NOT: workgroup(
// LIMIT-NOT: gpu.printf
// LIMIT-LABEL: gpu.func @long_nest
// LIMIT-SAME: workgroup(
// LIMIT: gpu.printf
gpu.module @kernels {
  gpu.func @loops(%A: memref<?xf32>, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f32) {
      %x = memref.load %A[%i] : memref<?xf32>
      %t = arith.addf %s, %x : f32
      scf.yield %t : f32
    }
    %w = scf.while (%j = %c0) : (index) -> index {
      %more = arith.cmpi ult, %j, %n : index
      scf.condition(%more) %j : index
    } do {
    ^bb0(%j: index):
      %next = arith.addi %j, %c1 : index
      scf.yield %next : index
    }
    memref.store %sum, %A[%c0] : memref<?xf32>
    gpu.return
  }
  gpu.func @bounded(%A: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %t = gpu.thread_id x
    %n = gpu.block_dim x
    %one = arith.constant 1.0 : f32
    scf.for %j = %t to %c64 step %n {
      memref.store %one, %A[%j] : memref<?xf32>
    }
    scf.for %k = %c0 to %c16 step %c1 {
      scf.for %j = %t to %c64 step %n {
        memref.store %one, %A[%j] : memref<?xf32>
      }
    }
    gpu.return
  }
  gpu.func @long_nest(%A: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c100 = arith.constant 100 : index
    %c1000 = arith.constant 1000 : index
    %one = arith.constant 1.0 : f32
    scf.for %i = %c0 to %c1000 step %c1 {
      scf.for %j = %c0 to %c100 step %c1 {
        memref.store %one, %A[%j] : memref<?xf32>
      }
    }
    gpu.return
  }
  gpu.func @straight(%A: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    memref.store %one, %A[%c0] : memref<?xf32>
    gpu.return
  }
  func.func @helper(%A: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %A[%i] : memref<?xf32>
    }
    return
  }
}
