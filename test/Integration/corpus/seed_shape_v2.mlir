// Regression: the Julia v2 shape that crashed an AD validator, an external
// declaration behind an address space cast, read by a differentiated kernel.
// Without a record it is a located diagnostic (exit 1, no crash); listed in
// reloc.gv_to_value, reloc-raise makes it a record, and the kernel and its
// gradient compile for every target (patch on NVVM/ROCDL, table binding on
// SPIR-V/Metal) and run on lavapipe (test_run_kernels.py).
// RUN: not nabla-compile %s --target=nvvm -o %t.bad 2>&1 | FileCheck %s --check-prefix=DIAG
// RUN: %expect_exit 1 nabla-compile %s --target=spirv --block=64 -o %t.bad2
// RUN: nabla-opt %s --reloc-raise -o %t.raised.mlir
// RUN: nabla-compile %t.raised.mlir --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %t.raised.mlir --target=rocdl -o %t.rocdl
// RUN: nabla-compile %t.raised.mlir --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %t.raised.mlir --target=metal --block=64 -o %t.metal
// DIAG: error: 'memref.load' op uses the host object @"jl_global#12889", an external declaration with no initializer
// DIAG: note: referenced here
module attributes {gpu.container_module, reloc.gv_to_value = {"jl_global#12889" = "Main.weights"}} {
  gpu.module @kernels {
    memref.global "public" constant @"jl_global#12889" : memref<4xf32>
    // A[i] = A[i]^2 * W[i % 4], W the host object.
    func.func @f(%A: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c4 = arith.constant 4 : index
        %k = arith.remui %i, %c4 : index
        %w0 = memref.get_global @"jl_global#12889" : memref<4xf32>
        %w = memref.memory_space_cast %w0 : memref<4xf32> to memref<4xf32, #gpu.address_space<global>>
        %c = memref.load %w[%k] : memref<4xf32, #gpu.address_space<global>>
        %a = memref.load %A[%i] : memref<?xf32>
        %a2 = arith.mulf %a, %a : f32
        %r = arith.mulf %a2, %c : f32
        memref.store %r, %A[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @f_kernel(%A: memref<?xf32>, %n: index) kernel {
      func.call @f(%A, %n) : (memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @f_grad(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @f(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
  }
}
