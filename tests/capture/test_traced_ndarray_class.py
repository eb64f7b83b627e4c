"""A traced array is an ``np.ndarray`` to the user's code: ``isinstance(x, np.ndarray)`` is
True and ``type(x) is np.ndarray`` holds, so library helpers take the branch eager NumPy
takes (export, ``module()`` and ``ss.compile`` agree with eager)."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim


def as_batch(x):
    # the helper pattern of many libraries: promote a single sample to a batch
    if isinstance(x, np.ndarray) and x.ndim == 1:
        x = x[None]
    return x * 2.0


def as_array(x):
    if not isinstance(x, (list, tuple, np.ndarray)):
        raise TypeError("expected an array")
    return np.asarray(x) + 1.0


def exact_type(x):
    if type(x) is np.ndarray:
        return x + 1.0
    return x - 1.0


def type_name(x):
    return x * len(type(x).__name__)


class Layer:
    def __init__(self):
        self.W = np.arange(6.0).reshape(3, 2)
        self.b = np.ones(2)
        self.name = "dense"
        self.scale = 0.5

    def parameters(self):
        return [v for v in vars(self).values() if isinstance(v, np.ndarray)]

    def __call__(self, x):
        total = sum(p.sum() for p in self.parameters())
        return x @ self.W + self.b * total, len(self.parameters())


@pytest.mark.parametrize("fn", [as_batch, as_array, exact_type, type_name])
def test_helpers_take_the_eager_branch(fn):
    x = np.arange(3.0)
    ep = ss.export(fn, (x,))
    want = fn(x)
    got = ep.module()(x)
    assert got.shape == want.shape and np.array_equal(got, want)
    cf = ss.compile(fn)
    assert np.array_equal(cf(x), want)


def test_parameter_collection_over_vars_finds_the_state_arrays():
    m = Layer()
    x = np.ones((4, 3))
    ep = ss.export(m, (x,), dynamic_shapes={"x": (Dim.AUTO, None)})
    out, n = ep.module()(x)
    want, n_eager = m(x)
    assert n == n_eager == 2 and np.array_equal(out, want)
    assert set(ep.state) >= {"self.W", "self.b"}


def test_a_batch_helper_exports_dynamic_batches():
    x = np.ones((5, 3))
    ep = ss.export(as_batch, (x,), dynamic_shapes={"x": (Dim.AUTO, None)})
    assert ep.module()(np.ones((7, 3))).shape == (7, 3)


def test_the_class_checks_hold_inside_the_trace():
    def f(x):
        assert isinstance(x, np.ndarray) and x.__class__ is np.ndarray
        assert type(x) is np.ndarray and issubclass(type(x), np.ndarray)
        assert isinstance(int, type) and type(3) is int
        return x + 1

    ep = ss.export(f, (np.ones(2),))
    assert np.array_equal(ep.module()(np.ones(2)), np.full(2, 2.0))


class Typed:
    def __init__(self):
        self.c = {"a": 1.0}
        self.l = [1.0]

    def __call__(self, x):
        if type(self) is Typed and type(self.c) is dict and type(self.l) is list:
            return x + 1
        return x - 1


def test_type_of_recorded_objects_is_the_users_class():
    m = Typed()
    assert np.array_equal(ss.export(m, (np.ones(2),)).module()(np.ones(2)), np.full(2, 2.0))
