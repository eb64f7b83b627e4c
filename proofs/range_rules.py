"""Proofs that every value-range transfer function of ``symshape/algebra/ranges.py`` is sound.

For each operator: for all intervals (lower end an integer or ``-int_oo``, upper end an
integer or ``int_oo``, lower <= upper) and all integers x, y inside them, the concrete
result lies in the interval the code computes.  The code's formula is re-stated over
extended integers (``proofs/extint.py``), including its corner products, its ``min`` /
``max`` of corners and ``_fdiv``'s handling of infinite bounds; every addition of bounds
must be defined (no ``int_oo - int_oo``).  Each proof then runs the real function on
ranges with *symbolic* ends (``symbolic_sound``, ``proofs/symexec.py``: any integer or
infinite end, once per feasible path through the code's branches; ``vr_min`` / ``vr_max``
through their two-argument fold step, by induction on the arity, ``vr_scale`` with a symbolic factor; ``vr_pow`` with
a symbolic exponent in ``proofs/range_every.py``): Z3 proves that the range the code *returns* contains the
operation's value for every member of every input range, not a grid of sample intervals.
"""
from __future__ import annotations

from typing import Callable

import z3

from symshape.algebra import ranges as RG
from symshape.algebra.infinity import is_inf as is_inf_
from symshape.algebra.ranges import ValueRange

from . import every, proves
from .extint import (POS_INF, Ext, X, emax, emin, fin, inside, is_inf, le, lt, mul,
                     neg, scale, select)
from .code import prove_code
from .folds import fold_step
from .pyint import zmax, zmin


# ---------------------------------------------------------------------------- the code's output
def _two_intervals():
    """A fresh prover, the intervals a = [alo, ahi] and b = [blo, bhi] of a binary rule with
    the facts wa, wb that they are well formed, and the integers x, y they bound."""
    E = Ext()
    x, y = z3.Ints("x y")
    return (E,) + tuple(E.interval("a")) + tuple(E.interval("b")) + (x, y)


def _member(r: ValueRange, x) -> list:
    """``x in r`` in Z3 (an infinite end is no constraint)."""
    out = []
    if not is_inf_(r.lower):
        out.append(x >= r.lower)
    if not is_inf_(r.upper):
        out.append(x <= r.upper)
    return out


def _contains(E: Ext, lo: X, hi: X, value) -> z3.BoolRef:
    return z3.And(inside(lo, hi, value), *E.defined)


# ---------------------------------------------------------------------------- add / scale / mul
@proves("range.add", over=every("every pair of ranges, finite or infinite ends symbolic"))
def range_add():
    E, alo, ahi, wa, blo, bhi, wb, x, y = _two_intervals()
    lo, hi = E.add(alo, blo), E.add(ahi, bhi)
    E.prove(_contains(E, lo, hi, x + y), wa, wb, inside(alo, ahi, x), inside(blo, bhi, y))
    symbolic_sound(RG.vr_add, lambda P_, x, y: x + y, "vr_add")


@proves("range.scale", over=every("every range and scale, ends symbolic"))
def range_scale():
    E = Ext()
    alo, ahi, wa = E.interval("a")
    x, k = z3.Ints("x k")
    lo = select(k >= 0, scale(alo, k), scale(ahi, k))
    hi = select(k >= 0, scale(ahi, k), scale(alo, k))
    E.prove(_contains(E, lo, hi, k * x), wa, inside(alo, ahi, x))
    # the code's output for any (symbolic) factor: the second range pins it
    symbolic_sound(lambda a, k: RG.vr_scale(a, k.lower), lambda P_, x, k: x * k,
                   "vr_scale", pre=lambda a, k: z3.And(k[0].s == 0, k[1].s == 0,
                                                       k[0].v == k[1].v))


def _mul_corners(alo: X, ahi: X, blo: X, bhi: X):
    cs = [mul(alo, blo), mul(alo, bhi), mul(ahi, blo), mul(ahi, bhi)]
    return emin(*cs), emax(*cs)


