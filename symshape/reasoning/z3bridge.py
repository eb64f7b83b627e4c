"""Size expressions and relations as Z3 formulas, and an implication check.

Python's ``//`` and ``%`` are encoded explicitly: Z3's integer ``/`` and ``%`` round
differently for negative divisors (``7 / -2`` is -3 in Z3 and ``7 // -2`` is -4 in Python).
For ``q = a // b`` we assert ``b*q <= a < b*q + b`` when ``b > 0`` and
``b*q >= a > b*q + b`` when ``b < 0``.  Queries run with a resource limit, not a wall-clock
timeout, so their answers are repeatable.  z3 is imported on first use only.
"""
from __future__ import annotations

import functools
import threading
import time
from typing import Dict, Iterable, List, Mapping, Optional

from symshape.algebra.expr import IntLike, OpAtom, Sym, fold
from symshape.algebra.infinity import is_inf
from symshape.logs import dynamic_log
from symshape.algebra.relations import EQ, NE, BoolOp
from symshape.rules import rule

RLIMIT = 2_000_000

# Ceiling of one decision (a projection or an implication): CPU seconds of the calling
# thread, so that a loaded machine (which slows the wall clock, not the work) does not
# change any answer.
BUDGET_S = 0.5
# Deterministic effort limit of one solver call (about a quarter of the budget).
CALL_RLIMIT = 1_000_000
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


def configure(solver, budget: Budget, rlimit: int = CALL_RLIMIT) -> bool:
    """Give a Z3 solver / optimiser the budget's limits; False when nothing is left."""
    ms = budget.remaining_ms()
    if ms <= 0:
        return False
    solver.set("timeout", ms * WALL_FACTOR)
    solver.set("rlimit", rlimit)
    return True


_z3 = None

# Z3's Python API works in one global context that is not safe across threads: exports
# running in several threads take turns for each query (never across user code, so traces
# that wait on each other still interleave)
Z3_LOCK = threading.RLock()


def serialized(fn):
    """Run ``fn`` (a function doing Z3 work) holding ``Z3_LOCK``."""
    @functools.wraps(fn)
    def locked(*args, **kwargs):
        with Z3_LOCK:
            return fn(*args, **kwargs)
    return locked


def z3mod():
    global _z3
    if _z3 is None:
        import z3
        _z3 = z3
    return _z3


def min_step(out, a):
    """The fold step of ``min_term``: ``If(a < out, a, out)``."""
    return z3mod().If(a < out, a, out)


def max_step(out, a):
    """The fold step of ``max_term``: ``If(a > out, a, out)``."""
    return z3mod().If(a > out, a, out)


# Each n-ary term is exactly a left fold of its two-argument step (and nothing else):
# proofs/folds.py reads that from this code, so z3bridge.minmax_encoding holds for every arity.
def min_term(args: list):
    """``Min`` of the Z3 integers ``args`` (one or more) as nested ``If``s."""
    return functools.reduce(min_step, args)


def max_term(args: list):
    """``Max`` of the Z3 integers ``args`` (one or more) as nested ``If``s."""
    return functools.reduce(max_step, args)


def minmax_term(kind: str, args: list):
    """``Min`` / ``Max`` (``kind``) of the Z3 integers ``args`` as nested ``If``s."""
    return min_term(args) if kind == "Min" else max_term(args)


def cond_term(z3, c, expr):
    """The Z3 formula of condition ``c`` (a bool, an and / or, or ``e <op> 0``); ``expr``
    encodes its expressions."""
    if type(c) is bool:
        return z3.BoolVal(c)
    if isinstance(c, BoolOp):
        parts = [cond_term(z3, a, expr) for a in c.args]
        return z3.And(*parts) if c.op == "and" else z3.Or(*parts)
    e = expr(c.expr)
    if c.op == EQ:
        return e == 0
    if c.op == NE:
        return e != 0
    return e <= 0


class Encoder:
    """Translates expressions, collecting the side conditions of div / mod atoms."""

    def __init__(self) -> None:
        self.z3 = z3mod()
        self.vars: Dict[Sym, object] = {}
        self.side: List[object] = []
        self.fresh: List[object] = []          # the quotient variables of div / mod atoms
        self._atoms: Dict[OpAtom, object] = {}

    def sym(self, s: Sym):
        v = self.vars.get(s)
        if v is None:
            v = self.vars[s] = self.z3.Int(s.name)
        return v

    def expr(self, x: IntLike):
        return fold(x, self.z3.IntVal, self.sym, self.atom)

    @rule("z3bridge.divmod_encoding", "z3bridge.minmax_encoding")
    def atom(self, atom: OpAtom):
        got = self._atoms.get(atom)
        if got is not None:
            return got
        z3 = self.z3
        args = [self.expr(a) for a in atom.args]
        if atom.kind in ("Min", "Max"):
            out = minmax_term(atom.kind, args)
        else:
            a, b = args
            q = z3.FreshInt("q")
            self.fresh.append(q)
            self.side.append(b != 0)
            self.side.append(z3.If(b > 0, z3.And(b * q <= a, a < b * q + b),
                                   z3.And(b * q >= a, a > b * q + b)))
            out = q if atom.kind == "FloorDiv" else a - b * q
        self._atoms[atom] = out
        return out

    def cond(self, c):
        return cond_term(self.z3, c, self.expr)

    def range(self, s: Sym, vr) -> list:
        v = self.sym(s)
        out = []
        if not is_inf(vr.lower):
            out.append(v >= vr.lower)
        if not is_inf(vr.upper):
            out.append(v <= vr.upper)
        return out


@serialized
@rule("z3bridge.implies")
def implies(premises: Iterable, goal, ranges: Mapping[Sym, object],
            budget=None) -> Optional[bool]:
    """True if ``premises`` (conditions) and the symbol ranges imply ``goal``; False if
    they imply its negation; None when neither is proven within the resource limit and
    the time budget (half a second for the whole question; the caller then falls back to
    a guard, and the debug log says so)."""
    budget = budget or Budget()
    z3 = z3mod()
    enc = Encoder()
    hyp = [enc.cond(p) for p in premises]
    g = enc.cond(goal)
    for s in list(enc.vars):
        if s in ranges:
            hyp += enc.range(s, ranges[s])
    hyp += enc.side
    for target, answer in ((z3.Not(g), True), (g, False)):
        solver = z3.Solver()
        if not configure(solver, budget, RLIMIT):
            break
        solver.add(*hyp)
        solver.add(target)
        if solver.check() == z3.unsat:
            return answer
    if budget.spent:
        dynamic_log.debug("decide: %s not settled within the time budget; a guard on the "
                          "example values decides it", goal)
    return None
