"""Range bounds in Z3: integers extended with ``-int_oo`` and ``int_oo``.

A bound is a pair ``X(s, v)``: ``s`` is 0 for the finite value ``v`` and -1 / +1 for
``-int_oo`` / ``int_oo`` (then ``v`` is 0).  The operations re-state ``symshape.algebra.infinity``:
infinities order below / above every int, absorb finite addends, ``int_oo - int_oo`` is
undefined (it raises; every use records a definedness condition that the lemma must prove),
and ``0 * int_oo == 0``.  A *lower* bound may be ``-int_oo``, an *upper* bound ``int_oo``;
an infinite end of an interval is therefore modelled by dropping that constraint on x.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import List, Tuple

import z3

from .pyint import Py, _z


class X:
    """An extended integer: ``s`` in {-1, 0, 1} (Z3 terms), ``v`` its finite value."""

    __slots__ = ("s", "v")

    def __init__(self, s, v) -> None:
        self.s = _z(s)
        self.v = _z(v)


def fin(v) -> X:
    return X(0, v)


POS_INF = X(1, 0)
NEG_INF = X(-1, 0)


class Ext(Py):
    """A ``Py`` context that also collects definedness conditions of bound arithmetic."""

    def __init__(self) -> None:
        super().__init__()
        self.defined: List[z3.BoolRef] = []
        self._assume: List[z3.BoolRef] = []

    @contextmanager
    def assuming(self, cond):
        """Definedness conditions recorded inside are needed only when ``cond`` holds (the
        code computes that part only then)."""
        self._assume.append(cond)
        try:
            yield
        finally:
            self._assume.pop()

    def _need(self, c) -> None:
        self.defined.append(z3.Implies(z3.And(*self._assume), c) if self._assume else c)

    # variables ---------------------------------------------------------------
    def interval(self, name: str, finite: bool = False) -> Tuple[X, X, List[z3.BoolRef]]:
        """A non-empty interval ``[lo, hi]``: lo in Z u {-oo}, hi in Z u {+oo}.  With
        ``finite`` both ends are integers."""
        ls, lv, hs, hv = z3.Ints("%s.lo.s %s.lo %s.hi.s %s.hi" % ((name,) * 4))
        lo, hi = X(ls, lv), X(hs, hv)
        if finite:
            wf = [ls == 0, hs == 0]
        else:
            wf = [z3.Or(ls == 0, ls == -1), z3.Or(hs == 0, hs == 1),
                  z3.Implies(ls != 0, lv == 0), z3.Implies(hs != 0, hv == 0)]
        wf.append(le(lo, hi))
        return lo, hi, wf

    # arithmetic ----------------------------------------------------------------
    def add(self, a: X, b: X) -> X:
        self._need(z3.Not(z3.Or(z3.And(a.s == 1, b.s == -1), z3.And(a.s == -1, b.s == 1))))
        both = z3.And(a.s == 0, b.s == 0)
        return X(z3.If(a.s != 0, a.s, b.s), z3.If(both, a.v + b.v, 0))

    def fdiv(self, a: X, b: X) -> X:
        """``ranges._fdiv``: floor(a / b) for bounds, b != 0."""
        sa, sb = sign(a), sign(b)
        self._need(sb != 0)
        inf_inf = X(z3.If(sa == sb, 1, -1), 0)
        # a finite, b infinite: 0 when a == 0 or a and b agree in sign, else -1
        fin_inf = fin(z3.If(a.v == 0, 0, z3.If((a.v >= 0) == (sb > 0), 0, -1)))
        inf_fin = select(sb > 0, a, neg(a))
        fin_fin = fin(self.floordiv(a.v, b.v))
        return select(b.s != 0, select(a.s != 0, inf_inf, fin_inf),
                      select(a.s != 0, inf_fin, fin_fin))


def select(c, a: X, b: X) -> X:
    return X(z3.If(c, a.s, b.s), z3.If(c, a.v, b.v))


def le(a: X, b: X) -> z3.BoolRef:
    return z3.Or(a.s < b.s, z3.And(a.s == b.s, z3.Or(a.s != 0, a.v <= b.v)))


def lt(a: X, b: X) -> z3.BoolRef:
    return z3.Not(le(b, a))


def eq(a: X, b: X) -> z3.BoolRef:
    return z3.And(a.s == b.s, z3.Or(a.s != 0, a.v == b.v))


def is_inf(a: X) -> z3.BoolRef:
    return a.s != 0


def neg(a: X) -> X:
    return X(-a.s, -a.v)


def sign(a: X):
    return z3.If(a.s != 0, a.s, z3.If(a.v > 0, 1, z3.If(a.v < 0, -1, 0)))


def emin(*xs: X) -> X:
    """Python's ``min`` over bounds (the first minimal element)."""
    out = xs[0]
    for x in xs[1:]:
        out = select(lt(x, out), x, out)
    return out


def emax(*xs: X) -> X:
    out = xs[0]
    for x in xs[1:]:
        out = select(lt(out, x), x, out)
    return out


def mul(a: X, b: X) -> X:
    """``a * b`` for bounds: int products; an infinity keeps the product's sign and
    ``0 * int_oo == 0``."""
    sa, sb = sign(a), sign(b)
    sg = z3.If(z3.Or(sa == 0, sb == 0), 0, z3.If(sa == sb, 1, -1))
    both = z3.And(a.s == 0, b.s == 0)
    return select(both, fin(a.v * b.v), select(sg == 0, fin(0), X(sg, 0)))


def scale(a: X, k) -> X:
    """``a * k`` for an integer k (linear when k is a Z3 variable and a finite)."""
    k = _z(k)
    sk = z3.If(k > 0, 1, z3.If(k < 0, -1, 0))
    return select(a.s == 0, fin(a.v * k), select(sk == 0, fin(0), X(a.s * sk, 0)))


def ipow(a: X, n: int) -> X:
    """``ranges._ipow``: x**n, with infinities keeping their sign for odd n."""
    p = _z(1)
    for _ in range(n):
        p = p * a.v
    if n % 2:
        return select(a.s != 0, a, fin(p))
    return select(a.s != 0, POS_INF, fin(p))


def inside(lo: X, hi: X, x) -> z3.BoolRef:
    """``lo <= x <= hi`` for an integer x."""
    return z3.And(le(lo, fin(x)), le(fin(x), hi))
