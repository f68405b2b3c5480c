# ===- nabla/_host_grad.py - Gradients of whole GPU programs -----------=== #
#
# Host-level AD from Python (docs/HostAD.md): grad_host differentiates a host
# function that launches kernels -- it adds a wrapper requesting
# `nabla.autodiff` of it and runs the wrapper with nabla-run -- and
# check_gradient_host compares that gradient with central finite
# differences of the whole program, all perturbed runs in one nabla-run
# (--arg-sets: compiled once).
#
# ===----------------------------------------------------------------------=== #
import re

import numpy as np

from ._host import _module_text, host_parameters, run_host, run_host_batch


class HostGradient:
    """`outputs`: the arguments after the gradient run (buffers hold the
    program's final state, except dupnoneed ones); `gradients`: for each
    argument, the shadow on exit (J^T of the seeds: the cotangent of the
    initial state) for dup buffers, None for the others."""

    def __init__(self, outputs, gradients, stdout):
        self.outputs = outputs
        self.gradients = gradients
        self.stdout = stdout

    def __repr__(self):
        return f"HostGradient(gradients={self.gradients!r})"


def _is_buffer(type_text):
    return type_text.startswith("memref<")


def _is_float_buffer(type_text):
    element = type_text[len("memref<"):-1].split("x")[-1].split(",")[0]
    return element.strip() in ("f16", "bf16", "f32", "f64")


def _dup_positions(types, dup):
    if dup is None:
        return [k for k, t in enumerate(types) if _is_float_buffer(t)]
    dup = list(dict.fromkeys(dup))
    for k in dup:
        if not 0 <= k < len(types) or not _is_buffer(types[k]):
            raise ValueError(f"dup position {k} is not a buffer parameter")
    return dup


def _with_wrapper(text, entry, types, dup, name, op="autodiff"):
    """`text` with a host function `name` taking each argument (and a shadow
    after each dup one) that requests nabla.`op` (autodiff or fwddiff) of
    `entry`."""
    params, operands, operand_types, activities = [], [], [], []
    for k, type_text in enumerate(types):
        params.append(f"%a{k}: {type_text}")
        operands.append(f"%a{k}")
        operand_types.append(type_text)
        if k in dup:
            params.append(f"%s{k}: {type_text}")
            operands.append(f"%s{k}")
            operand_types.append(type_text)
            activities.append("#nabla.activity<dup>")
        else:
            activities.append("#nabla.activity<const>")
    wrapper = (
        f"func.func @{name}({', '.join(params)}) {{\n"
        f"  nabla.{op} @{entry}({', '.join(operands)}) "
        f"{{activity = [{', '.join(activities)}], ret_activity = []}} : "
        f"({', '.join(operand_types)}) -> ()\n"
        f"  return\n}}\n")
    stripped = text.rstrip()
    if re.search(r"^\s*module\b", stripped, re.M):
        closing = stripped.rindex("}")
        return stripped[:closing] + wrapper + stripped[closing:] + "\n"
    return stripped + "\n" + wrapper


def _differentiate(module, entry, args, dup, shadows, op, target, device,
                   timeout):
    """Runs nabla.`op` of host function `entry` with `shadows` ({position:
    array}, default zero) after each dup buffer; returns (types, outputs,
    shadows on exit, stdout)."""
    text = _module_text(module)
    types = host_parameters(text, entry)
    dup = _dup_positions(types, dup)
    shadows = dict(shadows or {})
    for k in shadows:
        if k not in dup:
            raise ValueError(f"a seed or tangent for position {k}, which is "
                             "not dup")
    name = f"__nabla_{op}_host_{entry}"
    wrapped = _with_wrapper(text, entry, types, dup, name, op)
    call_args = []
    for k, value in enumerate(args):
        call_args.append(np.array(value) if _is_buffer(types[k]) else value)
        if k in dup:
            array = np.asarray(value)
            shadow = shadows.get(k)
            call_args.append(np.zeros_like(array) if shadow is None else
                             np.asarray(shadow, dtype=array.dtype).reshape(
                                 array.shape))
    result = run_host(wrapped, name, call_args, target=target, device=device,
                      timeout=timeout)
    outputs, exits, at = [], [], 0
    for k in range(len(types)):
        outputs.append(result.args[at])
        at += 1
        if k in dup:
            exits.append(result.args[at])
            at += 1
        else:
            exits.append(None)
    return outputs, exits, result.stdout


def grad_host(module, entry, args, dup=None, seeds=None, target=None,
              device=None, timeout=None):
    """Reverse-mode gradient of host function `entry` of `module` (a
    nabla.Module or MLIR text) at `args` (NumPy arrays for its memref
    parameters, numbers for its scalars). `dup` lists the buffer positions
    that get shadows (default: every float buffer); `seeds` maps positions
    to the cotangent of their final state (default zero). Returns a
    HostGradient."""
    outputs, gradients, stdout = _differentiate(
        module, entry, args, dup, seeds, "autodiff", target, device, timeout)
    return HostGradient(outputs, gradients, stdout)


