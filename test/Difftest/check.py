# ===- check.py - Run a kernel on the GPU and on the host, compare -------=== #
#
# run_case(kernel, dir) writes the kernel for Nabla (kernel.mlir) and its host
# version (host.mlir), runs the first with `nabla-run` (default device:
# lavapipe without a GPU) and the second with upstream `mlir-opt` +
# `mlir-runner`, and compares every buffer. For differentiable kernels it
# also runs the generated gradient kernel (`nabla.kernel_adjoint`) with the
# cotangents w as shadows and compares J^T w with the host's central finite
# differences in float64.
#
# Tolerances (per element; c32/c64 the host results in f32/f64, g the GPU's):
# - integer buffers: exact;
# - float buffers: |g - c64| <= RTOL (1 + |c64|) + COND |c32 - c64|, with
#   RTOL = 1e-4 and COND = 16: a relative/absolute floor for values of
#   magnitude up to FMAX plus a multiple of the host's own f32 error, which
#   measures the conditioning of this element's computation. The floor
#   comes from the device's math: lavapipe's atan and Nabla's atan2 are off
#   by up to 2e-5 relative (cbrt 1e-6, others a few ulp; measured over their
#   generated domains), and chains of contractions amplify that by a few;
# - float atomic add buffers, on top of that: RTOL * sum of |added values|
#   (the host sums those magnitudes; the GPU's order changes the rounding);
# - gradients: |dk - fd| <= GRAD_RTOL (|fd| + max |fd| of the buffer) with
#   GRAD_RTOL = 1e-3, fd central differences in f64 with eps = 1e-6 (their
#   own error is ~1e-9 relative), dk the f32 gradient from the GPU; the same
#   for tangents (forward mode, kernels with the nabla.autodiff form: @tk
#   runs nabla.fwddiff with tangents v, against central differences of the
#   final state along v).
# A host result that is not finite means the generator broke its own rules:
# the case is 'invalid', never a mismatch.
# ===----------------------------------------------------------------------=== #
import copy
import json
import os
import re
import subprocess
import time

import numpy as np

from emit import gpu_module, host_module, is_dup
from kernel_ast import Buffer, For, to_json, walk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
LLVM = os.environ.get("LLVM_BIN", "/usr/lib/llvm-22/bin")
LLVM_LIB = os.environ.get("LLVM_LIB", "/usr/lib/llvm-22/lib")
HOST_PIPELINE = ("builtin.module(func.func(convert-scf-to-cf),"
                 "convert-math-to-llvm,convert-math-to-libm,arith-expand,"
                 "expand-strided-metadata,convert-to-llvm,"
                 "reconcile-unrealized-casts)")
RTOL = 1e-4
COND = 16.0
GRAD_RTOL = 1e-3
TIMEOUT = 120
# Located errors of nabla-differentiate that docs/AD.md lists as limits (not
# bugs): such kernels count as 'ad-unsupported'.
AD_LIMITS = [
    "a static trip-count bound lets the loop be taped",
    # Forward mode of a workgroup min/max atomic (AD.md, the tie rule).
    "needs a gpu.barrier after it in the same block for forward mode",
    # Reverse mode of a workgroup min/max atomic whose buffer is read before
    # a later same-kind atomic (AD.md; was a wrong gradient, seed 1026).
    "has no reverse-mode derivative when its buffer is read before a later",
]
# Located errors of the SPIR-V pipeline that docs/Targets.md lists as limits:
# such kernels count as 'gpu-unsupported'.
GPU_LIMITS = [
    # memref.dim of a buffer parameter (seed 5009; Vulkan passes no sizes).
    "reads the run-time size of a buffer parameter",
]


def gpu_failure(err):
    """The Result of a failed primal launch."""
    if err[0] == "error" and any(p in err[1] for p in GPU_LIMITS):
        return Result("gpu-unsupported", err[1], where="primal")
    return Result("gpu-" + err[0], err[1], where="primal")


