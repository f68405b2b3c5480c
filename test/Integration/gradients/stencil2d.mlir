// A 2-D five-point stencil (f64) on a 2-D launch: every input element is read
// by up to five threads, so its adjoints collide and are accumulated with
// atomics. Checked by test_gradients_accumulation.py against the stencil's transpose.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=8,8 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-opt %s --nabla-differentiate=remarks=true -o /dev/null 2>&1 | FileCheck %s
// CHECK-COUNT-5: remark: adjoint accumulation keeps an atomic
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Out[i][j] = In[i][j] - 0.25 (In[i-1][j] + In[i+1][j] + In[i][j-1] + In[i][j+1])
    // for interior points (1 <= i, j < n - 1).
    func.func @laplace(%In: memref<?x?xf64>, %Out: memref<?x?xf64>) {
      %i = gpu.global_id y
      %j = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = memref.dim %In, %c0 : memref<?x?xf64>
      %last = arith.subi %n, %c1 : index
      %i0 = arith.cmpi uge, %i, %c1 : index
      %i1 = arith.cmpi ult, %i, %last : index
      %j0 = arith.cmpi uge, %j, %c1 : index
      %j1 = arith.cmpi ult, %j, %last : index
      %a = arith.andi %i0, %i1 : i1
      %b = arith.andi %j0, %j1 : i1
      %in = arith.andi %a, %b : i1
      scf.if %in {
        %im = arith.subi %i, %c1 : index
        %ip = arith.addi %i, %c1 : index
        %jm = arith.subi %j, %c1 : index
        %jp = arith.addi %j, %c1 : index
        %c = memref.load %In[%i, %j] : memref<?x?xf64>
        %u = memref.load %In[%im, %j] : memref<?x?xf64>
        %d = memref.load %In[%ip, %j] : memref<?x?xf64>
        %l = memref.load %In[%i, %jm] : memref<?x?xf64>
        %r = memref.load %In[%i, %jp] : memref<?x?xf64>
        %s1 = arith.addf %u, %d : f64
        %s2 = arith.addf %l, %r : f64
        %s = arith.addf %s1, %s2 : f64
        %q = arith.constant 0.25 : f64
        %qs = arith.mulf %q, %s : f64
        %v = arith.subf %c, %qs : f64
        memref.store %v, %Out[%i, %j] : memref<?x?xf64>
      }
      return
    }
    gpu.func @laplace_kernel(%In: memref<?x?xf64>, %Out: memref<?x?xf64>) kernel {
      func.call @laplace(%In, %Out) : (memref<?x?xf64>, memref<?x?xf64>) -> ()
      gpu.return
    }
    gpu.func @laplace_grad(%In: memref<?x?xf64>, %dIn: memref<?x?xf64>, %Out: memref<?x?xf64>, %dOut: memref<?x?xf64>) kernel {
      nabla.autodiff @laplace(%In, %dIn, %Out, %dOut)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
          : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>) -> ()
      gpu.return
    }
  }
}
