# ===- test_fake_drivers.py - CUDA and HIP back ends without a GPU -------=== #
#
# The runtime opens libcuda.so.1 / libamdhip64.so with dlopen; with
# build/test/fake-drivers/<api> first on LD_LIBRARY_PATH it opens the
# stand-ins of test/lib/FakeDrivers instead, so the CUDA and HIP back ends'
# host code runs here: allocation, copies, argument packing, repeats with
# restored inputs, events around the launch, polling and clean-up (the fake
# fails the process on a leak). The fake's "kernel" adds 1 to the f32 buffer
# of its first argument and advances a fake clock by 10 ns per thread, so the
# outputs tell one launch from several and the event times are exact.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration -k fake
# ===----------------------------------------------------------------------=== #
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from frontend_helpers import compile_cuda, mangled, needs_cuda_headers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NABLA_BIN", os.path.join(ROOT, "build", "bin"))
BUILD = os.path.dirname(os.path.abspath(BIN))
FAKES = os.path.join(BUILD, "test", "fake-drivers")
CORPUS = os.path.join(ROOT, "test", "Integration", "corpus")
LIBRARY = {"cuda": "libcuda.so.1", "hip": "libamdhip64.so"}
# What nabla-compile writes for each back end.
COMPILE = {"cuda": ["--target=nvvm", "--chip=sm_90"],
           "hip": ["--target=rocdl", "--chip=gfx90a"]}

pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(FAKES, "cuda", LIBRARY["cuda"])),
    reason="the fake drivers are not built (test/lib/FakeDrivers)")


def fake_env(api):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        [os.path.join(FAKES, api)] + [p for p in [env.get("LD_LIBRARY_PATH")] if p])
    return env


def run(args, api, expect=0):
    result = subprocess.run([str(a) for a in args], capture_output=True,
                            text=True, timeout=300, env=fake_env(api))
    assert result.returncode == expect, (
        f"{' '.join(map(str, args))} exited {result.returncode}, expected "
        f"{expect}\nstdout: {result.stdout}\nstderr: {result.stderr}")
    assert "fake GPU driver: leaked" not in result.stderr
    return result


