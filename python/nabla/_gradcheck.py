# ===- nabla/_gradcheck.py - Gradients against finite differences -------=== #
#
# `nabla.check_gradient`: launches the primal kernel at perturbed inputs and
# compares <v, J^T w> from the reverse-mode kernel with central finite
# differences of <M(x), w>, one dup buffer at a time, and (with a tangent
# kernel) runs the dot-product test between the two modes.
#
# Finite differences of a float32 kernel are only as good as their step and
# their tolerance, so neither is a fixed number:
# - steps are relative to each element's magnitude (eps * max(|x|, rms/100)),
#   applied in the buffer's own type; the perturbation compared is the one
#   that rounding actually produced, not the one asked for;
# - two steps (h and 2h) are combined (Richardson) so the truncation error
#   of the central difference cancels to fourth order;
# - the tolerance adds to rtol an estimate of rounding noise: a few units in
#   the last place of every output that the perturbation changed (outputs it
#   did not change are bit-identical and add nothing) and of every gradient
#   entry, summed as random errors.
# A buffer that fails is then bisected (contiguous halves, the worse first)
# down to single elements, which the report lists with their indices.
#
# ===----------------------------------------------------------------------=== #
import copy

import numpy as np

from ._adjoint import FLOAT_ELEMENTS, adjoint_kernel, cached_kernel
from ._arguments import as_array
from ._run import Kernel

# Defaults by the element type of the least precise dup buffer: relative
# step (large enough that rounding in the outputs stays far below rtol; the
# Richardson step makes its truncation error fourth order) and rtol.
_DEFAULTS = {"bf16": (1e-1, 1e-1), "f16": (5e-2, 3e-2), "f32": (1e-2, 1e-3),
             "f64": (1e-4, 1e-6)}
# Rounding errors the noise estimate allows per value (a kernel's output is
# a few operations away from exact; reductions are more).
_ROUNDING = 16


class GradientReport(dict):
    """What `check_gradient` found: `ok`, the overall `reverse` and
    `finite_differences` (and `forward`), and `buffers`, one entry per dup
    parameter with its own numbers and, when it failed, the `elements` whose
    gradients differ most. `str(report)` is a readable summary."""

    def __str__(self):
        grad = self["grad_kernel"] or "its generated adjoint"
        lines = [f"check_gradient({self['kernel']}, {grad}): "
                 f"{'ok' if self['ok'] else 'FAILED'} (eps {self['eps']:g}, "
                 f"rtol {self['rtol']:g}, atol {self['atol']:g})"]
        for b in self["buffers"]:
            name = f" '{b['name']}'" if b["name"] else ""
            verdict = "<=" if b["ok"] else ">"
            lines.append(
                f"  parameter #{b['parameter']}{name} ({b['type']}, "
                f"{b['size']} elements): reverse {b['reverse']:.9g} vs finite "
                f"differences {b['finite_differences']:.9g}, difference "
                f"{b['difference']:.3g} {verdict} tolerance {b['tolerance']:.3g}")
            if b["ok"]:
                continue
            if not b["elements"]:
                lines.append("    no single element differs beyond its "
                             "tolerance (the buffer's error is spread out)")
                continue
            lines.append(f"    {'element':<16}{'reverse':>16}"
                         f"{'finite diff.':>16}{'difference':>14}")
            for e in b["elements"]:
                index = ",".join(str(i) for i in e["index"])
                lines.append(f"    {'[' + index + ']':<16}{e['reverse']:>16.7g}"
                             f"{e['finite_differences']:>16.7g}"
                             f"{e['difference']:>14.3g}")
            if b["elements_truncated"]:
                lines.append(f"    (the {len(b['elements'])} largest found; "
                             f"pass elements= for more)")
        if "forward" in self:
            lines.append(f"  dot-product test: forward {self['forward']:.9g} vs "
                         f"reverse {self['reverse']:.9g}: "
                         f"{'ok' if self['dot_product_ok'] else 'FAILED'}")
        return "\n".join(lines)

    def __repr__(self):
        return f"GradientReport({dict.__repr__(self)})"


def _fresh(relocs):
    """A copy of every relocated object for one launch: a kernel that writes
    one must not change what the next (perturbed) launch reads."""
    if not relocs:
        return None
    fresh = {}
    for key, value in relocs.items():
        try:
            fresh[key] = copy.copy(value)
        except TypeError:  # memoryview
            fresh[key] = np.array(value)
    return fresh


