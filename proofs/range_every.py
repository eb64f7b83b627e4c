"""``vr_pow`` (``symshape/algebra/ranges.py``) for every exponent and every range: the code
run with a *symbolic* exponent ``n >= 1`` on a range with symbolic ends (finite or
infinite), along every path (``proofs/symexec.py``, ``proofs/symcoeff.py``).

``x ** n`` for a symbolic n is ``POW(x, n)``, a function Z3 knows through its definition
``POW(x, 0) = 1``, ``POW(x, n + 1) = x * POW(x, n)``.  What the corner formula needs of powers is proven here
for every n by induction (base case and step, each a Z3 query over the recursive
definition): monotone on the non-negatives, ``POW(-x, n) = +-POW(x, n)`` by the parity of
n, and ``POW(x, a + b) = POW(x, a) * POW(x, b)``; the claims on the code's output use
these lemmas' instances at the range's ends and member.  Above 5 the code composes powers
(``vr_mul(vr_pow(a, 5), vr_pow(a, n - 5))``): each recursive call is on a smaller exponent
and returns its induction hypothesis (a fresh range holding ``POW(x, m)``), ``vr_mul`` its
proven rule (``range.mul``).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import List

import z3

from symshape.algebra import ranges as RG
from symshape.algebra.ranges import ValueRange

from . import symcoeff as SC
from . import symexec as SX
from .code import prove_code
from .pyint import prove
from .symexec import Explorer, Ext, inside, interval, to_pair

__all__ = ["POW", "power_lemmas", "prove_vr_pow"]

#: ``x ** n``: a function Z3 knows only through the instances of its definition a proof
#: states (``POW(x, 0) == 1``, ``POW(x, n + 1) == x * POW(x, n)``), so what is proven holds
#: for the real power, which satisfies them
POW = z3.Function("POW", z3.IntSort(), z3.IntSort(), z3.IntSort())


def _defined(b, n):
    """The definition's instances at base b: exponent 0 and the step from n to n + 1."""
    return [POW(b, 0) == 1, z3.Implies(n >= 0, POW(b, n + 1) == b * POW(b, n))]


def _mono(x, y, n):
    """``0 <= x <= y => 0 <= x**n <= y**n``."""
    return z3.Implies(z3.And(n >= 0, 0 <= x, x <= y),
                      z3.And(0 <= POW(x, n), POW(x, n) <= POW(y, n)))


def _parity(x, n):
    """``(-x)**n == x**n`` for even n, ``-(x**n)`` for odd n."""
    return z3.Implies(n >= 0, POW(-x, n) == z3.If(n % 2 == 0, POW(x, n), -POW(x, n)))


def _split(x, a, b):
    """``x**(a + b) == x**a * x**b``."""
    return z3.Implies(z3.And(a >= 0, b >= 0), POW(x, a + b) == POW(x, a) * POW(x, b))


def _split_at(x, m, n):
    """The instance of ``_split`` at a = m, b = n - m: ``x**n == x**m * x**(n - m)``."""
    return z3.Implies(z3.And(m >= 0, n - m >= 0), POW(x, n) == POW(x, m) * POW(x, n - m))


def power_lemmas() -> None:
    """The three lemmas, each for every integer base and exponent by induction: the base
    case at exponent 0 and the step from n to n + 1 (the claim at n its hypothesis)."""
    x, y, n, a = z3.Ints("x y n a")
    zero = z3.IntVal(0)
    prove(_mono(x, y, zero), _defined(x, n), _defined(y, n), what="POW monotone, n = 0")
    prove(_mono(x, y, n + 1), n >= 0, _mono(x, y, n), _defined(x, n), _defined(y, n),
          what="POW monotone, step")
    prove(_parity(x, zero), _defined(x, n), _defined(-x, n), what="POW parity, n = 0")
    prove(_parity(x, n + 1), n >= 0, _parity(x, n), _defined(x, n), _defined(-x, n),
          what="POW parity, step")
    prove(_split(x, a, zero), _defined(x, n), what="POW split, b = 0")
    prove(POW(x, 1) == x, _defined(x, zero), what="POW at 1")
    prove(_split(x, a, n + 1), n >= 0, a >= 0, _split(x, a, n), _defined(x, n),
          _defined(x, a + n), what="POW split, step")


class _PExt(Ext):
    """A range end whose ``** n`` takes a symbolic exponent (``POW``)."""

    __slots__ = ()

    def __pow__(self, n):
        if RG.is_inf(self):
            raise TypeError("** of an infinity")
        return Ext(0, POW(self.v, SC.value(n)))


