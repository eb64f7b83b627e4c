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


@pytest.mark.parametrize("names", [("_ndarray", "x_ndarray"), ("np", "type"), ("s0", "_rt")])
def test_compiled_program_with_parameters_named_like_helpers(names):
    a, b = names
    ns = {}
    exec("def g(%s, %s):\n    return %s * 2 + %s\n" % (a, b, a, b), ns)
    g = ns["g"]
    x = np.array([1.0, -2.0, 3.0])
    ep = ss.export(g, (x, x + 1), dynamic_shapes={a: (ss.Dim.AUTO,), b: (ss.Dim.AUTO,)})
    for v in (x, np.arange(5.0)):
        np.testing.assert_array_equal(ep.compile()(v, v + 1), g(v, v + 1))
        np.testing.assert_array_equal(ep.compile()(**{a: v, b: v + 1}), g(v, v + 1))
    with pytest.raises(ss.UserError, match="dtype"):
        ep.compile()(x.astype(np.float32), x)


def _mask_cond(x):
    m = ss.cond(x.sum() > 0, lambda a: a[a > 0], lambda a: a[a < 0], (x,))
    return m * 2, m.sum() + x.shape[0]


def test_cond_branches_with_data_dependent_sizes():
    x = np.array([1.0, -2.0, 3.0, 4.0, 5.0])
    ep = ss.export(_mask_cond, (x,), dynamic_shapes={"x": (ss.Dim.AUTO,)})
    compiled = ss.compile(_mask_cond)
    for v in (x, -x, np.array([1.0, -1.0, 2.0]), np.array([-1.0, -2, 3, -4, 0, 9, -9])):
        want = _mask_cond(v)
        for run in (ep.module(), ep.compile(), compiled):
            got = run(v)
            np.testing.assert_array_equal(got[0], want[0])
            assert got[1] == want[1]


def test_compiled_cond_whose_untaken_branch_fails_on_these_shapes():
    def h(a, b):
        return ss.cond(a.sum() > 0, lambda a, b: a + b, lambda a, b: a * 2, (a, b))

    x = np.array([1.0, -2.0, 3.0, 4.0])
    ch = ss.compile(h)
    np.testing.assert_array_equal(ch(x, x), h(x, x))
    with pytest.raises(ValueError, match="broadcast"):
        ch(x, np.ones(3))                       # eager raises the same
    np.testing.assert_array_equal(ch(-x, np.ones(3)), h(-x, np.ones(3)))


def test_a_branch_that_pins_a_size_recompiles_instead_of_failing():
    def k(a):
        return ss.cond(a.sum() > 0, lambda a: a * int(a.shape[0]), lambda a: a - 1, (a,))

    ck = ss.compile(k)
    for v in (np.ones(4), np.ones(5), np.ones(7), -np.ones(6), np.ones(5)):
        np.testing.assert_array_equal(ck(v), k(v))
