"""Tests that kill the surviving mutants of ``symshape/reasoning/z3bridge.py`` (the mutation gate,
``python -m proofs.mutation --only z3bridge``; docs/mutation_report.md).  The time budget is
read off a fake CPU clock, so nothing here depends on how fast the machine is."""
import types

import pytest

from symshape.algebra import relations as R
from symshape.reasoning import z3bridge
from symshape.algebra.expr import Sym
from symshape.algebra.infinity import int_oo
from symshape.algebra.ranges import ValueRange


@pytest.fixture
def clock(monkeypatch):
    """A CPU clock the test moves by hand: ``clock.now``."""
    fake = types.SimpleNamespace(now=100.0)
    monkeypatch.setattr(z3bridge, "time", types.SimpleNamespace(thread_time=lambda: fake.now))
    return fake


def test_the_budget_counts_down_in_milliseconds_of_cpu_time(clock):
    b = z3bridge.Budget(0.5)
    assert b.remaining_ms() == 500 and not b.spent
    clock.now = 100.25
    assert b.remaining_ms() == 250 and not b.spent
    clock.now = 100.5
    assert b.remaining_ms() == 0 and b.spent
    clock.now = 107.0
    assert b.remaining_ms() == 0 and b.spent
    assert z3bridge.Budget(12).remaining_ms() == 12000


class _Recorder:
    """A solver stand-in that records the limits it is given."""

    def __init__(self):
        self.limits = {}

    def set(self, key, value):
        self.limits[key] = value


def test_configure_gives_each_call_what_is_left_of_the_budget(clock):
    b = z3bridge.Budget(0.5)
    s = _Recorder()
    assert z3bridge.configure(s, b, rlimit=7) is True
    assert s.limits == {"timeout": 500 * z3bridge.WALL_FACTOR, "rlimit": 7}
    clock.now = 100.5
    s = _Recorder()
    assert z3bridge.configure(s, b) is False and s.limits == {}


def test_a_spent_budget_asks_no_solver(clock):
    x = Sym(0)
    b = z3bridge.Budget(0.5)
    clock.now = 101.0
    ranges = {x: ValueRange(2, int_oo)}
    assert z3bridge.implies([], R.ge(x.expr, 2), ranges, budget=b) is None
    assert z3bridge.implies([], R.ge(x.expr, 2), ranges) is True       # a fresh budget


def test_an_and_goal_needs_both_sides_and_an_or_goal_one():
    x = Sym(0)
    ranges = {x: ValueRange(2, int_oo)}
    both = R.combine("and", [R.ge(x.expr * x.expr, 4), R.le(x.expr, 5)])
    either = R.combine("or", [R.ge(x.expr * x.expr, 4), R.le(x.expr, 5)])
    assert z3bridge.implies([], both, ranges) is None
    assert z3bridge.implies([], either, ranges) is True
    # as a premise: an `and` gives both sides, an `or` only one of them
    assert z3bridge.implies([R.combine("and", [R.le(x.expr, 5), R.ge(x.expr, 4)])],
                            R.le(x.expr, 5), ranges) is True
    assert z3bridge.implies([R.combine("or", [R.le(x.expr, 5), R.ge(x.expr, 9)])],
                            R.le(x.expr, 5), ranges) is None