class _Numbers:
    """The values of a dup buffer as float64, and float64 values rounded
    into the buffer: its own float dtype, or the bits of a half (bf16, which
    numpy lacks, and f16 passed as int16/uint16) in an integer array."""

    def __init__(self, element, dtype):
        self.element, self.dtype = element, np.dtype(dtype)
        self.bits = self.dtype.kind in "iu"
        if element == "bf16":
            self.unit = 2.0 ** -8  # 8 significant bits
        else:
            self.unit = float(np.finfo(
                np.float16 if self.bits else self.dtype).eps) / 2

    def decode(self, array):
        array = np.asarray(array)
        if self.element == "bf16":
            wide = array.view(np.uint16).astype(np.uint32) << 16
            return wide.view(np.float32).astype(np.float64)
        if self.bits:
            return array.view(np.float16).astype(np.float64)
        return array.astype(np.float64)

    def encode(self, values):
        values = np.asarray(values, np.float64)
        if self.element == "bf16":
            # Round to nearest, ties to even (as cvt.rn.bf16.f32).
            f32 = values.astype(np.float32)
            bits = f32.view(np.uint32).astype(np.uint64)
            rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)
            rounded = np.where(np.isnan(f32), 0x7FC0, rounded)
            return rounded.astype(np.uint16).view(self.dtype)
        if self.bits:
            return values.astype(np.float16).view(self.dtype)
        return values.astype(self.dtype)


def _rss(values):
    return float(np.sqrt(np.sum(np.square(values))))


