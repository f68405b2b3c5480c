#!/usr/bin/python3
# ===- fuzz_cuda_cfg.py - Control-flow fuzzer for the CUDA -> SPIR-V path -=== #
#
# Generates one random CUDA kernel per seed (deterministic per seed)
#
#   __global__ void k(float *out, const float *in, int n, int m)
#
# with random structured control flow up to depth 4: for loops (constant
# bounds, bounds from n or m, triangular `j <= i`, counting down, starting at
# the thread index with a block or grid stride), while and do-while loops,
# if / else-if / else on thread-dependent, data-dependent and loop-variable
# conditions, switch on the thread index, early `return`s (at the top for
# out-of-range threads and inside branches and loops), `break` / `continue`,
# loop-carried float accumulators and in-place updates `out[i] += ...`.
# A kernel either has barriers (`__syncthreads()` only at the top level, with
# a workgroup tile written before and read after it, and then no `return`
# anywhere) or returns, never both. Every index is clamped to [0, n-1], every
# loop terminates, so the kernels are memory-safe and free of UB for n >= 1.
#
# Each kernel is compiled by clang-22 (CUDA device-only, sm_80, -O1/-O2/-O3)
# to LLVM IR, then by `nabla-compile FILE.ll --target=spirv --block=64`, and
# classified:
#   ok             exit 0, and `spirv-val --target-env vulkan1.1` accepts
#                  every module in the manifest (with --run: and nabla-launch
#                  runs it on grid 2 x block 64, n = 128, m = 5)
#   refused        exit 1 with a located error (FILE:LINE:COL: error: ...),
#                  grouped by the first error line, normalized; a class
#                  that is an MLIR verifier message ('dialect.op' op ...) is
#                  tagged [verifier]: Nabla built invalid IR, likely a bug
#   invalid-spirv  'failed validation' in the output, or spirv-val rejects
#                  a module nabla-compile accepted
#   crash          anything else: another exit status, a signal, a timeout,
#                  an assertion / stack dump / LLVM ERROR / internal error,
#                  exit 1 without a located error
#   run-fail       (--run only) nabla-launch failed on an ok kernel
#   gen-error      clang rejected the kernel (a bug of this generator)
# Every failing kernel (everything but ok) is saved under --keep as
# <class>-s<SEED>-O<L>/{k.cu,k.ll,stderr.txt,cmd.txt} (run-fail: also
# launch.txt, nabla-launch's output). Exits 1 if any kernel
# was invalid-spirv, crash, run-fail or gen-error.
#
# Usage: scripts/fuzz_cuda_cfg.py [--seeds A:B] [--opt 1,2,3] [--keep DIR]
#                                 [--run] [--bin build/bin] [--jobs N]
#                                 [--print SEED] [--verbose]
#
#   --seeds A:B   seeds A .. B-1 (default 0:100)
#   --opt L,...   clang optimization levels, each kernel at each (default
#                 1,2,3); `random` picks one level per seed
#   --print SEED  print the kernel of SEED and exit
#
# The nabla binaries are copied to a private directory first (--no-snapshot:
# run them in place), so that a rebuild during the run neither breaks it nor
# mixes two compilers' results. Standard library only; run it niced when
# sharing the machine (`nice -n 10 scripts/fuzz_cuda_cfg.py --seeds 0:300`).
# ===----------------------------------------------------------------------=== #
import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLANG = os.environ.get("CLANG", "clang-22")
CLANG_FLAGS = ["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80",
               "--cuda-path=/usr/local/cuda", "-nocudalib", "-S",
               "-emit-llvm", "-Wno-unknown-cuda-version"]
BLOCK, GRID, RUN_N, RUN_M = 64, 2, 128, 5
MAX_DEPTH = 4
CRASH_MARKERS = ("Assertion", "Stack dump", "LLVM ERROR", "internal error",
                 "PLEASE submit a bug report", "Segmentation fault",
                 "UNREACHABLE", "AddressSanitizer")


