"""Globals are routed wherever the trace goes: ``len``, ``range`` and NumPy's creation
functions keep sizes symbolic in every function the trace enters, however it was reached (a
module attribute, a method, a decorator, ``functools.partial``, another module, a name
imported with ``from numpy import``), and nothing stays routed after a trace, also when it
raises and when several threads trace at once."""
import builtins
import functools
import sys
import threading

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from routed import blocks, gpt, helpers  # noqa: E402

RNG = np.random.default_rng(5)
DYN = Dim.DYNAMIC


class GPTRunner:
    """A harness in the style of public repositories: the model module is an attribute."""

    def __init__(self):
        self.g = gpt
        self.params = gpt.init_params()

    def __call__(self, ids):
        return self.g.gpt2(ids, **self.params, n_head=gpt.N_HEAD)


ORIGINALS = {"len": builtins.len, "range": builtins.range, "zeros": np.zeros,
             "arange": np.arange, "array": np.array}


def assert_nothing_routed():
    assert builtins.len is ORIGINALS["len"] and builtins.range is ORIGINALS["range"]
    assert np.zeros is ORIGINALS["zeros"] and np.arange is ORIGINALS["arange"]
    assert np.array is ORIGINALS["array"]
    assert helpers.zeros is ORIGINALS["zeros"] and helpers.arange is ORIGINALS["arange"]
    assert blocks.tri is np.tri and blocks.zeros is ORIGINALS["zeros"]
    assert not hasattr(helpers.zeros, "symshape_routes")


# --------------------------------------------------------------------------- GPT-2
def test_gpt2_through_a_module_attribute_exports_with_a_dynamic_sequence():
    run = GPTRunner()
    ids = RNG.integers(0, gpt.VOCAB, 7)
    ep = ss.export(run, (ids,), dynamic_shapes={"ids": (Dim("seq", max=gpt.N_CTX),)})
    assert str(ep.input_shapes["ids"]) == "(s0,)"
    m, c = ep.module(), ep.compile()
    for n in (2, 3, 5, 13, 32):
        ids = RNG.integers(0, gpt.VOCAB, n)
        want = run(ids)
        np.testing.assert_allclose(m(ids), want, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(c(ids), want, rtol=1e-10, atol=1e-10)
    assert_nothing_routed()


def test_gpt2_as_a_plain_module_function_with_its_params():
    params = gpt.init_params(seed=9)

    def forward(ids):
        return gpt.gpt2(ids, **params, n_head=gpt.N_HEAD)
    ep = ss.export(forward, (RNG.integers(0, gpt.VOCAB, 4),),
                   dynamic_shapes={"ids": (Dim("seq", max=gpt.N_CTX),)})
    for n in (3, 11):
        ids = RNG.integers(0, gpt.VOCAB, n)
        np.testing.assert_allclose(ep.module()(ids), forward(ids), rtol=1e-10, atol=1e-10)


# --------------------------------------------------------------------------- ways in
def export_dynamic(f, x):
    """Export with a DYNAMIC first axis (a specialisation would be a violation) and compare
    with eager on other sizes."""
    ep = ss.export(f, (x,), dynamic_shapes={"x": (DYN, None)})
    assert not isinstance(ep.input_shapes["x"][0], int)
    for n in (2, 5, 9):
        y = RNG.standard_normal((n, x.shape[1]))
        np.testing.assert_array_equal(ep.module()(y), f(y))
    assert_nothing_routed()
    return ep


X = RNG.standard_normal((4, 3))


def test_a_function_of_another_module_reached_as_a_module_attribute():
    export_dynamic(lambda x: helpers.column_of_sizes(x, 2) + x.sum(), X)


def test_a_method_of_an_object_of_another_module():
    p = helpers.Padder(3)
    export_dynamic(lambda x: p.pad(x) * 2.0, X)
    export_dynamic(p, X)                         # the object itself is the function


def test_a_decorated_function_of_another_module():
    export_dynamic(helpers.decorated, X)
    export_dynamic(lambda x: helpers.decorated(x) + 1.0, X)


def test_functools_partial_as_the_function_and_as_a_value():
    export_dynamic(functools.partial(helpers.scaled, k=2), X)
    export_dynamic(helpers.scale_by_three, X)
    export_dynamic(lambda x: helpers.scale_by_three(x) - 1.0, X)


def test_a_module_reached_only_at_run_time():
    name = helpers.__name__

    def f(x):
        # invisible before the call (found in sys.modules by a string): len, range and
        # np.* are routed everywhere; names it imported from NumPy from its first op on
        return getattr(sys.modules[name], "late")(x) + len(x)
    export_dynamic(f, X)


def test_len_and_range_stay_builtin_semantics_for_other_values():
    def f(x):
        n = len([1, 2, 3]) + len("ab")
        r = range(3)
        assert isinstance(r, range) and issubclass(type(r), range) and len(r) == 3
        total = sum(i for i in range(len(x[0])))
        return x[range(len(x))] * (n + total + sum(helpers.rows(x[:2])))
    export_dynamic(f, X)


# --------------------------------------------------------------------------- clean up
def test_routes_are_removed_when_the_trace_raises():
    def bad(x):
        helpers.column_of_sizes(x, 2)
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):
        ss.export(bad, (X,), dynamic_shapes={"x": (DYN, None)})
    assert_nothing_routed()


def test_concurrent_traces_in_threads_keep_each_others_routes():
    inside = threading.Barrier(4, timeout=30)
    errors, results = [], {}

    def f(x):
        out = helpers.column_of_sizes(x, 2)
        inside.wait()                # every thread is tracing here at once
        return out + helpers.Padder(1).pad(x)[:-1, :1] + np.zeros((len(x), 1))

    def work(i):
        try:
            ep = ss.export(f, (RNG.standard_normal((3 + i, 2)),),
                           dynamic_shapes={"x": (DYN, None)})
            results[i] = ep
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
            inside.abort()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    inside.wait()                    # an eager caller while three traces run
    assert len([1, 2]) == 2 and list(range(2)) == [0, 1]
    np.testing.assert_array_equal(np.zeros((2, 2)), np.zeros((2, 2)))
    for t in threads:
        t.join()
    assert not errors, errors
    y = RNG.standard_normal((6, 2))
    for ep in results.values():
        np.testing.assert_array_equal(ep.module()(y), eager_f(y))
    assert_nothing_routed()


def eager_f(x):
    return helpers.column_of_sizes(x, 2) + helpers.Padder(1).pad(x)[:-1, :1] + \
        np.zeros((len(x), 1))


def test_routers_are_inert_outside_a_trace_and_keep_numpy_identity():
    ss.export(lambda x: np.zeros((len(x), 2)) + x[:, :2], (X,), dynamic_shapes={"x": (DYN, None)})
    assert_nothing_routed()
    assert np.zeros((2,)).tolist() == [0.0, 0.0]
