#!/usr/bin/env python3
# ===- kernel_object.py - Call a kernel like a function ------------------=== #
#
# nabla.Kernel compiles once per target and takes arguments typed from the
# kernel's signature: plain Python/NumPy scalars, numpy arrays and any
# buffer-protocol object (array.array, bytearray, memoryview).
#
# PYTHONPATH=build/python /usr/bin/python3 examples/python/kernel_object.py
# ===----------------------------------------------------------------------=== #
import array
import os

import numpy as np

import nabla

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
module = nabla.Module.parse(open(os.path.join(root, "examples", "mul_kernel.mlir")).read())

square = module.kernel("mul_kernel")
grad = module.kernel("grad_mul_kernel")
print(square)
for p in grad.parameters:
    print(f"  #{p.position} {p.name}: {p.type} ({p.kind})")

A = np.linspace(-1, 1, 8, dtype=np.float32)
(A2, _) = square(A, len(A), grid=1, block=64)          # compiles for the device
(A4, _) = square(A2, np.int64(len(A)), grid=1, block=64)  # reuses that binary
print("A^4:", A4)

# The reverse-mode kernel: dA <- 2 A dA. Inputs are not modified; the final
# buffers come back as new numpy arrays.
_, dA, _ = grad(A, np.ones_like(A), 8, grid=1, block=64)
print("d(A^2)/dA:", dA)

# Buffers other than numpy arrays.
print(square(array.array("f", [1.5, 2.0]), 2, grid=1, block=64)[0])

# Errors name the parameter and what it expects.
for bad in ([A, 1.5], [A, -1], [A.astype(np.float64), 8]):
    try:
        square(*bad, grid=1, block=64)
    except (TypeError, ValueError) as error:
        print(f"{type(error).__name__}: {error}")
