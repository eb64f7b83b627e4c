"""What eager Python does with the user's objects, done by ``module()``, ``ep.compile()``
and ``ss.compile`` too (issue 39): a state list or dict the function returns is the
user's object itself (identity, after the writes); the writes made before a run-time
check fails are visible after the exception."""
import warnings

import numpy as np
import pytest

import symshape as ss


def runners(f, example):
    """(name, callable) for every way a program runs: module(), ep.compile(), ss.compile."""
    ep = ss.export(f, example)
    yield "module", ep.module()
    yield "compile", ep.compile()
    yield "jit", ss.compile(f)


class Hist:
    def __init__(self):
        self.hist = []
        self.seen = {}
        self.tags = set()

    def log(self, x):
        self.hist.append(x.sum())
        return self.hist

    def both(self, x):
        self.hist.append(x.sum())
        self.seen["last"] = x * 2
        return x + 1, (self.hist, self.seen)

    def fresh(self, x):
        self.hist = [x.sum()]
        return self.hist


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_returned_state_list_is_the_users_list(kind):
    m = Hist()
    run = dict(runners(m.log, (np.ones(3),)))[kind]
    for k in range(3):
        got = run(np.ones(3) * k)
        assert got is m.hist
        assert len(m.hist) == k + 1
    assert [float(v) for v in m.hist] == [0.0, 3.0, 6.0]


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_returned_state_in_a_tuple_keeps_identity(kind):
    m = Hist()
    run = dict(runners(m.both, (np.ones(3),)))[kind]
    for k in range(2):
        y, (h, d) = run(np.ones(3) * k)
        assert h is m.hist and d is m.seen
        assert np.array_equal(y, np.ones(3) * k + 1)
        assert np.array_equal(d["last"], np.ones(3) * 2 * k)
    assert len(m.hist) == 2


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_returned_list_the_program_stored_is_the_stored_one(kind):
    m = Hist()
    run = dict(runners(m.fresh, (np.ones(3),)))[kind]
    for k in range(2):
        got = run(np.ones(3) * k)
        assert got is m.hist and float(got[0]) == 3.0 * k


def test_returned_argument_list_is_the_callers_list():
    def f(x, acc):
        acc.append(x.sum())
        return acc
    for name, run in runners(f, (np.ones(3), [])):
        acc = []
        assert run(np.ones(3), acc) is acc and len(acc) == 1, name
