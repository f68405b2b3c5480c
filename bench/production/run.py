#!/usr/bin/env python3
# ===- run.py - Production kernels: generated adjoints against an expert's -=== #
#
# Issue 34, item 4. The kernels of bench/production/kernels.cu are CUDA in
# the idioms of a transformer's training code (warp-per-row layer norm and
# online softmax with shuffle all-reduces, cross-entropy over probabilities,
# GELU through float4, the embedding gather, a shared-memory tiled matmul
# with register blocking); grad_<name> in the same file asks Enzyme's
# __enzyme_autodiff for each one's reverse mode, the adjoint Nabla generates.
# bench/production/expert.cu holds the backward kernels an expert writes
# (paired sums in one pass, all-reduces with broadcast, gathers, the matmul's
# backward as two tiled matmuls), with grad_<name>'s parameters and Enzyme's
# semantics on the shadows (test/Integration/test_production_bench.py checks
# that both compute the same shadows on small sizes).
#
# Both files are compiled by clang-22 (device-only LLVM IR for sm_80, -O2)
# and raised by the nabla Python package; the primal, the generated adjoint
# (grad_<name>, the output dupnoneed; and grad_<name>_dup, the output dup,
# column "gen dup") and the expert's are timed kernel-only on the default
# device (lavapipe without a GPU), as bench/run.py section 1 does: each
# launch runs its kernel LAUNCH_REPEATS times from the same inputs on the
# device's clock and counts the median of the repeats after the first (which
# holds lavapipe's shader compilation); the four are launched interleaved,
# round after round, and the table shows the medians over the rounds. An expert backward of several
# kernels (the matmul's dA, dB and zeroing of dC) counts the sum of theirs.
# The adjoints start from the state a training step has at its backward
# pass: the output buffers hold the forward's results (the expert softmax
# backward reads the probabilities there), the output shadows random
# cotangents, the input shadows random gradients to accumulate into.
#
# It ends with one line for scripts:
#   production: generated/expert median X max Y; grad/primal median A max B
# (generated: grad_<name>, the dupnoneed request).
#
# Usage: PYTHONPATH=build/python nice -n 10 /usr/bin/python3 \
#            bench/production/run.py [--repeat N] [--quick]
# ===----------------------------------------------------------------------=== #
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KERNELS = os.path.join(HERE, "kernels.cu")
EXPERT = os.path.join(HERE, "expert.cu")
CLANG = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
CUDA_PATH = "/usr/local/cuda"
# Dispatches per launch; the first of each is dropped (see above).
LAUNCH_REPEATS = 3


def clang_command(source, out, opt=2):
    """clang-22's device-only LLVM IR of `source` (Frontends.md's command
    line; Nabla's enzyme.h from lib/Frontend/Headers)."""
    return [CLANG, "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80",
            f"--cuda-path={CUDA_PATH}", "-nocudalib", f"-O{opt}", "-S",
            "-emit-llvm", "-Wno-unknown-cuda-version",
            "-I", os.path.join(ROOT, "lib", "Frontend", "Headers"), source,
            "-o", out]


def compile_cuda(source, directory, opt=2):
    """The .ll path of `source` compiled into `directory`."""
    out = os.path.join(directory, os.path.basename(source)[:-3] + f".O{opt}.ll")
    result = subprocess.run(clang_command(source, out, opt), capture_output=True,
                            text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"clang failed on {source}:\n{result.stderr}")
    return out


# ===----------------------------------------------------------------------=== #
# The cases: sizes, launch shapes, arguments, float64 models of the primals.
# Arguments are numpy arrays (buffers) or Python ints (the kernels' int
# parameters). Adjoint arguments are grad_<name>'s: each differentiated
# buffer followed by its shadow.
# ===----------------------------------------------------------------------=== #

def _f32(x):
    return np.asarray(x, dtype=np.float32)


def _blocks(threads, block):
    return (threads + block - 1) // block


