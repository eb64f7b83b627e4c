"""float16 programs fuse: kernels load and store half bits, compute in float32 and round to
half after every op, as NumPy's half loops do, so pointwise chains, softmax and layer norm
are bit for bit NumPy's.  Reductions sum in float32 and round once (NumPy does so along the
contiguous axis; across other axes it rounds after every addition, README)."""
import shutil
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.emulate import emulate
from symshape.codegen.cuda.nvrtc import nvrtc_module, nvrtc_ptx

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
A = Dim.AUTO


def program(f, *args):
    return compile_cupy(ss.export(f, args, dynamic_shapes=[tuple(A for _ in a.shape)
                                                           for a in args]))


def h(*shape, seed=0, scale=3.0):
    rng = np.random.default_rng(seed + 5 * sum(shape))
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def layer_norm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def chain(x, y):
    return x * y + x / 3 - np.exp(y) * 0.1 + np.tanh(x) * np.float16(0.7)


def steps(c):
    return [s[0] if s[0] == "kernel" else s[1].op for s in c.plan.steps]


@pytest.mark.parametrize("f,nargs", [(chain, 2), (softmax, 1), (layer_norm, 3)],
                         ids=["pointwise_chain", "softmax", "layer_norm"])
def test_half_programs_fuse_and_match_numpy_bit_for_bit(f, nargs):
    c = program(f, *([h(5, 8)] + [h(8, seed=i + 1) for i in range(nargs - 1)]))
    assert steps(c) == ["kernel"]
    k = c.kernels[0]
    assert "const unsigned short* __restrict__ in_x" in k.source and "ss_hround(" in k.source
    run = emulate(c)
    for shape in [(7, 13), (3, 300), (65, 5), (2, 1031)]:
        args = [h(*shape)] + [h(shape[1], seed=i + 1) for i in range(nargs - 1)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = run(*args), f(*args)
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want)


def test_half_conversions_and_reductions():
    def f(x):
        return (x.astype(np.float32) * 2, (x * 1).astype(np.int32), x.sum(axis=-1),
                x.mean(axis=-1), x.max(axis=0), np.float64(1.5) * x.astype(np.float64))
    c = program(f, h(4, 8))
    run = emulate(c)
    x = h(9, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = run(x), f(x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_half_sum_across_a_non_contiguous_axis_is_closer_to_exact():
    x = h(65, 5)
    got = emulate(program(lambda a: a.sum(axis=0), h(4, 8)))(x)
    exact = x.astype(np.float64).sum(axis=0)
    assert got.dtype == np.float16
    assert np.all(np.abs(got - exact) <= np.abs(x.sum(axis=0) - exact) + 1e-9 +
                  np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64))


def test_half_special_values_round_trip():
    x = np.array([[0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 6e-8, -6.1e-5, 1e-7, 2049]] * 2,
                 np.float16)
    c = program(lambda a: a * np.float16(1) + np.float16(0), h(3, 4))
    np.testing.assert_array_equal(emulate(c)(x), x * np.float16(1) + np.float16(0))
    y = np.array([[60000, 70000, 1e-8, -3e-8, 0.1, 1 / 3], [65519, 65520, 2.98e-8, 5.97e-8,
                                                          -2049, 2051]], np.float32)
    c = program(lambda a: a.astype(np.float16), np.ones((3, 4), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(emulate(c)(y), y.astype(np.float16))
    z = y.astype(np.float64) * (1 + 2 ** -30)
    c = program(lambda a: a.astype(np.float16), np.ones((3, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(emulate(c)(z), z.astype(np.float16))


@pytest.mark.skipif(nvrtc_module() is None, reason="NVRTC wheels not installed")
def test_half_kernels_compile_with_nvrtc():
    for f, n in [(chain, 2), (layer_norm, 3)]:
        for k in program(f, *([h(5, 8)] + [h(8)] * (n - 1))).kernels:
            ptx = nvrtc_ptx(k)
            assert "cvt.rn.f16.f32" in ptx and "cvt.f32.f16" in ptx
