"""Integer conversions of floats computed from sizes (issue 30): ``int(f)``,
``math.floor``, ``math.ceil``, ``math.trunc`` and ``round`` give a symbolic size equal to
eager Python's on every size the contract admits, with the guards they need; a float
expression that is not an exact ratio of sizes specialises (a warning), never a TypeError."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim

A = Dim.AUTO
# each spelled as user code spells it: `int` is looked up by name in the traced code
CONVERSIONS = {"int": lambda v: int(v), "floor": lambda v: math.floor(v),
               "ceil": lambda v: math.ceil(v), "trunc": lambda v: math.trunc(v),
               "round": lambda v: round(v)}


def _sizes_of(ep):
    return [s for d in ep.graph.inputs for s in d.shape if not isinstance(s, int)]


def test_same_padding_exports_with_dynamic_n():
    def conv_same(x):
        n = x.shape[0]
        stride, k = 2, 3
        pad = int((stride * (n - 1) + k - n) / 2)
        return np.pad(x, ((pad, pad), (0, 0)))
    ep = ss.export(conv_same, (np.ones((7, 3)),), dynamic_shapes={"x": (A, A)})
    assert len(_sizes_of(ep)) == 2
    for n in (2, 3, 8, 11, 40):
        x = np.random.default_rng(n).standard_normal((n, 3))
        np.testing.assert_array_equal(ep.module()(x), conv_same(x))


@settings(max_examples=25)
@given(name=st.sampled_from(sorted(CONVERSIONS)), a=st.integers(1, 4), b=st.integers(-3, 6),
       c=st.integers(1, 7), half=st.booleans())
def test_ratio_of_sizes_matches_eager(name, a, b, c, half):
    conv = CONVERSIONS[name]

    def f(x):
        n = x.shape[0]
        v = (a * n + b) / c if not half else (a * n + b) * 0.5 + 1
        return np.full((2,), conv(v))
    example = np.ones((9, 2))
    ep = ss.export(f, (example,), dynamic_shapes={"x": (A, None)})
    for n in range(2, 30):
        x = np.ones((n, 2))
        want = f(x)
        try:
            got = ep.module()(x)
        except ss.UserError:
            # only a sign guard of int/trunc (truncation toward zero) may exclude a size
            assert name in ("int", "trunc") and (a * n + b) * (a * 9 + b) < 0
            continue
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_symbolic_divisor(name):
    conv = CONVERSIONS[name]

    def f(x):
        n, m = x.shape
        return np.zeros((conv((3 * n + 1) / m), 2))
    ep = ss.export(f, (np.ones((7, 4)),), dynamic_shapes={"x": (A, A)})
    assert len(_sizes_of(ep)) == 2
    for n, m in [(2, 2), (7, 4), (10, 3), (5, 9), (16, 16), (31, 5)]:
        x = np.ones((n, m))
        assert ep.module()(x).shape == f(x).shape


def test_round_ties_to_even_without_guard():
    def f(x):
        return np.zeros((round(x.shape[0] / 4), 1))
    ep = ss.export(f, (np.ones((7, 1)),), dynamic_shapes={"x": (A, None)})
    for n in range(2, 40):                  # 6/4 = 1.5 -> 2, 10/4 = 2.5 -> 2
        assert ep.module()(np.ones((n, 1))).shape == f(np.ones((n, 1))).shape


def test_floor_division_of_a_float_is_a_float_as_in_python():
    def f(x):
        v = x.shape[0] / 2 // 1          # a float in eager Python (3.0)
        return x * v, np.zeros(int(v))
    ep = ss.export(f, (np.ones(7),), dynamic_shapes={"x": (A,)})
    for n in (2, 5, 12):
        x = np.arange(float(n))
        got, want = ep.module()(x), f(x)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_inexact_float_specialises_with_warning(caplog):
    def f(x):
        return np.zeros(int(x.shape[0] * 0.1 + 1))
    with caplog.at_level("WARNING", logger="symshape"):
        ep = ss.export(f, (np.ones(12),), dynamic_shapes={"x": (A,)})
    assert ep.module()(np.ones(12)).shape == (2,)
    with pytest.raises(ss.UserError):
        ep.module()(np.ones(30))
    assert any("int()" in r.getMessage() for r in caplog.records)


def test_int_still_behaves_as_int_in_traced_code():
    def f(x):
        assert isinstance(x.ndim, int) and issubclass(bool, int)
        y = np.zeros(3, dtype=int) + x.astype(int)[:3]
        return y, int("12") + int(2.7)
    ep = ss.export(f, (np.arange(5.0),), dynamic_shapes={"x": (A,)})
    got = ep.module()(np.arange(6.0))
    want = f(np.arange(6.0))
    assert got[0].dtype == want[0].dtype
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1] == 14