class Case:
    """A kernel of kernels.cu: its primal (`<name>_kernel`), generated
    adjoint (`grad_<name>`) and expert backward kernels (expert.cu, run in
    order on the same arguments).

    make(size, rng) -> (primal args, adjoint args); `forward` pairs (primal
    argument, adjoint argument): the primal's outputs, copied into the
    adjoint's arguments before it runs; grids(size) -> {kernel: grid};
    model(primal args) -> {primal argument: float64 expected output}."""

    def __init__(self, name, expert, block, grids, make, forward, model,
                 test_size, bench_size, size_label):
        self.name, self.primal, self.generated = name, f"{name}_kernel", f"grad_{name}"
        self.generated_dup = f"grad_{name}_dup"
        self.expert, self.block, self.grids = expert, block, grids
        self.make, self.forward, self.model = make, forward, model
        self.test_size, self.bench_size = test_size, bench_size
        self.size_label = size_label

    def adjoint_arguments(self, adjoint, primal_outputs):
        """The adjoint's arguments with the forward's outputs in place."""
        args = list(adjoint)
        for p, a in self.forward:
            args[a] = np.array(primal_outputs[p], dtype=args[a].dtype)
        return args


# (a) layer norm, one warp per row: size (rows N, width C).
LN_BLOCK = 128


def _layernorm_make(size, rng):
    n, c = size
    x = _f32(rng.uniform(-2, 2, n * c))
    w, b = _f32(rng.uniform(0.5, 1.5, c)), _f32(rng.uniform(-1, 1, c))
    out = np.zeros(n * c, np.float32)
    primal = [out, x, w, b, n, c]
    adjoint = [out, _f32(rng.standard_normal(n * c)), x,
               _f32(rng.standard_normal(n * c)), w, _f32(rng.standard_normal(c)),
               b, _f32(rng.standard_normal(c)), n, c]
    return primal, adjoint


def _layernorm_model(args):
    _, x, w, b, n, c = args
    rows = x.astype(np.float64).reshape(n, c)
    mean = rows.mean(axis=1, keepdims=True)
    var = ((rows - mean) ** 2).mean(axis=1, keepdims=True)
    return {0: ((rows - mean) / np.sqrt(var + 1e-5) * w + b).ravel()}


def _rows_grid(name, expert):
    def grids(size):
        g = (_blocks(size[0] * 32, LN_BLOCK),)
        return {k: g for k in [f"{name}_kernel", f"grad_{name}"] + expert}
    return grids


# (b) online softmax, one warp per row: size (rows N, width C).
def _softmax_make(size, rng):
    n, c = size
    x = _f32(rng.uniform(-4, 4, n * c))
    out = np.zeros(n * c, np.float32)
    return ([out, x, n, c],
            [out, _f32(rng.standard_normal(n * c)), x,
             _f32(rng.standard_normal(n * c)), n, c])


def _softmax_model(args):
    _, x, n, c = args
    rows = x.astype(np.float64).reshape(n, c)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return {0: (e / e.sum(axis=1, keepdims=True)).ravel()}


# (c) cross-entropy over probabilities: size (positions BT, vocabulary V).
CE_BLOCK = 256


def _crossentropy_make(size, rng):
    bt, v = size
    logits = rng.uniform(-3, 3, (bt, v))
    probs = np.exp(logits)
    probs = _f32((probs / probs.sum(axis=1, keepdims=True)).ravel())
    targets = rng.integers(0, v, bt).astype(np.int32)
    losses = np.zeros(bt, np.float32)
    return ([losses, probs, targets, bt, v],
            [losses, _f32(rng.standard_normal(bt)), probs,
             _f32(rng.standard_normal(bt * v)), targets, bt, v])


def _crossentropy_model(args):
    _, probs, targets, bt, v = args
    p = probs.astype(np.float64).reshape(bt, v)
    return {0: -np.log(p[np.arange(bt), targets])}


def _crossentropy_grids(size):
    g = (_blocks(size[0], CE_BLOCK),)
    return {"crossentropy_kernel": g, "grad_crossentropy": g,
            "crossentropy_backward": g}


# (d) GELU, four elements per thread: size N (a multiple of 4).
GELU_BLOCK = 256


def _gelu_make(n, rng):
    x = _f32(rng.uniform(-4, 4, n))
    out = np.zeros(n, np.float32)
    return ([out, x, n],
            [out, _f32(rng.standard_normal(n)), x, _f32(rng.standard_normal(n)), n])


def _gelu_model(args):
    _, x, _ = args
    v = x.astype(np.float64)
    return {0: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))}


