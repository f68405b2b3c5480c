// Dynamic shared memory written the way upstream's GPU tests do
// (gpu.dynamic_shared_memory viewed as f32): each block reverses its slice of
// X through it. test_fake_drivers.py checks the CUDA/HIP launch passes
// --dynamic-shared-memory; test_element_types.py runs it on lavapipe.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: FileCheck %s --input-file=%t.nvvm/manifest.json --check-prefix=ANY
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 --dynamic-shared-memory=256 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: FileCheck %s --input-file=%t.spirv/manifest.json --check-prefix=SIZED
// RUN: nabla-compile %s --target=metal --block=64 --dynamic-shared-memory=256 -o %t.metal
// RUN: not nabla-compile %s --target=spirv --block=64 -o %t.none 2>&1 | FileCheck %s --check-prefix=NONE
// ANY: "dynamic_shared_memory": -1
// SIZED: "dynamic_shared_memory": 256
// NONE: dynamic_shared.mlir:[[@LINE+8]]:{{[0-9]+}}: error: 'gpu.dynamic_shared_memory' op uses dynamic shared memory
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @reverse(%X: memref<?xf32>, %n: index) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_dim x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %tile = memref.view %raw[%c0][%b] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %inside = arith.cmpi ult, %i, %n : index
      %x = scf.if %inside -> (f32) {
        %v = memref.load %X[%i] : memref<?xf32>
        scf.yield %v : f32
      } else {
        %zero = arith.constant 0.0 : f32
        scf.yield %zero : f32
      }
      memref.store %x, %tile[%t] : memref<?xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c1 = arith.constant 1 : index
      %last = arith.subi %b, %c1 : index
      %r = arith.subi %last, %t : index
      %y = memref.load %tile[%r] : memref<?xf32, #gpu.address_space<workgroup>>
      scf.if %inside {
        memref.store %y, %X[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
