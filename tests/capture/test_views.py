"""Views alias exactly as in NumPy: writes through views of inputs, state and intermediates
reach their bases and every other view (module() and compiled code against eager NumPy),
plus a Hypothesis differential fuzzer over random view/mutation programs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim

K = Dim("k", min=1, max=64)
SPEC = {"x": (4 * K,)}
SIZES = (4, 8, 12, 20)


def check(f, sizes=SIZES, compiled=True):
    ep = ss.export(f, (np.arange(8.0),), dynamic_shapes=SPEC)
    runners = [ep.module()] + ([ep.compile()] if compiled else [])
    for n in sizes:
        for run in runners:
            a, b = np.arange(float(n)), np.arange(float(n))
            got, want = run(a), f(b)
            got = got if isinstance(got, tuple) else (got,)
            want = want if isinstance(want, tuple) else (want,)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(a, b)        # the input was written the same way


def slice_write(x):
    v = x[1:]
    v[0] = 5
    return x


def reshape_write(x):
    v = x.reshape(2, -1)
    v[0, 1] = 7
    return x


def ravel_of_none(x):
    v = x[None].ravel()
    v[0] = 7
    return x


def transpose_write(x):
    v = x.reshape(2, -1).T
    v[0] = 3
    return x


def strided_iadd(x):
    x[::2][1:] += 10
    return x


def sibling_views(x):
    a, b = x[1:], x[:3]
    a[0] = 9
    return b


def base_then_view(x):
    v = x[1:]
    x[1] = 4
    return v


def squeeze_write(x):
    v = x[None, :][0:1].squeeze(0)
    v[0] = 2
    return x


def flatten_is_a_copy(x):
    f = x.flatten()
    f[0] = 100
    return x, f


def swapaxes_and_mT(x):
    m = x.reshape(2, -1)
    m.swapaxes(0, 1)[0, 1] = -1
    m.mT[-1] *= 2
    return x, m


def out_into_view(x):
    np.multiply(x[:2], 3, out=x[2:4])
    return x


@pytest.mark.parametrize("f", [slice_write, reshape_write, ravel_of_none, transpose_write,
                               strided_iadd, sibling_views, base_then_view, squeeze_write,
                               flatten_is_a_copy, swapaxes_and_mT, out_into_view])
def test_writes_through_views(f):
    check(f)


class Buffer:
    def __init__(self):
        self.data = np.zeros((4, 6))

    def step(self, x):
        row = self.data[1]
        row[:3] = x[:3]
        self.data.T[5] = x[3:].sum()
        return self.data.sum()


def test_views_of_state_write_the_state():
    eager, traced = Buffer(), Buffer()
    ep = ss.export(traced.step, (np.arange(6.0),), dynamic_shapes={"x": (Dim("n", min=4),)})
    for n in (4, 6, 9):
        x = np.arange(float(n))
        assert ep.module()(x) == eager.step(x)
        np.testing.assert_array_equal(traced.data, eager.data)


# --------------------------------------------------------------------------- fuzzer
STEPS = st.lists(st.tuples(st.sampled_from(["view_head", "view_tail", "view_even",
                                            "view_2d", "view_T", "set0", "iadd",
                                            "set_even", "mul_all"]),
                           st.integers(0, 7), st.integers(-3, 3)), min_size=1, max_size=8)


def build(steps):
    """A program over x of length 4*k from random steps.  Each live array carries what its
    first axis is divisible by and the smallest sizes its axes can have, so every step is
    valid for every admitted k (the program itself asks no size question)."""
    def f(x):
        arrays = [(x, 4, (4,))]
        for kind, pick, c in steps:
            a, div, mins = arrays[pick % len(arrays)]
            if kind in ("view_head", "view_tail") and mins[-1] >= 2:
                v = (a[:-1] if kind == "view_head" else a[1:]) if a.ndim == 1 else \
                    (a[:, :-1] if kind == "view_head" else a[:, 1:])
                arrays.append((v, 1 if a.ndim == 1 else div, mins[:-1] + (mins[-1] - 1,)))
            elif kind == "view_even" and a.ndim == 1:
                arrays.append((a[::2], max(div // 2, 1), ((mins[0] + 1) // 2,)))
            elif kind == "view_2d" and a.ndim == 1 and div % 2 == 0:
                arrays.append((a.reshape(2, -1), 2, (2, mins[0] // 2)))
            elif kind == "view_T" and a.ndim == 2:
                arrays.append((a.T, 1, mins[::-1]))
            elif kind == "set0" and mins[0] >= 1:
                a[0] = c
            elif kind == "iadd":
                a += c
            elif kind == "set_even" and a.ndim == 1:
                a[::2] = c * 2
            elif kind == "mul_all":
                a *= 1.5
        return tuple(a.copy() for a, _, _ in arrays)
    return f


@settings(deadline=None)
@given(STEPS)
def test_random_view_and_mutation_programs_match_eager(steps):
    check(build(steps), sizes=(4, 12), compiled=True)