# ------------------------------------------------------------------ generator
class Gen:
    """A random kernel from one seed; the text depends only on the seed."""

    def __init__(self, seed):
        r = self.r = random.Random(seed)
        self.budget = r.randint(5, 22)       # statements left to emit
        self.nloops = 0
        self.nvars = 0
        self.barriers = r.random() < 0.35
        self.returns = not self.barriers and r.random() < 0.8
        self.lines = []
        # Scope stack: each frame lists int vars (name, is_loop_var) and
        # float vars visible there.
        self.ints = [[("tid", False), ("lane", False), ("m", False)]]
        self.floats = [[]]

    # ------------------------------------------------------------ helpers
    def emit(self, ind, text):
        self.lines.append("  " * ind + text)

    def push(self):
        self.ints.append([])
        self.floats.append([])

    def pop(self):
        self.ints.pop()
        self.floats.pop()

    def all_ints(self):
        return [v for f in self.ints for v in f]

    def all_floats(self):
        return [v for f in self.floats for v in f]

    def loop_vars(self):
        return [v for v, lv in self.all_ints() if lv]

    def fresh(self, prefix):
        self.nvars += 1
        return f"{prefix}{self.nvars}"

    def const_f(self):
        return self.r.choice(["0.5f", "1.0f", "-1.0f", "0.25f", "2.0f",
                              "0.0f", "3.0f", "-0.75f", "0.125f"])

    # ------------------------------------------------------------ int exprs
    def int_atom(self):
        r = self.r
        names = [v for v, _ in self.all_ints()]
        if r.random() < 0.2:
            return str(r.randint(0, 9))
        lv = self.loop_vars()
        if lv and r.random() < 0.5:
            return r.choice(lv)
        return r.choice(names)

    def int_expr(self):
        r = self.r
        a = self.int_atom()
        k = r.random()
        if k < 0.3:
            return a
        b = self.int_atom()
        if k < 0.6:
            return f"{a} + {b}"
        if k < 0.75:
            return f"{a} - {b}"
        if k < 0.9:
            return f"{a} * {r.randint(2, 5)} + {b}"
        return f"({a} ^ {b})"

    def index(self):
        return f"cl({self.int_expr()}, n)"

    # ---------------------------------------------------------- float exprs
    def float_atom(self):
        r = self.r
        fv = self.all_floats()
        k = r.random()
        if k < 0.4:
            return f"in[{self.index()}]"
        if k < 0.7 and fv:
            return r.choice(fv)
        if k < 0.8:
            return f"(float)({self.int_atom()})"
        if k < 0.88 and self.barriers:
            return f"tile[({self.int_expr()}) & {BLOCK - 1}]"
        return self.const_f()

    def float_expr(self, depth=0):
        r = self.r
        if depth >= 2 or r.random() < 0.35:
            return self.float_atom()
        k = r.random()
        a, b = self.float_expr(depth + 1), self.float_expr(depth + 1)
        if k < 0.4:
            return f"({a} + {b})"
        if k < 0.6:
            return f"({a} - {b})"
        if k < 0.85:
            return f"({a} * {b})"
        return f"({self.cond(simple=True)} ? {a} : {b})"

    # ----------------------------------------------------------- conditions
    def cond(self, simple=False):
        r = self.r
        k = r.random()
        lv = self.loop_vars()
        fv = self.all_floats()
        if k < 0.3:                                   # thread-dependent
            c = r.choice([f"tid % {r.randint(2, 5)} == {r.randint(0, 1)}",
                          f"lane < {r.randint(1, 63)}",
                          f"(tid & {r.choice([1, 2, 4, 8, 16, 32])}) != 0",
                          "tid < n / 2", "lane == 0",
                          f"tid >= n - {r.randint(1, 40)}",
                          f"lane > {r.randint(0, 63)}"])
        elif k < 0.55:                                # data-dependent
            c = r.choice([f"in[{self.index()}] > {self.const_f()}",
                          f"in[{self.index()}] < {self.float_atom()}"])
            if fv:
                c = r.choice([c, f"{r.choice(fv)} > {self.const_f()}",
                              f"{r.choice(fv)} < {self.float_atom()}"])
        elif k < 0.8 and lv:                          # loop variables
            i = r.choice(lv)
            c = r.choice([f"{i} % 2 == 0", f"{i} > {r.randint(0, 4)}",
                          f"{i} == {r.randint(0, 3)}",
                          f"{i} + {self.int_atom()} < m",
                          f"{i} < {self.int_atom()}"])
        else:                                         # uniform / mixed
            c = r.choice([f"m > {r.randint(0, 6)}", f"n > {r.randint(1, 200)}",
                          f"{self.int_expr()} < {self.int_expr()}",
                          f"({self.int_atom()} & 3) == {r.randint(0, 3)}"])
        if not simple and r.random() < 0.15:
            c = f"({c}) {r.choice(['&&', '||'])} ({self.cond(simple=True)})"
        return c

    # ----------------------------------------------------------- statements
    def simple_stmt(self, ind):
        r = self.r
        fv = self.all_floats()
        k = r.random()
        if k < 0.4 and fv:
            v = r.choice(fv)
            op = r.choice(["+=", "+=", "-=", "*=", "="])
            if op == "*=":
                self.emit(ind, f"{v} = {v} * 0.5f + {self.float_expr()};")
            else:
                self.emit(ind, f"{v} {op} {self.float_expr()};")
        elif k < 0.55:
            v = self.fresh("a")
            self.emit(ind, f"float {v} = {self.float_expr()};")
            self.floats[-1].append(v)
        elif k < 0.8:
            dst = "cl(tid, n)" if r.random() < 0.6 else self.index()
            self.emit(ind, f"out[{dst}] {r.choice(['+=', '+=', '='])} "
                           f"{self.float_expr()};")
        else:
            v = r.choice(fv) if fv else self.const_f()
            self.emit(ind, f"out[cl(tid, n)] += {v};")

    def block(self, ind, depth, loop, lo=1, hi=3):
        """A brace-enclosed body: statements at depth `depth`."""
        self.push()
        for _ in range(self.r.randint(lo, hi)):
            self.stmt(ind, depth, loop)
        self.pop()

    def stmt(self, ind, depth, loop, top=False):
        r = self.r
        self.budget -= 1
        if self.budget < 0 or depth >= MAX_DEPTH:
            # Still allow a jump at the bottom of the nest.
            if loop and depth > 0 and r.random() < 0.25:
                self.jump(ind, loop)
            else:
                self.simple_stmt(ind)
            return
        k = r.random()
        if k < 0.25:
            self.simple_stmt(ind)
        elif k < 0.45:
            self.if_stmt(ind, depth, loop)
        elif k < 0.72:
            self.for_stmt(ind, depth)
        elif k < 0.82:
            self.while_stmt(ind, depth)
        elif k < 0.87:
            self.switch_stmt(ind, depth, loop)
        elif k < 0.95 and (loop or self.returns) and depth > 0:
            self.jump(ind, loop)
        elif top and self.barriers:
            self.barrier(ind)
        else:
            self.simple_stmt(ind)

    def jump(self, ind, loop):
        r = self.r
        kinds = []
        if loop:
            kinds += ["break", "continue"]
        if self.returns:
            kinds += ["return"]
        if not kinds:
            self.simple_stmt(ind)
            return
        j = r.choice(kinds)
        if r.random() < 0.2:
            # An update, then the jump, in one branch.
            self.emit(ind, f"if ({self.cond()}) {{")
            self.push()
            self.simple_stmt(ind + 1)
            self.pop()
            self.emit(ind + 1, f"{j};")
            self.emit(ind, "}")
        else:
            self.emit(ind, f"if ({self.cond()}) {j};")

    def if_stmt(self, ind, depth, loop):
        r = self.r
        self.emit(ind, f"if ({self.cond()}) {{")
        self.block(ind + 1, depth + 1, loop)
        k = r.random()
        if k < 0.2:
            self.emit(ind, f"}} else if ({self.cond()}) {{")
            self.block(ind + 1, depth + 1, loop)
            self.emit(ind, "} else {")
            self.block(ind + 1, depth + 1, loop)
        elif k < 0.55:
            self.emit(ind, "} else {")
            self.block(ind + 1, depth + 1, loop)
        self.emit(ind, "}")

    def loop(self, ind, depth, header, var, footer="}", pre=None, first=None):
        """A loop over `var` (visible in the body only), often with a
        loop-carried accumulator declared before it and used after it."""
        r = self.r
        acc = None
        if r.random() < 0.6:
            acc = self.fresh("s")
            self.emit(ind, f"float {acc} = {self.float_expr()};")
            self.floats[-1].append(acc)
        if pre:
            self.emit(ind, pre)
        self.emit(ind, header)
        self.ints.append([(var, True)])
        self.floats.append([])
        if first:
            self.emit(ind + 1, first)
        if acc:
            self.emit(ind + 1, f"{acc} {r.choice(['+=', '+=', '-='])} "
                               f"{self.float_expr()};")
        for _ in range(r.randint(1, 3)):
            self.stmt(ind + 1, depth + 1, True)
        if acc and r.random() < 0.4:
            self.emit(ind + 1, f"{acc} = {acc} * {self.const_f()} + "
                               f"{self.float_atom()};")
        self.pop()
        self.emit(ind, footer)
        if acc and r.random() < 0.8:
            self.emit(ind, f"out[cl(tid, n)] += {acc};")

    def for_stmt(self, ind, depth):
        r = self.r
        i = self.fresh("i")
        lv = self.loop_vars()
        opts = ["const", "m", "down", "lane"]
        if depth <= 1:
            opts += ["n", "grid"]
        if lv:
            opts += ["tri", "tri", "tri2"]
        kind = r.choice(opts)
        if kind == "const":
            hdr = f"for (int {i} = 0; {i} < {r.randint(0, 5)}; ++{i}) {{"
        elif kind == "m":
            lo = r.choice(["0", "0", "1", "tid & 1"])
            hdr = f"for (int {i} = {lo}; {i} < m; ++{i}) {{"
        elif kind == "down":
            hdr = f"for (int {i} = {r.choice(['m', '4', 'm - 1'])}; " \
                  f"{i} > 0; --{i}) {{"
        elif kind == "lane":
            hdr = (f"for (int {i} = lane; {i} < {r.choice([64, 70, 96, 128])};"
                   f" {i} += {r.choice(['32', '64', 'blockDim.x'])}) {{")
        elif kind == "n":
            step = r.choice([8, 16, 32])
            hdr = f"for (int {i} = 0; {i} < n; {i} += {step}) {{"
        elif kind == "grid":
            hdr = (f"for (int {i} = tid; {i} < n; "
                   f"{i} += blockDim.x * gridDim.x) {{")
        elif kind == "tri":
            hdr = f"for (int {i} = 0; {i} <= {r.choice(lv)}; ++{i}) {{"
        else:
            hdr = f"for (int {i} = {r.choice(lv)}; {i} < m; ++{i}) {{"
        self.loop(ind, depth, hdr, i)

    def while_stmt(self, ind, depth):
        r = self.r
        w = self.fresh("w")
        kind = r.choice(["down", "up", "true", "do"])
        # The counter steps first in the body, so `continue` cannot skip it.
        foot = "}"
        if kind == "down":
            pre = f"int {w} = {r.choice(['m', '3', 'lane & 3', 'm + 1'])};"
            hdr, first = f"while ({w} > 0) {{", f"--{w};"
        elif kind == "up":
            pre = f"int {w} = {r.choice(['0', 'tid & 3', '1'])};"
            hdr, first = f"while ({w} < m) {{", f"++{w};"
        elif kind == "true":
            pre = f"int {w} = 0;"
            hdr = "while (true) {"
            first = f"if ({w} >= {r.choice(['m', '4', '2'])}) break; ++{w};"
        else:
            pre = f"int {w} = 0;"
            hdr, first = "do {", f"++{w};"
            extra = f" && {self.cond(simple=True)}" if r.random() < 0.5 else ""
            foot = f"}} while ({w} < {r.choice(['m', '3'])}{extra});"
        self.loop(ind, depth, hdr, w, footer=foot, pre=pre, first=first)

    def switch_stmt(self, ind, depth, loop):
        r = self.r
        sel = r.choice(["tid & 3", "lane % 3", "m & 3"] + [
            f"{v} & 3" for v in self.loop_vars()])
        self.emit(ind, f"switch ({sel}) {{")
        for c in r.sample([0, 1, 2, 3], r.randint(1, 3)):
            self.emit(ind, f"case {c}: {{")
            # `break` inside means the switch; keep only returns as jumps.
            self.block(ind + 1, depth + 1, False, 1, 2)
            self.emit(ind + 1, "break;")
            self.emit(ind, "}")
        if r.random() < 0.5:
            self.emit(ind, "default: {")
            self.block(ind + 1, depth + 1, False, 1, 1)
            self.emit(ind, "}")
        self.emit(ind, "}")

    def barrier(self, ind):
        # Phases: reads of the tile before, the write, reads after.
        self.emit(ind, "__syncthreads();")
        self.emit(ind, f"tile[lane] = {self.float_expr()};")
        self.emit(ind, "__syncthreads();")

    # --------------------------------------------------------------- kernel
    def kernel(self):
        r = self.r
        self.lines = [
            "// Generated by scripts/fuzz_cuda_cfg.py.",
            "static __device__ __forceinline__ int cl(int x, int n) {",
            "  return x < 0 ? 0 : (x > n - 1 ? n - 1 : x);",
            "}",
            "",
            "__global__ void k(float *out, const float *in, int n, int m) {",
            "  int tid = blockIdx.x * blockDim.x + threadIdx.x;",
            "  int lane = threadIdx.x;",
        ]
        if self.barriers:
            self.emit(1, f"__shared__ float tile[{BLOCK}];")
            self.emit(1, "tile[lane] = in[cl(tid, n)];")
            self.emit(1, "__syncthreads();")
        elif self.returns and r.random() < 0.7:
            self.emit(1, "if (tid >= n) return;")
        self.emit(1, f"float a0 = in[cl(tid, n)];")
        self.floats[0].append("a0")
        while self.budget > 0:
            self.stmt(1, 0, False, top=True)
        if self.barriers and r.random() < 0.5:
            self.barrier(1)
            self.emit(1, f"out[cl(tid, n)] += tile[(lane + 1) & {BLOCK - 1}];")
        fv = self.all_floats()
        self.emit(1, f"out[cl(tid, n)] += {' + '.join(fv)};")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"


