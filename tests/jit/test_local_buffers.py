"""An array the program creates is a new array on every call, as in eager NumPy: a local
``acc = np.zeros(3); acc += v`` next to a graph break does not keep its contents between
calls, and a returned created array is never a buffer shared by all calls."""
import contextlib
import io
import warnings

import numpy as np

import symshape as ss


def accumulate(v):
    acc = np.zeros(3)
    acc += v
    print("a graph break")
    return acc * 1


def test_a_local_buffer_next_to_a_graph_break_starts_fresh():
    cf = ss.compile(accumulate)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        got = [cf(np.ones(3)) for _ in range(5)]
    for out in got:
        assert np.array_equal(out, np.ones(3))


def created():
    return np.zeros(3), np.arange(4.0)[1:]


def test_a_returned_created_array_is_new_on_every_call():
    mod = ss.export(created, ()).module()
    a, b = mod()
    a += 1
    b[:] = 7
    c, d = mod()
    assert np.array_equal(c, np.zeros(3)) and np.array_equal(d, [1.0, 2.0, 3.0])
    cf = ss.compile(created)
    e, _ = cf()
    e += 5
    assert np.array_equal(cf()[0], np.zeros(3))