class Result:
    def __init__(self, cls, detail="", **info):
        self.cls = cls          # ok | mismatch | grad-mismatch | gpu-error
        self.detail = detail    # | gpu-crash | ad-error | ad-crash |
        self.info = info        # | host-error | invalid | timeout

    def __repr__(self):
        return f"Result({self.cls}, {self.detail[:200]!r})"

    def signature(self):
        """What a minimized case must keep showing."""
        return (self.cls, self.info.get("where"))


def make_inputs(k):
    rng = np.random.default_rng(k.input_seed)
    inputs, weights = {}, {}
    for b in k.buffers():
        n = max(1, k.size(b))
        if b.elem == "f":
            if b.role == "acc" and b.acc == "addf":
                a = rng.uniform(-1, 1, n)
            else:
                a = rng.uniform(-2, 2, n)
            dtype = np.float64 if k.fty == "f64" else np.float32
            inputs[b.name] = a.astype(dtype)
            weights[b.name] = rng.standard_normal(n).astype(dtype)
        else:
            a = rng.integers(-1000, 1000, n)
            big = rng.random(n) < 0.1
            a[big] = rng.integers(-2 ** 31, 2 ** 31 - 1, int(big.sum()))
            inputs[b.name] = a.astype(np.int32)
    return inputs, weights


def make_tangents(k):
    """Tangents v of the float buffers for forward mode (their own random
    stream, so that adding them left every case's inputs unchanged)."""
    rng = np.random.default_rng(k.input_seed + 1)
    dtype = np.float64 if k.fty == "f64" else np.float32
    return {b.name: rng.standard_normal(max(1, k.size(b))).astype(dtype)
            for b in k.buffers() if b.elem == "f"}


def forward_mode(k):
    """Kernels whose module also holds @tk (nabla.fwddiff)."""
    return k.diff and k.ad_form == "autodiff"


def launch_args(k):
    grid = ",".join(map(str, k.grid))
    block = ",".join(map(str, k.block))
    return [f"--grid={grid}", f"--block={block}"]


def scalar_spec(k, p):
    if p.ty == "f":
        return f"--arg={k.fty}:{float(p.value)!r}"
    return f"--arg={p.ty}:{int(p.value)}"


def run_tool(cmd, timeout=TIMEOUT):
    # A concurrent rebuild replaces the tools for a moment (EACCES, ENOENT,
    # ETXTBSY): wait for it rather than report a failure.
    for attempt in range(60):
        try:
            return subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        except OSError:
            if attempt == 59:
                raise
            time.sleep(10)


def run_gpu(k, d, inputs, kernel="k", shadows=None):
    """Launches `kernel`; returns ({param name: array}, None) or (None,
    (class, message))."""
    args = []
    index_of = {}
    for p in k.params:
        if isinstance(p, Buffer):
            path = os.path.join(d, f"{kernel}_{p.name[1:]}.npy")
            np.save(path, inputs[p.name])
            index_of[p.name] = len(args)
            args.append(f"--arg={path}")
            if shadows is not None and is_dup(p):
                path = os.path.join(d, f"{kernel}_d{p.name[1:]}.npy")
                np.save(path, shadows[p.name])
                index_of["d" + p.name] = len(args)
                args.append(f"--arg={path}")
        else:
            args.append(scalar_spec(k, p))
    out = os.path.join(d, f"out_{kernel}")
    cmd = [os.path.join(BIN, "nabla-run"), os.path.join(d, "kernel.mlir"),
           f"--kernel={kernel}", f"--out={out}"] + launch_args(k) + args
    res = run_tool(cmd)
    if res is None:
        return None, ("timeout", f"{kernel}: timed out")
    if res.returncode != 0:
        cls = "error" if res.returncode == 1 else "crash"
        return None, (cls, f"{kernel}: exit {res.returncode}: "
                           f"{res.stderr.strip()[-2000:]}")
    return {name: np.load(os.path.join(out, f"arg{i}.npy"))
            for name, i in index_of.items()}, None


def parse_prints(stdout):
    blocks = re.findall(r"data =\s*\[([^\]]*)\]", stdout)
    return [np.array([int(x) for x in b.replace("\n", " ").split(",")
                      if x.strip()], dtype=np.int64) for b in blocks]


