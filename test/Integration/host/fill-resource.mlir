// A program in the style of upstream's Vulkan runner tests: a module-level
// SPIR-V target environment, a kernel with its entry-point ABI, buffers
// filled by the fillResource helpers libnabla_mgpu exports.
// RUN: nabla-opt %s --nabla-to-spirv | mlir-runner -e main --entry-point-result=void --shared-libs=%nabla_mgpu,%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: nabla-run %s --entry=main | FileCheck %s

// CHECK: [5.5,  5.5,  5.5,  5.5,  5.5,  5.5]
// CHECK: {{\[}}[7,   7,   7],
// CHECK-NEXT: [7,   7,   7]]
module attributes {
  gpu.container_module,
  spirv.target_env = #spirv.target_env<
    #spirv.vce<v1.0, [Shader], [SPV_KHR_storage_buffer_storage_class]>, #spirv.resource_limits<>>
} {
  gpu.module @kernels {
    gpu.func @multiply(%a : memref<6xf32>, %b : memref<6xf32>, %c : memref<6xf32>)
      kernel attributes { spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [1, 1, 1]>} {
      %i = gpu.block_id x
      %x = memref.load %a[%i] : memref<6xf32>
      %y = memref.load %b[%i] : memref<6xf32>
      %z = arith.mulf %x, %y : f32
      memref.store %z, %c[%i] : memref<6xf32>
      gpu.return
    }
  }

  func.func @main() {
    %a = memref.alloc() : memref<6xf32>
    %b = memref.alloc() : memref<6xf32>
    %c = memref.alloc() : memref<6xf32>
    %m = memref.alloc() : memref<2x3xi32>
    %two = arith.constant 2.0 : f32
    %value = arith.constant 2.75 : f32
    %zero = arith.constant 0.0 : f32
    %seven = arith.constant 7 : i32
    %a_any = memref.cast %a : memref<6xf32> to memref<?xf32>
    %b_any = memref.cast %b : memref<6xf32> to memref<?xf32>
    %c_any = memref.cast %c : memref<6xf32> to memref<?xf32>
    %m_any = memref.cast %m : memref<2x3xi32> to memref<?x?xi32>
    call @fillResource1DFloat(%a_any, %two) : (memref<?xf32>, f32) -> ()
    call @fillResource1DFloat(%b_any, %value) : (memref<?xf32>, f32) -> ()
    call @fillResource1DFloat(%c_any, %zero) : (memref<?xf32>, f32) -> ()
    call @fillResource2DInt(%m_any, %seven) : (memref<?x?xi32>, i32) -> ()
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    gpu.launch_func @kernels::@multiply
        blocks in (%c6, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%a : memref<6xf32>, %b : memref<6xf32>, %c : memref<6xf32>)
    %result = memref.cast %c : memref<6xf32> to memref<*xf32>
    call @printMemrefF32(%result) : (memref<*xf32>) -> ()
    %m_unranked = memref.cast %m : memref<2x3xi32> to memref<*xi32>
    call @printMemrefI32(%m_unranked) : (memref<*xi32>) -> ()
    return
  }
  func.func private @fillResource1DFloat(memref<?xf32>, f32)
  func.func private @fillResource2DInt(memref<?x?xi32>, i32)
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printMemrefI32(memref<*xi32>)
}
