#!/usr/bin/env python3
# ===- run.py - Global-memory tapes and split mode: time and memory -------=== #
#
# A softmax over rows of run-time length C, written in place (one thread per
# row: a max pass, an exp pass that overwrites the row, a normalising pass),
# whose reverse mode must keep the row's values in the global-memory tape
# (the reads are overwritten; nothing recomputes them), next to:
#   - split mode: the augmented forward (primal + tape) and, launched apart,
#     the reverse;
#   - the same softmax written out of place (x -> y): nothing is
#     overwritten, so reverse mode recomputes from x without a tape;
#   - the hand-written adjoint an expert writes for the in-place kernel:
#     dx = y * (dy - sum(y * dy)) from the output y, no tape.
# Kernel-only times (device clock, transfers excluded) of every kernel,
# interleaved round after round on the default device (lavapipe without a
# GPU), medians over the rounds; each launch runs its kernel LAUNCH_REPEATS
# times from the same inputs and counts the median of the repeats after the
# first (lavapipe's shader compilation). The same for bench/gradients' tiled
# matmul (16 x 16 workgroup tiles overwritten every step of a run-time K
# loop): with its trip-count hint (a private tape), without it (the global
# tape), in split mode, and bench/handwritten's adjoint (three kernels).
# Also the bytes per thread of the
# combined gradient's tape and of the split halves' tape (the manifests'
# formulas, evaluated by the runtime), against 4 C for one word per element.
#
# Usage: PYTHONPATH=build/python nice -n 10 bench/tapes/run.py [BUILD]
#        [--repeat N] [--rows R]
# ===----------------------------------------------------------------------=== #
import argparse
import os
import re
import statistics
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCH_REPEATS = 3
COLS = (16, 128, 1024)

ROW_LOOPS = """
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = gpu.global_id x
      %inside = arith.cmpi ult, %r, %rows : index
      scf.if %inside {{
        %base = arith.muli %r, %cols : index
        %lowest = arith.constant -1.0e30 : f32
        %zero = arith.constant 0.0 : f32
        %m = scf.for %j = %c0 to %cols step %c1 iter_args(%a = %lowest) -> f32 {{
          %k = arith.addi %base, %j : index
          %v = memref.load %x[%k] : memref<?xf32>
          %n = arith.maximumf %a, %v : f32
          scf.yield %n : f32
        }}
        %s = scf.for %j = %c0 to %cols step %c1 iter_args(%a = %zero) -> f32 {{
          %k = arith.addi %base, %j : index
          %v = memref.load %x[%k] : memref<?xf32>
          %d = arith.subf %v, %m : f32
          %e = math.exp %d : f32
          memref.store %e, %{out}[%k] : memref<?xf32>
          %n = arith.addf %a, %e : f32
          scf.yield %n : f32
        }}
        scf.for %j = %c0 to %cols step %c1 {{
          %k = arith.addi %base, %j : index
          %v = memref.load %{out}[%k] : memref<?xf32>
          %q = arith.divf %v, %s : f32
          memref.store %q, %{out}[%k] : memref<?xf32>
        }}
      }}
      gpu.return
"""

MODULE = """module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @inplace(%x: memref<?xf32>, %rows: index, %cols: index) kernel {{{inplace}    }}
    gpu.func @outofplace(%x: memref<?xf32>, %y: memref<?xf32>, %rows: index, %cols: index) kernel {{{outofplace}    }}
    // The expert's adjoint of @inplace: from its output y, no tape.
    gpu.func @handwritten(%y: memref<?xf32>, %dy: memref<?xf32>, %rows: index, %cols: index) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = gpu.global_id x
      %inside = arith.cmpi ult, %r, %rows : index
      scf.if %inside {{
        %base = arith.muli %r, %cols : index
        %zero = arith.constant 0.0 : f32
        %dot = scf.for %j = %c0 to %cols step %c1 iter_args(%a = %zero) -> f32 {{
          %k = arith.addi %base, %j : index
          %v = memref.load %y[%k] : memref<?xf32>
          %g = memref.load %dy[%k] : memref<?xf32>
          %p = arith.mulf %v, %g : f32
          %n = arith.addf %a, %p : f32
          scf.yield %n : f32
        }}
        scf.for %j = %c0 to %cols step %c1 {{
          %k = arith.addi %base, %j : index
          %v = memref.load %y[%k] : memref<?xf32>
          %g = memref.load %dy[%k] : memref<?xf32>
          %d = arith.subf %g, %dot : f32
          %q = arith.mulf %v, %d : f32
          memref.store %q, %dy[%k] : memref<?xf32>
        }}
      }}
      gpu.return
    }}
    nabla.kernel_adjoint @inplace -> @combined
        {{activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>]}}
    nabla.kernel_adjoint @inplace -> @augmented reverse @reverse
        {{activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>]}}
    nabla.kernel_adjoint @outofplace -> @recomputed
        {{activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>]}}
  }}
}}
"""