def run_host(k, d, inputs, weights):
    text, printed = host_module(k, inputs, weights if k.diff else None,
                                make_tangents(k) if forward_mode(k) else None)
    path = os.path.join(d, "host.mlir")
    with open(path, "w") as f:
        f.write(text)
    low = os.path.join(d, "host.llvm.mlir")
    res = run_tool([os.path.join(LLVM, "mlir-opt"), path,
                    f"--pass-pipeline={HOST_PIPELINE}", "-o", low])
    if res is None or res.returncode != 0:
        return None, ("host-error", "mlir-opt: " +
                      (res.stderr[-2000:] if res else "timeout"))
    libs = ",".join(os.path.join(LLVM_LIB, l) for l in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    res = run_tool([os.path.join(LLVM, "mlir-runner"), low, "-e", "main",
                    "--entry-point-result=void", f"--shared-libs={libs}"])
    if res is None or res.returncode != 0:
        return None, ("host-error", "mlir-runner: " +
                      (res.stderr[-2000:] if res else "timeout"))
    arrays = parse_prints(res.stdout)
    if len(arrays) != len(printed):
        return None, ("host-error", f"expected {len(printed)} prints, got "
                                    f"{len(arrays)}")
    out = {}
    for (tag, name, ty), a in zip(printed, arrays):
        if ty == "f64":
            v = a.astype(np.int64).view(np.float64)
        elif ty == "i32":
            v = a.astype(np.int32)
        else:
            v = a.astype(np.int32).view(np.float32)
        out[(tag, name)] = v
    return out, None


def compare_primal(k, gpu, host):
    """Returns (ok, message) for the primal outputs."""
    bad = []
    for b in k.buffers():
        g = gpu[b.name]
        if b.elem == "i32":
            c = host[("lo", b.name)]
            if not np.array_equal(g, c):
                i = np.flatnonzero(g != c)
                bad.append(f"{b.name}: {len(i)} of {g.size} differ, first "
                           f"[{i[0]}] gpu {g[i[0]]} host {c[i[0]]}")
            continue
        c32 = host[("lo", b.name)].astype(np.float64)
        c64 = host[("hi", b.name)]
        tol = RTOL * (1 + np.abs(c64)) + COND * np.abs(c32 - c64)
        if ("mag", b.name) in host:
            tol = tol + RTOL * host[("mag", b.name)].astype(np.float64)
        g64 = g.astype(np.float64)
        err = np.abs(g64 - c64)
        wrong = ~(err <= tol)
        if wrong.any():
            i = np.flatnonzero(wrong)
            j = i[np.argmax(err[i] / np.maximum(tol[i], 1e-30))]
            bad.append(f"{b.name}: {len(i)} of {g.size} differ, worst [{j}] "
                       f"gpu {g[j]!r} host f32 {c32[j]!r} f64 {c64[j]!r} "
                       f"tol {tol[j]:.3g}")
    return (not bad), "; ".join(bad)


def compare_grad(k, dk, host, tag="fd"):
    """Shadows after @dk (J^T w) against 'fd', or after @tk (J v) against
    'jvp'."""
    bad = []
    for b in k.buffers():
        if not is_dup(b):
            continue
        ad = dk["d" + b.name].astype(np.float64)
        fd = host[(tag, b.name)]
        scale = np.abs(fd).max() if fd.size else 0.0
        tol = GRAD_RTOL * (np.abs(fd) + scale) + 1e-6
        err = np.abs(ad - fd)
        wrong = ~(err <= tol)
        if wrong.any():
            i = np.flatnonzero(wrong)
            j = i[np.argmax(err[i] / tol[i])]
            bad.append(f"d{b.name}: {len(i)} of {ad.size} differ, worst [{j}] "
                       f"gpu {ad[j]!r} fd {fd[j]!r} tol {tol[j]:.3g}")
    return (not bad), "; ".join(bad)


def host_finite(k, host):
    for (tag, name), v in host.items():
        if tag in ("lo", "hi", "fd", "jvp") and k.buffer(name).elem == "f" and \
                not np.all(np.isfinite(v)):
            return f"{tag} {name} not finite"
    return None


def write_case(k, d, inputs, weights, gpu_kernel=None):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kernel.mlir"), "w") as f:
        f.write(gpu_module(gpu_kernel or k))
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(to_json(k), f, indent=1)
    np.savez(os.path.join(d, "inputs.npz"),
             **{("in_" + n[1:]): a for n, a in inputs.items()},
             **{("w_" + n[1:]): a for n, a in weights.items()})


def run_case(k, d, check_grad=True, gpu_only=None, inject=None):
    """Runs one kernel on both sides; returns a Result. gpu_only='primal' or
    'grad' runs just that launch (enough to reproduce an error). inject(k)
    changes the kernel the GPU runs only (a simulated miscompile, to test
    the tester)."""
    t0 = time.time()
    inputs, weights = make_inputs(k)
    write_case(k, d, inputs, weights, inject(k) if inject else None)
    if gpu_only == "primal":
        _, err = run_gpu(k, d, inputs)
        return gpu_failure(err) if err else Result("ok")
    if gpu_only == "grad":
        shadows = {b.name: weights[b.name] for b in k.buffers() if is_dup(b)}
        _, err = run_gpu(k, d, inputs, kernel="dk", shadows=shadows)
        return Result("ad-" + err[0], err[1], where="grad") if err \
            else Result("ok")
    if gpu_only == "tangent":
        _, err = run_gpu(k, d, inputs, kernel="tk", shadows=make_tangents(k))
        return Result("fwd-" + err[0], err[1], where="tangent") if err \
            else Result("ok")
    host, err = run_host(k, d, inputs, weights)
    t1 = time.time()
    if err:
        return Result(err[0], err[1], where="host")
    bad = host_finite(k, host)
    if bad:
        return Result("invalid", bad, where="host")
    gpu, err = run_gpu(k, d, inputs)
    t2 = time.time()
    if err:
        return gpu_failure(err)
    ok, msg = compare_primal(k, gpu, host)
    if not ok:
        return Result("mismatch", msg, where="primal")
    timing = {"host": t1 - t0, "gpu": t2 - t1}
    if not (k.diff and check_grad):
        return Result("ok", **timing)
    shadows = {b.name: weights[b.name] for b in k.buffers() if is_dup(b)}
    dk, err = run_gpu(k, d, inputs, kernel="dk", shadows=shadows)
    hinted = False
    if err and "a static trip-count bound lets the loop be taped" in err[1]:
        # A documented limit of checkpointing (docs/AD.md): such loops need
        # the trip-count hint. Retry with every loop hinted (taped).
        k = hint_all_loops(k)
        with open(os.path.join(d, "kernel.mlir"), "w") as f:
            f.write(gpu_module(k))
        dk, err = run_gpu(k, d, inputs, kernel="dk", shadows=shadows)
        hinted = True
    timing["adjoint"] = time.time() - t2
    if err and err[0] == "error" and any(p in err[1] for p in AD_LIMITS):
        return Result("ad-unsupported", err[1], where="grad", **timing)
    if err:
        return Result("ad-" + err[0], err[1], where="grad", **timing)
    ok, msg = compare_grad(k, dk, host)
    if not ok:
        return Result("grad-mismatch", msg, where="grad", **timing)
    if forward_mode(k):
        t3 = time.time()
        tk, err = run_gpu(k, d, inputs, kernel="tk", shadows=make_tangents(k))
        timing["tangent"] = time.time() - t3
        if err and err[0] == "error" and any(p in err[1] for p in AD_LIMITS):
            return Result("ok", graded=True, hinted=hinted,
                          fwd_unsupported=err[1], **timing)
        if err:
            return Result("fwd-" + err[0], err[1], where="tangent", **timing)
        ok, msg = compare_grad(k, tk, host, "jvp")
        if not ok:
            return Result("tangent-mismatch", msg, where="tangent", **timing)
    return Result("ok", graded=True, hinted=hinted, **timing)


def hint_all_loops(k):
    k = copy.deepcopy(k)
    for s in walk(k.body):
        if isinstance(s, For) and s.hint is None:
            s.hint = max(1, s.max_trips)
    return k
