# ===- test_host_programs.py - nabla.run_host --------------------------=== #
#
# A whole program (host code launching a kernel) run through nabla-run
# --entry from Python: its printed output, and an error as an exception (a
# device error ends the child process, not the interpreter).
#
# ===----------------------------------------------------------------------=== #
import os

import pytest

import nabla


@pytest.fixture(autouse=True)
def _tool_environment(monkeypatch):
    # Under scripts/sanitize.sh this interpreter has the shared ASan runtime
    # preloaded for the instrumented extension; nabla-run links its own, which
    # that preload would clash with. The script names the environment the
    # tool gets instead.
    for name in ("LD_PRELOAD", "ASAN_OPTIONS"):
        value = os.environ.get("NABLA_SANITIZE_CHILD_" + name)
        if value is not None:
            monkeypatch.setenv(name, value)

PROGRAM = """
func.func @main() {
  %out = memref.alloc() : memref<4xf32>
  %c1 = arith.constant 1 : index
  %n = arith.constant NTHREADS : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %n, %sy = %c1, %sz = %c1) {
    %t = arith.index_cast %tx : index to i32
    %f = arith.sitofp %t : i32 to f32
    %s = gpu.all_reduce add %f uniform {} : (f32) -> f32
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      memref.store %s, %out[%c0] : memref<4xf32>
    }
    gpu.terminator
  }
  %any = memref.cast %out : memref<4xf32> to memref<*xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %out[%c0] : memref<4xf32>
  vector.print %v : f32
  return
}
"""


def test_run_host_prints():
    result = nabla.run_host(nabla.Module.parse(PROGRAM.replace("NTHREADS", "8")))
    assert result.returncode == 0
    assert result.stdout.strip() == "28"


def test_run_host_error_is_an_exception():
    # A block of 4096 threads: a located compile error (run-time sizes are
    # checked by libnabla_mgpu, test/Integration/host/errors.mlir).
    with pytest.raises(nabla.HostProgramError) as error:
        nabla.run_host(PROGRAM.replace("NTHREADS", "4096"))
    assert error.value.returncode == 1
    assert "known_block_size value 4096 out of range" in error.value.stderr
