"""Hypothesis fuzzing of backend="cupy" under the emulator: model-like programs (row and
column reductions, broadcasts, pointwise chains) over float32 / float64 / float16 inputs in
every layout the driver handles (contiguous, transposed, sliced, reversed, broadcast,
misaligned), at sizes across the launch-geometry switches, in the 32- and 64-bit index
variants, against eager NumPy."""
import shutil
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.emulate import emulate

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
A = Dim.AUTO


def norm(x, g):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-3) * g


def softmax(x, g):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) + g


def columns(x, g):
    return (x - x.mean(axis=0)) * g + x.max(axis=0)


def pointwise(x, g):
    return np.tanh(x * g + 1) * np.abs(x) - np.minimum(x, g) / 3


def row_stats(x, g):
    return x.sum(axis=-1) + (x * g).max(axis=-1), np.any(x > g, axis=-1)


PROGRAMS = {"norm": norm, "softmax": softmax, "columns": columns, "pointwise": pointwise,
            "row_stats": row_stats}
_COMPILED = {}


def compiled(name, dtype, index64):
    key = (name, dtype, index64)
    if key not in _COMPILED:
        ex = (np.ones((3, 5), dtype), np.ones(5, dtype))
        ep = ss.export(PROGRAMS[name], ex, dynamic_shapes=[(A, A), (A,)])
        _COMPILED[key] = emulate(compile_cupy(ep), force_index64=index64)
    return _COMPILED[key]


def layout(base, kind):
    """An array equal to ``base`` in the given memory layout."""
    if kind == "transposed":
        return np.ascontiguousarray(base.T).T
    if kind == "sliced":
        big = np.zeros((base.shape[0] * 2, base.shape[1] + 3), base.dtype)
        big[::2, 1:-2] = base
        return big[::2, 1:-2]
    if kind == "reversed":
        return np.ascontiguousarray(base[::-1])[::-1]
    if kind == "misaligned":
        flat = np.zeros(base.size + 1, base.dtype)
        flat[1:] = base.ravel()
        return flat[1:].reshape(base.shape)
    if kind == "broadcast":
        return np.broadcast_to(base[:1], base.shape)
    return base


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)),
       dtype=st.sampled_from([np.float32, np.float64, np.float16]),
       rows=st.sampled_from([2, 3, 9, 33, 300, 5000, 20000]),
       cols=st.sampled_from([2, 7, 31, 32, 257, 1000, 4097]),
       kind=st.sampled_from(["contiguous", "transposed", "sliced", "reversed", "misaligned",
                             "broadcast"]),
       seed=st.integers(0, 3), index64=st.booleans())
def test_programs_match_numpy_in_every_layout(name, dtype, rows, cols, kind, seed, index64):
    if rows * cols > 40000:
        rows = max(2, 40000 // cols)
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((rows, cols)).astype(dtype)
    x = layout(base, kind)
    g = (rng.random(cols) + 0.5).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = compiled(name, dtype, index64)(x, g), PROGRAMS[name](x, g)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    tol = {np.float16: 1e-2, np.float32: 1e-4, np.float64: 1e-10}[dtype]
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype == bool:
            assert np.array_equal(a, b)
        else:
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol,
                                       atol=tol * max(1.0, float(np.abs(x).max())) *
                                       (cols if name in ("row_stats", "columns") else 1))
