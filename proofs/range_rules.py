"""Proofs that every value-range transfer function of ``symshape/ranges.py`` is sound.

For each operator: for all intervals (lower end an integer or ``-int_oo``, upper end an
integer or ``int_oo``, lower <= upper) and all integers x, y inside them, the concrete
result lies in the interval the code computes.  The code's formula is re-stated over
extended integers (``proofs/extint.py``), including its corner products, its ``min`` /
``max`` of corners and ``_fdiv``'s handling of infinite bounds; every addition of bounds
must be defined (no ``int_oo - int_oo``).  Each proof then cross-checks the real function
on a grid of small intervals against brute force.
"""
from __future__ import annotations

import itertools
from typing import Callable, List

import z3

from symshape import ranges as RG
from symshape.infinity import INT_OO, NEG_INT_OO
from symshape.infinity import is_inf as is_inf_
from symshape.ranges import ValueRange

from . import proves
from .extint import (POS_INF, Ext, X, emax, emin, fin, inside, ipow, is_inf, le, lt, mul,
                     neg, scale, select)
from .pyint import require

# ---------------------------------------------------------------------------- concrete grid
_ENDS = range(-4, 5)


def _intervals(with_inf: bool = True) -> List[ValueRange]:
    out = [ValueRange(a, b) for a in _ENDS for b in _ENDS if a <= b]
    if with_inf:
        out += [ValueRange(NEG_INT_OO, b) for b in _ENDS]
        out += [ValueRange(a, INT_OO) for a in _ENDS]
        out.append(ValueRange(NEG_INT_OO, INT_OO))
    return out


def _members(r: ValueRange, pad: int = 6) -> range:
    """Integers of ``r`` within a window: an infinite end is cut off ``pad`` beyond the
    other end (or 0)."""
    if is_inf_(r.lower):
        lo = (0 if is_inf_(r.upper) else min(r.upper, 0)) - pad
    else:
        lo = r.lower
    if is_inf_(r.upper):
        hi = (0 if is_inf_(r.lower) else max(r.lower, 0)) + pad
    else:
        hi = r.upper
    return range(lo, hi + 1)


def _grid2(fn: Callable, op: Callable, what: str, step: int = 1,
           skip_zero_divisor: bool = False, filt: Callable = lambda a, b: True) -> None:
    ivs = _intervals()[::step]
    for a, b in itertools.product(ivs, repeat=2):
        if not filt(a, b):
            continue
        got = fn(a, b)
        for x in _members(a):
            for y in _members(b):
                if skip_zero_divisor and y == 0:
                    continue
                v = op(x, y)
                require(v in got, "%s(%s, %s) = %s misses %s(%d, %d) = %d",
                        what, a, b, got, what, x, y, v)


def _contains(E: Ext, lo: X, hi: X, value) -> z3.BoolRef:
    return z3.And(inside(lo, hi, value), *E.defined)


# ---------------------------------------------------------------------------- add / scale / mul
@proves("range.add")
def range_add():
    E = Ext()
    alo, ahi, wa = E.interval("a")
    blo, bhi, wb = E.interval("b")
    x, y = z3.Ints("x y")
    lo, hi = E.add(alo, blo), E.add(ahi, bhi)
    E.prove(_contains(E, lo, hi, x + y), wa, wb, inside(alo, ahi, x), inside(blo, bhi, y))
    _grid2(RG.vr_add, lambda x, y: x + y, "vr_add", step=2)


@proves("range.scale")
def range_scale():
    E = Ext()
    alo, ahi, wa = E.interval("a")
    x, k = z3.Ints("x k")
    lo = select(k >= 0, scale(alo, k), scale(ahi, k))
    hi = select(k >= 0, scale(ahi, k), scale(alo, k))
    E.prove(_contains(E, lo, hi, k * x), wa, inside(alo, ahi, x))
    for a in _intervals():
        for k_ in range(-3, 4):
            got = RG.vr_scale(a, k_)
            for x_ in _members(a):
                require(k_ * x_ in got, "vr_scale(%s, %d) = %s misses %d", a, k_, got, k_ * x_)


def _mul_corners(alo: X, ahi: X, blo: X, bhi: X):
    cs = [mul(alo, blo), mul(alo, bhi), mul(ahi, blo), mul(ahi, bhi)]
    return emin(*cs), emax(*cs)


@proves("range.mul")
def range_mul():
    E = Ext()
    alo, ahi, wa = E.interval("a")
    blo, bhi, wb = E.interval("b")
    x, y = z3.Ints("x y")
    lo, hi = _mul_corners(alo, ahi, blo, bhi)
    E.prove(_contains(E, lo, hi, x * y), wa, wb, inside(alo, ahi, x), inside(blo, bhi, y))
    _grid2(RG.vr_mul, lambda x, y: x * y, "vr_mul", step=2)


