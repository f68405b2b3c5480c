# ===- test_host_grad.py - Gradients of whole GPU programs --------------=== #
#
# Host-level AD (docs/HostAD.md) from Python: nabla.grad_host,
# nabla.jvp_host and nabla.check_gradient_host on the host programs of
# test/Integration/host_ad/ (chains of launches through intermediate
# buffers, a weight read by two kernels, buffers overwritten by later
# launches, copies and memsets, an scf.for of launches with a runtime trip
# count, async tokens, gpu.launch regions under an scf.if), each checked
# against central finite differences of the whole program and by the
# dot-product test between forward and reverse mode, on the default device
# (lavapipe) under the Vulkan validation layer.
# ===----------------------------------------------------------------------=== #
import os

import numpy as np
import pytest

import nabla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "test", "Integration", "host_ad")


def program(name):
    with open(os.path.join(PROGRAMS, name)) as file:
        return file.read()


def f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def assert_checked(report, positions):
    details = {k: v for k, v in report.items() if isinstance(k, int)}
    assert report["ok"], details
    for k in positions:
        assert report[k]["checked"] > 0, details
    assert report["dot"][1] <= 1.0, report["dot"]


def test_chain_gradient_is_the_analytic_one():
    # loss = sum(tanh(x * w)) over 100 elements (4 blocks of 32, the last
    # partial): dx = w (1 - t^2), dw = x (1 - t^2); the loss buffer's own
    # shadow ends zero (written, never read), its primal holds the loss.
    rng = np.random.default_rng(0)
    x, w = f32(rng, 100), f32(rng, 100)
    g = nabla.grad_host(program("chain.mlir"), "program",
                        [x, w, np.zeros(1, np.float32)], seeds={2: [1.0]})
    t = np.tanh(x.astype(np.float64) * w)
    np.testing.assert_allclose(g.gradients[0], w * (1 - t * t), rtol=1e-4,
                               atol=1e-6)
    np.testing.assert_allclose(g.gradients[1], x * (1 - t * t), rtol=1e-4,
                               atol=1e-6)
    np.testing.assert_array_equal(g.gradients[2], [0.0])
    np.testing.assert_allclose(g.outputs[2], [t.sum()], rtol=1e-4, atol=1e-5)
    # Inputs come back unchanged.
    np.testing.assert_array_equal(g.outputs[0], x)


@pytest.mark.parametrize("name, make, dup", [
    ("chain.mlir",
     lambda r: [f32(r, 37), f32(r, 37), np.zeros(1, np.float32)], [0, 1]),
    ("shared_weight.mlir",
     lambda r: [f32(r, 64), f32(r, 64), np.zeros(1, np.float32)], [0, 1]),
    ("overwrite.mlir",
     lambda r: [f32(r, 16, scale=0.5), np.zeros(16, np.float32)], [0]),
    ("async.mlir",
     lambda r: [f32(r, 32), f32(r, 32), np.zeros(32, np.float32)], [0, 1]),
    ("launch_region.mlir",
     lambda r: [f32(r, 16), np.zeros(16, np.float32), 1], [0]),
    ("launch_region.mlir",
     lambda r: [f32(r, 16), np.zeros(16, np.float32), 0], [0]),
])
def test_program_gradients_match_finite_differences(name, make, dup):
    rng = np.random.default_rng(len(name))
    report = nabla.check_gradient_host(program(name), "program", make(rng),
                                       forward=True)
    assert_checked(report, dup)


@pytest.mark.parametrize("layers", [0, 1, 7, 40])
def test_loop_of_launches_with_a_runtime_trip_count(layers):
    # f64 residual layers in an scf.for whose bound is an argument: the
    # state is updated in place every iteration, so the reverse sweep
    # restores it from one copy per iteration.
    rng = np.random.default_rng(layers)
    count = max(layers, 1)
    args = [rng.standard_normal((count, 8, 8)) * 0.4,
            rng.standard_normal((count, 8)) * 0.3,
            rng.standard_normal(8), layers]
    report = nabla.check_gradient_host(program("layers.mlir"), "program",
                                       args, forward=True, elements=8)
    assert_checked(report, [0, 1, 2])
    gradient = report["gradient"]
    if layers == 0:
        # No layer ran: the state passes through, nothing else matters.
        seeds_free = nabla.grad_host(program("layers.mlir"), "program", args,
                                     seeds={2: np.ones(8)})
        np.testing.assert_array_equal(seeds_free.gradients[2], np.ones(8))
        np.testing.assert_array_equal(seeds_free.gradients[0],
                                      np.zeros_like(args[0]))
    # The state buffer ends with the final state, as the primal leaves it.
    primal = nabla.run_host(program("layers.mlir"), "program",
                            [a.copy() if isinstance(a, np.ndarray) else a
                             for a in args])
    np.testing.assert_array_equal(gradient.outputs[2], primal.args[2])


def test_forward_mode_tangent_of_a_chain():
    # fwddiff of the chain: the loss's tangent is <dx, w (1 - t^2)> +
    # <dw, x (1 - t^2)>.
    rng = np.random.default_rng(3)
    x, w = f32(rng, 50), f32(rng, 50)
    dx, dw = f32(rng, 50), f32(rng, 50)
    outputs, tangents = nabla.jvp_host(program("chain.mlir"), "program",
                                       [x, w, np.zeros(1, np.float32)],
                                       {0: dx, 1: dw})
    t = np.tanh(x.astype(np.float64) * w)
    want = np.dot(dx, w * (1 - t * t)) + np.dot(dw, x * (1 - t * t))
    np.testing.assert_allclose(tangents[2], [want], rtol=1e-4, atol=1e-5)
    assert tangents[0] is not None and np.array_equal(tangents[0], dx)


