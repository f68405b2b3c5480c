// Per-thread heap allocations in kernels, the way one-shot bufferization
// leaves a linalg temporary inside a gpu.launch body: a `memref.alloc` of
// static shape in a loop, filled, read and deallocated each iteration. They
// become private memory (--nabla-promote-private-allocs) on every target, so
// the kernel and its gradient run on Vulkan; test_gradients_private_memory.py
// checks both against numpy. A run-time-sized one is a located error on
// SPIR-V/Metal (Transforms/Checks/target-support-alloc.mlir).
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Y[i] = sum_r sum_k W[k] * X[(i*R + r)*4 + k]^2, through a 4-element
    // temporary allocated per row r.
    func.func @rows(%X: memref<?xf32>, %W: memref<4xf32>, %Y: memref<?xf32>,
                    %n: index, %R: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %total = scf.for %r = %c0 to %R step %c1 iter_args(%acc = %zero) -> (f32) {
          %t = memref.alloc() : memref<4xf32>
          %iR = arith.muli %i, %R : index
          %row = arith.addi %iR, %r : index
          %base = arith.muli %row, %c4 : index
          scf.for %k = %c0 to %c4 step %c1 {
            %at = arith.addi %base, %k : index
            %x = memref.load %X[%at] : memref<?xf32>
            %x2 = arith.mulf %x, %x : f32
            memref.store %x2, %t[%k] : memref<4xf32>
          }
          %s = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %acc) -> (f32) {
            %v = memref.load %t[%k] : memref<4xf32>
            %w = memref.load %W[%k] : memref<4xf32>
            %vw = arith.mulf %v, %w : f32
            %a2 = arith.addf %a, %vw : f32
            scf.yield %a2 : f32
          }
          memref.dealloc %t : memref<4xf32>
          scf.yield %s : f32
        }
        memref.store %total, %Y[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @rows_kernel(%X: memref<?xf32>, %W: memref<4xf32>, %Y: memref<?xf32>,
                          %n: index, %R: index) kernel {
      func.call @rows(%X, %W, %Y, %n, %R)
          : (memref<?xf32>, memref<4xf32>, memref<?xf32>, index, index) -> ()
      gpu.return
    }
    gpu.func @rows_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %W: memref<4xf32>,
                        %Y: memref<?xf32>, %dY: memref<?xf32>, %n: index, %R: index) kernel {
      nabla.autodiff @rows(%X, %dX, %W, %Y, %dY, %n, %R)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<dup>,
                       #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<4xf32>, memref<?xf32>, memref<?xf32>,
             index, index) -> ()
      gpu.return
    }
  }
}
