// Corpus: float atomic adds under heavy contention, in global and workgroup
// memory: out[i % 3] += x[i] for every thread, and a per-block workgroup sum
// added into out[3]. Run natively (SPV_EXT_shader_atomic_float_add) and with
// the compare-exchange emulation (test_run_kernels.py).
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-spirv{workgroup-size=64 emulate-float-atomics=true})" -o %t.emulated.mlir
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-metal{workgroup-size=64 emulate-float-atomics=true})" | FileCheck %s --check-prefix=MSL
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal && FileCheck %s --check-prefix=METAL < %t.metal/kernels.metal
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// MSL: atomic_compare_exchange_weak_explicit
// Without the option, Metal keeps device atomics native and emulates the
// threadgroup one (MSL 3.0 has no threadgroup atomic_float).
// METAL-DAG: atomic_fetch_add_explicit((device atomic_float *)
// METAL-DAG: atomic_compare_exchange_weak_explicit
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @accumulate(%x: memref<?xf32>, %out: memref<?xf32>, %n: index)
        workgroup(%sum: memref<1xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %zero = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        memref.store %zero, %sum[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %k = arith.remui %i, %c3 : index
        %a = memref.atomic_rmw addf %v, %out[%k] : (f32, memref<?xf32>) -> f32
        %b = memref.atomic_rmw addf %v, %sum[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
      }
      gpu.barrier
      scf.if %first {
        %s = memref.load %sum[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
        %c3i = arith.constant 3 : index
        %c = memref.atomic_rmw addf %s, %out[%c3i] : (f32, memref<?xf32>) -> f32
      }
      gpu.return
    }
  }
}
