# Device functions given what the raise cannot pass them, and pointers
# that choose between buffers, in the idioms of production CUDA and HIP:
# structs by value into and out of device functions (byval, sret, byref,
# first-class aggregates, a struct mutated in the callee's copy, a struct of
# buffers, a struct given to a gradient request as enzyme_const, Julia-style
# device arrays and structs of buffers given to one as enzyme_dup), __shared__
# tiles and local arrays handed to helpers, `cond ? a : b` between buffers and
# pointer phis among them. clang-22 at -O1/-O2/-O3; primal against float64
# NumPy, gradient against finite differences, on the default device.
import numpy as np
import pytest

from frontend_helpers import (check, compile_cuda, compile_hip, f32,
                              finite_differences, needs_cuda_headers, run)

RNG = np.random.default_rng(30)
OPTS = [1, 2, 3]


def square_and_apply_model(x, scale, period, table):
    """struct_args.cu: y[i] = scale * (re + im of z^2) + table[i % period]."""
    re, im = x[0::2], x[1::2]
    n = len(re)
    return scale * (re * re - im * im + 2 * re * im) + table[np.arange(n) % period]


def compile_struct_args(tmp_path, language, opt):
    """struct_args.cu through clang's CUDA (byval structs, NVPTX) or HIP
    (first-class aggregates, sret, byref kernel parameters, AMDGPU)."""
    if language == "hip":
        return compile_hip(tmp_path, "struct_args", opt)
    return compile_cuda(tmp_path, "struct_args", opt)


STRUCT_LANGUAGES = [pytest.param("cuda", marks=needs_cuda_headers), "hip"]


@pytest.mark.parametrize("language", STRUCT_LANGUAGES)
@pytest.mark.parametrize("opt", OPTS)
def test_structs_by_value_into_device_functions(tmp_path, language, opt):
    """A complex struct passed to and returned from a noinline c_mul, and a
    parameter set with a pointer field passed to a noinline device function,
    from a kernel (its byval parameter) and from a function an Enzyme
    request differentiates (built there from scalars), and the parameter
    set passed by value, enzyme_const, to the differentiated function."""
    ll = compile_struct_args(tmp_path, language, opt)
    n, period, scale = 90, 7, 1.5
    x = RNG.uniform(-1, 1, 2 * n)
    table = RNG.uniform(-1, 1, period)
    # The kernel's Params, a byval struct {f32 scale; i32 period; f32 *table}:
    # nabla-run takes its fields as parameters.
    out = run(tmp_path, ll, "square_and_apply_kernel", 2, 64,
              [f32(x), f32(np.zeros(n)), f"f32:{scale}", f"i32:{period}",
               f32(table), f"i32:{n}"])
    check(out[1], square_and_apply_model(x, scale, period, table))
    dy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_square_and_apply", 2, 64,
              [f32(x), f32(np.zeros(2 * n)), f32(np.zeros(n)), f32(dy),
               f"f32:{scale}", f"i32:{period}", f32(table), f"i32:{n}"])
    (dx,) = finite_differences(
        lambda v: [square_and_apply_model(v[0], scale, period, table)], [x],
        [dy])
    check(out[1], dx)
    # The struct passed by value to the differentiated function itself.
    out = run(tmp_path, ll, "grad_square_and_apply_params", 2, 64,
              [f32(x), f32(np.zeros(2 * n)), f32(np.zeros(n)), f32(dy),
               f"f32:{scale}", f"i32:{period}", f32(table), f"i32:{n}"])
    check(out[1], dx)


def vec4_model(x, k, count):
    """struct_args.cu: y[i] = <v, scaled(v, k)> + the first `count` powers of
    v[0] (at most 4), v = x[4i:4i+4]."""
    v = x.reshape(-1, 4)
    y = (v * v * k * np.arange(1, 5)).sum(axis=1)
    for j in range(min(count, 4)):
        y = y + v[:, 0] ** (j + 1)
    return y


