"""Proofs of the equation solver's steps (``symshape/reasoning/solver.py``) for every input
of their domain: the step's own code run with symbolic coefficients, constants and range
ends (``proofs/symexec.py``: ``Ext`` values, finite or infinite, branching through
``Explorer`` along every feasible path).

Each step turns a guard into a replacement (``s -> value``), a narrower range or a fact.
The step's claim is that the guard's solution set is kept exactly, for every coefficient,
constant and prior range.  A step hands its result to the environment through ``replace``,
``refine`` or ``create_symbol``; these calls are captured (the code's output) rather than
run, since each is a rule of its own with its own proof (``solve.replacement_range``,
``solve.refresh_facts``).  The hypotheses are exactly the step's preconditions as its
caller guarantees them: the guard holds at the example values (a point of the ranges).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, List

import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG
from symshape.algebra.ranges import ValueRange
from symshape.reasoning import solver

from . import every, proves
from .code import prove_code
from .pyint import require
from .symexec import Ext, Explorer, interval, inside, patched, raise_on_paths, to_pair


@contextmanager
def stubbed(**names):
    """``solver.<name>`` replaced by the given stand-ins while the block runs."""
    saved = {n: getattr(solver, n) for n in names}
    for n, f in names.items():
        setattr(solver, n, f)
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(solver, n, f)


def solver_paths(hyps: List, fn: Callable[[], object], what: str, **stubs):
    """``fn()`` (a solver step on ``Ext`` values) along every feasible path under ``hyps``,
    the solver module seeing the symbolic infinities (its ``INT_OO``, ``NEG_INT_OO`` and
    ``is_inf``) and ``stubs`` in place of its callees; a path that raises fails."""
    ex = Explorer(hyps)
    with patched(ex):
        with stubbed(INT_OO=RG.INT_OO, NEG_INT_OO=RG.NEG_INT_OO, is_inf=RG.is_inf, **stubs):
            paths = ex.paths(fn)
    raise_on_paths(paths, what)
    return ex, paths


def ends(r: ValueRange) -> list:
    """A range the code built, as four Z3 terms (lower s, v, upper s, v)."""
    return [*to_pair(r.lower), *to_pair(r.upper)]


def within(t, i: int, x):
    """``x`` inside the range whose ends are ``t[i:i + 4]``."""
    return inside(t[i], t[i + 1], t[i + 2], t[i + 3], x)


def iv_inside(lo: Ext, hi: Ext, x):
    """``x`` inside the symbolic interval ``[lo, hi]``."""
    return inside(lo.s, lo.v, hi.s, hi.v, x)


# ---------------------------------------------------------------------------- constrain
class _Env:
    """The environment a solver step reads: the ranges (and the infos of its symbols)."""

    def __init__(self, ranges, infos=None) -> None:
        self.ranges = ranges
        self.infos = infos or {}


@proves("solve.constrain_linear", over=every(
    "every value a*t + k (a != 0 and k symbolic), every range [lo, hi] of the replaced "
    "symbol and every range of t (ends symbolic, finite or infinite), bound() any sound "
    "range of the value (as the range proofs prove it), along every path of constrain"))
def solve_constrain_linear():
    """``constrain(env, a*t + k, [lo, hi])`` on symbolic ``a``, ``k``, ranges: where it
    narrows ``t`` (``refine``, captured), the range it gives holds exactly the ``t`` with
    ``a*t + k`` in ``[lo, hi]``; where it returns without narrowing, every ``t`` in
    ``t``'s range already has its value in ``[lo, hi]``.  The value's one term is a
    symbol with a coefficient (the linear case, the rule's domain: the code reads the
    value through ``linear_coeffs`` and its constant).  Precondition: some ``t`` in its
    range has its value in ``[lo, hi]`` (the example)."""
    t_sym = E.Sym(975)
    a, k, t, x = z3.Ints("a k t x")
    vlo, vhi, vwf, _, _ = interval("v")
    tlo, thi, twf, _, _ = interval("t")
    blo, bhi, bwf, _, _ = interval("b")
    val = lambda p: a * p + k            # noqa: E731
    hyps = vwf + twf + bwf + [a != 0, iv_inside(tlo, thi, x), iv_inside(vlo, vhi, val(x)),
                              # bound() is sound: it holds the value of every t in range
                              z3.Implies(iv_inside(tlo, thi, t), iv_inside(blo, bhi, val(t)))]
    got: list = []

    def run():
        del got[:]
        env = _Env({t_sym: ValueRange(tlo, thi)})
        value = E.Expr({(t_sym,): Ext(0, a)}, Ext(0, k))
        solver.constrain(env, value, ValueRange(vlo, vhi))
        return list(got)
    ex, paths = solver_paths(
        hyps, run, "constrain",
        bound=lambda e, rng: ValueRange(blo, bhi),
        refine=lambda env, s, vr: got.append((s, vr)))
    impl, cases, kept = [], [], []
    for pc, out in paths:
        if out:
            require(len(out) == 1 and out[0][0] is t_sym, "constrain refined %s", out)
            cases.append((pc, len(impl)))
            impl += ends(out[0][1])
        else:
            kept.append(pc)
    require(cases and kept, "constrain: narrowing on %d paths, none on %d", len(cases),
            len(kept))
    inv = iv_inside(vlo, vhi, val(t))

    def claim(*r):
        out = [z3.Implies(z3.And(*pc), inv == within(r, i, t)) for pc, i in cases]
        out += [z3.Implies(z3.And(*pc), z3.Implies(iv_inside(tlo, thi, t), inv))
                for pc in kept]
        return z3.And(*out)
    prove_code(claim, impl, hyps, P=ex.P,
               what="constrain(a*t + k, [lo, hi]) on symbolic a, k and ranges (%d paths)"
               % len(paths))