@proves("range.mul", over=every("every pair of ranges, ends symbolic"))
def range_mul():
    E, alo, ahi, wa, blo, bhi, wb, x, y = _two_intervals()
    lo, hi = _mul_corners(alo, ahi, blo, bhi)
    E.prove(_contains(E, lo, hi, x * y), wa, wb, inside(alo, ahi, x), inside(blo, bhi, y))
    symbolic_sound(RG.vr_mul, lambda P_, x, y: x * y, "vr_mul")


@proves("range.pow",
        over=every("every exponent n >= 1 (symbolic) and every range (ends symbolic, finite "
                   "or infinite), along every path of vr_pow; powers through their "
                   "definition, the lemmas on them proven by induction on n, the recursive "
                   "calls above 5 their induction hypothesis"))
def range_pow():
    # proofs/range_every.py: the code with a symbolic exponent
    from .range_every import prove_vr_pow
    prove_vr_pow()


# ---------------------------------------------------------------------------- floordiv
def _fdiv_corners(E: Ext, alo: X, ahi: X, blo: X, bhi: X):
    cs = [E.fdiv(p, q) for p in (alo, ahi) for q in (blo, bhi)]
    return emin(*cs), emax(*cs)


def _floordiv_branch(sign: int) -> None:
    E, alo, ahi, wa, blo, bhi, wb, x, y = _two_intervals()
    one_sign = lt(fin(0), blo) if sign > 0 else lt(bhi, fin(0))
    lo, hi = _fdiv_corners(E, alo, ahi, blo, bhi)
    E.prove(_contains(E, lo, hi, E.floordiv(x, y)), wa, wb, one_sign,
            inside(alo, ahi, x), inside(blo, bhi, y))


@proves("range.floordiv_pos",
        over=every("every pair of ranges with a positive divisor range, ends symbolic"))
def range_floordiv_pos():
    _floordiv_branch(+1)
    symbolic_sound(RG.vr_floordiv, lambda P_, x, y: P_.floordiv(x, y), "vr_floordiv",
                   pre=lambda a, b: _pos(b))


@proves("range.floordiv_neg",
        over=every("every pair of ranges with a negative divisor range, ends symbolic"))
def range_floordiv_neg():
    _floordiv_branch(-1)
    symbolic_sound(RG.vr_floordiv, lambda P_, x, y: P_.floordiv(x, y), "vr_floordiv",
                   pre=lambda a, b: _neg(b))


@proves("range.floordiv_straddle",
        over=every("every pair of ranges with a divisor range around 0, ends symbolic"))
def range_floordiv_straddle():
    E, alo, ahi, wa, blo, bhi, wb, x, y = _two_intervals()
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
    symbolic_sound(RG.vr_floordiv, lambda P_, x, y: P_.floordiv(x, y), "vr_floordiv",
                   nonzero_last=True, pre=lambda a, b: _straddle(b))


# ---------------------------------------------------------------------------- mod
@proves("range.mod_nowrap",
        over=every("every finite range and every positive modulus (a singleton divisor "
                   "range), ends symbolic, along every path of vr_mod"))
def range_mod_nowrap():
    E = Ext()
    a, b, m, x = z3.Ints("a b m x")
    qa, qx, qb = E.floordiv(a, m), E.floordiv(x, m), E.floordiv(b, m)
    hyps = [m > 0, a <= x, x <= b, qa == qb]
    E.prove(qx == qa, hyps)                       # x // m is monotone in x: no wrap inside
    E.prove(z3.And(a - m * qa <= x - m * qx, x - m * qx <= b - m * qb), hyps, qx == qa)
    # the code on every finite range and every positive modulus m (the divisor range
    # [m, m]), with symbolic ends: wrapping or not, on every path
    symbolic_sound(RG.vr_mod, lambda P_, x, y: P_.mod(x, y), "vr_mod(., [m, m])",
                   pre=lambda a, b: z3.And(a[0].s == 0, a[1].s == 0, b[0].s == 0,
                                           b[1].s == 0, b[0].v == b[1].v, b[0].v > 0),
                   per_path=True, lemmas=True)


