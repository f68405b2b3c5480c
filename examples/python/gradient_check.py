#!/usr/bin/env python3
# ===- gradient_check.py - Differentiate, compile and check the seed -----=== #
#
# PYTHONPATH=build/python /usr/bin/python3 examples/python/gradient_check.py
# ===----------------------------------------------------------------------=== #
import os

import numpy as np

import nabla

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
module = nabla.Module.parse(open(os.path.join(root, "examples", "mul_kernel.mlir")).read())

# Every target, from one module (the pipelines differentiate first).
for target in ("nvvm", "rocdl", "spirv", "metal"):
    result = nabla.compile(module, target, workgroup_size=64)
    print(target, {name: len(data) for name, data in result.artifacts.items()})

# The gradient on the default device, checked against finite differences.
a = np.linspace(-1, 1, 32).astype(np.float32)
print("device:", nabla.device()[0])
print(nabla.check_gradient(module, "mul_kernel", "grad_mul_kernel", grid=1, block=64,
                           args=[a, 32], dup=[0]))