# ------------------------------------------------------------------ running
def run(cmd, timeout, cwd=None):
    """(returncode or 'timeout', combined output)."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout, cwd=cwd)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return "timeout", out
    except OSError as e:
        return "cannot run", str(e)


LOCATED = re.compile(r"^\S+?:\d+:\d+: error: (.*)$")
VERIFIER = re.compile(r"^'[\w.]+' op ")


def normalize(msg):
    msg = re.sub(r"%[\w.$-]+", "%V", msg)
    msg = re.sub(r"'[^']*'", "'...'", msg) if len(msg) > 160 else msg
    msg = re.sub(r"\b\d+\b", "N", msg)
    return msg[:160]


def write_npy(path, values):
    """A 1-D little-endian float32 .npy (format 1.0), without numpy."""
    header = ("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }"
              % len(values))
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


def classify(text, rc, out_dir, args, work, seed):
    """(class, detail) for one nabla-compile run."""
    if "failed validation" in text:
        first = next((l for l in text.splitlines() if "error" in l), text[:200])
        return "invalid-spirv", first.strip()
    if rc == "timeout":
        return "crash", f"timeout after {args.timeout} s"
    for marker in CRASH_MARKERS:
        if marker in text:
            line = next(l for l in text.splitlines() if marker in l)
            return "crash", line.strip()
    if rc == 1:
        for line in text.splitlines():
            m = LOCATED.match(line)
            if m:
                msg = normalize(m.group(1))
                if VERIFIER.match(msg):
                    msg = "[verifier] " + msg
                return "refused", msg
        first = text.strip().splitlines()[0] if text.strip() else "(no output)"
        return "crash", "exit 1 without a located error: " + first
    if rc != 0:
        first = text.strip().splitlines()[0] if text.strip() else "(no output)"
        return "crash", f"exit {rc}: {first}"
    # ok: double-check every module with spirv-val.
    try:
        with open(os.path.join(out_dir, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        return "crash", f"exit 0 but no readable manifest: {e}"
    for files in manifest.get("modules", {}).values():
        for spv in files:
            vrc, vout = run([args.spirv_val, "--target-env", "vulkan1.1",
                             os.path.join(out_dir, spv)], args.timeout)
            if vrc != 0:
                first = vout.strip().splitlines()[0] if vout.strip() else ""
                return "invalid-spirv", f"spirv-val: {first}"
    if args.run:
        kernels = manifest.get("kernels", [])
        if not kernels:
            return "run-fail", "manifest lists no kernel"
        r = random.Random(seed)
        inp = os.path.join(work, "in.npy")
        outp = os.path.join(work, "out.npy")
        write_npy(inp, [r.uniform(-2, 2) for _ in range(RUN_N)])
        write_npy(outp, [0.0] * RUN_N)
        res = os.path.join(work, "res")
        lrc, lout = run([os.path.join(args.bin, "nabla-launch"), out_dir,
                         f"--kernel={kernels[0]['name']}", f"--grid={GRID}",
                         f"--block={BLOCK}", f"--arg={outp}", f"--arg={inp}",
                         f"--arg=i32:{RUN_N}", f"--arg=i32:{RUN_M}",
                         f"--out={res}", f"--timeout={args.timeout}"],
                        args.timeout + 10)
        if lrc != 0 or not os.path.exists(os.path.join(res, "arg0.npy")):
            first = lout.strip().splitlines()[0] if lout.strip() else ""
            with open(os.path.join(work, "launch.txt"), "w") as f:
                f.write(lout)
            return "run-fail", f"nabla-launch exit {lrc}: {first}"
    return "ok", ""


def snapshot(bindir, names, into):
    """Copies bindir/NAME for each name into `into`, retrying while a build
    is rewriting them; returns `into`."""
    for name in names:
        src, dst = os.path.join(bindir, name), os.path.join(into, name)
        for attempt in range(120):
            try:
                shutil.copy2(src, dst)
                if subprocess.run([dst, "--version"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL,
                                  timeout=30).returncode == 0:
                    break
            except (OSError, subprocess.TimeoutExpired):
                pass
            time.sleep(5)
        else:
            sys.exit(f"cfg-fuzz: cannot copy a working {src}")
    return into


def one(seed, opt, src, args):
    """Compile and classify one (seed, opt); returns a result dict."""
    with tempfile.TemporaryDirectory(prefix="cfg-fuzz-") as work:
        cu = os.path.join(work, "k.cu")
        ll = os.path.join(work, "k.ll")
        out_dir = os.path.join(work, "out")
        with open(cu, "w") as f:
            f.write(src)
        ccmd = [CLANG] + CLANG_FLAGS + [f"-O{opt}", cu, "-o", ll]
        crc, cout = run(ccmd, args.timeout)
        res = {"seed": seed, "opt": opt}
        if crc != 0:
            res.update(cls="gen-error", detail=f"clang: {cout.strip()[:300]}")
            text, ncmd = cout, ccmd
        else:
            ncmd = [os.path.join(args.bin, "nabla-compile"), ll,
                    "--target=spirv", f"--block={BLOCK}", "-o", out_dir]
            t0 = time.time()
            nrc, text = run(ncmd, args.timeout)
            res["nabla_s"] = time.time() - t0
            cls, detail = classify(text, nrc, out_dir, args, work, seed)
            res.update(cls=cls, detail=detail)
        if res["cls"] != "ok":
            d = os.path.join(args.keep, f"{res['cls']}-s{seed}-O{opt}")
            os.makedirs(d, exist_ok=True)
            shutil.copy(cu, os.path.join(d, "k.cu"))
            if os.path.exists(ll):
                shutil.copy(ll, os.path.join(d, "k.ll"))
            with open(os.path.join(d, "stderr.txt"), "w") as f:
                f.write(text)
            launch = os.path.join(work, "launch.txt")
            if os.path.exists(launch):
                shutil.copy(launch, os.path.join(d, "launch.txt"))
            with open(os.path.join(d, "cmd.txt"), "w") as f:
                f.write(" ".join(ccmd) + "\n" + " ".join(ncmd) + "\n"
                        + res["detail"] + "\n")
            res["saved"] = d
        return res


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Control-flow fuzzer for nabla-compile --target=spirv "
                    "on clang-compiled CUDA kernels.")
    ap.add_argument("--seeds", default="0:100", help="A:B, seeds A .. B-1")
    ap.add_argument("--opt", default="1,2,3",
                    help="clang -O levels, comma-separated, or 'random'")
    ap.add_argument("--keep", default="/tmp/cfg-fuzz-failures",
                    help="where failing kernels are saved")
    ap.add_argument("--run", action="store_true",
                    help="also launch ok kernels with nabla-launch")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                    help="directory of nabla-compile / nabla-launch")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run the binaries in --bin in place")
    ap.add_argument("--spirv-val", default="spirv-val")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=60,
                    help="seconds per tool invocation")
    ap.add_argument("--print", type=int, metavar="SEED",
                    help="print the kernel of SEED and exit")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)

    if args.print is not None:
        sys.stdout.write(Gen(args.print).kernel())
        return 0
    a, _, b = args.seeds.partition(":")
    seeds = range(int(a), int(b)) if b else [int(a)]
    args.bin = os.path.abspath(args.bin)
    snap = None
    if not args.no_snapshot:
        snap = tempfile.TemporaryDirectory(prefix="cfg-fuzz-bin-")
        names = ["nabla-compile"] + (["nabla-launch"] if args.run else [])
        args.bin = snapshot(args.bin, names, snap.name)
    args.keep = os.path.abspath(args.keep)
    random_opt = args.opt == "random"
    opts = [1, 2, 3] if random_opt else [int(x) for x in args.opt.split(",")]

    jobs = []
    for s in seeds:
        src = Gen(s).kernel()
        levels = [random.Random(s).choice(opts)] if random_opt else opts
        jobs += [(s, o, src) for o in levels]

    t0 = time.time()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        futs = [ex.submit(one, s, o, src, args) for s, o, src in jobs]
        for fut in futs:
            res = fut.result()
            results.append(res)
            if args.verbose or res["cls"] not in ("ok", "refused"):
                print(f"seed {res['seed']} -O{res['opt']}: {res['cls']}"
                      + (f": {res['detail']}" if res["detail"] else ""),
                      flush=True)
    elapsed = time.time() - t0

    count = collections.Counter(r["cls"] for r in results)
    refusals = collections.Counter(r["detail"] for r in results
                                   if r["cls"] == "refused")
    per_opt = collections.Counter(r["opt"] for r in results)
    levels = "/".join(f"O{o}" for o in sorted(per_opt))
    classes = "; ".join(f"{n}x {d}" for d, n in refusals.most_common())
    line = (f"cfg-fuzz: {len(results)} kernels ({levels}): ok {count['ok']}, "
            f"refused {count['refused']}"
            + (f" ({classes})" if classes else "")
            + f", invalid-spirv {count['invalid-spirv']}, "
              f"crash {count['crash']}")
    if args.run:
        line += f", run-fail {count['run-fail']}"
    if count["gen-error"]:
        line += f", gen-error {count['gen-error']}"
    print(line)
    print(f"cfg-fuzz: {elapsed:.0f} s ({elapsed / max(1, len(results)):.2f} "
          f"s per kernel)" + (f"; failures in {args.keep}"
                             if len(results) > count["ok"] else ""))
    for o in sorted(per_opt):
        c = collections.Counter(r["cls"] for r in results if r["opt"] == o)
        print(f"  -O{o}: "
              + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    bad = count["invalid-spirv"] + count["crash"] + count["run-fail"] \
        + count["gen-error"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
