// gpu.alloc host_shared, synchronous and asynchronous: memory both the host
// and kernels use directly (on Vulkan every allocation is host-visible).
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// CHECK: 2000
// CHECK-NEXT: 21
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %thousand = arith.constant 1000 : i32
  %shared = gpu.alloc host_shared () : memref<2xi32>
  memref.store %thousand, %shared[%c1] : memref<2xi32>
  %t0 = gpu.wait async
  %other, %t1 = gpu.alloc async [%t0] host_shared () : memref<1xi32>
  gpu.wait [%t1]
  %twenty = arith.constant 20 : i32
  memref.store %twenty, %other[%c0] : memref<1xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %shared[%c1] : memref<2xi32>
    %w = arith.addi %v, %v : i32
    memref.store %w, %shared[%c1] : memref<2xi32>
    %u = memref.load %other[%c0] : memref<1xi32>
    %one = arith.constant 1 : i32
    %x = arith.addi %u, %one : i32
    memref.store %x, %other[%c0] : memref<1xi32>
    gpu.terminator
  }
  %result = memref.load %shared[%c1] : memref<2xi32>
  vector.print %result : i32
  %r2 = memref.load %other[%c0] : memref<1xi32>
  vector.print %r2 : i32
  gpu.dealloc %shared : memref<2xi32>
  gpu.dealloc %other : memref<1xi32>
  return
}
