# ===- nabla/_gradcheck.py - Gradients against finite differences -------=== #
#
# `nabla.check_gradient`: the check Nabla's own tests make of a reverse-mode
# (and optionally forward-mode) kernel, by launching the primal kernel at
# perturbed inputs and comparing <v, J^T w> with central finite differences,
# and the dot-product test between the two modes. It only launches kernels
# through `run`.
#
# ===----------------------------------------------------------------------=== #
import numpy as np

from ._arguments import as_array
from ._run import run


def check_gradient(module, kernel, grad_kernel, grid, block, args, dup,
                   tangent_kernel=None, eps=1e-6, rtol=1e-5, atol=1e-8, seed=0):
    """Checks a gradient kernel the way Nabla's own tests do.

    `grad_kernel` is the reverse mode of `kernel` and `tangent_kernel` (if
    given) its forward mode, both with a shadow right after every parameter
    index listed in `dup` (Enzyme's semantics: reverse shadows hold the
    cotangent w of the final state on entry and J^T w on exit; forward shadows
    hold the tangent v on entry and J v on exit). Checks <v, J^T w> against
    central finite differences of <M(x), w>, M mapping the dup buffers'
    initial to final state, and, with `tangent_kernel`, the dot-product test
    <J v, w> = <v, J^T w>. Returns a report dict whose `ok` says whether
    every check passed."""
    rng = np.random.default_rng(seed)
    dup, args = list(dup), list(args)
    for k in dup:
        args[k] = as_array(args[k], f"dup parameter #{k}")
    v = {k: rng.standard_normal(args[k].shape) for k in dup}
    w = {k: rng.standard_normal(args[k].shape) for k in dup}

    def dot(a, b):
        return sum(np.dot(np.asarray(a[k], np.float64).ravel(),
                          np.asarray(b[k], np.float64).ravel()) for k in dup)

    def perturbed(sign):
        shifted = list(args)
        for k in dup:
            shifted[k] = (args[k] + sign * eps * v[k]).astype(args[k].dtype)
        return run(module, kernel, grid, block, shifted)

    def with_shadows(shadows):
        extended, position = [], {}
        for k, a in enumerate(args):
            extended.append(a.copy() if isinstance(a, np.ndarray) else a)
            if k in dup:
                position[k] = len(extended)
                extended.append(shadows[k].astype(args[k].dtype))
        return extended, position

    plus, minus = perturbed(1), perturbed(-1)
    fd = dot({k: plus[k].astype(np.float64) - minus[k] for k in dup}, w) / (2 * eps)
    grad_args, position = with_shadows(w)
    grads = run(module, grad_kernel, grid, block, grad_args)
    jtw = {k: grads[position[k]] for k in dup}
    reverse = dot(v, jtw)
    report = {"reverse": float(reverse), "finite_differences": float(fd),
              "ok": bool(np.isclose(reverse, fd, rtol=rtol, atol=atol))}
    if tangent_kernel is not None:
        tangent_args, position = with_shadows(v)
        tangents = run(module, tangent_kernel, grid, block, tangent_args)
        forward = dot({k: tangents[position[k]] for k in dup}, w)
        report["forward"] = float(forward)
        report["ok"] &= bool(np.isclose(forward, reverse, rtol=rtol, atol=atol))
    return report
