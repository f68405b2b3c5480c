// gpu.dynamic_shared_memory on SPIR-V: the size is compiled in
// (dynamic-shared-memory, in bytes), and the typed view from the region's
// start becomes a workgroup array of that many elements. A gradient kernel's
// shadow view, at the offset of the launch's bytes (its parameter marked
// nabla.dynamic_shared_memory_bytes), becomes a second array of the same
// size. Any other offset is a located error.
// RUN: nabla-opt %s --split-input-file --nabla-convert-gpu-to-spirv="dynamic-shared-memory=256" -verify-diagnostics | FileCheck %s

// CHECK-LABEL: spirv.func @primal_and_shadow
// CHECK-COUNT-2: spirv.mlir.addressof @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<64 x f32>)>, Workgroup>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @primal_and_shadow(%out: memref<?xf32>, %bytes: i32 {nabla.dynamic_shared_memory_bytes}) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %big = arith.constant 268435456 : index
      %offset = arith.index_castui %bytes : i32 to index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %primal = memref.view %raw[%c0][%big] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %count = arith.divui %offset, %c4 : index
      %shadow = memref.view %raw[%offset][%count] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %v = memref.load %primal[%t] : memref<?xf32, #gpu.address_space<workgroup>>
      %d = memref.load %shadow[%t] : memref<?xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %v, %d : f32
      memref.store %s, %out[%t] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @other_offset(%out: memref<?xf32>, %bytes: i32) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c4 = arith.constant 4 : index
      %offset = arith.index_castui %bytes : i32 to index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      // expected-error @below {{uses dynamic shared memory other than as one typed array from its start}}
      %view = memref.view %raw[%offset][%c4] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %v = memref.load %view[%t] : memref<?xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%t] : memref<?xf32>
      gpu.return
    }
  }
}