def test_seed_for_a_const_buffer_is_refused():
    with pytest.raises(ValueError, match="not dup"):
        nabla.grad_host(program("chain.mlir"), "program",
                        [np.ones(4, np.float32), np.ones(4, np.float32),
                         np.zeros(1, np.float32)], dup=[0], seeds={2: [1.0]})


def test_unsupported_host_code_is_a_located_error():
    text = program("chain.mlir").replace(
        "    gpu.dealloc %h : memref<?xf32>\n",
        "    %f = arith.constant 1.0 : f32\n"
        "    memref.store %f, %x[%c0] : memref<?xf32>\n"
        "    gpu.dealloc %h : memref<?xf32>\n")
    with pytest.raises(nabla.HostProgramError) as error:
        nabla.grad_host(text, "program", [np.ones(4, np.float32),
                                          np.ones(4, np.float32),
                                          np.zeros(1, np.float32)])
    assert "stores on the host into a buffer" in error.value.stderr
    assert "program.mlir:" in error.value.stderr


@pytest.mark.parametrize("name, make", [
    ("chain.mlir",
     lambda r: [f32(r, 40), f32(r, 40), np.zeros(1, np.float32)]),
    ("shared_weight.mlir",
     lambda r: [f32(r, 64), f32(r, 64), np.zeros(1, np.float32)]),
    ("overwrite.mlir", lambda r: [f32(r, 16), np.zeros(16, np.float32)]),
    ("layers.mlir", lambda r: [r.standard_normal((3, 8, 8)),
                               r.standard_normal((3, 8)),
                               r.standard_normal(8), 3]),
    ("async.mlir",
     lambda r: [f32(r, 32), f32(r, 32), np.zeros(32, np.float32)]),
    ("launch_region.mlir",
     lambda r: [f32(r, 16), np.zeros(16, np.float32), 1]),
])
def test_gradient_runs_free_every_device_allocation(monkeypatch, name, make):
    # Snapshots, shadows, final copies and the program's own buffers: the
    # wrapper library counts device allocations left at shutdown.
    monkeypatch.setenv("NABLA_MGPU_REPORT_LEAKS", "1")
    rng = np.random.default_rng(5)
    args = make(rng)
    text = program(name)
    types = nabla._host.host_parameters(text, "program")
    dup = [k for k, t in enumerate(types) if t.startswith("memref<") and
           ("f32>" in t or "f64>" in t)]
    call_args = []
    for k, value in enumerate(args):
        call_args.append(value)
        if k in dup:
            call_args.append(np.ones_like(value))
    for mode in ("autodiff", "fwddiff"):
        wrapped = nabla._host_grad._with_wrapper(text, "program", types, dup,
                                                 "checked", mode)
        result = nabla.run_host(wrapped, "checked", call_args)
        assert "not freed" not in result.stderr, (mode, result.stderr)
    result = nabla.run_host(text, "program", args)
    assert "not freed" not in result.stderr


def test_dupnoneed_buffer_keeps_no_final_copy():
    # With the loss buffer dupnoneed its final value is not wanted: the
    # derivative may leave anything there, the gradients are the same.
    text = program("chain.mlir").replace(
        "#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],\n"
        "        ret_activity = []} : (memref<?xf32>, memref<?xf32>, "
        "memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>) -> ()\n"
        "    return\n  }\n  func.func @tangent",
        "#nabla.activity<dup>, #nabla.activity<dup>, "
        "#nabla.activity<dupnoneed>],\n"
        "        ret_activity = []} : (memref<?xf32>, memref<?xf32>, "
        "memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>) -> ()\n"
        "    return\n  }\n  func.func @tangent")
    assert "dupnoneed" in text
    rng = np.random.default_rng(6)
    x, w = f32(rng, 20), f32(rng, 20)
    args = [x, np.zeros_like(x), w, np.zeros_like(w),
            np.zeros(1, np.float32), np.ones(1, np.float32)]
    result = nabla.run_host(text, "grad", args)
    t = np.tanh(x.astype(np.float64) * w)
    np.testing.assert_allclose(result.args[1], w * (1 - t * t), rtol=1e-4,
                               atol=1e-6)
    np.testing.assert_allclose(result.args[3], x * (1 - t * t), rtol=1e-4,
                               atol=1e-6)


def test_copy_of_a_buffer_onto_itself_keeps_its_gradient():
    # gpu.memcpy %h, %h changes nothing; its adjoint must not add the shadow
    # to itself and then zero it (which would drop the gradient).
    text = program("chain.mlir").replace(
        "    gpu.launch_func @kernels::@sum",
        "    gpu.memcpy %h, %h : memref<?xf32>, memref<?xf32>\n"
        "    gpu.launch_func @kernels::@sum", 1)
    assert text.count("gpu.memcpy %h, %h") == 1
    rng = np.random.default_rng(9)
    x, w = f32(rng, 24), f32(rng, 24)
    g = nabla.grad_host(text, "program", [x, w, np.zeros(1, np.float32)],
                        seeds={2: [1.0]})
    t = np.tanh(x.astype(np.float64) * w)
    np.testing.assert_allclose(g.gradients[0], w * (1 - t * t), rtol=1e-4,
                               atol=1e-6)