@proves("range.mod_pos",
        over=every("every pair of ranges with a positive divisor range, ends symbolic"))
def range_mod_pos():
    E, alo, ahi, wa, blo, bhi, wb, x, y = _two_intervals()
    hi0 = select(is_inf(bhi), POS_INF, fin(bhi.v - 1))
    hi = select(le(fin(0), alo), emin(hi0, ahi), hi0)
    E.prove(_contains(E, fin(0), hi, E.mod(x, y)), wa, wb, lt(fin(0), blo),
            inside(alo, ahi, x), inside(blo, bhi, y))
    symbolic_sound(RG.vr_mod, lambda P_, x, y: P_.mod(x, y), "vr_mod",
                   pre=lambda a, b: _pos(b), per_path=True, lemmas=True)


@proves("range.mod_neg",
        over=every("every pair of ranges with a negative divisor range, ends symbolic"))
def range_mod_neg():
    E, alo, ahi, wa, blo, bhi, wb, x, y = _two_intervals()
    lo = select(is_inf(blo), neg(POS_INF), fin(blo.v + 1))
    E.prove(_contains(E, lo, fin(0), E.mod(x, y)), wa, wb, lt(bhi, fin(0)),
            inside(alo, ahi, x), inside(blo, bhi, y))
    symbolic_sound(RG.vr_mod, lambda P_, x, y: P_.mod(x, y), "vr_mod",
                   pre=lambda a, b: _neg(b))


@proves("range.mod_straddle",
        over=every("every pair of ranges with a divisor range around 0, ends symbolic"))
def range_mod_straddle():
    E, alo, ahi, wa, blo, bhi, wb, x, y = _two_intervals()
    lo0 = select(is_inf(blo), neg(POS_INF), fin(blo.v + 1))
    hi0 = select(is_inf(bhi), POS_INF, fin(bhi.v - 1))
    lo, hi = emin(lo0, fin(0)), emax(hi0, fin(0))
    straddles = z3.And(le(blo, fin(0)), le(fin(0), bhi))
    E.prove(_contains(E, lo, hi, E.mod(x, y)), wa, wb, straddles, y != 0,
            inside(alo, ahi, x), inside(blo, bhi, y))
    symbolic_sound(RG.vr_mod, lambda P_, x, y: P_.mod(x, y), "vr_mod", nonzero_last=True,
                   pre=lambda a, b: _straddle(b))


# ---------------------------------------------------------------------------- min / max
def _minmax_proof(is_min: bool) -> None:
    """By induction on the number of arguments.  ``vr_min`` is, read from its code,
    ``functools.reduce`` of its step (``fold_step``), so its result on n + 1 ranges is the
    step on (its result on the first n, the last); the base case is the first range itself
    (which holds its member, checked on the code's output too).  The step, run on two ranges with symbolic ends (the first an
    arbitrary accumulator) along every path, returns a range holding min(m, y) for every m
    in the first and y in the second: with m = min(x_0 .. x_n-1), in the accumulator by the
    induction hypothesis, min(x_0 .. x_n) = min(m, x_n) lies in the result."""
    fn, zop = (RG.vr_min, zmin) if is_min else (RG.vr_max, zmax)
    step = fold_step(fn)
    symbolic_sound(step, lambda P_, m, y: zop(m, y), "%s_step" % fn.__name__)
    # the base case on the code's own output: one range holds its member
    symbolic_sound(lambda r: fn([r]), lambda P_, x: x, "%s_one" % fn.__name__, arity=1)


_MINMAX_DOMAIN = ("every number of ranges (one or more), ends symbolic, finite or infinite: "
                  "the code's own two-argument step proven on every pair of ranges along "
                  "every path (an arbitrary accumulator: the induction step), and the "
                  "n-ary function read from its code to be exactly functools.reduce of "
                  "that step")