def jvp_host(module, entry, args, tangents, dup=None, target=None,
             device=None, timeout=None):
    """Forward mode (nabla.fwddiff) of host function `entry`: `tangents`
    maps dup buffer positions to tangents of their initial state (default
    zero); returns (outputs, tangents of the final state per argument, None
    for non-dup ones)."""
    outputs, exits, _ = _differentiate(module, entry, args, dup, tangents,
                                       "fwddiff", target, device, timeout)
    return outputs, exits


def check_gradient_host(module, entry, args, dup=None, seeds=None, eps=None,
                        rtol=None, atol=0.0, elements=12, seed=0, target=None,
                        device=None, timeout=None, forward=False):
    """Checks grad_host against central finite differences of the whole
    program: for up to `elements` elements (random, `seed`) of each dup
    buffer, <M(x + h e_i) - M(x - h e_i), w> / 2h, where M maps the initial
    state of the dup buffers to their final state and w are the seeds
    (default: random normal for every dup buffer). Returns a dict: `ok`,
    and per dup position the largest error relative to the tolerance, the
    elements checked and the worst (index, gradient, finite difference).
    With `forward`, also the dot-product test <J v, w> = <v, J^T w> against
    forward mode (jvp_host) for a random v: `report["dot"]` = (both sides,
    error relative to the tolerance)."""
    text = _module_text(module)
    types = host_parameters(text, entry)
    dup = _dup_positions(types, dup)
    rng = np.random.default_rng(seed)
    arrays = [np.array(a) if _is_buffer(t) else a
              for a, t in zip(args, types)]
    if seeds is None:
        seeds = {k: rng.standard_normal(np.shape(arrays[k])).astype(
            arrays[k].dtype) for k in dup}
    gradient = grad_host(text, entry, arrays, dup, seeds, target, device,
                         timeout)
    precision = min(np.finfo(arrays[k].dtype).eps for k in dup) \
        if dup else np.finfo(np.float32).eps
    low = precision > 1e-10
    eps = eps if eps is not None else (1e-2 if low else 1e-5)
    rtol = rtol if rtol is not None else (2e-2 if low else 1e-5)
    # The perturbed runs, in one nabla-run.
    plan, arg_sets = [], []
    for k in dup:
        flat = arrays[k].reshape(-1)
        count = min(elements, flat.size)
        picks = rng.choice(flat.size, size=count, replace=False) \
            if flat.size else []
        for i in picks:
            h = eps * max(1.0, abs(float(flat[i])))
            moved_values = []
            for sign in (1, -1):
                moved = [a.copy() if isinstance(a, np.ndarray) else a
                         for a in arrays]
                moved[k].reshape(-1)[i] += sign * h
                moved_values.append(float(moved[k].reshape(-1)[i]))
                arg_sets.append(moved)
            # The step actually taken in the buffer's precision.
            plan.append((k, int(i), moved_values[0] - moved_values[1]))
    finals = run_host_batch(text, entry, arg_sets, target, device, timeout) \
        if arg_sets else []

    def objective(final):
        total, magnitude = 0.0, 0.0
        for k in dup:
            out = np.asarray(final[k], dtype=np.float64).reshape(-1)
            w = np.asarray(seeds[k], dtype=np.float64).reshape(-1)
            finite = np.isfinite(out)
            total += float(np.dot(out[finite], w[finite]))
            magnitude += float(np.dot(np.abs(out[finite]), np.abs(w[finite])))
        return total, magnitude

    report = {"ok": True}
    for n, (k, i, taken) in enumerate(plan):
        plus, scale_p = objective(finals[2 * n])
        minus, scale_m = objective(finals[2 * n + 1])
        fd = (plus - minus) / taken
        ad = float(np.asarray(gradient.gradients[k], dtype=np.float64)
                   .reshape(-1)[i])
        noise = 8 * precision * max(scale_p, scale_m) / abs(taken)
        tolerance = rtol * max(abs(fd), abs(ad)) + atol + noise
        error = abs(fd - ad) / tolerance if tolerance > 0 else 0.0
        entry_report = report.setdefault(
            k, {"max_error": 0.0, "checked": 0, "worst": None})
        entry_report["checked"] += 1
        if error >= entry_report["max_error"]:
            entry_report["max_error"] = error
            entry_report["worst"] = (i, ad, fd)
        if error > 1.0:
            report["ok"] = False
    if forward:
        tangents = {k: rng.standard_normal(np.shape(arrays[k])).astype(
            arrays[k].dtype) for k in dup}
        _, pushed = jvp_host(text, entry, arrays, tangents, dup, target,
                             device, timeout)
        jv_w = sum(float(np.dot(np.asarray(pushed[k], np.float64).ravel(),
                                np.asarray(seeds[k], np.float64).ravel()))
                   for k in dup)
        v_jtw = sum(float(np.dot(np.asarray(tangents[k], np.float64).ravel(),
                                 np.asarray(gradient.gradients[k],
                                            np.float64).ravel()))
                    for k in dup)
        scale = sum(float(np.dot(np.abs(np.asarray(pushed[k], np.float64))
                                 .ravel(),
                                 np.abs(np.asarray(seeds[k], np.float64))
                                 .ravel())) for k in dup)
        tolerance = 64 * precision * max(scale, 1e-30) + atol
        error = abs(jv_w - v_jtw) / tolerance
        report["dot"] = ((jv_w, v_jtw), error)
        if error > 1.0:
            report["ok"] = False
    report["gradient"] = gradient
    return report
