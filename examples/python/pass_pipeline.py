#!/usr/bin/env python3
# ===- pass_pipeline.py - Run a pass pipeline from Python ----------------=== #
#
# PYTHONPATH=build/python /usr/bin/python3 examples/python/pass_pipeline.py
# ===----------------------------------------------------------------------=== #
import os

import nabla

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
module = nabla.Module.parse(open(os.path.join(root, "examples", "mul_kernel.mlir")).read())
nabla.PassManager("builtin.module(nabla-differentiate, canonicalize, cse)").run(module)
print(module)
