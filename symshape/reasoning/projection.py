"""Exact bounds: the projection of a set of facts onto one expression.

Interval arithmetic (``ranges.bound``) is sound but loses whatever the recorded facts say
(``(n + 1) // 2 >= 2`` leaves ``n`` at ``[2, int_oo]``).  ``project`` computes the tightest
range of an expression over every integer point that satisfies the symbol ranges and the
facts, with Z3's optimiser:

  * the minimum ``v`` Z3 reports is *checked* before it is used (no point below ``v`` is
    feasible: an unsat answer), and it is attained by the optimiser's model, so each
    bound is exact and never wrong;
  * any step that does not finish within its budget (``BUDGET_S`` of CPU time per
    decision, and a resource limit per solver call so that answers repeat) leaves the
    interval bound on that side, which is sound, and says so in the ``symshape.dynamic``
    debug log.

``Budget`` carries the remaining time of one decision so that no single question about
sizes takes more than half a second, however many solver calls it needs.
"""
from __future__ import annotations

import logging
from typing import Iterable, Mapping, Optional

from symshape.algebra.expr import IntLike, Sym, ceildiv
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.logs import dynamic_log
from symshape.algebra.ranges import ValueRange, bound
from symshape.reasoning.z3bridge import BUDGET_S, Budget, Encoder, configure, serialized, z3mod
from symshape.rules import rule


def _fallback(what: str, goal, side: str) -> None:
    if dynamic_log.isEnabledFor(logging.DEBUG):
        dynamic_log.debug("bounds: %s bound of %s not proven within %.1f s (%s); keeping the "
                          "interval bound", side, goal, BUDGET_S, what)


@serialized
@rule("project.exact")
def project(goal: IntLike, facts: Iterable, ranges: Mapping[Sym, ValueRange],
            budget: Optional[Budget] = None,
            hint: Optional[ValueRange] = None) -> ValueRange:
    """The tightest range of ``goal`` over the integer points that satisfy ``ranges`` (for
    every symbol involved) and every condition in ``facts``.  Never narrower than the
    truth; equal to it whenever the solver finishes within the budget (an end beyond
    2**40 in magnitude is reported as infinite).  ``hint``, when given, must be a sound
    range of ``goal`` under the facts: an end of it that is attained costs one solver call
    instead of a search.  Range layer 6, the exact primitive (``symshape.contract.
    exact_ranges``): the contract's published ranges come from it, through layer 7."""
    interval = bound(goal, ranges.__getitem__)
    if hint is not None:
        interval = narrowed_by(interval, hint)
    return projected(goal, facts, ranges, budget, interval)


def projected(goal: IntLike, facts: Iterable, ranges: Mapping[Sym, ValueRange],
              budget: Optional[Budget], interval: ValueRange) -> ValueRange:
    """``project`` given the sound ``interval`` of ``goal`` (exact for an int and for one
    linear term without facts): the solver narrows it to the attained ends."""
    if type(goal) is int:
        return interval
    facts = list(facts)
    if not facts and goal.is_linear() and len(goal.terms) == 1:
        return interval                      # one symbol, no facts: its range is exact
    solver, best = _feasible(goal, facts, ranges, budget)
    if best is None or best is False:        # unknown, or the facts admit no point
        _fallback("no feasible point found", goal, "either")
        return interval
    lo, hi = interval.lower, interval.upper
    for minimize in (True, False):
        got = _extreme(solver, best, lo if minimize else hi, minimize)
        if got is None:
            _fallback("unknown", goal, "lower" if minimize else "upper")
        elif minimize:
            lo = max(lo, got)
        else:
            hi = min(hi, got)
    return ValueRange(lo, hi) if lo <= hi else interval


def narrowed_by(interval: ValueRange, hint: ValueRange) -> ValueRange:
    """``interval`` met with the caller's sound ``hint``; ``interval`` itself when they do
    not meet (then the facts admit no point)."""
    if hint.lower <= interval.upper and interval.lower <= hint.upper:
        return interval.intersect(hint)
    return interval


# An end further than this from a feasible value is reported as infinite.
FAR = 1 << 40
CHECK_RLIMIT = 300_000


class _Feasible:
    """One incremental solver over the hypotheses: ``value(extra)`` is the target's value
    at a point satisfying them and ``extra`` (False: none exists; None: unknown)."""

    def __init__(self, z3, hyp, target, budget: Budget) -> None:
        self.z3, self.target, self.budget = z3, target, budget
        self.solver = z3.Solver()
        self.solver.add(*hyp)

    def value(self, extra):
        z3 = self.z3
        if not configure(self.solver, self.budget, CHECK_RLIMIT):
            return None
        self.solver.push()
        try:
            if extra is not None:
                self.solver.add(extra)
            r = self.solver.check()
            if r == z3.sat:
                return self.solver.model().eval(self.target, model_completion=True).as_long()
            return False if r == z3.unsat else None
        finally:
            self.solver.pop()


