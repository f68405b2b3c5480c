# ===- test_kernel_closure.py - nabla.run compiles what its kernel needs --=== #
#
# A module whose gradient kernel cannot be differentiated still runs its
# primal kernel from Python (nabla.run and nabla.Kernel compile only the
# launched kernel); launching the broken kernel raises its located error.
#
# ===----------------------------------------------------------------------=== #
import numpy as np
import pytest

import nabla

SOURCE = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @broken(%A: memref<?xf32>) {
      %i = gpu.global_id x
      %a = memref.load %A[%i] : memref<?xf32>
      %s, %c = math.sincos %a : f32
      memref.store %s, %A[%i] : memref<?xf32>
      return
    }
    gpu.func @double(%A: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %A[%i] : memref<?xf32>
        %d = arith.addf %a, %a : f32
        memref.store %d, %A[%i] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @broken_grad(%A: memref<?xf32>, %dA: memref<?xf32>) kernel {
      nabla.autodiff @broken(%A, %dA) {activity = [#nabla.activity<dup>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>) -> ()
      gpu.return
    }
  }
}
"""


def test_primal_runs_although_another_kernel_fails():
    module = nabla.Module.parse(SOURCE)
    a = np.arange(8, dtype=np.float32)
    out = nabla.run(module, "double", grid=1, block=64, args=[a, 8])
    np.testing.assert_array_equal(out[0], 2 * a)
    out = module.kernel("double")(a, 8, grid=1, block=64)
    np.testing.assert_array_equal(out[0], 2 * a)


def test_broken_kernel_raises_its_error():
    module = nabla.Module.parse(SOURCE)
    a = np.ones(8, np.float32)
    with pytest.raises(Exception, match="math.sincos"):
        nabla.run(module, "broken_grad", grid=1, block=64, args=[a, a.copy()])
