"""NumPy functions that write into an argument (issue 30's surface): putmask, place, put and
fill_diagonal keep sizes symbolic and leave the array as eager NumPy does, on several
sizes."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim

A = Dim.AUTO

CASES = {
    "place": lambda x, y: np.place(x, y > 0, [1.0, 2.0, 3.0]),
    "put": lambda x, y: np.put(x, [0, 3, -1], [9.0, 8.0]),
    "put_traced": lambda x, y: np.put(x, (np.abs(y[0]) * 2).astype(int), y[1]),
    "put_bool": lambda x, y: np.put(x, y > 0, y),
    "putmask": lambda x, y: np.putmask(x, y > 0, y),
    "putmask_cycled": lambda x, y: np.putmask(x, y > 0, [1.0, 2.0, 3.0]),
    "fill_diagonal": lambda x, y: np.fill_diagonal(x, 1.0),
    "fill_diagonal_values": lambda x, y: np.fill_diagonal(x, [1.0, 2.0]),
}


@settings(max_examples=14)
@given(name=st.sampled_from(sorted(CASES)), seed=st.integers(0, 100))
def test_writes_as_eager(name, seed):
    fn = CASES[name]

    def f(x, y):
        fn(x, y)
        return x * 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = np.random.default_rng(0).standard_normal((5, 4))
        ep = ss.export(f, (ex.copy(), ex.copy()), dynamic_shapes={"x": (A, A), "y": (A, A)})
    assert all(not isinstance(s, int) for s in ep.graph.inputs[0].shape)
    for shape in [(5, 4), (7, 6), (3, 8), (9, 2)]:
        a = np.random.default_rng(seed).standard_normal(shape)
        b = np.random.default_rng(seed + 1).standard_normal(shape)
        a1, a2 = a.copy(), a.copy()
        got, want = ep.module()(a1, b.copy()), f(a2, b.copy())
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(a1, a2)          # the input written in place


def test_fill_diagonal_wrap_is_refused_with_a_reason():
    with pytest.raises(ss.UserError, match="wrap=True"):
        ss.export(lambda x: np.fill_diagonal(x, 1.0, wrap=True), (np.ones((6, 3)),),
                  dynamic_shapes={"x": (A, A)})
