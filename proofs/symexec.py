"""The engine's own range code run on *symbolic* range ends: proofs for every interval, not
a grid of them.

``Ext`` (below) is an extended integer whose value is a pair of Z3 terms: ``s`` (0 finite,
-1 ``-int_oo``, +1 ``int_oo``) and ``v`` (the finite value, 0 when infinite).  Its
operators re-state ``symshape.algebra.infinity`` (infinities absorb finite addends, ``int_oo -
int_oo`` raises, ``0 * int_oo == 0``, ``//`` and ``%`` only on finite values with
Python's floor semantics).  A comparison, or ``is_inf``, that the path so far does not
decide *branches*: ``Explorer.paths`` runs the function once per feasible outcome of every
branch it reaches (depth first, replaying the decisions made so far), so the code's output
is known on each path as Z3 terms under that path's condition.  A proof then states, over
all paths at once, that the output range holds the operation's value for every member of
the symbolic input ranges; an exception raised on a feasible path (``int_oo - int_oo``, an
empty ``ValueRange``) is a failure.

``patched()`` makes ``symshape.algebra.ranges`` see the symbolic infinities: its ``is_inf``,
``INT_OO`` and ``NEG_INT_OO`` are replaced while a proof runs (the real infinities' own
operators decide comparisons without looking at the other operand, so mixing them with
symbolic ends would hide cases).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, List, Optional, Tuple

import z3

from symshape.algebra import ranges as RG
from symshape.algebra.infinity import _IntInfinity

from .pyint import RLIMIT, Py, ProofFailure

__all__ = ["Ext", "Explorer", "patched", "interval", "to_pair"]


class TrackedPy(Py):
    """``Py`` that remembers each quotient it made, for ``monotone_quotients``."""

    def __init__(self) -> None:
        super().__init__()
        self.quotients: List[Tuple] = []

    def floordiv(self, a, b):
        q = super().floordiv(a, b)
        if not any(q is t[2] for t in self.quotients):
            self.quotients.append((a, b, q))
        return q


def monotone_quotients(P: TrackedPy) -> List:
    """For each two quotients over one positive divisor: ``a1 <= a2 => a1 // m <= a2 //
    m`` (floor division is monotone in the numerator; proven by ``prove_monotone``).
    Nonlinear facts Z3 does not find by itself, given as proven lemma instances."""
    out = []
    for a1, b1, q1 in P.quotients:
        for a2, b2, q2 in P.quotients:
            if q1 is not q2:
                out.append(z3.Implies(z3.And(b1 == b2, b1 > 0, a1 <= a2), q1 <= q2))
    return out


def prove_monotone() -> None:
    """The lemma ``monotone_quotients`` instantiates, for all integers."""
    P = Py()
    a1, a2, m = z3.Ints("a1 a2 m")
    P.prove(P.floordiv(a1, m) <= P.floordiv(a2, m), m > 0, a1 <= a2)


class Infeasible(Exception):
    """Raised inside a run whose replayed decisions turned out infeasible (never escapes)."""


class Explorer:
    """Runs functions on symbolic values along every feasible path (see the module
    docstring).  ``hyps``: what holds on every path (well-formed ranges ...)."""

    def __init__(self, hyps=()) -> None:
        self.P = TrackedPy()                # quotients of // and % (their definitions)
        self.hyps = list(hyps)
        self.checks = 0
        self._decisions: List[bool] = []
        self._pos = 0
        self._pending: List[List[bool]] = []
        self._solver: Optional[z3.Solver] = None
        self.pc: List = []

    def _feasible(self, cond) -> bool:
        s = self._solver
        s.push()
        s.add(*self.P.side)
        s.add(cond)
        self.checks += 1
        r = s.check()          # incremental and cheap: not worth a cache key
        s.pop()
        return r != z3.unsat              # unknown: explored as feasible (never skipped)

    def branch(self, cond) -> bool:
        """The outcome of the condition on this path; a new two-way branch forks."""
        cond = z3.simplify(cond)
        if z3.is_true(cond):
            return True
        if z3.is_false(cond):
            return False
        if self._pos < len(self._decisions):
            take = self._decisions[self._pos]
        else:
            yes, no = self._feasible(cond), self._feasible(z3.Not(cond))
            if yes and no:
                self._pending.append(self._decisions + [False])
                take = True
            elif yes or no:
                take = yes
            else:
                raise Infeasible()
            self._decisions.append(take)
        self._pos += 1
        c = cond if take else z3.Not(cond)
        self.pc.append(c)
        self._solver.add(c)
        return take

    def fork(self, fresh) -> bool:
        """``branch`` on a Boolean no earlier condition of the path mentions (a stand-in's
        free answer): both outcomes are feasible wherever the path is, so no solver call."""
        take = self.choose()
        c = fresh if take else z3.Not(fresh)
        self.pc.append(c)
        self._solver.add(c)
        return take

    def choose(self) -> bool:
        """A two-way decision that adds nothing to the path's condition or solver (the
        caller keeps what it means: a stand-in's free answer whose meaning only the final
        claim reads); True first, then False."""
        if self._pos < len(self._decisions):
            take = self._decisions[self._pos]
        else:
            self._pending.append(self._decisions + [False])
            take = True
            self._decisions.append(take)
        self._pos += 1
        return take

    def assume(self, *facts) -> None:
        """Facts that hold from here on along this path (a fresh value's definition): added
        to the path condition and the path's solver, never branched on."""
        self.pc.extend(facts)
        self._solver.add(*facts)

    def paths(self, fn: Callable[[], object]) -> List[Tuple[List, object]]:
        """``fn()`` on every feasible path: a list of (path condition, result or the
        exception raised)."""
        out = []
        self._pending = [[]]
        while self._pending:
            self._decisions = self._pending.pop()
            self._pos = 0
            self.pc = []
            self._solver = z3.Solver()
            self._solver.set("rlimit", RLIMIT)
            self._solver.add(*self.hyps)
            try:
                got = fn()
            except Infeasible:
                continue
            except (ArithmeticError, ValueError, TypeError) as e:
                got = e
            out.append((list(self.pc), got))
        return out


# the explorer the Ext values of the current proof branch through
_CURRENT: List[Explorer] = []


def _ex() -> Explorer:
    return _CURRENT[-1]


#: conversions of other symbolic integers to ``Ext`` (each returns None for a value it does
#: not know); ``bound_every`` adds one for its symbolic coefficients while a proof runs
LIFTS: List[Callable] = []


def _lift(x) -> "Ext":
    if isinstance(x, Ext):
        return x
    for f in LIFTS:
        e = f(x)
        if e is not None:
            return e
    if isinstance(x, _IntInfinity):
        return Ext(x.sign, 0)
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError("not a bound: %r" % (x,))
    return Ext(0, x)


def _z(x):
    return z3.IntVal(x) if isinstance(x, int) else x


class Ext:
    """A symbolic extended integer (see the module docstring)."""

    __slots__ = ("s", "v")

    def __init__(self, s, v) -> None:
        self.s, self.v = _z(s), _z(v)

    # ordering ------------------------------------------------------------------
    def _lt(self, o: "Ext"):
        return z3.Or(self.s < o.s, z3.And(self.s == 0, o.s == 0, self.v < o.v))

    def __lt__(self, o):
        return _ex().branch(self._lt(_lift(o)))

    def __gt__(self, o):
        return _ex().branch(_lift(o)._lt(self))

    def __le__(self, o):
        return _ex().branch(z3.Not(_lift(o)._lt(self)))

    def __ge__(self, o):
        return _ex().branch(z3.Not(self._lt(_lift(o))))

    def __eq__(self, o):
        try:
            o = _lift(o)
        except TypeError:
            return False
        return _ex().branch(z3.And(self.s == o.s, z3.Or(self.s != 0, self.v == o.v)))

    def __ne__(self, o):
        return not self.__eq__(o)

    __hash__ = object.__hash__

    def __bool__(self):
        return self != 0

    # arithmetic ----------------------------------------------------------------
    def __neg__(self) -> "Ext":
        return Ext(-self.s, -self.v)

    def __add__(self, o) -> "Ext":
        o = _lift(o)
        if _ex().branch(self.s * o.s == -1):
            raise ArithmeticError("int_oo - int_oo is undefined")
        fin = z3.And(self.s == 0, o.s == 0)
        return Ext(z3.If(self.s != 0, self.s, o.s), z3.If(fin, self.v + o.v, 0))

    __radd__ = __add__

    def __sub__(self, o) -> "Ext":
        return self + (-_lift(o))

    def __rsub__(self, o) -> "Ext":
        return _lift(o) + (-self)

    def _sign(self):
        return z3.If(self.s != 0, self.s, z3.If(self.v > 0, 1, z3.If(self.v < 0, -1, 0)))

    def __mul__(self, o) -> "Ext":
        o = _lift(o)
        sg = self._sign() * o._sign()
        fin = z3.And(self.s == 0, o.s == 0)
        return Ext(z3.If(fin, 0, sg), z3.If(fin, self.v * o.v, 0))

    __rmul__ = __mul__

    def _finite_pair(self, o):
        o = _lift(o)
        if _ex().branch(z3.Or(self.s != 0, o.s != 0)):
            raise TypeError("// or % of an infinity")
        if _ex().branch(o.v == 0):
            raise ZeroDivisionError("integer division by zero")
        return o

    def __floordiv__(self, o) -> "Ext":
        o = self._finite_pair(o)
        return Ext(0, _ex().P.floordiv(self.v, o.v))

    def __rfloordiv__(self, o) -> "Ext":
        return _lift(o).__floordiv__(self)

    def __mod__(self, o) -> "Ext":
        o = self._finite_pair(o)
        return Ext(0, _ex().P.mod(self.v, o.v))

    def __rmod__(self, o) -> "Ext":
        return _lift(o).__mod__(self)

    def __pow__(self, n: int) -> "Ext":
        if _ex().branch(self.s != 0):
            raise TypeError("** of an infinity")
        out = self.v
        for _ in range(n - 1):
            out = out * self.v
        return Ext(0, out)

    def __abs__(self) -> "Ext":
        return -self if self < 0 else self

    def __repr__(self) -> str:
        return "Ext(%s, %s)" % (self.s, self.v)


def _is_inf(x) -> bool:
    if isinstance(x, Ext):
        return _ex().branch(x.s != 0)
    return isinstance(x, _IntInfinity)


@contextmanager
def patched(explorer: Explorer):
    """``symshape.algebra.ranges`` sees symbolic infinities while ``explorer`` runs it."""
    saved = (RG.is_inf, RG.INT_OO, RG.NEG_INT_OO)
    _CURRENT.append(explorer)
    RG.is_inf, RG.INT_OO, RG.NEG_INT_OO = _is_inf, Ext(1, 0), Ext(-1, 0)
    try:
        yield explorer
    finally:
        RG.is_inf, RG.INT_OO, RG.NEG_INT_OO = saved
        _CURRENT.pop()


def interval(name: str, finite: bool = False):
    """Symbolic ends ``lo``, ``hi`` of a non-empty range (``lo`` an integer or
    ``-int_oo``, ``hi`` an integer or ``int_oo``; both integers when ``finite``), the
    facts that make it well formed, and a member ``x`` with the facts that put it inside."""
    ls, lv, hs, hv, x = z3.Ints("%s.ls %s.lo %s.hs %s.hi %s" % ((name,) * 5))
    wf = [z3.Or(ls == 0, ls == -1), z3.Or(hs == 0, hs == 1),
          z3.Implies(ls != 0, lv == 0), z3.Implies(hs != 0, hv == 0),
          z3.Implies(z3.And(ls == 0, hs == 0), lv <= hv)]
    if finite:
        wf += [ls == 0, hs == 0]
    member = [z3.Implies(ls == 0, lv <= x), z3.Implies(hs == 0, x <= hv)]
    return Ext(ls, lv), Ext(hs, hv), wf, x, member


def to_pair(b) -> Tuple:
    """A range end the code returned (Ext, int or a real infinity) as (s, v) terms."""
    e = _lift(b)
    return e.s, e.v


def inside(lo_s, lo_v, hi_s, hi_v, x):
    """``lo <= x <= hi`` for an integer x and ends given as (s, v) pairs."""
    return z3.And(z3.Or(lo_s == -1, z3.And(lo_s == 0, lo_v <= x)),
                  z3.Or(hi_s == 1, z3.And(hi_s == 0, x <= hi_v)))


def raise_on_paths(paths, what: str) -> None:
    """A feasible path on which the code raised is a failure."""
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s: raises %s: %s on the feasible path %s"
                               % (what, type(got).__name__, got, z3.And(*pc)))
