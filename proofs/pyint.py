"""Python integer semantics in Z3, and the ``prove`` driver every lemma uses.

Z3's integer ``/`` and ``%`` are Euclidean (the remainder is never negative), Python's floor
(the remainder takes the divisor's sign): ``7 / -2`` is -3 in Z3, ``7 // -2`` is -4 in Python.
So floor division is never written with Z3's operators here.  ``q = a // b`` is a fresh
integer pinned by its defining inequalities

    b*q <= a < b*q + b      when b > 0
    b*q >= a > b*q + b      when b < 0

and ``a % b`` is ``a - b*q``.  The inequalities are collected in a ``Py`` context as side
conditions, guarded by the divisor's sign, so a division by zero leaves ``q`` unconstrained
(a proof that needs ``b != 0`` must state it).

``prove(claim, hyps)`` checks that ``hyps`` imply ``claim`` for *all* values of the free
integers, by asking Z3 for a counterexample (``hyps and not claim``).  Queries run under a
resource limit (``rlimit``), never a wall-clock timeout, so results are repeatable.
"""
from __future__ import annotations

import itertools
from typing import List

import z3

from . import z3cache

#: default resource limit per query; lemmas that need more pass ``rlimit=``
RLIMIT = 20_000_000


class ProofFailure(AssertionError):
    """A lemma is false (with a counterexample) or was not proven within the limit."""


_FRESH = itertools.count(1)     # quotient names are unique across contexts


def restart_names() -> None:
    """Number fresh names from 1 again: ``run_one`` calls it before each proof, so a proof
    asks Z3 the same text whatever ran before it in the process (Z3's search, and so
    whether it finishes within its resource limit, depends on the names; a counter that
    ran on across proofs made a proof pass alone and fail after others).  Names stay
    unique within a proof, and no term outlives the proof that built it."""
    global _FRESH
    _FRESH = itertools.count(1)


class Py:
    """A context that builds Python ``//`` and ``%`` terms over Z3 integers (``zmin`` /
    ``zmax`` below build ``min`` / ``max``) and remembers the side conditions defining
    the quotients it introduced."""

    def __init__(self) -> None:
        self.side: List[z3.BoolRef] = []
        self._memo: dict = {}

    @staticmethod
    def _fresh(stem: str) -> z3.ArithRef:
        return z3.Int("%s!%d" % (stem, next(_FRESH)))

    def floordiv(self, a, b) -> z3.ArithRef:
        """``a // b`` (Python): a fresh q with ``b*q <= a < b*q + b`` (b > 0) or
        ``b*q >= a > b*q + b`` (b < 0)."""
        a, b = _z(a), _z(b)
        key = (z3.simplify(a).sexpr(), z3.simplify(b).sexpr())
        q = self._memo.get(key)         # // is a function: equal arguments, one quotient
        if q is not None:
            return q
        q = self._memo[key] = self._fresh("q")
        self.side.append(z3.Implies(b > 0, z3.And(b * q <= a, a < b * q + b)))
        self.side.append(z3.Implies(b < 0, z3.And(b * q >= a, a > b * q + b)))
        return q

    def mod(self, a, b) -> z3.ArithRef:
        """``a % b`` (Python): ``a - b*(a // b)``; the sign of ``b``."""
        a, b = _z(a), _z(b)
        return a - b * self.floordiv(a, b)

    def ceildiv(self, a, b) -> z3.ArithRef:
        """``-((-a) // b)``."""
        return -self.floordiv(-_z(a), b)

    def prove(self, claim, *hyps, rlimit: int = RLIMIT, what: str = "") -> None:
        """``prove`` with the side conditions of this context's quotients added."""
        prove(claim, _flat(hyps), self.side, rlimit=rlimit, what=what)



class OpaqueDivMod(Py):
    """``//`` and ``%`` as uninterpreted functions: a claim proven for every function holds
    for Python's (substitution commutes with any operation; no quotient's nonlinear
    definition to search)."""

    FD = z3.Function("floordiv", z3.IntSort(), z3.IntSort(), z3.IntSort())
    MD = z3.Function("mod", z3.IntSort(), z3.IntSort(), z3.IntSort())

    def floordiv(self, a, b):
        return self.FD(a, b)

    def mod(self, a, b):
        return self.MD(a, b)

def _z(x):
    return z3.IntVal(x) if isinstance(x, int) else x


def zmin(*xs):
    """``min`` of Z3 terms (the first minimal one, like Python)."""
    out = _z(xs[0])
    for x in xs[1:]:
        x = _z(x)
        out = z3.If(x < out, x, out)
    return out


def zmax(*xs):
    out = _z(xs[0])
    for x in xs[1:]:
        x = _z(x)
        out = z3.If(x > out, x, out)
    return out


def limited_solver(rlimit: int, *facts):
    """A Z3 solver holding ``facts`` that gives up (``unknown``) after ``rlimit`` steps."""
    s = z3.Solver()
    s.set("rlimit", rlimit)
    s.add(*facts)
    return s


def prove(claim, *hyps, rlimit: int = RLIMIT, what: str = "") -> None:
    """Raise ``ProofFailure`` unless the hypotheses imply ``claim`` for every integer
    assignment.  ``hyps`` are formulas or lists of formulas: ``prove(c, [h1, h2])`` and
    ``prove(c, h1, h2)`` are the same.

    The hypotheses must be satisfiable: a lemma whose hypotheses contradict each other
    would hold vacuously, which is reported as a failure rather than a proof.  ``what``
    names the lemma in the failure message."""
    hyps = _flat(hyps)
    lead = (what + ": ") if what else ""
    s = limited_solver(rlimit, *hyps)
    if hyps:
        r = z3cache.check(s, rlimit)
        if r == z3.unsat:
            raise ProofFailure("%svacuous: the hypotheses contradict each other\n  claim: %s"
                               % (lead, _short(claim)))
        if r == z3.unknown:
            raise ProofFailure("%scould not show the hypotheses satisfiable within rlimit=%d"
                               % (lead, rlimit))
        s = limited_solver(rlimit, *hyps)
    s.add(z3.Not(claim))
    r = z3cache.check(s, rlimit)
    if r == z3.unsat:
        return
    if r == z3.sat:
        raise ProofFailure("%scounterexample: %s\n  claim: %s"
                           % (lead, _model_text(z3cache.model(s)), _short(claim)))
    raise ProofFailure("%snot proven within rlimit=%d (%s)\n  claim: %s"
                       % (lead, rlimit, s.reason_unknown(), _short(claim)))


def _flat(hyps) -> List:
    out: List = []
    for h in hyps:
        if isinstance(h, (list, tuple)):
            out.extend(_flat(h))
        else:
            out.append(h)
    return out


def _model_text(m: z3.ModelRef) -> str:
    items = sorted(((d.name(), m[d]) for d in m.decls() if "!" not in d.name()),
                   key=lambda kv: kv[0])
    return ", ".join("%s=%s" % kv for kv in items) or "(empty model)"


def _short(claim, limit: int = 300) -> str:
    text = str(claim).replace("\n", " ")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def require(ok: bool, what: str, *args) -> None:
    """A concrete cross-check: raise ``ProofFailure`` unless ``ok``.  With ``args`` the
    message is ``what % args``, formatted only on failure (grids call this a lot)."""
    if not ok:
        raise ProofFailure(what % args if args else what)
