// Host code in the idioms of upstream's ROCm and CUDA integration tests:
// registered host memory viewed from the device through
// mgpuMemGetDeviceMemRef1dFloat / Int32 (ROCm's wrappers), kernels given those
// views, and vector ops in host code (vector.transfer_read, vector.print of
// whole vectors, vector.splat into memref stores), on every pipeline.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s
// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" -o /dev/null
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" -o /dev/null
// RUN: nabla-opt %s --nabla-to-metal -o /dev/null

// CHECK: ( 2.5, 3.5, 4.5, 5.5, 6.5 )
// CHECK: ( 10, 11, 12, 13, 14 )
// CHECK: ( 2.5, 3.5, 4.5, 0 )
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %a = memref.alloc() : memref<5xf32>
  %b = memref.alloc() : memref<5xi32>
  scf.for %i = %c0 to %c5 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %a[%i] : memref<5xf32>
    memref.store %ii, %b[%i] : memref<5xi32>
  }
  %ua = memref.cast %a : memref<5xf32> to memref<*xf32>
  %ub = memref.cast %b : memref<5xi32> to memref<*xi32>
  gpu.host_register %ua : memref<*xf32>
  gpu.host_register %ub : memref<*xi32>
  %da = memref.cast %a : memref<5xf32> to memref<?xf32>
  %db = memref.cast %b : memref<5xi32> to memref<?xi32>
  %deva = call @mgpuMemGetDeviceMemRef1dFloat(%da) : (memref<?xf32>) -> memref<?xf32>
  %devb = call @mgpuMemGetDeviceMemRef1dInt32(%db) : (memref<?xi32>) -> memref<?xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c5, %sy = %c1, %sz = %c1) {
    %v = memref.load %deva[%tx] : memref<?xf32>
    %h = arith.constant 2.5 : f32
    %w = arith.addf %v, %h : f32
    memref.store %w, %deva[%tx] : memref<?xf32>
    %n = memref.load %devb[%tx] : memref<?xi32>
    %ten = arith.constant 10 : i32
    %m = arith.addi %n, %ten : i32
    memref.store %m, %devb[%tx] : memref<?xi32>
    gpu.terminator
  }
  %pad = arith.constant 0.0 : f32
  %pad_i = arith.constant 0 : i32
  %va = vector.transfer_read %a[%c0], %pad : memref<5xf32>, vector<5xf32>
  vector.print %va : vector<5xf32>
  %vb = vector.transfer_read %b[%c0], %pad_i : memref<5xi32>, vector<5xi32>
  vector.print %vb : vector<5xi32>
  // A masked read past the end: the padding fills the lane.
  %c2 = arith.constant 2 : index
  %partial = vector.transfer_read %a[%c2], %pad : memref<5xf32>, vector<4xf32>
  %shifted = vector.transfer_read %a[%c0], %pad : memref<5xf32>, vector<4xf32>
  %tail = vector.extract %partial[3] : f32 from vector<4xf32>
  %mixed = vector.insert %tail, %shifted[3] : f32 into vector<4xf32>
  vector.print %mixed : vector<4xf32>
  return
}

func.func private @mgpuMemGetDeviceMemRef1dFloat(memref<?xf32>) -> memref<?xf32>
func.func private @mgpuMemGetDeviceMemRef1dInt32(memref<?xi32>) -> memref<?xi32>
