// nabla-convert-gpu-to-spirv: spirv.module inside the gpu.module, entry-point
// ABI from the workgroup size or known_block_size, storage classes, workgroup
// attributions, math and the float atomic add.
// RUN: nabla-opt %s -split-input-file --nabla-convert-gpu-to-spirv="workgroup-size=64" | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK: spirv.module @__spv__kernels Logical GLSL450
// CHECK: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<64 x f32{{.*}}>)>, Workgroup>
// CHECK: spirv.func @k(%{{.*}}: !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 0)>}, %{{.*}}: f32 {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 1), StorageBuffer>})
// CHECK-SAME: spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>
// CHECK: spirv.GL.Sin
// CHECK: spirv.Variable : !spirv.ptr<!spirv.struct<(!spirv.array<2 x f32{{.*}}>)>, Function>
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
// CHECK: spirv.EXT.AtomicFAdd <Device> <None> %{{.*}}, %{{.*}} : !spirv.ptr<f32, StorageBuffer>
// CHECK: spirv.EXT.AtomicFAdd <Workgroup> <None>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>, %s: f32)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%c0] : memref<?xf32>
      %y = math.sin %x : f32
      %p = memref.alloca() : memref<2xf32>
      memref.store %y, %p[%c0] : memref<2xf32>
      memref.store %y, %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %old = memref.atomic_rmw addf %s, %A[%c0] : (f32, memref<?xf32>) -> f32
      %old2 = memref.atomic_rmw addf %s, %tile[%c0] : (f32, memref<64xf32, #gpu.address_space<workgroup>>) -> f32
      gpu.return
    }
  }
}

// -----

// known_block_size wins over the option.
// CHECK-LABEL: gpu.module @sized
// CHECK: spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [8, 4, 1]>
module attributes {gpu.container_module} {
  gpu.module @sized {
    gpu.func @k(%A: memref<?xf32>) kernel attributes {known_block_size = array<i32: 8, 4, 1>} {
      gpu.return
    }
  }
}
