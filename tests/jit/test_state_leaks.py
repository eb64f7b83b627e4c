"""No traced value is left where the user's code can see it, after an export or a compiled
call: closures stored on ``self``, ``return self``, ``functools.lru_cache`` methods,
returned dataclasses and ``SimpleNamespace``s, a dict entry rebound before a graph break.
Each is either exported correctly, refused clearly, or (under ``ss.compile``) run so that
the user's objects hold real arrays, as in eager NumPy."""
import dataclasses
import functools
import types
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape.capture.state.leaks import traced_in

X = np.arange(6.0).reshape(2, 3)


def no_traced(*objs):
    for o in objs:
        found = [p for p, _, _ in traced_in(o, "obj")]
        assert not found, found


def run_compiled(f, n=3):
    cf = ss.compile(f)
    outs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(n):
            outs.append(cf(X + k))
    return outs


class Closure:
    def __init__(self):
        self.W = np.ones((3, 3))

    def __call__(self, x):
        y = x @ self.W
        self.backward = lambda g: g @ self.W.T * y
        return y


def test_a_closure_over_a_computed_value_is_refused_at_export():
    m = Closure()
    with pytest.raises(ss.UserError, match=r"stores at self\.backward .*test_state_leaks\.py:"
                                           r"\d+ a function that holds a value it computed"):
        ss.export(m, (X,))
    assert not hasattr(m, "backward")


def test_a_closure_under_compile_holds_real_arrays():
    m, e = Closure(), Closure()
    for k, out in enumerate(run_compiled(m)):
        assert np.array_equal(out, e(X + k))
    no_traced(m)
    g = np.ones((2, 3))
    assert np.array_equal(m.backward(g), e.backward(g))


class Estimator:
    def __init__(self):
        self.coef_ = np.zeros(3)

    def partial_fit(self, x):
        self.coef_ = self.coef_ + x.mean(0)
        return self


def test_return_self_under_compile():
    m, e = Estimator(), Estimator()
    outs = run_compiled(m.partial_fit)
    for k in range(3):
        e.partial_fit(X + k)
    assert all(o is m for o in outs)
    no_traced(m)
    assert np.array_equal(m.coef_, e.coef_)


class Cached:
    def __init__(self):
        self.W = np.ones((3, 3))

    @functools.lru_cache(maxsize=None)
    def proj(self, k):
        return self.W * k

    def __call__(self, x):
        return x @ self.proj(2)


def test_an_lru_cache_keeps_no_traced_entry():
    m = Cached()
    ep = ss.export(m, (X,))
    assert np.array_equal(m(X), X @ (2 * np.ones((3, 3))))     # eager after export
    assert np.array_equal(ep.module()(X), m(X))
    m2 = Cached()
    for k, out in enumerate(run_compiled(m2)):
        assert np.array_equal(out, (X + k) @ (2 * np.ones((3, 3))))
    assert np.array_equal(m2(X), X @ (2 * np.ones((3, 3))))


@dataclasses.dataclass
class Out:
    y: np.ndarray
    n: int


def as_dataclass(x):
    return Out(x * 2, 3)


def as_namespace(x):
    return types.SimpleNamespace(y=x * 2, z=[x + 1])


@pytest.mark.parametrize("f", [as_dataclass, as_namespace])
def test_returned_objects_hold_real_arrays(f):
    outs = run_compiled(f)
    for k, out in enumerate(outs):
        no_traced(out)
        assert type(out) is type(f(X)) and np.array_equal(out.y, (X + k) * 2)


CACHE = {}


def rebound_before_break(x):
    CACHE["h"] = x * 2
    print("a graph break")
    return CACHE["h"] + 1


def test_a_dict_entry_rebound_before_a_graph_break():
    CACHE.clear()
    outs = run_compiled(rebound_before_break)
    no_traced(CACHE)
    assert np.array_equal(CACHE["h"], (X + 2) * 2)
    assert np.array_equal(outs[-1], (X + 2) * 2 + 1)
