"""Proofs of the solver's dispatch (``solver.learn``) and of ``solver.refresh_facts``,
on a grammar of guards (``decide_rules.conditions``: every ``a*x + b*t + c <op> 0`` with
``t`` among ``y``, ``x // 2``, ``x % 3``, ``Min``, ``Max``, ``x*y``) in environments with a
finite and an infinite range, without and with a recorded guard.

Each claim is about the environment the code leaves behind (its replacements, root ranges
and facts, read back by ``solver_rules._admitted``), over all integers: learning keeps
exactly the solutions of the old environment where the guard holds; refreshing the facts
after a range narrows or a symbol is replaced keeps exactly the old environment's points
inside the new range.
"""
from __future__ import annotations

from types import SimpleNamespace

import z3

from symshape.reasoning import solver
from symshape.algebra.ranges import ValueRange

from . import samples, proves
from .code import Symbols, prove_code
from .decide_rules import _graded
from .pyint import Py, require
from .solver_rules import _admitted, _in_ranges


def _snapshot(env) -> SimpleNamespace:
    """The parts of ``env`` that say what it admits, copied (the solver mutates them)."""
    return SimpleNamespace(ranges=dict(env.ranges), replacements=dict(env.replacements),
                           facts=list(env.facts))


def _kept(before, env, syms, extra, what: str) -> None:
    """``env`` (after the step) admits exactly ``before``'s points where ``extra(P, zs)``
    holds, for the original symbols ``syms``, over all integers."""
    P_ = Py()
    zs = Symbols({s: z3.Int("orig_" + s.name) for s in syms})
    want = z3.And(_admitted(before, syms, zs, P_), extra(P_, zs))
    prove_code(lambda v: v == want, [_admitted(env, syms, zs, P_)],
               _in_ranges(before, zs, syms), P=P_, what=what)


@proves("solve.refresh_facts", over=samples("graded environments"))
def solve_refresh_facts():
    """After a guard of the grammar is recorded (every thirteenth true at the example), one
    symbol (alternately the first and the second) has its range narrowed to a window
    around its example, or is replaced by its example value (every third case): the
    refreshed facts, ranges and replacements admit exactly the old points in the window."""
    done = 0
    for env, c, truth in _graded(13):
        if not truth:
            continue
        syms = list(env.ranges)[:2]
        env.add_guard(c, None)
        t = syms[done % 2]
        if t in env.replacements:
            continue
        hint = env.hint_of(t.expr)
        lo, hi = (hint, hint) if done % 3 == 0 else (hint - 1, hint + 2)
        before = _snapshot(env)
        if lo == hi:
            solver.replace(env, t, lo)
        else:
            solver.refine(env, t, ValueRange(lo, hi))
        _kept(before, env, syms, lambda P_, zs, t=t, lo=lo, hi=hi: z3.And(zs[t] >= lo,
                                                                          zs[t] <= hi),
              "refresh after %s in [%d, %d] under %s" % (t.name, lo, hi, c))
        done += 1
    require(done >= 15, "only %d refreshes", done)
