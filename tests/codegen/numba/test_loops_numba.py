"""Loops over a symbolic count (issue 41) under ``backend="numba"``: a ``for_loop`` whose
body plans to kernels, views, small matmuls and writes into a carried array runs as one
numba function (``_L0`` in the driver); any other body stays a Python loop over the
body's NumPy code.  Both equal eager NumPy at trip counts 0, 1, 5 and 37 (where the
contract admits them), and the caller's arrays are never written."""
import os
import tempfile

import numpy as np
import pytest

numba = pytest.importorskip("numba")

os.environ.setdefault("SYMSHAPE_NUMBA_CACHE", tempfile.mkdtemp(prefix="ss-numba-test-"))

import symshape as ss  # noqa: E402
from symshape.codegen.numba_backend.loops import MATMUL_WORK  # noqa: E402

from loop_programs import (assert_same, gated, leapfrog, make_elman, nested,  # noqa: E402
                           odd_rows)
from loop_programs import written_plus_t as written  # noqa: E402

RNG = np.random.default_rng(4)
W = RNG.standard_normal((4, 6)) * 0.4
U = RNG.standard_normal((6, 6)) * 0.4
BIG = RNG.standard_normal((200, 200)) * 0.05
COUNTS = (0, 1, 5, 37)
elman = make_elman(W, U)


def cumulative(x):
    acc = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        acc = acc * 0.5 + x[t]
    return acc


def backwards(x):
    acc = np.zeros(x.shape[1], np.float32)
    outs = []
    for t in reversed(range(x.shape[0])):
        acc = acc * np.float32(0.5) + x[t]
        outs.append(acc.sum())
    return acc, np.stack(outs)


def rebinds_input(x, h):
    for t in range(x.shape[0]):
        h = h * 0.9 + x[t]
    return h


def shifted(x):
    y = np.zeros_like(x)
    for t in range(1, x.shape[0]):
        y[t] = y[t - 1] * 0.5 + x[t]
    return y


def read_after_write(x):
    y = np.ones(x.shape[1])
    outs = []
    for t in range(x.shape[0]):
        old = y * 2.0               # fused into the kernel below, which runs after the write
        y[0] = x[t, 0]
        outs.append(old + y)
    return np.stack(outs), y


def big_matmul(x):
    h = np.zeros(200)
    for t in range(x.shape[0]):
        h = np.tanh(x[t] + h @ BIG)
    return h


def sorted_body(x):
    acc = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        acc = np.sort(acc + x[t])
    return acc


def _same(got, want):
    assert_same(got, want, 1e-12, 1e-12, f32=1e-5)


def _compile(f, x0, lo):
    ep = ss.export(f, (x0,), dynamic_shapes={"x": {0: ss.Dim("T", min=lo)}})
    return ep.compile(backend="numba")


@pytest.mark.parametrize("f, width, lo, one", [
    (elman, (4,), 1, True),
    (cumulative, (4,), 0, True),
    (written, (4,), 0, True),
    (gated, (3, 4), 1, True),
    (shifted, (4,), 1, True),
    (read_after_write, (4,), 1, None),
    (big_matmul, (200,), 0, False),
    (sorted_body, (4,), 0, False),
], ids=lambda v: getattr(v, "__name__", None))
def test_loop_programs_match_eager(f, width, lo, one):
    c = _compile(f, RNG.standard_normal((5,) + width), lo)
    if one is not None:
        assert ("_L0(" in c.source) is one
    for n in COUNTS:
        if n < lo:
            continue
        x = RNG.standard_normal((n,) + width)
        _same(c(x), f(x))


def test_float32_reversed_range_and_a_reduction_per_row():
    c = _compile(backwards, RNG.standard_normal((5, 4)).astype(np.float32), 1)
    assert "_L0(" in c.source
    for n in (1, 5, 37):
        x = RNG.standard_normal((n, 4)).astype(np.float32)
        _same(c(x), backwards(x))


def test_a_carried_input_is_not_written():
    ep = ss.export(rebinds_input, (RNG.standard_normal((5, 4)), np.zeros(4)),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=0)}, "h": None})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source
    for n in COUNTS:
        x, h = RNG.standard_normal((n, 4)), RNG.standard_normal(4)
        keep = h.copy()
        _same(c(x, h), rebinds_input(x, keep.copy()))
        np.testing.assert_array_equal(h, keep)


def test_count_from_an_integer_input():
    q, p = RNG.standard_normal(3), RNG.standard_normal(3)
    ep = ss.export(leapfrog, (q, p, 7, 0.1), dynamic_shapes={
        "q": None, "p": None, "n": ss.Dim("n", min=0), "dt": None})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source
    for n in (0, 1, 5, 37):
        _same(c(q, p, n, 0.1), leapfrog(q, p, n, 0.1))


def test_a_matmul_past_the_limit_stays_blas():
    assert 200 * 200 > MATMUL_WORK


def test_a_loop_inside_a_loop_is_a_function_the_loop_calls():
    ep = ss.export(nested, (RNG.standard_normal((5, 4)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=0), 1: ss.Dim("K", min=1)}})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source and "def _loop1(" in c.source
    for n, k in ((0, 3), (1, 1), (5, 3), (9, 6)):
        x = RNG.standard_normal((n, k))
        _same(c(x), nested(x))