def module_text():
    return MODULE.format(inplace=ROW_LOOPS.format(out="x"),
                         outofplace=ROW_LOOPS.format(out="y"))


def _function(text, name):
    """The text of `gpu.func @name` (to its `gpu.return` and brace)."""
    start = text.index(f"    gpu.func @{name}(")
    end = text.index("      gpu.return\n    }\n", start) + len("      gpu.return\n    }\n")
    return text[start:end]


def matmul_module_text():
    """bench/gradients' tiled matmul with its trip-count hint (a private
    tape) and without it (the global tape, and split mode), and
    bench/handwritten's three adjoint kernels."""
    gradients = open(os.path.join(ROOT, "bench", "gradients", "kernels.mlir")).read()
    handwritten = open(os.path.join(ROOT, "bench", "handwritten", "adjoints.mlir")).read()
    hinted = _function(gradients, "matmul").replace("@matmul(", "@matmul_hinted(")
    plain = hinted.replace("@matmul_hinted(", "@matmul(").replace(
        " {nabla.max_trip_count = 16 : i64}", "")
    assert plain != hinted.replace("@matmul_hinted(", "@matmul(")
    dup = ", ".join(["#nabla.activity<dup>"] * 3 + ["#nabla.activity<const>"])
    return ("module attributes {gpu.container_module} {\n  gpu.module @kernels {\n"
            + hinted + plain
            + "".join(_function(handwritten, k) for k in
                      ("matmul_adj_da", "matmul_adj_db", "matmul_adj_zero"))
            + f"    nabla.kernel_adjoint @matmul_hinted -> @hinted {{activity = [{dup}]}}\n"
            + f"    nabla.kernel_adjoint @matmul -> @combined {{activity = [{dup}]}}\n"
            + f"    nabla.kernel_adjoint @matmul -> @augmented reverse @reverse {{activity = [{dup}]}}\n"
            + "  }\n}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rows", type=int, default=1024)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import nabla
    from nabla import _nabla

    module = nabla.Module.parse(module_text())
    device, _, subgroup = nabla.device("vulkan")
    compiled = nabla.compile(module, "spirv", workgroup_size=[64],
                             subgroup_size=subgroup)
    manifest = {k["name"]: k for k in compiled.manifest["kernels"]}
    rows = args.rows
    grid = (rows + 63) // 64

    def launch(kernel, launch_args):
        packed, shapes, _ = nabla._pack_args(manifest[kernel], launch_args, {})
        launched = _nabla.launch(compiled.manifest_text, compiled.artifacts,
                                 kernel, [grid], [64], packed, shapes, {},
                                 "vulkan", -1, 600, repeat=LAUNCH_REPEATS,
                                 timing=True)
        return statistics.median(launched[2]["kernel_ns"][1:]) * 1e-9

    def combined_tape_bytes(cols, x):
        """The runtime-owned tape's bytes, from the launcher's refusal at a
        one-byte cap."""
        packed, shapes, _ = nabla._pack_args(
            manifest["combined"], [x, x.copy(), ("index", rows), ("index", cols)], {})
        try:
            _nabla.launch(compiled.manifest_text, compiled.artifacts, "combined",
                          [grid], [64], packed, shapes, {}, "vulkan", -1, 600,
                          max_tape_bytes=1)
        except Exception as error:
            found = re.search(r"global-memory tape of (\d+) bytes", str(error))
            if found:
                return int(found.group(1))
            raise
        raise RuntimeError("a one-byte cap was accepted")

    def split_tape_elements(cols, x):
        """The split tape's int32 elements, from the launcher's refusal."""
        try:
            launch("augmented", [x, x.copy(), ("index", rows), ("index", cols),
                                 np.zeros(1, np.int32)])
        except Exception as error:  # the size is in the message
            found = re.search(r"tape \(parameter #\d+\) of (\d+) int32", str(error))
            if found:
                return int(found.group(1))
            raise
        raise RuntimeError("a one-element tape was accepted")

    formula = manifest["combined"]["tape"]["formula"]
    print(f"device: {device}; {rows} rows (one thread each); medians of "
          f"{args.repeat} interleaved rounds; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"tape words per thread (manifest): {formula}")
    names = ["primal", "combined", "augmented", "reverse", "split",
             "recomputed", "handwritten"]
    print(f"{'C':>6}{'tape B/thr':>11}{'split B/thr':>12}" + "".join(f"{n + ' ms':>15}" for n in names)
          + f"{'comb/prim':>10}{'split/prim':>11}{'comb/hand':>10}")
    rng = np.random.default_rng(0)
    for cols in COLS:
        x = rng.uniform(-2, 2, rows * cols).astype(np.float32)
        dy = rng.standard_normal(rows * cols).astype(np.float32)
        y = np.zeros_like(x)
        sizes = [("index", rows), ("index", cols)]
        elements = split_tape_elements(cols, x)
        tape = np.zeros(elements, np.int32)
        times = {n: [] for n in names}
        for _ in range(args.repeat):
            times["primal"].append(launch("inplace", [x] + sizes))
            times["combined"].append(launch("combined", [x, dy] + sizes))
            a = launch("augmented", [x, dy] + sizes + [tape])
            r = launch("reverse", [x, dy] + sizes + [tape])
            times["augmented"].append(a)
            times["reverse"].append(r)
            times["split"].append(a + r)
            times["recomputed"].append(launch("recomputed", [x, dy, y, dy] + sizes))
            times["handwritten"].append(launch("handwritten", [x, dy] + sizes))
        med = {n: statistics.median(v) for n, v in times.items()}
        split_per_thread = 4 * elements // (grid * 64)
        tape_per_thread = combined_tape_bytes(cols, x) // (grid * 64)
        print(f"{cols:>6}{tape_per_thread:>11}{split_per_thread:>12}"
              + "".join(f"{med[n] * 1e3:>15.3f}" for n in names)
              + f"{med['combined'] / med['primal']:>10.2f}"
              + f"{med['split'] / med['primal']:>11.2f}"
              + f"{med['combined'] / med['handwritten']:>10.2f}")

    # The tiled matmul: 16 x 16 workgroup tiles overwritten every step of
    # the run-time K loop.
    mm = nabla.compile(nabla.Module.parse(matmul_module_text()), "spirv",
                       workgroup_size=[16, 16], subgroup_size=subgroup)
    mm_manifest = {k["name"]: k for k in mm.manifest["kernels"]}

    def mm_launch(kernel, launch_args, n, cap=0):
        packed, shapes, _ = nabla._pack_args(mm_manifest[kernel], launch_args, {})
        launched = _nabla.launch(mm.manifest_text, mm.artifacts, kernel,
                                 [n // 16, n // 16], [16, 16], packed, shapes,
                                 {}, "vulkan", -1, 600, repeat=LAUNCH_REPEATS,
                                 timing=True, max_tape_bytes=cap)
        return statistics.median(launched[2]["kernel_ns"][1:]) * 1e-9

    def mm_tape_bytes(kernel, launch_args, n):
        try:
            mm_launch(kernel, launch_args, n, cap=1)
        except Exception as error:
            found = re.search(r"tape of (\d+) bytes|tape \(parameter #\d+\) of (\d+) int32",
                              str(error))
            if found:
                return int(found.group(1)) if found.group(1) else 4 * int(found.group(2))
            raise
        return 0

    names = ["primal", "hinted", "combined", "augmented", "reverse", "split",
             "handwritten"]
    print("tiled matmul (16 x 16 tiles, run-time K = n): private tape (hint), "
          "global tape, split mode, hand-written (3 kernels)")
    print(f"{'n':>6}{'glob B/thr':>11}{'split B/thr':>12}" + "".join(f"{n + ' ms':>15}" for n in names)
          + f"{'comb/prim':>10}{'hint/prim':>10}{'comb/hand':>10}")
    for n in (64, 256):
        A = rng.uniform(-1, 1, n * n).astype(np.float32)
        B = rng.uniform(-1, 1, n * n).astype(np.float32)
        dC = rng.standard_normal(n * n).astype(np.float32)
        z = np.zeros(n * n, np.float32)
        operands = [A, z, B, z, z, dC, ("index", n)]
        threads = n * n
        global_bytes = mm_tape_bytes("combined", operands, n)
        tape = np.zeros(mm_tape_bytes("augmented", operands + [np.zeros(1, np.int32)], n) // 4,
                        np.int32)
        times = {k: [] for k in names}
        for _ in range(args.repeat):
            times["primal"].append(mm_launch("matmul", [A, B, z, ("index", n)], n))
            times["hinted"].append(mm_launch("hinted", operands, n))
            times["combined"].append(mm_launch("combined", operands, n))
            a = mm_launch("augmented", operands + [tape], n)
            r = mm_launch("reverse", operands + [tape], n)
            times["augmented"].append(a)
            times["reverse"].append(r)
            times["split"].append(a + r)
            times["handwritten"].append(sum(mm_launch(k, operands, n) for k in
                                            ("matmul_adj_da", "matmul_adj_db",
                                             "matmul_adj_zero")))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{n:>6}{global_bytes // threads:>11}{4 * tape.size // threads:>12}"
              + "".join(f"{med[k] * 1e3:>15.3f}" for k in names)
              + f"{med['combined'] / med['primal']:>10.2f}"
              + f"{med['hinted'] / med['primal']:>10.2f}"
              + f"{med['combined'] / med['handwritten']:>10.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
