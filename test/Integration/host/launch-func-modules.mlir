// Explicit gpu.launch_func of kernels in two gpu.modules, from a function the
// entry calls: scalar arguments of every kind, a dynamic 2-D memref (passed
// as a buffer plus size bindings), and a strided view of host memory.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// @scale: a[i][j] = 2.5 * (10 * i + j) + 3 (index n=3, i32 3, i64 -1, f64 0.5)
// CHECK: {{\[}}[3,   5.5,   8,   10.5],
// CHECK-NEXT: [28,   30.5,   33,   35.5],
// CHECK-NEXT: [53,   55.5,   58,   60.5]]
// @column: column 1 of a 3x4 matrix (stride 4, offset 1) set to its row.
// CHECK: {{\[}}[0,   100,   0,   0],
// CHECK-NEXT: [0,   101,   0,   0],
// CHECK-NEXT: [0,   102,   0,   0]]
module attributes {gpu.container_module} {
  gpu.module @arithmetic {
    gpu.func @scale(%a: memref<?x?xf32>, %factor: f32, %rows: index,
                    %bias: i32, %shift: i64, %half: f64) kernel {
      %i = gpu.block_id x
      %j = gpu.thread_id x
      %inside = arith.cmpi ult, %i, %rows : index
      scf.if %inside {
        %v = memref.load %a[%i, %j] : memref<?x?xf32>
        %s = arith.mulf %v, %factor : f32
        %b = arith.sitofp %bias : i32 to f32
        %n = arith.sitofp %shift : i64 to f32
        %h = arith.truncf %half : f64 to f32
        %t0 = arith.addf %s, %b : f32
        %t1 = arith.addf %t0, %n : f32
        %t2 = arith.addf %t1, %h : f32
        %t3 = arith.addf %t2, %h : f32
        memref.store %t3, %a[%i, %j] : memref<?x?xf32>
      }
      gpu.return
    }
  }
  gpu.module @views {
    gpu.func @column(%c: memref<3xf32, strided<[4], offset: 1>>) kernel {
      %i = gpu.thread_id x
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %hundred = arith.constant 100.0 : f32
      %v = arith.addf %f, %hundred : f32
      memref.store %v, %c[%i] : memref<3xf32, strided<[4], offset: 1>>
      gpu.return
    }
  }

  func.func @launch(%a: memref<?x?xf32>, %m: memref<3x4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %rows = memref.dim %a, %c0 : memref<?x?xf32>
    %cols = memref.dim %a, %c1 : memref<?x?xf32>
    %factor = arith.constant 2.5 : f32
    %bias = arith.constant 3 : i32
    %shift = arith.constant -1 : i64
    %half = arith.constant 0.5 : f64
    gpu.launch_func @arithmetic::@scale blocks in (%rows, %c1, %c1)
        threads in (%cols, %c1, %c1)
        args(%a : memref<?x?xf32>, %factor : f32, %rows : index,
             %bias : i32, %shift : i64, %half : f64)
    %column = memref.subview %m[0, 1] [3, 1] [1, 1]
        : memref<3x4xf32> to memref<3xf32, strided<[4], offset: 1>>
    gpu.launch_func @views::@column blocks in (%c1, %c1, %c1)
        threads in (%c3, %c1, %c1)
        args(%column : memref<3xf32, strided<[4], offset: 1>>)
    return
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %a = memref.alloc(%c3, %c4) : memref<?x?xf32>
    %m = memref.alloc() : memref<3x4xf32>
    %zero = arith.constant 0.0 : f32
    %ten = arith.constant 10 : index
    scf.for %i = %c0 to %c3 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %i10 = arith.muli %i, %ten : index
        %k = arith.addi %i10, %j : index
        %ki = arith.index_cast %k : index to i32
        %kf = arith.sitofp %ki : i32 to f32
        memref.store %kf, %a[%i, %j] : memref<?x?xf32>
        memref.store %zero, %m[%i, %j] : memref<3x4xf32>
      }
    }
    call @launch(%a, %m) : (memref<?x?xf32>, memref<3x4xf32>) -> ()
    %a_any = memref.cast %a : memref<?x?xf32> to memref<*xf32>
    %m_any = memref.cast %m : memref<3x4xf32> to memref<*xf32>
    call @printMemrefF32(%a_any) : (memref<*xf32>) -> ()
    call @printMemrefF32(%m_any) : (memref<*xf32>) -> ()
    return
  }

  func.func private @printMemrefF32(memref<*xf32>)
}
