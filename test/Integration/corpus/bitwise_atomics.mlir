// Integer bitwise atomics (CUDA's atomicXor/atomicOr/atomicAnd/atomicExch,
// raised from LLVM IR to these kinds) on every target; on SPIR-V each is one
// OpAtomic* instruction. Thread i of n: acc[0] ^= v[i], acc[1] |= v[i],
// acc[2] &= v[i]; acc[3] = 7 from every thread; acc[4] *= v[i] (wrapping:
// SPIR-V has no atomic multiply, a compare-exchange loop).
// RUN: nabla-compile %s --target=spirv -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=metal -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bits(%acc: memref<?xi32>, %v: memref<?xi32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %c3 = arith.constant 3 : index
        %c7 = arith.constant 7 : i32
        %x = memref.load %v[%i] : memref<?xi32>
        %a = memref.atomic_rmw xori %x, %acc[%c0] : (i32, memref<?xi32>) -> i32
        %b = memref.atomic_rmw ori %x, %acc[%c1] : (i32, memref<?xi32>) -> i32
        %c = memref.atomic_rmw andi %x, %acc[%c2] : (i32, memref<?xi32>) -> i32
        %d = memref.atomic_rmw assign %c7, %acc[%c3] : (i32, memref<?xi32>) -> i32
        %c4 = arith.constant 4 : index
        %e = memref.atomic_rmw muli %x, %acc[%c4] : (i32, memref<?xi32>) -> i32
      }
      gpu.return
    }
  }
}
