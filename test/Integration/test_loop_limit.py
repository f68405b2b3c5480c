# Mesa's llvmpipe (lavapipe, the default Vulkan device) ends every loop of a
# thread once the thread has run 65535 loop iterations in all, and the
# kernel goes on with a wrong result. Kernels compiled for it count their
# iterations (nabla-detect-loop-limit) and the launch fails instead: a
# primal loop nest, and a gradient whose reverse sweep (attention-style rows
# taped in global memory, each step with inner loops) used to stop part way
# and leave a wrong gradient with no error (flash-attention-minimal's
# forward kernel at 4 x 4 tiles of 16).
import functools
import os
import subprocess
import sys

import numpy as np
import pytest

from frontend_helpers import BIN, compile_cuda, mangled, needs_cuda_headers

pytestmark = needs_cuda_headers


def python(program):
    """Runs `program` with the built Python package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(os.path.dirname(BIN), "python")
    return subprocess.run([sys.executable, "-c", program],
                          capture_output=True, text=True, timeout=600,
                          env=env)


@functools.lru_cache(maxsize=None)
def on_lavapipe():
    done = python("import nabla; print(nabla.device('vulkan')[0])")
    return done.returncode == 0 and "llvmpipe" in done.stdout


@pytest.fixture(autouse=True)
def lavapipe_only():
    if not on_lavapipe():
        pytest.skip("the default device is not lavapipe")


def run_count(tmp_path, ll, n, m):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    np.save(tmp_path / "z.npy", np.zeros(4, np.float32))
    return subprocess.run(
        [os.path.join(BIN, "nabla-run"), str(ll),
         f"--kernel={mangled(ll, 'count')}", "--grid=1", "--block=4",
         f"--arg={tmp_path / 'z.npy'}", f"--arg=i32:{n}", f"--arg=i32:{m}",
         f"--out={out}"], capture_output=True, text=True, timeout=300)


def test_primal_within_and_past_the_limit(tmp_path):
    ll = compile_cuda(tmp_path, "loop_limit", 1)
    done = run_count(tmp_path, ll, 300, 200)
    assert done.returncode == 0, done.stderr
    assert np.load(tmp_path / "out" / "arg0.npy").tolist() == [60000.0] * 4
    assert "loop limit" not in done.stdout
    done = run_count(tmp_path, ll, 1000, 100)
    assert done.returncode == 1, done.stdout
    assert "ended a thread's loops before they were done" in done.stderr \
        and "65535" in done.stderr, done.stderr
    assert "give each thread less work" in done.stderr


def test_gradient_within_and_past_the_limit(tmp_path):
    ll = compile_cuda(tmp_path, "loop_limit", 2)
    done = python(f"""
import numpy as np, nabla
module = nabla.Module.parse_llvm_ir(open({str(ll)!r}).read())
kernel = {mangled(ll, "rows_attention")!r}
rng = np.random.default_rng(31)
def args(rows):
    return [rng.uniform(-1, 1, rows * 256).astype(np.float32),
            rng.uniform(-1, 1, 256).astype(np.float32),
            np.zeros(rows * 256, np.float32), rows, np.float32(0.5)]
report = nabla.check_gradient(module, kernel, grid=1, block=16,
                              args=args(3), dup=[0, 1, 2], eps=1e-4)
assert report["ok"], str(report)
try:
    nabla.check_gradient(module, kernel, grid=1, block=16, args=args(16),
                         dup=[0, 1, 2], eps=1e-4)
except RuntimeError as e:
    print("refused:", e)
else:
    raise SystemExit("16 rows: no error")
""")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused:" in done.stdout and "loops before they were done" in \
        done.stdout, done.stdout
