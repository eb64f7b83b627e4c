"""Tests that kill the surviving mutants of ``symshape/reasoning/projection.py`` (the mutation gate,
``python -m proofs.mutation --only projection``; docs/mutation_report.md): the exact range
of an expression under facts, compared with brute force over small boxes; the far ends;
the caller's hint; what is left when the time budget is spent (a fake CPU clock, so
nothing depends on the machine's speed)."""
import itertools
import logging
import random

import pytest
from test_mutation_kills_z3bridge import clock  # noqa: F401  (the fake CPU clock fixture)

from symshape.reasoning import projection

from symshape.reasoning import z3bridge
from symshape.algebra import relations as R
from symshape.algebra.expr import Sym, evaluate, floordiv, mod, smax, smin
from symshape.algebra.infinity import INT_OO, NEG_INT_OO
from symshape.algebra.ranges import ValueRange, bound

A, B, C = (Sym(i) for i in range(3))
a, b, c = A.expr, B.expr, C.expr

GOALS = [a - b, a + 2 * b - c, a * b - c, floordiv(a + b, 3) - c, mod(a * b, 5),
         smin(a, b) - smax(b, c), 3 - a - b, b - a]
FACTS = [R.le(a, b), R.ge(a + b, 7), R.ne(a, c), R.eq(mod(a + c, 3), 1),
         R.le(2 * b, c + 1), R.le(a * c, 12), R.ge(b, c), R.eq(a + b, 12)]


def _box(ranges):
    syms = sorted(ranges, key=lambda s: s.index)
    for vals in itertools.product(*(range(ranges[s].lower, ranges[s].upper + 1)
                                     for s in syms)):
        yield dict(zip(syms, vals))


def _truth(goal, facts, ranges):
    """[min, max] of goal over the box points that satisfy the facts; None if none."""
    vals = [evaluate(goal, p) for p in _box(ranges)
            if all(f.holds(evaluate(f.expr, p)) for f in facts)]
    return ValueRange(min(vals), max(vals)) if vals else None