@proves("range.pow")
def range_pow():
    for n in range(1, 6):
        E = Ext()
        alo, ahi, wa = E.interval("a")
        x, = z3.Ints("x")
        if n == 1:
            lo, hi = alo, ahi
        else:
            plo, phi = ipow(alo, n), ipow(ahi, n)
            if n % 2 == 0:
                straddles = z3.And(le(alo, fin(0)), le(fin(0), ahi))
                lo = select(straddles, fin(0), emin(plo, phi))
                hi = emax(plo, phi)
            else:
                lo, hi = plo, phi
        xn = z3.IntVal(1)
        for _ in range(n):
            xn = xn * x
        E.prove(_contains(E, lo, hi, xn), wa, inside(alo, ahi, x))
        for a in _intervals():
            got = RG.vr_pow(a, n)
            for x_ in _members(a):
                require(x_ ** n in got, "vr_pow(%s, %d) = %s misses %d", a, n, got, x_ ** n)


# ---------------------------------------------------------------------------- floordiv
def _fdiv_corners(E: Ext, alo: X, ahi: X, blo: X, bhi: X):
    cs = [E.fdiv(p, q) for p in (alo, ahi) for q in (blo, bhi)]
    return emin(*cs), emax(*cs)


def _floordiv_branch(sign: int) -> None:
    E = Ext()
    alo, ahi, wa = E.interval("a")
    blo, bhi, wb = E.interval("b")
    x, y = z3.Ints("x y")
    one_sign = lt(fin(0), blo) if sign > 0 else lt(bhi, fin(0))
    lo, hi = _fdiv_corners(E, alo, ahi, blo, bhi)
    E.prove(_contains(E, lo, hi, E.floordiv(x, y)), wa, wb, one_sign,
            inside(alo, ahi, x), inside(blo, bhi, y))


@proves("range.floordiv_pos")
def range_floordiv_pos():
    _floordiv_branch(+1)
    _grid2(RG.vr_floordiv, lambda x, y: x // y, "vr_floordiv",
           filt=lambda a, b: b.lower > 0)


@proves("range.floordiv_neg")
def range_floordiv_neg():
    _floordiv_branch(-1)
    _grid2(RG.vr_floordiv, lambda x, y: x // y, "vr_floordiv",
           filt=lambda a, b: b.upper < 0)


@proves("range.floordiv_straddle")
def range_floordiv_straddle():
    E = Ext()
    alo, ahi, wa = E.interval("a")
    blo, bhi, wb = E.interval("b")
    x, y = z3.Ints("x y")
    has_neg, has_pos = lt(blo, fin(0)), lt(fin(0), bhi)
    with E.assuming(has_neg):                               # y in [c, -1]
        nlo, nhi = _fdiv_corners(E, alo, ahi, blo, fin(-1))
    with E.assuming(has_pos):                               # y in [1, d]
        plo, phi = _fdiv_corners(E, alo, ahi, fin(1), bhi)
    lo = select(z3.And(has_neg, has_pos), emin(nlo, plo), select(has_neg, nlo, plo))
    hi = select(z3.And(has_neg, has_pos), emax(nhi, phi), select(has_neg, nhi, phi))
    straddles = z3.And(le(blo, fin(0)), le(fin(0), bhi))
    E.prove(_contains(E, lo, hi, E.floordiv(x, y)), wa, wb, straddles, y != 0,
            inside(alo, ahi, x), inside(blo, bhi, y))
    _grid2(RG.vr_floordiv, lambda x, y: x // y, "vr_floordiv", skip_zero_divisor=True,
           filt=lambda a, b: b.lower <= 0 <= b.upper)


# ---------------------------------------------------------------------------- mod
@proves("range.mod_nowrap")
def range_mod_nowrap():
    E = Ext()
    a, b, m, x = z3.Ints("a b m x")
    qa, qx, qb = E.floordiv(a, m), E.floordiv(x, m), E.floordiv(b, m)
    hyps = [m > 0, a <= x, x <= b, qa == qb]
    E.prove(qx == qa, hyps)                       # x // m is monotone in x: no wrap inside
    E.prove(z3.And(a - m * qa <= x - m * qx, x - m * qx <= b - m * qb), hyps, qx == qa)
    for a_ in range(-8, 9):
        for b_ in range(a_, 9):
            for m_ in range(1, 6):
                got = RG.vr_mod(ValueRange(a_, b_), ValueRange(m_, m_))
                for x_ in range(a_, b_ + 1):
                    require(x_ % m_ in got, "vr_mod([%d, %d], %d) = %s misses %d",
                            a_, b_, m_, got, x_ % m_)


@proves("range.mod_pos")
def range_mod_pos():
    E = Ext()
    alo, ahi, wa = E.interval("a")
    blo, bhi, wb = E.interval("b")
    x, y = z3.Ints("x y")
    hi0 = select(is_inf(bhi), POS_INF, fin(bhi.v - 1))
    hi = select(le(fin(0), alo), emin(hi0, ahi), hi0)
    E.prove(_contains(E, fin(0), hi, E.mod(x, y)), wa, wb, lt(fin(0), blo),
            inside(alo, ahi, x), inside(blo, bhi, y))
    _grid2(RG.vr_mod, lambda x, y: x % y, "vr_mod", filt=lambda a, b: b.lower > 0)


