# ===- nabla/_host.py - Run host programs -------------------------------=== #
#
# nabla.run_host: a whole GPU program (host code plus kernels, see
# docs/HostPrograms.md) run by `nabla-run FILE --entry=NAME` in a child
# process. libnabla_mgpu ends its process on a device error (the mgpu* C
# API cannot return one), which must not end the Python interpreter, and the
# program's output is captured from the child's stdout.
#
# ===----------------------------------------------------------------------=== #
import os
import shutil
import subprocess
import tempfile


class HostProgramError(Exception):
    """nabla-run failed: `returncode` (1 compile or runtime error, 2 usage),
    `stderr` holds its messages and `stdout` what the program printed."""

    def __init__(self, returncode, stdout, stderr):
        super().__init__(stderr.strip() or f"nabla-run exited with {returncode}")
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


class HostResult:
    """What a host program printed, and its exit status (the entry's i32
    result, or 0)."""

    def __init__(self, returncode, stdout, stderr):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self):
        return f"HostResult(returncode={self.returncode}, stdout={self.stdout!r})"


def _nabla_run():
    """nabla-run: $NABLA_BIN, next to the package (build tree or
    installation), else on PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    if os.environ.get("NABLA_BIN"):
        candidates.append(os.path.join(os.environ["NABLA_BIN"], "nabla-run"))
    # build/python/nabla -> build/bin; <prefix>/lib/python3/site-packages/nabla
    # -> <prefix>/bin.
    candidates.append(os.path.join(here, "..", "..", "bin", "nabla-run"))
    candidates.append(os.path.join(here, "..", "..", "..", "..", "bin",
                                   "nabla-run"))
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    found = shutil.which("nabla-run")
    if not found:
        raise FileNotFoundError("nabla-run not found (set NABLA_BIN)")
    return found


def run_host(module, entry="main", target=None, device=None, timeout=None,
             check=True):
    """Compiles `module` (a nabla.Module or MLIR text) for the device and
    runs its function `entry` (no arguments; returns nothing or an i32),
    returning a HostResult with the program's stdout. `target` is vulkan
    (default), cuda or hip; `timeout` bounds the whole run in seconds. With
    `check`, a non-zero exit raises HostProgramError."""
    text = module if isinstance(module, str) else str(module)
    with tempfile.TemporaryDirectory(prefix="nabla-host-") as work:
        path = os.path.join(work, "program.mlir")
        with open(path, "w") as file:
            file.write(text)
        command = [_nabla_run(), path, f"--entry={entry}"]
        if target:
            command.append(f"--target={target}")
        if device is not None:
            command.append(f"--device={int(device)}")
        done = subprocess.run(command, capture_output=True, text=True,
                              timeout=timeout)
    if check and done.returncode != 0:
        raise HostProgramError(done.returncode, done.stdout, done.stderr)
    return HostResult(done.returncode, done.stdout, done.stderr)
