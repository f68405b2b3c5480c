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
    result, or 0). `args`: with arguments given, their values after the
    run (buffers read back as NumPy arrays, scalars as given)."""

    def __init__(self, returncode, stdout, stderr, args=None):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.args = args

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


def _module_text(module):
    return module if isinstance(module, str) else str(module)


def host_parameters(module, entry):
    """The MLIR types (as text) of host function `entry`'s parameters."""
    from . import _nabla
    from ._ir import Module
    parsed = Module.parse(_module_text(module))
    types = _nabla.host_function_parameters(parsed._native, entry)
    if types is None:
        raise ValueError(f"the module has no host function @{entry}")
    return types


_SCALAR_SPECS = {"f32": float, "f64": float, "i32": int, "i64": int,
                 "index": int}


def _argument_specs(types, args, work, prefix):
    """--arg specs for `args` (NumPy arrays for memref parameters, numbers
    for scalars), writing the arrays under `work`."""
    import numpy as np
    if len(args) != len(types):
        raise ValueError(f"the entry takes {len(types)} arguments, "
                         f"got {len(args)}")
    specs = []
    for index, (type_text, value) in enumerate(zip(types, args)):
        if type_text.startswith("memref<"):
            path = os.path.join(work, f"{prefix}{index}.npy")
            np.save(path, np.ascontiguousarray(value))
            specs.append(path)
        elif type_text in _SCALAR_SPECS:
            specs.append(f"{type_text}:{_SCALAR_SPECS[type_text](value)!r}")
        else:
            raise TypeError(f"argument #{index}: a parameter of type "
                            f"{type_text} cannot be passed from Python")
    return specs


def _run(command, timeout, check):
    done = subprocess.run(command, capture_output=True, text=True,
                          timeout=timeout)
    if check and done.returncode != 0:
        raise HostProgramError(done.returncode, done.stdout, done.stderr)
    return done


def _read_outputs(types, args, directory):
    import numpy as np
    return [np.load(os.path.join(directory, f"arg{k}.npy"))
            if t.startswith("memref<") else value
            for k, (t, value) in enumerate(zip(types, args))]


def _command(path, entry, target, device):
    command = [_nabla_run(), path, f"--entry={entry}"]
    if target:
        command.append(f"--target={target}")
    if device is not None:
        command.append(f"--device={int(device)}")
    return command


def run_host(module, entry="main", args=None, target=None, device=None,
             timeout=None, check=True):
    """Compiles `module` (a nabla.Module or MLIR text) for the device and
    runs its function `entry`, returning a HostResult with the program's
    stdout. `args` (optional) gives the entry's arguments: a NumPy array per
    memref parameter (copied into device memory, read back into
    `result.args`), a number per f32/f64/i32/i64/index parameter. `target`
    is vulkan (default), cuda or hip; `timeout` bounds the whole run in
    seconds. With `check`, a non-zero exit raises HostProgramError."""
    text = _module_text(module)
    with tempfile.TemporaryDirectory(prefix="nabla-host-") as work:
        path = os.path.join(work, "program.mlir")
        with open(path, "w") as file:
            file.write(text)
        command = _command(path, entry, target, device)
        types = None
        if args is not None:
            types = host_parameters(text, entry)
            command += [f"--arg={spec}" for spec in
                        _argument_specs(types, list(args), work, "in")]
            command.append(f"--out={os.path.join(work, 'out')}")
        done = _run(command, timeout, check)
        outputs = None
        if args is not None and done.returncode == 0:
            outputs = _read_outputs(types, list(args),
                                    os.path.join(work, "out"))
    return HostResult(done.returncode, done.stdout, done.stderr, outputs)


def run_host_batch(module, entry, arg_sets, target=None, device=None,
                   timeout=None):
    """Runs host function `entry` once per list in `arg_sets` (arguments as
    for run_host), compiling once; returns the arguments' values after each
    run."""
    text = _module_text(module)
    types = host_parameters(text, entry)
    with tempfile.TemporaryDirectory(prefix="nabla-host-") as work:
        path = os.path.join(work, "program.mlir")
        with open(path, "w") as file:
            file.write(text)
        lines = [" ".join(_argument_specs(types, list(args), work, f"r{k}_"))
                 for k, args in enumerate(arg_sets)]
        sets = os.path.join(work, "sets.txt")
        with open(sets, "w") as file:
            file.write("\n".join(lines) + "\n")
        command = _command(path, entry, target, device)
        command += [f"--arg-sets={sets}", f"--out={os.path.join(work, 'out')}"]
        _run(command, timeout, check=True)
        return [_read_outputs(types, list(args),
                              os.path.join(work, "out", str(k)))
                for k, args in enumerate(arg_sets)]
