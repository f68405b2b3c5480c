# ===- test_host_grad_random.py - Random host programs, differentiated --=== #
#
# Host programs nobody wrote by hand: a seeded generator draws sequences of
# launches (in-place and out-of-place, reading one or two buffers), copies,
# memsets and loops with a runtime trip count over a pool of buffers (three
# arguments and two device intermediates), and each program's gradient is
# checked against central finite differences of the whole program, with the
# dot-product test against forward mode. Overwrites of buffers read earlier,
# buffers read by several kernels and loops of in-place updates arise by
# chance, as they do in real programs.
# ===----------------------------------------------------------------------=== #
import numpy as np
import pytest

import nabla

N = 8

KERNELS = """
  gpu.module @ops {
    gpu.func @sin_inplace(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<8xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<8xf32>
      gpu.return
    }
    gpu.func @half_square(%x: memref<8xf32>, %y: memref<8xf32>) kernel {
      %half = arith.constant 0.5 : f32
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<8xf32>
      %p = arith.mulf %a, %a : f32
      %h = arith.mulf %p, %half : f32
      memref.store %h, %y[%i] : memref<8xf32>
      gpu.return
    }
    gpu.func @mul_add(%a: memref<8xf32>, %b: memref<8xf32>, %y: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %u = memref.load %a[%i] : memref<8xf32>
      %v = memref.load %b[%i] : memref<8xf32>
      %w = memref.load %y[%i] : memref<8xf32>
      %p = arith.mulf %u, %v : f32
      %s = arith.addf %p, %w : f32
      memref.store %s, %y[%i] : memref<8xf32>
      gpu.return
    }
    gpu.func @reverse_tanh(%x: memref<8xf32>, %y: memref<8xf32>) kernel {
      %c7 = arith.constant 7 : index
      %i = gpu.thread_id x
      %j = arith.subi %c7, %i : index
      %a = memref.load %x[%j] : memref<8xf32>
      %t = math.tanh %a : f32
      memref.store %t, %y[%i] : memref<8xf32>
      gpu.return
    }
  }
"""

LAUNCH = ("gpu.launch_func @ops::@{k} blocks in (%c1, %c1, %c1) threads in "
          "(%c8, %c1, %c1) args({args})")


def buffer_args(names):
    return ", ".join(f"{n} : memref<8xf32>" for n in names)


def generate(seed):
    """A host function @program(%a, %b, %c, %reps) of 4 to 7 random steps
    over %a %b %c (arguments) and %t %u (device intermediates, zeroed
    first)."""
    rng = np.random.default_rng(seed)
    pool = ["%a", "%b", "%c", "%t", "%u"]
    lines = []

    def step(indent):
        kind = rng.choice(["sin", "half_square", "mul_add", "reverse_tanh",
                           "copy", "memset"], p=[.2, .2, .25, .2, .1, .05])
        pick = lambda k: list(rng.choice(pool, size=k, replace=False))
        if kind == "sin":
            (x,) = pick(1)
            return [indent + LAUNCH.format(k="sin_inplace",
                                           args=buffer_args([x]))]
        if kind in ("half_square", "reverse_tanh"):
            x, y = pick(2)
            return [indent + LAUNCH.format(k=kind, args=buffer_args([x, y]))]
        if kind == "mul_add":
            a, b = pick(2)
            # The output may be one of the inputs (in place) or another.
            y = rng.choice([a, rng.choice([p for p in pool if p != b])])
            return [indent + LAUNCH.format(k="mul_add",
                                           args=buffer_args([a, b, y]))]
        if kind == "copy":
            dst, src = pick(2)
            return [f"{indent}gpu.memcpy {dst}, {src} : memref<8xf32>, "
                    "memref<8xf32>"]
        (dst,) = pick(1)
        return [f"{indent}gpu.memset {dst}, %zero : memref<8xf32>, f32"]

    for _ in range(rng.integers(4, 8)):
        if rng.random() < 0.25:
            lines.append("    scf.for %i = %c0 to %reps step %c1 {")
            for _ in range(rng.integers(1, 3)):
                lines += step("      ")
            lines.append("    }")
        else:
            lines += step("    ")
    body = "\n".join(lines)
    return f"""module attributes {{gpu.container_module}} {{
{KERNELS}
  func.func @program(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %reps: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0.0 : f32
    %t = gpu.alloc () : memref<8xf32>
    %u = gpu.alloc () : memref<8xf32>
    gpu.memset %t, %zero : memref<8xf32>, f32
    gpu.memset %u, %zero : memref<8xf32>, f32
{body}
    gpu.dealloc %u : memref<8xf32>
    gpu.dealloc %t : memref<8xf32>
    return
  }}
}}
"""


@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("NABLA_RANDOM_PROGRAMS", "12"))))
def test_random_program_gradient(seed):
    text = generate(seed)
    rng = np.random.default_rng(100 + seed)
    args = [(rng.uniform(-0.8, 0.8, N)).astype(np.float32) for _ in range(3)]
    reps = int(rng.integers(0, 4))
    report = nabla.check_gradient_host(text, "program", [*args, reps],
                                       forward=True, elements=N)
    details = {k: v for k, v in report.items() if isinstance(k, int)}
    assert report["ok"], (text, reps, details, report.get("dot"))
