"""Arrays the program creates are the program's own values: a creation call with static
sizes inside the trace is traced, so writing traced values into it (``[...] =``, ``+=``,
``out=``, ``np.add.at``) is a functional update and dynamic sizes stay dynamic (the
preallocate-then-fill pattern of real code)."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import exports_as_eager, same


def _check(f, make, sizes=(4, 5, 7)):
    return exports_as_eager(f, make, sizes, {"x": {0: Dim.AUTO}})


def _x(n):
    return (np.arange(n * 3, dtype=np.float64).reshape(n, 3) / 7.0,)


def fill_row(x):
    out = np.zeros((3, 4))
    out[0, :3] = x.sum(axis=0)
    out[1] += x[0].sum()
    return out


def sigma_rows(x):
    n = x.shape[1]
    sig = np.zeros((2 * n + 1, n))
    sig[0] = x.mean(axis=0)
    for k in range(n):
        sig[k + 1] = x[0] + k
        sig[n + k + 1] = x[-1] - k
    return sig


def grad_like(x):
    W = np.ones((3, 2))
    dW = np.zeros(W.shape)
    for _ in range(2):
        dW += x.T @ x[:, :2]
    return dW


def ufunc_out(x):
    acc = np.empty((3,))
    np.add(x.sum(axis=0), 1.0, out=acc)
    return acc


def add_at(x):
    acc = np.zeros(3)
    np.add.at(acc, [0, 2, 2], x[0])
    return acc


def full_then_fill(x):
    out = np.full((2, 3), -np.inf)
    out[1] = np.maximum(out[1], x.max(axis=0))
    return out


def eye_update(x):
    P = np.eye(3) * 2.0
    P[:] = P - np.outer(x[0], x[0]) / x.shape[0]
    return P


@pytest.mark.parametrize("f", [fill_row, sigma_rows, grad_like, ufunc_out, add_at,
                               full_then_fill, eye_update])
def test_static_created_array_filled_with_traced_values(f):
    _check(f, _x)       # exported at one size, run at three: the axis stayed dynamic


def test_filled_array_is_a_graph_value():
    ep = ss.export(fill_row, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})
    ops = [n.op for n in ep.graph.nodes]
    assert "zeros" in ops
    assert not any(op.endswith("_") for op in ops)


def test_created_array_not_filled_by_traced_values_still_works():
    def f(x):
        w = np.zeros(3)
        w[1] = 2.0
        return x * w
    _check(f, _x)


def test_object_dtype_creation_stays_plain():
    def f(x):
        names = np.empty(2, dtype=object)
        names[0] = "a"
        return x + (names[0] == "a")
    _check(f, _x)


def test_compile_fill_pattern():
    cf = ss.compile(sigma_rows, dynamic=True, fullgraph=True)
    for n in (4, 6):
        (x,) = _x(n)
        same(cf(x), sigma_rows(x))
