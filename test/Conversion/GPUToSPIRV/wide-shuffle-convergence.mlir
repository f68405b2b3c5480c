// nabla-convert-gpu-to-spirv: a warp shuffle that a device with narrower
// subgroups exchanges through workgroup memory between barriers needs every
// thread of the block, so a branch only some threads take around it
// (`if (warp == 0)`) runs in every thread under its predicate: the load is
// guarded, the exchange's barriers are not in any branch. A device whose
// subgroups hold the warp keeps the branch.
// RUN: nabla-opt %s -split-input-file --nabla-convert-gpu-to-spirv="workgroup-size=64 subgroup-size=32" | FileCheck %s --check-prefix=WARP
// RUN: nabla-opt %s -split-input-file --nabla-convert-gpu-to-spirv="workgroup-size=64 subgroup-size=8" | FileCheck %s --check-prefix=NARROW

// WARP-LABEL: spirv.func @first_warp
// WARP: spirv.mlir.selection {
// WARP: spirv.GroupNonUniformShuffleXor
// WARP: spirv.mlir.merge
// NARROW-LABEL: spirv.func @first_warp
// NARROW: spirv.mlir.selection {
// NARROW: spirv.Load "StorageBuffer"
// NARROW: spirv.mlir.merge
// NARROW-NEXT: }
// NARROW-NOT: spirv.mlir.selection
// NARROW: spirv.ControlBarrier <Workgroup>
// NARROW: spirv.Store "Workgroup"
// NARROW: spirv.ControlBarrier <Workgroup>
// NARROW: spirv.Load "Workgroup"
// NARROW: spirv.mlir.selection {
// NARROW: spirv.Store "StorageBuffer"
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @first_warp(%X: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %c0 = arith.constant 0 : index
      %warp = arith.divui %t, %c32 : index
      %first = arith.cmpi eq, %warp, %c0 : index
      scf.if %first {
        %v = memref.load %X[%t] : memref<?xf32>
        %o = arith.constant 16 : i32
        %w = arith.constant 32 : i32
        %s, %ok = gpu.shuffle xor %v, %o, %w : f32
        %sum = arith.addf %v, %s : f32
        memref.store %sum, %X[%t] : memref<?xf32>
      }
      gpu.return
    }
  }
}

// -----
// A loop whose trip count a thread reads from memory cannot run in every
// thread under a predicate: the branch keeps its former lowering (best
// effort; lavapipe runs it).
// NARROW-LABEL: spirv.func @data_loop
// NARROW: spirv.mlir.selection {
// NARROW: spirv.mlir.loop {
// NARROW: spirv.ControlBarrier <Workgroup>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @data_loop(%X: memref<?xf32>, %N: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %some = arith.cmpi ult, %t, %c32 : index
      scf.if %some {
        %n = memref.load %N[%t] : memref<?xi32>
        %v = memref.load %X[%t] : memref<?xf32>
        %r:2 = scf.while (%i = %c0_i32, %a = %v) : (i32, f32) -> (i32, f32) {
          %more = arith.cmpi slt, %i, %n : i32
          scf.condition(%more) %i, %a : i32, f32
        } do {
        ^bb0(%i: i32, %a: f32):
          %o = arith.constant 1 : i32
          %w = arith.constant 32 : i32
          %s, %ok = gpu.shuffle xor %a, %o, %w : f32
          %next = arith.addi %i, %c1_i32 : i32
          scf.yield %next, %s : i32, f32
        }
        memref.store %r#1, %X[%t] : memref<?xf32>
      }
      gpu.return
    }
  }
}