@proves("range.min", over=every(_MINMAX_DOMAIN))
def range_min():
    _minmax_proof(True)


@proves("range.max", over=every(_MINMAX_DOMAIN))
def range_max():
    _minmax_proof(False)


# ---------------------------------------------------------------------------- factored bound
@proves("range.factored",
        over=every("every c1*a*s + c2*a*t + c0 (coefficients and constant symbolic integers, "
                   "not all terms zero) over every box of a, s, t (ends symbolic, finite or "
                   "infinite), along every path of _bound_factored; the common atom read "
                   "through bound_atom and the rest through bound(), each sound (the "
                   "induction hypothesis), vr_mul / vr_add their proven rules; "
                   "ValueRange.intersect on every two ranges holding one value"))
def range_factored():
    # the code's own rewrite for every coefficient and box, and ValueRange.intersect (bound()
    # meets the two ranges) on every pair of ranges holding one value (proofs/bound_every.py)
    from .bound_every import factored_every, intersect_every
    factored_every()
    intersect_every()


# ---------------------------------------------------------------------------- symbolic ends
def symbolic_sound(fn: Callable, op: Callable, what: str, arity: int = 2,
                   nonzero_last: bool = False, pre: Callable = None,
                   finite: bool = False, per_path: bool = False,
                   lemmas: bool = False) -> int:
    """The code's own transfer function is sound for *every* range: ``fn`` runs on
    ranges whose ends are symbolic (any integer or infinite end, ``proofs/symexec.py``),
    once per feasible path through its branches, and Z3 proves that on every path the
    range it returns holds ``op(P, x, ...)`` for every member x, ... of the input ranges
    (``nonzero_last``: the last operand is a divisor, 0 excluded).  ``pre(*ranges)``
    (Z3, over the ``Ext`` ends) restricts the input ranges to one branch of a rule.
    Returns the number of paths."""
    from .symexec import (Explorer, interval, inside, monotone_quotients, patched,
                          prove_monotone, raise_on_paths, to_pair)
    ivs = [interval("%s%d" % (what.split("(")[0], i), finite) for i in range(arity)]
    hyps = [c for iv in ivs for c in iv[2]]
    if pre is not None:
        hyps.append(pre(*[(iv[0], iv[1]) for iv in ivs]))
    ex = Explorer(hyps)
    with patched(ex):
        paths = ex.paths(lambda: fn(*[ValueRange(iv[0], iv[1]) for iv in ivs]))
    raise_on_paths(paths, what)
    xs = [iv[3] for iv in ivs]
    members = [c for iv in ivs for c in iv[4]]
    if nonzero_last:
        members.append(xs[-1] != 0)
    val = op(ex.P, *xs)
    if lemmas:
        prove_monotone()
        members += monotone_quotients(ex.P)
    impl, cases = [], []
    for pc, got in paths:
        cases.append((pc, len(impl)))
        impl += [*to_pair(got.lower), *to_pair(got.upper)]

    if not per_path:
        def claim(*t):
            return z3.And(*[z3.Implies(z3.And(*pc), inside(t[k], t[k + 1], t[k + 2], t[k + 3],
                                                           val)) for pc, k in cases])
        prove_code(claim, impl, hyps, members, P=ex.P,
                   what="%s on symbolic ranges (%d paths)" % (what, len(paths)))
        return len(paths)
    for n, (pc, k) in enumerate(cases):        # one query per path: smaller for Z3
        prove_code(lambda *t: inside(*t, val), impl[k:k + 4], hyps, members, pc, P=ex.P,
                   what="%s on symbolic ranges, path %d of %d" % (what, n + 1, len(paths)))
    return len(paths)


def _pos(r):
    lo, hi = r
    return z3.And(lo.s == 0, lo.v > 0)


def _neg(r):
    lo, hi = r
    return z3.And(hi.s == 0, hi.v < 0)


def _straddle(r):
    return z3.Not(z3.Or(_pos(r), _neg(r)))
