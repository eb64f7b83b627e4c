"""A write to state inside an ``ss.cond`` branch: both branches are traced and the one that
runs is chosen at run time, so the write cannot be replayed; export refuses it naming the
line (it used to happen whichever branch ran, or ``module()`` raised a raw ``KeyError``),
and ``ss.compile`` runs the one branch the predicate picks, as eager Python does."""
import warnings

import numpy as np
import pytest

import symshape as ss


class Logs:
    def __init__(self):
        self.log = []

    def __call__(self, x):
        def positive(a):
            self.log.append(1)
            return a + 1
        return ss.cond(x.sum() > 0, positive, lambda a: a - 1, (x,))


class Writes:
    def __init__(self):
        self.k = np.zeros(3)

    def __call__(self, x):
        def positive(a):
            self.k[:] = a
            return a + 1
        return ss.cond(x.sum() > 0, positive, lambda a: a - 1, (x,))


@pytest.mark.parametrize("cls, match", [
    (Logs, r"a branch writes Python state \(append on self\.log\) at .*"
           r"test_state_cond_branches\.py:\d+"),
    (Writes, r"a branch writes the state array self\.k at .*test_state_cond_branches\.py")])
def test_export_refuses_a_state_write_in_a_branch(cls, match):
    m = cls()
    with pytest.raises(ss.UserError, match=match):
        ss.export(m, (np.ones(3),))
    assert getattr(m, "log", []) == [] and not getattr(m, "k", np.zeros(3)).any()


@pytest.mark.parametrize("cls", [Logs, Writes])
def test_compile_runs_the_branch_that_is_taken(cls):
    m, e = cls(), cls()
    cf = ss.compile(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in (1.0, -1.0, 1.0, -2.0):
            x = np.full(3, s)
            assert np.array_equal(cf(x), e(x))
    assert vars(m).keys() == vars(e).keys()
    for k in vars(e):
        assert np.array_equal(np.asarray(getattr(m, k)), np.asarray(getattr(e, k)))