@proves("range.mod_neg")
def range_mod_neg():
    E = Ext()
    alo, ahi, wa = E.interval("a")
    blo, bhi, wb = E.interval("b")
    x, y = z3.Ints("x y")
    lo = select(is_inf(blo), neg(POS_INF), fin(blo.v + 1))
    E.prove(_contains(E, lo, fin(0), E.mod(x, y)), wa, wb, lt(bhi, fin(0)),
            inside(alo, ahi, x), inside(blo, bhi, y))
    _grid2(RG.vr_mod, lambda x, y: x % y, "vr_mod", filt=lambda a, b: b.upper < 0)


@proves("range.mod_straddle")
def range_mod_straddle():
    E = Ext()
    alo, ahi, wa = E.interval("a")
    blo, bhi, wb = E.interval("b")
    x, y = z3.Ints("x y")
    lo0 = select(is_inf(blo), neg(POS_INF), fin(blo.v + 1))
    hi0 = select(is_inf(bhi), POS_INF, fin(bhi.v - 1))
    lo, hi = emin(lo0, fin(0)), emax(hi0, fin(0))
    straddles = z3.And(le(blo, fin(0)), le(fin(0), bhi))
    E.prove(_contains(E, lo, hi, E.mod(x, y)), wa, wb, straddles, y != 0,
            inside(alo, ahi, x), inside(blo, bhi, y))
    _grid2(RG.vr_mod, lambda x, y: x % y, "vr_mod", skip_zero_divisor=True,
           filt=lambda a, b: b.lower <= 0 <= b.upper)


# ---------------------------------------------------------------------------- min / max
def _minmax_proof(is_min: bool) -> None:
    for n in (2, 3):
        E = Ext()
        ivs = [E.interval("a%d" % i) for i in range(n)]
        xs = z3.Ints(" ".join("x%d" % i for i in range(n)))
        pick = emin if is_min else emax
        lo = pick(*[iv[0] for iv in ivs])
        hi = pick(*[iv[1] for iv in ivs])
        val = xs[0]
        for v in xs[1:]:
            val = (z3.If(v < val, v, val) if is_min else z3.If(v > val, v, val))
        hyps = [iv[2] for iv in ivs] + [inside(iv[0], iv[1], v) for iv, v in zip(ivs, xs)]
        E.prove(_contains(E, lo, hi, val), hyps)
    fn, op = (RG.vr_min, min) if is_min else (RG.vr_max, max)
    _grid2(lambda a, b: fn([a, b]), op, fn.__name__, step=2)


@proves("range.min")
def range_min():
    _minmax_proof(True)


@proves("range.max")
def range_max():
    _minmax_proof(False)


# ---------------------------------------------------------------------------- factored bound
@proves("range.factored")
def range_factored():
    E = Ext()
    tlo, thi, wt = E.interval("t")
    ilo, ihi, wi = E.interval("i")
    elo, ehi, we = E.interval("e")          # any other sound range of the same value
    t, i, k = z3.Ints("t i k")
    value = t * i + k
    mlo, mhi = _mul_corners(tlo, thi, ilo, ihi)
    lo, hi = E.add(mlo, fin(k)), E.add(mhi, fin(k))
    E.prove(_contains(E, lo, hi, value), wt, wi, inside(tlo, thi, t), inside(ilo, ihi, i))
    # intersecting with another range that contains the value keeps it (ValueRange.intersect)
    E2 = Ext()
    ilo2 = select(lt(lo, elo), elo, lo)
    ihi2 = select(lt(ehi, hi), ehi, hi)
    E2.prove(inside(ilo2, ihi2, value), we, inside(elo, ehi, value), wt, wi,
             inside(tlo, thi, t), inside(ilo, ihi, i), *E.defined)
    # the real bound() on polynomials with a common factor, against brute force
    from symshape import expr as EX
    s0, s1, s2 = EX.Sym(910), EX.Sym(911), EX.Sym(912)
    polys = [s0.expr * s2.expr - 2 * s2.expr, 3 * s0.expr * s1.expr + s1.expr - 4,
             s0.expr * s0.expr * s1.expr - s0.expr * s1.expr + 5,
             s2.expr * s2.expr - s2.expr * s0.expr]
    boxes = [ValueRange(-3, 2), ValueRange(0, 3), ValueRange(2, 4), ValueRange(-2, -1)]
    for p in polys:
        for r0, r1, r2 in itertools.product(boxes, repeat=3):
            rng = {s0: r0, s1: r1, s2: r2}
            got = RG.bound(p, rng.__getitem__)
            for v0, v1, v2 in itertools.product(_members(r0), _members(r1), _members(r2)):
                val = EX.evaluate(p, {s0: v0, s1: v1, s2: v2})
                require(val in got, "bound(%s) = %s misses %d at s910=%d, s911=%d, s912=%d",
                        p, got, val, v0, v1, v2)
