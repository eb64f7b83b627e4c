"""The JIT is never much slower than eager (issue 39): a function compiled with graph
breaks is timed against eager over its first calls and runs eagerly when it measured
slower by the margin, saying so in ``cf.report()``.  The clock is scripted
(``codegen/jit_speed.clock``): nothing here depends on wall-clock time."""
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape.codegen import jit_speed
from symshape.codegen.jit_speed import SpeedCheck


def with_break(x):
    y = x * 2
    if y.sum() > 0:                     # data-dependent: a graph break, run eagerly
        y = y + 1
    return y - 3


class Scripted:
    """A clock under which a compiled call costs ``compiled`` and an eager one ``eager``
    seconds (the form of the running call is the one the check chose)."""

    def __init__(self, cf, compiled: float, eager: float) -> None:
        self.cf, self.costs = cf, {"compiled": compiled, "eager": eager}
        self.t, self.started = 0.0, False

    def __call__(self) -> float:
        if self.started:
            self.t += self.costs[self.cf._speed.next_form()]
        self.started = not self.started
        return self.t


def run_calls(cf, n):
    x = np.arange(6.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(n):
            assert np.array_equal(cf(x), with_break(x))


CALLS = 1 + jit_speed.WARMUP + 2 * jit_speed.CALLS      # the first call splits


def test_slower_than_eager_runs_eagerly_and_says_so(monkeypatch):
    cf = ss.compile(with_break)
    monkeypatch.setattr(jit_speed, "clock", Scripted(cf, 100e-6, 10e-6))
    run_calls(cf, CALLS)
    assert cf.mode == "eager"
    text = cf.report()
    assert "measured slower than eager" in text
    assert "compiled with its graph breaks 100.0 us per call, eager 10.0 us" in text
    eager, segment_calls = cf.eager_calls, [s.calls for s in cf.segments]
    run_calls(cf, 3)
    assert cf.eager_calls == eager + 3                     # eager from now on
    assert [s.calls for s in cf.segments] == segment_calls


def test_faster_than_eager_stays_compiled(monkeypatch):
    cf = ss.compile(with_break)
    monkeypatch.setattr(jit_speed, "clock", Scripted(cf, 10e-6, 100e-6))
    run_calls(cf, CALLS)
    assert cf.mode == "split"
    assert "speed: compiled with its graph breaks 10.0 us per call, eager 100.0 us" \
        in cf.report()
    eager = cf.eager_calls
    run_calls(cf, 3)
    assert cf.eager_calls == eager                         # compiled from now on


def test_within_the_margin_stays_compiled(monkeypatch):
    cf = ss.compile(with_break)
    monkeypatch.setattr(jit_speed, "clock", Scripted(cf, 12e-6, 10e-6))
    run_calls(cf, CALLS)
    assert cf.mode == "split"


def test_the_first_calls_are_compiled_and_untimed():
    check = SpeedCheck(calls=2, margin=1.25, warmup=2)
    forms = []
    for cost in (9.0, 9.0, 3.0, 1.0, 3.0, 1.0):
        form = check.next_form()
        forms.append(form)
        assert not check.decided
        check.record(form, cost)
    assert forms == ["compiled", "compiled", "compiled", "eager", "compiled", "eager"]
    assert check.decided and check.slower
    assert check.compiled_cost == 3.0 and check.eager_cost == 1.0


@pytest.mark.parametrize("compiled, slower", [(1.25, False), (1.2501, True)])
def test_the_margin(compiled, slower):
    check = SpeedCheck(calls=1, margin=1.25, warmup=0)
    check.record("compiled", compiled)
    check.record("eager", 1.0)
    assert check.decided and check.slower is slower
