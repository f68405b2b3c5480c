#!/usr/bin/env python3
# ===- cupy_in_place.py - CuPy arrays updated in place on CUDA -----------=== #
#
# A buffer argument with __cuda_array_interface__ (CuPy, Numba, PyTorch CUDA
# tensors) is passed to a CUDA launch as its device pointer: no host copy,
# the kernel updates it in place, and the object itself comes back. Without
# a target, a device array selects CUDA. Needs CuPy and a CUDA device; says
# so and exits 0 otherwise.
#
# PYTHONPATH=build/python /usr/bin/python3 examples/python/cupy_in_place.py
# ===----------------------------------------------------------------------=== #
import os
import sys

import numpy as np

import nabla

try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
except Exception as error:  # no CuPy, no driver or no device
    print(f"skipped: CuPy with a CUDA device is needed ({error})")
    sys.exit(0)

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
module = nabla.Module.parse(open(os.path.join(root, "examples", "mul_kernel.mlir")).read())
square = module.kernel("mul_kernel")

A = cupy.linspace(-1, 1, 1 << 20, dtype=cupy.float32)
expected = cupy.asnumpy(A) ** 2
out, _ = square(A, A.size, grid=(A.size + 255) // 256, block=256)
assert out is A                                   # the same array, updated
np.testing.assert_allclose(cupy.asnumpy(A), expected, rtol=1e-6)

# Gradients the same way: dA <- 2 A dA, both buffers on the device.
dA = cupy.ones_like(A)
nabla.run(module, "grad_mul_kernel", (A.size + 255) // 256, 256, [A, dA, A.size])
np.testing.assert_allclose(cupy.asnumpy(dA), 2 * expected, rtol=1e-6)
print("ok: A^2 and d(A^2)/dA computed in place on", nabla.device("cuda")[0])
