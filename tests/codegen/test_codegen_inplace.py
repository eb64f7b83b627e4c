"""Compiled code writes in place only where nobody can tell: a KV-cache update writes its
slice (no copy of the cache, no write-back), a temporary that dies is reused by the next
elementwise op, and inputs, state, views and returned arrays are never clobbered."""
import re

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

RNG = np.random.default_rng(4)


def f64(*shape):
    return RNG.standard_normal(shape)


class Cache:
    def __init__(self):
        self.k = np.zeros((2, 32, 4))

    def step(self, x, pos):
        self.k[:, pos:pos + x.shape[1]] = x
        return self.k[:, :pos + x.shape[1]].sum(axis=1) * 2


def test_kv_cache_update_writes_its_slice_without_copying_the_cache():
    model, ref = Cache(), Cache()
    ep = ss.export(model.step, (f64(2, 3, 4), 0),
                   dynamic_shapes={"x": (None, Dim("n", min=1, max=8), None),
                                   "pos": Dim("pos", min=0, max=24)})
    fn = ep.compile()
    assert "cache_k[...] =" not in fn.source and "self_k[...] =" not in fn.source
    # the slice is written in place: Python's own item assignment on the state array
    assert "c_self_k[:, s1:_z0, :] = x" in fn.source
    before = model.k
    pos = 0
    for n in (3, 1, 1, 4):
        x = f64(2, n, 4)
        np.testing.assert_array_equal(fn(x, pos), ref.step(x, pos))
        pos += n
    assert model.k is before
    np.testing.assert_array_equal(model.k, ref.k)


def test_a_view_of_the_old_value_keeps_its_values():
    def f(x):
        old = x[:, :2]
        x[:, 0] = 5.0
        return old * 1.0, x + 0.0
    a = f64(4, 3)
    ep = ss.export(f, (a.copy(),))
    for fn in (ep.compile(), ep.module()):
        a1, a2 = a.copy(), a.copy()
        got, want = fn(a1), f(a2)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(a1, a2)


def test_owned_arrays_are_filled_in_place():
    def rope(x, c, s):
        out = np.empty_like(x)
        out[..., ::2] = x[..., ::2] * c - x[..., 1::2] * s
        out[..., 1::2] = x[..., ::2] * s + x[..., 1::2] * c
        return out
    x, c, s = f64(3, 8), f64(4), f64(4)
    fn = ss.export(rope, (x, c, s)).compile()
    # both writes fill ``out`` in place (Python's item assignment), none copies it
    assert "_rt.setitem(" not in fn.source
    assert len(re.findall(r"^ +\w+\[[^\]]*\] = \w+$", fn.source, re.M)) == 2
    np.testing.assert_array_equal(fn(x, c, s), rope(x, c, s))


@pytest.mark.parametrize("n", [2, 5, 700])
def test_dying_temporaries_are_reused_but_inputs_and_outputs_are_not(n):
    def f(x, y):
        a = x * 2.0
        b = a + y            # a dies here: b may take its memory
        c = np.tanh(b)
        return c, x * 1.0, a.T.sum() if False else c * 0.5
    x, y = f64(n, 4), f64(n, 4)
    x0, y0 = x.copy(), y.copy()
    fn = ss.export(f, (x, y), dynamic_shapes={"x": (Dim("n"), None), "y": (Dim("n"), None)}
                   ).compile()
    r1 = fn(x, y)
    for g, w in zip(r1, f(x, y)):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    assert r1[0] is not r1[2] and not np.shares_memory(r1[0], r1[2])


# --------------------------------------------------------------------------- gathers
I = np.array([[0, 1], [-1, 2]])
J = np.array([3, -4])


@pytest.mark.parametrize("f", [
    lambda x: x[:, I, J] * 1.0,                 # leading slice, broadcast, negatives
    lambda x: x[1:, :][:, I, J] + 0.0,
    lambda x: x[:, :, :][:, [0, 2], [1, 1]],
    lambda x: x[0][I, J],                       # no leading slice
])
def test_constant_gathers_match_numpy(f):
    x = f64(3, 4, 5)
    ep = ss.export(f, (x,), dynamic_shapes={"x": (Dim("n"), None, None)})
    fn = ep.compile()
    for n in (2, 3, 7):
        x = f64(n, 4, 5)
        np.testing.assert_array_equal(fn(x), f(x))


def test_im2col_gather_is_one_take():
    def f(x):
        k = np.repeat(np.arange(2), 4).reshape(-1, 1)
        i = np.tile(np.arange(2), 4).reshape(-1, 1) + np.arange(3).reshape(1, -1)
        return x[:, k, i, i]
    x = f64(2, 2, 4, 4)
    fn = ss.export(f, (x,), dynamic_shapes={"x": (Dim("n"), None, None, None)}).compile()
    assert "np.take(" in fn.source
    for n in (2, 5):
        x = f64(n, 2, 4, 4)
        np.testing.assert_array_equal(fn(x), f(x))