@pytest.mark.parametrize("language", STRUCT_LANGUAGES)
@pytest.mark.parametrize("opt", OPTS)
def test_structs_mutated_returned_and_of_buffers(tmp_path, language, opt):
    """A struct with an array field mutated in the callee's own copy and
    returned, a larger struct built in a loop and returned (a struct phi),
    and a struct of buffers: primal and Enzyme-request gradient."""
    ll = compile_struct_args(tmp_path, language, opt)
    n, k = 70, 0.75
    x = RNG.uniform(-1, 1, 4 * n)
    for count in (0, 3, 6):
        out = run(tmp_path, ll, "vec4_kernel", 2, 64,
                  [f32(x), f32(np.zeros(n)), f"f32:{k}", f"i32:{count}",
                   f"i32:{n}"])
        check(out[1], vec4_model(x, k, count))
    dy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_vec4", 2, 64,
              [f32(x), f32(np.zeros(4 * n)), f32(np.zeros(n)), f32(dy),
               f"f32:{k}", "i32:3", f"i32:{n}"])
    (dx,) = finite_differences(lambda v: [vec4_model(v[0], k, 3)], [x], [dy])
    check(out[1], dx)
    out = run(tmp_path, ll, "buffers_kernel", 2, 64,
              [f32(x[:n]), f32(np.zeros(n)), f"i32:{n}"])
    check(out[1], 2 * x[:n] ** 2)


def gather_scale_model(x, m, out0, inp, nb, k):
    """struct_args.cu gather_scale: y[i] = k x[i] x[i % m];
    out[i] = out0[i] in[i] x[i] for i < nb."""
    n = len(x)
    y = k * x * x[np.arange(n) % m]
    out = out0.copy()
    out[:nb] = out0[:nb] * inp[:nb] * x[:nb]
    return y, out


@pytest.mark.parametrize("language", STRUCT_LANGUAGES)
@pytest.mark.parametrize("opt", OPTS)
def test_duplicated_structs_of_buffers_in_a_request(tmp_path, language, opt):
    """Julia-style device arrays ({pointer, length}) and a struct of
    buffers passed by value to the function a request differentiates,
    marked enzyme_dup / enzyme_dupnoneed with shadow structs (Enzyme's
    Duplicated): every shadow buffer gets its gradient."""
    ll = compile_struct_args(tmp_path, language, opt)
    n, m, nb, k = 77, 5, 60, 1.25
    x = RNG.uniform(-1, 1, n)
    inp = RNG.uniform(-1, 1, n)
    out0 = RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "gather_scale_kernel", 2, 64,
              [f32(x), f"i64:{m}", f32(np.zeros(n)), f"i64:{n}", f32(inp),
               f32(out0), f"i32:{nb}", f"f32:{k}"])
    y_ref, out_ref = gather_scale_model(x, m, out0, inp, nb, k)
    check(out[2], y_ref)
    check(out[5], out_ref)
    dy = RNG.standard_normal(n)
    dout = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_gather_scale", 2, 64,
              [f32(x), f32(np.zeros(n)), f"i64:{m}", f32(np.zeros(n)),
               f32(dy), f"i64:{n}", f32(inp), f32(np.zeros(n)), f32(out0),
               f32(dout), f"i32:{nb}", f"f32:{k}"])
    dx, din, dout0 = finite_differences(
        lambda v: list(gather_scale_model(v[0], m, v[2], v[1], nb, k)),
        [x, inp, out0], [dy, dout])
    check(out[1], dx)
    check(out[7], din)
    check(out[9], dout0)
    # dy is dupnoneed: its seed is taken (zeroed), y is not required.
    check(out[4], np.zeros(n))


def block_weighted_model(x, block):
    """local_pointer_args.cu: y[i] = x[i] * (the block's sum of x^2) +
    acc0 * acc3 - acc1 * acc2, acc_j = (j + 1) (x[i] + x[i]^2)."""
    n = len(x)
    padded = np.zeros(-(-n // block) * block)
    padded[:n] = x
    totals = np.repeat((padded.reshape(-1, block) ** 2).sum(axis=1), block)[:n]
    a = x + x * x
    return x * totals + (1 * a) * (4 * a) - (2 * a) * (3 * a)


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_local_and_workgroup_pointers_into_device_functions(tmp_path, opt):
    """A __shared__ tile and a thread's local array passed to noinline device
    functions as pointers (the calls are inlined): primal and gradient, with
    a partial last block."""
    ll = compile_cuda(tmp_path, "local_pointer_args", opt)
    n, block = 100, 64
    x = RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "block_weighted_kernel", 2, block,
              [f32(x), f32(np.zeros(n)), f"i32:{n}"])
    check(out[1], block_weighted_model(x, block))
    dy = RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_block_weighted", 2, block,
              [f32(x), f32(np.zeros(n)), f32(np.zeros(n)), f32(dy),
               f"i32:{n}"])
    (dx,) = finite_differences(lambda v: [block_weighted_model(v[0], block)],
                               [x], [dy])
    check(out[1], dx)