def _extreme(solver: _Feasible, best: int, end, minimize: bool):
    """The least (greatest) feasible value of the target, bisecting between the feasible
    ``best`` and the sound interval end ``end``; an infinite end is first replaced by a
    proven one 2**40 away, or kept when values that far are feasible."""
    t = solver.target
    if is_inf(end):
        probe = best - FAR if minimize else best + FAR
        got = solver.value(t <= probe if minimize else t >= probe)
        if got is None:
            return None
        if got is not False:
            return NEG_INT_OO if minimize else INT_OO
        end = probe + 1 if minimize else probe - 1
    elif best != end:
        # a sound end is often attained (the caller's hint is tight): one call settles it
        got = solver.value(t <= end if minimize else t >= end)
        if got is None:
            return None
        if got is not False:
            return got                       # == end, the end being sound
        end = end + 1 if minimize else end - 1
    # invariant: best is feasible; nothing beyond `end` is (proofs induct on the step)
    while best != end:
        step = bisect(solver, best, end, minimize)
        if step is None:
            return None
        best, end = step
    return best


def bisect(solver: _Feasible, best: int, end: int, minimize: bool):
    """One step of ``_extreme``'s search between the feasible ``best`` and ``end``
    (nothing beyond it feasible): the new (best, end), None when the solver does not
    settle it."""
    t = solver.target
    mid = (best + end) // 2 if minimize else ceildiv(best + end, 2)
    got = solver.value(t <= mid if minimize else t >= mid)
    if got is None:
        return None
    if got is False:
        return best, (mid + 1 if minimize else mid - 1)
    return got, end


@serialized
def implied(goal, facts: Iterable, ranges: Mapping[Sym, ValueRange],
            budget: Optional[Budget] = None) -> bool:
    """Whether the condition ``goal`` holds at every integer point that satisfies
    ``ranges`` and ``facts`` (proved: the solver finds no point where it fails).  False
    when it does not follow, or when the solver does not finish within the budget (said in
    the debug log): a caller only ever drops what is proved redundant."""
    z3 = z3mod()
    budget = budget or Budget()
    enc = Encoder()
    hyp = [enc.cond(f) for f in facts]
    negated = z3.Not(enc.cond(goal))
    for s in list(enc.vars):
        hyp += enc.range(s, ranges[s])
    solver = z3.Solver()
    if not configure(solver, budget, CHECK_RLIMIT):
        _fallback("no time left", goal, "implication")
        return False
    solver.add(*hyp, *enc.side, negated)
    r = solver.check()
    if r == z3.unknown:
        _fallback("unknown", goal, "implication")
    return r == z3.unsat



def _feasible(goal: IntLike, facts, ranges: Mapping[Sym, ValueRange],
              budget: Optional[Budget]):
    """The solver over ``facts`` and the ranges of every symbol involved, searching values
    of ``goal``, and a first value of it: an int, ``False`` (no point satisfies them) or
    ``None`` (the solver did not settle it within the budget)."""
    enc = Encoder()
    hyp = [enc.cond(f) for f in facts]
    target = enc.expr(goal)
    for s in list(enc.vars):
        hyp += enc.range(s, ranges[s])
    hyp += enc.side
    solver = _Feasible(z3mod(), hyp, target, budget or Budget())
    return solver, solver.value(None)


@serialized
def extreme(goal: IntLike, facts: Iterable, ranges: Mapping[Sym, ValueRange],
            minimize: bool, budget: Optional[Budget] = None):
    """The least (``minimize``) or greatest value of ``goal`` over the integer points that
    satisfy ``ranges`` and ``facts``: an int, ``-int_oo`` / ``int_oo`` when unbounded,
    ``False`` when no point satisfies them, ``None`` when the solver does not settle it
    within the budget (said in the debug log)."""
    solver, best = _feasible(goal, facts, ranges, budget)
    if best is None or best is False:
        if best is None:
            _fallback("unknown", goal, "extreme")
        return best
    vr = bound(goal, ranges.__getitem__)
    got = _extreme(solver, best, vr.lower if minimize else vr.upper, minimize)
    if got is None:
        _fallback("unknown", goal, "lower" if minimize else "upper")
    return got
