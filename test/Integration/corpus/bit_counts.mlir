// math.ctpop, math.ctlz and math.cttz on i32 and i64 (CUDA's __popc, __clz,
// __ffs and their ll forms): upstream lowers no ctpop or cttz to SPIR-V, and
// Vulkan's bit instructions take 32 bits (BitCounts.cpp). Run by
// test_run_kernels.py against NumPy with 0, -1, INT_MIN, halves of zero and
// random values.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @counts(%a: memref<?xi32>, %pop: memref<?xi32>, %lead: memref<?xi32>,
                     %trail: memref<?xi32>, %n: index) kernel {
      %i = gpu.global_id x
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %x = memref.load %a[%i] : memref<?xi32>
        %p = math.ctpop %x : i32
        %l = math.ctlz %x : i32
        %t = math.cttz %x : i32
        memref.store %p, %pop[%i] : memref<?xi32>
        memref.store %l, %lead[%i] : memref<?xi32>
        memref.store %t, %trail[%i] : memref<?xi32>
      }
      gpu.return
    }
    gpu.func @counts64(%a: memref<?xi64>, %pop: memref<?xi64>, %lead: memref<?xi64>,
                       %trail: memref<?xi64>, %n: index) kernel {
      %i = gpu.global_id x
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %x = memref.load %a[%i] : memref<?xi64>
        %p = math.ctpop %x : i64
        %l = math.ctlz %x : i64
        %t = math.cttz %x : i64
        memref.store %p, %pop[%i] : memref<?xi64>
        memref.store %l, %lead[%i] : memref<?xi64>
        memref.store %t, %trail[%i] : memref<?xi64>
      }
      gpu.return
    }
  }
}