def counted(x):
    n = 0
    s = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        n = n + 1
        s = s + x[t] * n
    return s, n


def strided_start(x):
    acc = x[:, 0]
    for t in range(x.shape[0]):
        acc = acc * 0.5 + x[t, :x.shape[0]]
    return acc


def test_a_python_number_carried_and_a_strided_first_value():
    ep = ss.export(counted, (RNG.standard_normal((5, 3)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=0)}})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source
    for n in (1, 3, 9):
        x = RNG.standard_normal((n, 3))
        got, want = c(x), counted(x)
        _same(got[0], want[0])
        assert np.ndim(got[1]) == 0 and got[1] == want[1]
    ep = ss.export(strided_start, (RNG.standard_normal((5, 6)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=1, max=6)}})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source
    for n in (1, 4, 6):
        x = RNG.standard_normal((n, 6))
        _same(c(x), strided_start(x))


def smoothed(x):
    y = np.zeros_like(x)
    pad = np.concatenate([x[:1], x, x[-1:]])
    for t in range(x.shape[0]):
        y[t] = np.dot(np.array([1, 2, 1]), pad[t:t + 3]) / 4.0
    return y


def attract(pos, n_steps):
    for _ in range(n_steps):
        acc = np.zeros_like(pos)
        for i in range(pos.shape[0]):
            for j in range(pos.shape[0]):
                d = pos[j] - pos[i]
                acc[i] += d / ((d * d).sum() + 0.5)
        pos = pos + 0.01 * acc
    return pos


def test_a_dot_with_a_constant_and_arrays_made_in_the_body():
    ep = ss.export(smoothed, (RNG.standard_normal((5, 3)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=1)}})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source
    for n in (1, 2, 9):
        x = RNG.standard_normal((n, 3))
        _same(c(x), smoothed(x))
    ep = ss.export(attract, (RNG.standard_normal((4, 2)), 3),
                   dynamic_shapes={"pos": {0: ss.Dim("N", min=1)}, "n_steps": ss.Dim("S", min=0)})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source and "def _loop2(" in c.source
    for n, steps in ((1, 3), (2, 0), (5, 4)):
        p = RNG.standard_normal((n, 2))
        _same(c(p, steps), attract(p, steps))


def view_carried(x):
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h[0] = t                    # into the row of x carried from the last iteration
        h = x[t]
    return h


def test_a_view_of_an_input_carried_is_never_written_in_place():
    # (what module() does with the write through the view is the capture's business: the
    # numba loop must do the same to the caller's array, not write into it on its own)
    ep = ss.export(view_carried, (RNG.standard_normal((5, 3)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=1)}})
    c, m = ep.compile(backend="numba"), ep.module()
    for n in (1, 2, 6):
        x = RNG.standard_normal((n, 3))
        x_module = x.copy()
        want = m(x_module)
        _same(c(x), want)
        np.testing.assert_array_equal(x, x_module)


def fibonacci_pair(x):
    a = np.zeros(x.shape[1])
    b = np.ones(x.shape[1])
    for t in range(x.shape[0]):
        a, b = b, a + b * x[t]            # a carries the array b held: lives two iterations
    return a, b


def shift_register(x):
    h = np.zeros(x.shape[1])
    prev = np.zeros(x.shape[1])
    older = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        older = prev
        prev = h
        h = np.tanh(x[t] + 0.5 * prev - 0.25 * older)
    return h, prev, older


def reversed_view(x):
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = np.tanh(x[t] + h)[::-1]       # a view of this iteration's array
    return h


@pytest.mark.parametrize("f", [fibonacci_pair, shift_register, reversed_view, cumulative],
                         ids=lambda f: f.__name__)
def test_buffers_reused_across_iterations_hold_what_later_iterations_read(f):
    ep = ss.export(f, (RNG.standard_normal((5, 4)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=0)}})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source
    if f is cumulative:
        assert "_b0_" in c.source             # two buffers used in turn
    for n in (0, 1, 2, 3, 8):
        x = RNG.standard_normal((n, 4))
        _same(c(x), f(x))


def test_a_loop_numba_cannot_compile_runs_as_the_python_loop_with_a_warning():
    from numba.core.errors import TypingError
    ep = ss.export(elman, (RNG.standard_normal((5, 4)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=1)}})
    c = ep.compile(backend="numba")

    def untypable(*args):
        raise TypingError("no implementation for this signature")
    c.compiled.ns["_L0"] = untypable             # as numba's first call would fail
    x = RNG.standard_normal((6, 4))
    # (the warning names the loop's line, in the shared programs' file)
    with pytest.warns(RuntimeWarning,
                      match=r"could not compile the loop at .*loop_programs\.py:\d+"):
        got = c(x)
    _same(got, elman(x))
    _same(c(x), elman(x))


def test_a_step_and_a_start_other_than_0_and_1():
    ep = ss.export(odd_rows, (RNG.standard_normal((6, 3)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=0)}})
    c = ep.compile(backend="numba")
    assert "_L0(" in c.source
    for n in (0, 1, 2, 3, 6, 7):
        x = RNG.standard_normal((n, 3))
        _same(c(x), odd_rows(x))
