"""A SciPy function held as a value of model state (``self.sqrt = cholesky``, as filterpy's
``MerweScaledSigmaPoints`` stores it) traces its calls like the same function called by
name: one ``scipy::`` op, SciPy's own results, the object left as it was (issue 40)."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import same

scipy = pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402
import scipy.special  # noqa: E402


class SigmaSpread:
    """A library-style object choosing its matrix square root at construction."""

    def __init__(self, sqrt_method=None, squash=None):
        self.sqrt = scipy.linalg.cholesky if sqrt_method is None else sqrt_method
        self.squash = {"fn": scipy.special.expit if squash is None else squash}

    def spread(self, x, P):
        U = self.sqrt(2.0 * P)
        return x + U, self.squash["fn"](x)


def _inputs(n, seed):
    r = np.random.default_rng(seed)
    a = r.standard_normal((n, n))
    return r.standard_normal(n), a @ a.T + n * np.eye(n)


def test_held_scipy_functions_trace_as_ops():
    obj = SigmaSpread()
    n = Dim("n")
    ep = ss.export(obj.spread, _inputs(4, 0), dynamic_shapes={"x": {0: n}, "P": {0: n, 1: n}})
    ops = [node.op for node in ep.graph.nodes]
    assert "scipy::linalg_cholesky" in ops and "scipy::special_expit" in ops
    assert obj.sqrt is scipy.linalg.cholesky and obj.squash["fn"] is scipy.special.expit
    for k, seed in ((4, 1), (6, 2), (3, 3)):
        args = _inputs(k, seed)
        same(ep.module()(*args), obj.spread(*args))


def test_held_scipy_function_under_ss_compile():
    obj = SigmaSpread()
    run = ss.compile(obj.spread, dynamic=True)
    for k, seed in ((4, 1), (6, 2), (4, 3)):
        args = _inputs(k, seed)
        same(run(*args), obj.spread(*args))
    assert obj.sqrt is scipy.linalg.cholesky


def test_a_scipy_ufunc_in_a_closure_is_its_op():
    expit = scipy.special.expit

    def f(x):
        return expit(x) + 1

    ep = ss.export(f, (np.linspace(-3.0, 3.0, 7),), dynamic_shapes={"x": {0: Dim.AUTO}})
    assert any(n.op == "scipy::special_expit" for n in ep.graph.nodes)
    x = np.linspace(-5.0, 5.0, 11)
    same(ep.module()(x), f(x))


def test_a_held_user_function_is_left_alone():
    obj = SigmaSpread(sqrt_method=lambda p: np.linalg.cholesky(p).T)
    ep = ss.export(obj.spread, _inputs(4, 0))
    args = _inputs(4, 5)
    same(ep.module()(*args), obj.spread(*args))