def pick_model(a, b, n, block):
    """object_select.cu: y1/y2 (chosen by i % 3) = src[i]^2 + src[i-1],
    src = a in odd blocks, b in even ones; the other output keeps 0."""
    i = np.arange(n)
    src = np.where((i // block) % 2 == 1, 1, 0)
    pick_src = lambda k: np.where(src == 1, a[k], b[k])
    value = pick_src(i) ** 2 + np.where(i > 0, pick_src(np.maximum(i - 1, 0)),
                                        0.0)
    y1 = np.where(i % 3 == 0, value, 0.0)
    y2 = np.where(i % 3 == 0, 0.0, value)
    return y1, y2


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_pointer_selecting_between_buffers(tmp_path, opt):
    """`cond ? a : b` between two buffers, read and written through: each
    access becomes a branch with the access on each side (nothing is
    speculated); primal and gradient."""
    ll = compile_cuda(tmp_path, "object_select", opt)
    n, block = 100, 32
    a, b = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, n)
    out = run(tmp_path, ll, "pick_kernel", 4, block,
              [f32(a), f32(b), f32(np.zeros(n)), f32(np.zeros(n)),
               f"i32:{n}"])
    y1, y2 = pick_model(a, b, n, block)
    check(out[2], y1)
    check(out[3], y2)
    dy1, dy2 = RNG.standard_normal(n), RNG.standard_normal(n)
    out = run(tmp_path, ll, "grad_pick", 4, block,
              [f32(a), f32(np.zeros(n)), f32(b), f32(np.zeros(n)),
               f32(np.zeros(n)), f32(dy1), f32(np.zeros(n)), f32(dy2),
               f"i32:{n}"])
    da, db = finite_differences(
        lambda v: list(pick_model(v[0], v[1], n, block)), [a, b], [dy1, dy2])
    check(out[1], da)
    check(out[3], db)


def halo_model(left, mid, right, n):
    """object_select.cu's halo: y (interior) or edges (i = 0, n - 1) get
    src[j]^2 + mid[i], src/j chosen by control flow."""
    y, edges = np.zeros(n), np.zeros(n)
    for i in range(n):
        if i == 0:
            v, dst = left[i + 3], edges
        elif i == n - 1:
            v, dst = right[i % 4], edges
        else:
            v, dst = mid[i - 1], y
        dst[i] = v * v + mid[i]
    return y, edges


@needs_cuda_headers
@pytest.mark.parametrize("opt", OPTS)
def test_pointer_phi_between_buffers(tmp_path, opt):
    """Control flow choosing among three buffers (pointer phis) to read and
    between two to write: each access branches on which buffer was chosen;
    primal and gradient."""
    ll = compile_cuda(tmp_path, "object_select", opt)
    n = 70
    left, mid, right = (RNG.uniform(-1, 1, n) for _ in range(3))
    out = run(tmp_path, ll, "halo_kernel", 3, 32,
              [f32(left), f32(mid), f32(right), f32(np.zeros(n)),
               f32(np.zeros(n)), f"i32:{n}"])
    y, edges = halo_model(left, mid, right, n)
    check(out[3], y)
    check(out[4], edges)
    dy, dedges = RNG.standard_normal(n), RNG.standard_normal(n)
    zeros = f32(np.zeros(n))
    out = run(tmp_path, ll, "grad_halo", 3, 32,
              [f32(left), zeros, f32(mid), zeros, f32(right), zeros, zeros,
               f32(dy), zeros, f32(dedges), f"i32:{n}"])
    grads = finite_differences(
        lambda v: list(halo_model(v[0], v[1], v[2], n)), [left, mid, right],
        [dy, dedges])
    check(out[1], grads[0])
    check(out[3], grads[1])
    check(out[5], grads[2])