def spin(tmp_path, api, extra=(), launcher=None):
    x = np.linspace(-0.9, 0.9, 256, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    command = launcher or [os.path.join(BIN, "nabla-run"),
                           os.path.join(CORPUS, "timing.mlir")]
    r = run(command + [f"--target={api}", "--kernel=spin", "--grid=4",
                       "--block=64", f"--arg={tmp_path / 'x.npy'}",
                       "--arg=index:3", "--arg=index:256", f"--out={out}"]
            + list(extra), api)
    return r, x, np.load(out / "arg0.npy")


@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_repeat_and_events(tmp_path, api):
    r, x, out = spin(tmp_path, api, ["--repeat=5", "--time=json"])
    times = json.loads(r.stdout.splitlines()[-1])
    assert times["backend"] == api and "fake" in times["device"]
    # Events bracket exactly one launch: 4 workgroups * 64 threads * 10 ns.
    assert times["kernel_ns"] == [2560] * 5
    assert times["kernel_ns_median"] == 2560
    assert len(times["upload_ns"]) == 5
    assert times["download_ns"] >= 0 and times["launch_wall_ns"] > 0
    # Every repeat started from x: the buffers hold one launch's result.
    np.testing.assert_array_equal(out, x + 1)


@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_repeat_without_time(tmp_path, api):
    r, x, out = spin(tmp_path, api, ["--repeat=3"])
    assert r.stdout == ""
    np.testing.assert_array_equal(out, x + 1)


@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_nabla_launch(tmp_path, api):
    compiled = tmp_path / "compiled"
    run([os.path.join(BIN, "nabla-compile"), os.path.join(CORPUS, "timing.mlir")]
        + COMPILE[api] + ["-o", compiled], api)
    r, x, out = spin(tmp_path, api, ["--repeat=2", "--time"],
                     launcher=[os.path.join(BIN, "nabla-launch"), compiled])
    assert "kernel (device clock):          min 2.56 us, median 2.56 us, " \
           "max 2.56 us" in r.stdout
    np.testing.assert_array_equal(out, x + 1)


@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_python_times(api):
    program = f"""
import numpy as np, nabla
m = nabla.Module.parse(open({os.path.join(CORPUS, 'timing.mlir')!r}).read())
x = np.linspace(-0.9, 0.9, 256, dtype=np.float32)
out, times = nabla.run(m, "spin", 4, 64, [x, 3, 256], target={api!r},
                       repeat=4, times=True)
assert np.array_equal(out[0], x + 1), out[0]
assert times.kernel_ns == [2560.0] * 4 and times.median_ns == 2560.0, times.kernel_ns
assert times.backend == {api!r} and len(times.upload_ns) == 4
print("ok")
"""
    env = fake_env(api)
    env["PYTHONPATH"] = os.path.join(BUILD, "python")
    r = subprocess.run([sys.executable, "-c", program], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_python_device_arrays_in_place():
    # CuPy-like arrays (only __cuda_array_interface__) in the fake's device
    # memory: nabla.run picks CUDA, passes the pointer in place (no host
    # copy either way: the fake counts bytes per kind of copy), restores it
    # on the device between repeats, and checks that it is CUDA memory that
    # holds the whole array.
    program = f"""
import ctypes, numpy as np, nabla
from ctypes import byref, c_size_t, c_uint64, c_void_p
cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuMemcpyHtoD_v2.argtypes = [c_uint64, c_void_p, c_size_t]
cuda.cuMemcpyDtoH_v2.argtypes = [c_void_p, c_uint64, c_size_t]
cuda.cuMemFree_v2.argtypes = [c_uint64]

class CupyLike:
    def __init__(self, n, allocate=None, offset=0):
        self.base = c_uint64()
        assert cuda.cuMemAlloc_v2(byref(self.base), (allocate or n) * 4) == 0
        self.pointer, self.n = self.base.value + offset, n
        self.__cuda_array_interface__ = {{
            "shape": (n,), "typestr": "<f4", "data": (self.pointer, False),
            "version": 3, "strides": None, "stream": 1}}
    def set(self, a):
        assert cuda.cuMemcpyHtoD_v2(self.pointer, a.ctypes.data, a.nbytes) == 0
    def get(self):
        out = np.empty(self.n, np.float32)
        assert cuda.cuMemcpyDtoH_v2(out.ctypes.data, self.pointer, out.nbytes) == 0
        return out
    def free(self):
        assert cuda.cuMemFree_v2(self.base.value) == 0

def copied():
    counts = [c_uint64() for _ in range(3)]
    cuda.nablaFakeCopiedBytes(*map(byref, counts))
    return np.array([c.value for c in counts])

m = nabla.Module.parse(open({os.path.join(CORPUS, 'timing.mlir')!r}).read())
x = np.linspace(-0.9, 0.9, 256, dtype=np.float32)
d = CupyLike(256)
d.set(x)
before = copied()
out = nabla.run(m, "spin", 4, 64, [d, 3, 256])       # no target: CUDA
assert out[0] is d and out[1] is None
assert np.array_equal(d.get(), x + 1), d.get()
assert list(copied() - before) == [0, 4 * 256, 0], copied() - before  # the get()

before = copied()
out, times = nabla.run(m, "spin", 4, 64, [d, 3, 256], repeat=3, times=True)
assert np.array_equal(d.get(), x + 1 + 1)             # one launch's result
assert times.backend == "cuda" and times.kernel_ns == [2560.0] * 3
# a device-side copy, restored before the 3 timed repeats (an untimed first
# launch precedes them); the get() again
assert list(copied() - before) == [0, 1024, 4 * 1024], copied() - before

kernel = m.kernel("spin")
kernel(d, 3, 256, grid=4, block=64, target="cuda")
assert np.array_equal(d.get(), x + 1 + 1 + 1)

outside = CupyLike(256, allocate=256, offset=8)      # runs past its allocation
try:
    nabla.run(m, "spin", 4, 64, [outside, 3, 256])
    raise SystemExit("no error for a pointer past its allocation")
except RuntimeError as e:
    assert "parameter #0" in str(e) and "do not fit in its allocation of 1024 bytes" in str(e), e
host = np.zeros(256, np.float32)
fake = CupyLike(256)
fake.__cuda_array_interface__["data"] = (host.ctypes.data, False)
try:
    nabla.run(m, "spin", 4, 64, [fake, 3, 256])
    raise SystemExit("no error for host memory")
except RuntimeError as e:
    assert "not CUDA memory" in str(e), e
for a in (d, outside, fake):
    a.free()
print("ok")
"""
    env = fake_env("cuda")
    env["PYTHONPATH"] = os.path.join(BUILD, "python")
    env.pop("NABLA_TARGET", None)
    r = subprocess.run([sys.executable, "-c", program], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_fake_reports_leaks(api):
    # The tester's own check: an allocation never freed fails the process.
    alloc = "cuMemAlloc_v2" if api == "cuda" else "hipMalloc"
    program = (f"import ctypes; lib = ctypes.CDLL({LIBRARY[api]!r}); "
               f"p = ctypes.c_uint64(); assert lib.{alloc}(ctypes.byref(p), 64) == 0")
    r = subprocess.run([sys.executable, "-c", program], capture_output=True,
                       text=True, timeout=60, env=fake_env(api))
    assert r.returncode == 1
    assert "fake GPU driver: leaked 1 allocations" in r.stderr


@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_dynamic_shared_memory_is_a_launch_parameter(tmp_path, api):
    """--dynamic-shared-memory reaches cuLaunchKernel/hipModuleLaunchKernel's
    shared-memory parameter (the fake driver logs it); without it the launch
    of a kernel using dynamic shared memory is refused."""
    np.save(tmp_path / "x.npy", np.zeros(64, np.float32))
    command = [os.path.join(BIN, "nabla-run"),
               os.path.join(CORPUS, "dynamic_shared.mlir"), f"--target={api}",
               "--kernel=reverse", "--grid=1", "--block=64",
               f"--arg={tmp_path / 'x.npy'}", "--arg=index:64",
               f"--out={tmp_path}"]
    env = fake_env(api)
    env["NABLA_FAKE_LOG_LAUNCHES"] = "1"
    r = subprocess.run(command + ["--dynamic-shared-memory=256"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert "launch with 256 bytes of dynamic shared memory" in r.stderr
    r = subprocess.run(command, capture_output=True, text=True, timeout=300,
                       env=env)
    assert r.returncode == 1
    assert "uses dynamic shared memory" in r.stderr


@needs_cuda_headers
@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_dynamic_shared_memory_gradient_reserves_the_shadow(tmp_path, api):
    """A gradient request through extern __shared__ keeps the shadow after
    the primal: the launch asks the driver for twice the bytes given."""
    ll = compile_cuda(tmp_path, "dynamic_shared_grad", 2)
    for name in ["x", "dx", "y", "dy"]:
        np.save(tmp_path / f"{name}.npy", np.zeros(64, np.float32))
    env = fake_env(api)
    env["NABLA_FAKE_LOG_LAUNCHES"] = "1"
    r = subprocess.run(
        [os.path.join(BIN, "nabla-run"), str(ll), f"--target={api}",
         f"--kernel={mangled(ll, 'grad_scaled_copy')}", "--grid=1",
         "--block=64", "--dynamic-shared-memory=256", f"--out={tmp_path}"] +
        [f"--arg={tmp_path / name}.npy" for name in ["x", "dx", "y", "dy"]],
        capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert "launch with 512 bytes of dynamic shared memory" in r.stderr



# A host program: device memory, copies both ways, a kernel launch on the
# program's stream, freeing. The fake's kernel adds 1 to its first buffer.
HOST_PROGRAM = """
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %host = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %k = arith.index_cast %i : index to i32
    %v = arith.sitofp %k : i32 to f32
    memref.store %v, %host[%i] : memref<4xf32>
  }
  %device = gpu.alloc () : memref<4xf32>
  gpu.memcpy %device, %host : memref<4xf32>, memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %device[%tx] : memref<4xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %device[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.memcpy %host, %device : memref<4xf32>, memref<4xf32>
  gpu.dealloc %device : memref<4xf32>
  %cast = memref.cast %host : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%cast) : (memref<*xf32>) -> ()
  memref.dealloc %host : memref<4xf32>
  return
}
func.func private @printMemrefF32(memref<*xf32>)
"""


@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_host_program_through_libnabla_mgpu(tmp_path, api):
    """nabla-run --entry on CUDA/HIP: the mgpu* calls of a host program reach
    the driver through libnabla_mgpu's shim and the one CUDA/HIP Device
    (module load, allocation, unified-addressing copies, a launch on the
    program's stream, synchronization, freeing), with nothing leaked."""
    if api == "cuda" and not os.path.exists("/usr/local/cuda/bin/ptxas"):
        pytest.skip("no ptxas: the NVVM pipeline assembles a cubin")
    program = tmp_path / "program.mlir"
    program.write_text(HOST_PROGRAM)
    r = run([os.path.join(BIN, "nabla-run"), program, "--entry=main",
             f"--target={api}"], api)
    # 0..3 copied in, the fake kernel's +1, copied back.
    assert "[1,  2,  3,  4]" in r.stdout, r.stdout