def _gelu_grids(n):
    g = (_blocks(n // 4, GELU_BLOCK),)
    return {"gelu_kernel": g, "grad_gelu": g, "gelu_backward": g}


# (e) embeddings: size (B, T, C, vocabulary V).
ENC_BLOCK = 256


def _encoder_make(size, rng):
    b, t, c, v = size
    tokens = rng.integers(0, v, b * t).astype(np.int32)
    tokens[1] = tokens[0]  # a repeated token: its wte row accumulates twice
    wte = _f32(rng.uniform(-1, 1, v * c))
    wpe = _f32(rng.uniform(-1, 1, t * c))
    out = np.zeros(b * t * c, np.float32)
    return ([out, tokens, wte, wpe, b, t, c],
            [out, _f32(rng.standard_normal(b * t * c)), tokens, wte,
             _f32(rng.standard_normal(v * c)), wpe, _f32(rng.standard_normal(t * c)),
             b, t, c])


def _encoder_model(args):
    _, tokens, wte, wpe, b, t, c = args
    wte = wte.astype(np.float64).reshape(-1, c)
    wpe = wpe.astype(np.float64).reshape(t, c)
    return {0: (wte[tokens] + wpe[np.arange(b * t) % t]).ravel()}


def _encoder_grids(size):
    b, t, c, _ = size
    g = (_blocks(b * t * c, ENC_BLOCK),)
    return {"encoder_kernel": g, "grad_encoder": g,
            "encoder_backward": (_blocks(t * c, ENC_BLOCK),)}


# (f) tiled matmul: size (M, N, K), multiples of 32; 16x16 threads, 32x32 tiles.
def _matmul_make(size, rng):
    m, n, k = size
    a, b = _f32(rng.uniform(-1, 1, m * k)), _f32(rng.uniform(-1, 1, k * n))
    c = np.zeros(m * n, np.float32)
    return ([c, a, b, m, n, k],
            [c, _f32(rng.standard_normal(m * n)), a, _f32(rng.standard_normal(m * k)),
             b, _f32(rng.standard_normal(k * n)), m, n, k])


def _matmul_model(args):
    _, a, b, m, n, k = args
    return {0: (a.astype(np.float64).reshape(m, k) @ b.astype(np.float64).reshape(k, n)).ravel()}


def _matmul_grids(size):
    m, n, k = size
    c = (n // 32, m // 32)
    return {"matmul_kernel": c, "grad_matmul": c, "matmul_backward_dA": (k // 32, m // 32),
            "matmul_backward_dB": (n // 32, k // 32), "matmul_backward_zero": c}


CASES = [
    Case("layernorm", ["layernorm_backward"], (LN_BLOCK,),
         _rows_grid("layernorm", ["layernorm_backward"]), _layernorm_make, [(0, 0)],
         _layernorm_model, (10, 256), (4096, 256), "rows x C"),
    Case("softmax", ["softmax_backward"], (LN_BLOCK,),
         _rows_grid("softmax", ["softmax_backward"]), _softmax_make, [(0, 0)],
         _softmax_model, (10, 100), (4096, 256), "rows x C"),
    Case("crossentropy", ["crossentropy_backward"], (CE_BLOCK,), _crossentropy_grids,
         _crossentropy_make, [(0, 0)], _crossentropy_model, (300, 50), (1 << 19, 16),
         "BT x V"),
    Case("gelu", ["gelu_backward"], (GELU_BLOCK,), _gelu_grids, _gelu_make, [(0, 0)],
         _gelu_model, 4000, 1 << 22, "N"),
    Case("encoder", ["encoder_backward"], (ENC_BLOCK,), _encoder_grids, _encoder_make,
         [(0, 0)], _encoder_model, (3, 10, 32, 20), (16, 256, 256, 4096),
         "B x T x C (V)"),
    Case("matmul", ["matmul_backward_dA", "matmul_backward_dB", "matmul_backward_zero"],
         (16, 16), _matmul_grids, _matmul_make, [(0, 0)], _matmul_model,
         (64, 96, 64), (256, 256, 256), "M x N x K"),
]


def size_text(case, size):
    if isinstance(size, tuple):
        if case.name == "encoder":
            return "x".join(map(str, size[:3])) + f" ({size[3]})"
        return "x".join(map(str, size))
    return str(size)


# ===----------------------------------------------------------------------=== #
# The benchmark.
# ===----------------------------------------------------------------------=== #

class Launcher:
    """Kernel-only time of one launch, one nabla.Kernel per kernel name."""

    def __init__(self, nabla, ll):
        self.nabla = nabla
        self.module = nabla.Module.parse_llvm_ir(open(ll).read())
        self.kernels = {}

    def kernel(self, name):
        if name not in self.kernels:
            self.kernels[name] = self.nabla.Kernel(self.module, name)
        return self.kernels[name]

    def launch(self, name, args, grid, block, repeat=1):
        """(outputs, times). A buffer nothing in the kernel accesses is raised
        as bytes (memref<?xi8>) and takes the array as its bytes."""
        return self.kernel(name)(*args, grid=grid, block=block, repeat=repeat,
                                 times=True)

    def seconds(self, name, args, grid, block):
        _, times = self.launch(name, args, grid, block, repeat=LAUNCH_REPEATS)
        return statistics.median(times.kernel_ns[1:]) * 1e-9


def kernel_times(nabla, kernels_ll, expert_ll, repeat, quick):
    """{case name: (primal, generated, generated with dup, expert) seconds}."""
    primals = Launcher(nabla, kernels_ll)
    experts = Launcher(nabla, expert_ll)
    rng = np.random.default_rng(0)
    measured = {}
    for case in CASES:
        size = case.test_size if quick else case.bench_size
        primal, adjoint = case.make(size, rng)
        grids = case.grids(size)
        forward, _ = primals.launch(case.primal, primal, grids[case.primal], case.block)
        adjoint = case.adjoint_arguments(adjoint, forward)
        p, g, d, e = [], [], [], []
        for _ in range(repeat):
            p.append(primals.seconds(case.primal, primal, grids[case.primal], case.block))
            g.append(primals.seconds(case.generated, adjoint, grids[case.generated],
                                     case.block))
            d.append(primals.seconds(case.generated_dup, adjoint,
                                     grids[case.generated], case.block))
            e.append(sum(experts.seconds(k, adjoint, grids[k], case.block)
                         for k in case.expert))
        measured[case.name] = tuple(statistics.median(v) for v in (p, g, d, e))
        print(f"  measured {case.name}", file=sys.stderr, flush=True)
    return measured


def load_average():
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7,
                        help="interleaved rounds per kernel (default 7)")
    parser.add_argument("--quick", action="store_true",
                        help="the test sizes (a smoke run)")
    options = parser.parse_args()
    import nabla

    before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        kernels_ll, expert_ll = compile_cuda(KERNELS, tmp), compile_cuda(EXPERT, tmp)
        measured = kernel_times(nabla, kernels_ll, expert_ll, options.repeat,
                                options.quick)
    after = load_average()

    name, _, _ = nabla.device()
    print(f"device: {name}; kernel-only times (device clock), medians of "
          f"{options.repeat} interleaved rounds")
    print(f"load average before: {before}; after: {after}")
    print(f"{'kernel':<13}{'size':>20}{'primal ms':>10}{'generated':>10}{'gen dup':>10}"
          f"{'expert ms':>10}{'gen/primal':>11}{'gen/expert':>11}{'dup/expert':>11}"
          f"{'expert/primal':>14}")
    gen_expert, grad_primal = [], []
    for case in CASES:
        p, g, d, e = measured[case.name]
        size = case.test_size if options.quick else case.bench_size
        gen_expert.append(g / e)
        grad_primal.append(g / p)
        print(f"{case.name:<13}{size_text(case, size):>20}{p * 1e3:>10.3f}{g * 1e3:>10.3f}"
              f"{d * 1e3:>10.3f}{e * 1e3:>10.3f}{g / p:>11.2f}{g / e:>11.2f}{d / e:>11.2f}"
              f"{e / p:>14.2f}")
    print("   sizes: " + "; ".join(f"{c.name}: {c.size_label}" for c in CASES))
    print("   expert matmul: dA, dB and the zeroing of dC, three launches summed")
    print(f"production: generated/expert median {statistics.median(gen_expert):.2f} "
          f"max {max(gen_expert):.2f}; grad/primal median "
          f"{statistics.median(grad_primal):.2f} max {max(grad_primal):.2f}")


if __name__ == "__main__":
    main()