def check_gradient(module, kernel=None, grad_kernel=None, grid=None,
                   block=None, args=None, dup=None, tangent_kernel=None,
                   eps=None, rtol=None, atol=None, seed=0, *, relocs=None,
                   elements=10, shared_memory=None):
    """Checks a reverse-mode kernel against finite differences of the primal
    kernel, one dup buffer at a time; returns a `GradientReport` (a dict)
    whose `ok` says whether every check passed.

    `module` and `kernel` name the primal kernel; a `nabla.Kernel` (or
    `nabla.cuda.Kernel`) may stand for both. `grid`, `block` and `args` are
    a launch of it (as for `run`); `dup` lists the positions of the buffer
    parameters whose gradients are checked. `grad_kernel` is the reverse mode of `kernel` with a shadow right after
    every parameter index in `dup` (Enzyme's semantics: shadows hold the
    cotangent w of the final state on entry and J^T w on exit); None
    generates it (`nabla.kernel_adjoint` on a copy of the module).
    `tangent_kernel` (forward mode, same layout) adds the dot-product test
    <J v, w> = <v, J^T w>. `eps` is the step relative to each element's
    magnitude, `rtol` the relative tolerance; both default from the least
    precise dup buffer's type (f64: 1e-4 and 1e-6, f32: 1e-2 and 1e-3, f16:
    5e-2 and 3e-2). `atol` (default 0) is added to the tolerance, itself
    rtol plus an estimate of the rounding noise of the values compared.
    `relocs` gives the relocated objects the kernels read ({key: array}, as
    for `run`; held fixed, a fresh copy for every launch). When a buffer
    fails, up to `elements` of its elements whose gradients differ most are
    located (bisection) and reported with their indices. `shared_memory`:
    the launches' dynamic shared memory in bytes (`extern __shared__`), as
    for `run`. An output that does not move (-inf in both launches: a causal
    mask) contributes no change."""
    if isinstance(module, Kernel):
        if kernel is not None and kernel not in (module.name, module._label):
            raise ValueError(f"a nabla.Kernel for {module._label!r} was given "
                             f"with kernel={kernel!r}")
        module, kernel = module._module, module._label
    missing = [name for name, value in (("kernel", kernel), ("grid", grid),
                                        ("block", block), ("args", args),
                                        ("dup", dup)) if value is None]
    if missing:
        raise TypeError(f"check_gradient needs {', '.join(missing)}")
    primal = cached_kernel(module, kernel)
    params = primal.parameters
    args, dup = list(args), list(dict.fromkeys(dup))
    if len(args) != len(params):
        raise ValueError(f"kernel {kernel!r} takes {len(params)} arguments, "
                         f"got {len(args)}")
    for k in dup:
        if not (isinstance(k, (int, np.integer)) and 0 <= k < len(params)):
            raise ValueError(f"dup names parameter {k!r}; {kernel!r} has "
                             f"parameters 0 to {len(params) - 1}")
        if params[k].kind != "buffer" or params[k].element not in FLOAT_ELEMENTS:
            raise ValueError(f"dup names {params[k].label(kernel)}: only "
                             f"buffers of f16, bf16, f32 or f64 have "
                             f"gradients")
        args[k] = as_array(args[k], f"{kernel}: dup {params[k].label()}")
    if grad_kernel is None:
        grad = adjoint_kernel(module, kernel, set(dup))
    else:
        grad = cached_kernel(module, grad_kernel)
    numbers = {k: _Numbers(params[k].element, args[k].dtype) for k in dup}
    coarsest = max(numbers.values(), key=lambda n: n.unit).element if dup \
        else "f64"
    default_eps, default_rtol = _DEFAULTS.get(coarsest, _DEFAULTS["f32"])
    eps = default_eps if eps is None else float(eps)
    rtol = default_rtol if rtol is None else float(rtol)
    atol = 0.0 if atol is None else float(atol)

    def launch(which, values):
        return which(*values, grid=grid, block=block, relocs=_fresh(relocs),
                     shared_memory=shared_memory)

    def with_shadows(shadows):
        extended, position = [], {}
        for k, a in enumerate(args):
            extended.append(a.copy() if isinstance(a, np.ndarray) else a)
            if k in shadows:
                position[k] = len(extended)
                extended.append(shadows[k])
        return extended, position

    rng = np.random.default_rng(seed)
    x = {k: numbers[k].decode(args[k]) for k in dup}
    v = {k: rng.standard_normal(args[k].shape) for k in dup}
    seeds = {k: numbers[k].encode(rng.standard_normal(args[k].shape))
             for k in dup}
    w = {k: numbers[k].decode(seeds[k]) for k in dup}
    scale = {}
    for k in dup:
        rms = np.sqrt(np.mean(np.square(x[k]))) if x[k].size else 0.0
        floor = 1e-2 * rms if rms > 0 and np.isfinite(rms) else 1.0
        scale[k] = np.maximum(np.abs(x[k]), floor)
    # v scaled per element, rounded to the buffer's type so the tangent
    # kernel is seeded with exactly the direction the reverse side uses.
    direction = {k: numbers[k].decode(numbers[k].encode(scale[k] * v[k]))
                 for k in dup}

    grad_args, position = with_shadows(seeds)
    grads = launch(grad, grad_args)
    g = {k: numbers[k].decode(grads[position[k]]) for k in dup}
    g_max = {k: float(np.max(np.abs(g[k]), initial=0.0)) for k in dup}

    def compare(k, along, norm):
        """(reverse, finite differences, tolerance) of the derivative of
        <M(x), w> along `along` (in buffer k), divided by `norm`."""
        mismatch, noise = [], []
        for level in (1, 2):
            step = level * eps * along
            plus = numbers[k].encode(x[k] + step)
            minus = numbers[k].encode(x[k] - step)
            delta = (numbers[k].decode(plus) - numbers[k].decode(minus)) / 2
            shifted = list(args)
            shifted[k] = plus
            out_plus = launch(primal, shifted)
            shifted[k] = minus
            out_minus = launch(primal, shifted)
            change, errors = 0.0, []
            for i in dup:
                high = numbers[i].decode(out_plus[i])
                low = numbers[i].decode(out_minus[i])
                moved = high != low
                # Equal infinities (a masked output) did not move.
                moved_by = np.subtract(high, low, out=np.zeros_like(high),
                                       where=moved)
                change += float(np.dot(moved_by.ravel(), w[i].ravel())) / 2
                errors.append(numbers[i].unit * np.abs(w[i][moved])
                              * np.maximum(np.abs(high[moved]), np.abs(low[moved])))
            errors.append(numbers[k].unit * np.abs(delta).ravel()
                          * (np.abs(g[k]).ravel() + g_max[k]))
            mismatch.append(change - float(np.dot(delta.ravel(), g[k].ravel())))
            noise.append(_rss(np.concatenate([e.ravel() for e in errors])))
        # Richardson on the derivative: D(h) = D + c h^2, so (4 D(h) -
        # D(2h)) / 3 = D + O(h^4); in the raw changes (D(h) = m(h) / h,
        # D(2h) = m(2h) / 2h) that is (8 m(h) - m(2h)) / 6h.
        difference = (8 * mismatch[0] - mismatch[1]) / 6 / (eps * norm)
        reverse = float(np.dot(along.ravel(), g[k].ravel())) / norm
        rounding = _ROUNDING * (8 * noise[0] + noise[1]) / 6 / (eps * norm)
        fd = reverse + difference
        tolerance = atol + rtol * max(abs(reverse), abs(fd)) + rounding
        return reverse, fd, tolerance

    def passes(difference, tolerance):
        return bool(abs(difference) <= tolerance)  # False for nan

    def locate(k):
        """Up to `elements` single elements of buffer k whose gradient entry
        fails: depth first through failing halves, the worse half first, so
        the first found are the largest and each costs about two checks once
        the first is found."""
        flat = direction[k].ravel()
        size, found, stack = flat.size, [], [(0, flat.size)]
        budget = max(elements, 1) * (2 * int(np.log2(max(size, 1))) + 4)

        def check(lo, hi):
            along = np.zeros(size)
            along[lo:hi] = flat[lo:hi]
            reverse, fd, tolerance = compare(k, along.reshape(x[k].shape), 1.0)
            return abs(fd - reverse), passes(fd - reverse, tolerance)

        while stack and len(found) < elements and budget > 0:
            lo, hi = stack.pop()
            if hi - lo == 1:
                along = np.zeros(size)
                along[lo] = scale[k].ravel()[lo]
                reverse, fd, tolerance = compare(k, along.reshape(x[k].shape),
                                                 along[lo])
                budget -= 1
                if not passes(fd - reverse, tolerance):
                    found.append({
                        "index": tuple(int(i) for i in
                                       np.unravel_index(lo, x[k].shape)),
                        "reverse": reverse, "finite_differences": fd,
                        "difference": fd - reverse, "tolerance": tolerance})
                continue
            middle = (lo + hi) // 2
            halves = [(check(*half), half) for half in ((lo, middle), (middle, hi))]
            budget -= 2
            # The worse failing half on top of the stack.
            failing = sorted((np.nan_to_num(d, nan=np.inf), half)
                             for (d, ok), half in halves if not ok)
            stack.extend(half for _, half in failing)
        found.sort(key=lambda e: -np.nan_to_num(abs(e["difference"]),
                                                nan=np.inf))
        return found, bool(stack)

    buffers = []
    for k in dup:
        reverse, fd, tolerance = compare(k, direction[k], 1.0)
        ok = passes(fd - reverse, tolerance)
        located, truncated = locate(k) if not ok and elements > 0 else ([], False)
        buffers.append({"parameter": k, "name": params[k].name,
                        "type": params[k].type, "size": int(args[k].size),
                        "reverse": reverse, "finite_differences": fd,
                        "difference": fd - reverse, "tolerance": tolerance,
                        "ok": ok, "elements": located,
                        "elements_truncated": truncated})
    report = GradientReport(
        kernel=kernel, grad_kernel=grad_kernel, eps=eps, rtol=rtol, atol=atol,
        reverse=float(sum(b["reverse"] for b in buffers)),
        finite_differences=float(sum(b["finite_differences"] for b in buffers)),
        ok=all(b["ok"] for b in buffers), buffers=buffers)
    if tangent_kernel is not None:
        tangent_args, position = with_shadows(
            {k: numbers[k].encode(direction[k]) for k in dup})
        tangents = launch(cached_kernel(module, tangent_kernel), tangent_args)
        jv = {k: numbers[k].decode(tangents[position[k]]) for k in dup}
        forward = sum(float(np.dot(jv[k].ravel(), w[k].ravel())) for k in dup)
        noise = _rss(np.concatenate(
            [(numbers[k].unit * np.abs(w[k]) * np.abs(jv[k])).ravel()
             for k in dup] +
            [(numbers[k].unit * np.abs(direction[k])
              * (np.abs(g[k]) + g_max[k])).ravel() for k in dup]))
        tolerance = (atol + rtol * max(abs(forward), abs(report["reverse"]))
                     + _ROUNDING * noise)
        report["forward"] = forward
        report["dot_product_ok"] = passes(forward - report["reverse"], tolerance)
        report["ok"] = report["ok"] and report["dot_product_ok"]
    return report