def _cases(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        ranges = {s: ValueRange(lo, lo + rng.randint(0, 6))
                  for s, lo in zip((A, B, C), (rng.randint(0, 3) for _ in range(3)))}
        yield rng.choice(GOALS), rng.sample(FACTS, rng.randint(1, 3)), ranges


@pytest.mark.parametrize("goal, facts, ranges", list(_cases(40, 34)))
def test_the_projection_is_the_brute_force_range(goal, facts, ranges):
    # exact when feasible (both ends attained, nothing beyond them); the interval bound
    # when no point satisfies the facts (mutants: a value 0 taken for "infeasible", the
    # feasibility tests inverted, the found ends dropped)
    got = projection.project(goal, facts, ranges)
    truth = _truth(goal, facts, ranges)
    assert got == (truth if truth is not None else bound(goal, ranges.__getitem__))
    if truth is not None:
        assert projection.extreme(goal, facts, ranges, True) == truth.lower
        assert projection.extreme(goal, facts, ranges, False) == truth.upper
    else:
        assert projection.extreme(goal, facts, ranges, True) is False


def test_a_minimum_of_zero_is_a_value_not_a_missing_point():
    ranges = {A: ValueRange(0, 5), B: ValueRange(0, 5)}
    assert projection.project(a - b, [R.ge(a, b)], ranges) == ValueRange(0, 5)
    assert projection.project(b - a, [R.ge(a, b)], ranges) == ValueRange(-5, 0)


def test_an_infinite_interval_end_is_searched_when_the_facts_bound_it():
    # a in [0, oo) and a <= b <= 10: [0, 10], not [0, oo) (mutant: `t < probe`)
    ranges = {A: ValueRange(0, INT_OO), B: ValueRange(0, 10)}
    assert projection.project(a, [R.le(a, b)], ranges) == ValueRange(0, 10)
    assert projection.project(-a, [R.le(a, b)], ranges) == ValueRange(-10, 0)
    assert projection.project(a - b, [R.le(b, a)], ranges) == ValueRange(0, INT_OO)
    assert projection.extreme(a - b, [R.le(b, a)], ranges, False) == INT_OO
    assert projection.extreme(b - a, [R.le(b, a)], ranges, True) == NEG_INT_OO


def test_a_far_end_is_the_value_or_infinite_never_short_of_it():
    # the feasible values are 0 and 2**40: the upper end is 2**40 or (documented: an end
    # that far from a found value) int_oo, never 0 (mutant: `t > probe`)
    far = projection.FAR
    ranges = {A: ValueRange(0, INT_OO)}
    got = projection.project(a + 0 * b, [R.le(a, far), R.eq(mod(a, far), 0)],
                             {**ranges, B: ValueRange(0, 0)})
    assert got.lower == 0 and got.upper in (far, INT_OO)
    got = projection.project(-a, [R.le(a, far), R.eq(mod(a, far), 0)], ranges)
    assert got.upper == 0 and got.lower in (-far, NEG_INT_OO)


def _spent(clock):
    budget = z3bridge.Budget(0.5)
    clock.now += 1.0
    return budget


def test_with_no_time_left_the_hint_still_narrows_the_interval(clock, caplog):
    # the caller's hint is sound: intersected with the interval before any solver call,
    # and kept when the solver has no time (mutants: the overlap test changed); the
    # fallback says so in the debug log (mutant: the log test inverted)
    ranges = {A: ValueRange(0, 20), B: ValueRange(0, 20)}
    facts = [R.le(a, b), R.le(b, 6)]
    with caplog.at_level(logging.DEBUG, logger="symshape.dynamic"):
        got = projection.project(a + b, facts, ranges, budget=_spent(clock),
                                 hint=ValueRange(0, 12))
    assert got == ValueRange(0, 12)
    assert any("not proven within" in r.getMessage() for r in caplog.records)
    # a hint that misses the interval is ignored (it cannot be sound)
    got = projection.project(a + b, facts, ranges, budget=_spent(clock),
                             hint=ValueRange(50, 60))
    assert got == ValueRange(0, 40)
    assert projection.project(a + b, facts, ranges, hint=ValueRange(0, 12)) == \
        ValueRange(0, 12)
    assert projection.project(a + b, facts, ranges, hint=ValueRange(0, 30)) == \
        ValueRange(0, 12)


def test_one_symbol_without_facts_asks_no_solver(monkeypatch):
    # its range is exact (mutants: the short cut taken for no goal or for sums only)
    calls = []
    real = projection._feasible
    monkeypatch.setattr(projection, "_feasible",
                        lambda *args: calls.append(args) or real(*args))
    ranges = {A: ValueRange(2, 9), B: ValueRange(0, 4)}
    assert projection.project(3 * a, [], ranges) == ValueRange(6, 27)
    assert calls == []
    assert projection.project(a * a - a * b, [], ranges) == ValueRange(-4, 81)
    assert len(calls) == 1


def test_implied_is_true_exactly_when_no_point_breaks_the_goal():
    # the solver's unsat answer compared by value (mutant: `r is z3.unsat`)
    ranges = {A: ValueRange(0, 10), B: ValueRange(0, 10)}
    assert projection.implied(R.le(a, 10), [R.le(a, b)], ranges) is True
    assert projection.implied(R.le(a, 9), [R.le(a, b), R.le(b, 9)], ranges) is True
    assert projection.implied(R.le(a, 8), [R.le(a, b), R.le(b, 9)], ranges) is False


def test_implied_with_no_time_left_proves_nothing(clock):
    ranges = {A: ValueRange(0, 10)}
    assert projection.implied(R.le(a, 10), [], ranges, budget=_spent(clock)) is False


def _two_values():
    """A search over a target whose feasible values are 0 and 2**40 (``_extreme`` is
    given the first value found by its caller)."""
    z3 = z3bridge.z3mod()
    t = z3.Int("t")
    return projection._Feasible(z3, [z3.Or(t == 0, t == projection.FAR)], t,
                                z3bridge.Budget())


def test_the_far_probe_reads_a_value_of_zero_as_a_point():
    # from 2**40 the probe 2**40 below finds t = 0: values that far are feasible, so the
    # lower end is -int_oo, never 2**40 (mutant: `got != False`, which 0 equals); from 0
    # the probe t >= 2**40 finds 2**40: the upper end is int_oo, never 0 (mutant:
    # `t > probe`)
    far = projection.FAR
    assert projection._extreme(_two_values(), far, NEG_INT_OO, True) == NEG_INT_OO
    assert projection._extreme(_two_values(), 0, INT_OO, False) == INT_OO
    # and where the probe finds nothing, the search is exact
    assert projection._extreme(_two_values(), 0, NEG_INT_OO, True) == 0
    assert projection._extreme(_two_values(), far, INT_OO, False) == far


def test_a_settled_extreme_logs_no_fallback(caplog):
    ranges = {A: ValueRange(0, 10), B: ValueRange(0, 10)}
    with caplog.at_level(logging.DEBUG, logger="symshape.dynamic"):
        assert projection.extreme(a - b, [R.le(a, b)], ranges, True) == -10
        assert projection.project(a - b, [R.le(a, b)], ranges) == ValueRange(-10, 0)
    assert not any("not proven" in r.getMessage() for r in caplog.records)
