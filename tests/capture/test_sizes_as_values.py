"""Sizes used as values: NumPy integer dtypes (never object arrays of symbols), weak Python
floats from size arithmetic that stay symbolic, text and hashing that specialise, and a
differential fuzzer of random size expressions used as data against eager NumPy."""
import logging
import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim
from runners import runner

A = Dim.AUTO


def same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w)


def run_all(f, example, spec, others):
    ep = ss.export(f, (example,), dynamic_shapes=spec)
    for x in (example,) + tuple(others):
        same(ep.module()(x), f(x))
        same(ep.compile()(x), f(x))
    return ep


def test_sizes_become_integer_arrays():
    def f(x):
        n = x.shape[0]
        return (np.array(n), np.asarray(x.shape), np.arange(n), x * np.array(n),
                np.full(x.shape, n), x * n, np.array([n, 2 * n]) + 1)
    ep = run_all(f, np.ones((5, 3), np.float32), {"x": (A, None)},
                 [np.ones((2, 3), np.float32), np.ones((9, 3), np.float32)])
    assert str(ep.input_shapes["x"]) == "(s0, 3)"
    assert all(n.dtype != object for n in ep.graph.nodes if n.dtype is not None)


def test_floats_from_sizes_stay_symbolic_and_weak():
    def f(x):
        n, d = x.shape
        return x * (1 / (n - 1)), x * d ** -0.5, x + n * 0.5, x / (n / 2), 2.0 ** n * x
    ep = run_all(f, np.ones((5, 4), np.float32), {"x": (A, A)},
                 [np.full((3, 9), 2, np.float32), np.full((11, 2), 3, np.float32)])
    assert str(ep.input_shapes["x"]) == "(s0, s1)"


def test_text_of_a_size_specialises_with_a_warning(caplog):
    def f(x):
        return x * len(f"{x.shape[0]}") + len(str(x.shape[0])) + hash(x.shape[0])
    with caplog.at_level(logging.WARNING, logger="symshape.dynamic"):
        ep = ss.export(f, (np.ones(12),), dynamic_shapes={"x": (A,)})
    assert ep.input_shapes["x"] == (12,)
    msgs = " ".join(r.getMessage() for r in caplog.records)
    assert "format() specialized x.shape[0] to 12" in msgs and "test_sizes_as_values" in msgs
    with pytest.raises(ss.ConstraintViolationError):
        ss.export(f, (np.ones(12),), dynamic_shapes={"x": (Dim.DYNAMIC,)})


def test_float_and_math_of_a_size_specialise(caplog):
    import math

    def f(x):
        return x * math.sqrt(x.shape[0])
    with caplog.at_level(logging.WARNING, logger="symshape.dynamic"):
        ep = ss.export(f, (np.ones(9),), dynamic_shapes={"x": (A,)})
    assert ep.input_shapes["x"] == (9,)


# --------------------------------------------------------------------------- fuzzer
LEAF = st.sampled_from(["n", "d", 1, 2, 3, 0.5, 2.5])
OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
       "//": operator.floordiv}
EXPR = st.recursive(LEAF, lambda sub: st.tuples(st.sampled_from(sorted(OPS)), sub, sub),
                    max_leaves=5)
USE = st.sampled_from(["array", "mul", "add_f32", "full", "int_mul"])


def evaluate(e, n, d):
    if e == "n":
        return n
    if e == "d":
        return d
    if isinstance(e, tuple):
        return OPS[e[0]](evaluate(e[1], n, d), evaluate(e[2], n, d))
    return e


def involves_float(e):
    return isinstance(e, float) or (isinstance(e, tuple) and
                                    (e[0] == "/" or involves_float(e[1]) or
                                     involves_float(e[2])))


@settings(deadline=None)
@given(EXPR, USE)
def test_random_size_expressions_used_as_data_match_eager(e, use):
    if use == "full" and involves_float(e):
        use = "mul"

    def f(x):
        v = evaluate(e, x.shape[0], x.shape[1])
        if use == "array":
            return np.array(v) + np.zeros(2)
        if use == "mul":
            return x * v
        if use == "add_f32":
            return x.astype(np.float32) + v
        if use == "full":
            return np.full((2,), v)
        return x.astype(np.int32) * np.array(v, dtype=np.int32) if not involves_float(e) \
            else x * v
    example = np.full((6, 5), 1.5)
    others = [np.full((7, 3), 2.0), np.full((4, 9), -1.0)]
    try:
        want = [f(x) for x in (example,) + tuple(others)]
    except ZeroDivisionError:
        return
    del want
    with np.errstate(all="ignore"):
        try:
            ep = ss.export(f, (example,), dynamic_shapes={"x": (A, A)})
        except ss.UserError:
            return                      # e.g. a division by a size the guards cannot rule out
        for x in (example,) + tuple(others):
            try:
                want = f(x)
            except ZeroDivisionError:
                with pytest.raises((ZeroDivisionError, ss.UserError)):
                    ep.module()(x)
                continue
            same(ep.module()(x), want)


def stats(x):
    n = x.shape[0]
    return x * 2, n / 2, {"scale": x.shape[1] ** -0.5, "n": n}


@pytest.mark.parametrize("kind", ["module", "compile", "loaded", "cupy", "dask", "jit"])
def test_floats_computed_from_sizes_are_outputs(kind, tmp_path):
    if kind == "jit":
        run = ss.compile(stats)
    else:
        ep = ss.export(stats, (np.ones((4, 3)),), dynamic_shapes={"x": (A, A)})
        run = runner(ep, kind, tmp_path)
    for shape in [(4, 3), (7, 5)]:
        x = np.ones(shape)
        arr, half, d = run(x)
        ref = stats(x)
        np.testing.assert_array_equal(np.asarray(arr), ref[0])
        assert type(half) is float and half == ref[1]
        assert d == ref[2] and type(d["scale"]) is float and type(d["n"]) is int