class _Calls:
    """The recursive ``vr_pow`` calls (induction hypotheses) and ``vr_mul`` calls (its
    proven rule) of one path, each answered by a fresh range."""

    def __init__(self, ex: Explorer) -> None:
        self.ex = ex
        self.pows: List = []       # (exponent, fresh range)
        self.muls: List = []       # (operand, operand, fresh range)

    def fresh(self) -> ValueRange:
        k = len(self.pows) + len(self.muls)
        ls, lv, hs, hv = z3.Ints("r%d.ls r%d.lo r%d.hs r%d.hi" % ((k,) * 4))
        self.ex.assume(z3.Or(ls == 0, ls == -1), z3.Or(hs == 0, hs == 1),
                       z3.Implies(ls != 0, lv == 0), z3.Implies(hs != 0, hv == 0),
                       z3.Implies(z3.And(ls == 0, hs == 0), lv <= hv))
        return ValueRange(Ext(ls, lv), Ext(hs, hv))


@contextmanager
def _stubbed(calls: _Calls):
    real = RG.vr_pow
    depth = [0]

    def vr_pow(a, n):
        if depth[0]:                       # a recursive call: its induction hypothesis
            out = calls.fresh()
            calls.pows.append((n, out))
            return out
        depth[0] += 1
        try:
            return real(a, n)
        finally:
            depth[0] -= 1

    def vr_mul(a, b):
        out = calls.fresh()
        calls.muls.append((a, b, out))
        return out
    RG.vr_pow, saved_mul = vr_pow, RG.vr_mul
    RG.vr_mul = vr_mul
    try:
        yield
    finally:
        RG.vr_pow, RG.vr_mul = real, saved_mul


def _in(r: ValueRange, v):
    return inside(*to_pair(r.lower), *to_pair(r.upper), v)


def prove_vr_pow() -> int:
    """The code on every range and every exponent n >= 1, along every path; returns the
    number of paths."""
    power_lemmas()
    lo, hi, wf, x, member = interval("pow")
    lo, hi = _PExt(lo.s, lo.v), _PExt(hi.s, hi.v)
    n = SC.SInt(z3.Int("n"))
    nv = SC.value(n)
    ends = [x, lo.v, hi.v]
    ends += [-e for e in ends]
    lemmas = [_mono(p, q, nv) for p in ends for q in ends] + [_parity(e, nv) for e in ends]
    lemmas += [POW(e, 1) == e for e in ends]     # the definition at n = 1
    hyps = wf + [nv >= 1]
    ex = Explorer(hyps + lemmas)       # proven facts: the paths they rule out are none

    def run():
        calls = _Calls(ex)
        with _stubbed(calls):
            return RG.vr_pow(ValueRange(lo, hi), n), calls
    with SC.patched(ex, inductive=False), SX.patched(ex):
        paths = ex.paths(run)
    SX.raise_on_paths(paths, "vr_pow")
    impl, cases = [], []
    for pc, (out, calls) in paths:
        value = {}
        facts = []
        smaller = []                       # the induction: each call on 1 <= m < n
        for m, r in calls.pows:            # x**m in the recursive call's range
            smaller.append(z3.And(SC.value(m) >= 1, SC.value(m) < nv))
            value[id(r)] = POW(x, SC.value(m))
            facts.append(z3.Implies(z3.And(*member), _in(r, value[id(r)])))
            facts.append(_split_at(x, SC.value(m), nv))
        for a, b, r in calls.muls:         # range.mul: the product of members in the range
            value[id(r)] = value[id(a)] * value[id(b)]
            facts.append(z3.Implies(z3.And(_in(a, value[id(a)]), _in(b, value[id(b)])),
                                    _in(r, value[id(r)])))
        cases.append((z3.And(*pc, *facts), len(impl), z3.And(*smaller)))
        impl += [*to_pair(out.lower), *to_pair(out.upper)]
    want = POW(x, nv)

    def claim(*t):
        return z3.And(*[z3.Implies(c, z3.And(down, inside(t[k], t[k + 1], t[k + 2],
                                                          t[k + 3], want)))
                        for c, k, down in cases])
    prove_code(claim, impl, hyps, member, lemmas, P=ex.P,
               what="vr_pow on symbolic ranges and exponents (%d paths)" % len(paths))
    return len(paths)
