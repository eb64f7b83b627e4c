"""ss.compile under faults: generated names never collide with the user's, a failing call
changes nothing, concurrent first calls compile once, generated source does not leak."""
import gc
import linecache
import threading
import warnings

import numpy as np
import pytest

import symshape as ss


def test_a_break_before_two_masks_compiles():
    def f(x):
        print("step", end="")
        return x[x > 0] + x[x > 1].sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf = ss.compile(f)
        for x in (np.array([1.0, 2, -1]), np.array([1.0, 2, -1, 3])):
            np.testing.assert_array_equal(cf(x), f(x))


def test_parameters_named_like_generated_helpers():
    def f(x_ndarray, _ndarray):
        return x_ndarray + _ndarray
    ep = ss.export(f, (np.ones(3), np.ones(3)))
    np.testing.assert_array_equal(ep.module()(np.ones(3), np.ones(3)), np.full(3, 2.0))

    def g(x_ndarray, y):
        return x_ndarray * y
    np.testing.assert_array_equal(ss.compile(g)(np.ones(3), np.ones(3)), np.ones(3))


def test_a_failing_call_raises_the_users_error_and_changes_nothing():
    def f(x):
        return x.reshape(-1, 2)
    cf = ss.compile(f)
    cf(np.ones(4))
    with pytest.raises(ValueError, match="cannot reshape"):
        cf(np.ones(5))
    assert cf.mode == "graph"
    cf(np.ones(6))
    assert cf.mode == "graph" and len(cf.variants) == 2


def test_concurrent_first_calls_compile_one_variant():
    def f(x):
        return x * 2 + 1
    cf = ss.compile(f)
    barrier = threading.Barrier(8)

    def call():
        barrier.wait()
        cf(np.ones(3))
    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cf.variants) == 1


def test_generated_source_lives_as_long_as_its_program():
    gc.collect()
    before = len(linecache.cache)
    for _ in range(100):
        ep = ss.export(lambda x: x + 1, (np.ones(3),))
        ep.module()(np.ones(3))
        ep.compile()(np.ones(3))
        del ep
    gc.collect()
    assert len(linecache.cache) - before <= 2


def test_fallback_to_pieces_warns_once():
    def f(x):
        print("", end="")
        return x + 1
    cf = ss.compile(f)
    with pytest.warns(UserWarning, match="could not compile the whole function"):
        cf(np.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf(np.ones(3))
