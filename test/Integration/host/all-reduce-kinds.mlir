// gpu.all_reduce of every kind with an `op` attribute, on 13 threads (not a
// multiple of any subgroup size), host memory registered with the runtime.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// add, mul, and, or, xor, minsi, maxsi, minui, maxui
// CHECK: [91,  1296,  0,  15,  1,  -6,  6,  0,  -1]
// minnumf, maxnumf, minimumf, maximumf
// CHECK: [-3.25,  2.75,  -3.25,  2.75]
func.func @main() {
  %ints = memref.alloc() : memref<9xi32>
  %floats = memref.alloc() : memref<4xf32>
  %ints_any = memref.cast %ints : memref<9xi32> to memref<*xi32>
  %floats_any = memref.cast %floats : memref<4xf32> to memref<*xf32>
  gpu.host_register %ints_any : memref<*xi32>
  gpu.host_register %floats_any : memref<*xf32>
  %c1 = arith.constant 1 : index
  %c13 = arith.constant 13 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c13, %sy = %c1, %sz = %c1) {
    %t = arith.index_cast %tx : index to i32
    %one = arith.constant 1 : i32
    %three = arith.constant 3 : i32
    %six = arith.constant 6 : i32
    %v = arith.addi %t, %one : i32
    %m = arith.remui %t, %three : i32
    %small = arith.addi %m, %one : i32
    %signed = arith.subi %t, %six : i32
    %add = gpu.all_reduce add %v uniform {} : (i32) -> i32
    %mul = gpu.all_reduce mul %small uniform {} : (i32) -> i32
    %and = gpu.all_reduce and %v uniform {} : (i32) -> i32
    %or = gpu.all_reduce or %v uniform {} : (i32) -> i32
    %xor = gpu.all_reduce xor %v uniform {} : (i32) -> i32
    %minsi = gpu.all_reduce minsi %signed uniform {} : (i32) -> i32
    %maxsi = gpu.all_reduce maxsi %signed uniform {} : (i32) -> i32
    %minui = gpu.all_reduce minui %signed uniform {} : (i32) -> i32
    %maxui = gpu.all_reduce maxui %signed uniform {} : (i32) -> i32
    %f = arith.sitofp %signed : i32 to f32
    %half = arith.constant 0.5 : f32
    %shift = arith.constant -0.25 : f32
    %fh = arith.mulf %f, %half : f32
    %x = arith.addf %fh, %shift : f32
    %minnumf = gpu.all_reduce minnumf %x uniform {} : (f32) -> f32
    %maxnumf = gpu.all_reduce maxnumf %x uniform {} : (f32) -> f32
    %minimumf = gpu.all_reduce minimumf %x uniform {} : (f32) -> f32
    %maximumf = gpu.all_reduce maximumf %x uniform {} : (f32) -> f32
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %i0 = arith.constant 0 : index
      %i1 = arith.constant 1 : index
      %i2 = arith.constant 2 : index
      %i3 = arith.constant 3 : index
      %i4 = arith.constant 4 : index
      %i5 = arith.constant 5 : index
      %i6 = arith.constant 6 : index
      %i7 = arith.constant 7 : index
      %i8 = arith.constant 8 : index
      memref.store %add, %ints[%i0] : memref<9xi32>
      memref.store %mul, %ints[%i1] : memref<9xi32>
      memref.store %and, %ints[%i2] : memref<9xi32>
      memref.store %or, %ints[%i3] : memref<9xi32>
      memref.store %xor, %ints[%i4] : memref<9xi32>
      memref.store %minsi, %ints[%i5] : memref<9xi32>
      memref.store %maxsi, %ints[%i6] : memref<9xi32>
      memref.store %minui, %ints[%i7] : memref<9xi32>
      memref.store %maxui, %ints[%i8] : memref<9xi32>
      memref.store %minnumf, %floats[%i0] : memref<4xf32>
      memref.store %maxnumf, %floats[%i1] : memref<4xf32>
      memref.store %minimumf, %floats[%i2] : memref<4xf32>
      memref.store %maximumf, %floats[%i3] : memref<4xf32>
    }
    gpu.terminator
  }
  call @printMemrefI32(%ints_any) : (memref<*xi32>) -> ()
  call @printMemrefF32(%floats_any) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)
