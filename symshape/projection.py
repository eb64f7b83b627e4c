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
import time
from typing import Iterable, Mapping, Optional

from .expr import IntLike, Sym
from .infinity import INT_OO, NEG_INT_OO
from .logs import dynamic_log
from .ranges import ValueRange, bound

# Ceiling of one decision (a projection or an implication): CPU seconds of the calling
# thread, so that a loaded machine (which slows the wall clock, not the work) does not
# change any answer.
BUDGET_S = 0.5
# Deterministic effort limit of one solver call (about a quarter of the budget).
RLIMIT = 1_000_000
# Wall-clock backstop of one call, as a multiple of the CPU time left: only a solver that
# stalls without spending its resource limit ever reaches it.
WALL_FACTOR = 4


class Budget:
    """The CPU time left for one decision; each solver call gets at most what remains."""

    __slots__ = ("deadline",)

    def __init__(self, seconds: float = BUDGET_S) -> None:
        self.deadline = time.thread_time() + seconds

    def remaining_ms(self) -> int:
        return max(0, int((self.deadline - time.thread_time()) * 1000))

    @property
    def spent(self) -> bool:
        return self.remaining_ms() <= 0


def configure(solver, budget: Budget, rlimit: int = RLIMIT) -> bool:
    """Give a Z3 solver / optimiser the budget's limits; False when nothing is left."""
    ms = budget.remaining_ms()
    if ms <= 0:
        return False
    solver.set("timeout", ms * WALL_FACTOR)
    solver.set("rlimit", rlimit)
    return True


def _fallback(what: str, goal, side: str) -> None:
    if dynamic_log.isEnabledFor(logging.DEBUG):
        dynamic_log.debug("bounds: %s bound of %s not proven within %.1f s (%s); keeping the "
                          "interval bound", side, goal, BUDGET_S, what)


def project(goal: IntLike, facts: Iterable, ranges: Mapping[Sym, ValueRange],
            budget: Optional[Budget] = None) -> ValueRange:
    """The tightest range of ``goal`` over the integer points that satisfy ``ranges`` (for
    every symbol involved) and every condition in ``facts``.  Never narrower than the
    truth; equal to it whenever the solver finishes within the budget."""
    interval = bound(goal, ranges.__getitem__)
    if type(goal) is int:
        return interval
    facts = list(facts)
    if not facts and goal.is_linear() and len(goal.terms) == 1:
        return interval                      # one symbol, no facts: its range is exact
    from .z3bridge import Encoder, z3mod
    z3 = z3mod()
    budget = budget or Budget()
    enc = Encoder()
    hyp = [enc.cond(f) for f in facts]
    target = enc.expr(goal)
    for s in list(enc.vars):
        hyp += enc.range(s, ranges[s])
    hyp += enc.side
    lo, hi = interval.lower, interval.upper
    for side in ("lower", "upper"):
        if budget.spent:
            _fallback("budget spent", goal, side)
            break
        got = _optimum(z3, hyp, target, side == "lower", budget)
        if got is None:
            _fallback("unknown", goal, side)
            continue
        if side == "lower" and got > lo:
            lo = got
        elif side == "upper" and got < hi:
            hi = got
    if lo > hi:                              # facts unsatisfiable: keep the sound interval
        return interval
    return ValueRange(lo, hi)


def _optimum(z3, hyp, target, minimize: bool, budget: Budget):
    """The proven minimum (maximum) of ``target``: an int, ``-int_oo`` / ``int_oo`` when
    the optimiser finds it unbounded, or None when not settled within the budget."""
    opt = z3.Optimize()
    if not configure(opt, budget):
        return None
    opt.add(*hyp)
    handle = opt.minimize(target) if minimize else opt.maximize(target)
    try:
        if opt.check() != z3.sat:
            return None
        value = handle.value()
    except z3.Z3Exception:
        return None
    if not z3.is_int_value(value):
        text = str(value)
        if minimize and text.startswith("-1*oo"):
            return NEG_INT_OO
        if not minimize and text == "oo":
            return INT_OO
        return None
    v = value.as_long()
    # check the optimum before trusting it: nothing beyond it is feasible
    check = z3.Solver()
    if not configure(check, budget):
        return None
    check.add(*hyp)
    check.add(target < v if minimize else target > v)
    if check.check() != z3.unsat:
        return None
    return v
