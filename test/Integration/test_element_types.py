# ===- test_element_types.py - Buffers of every element type --------------=== #
#
# corpus/element_types.mlir run through nabla-run and nabla-launch on the
# default device with .npy buffers of every element type a kernel takes:
# int8, uint8 and bool for i8, int16 and uint16 for i16, float16 for f16,
# next to float32 and int64; outputs keep the dtype they came in with.
# Wrong dtypes are refused with the dtype needed.
#
# Run: NABLA_BIN=build/bin /usr/bin/python3 -m pytest test/Integration
# ===----------------------------------------------------------------------=== #
import os

import numpy as np
import pytest

from test_run_kernels import CORPUS, launch, run, tool

RNG = np.random.default_rng(8)
N = 100


@pytest.mark.parametrize("ints", ["signed", "unsigned"])
def test_widen_narrow_types(tmp_path, ints):
    a = RNG.integers(-128, 128, N).astype(np.int8)
    b = RNG.integers(-30000, 30000, N).astype(np.int16)
    h = RNG.uniform(-4, 4, N).astype(np.float16)
    if ints == "unsigned":
        # The kernel reads signed values: the same bytes as unsigned dtypes.
        args_a, args_b = a.view(np.uint8), b.view(np.uint16)
    else:
        args_a, args_b = a, b
    out = launch(tmp_path, "element_types.mlir", "widen", 2, 64,
                 [args_a, args_b, h, np.zeros(N, np.float32),
                  np.zeros(N, np.int64), f"index:{N}"])
    expected = a.astype(np.float32) + b.astype(np.float32) + h.astype(np.float32)
    np.testing.assert_allclose(out[3], expected, rtol=1e-6)
    np.testing.assert_array_equal(out[4], a.astype(np.int64))
    assert out[0].dtype == args_a.dtype and out[1].dtype == args_b.dtype
    np.testing.assert_array_equal(out[0], args_a)


def test_bool_uint8_and_half_outputs(tmp_path):
    v = RNG.uniform(-1, 1, N).astype(np.float32)
    v[:3] = [0.0, -0.0, 1e-30]
    counts = RNG.integers(0, 256, N).astype(np.uint8)
    counts[:2] = [255, 0]
    out = launch(tmp_path, "element_types.mlir", "flags", 2, 64,
                 [v, np.zeros(N, bool), counts, np.zeros(N, np.float16),
                  f"index:{N}"])
    assert out[1].dtype == np.bool_
    np.testing.assert_array_equal(out[1], v > 0)
    np.testing.assert_array_equal(out[2], (counts + 1).astype(np.uint8))
    np.testing.assert_array_equal(out[3], (v * 0.5).astype(np.float16))


def test_nabla_launch_takes_the_same_types(tmp_path):
    compiled = tmp_path / "compiled"
    run([tool("nabla-compile"), os.path.join(CORPUS, "element_types.mlir"),
         "--target=spirv", "-o", str(compiled)])
    v = RNG.uniform(-1, 1, N).astype(np.float32)
    counts = np.arange(N, dtype=np.uint8)
    out = launch(tmp_path / "launch", "element_types.mlir", "flags", 2, 64,
                 [v, np.zeros(N, np.int8), counts, np.zeros(N, np.float16),
                  f"index:{N}"],
                 launcher=[tool("nabla-launch"), str(compiled)])
    np.testing.assert_array_equal(out[1], (v > 0).astype(np.int8))
    np.testing.assert_array_equal(out[2], counts + 1)


def test_wrong_element_dtype_is_refused(tmp_path):
    r = launch(tmp_path, "element_types.mlir", "flags", 1, 64,
               [np.zeros(4, np.float32), np.zeros(4, np.int8),
                np.zeros(4, np.uint8), np.zeros(4, np.float32), "index:4"],
               expect=1)
    assert "needs dtype f2" in r.stderr and "has f4" in r.stderr


def test_byte_buffer_takes_any_array_as_bytes(tmp_path):
    """A 1-D i8 buffer (what an object accessed as several types is raised
    as) binds an array of any dtype as its bytes; the output keeps the
    array's dtype and shape."""
    v = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    words = np.arange(8, dtype=np.int16)
    out = launch(tmp_path, "element_types.mlir", "flags", 1, 64,
                 [v, np.zeros(4, np.int8), words, np.zeros(4, np.float16),
                  "index:4"])
    assert out[2].dtype == np.int16 and out[2].shape == (8,)
    expected = words.view(np.uint8).copy()
    expected[:4] += 1
    np.testing.assert_array_equal(out[2].view(np.uint8), expected)


@pytest.mark.parametrize("block", [32, 64])
def test_dynamic_shared_memory_mlir(tmp_path, block):
    """gpu.dynamic_shared_memory as upstream's tests write it, sized by
    --dynamic-shared-memory: each block reverses its slice."""
    n = 150
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    blocks = (n + block - 1) // block
    out = launch(tmp_path, "dynamic_shared.mlir", "reverse", blocks, block,
                 [x, f"index:{n}"],
                 extra=[f"--dynamic-shared-memory={4 * block}"])
    padded = np.zeros(blocks * block, np.float32)
    padded[:n] = x
    np.testing.assert_array_equal(
        out[0], padded.reshape(blocks, block)[:, ::-1].ravel()[:n])


@pytest.mark.parametrize("value,expected", [(-5, 251), (200, 200), (0, 0)])
def test_char_scalar_parameter(tmp_path, value, expected):
    """An i8 scalar (`char c`): `i8:V` takes a signed or unsigned byte; a
    one-element 8-bit storage buffer on SPIR-V."""
    out = launch(tmp_path, "element_types.mlir", "fill_bytes", 1, 64,
                 [np.zeros(10, np.uint8), f"i8:{value}", "index:10"])
    np.testing.assert_array_equal(out[0], np.full(10, expected, np.uint8))


def test_scalar_out_of_range_is_refused(tmp_path):
    r = launch(tmp_path, "element_types.mlir", "fill_bytes", 1, 64,
               [np.zeros(10, np.uint8), "i8:300", "index:10"], expect=1)
    assert "value in 'i8:300' does not fit i8" in r.stderr
