"""Integer value ranges and a sound transfer function for every expression operator.

A ``ValueRange`` is a closed interval of integers whose ends may be ``-int_oo`` /
``int_oo``.  Soundness invariant (proven per operator in ``proofs/``): if every symbol's
value lies in its range, the value of an expression lies in ``bound(expr)``.
"""
from __future__ import annotations

from functools import reduce
from typing import Callable, Iterable

from symshape.algebra.expr import Atom, Expr, IntLike, Sym, OpAtom, add, atom_expr, scale
from symshape.algebra.expr import common_atoms, divide_terms
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, Bound, is_inf
from symshape.rules import rule


class ValueRange:
    """The closed integer interval ``[lower, upper]`` a size may take (``VR[2, int_oo]``);
    either end may be infinite (``-int_oo`` / ``int_oo``)."""

    __slots__ = ("lower", "upper")

    def __init__(self, lower: Bound, upper: Bound) -> None:
        if lower > upper:
            raise ValueError("empty value range [%s, %s]" % (lower, upper))
        self.lower = lower
        self.upper = upper

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ValueRange) and self.lower == other.lower \
            and self.upper == other.upper

    def __hash__(self) -> int:
        return hash((self.lower, self.upper))

    def __repr__(self) -> str:
        return "VR[%s, %s]" % (self.lower, self.upper)

    def __contains__(self, v: int) -> bool:
        return self.lower <= v <= self.upper

    @property
    def is_singleton(self) -> bool:
        return self.lower == self.upper and not is_inf(self.lower)

    def intersect(self, other: "ValueRange") -> "ValueRange":
        """The values in both ranges (ValueError when they do not meet)."""
        return ValueRange(max(self.lower, other.lower), min(self.upper, other.upper))

    def issubset(self, other: "ValueRange") -> bool:
        """Whether every value of this range lies in ``other``."""
        return other.lower <= self.lower and self.upper <= other.upper


def point(v: int) -> ValueRange:
    return ValueRange(v, v)


UNBOUNDED = ValueRange(NEG_INT_OO, INT_OO)


# --------------------------------------------------------------------------- transfer
@rule("range.add")
def vr_add(a: ValueRange, b: ValueRange) -> ValueRange:
    return ValueRange(a.lower + b.lower, a.upper + b.upper)


@rule("range.scale")
def vr_scale(a: ValueRange, k: int) -> ValueRange:
    if k >= 0:
        return ValueRange(a.lower * k, a.upper * k)
    return ValueRange(a.upper * k, a.lower * k)


@rule("range.mul")
def vr_mul(a: ValueRange, b: ValueRange) -> ValueRange:
    corners = [a.lower * b.lower, a.lower * b.upper, a.upper * b.lower, a.upper * b.upper]
    return ValueRange(min(corners), max(corners))


@rule("range.pow")
def vr_pow(a: ValueRange, n: int) -> ValueRange:
    """``x**n`` for n >= 1; exact for even powers of a range straddling 0."""
    if n == 1:
        return a
    if n > 5:   # the corner formula is proven for n <= 5; higher powers compose those
        return vr_mul(vr_pow(a, 5), vr_pow(a, n - 5))
    lo, hi = _ipow(a.lower, n), _ipow(a.upper, n)
    if n % 2 == 0:
        if a.lower <= 0 <= a.upper:
            return ValueRange(0, max(lo, hi))
        return ValueRange(min(lo, hi), max(lo, hi))
    return ValueRange(lo, hi)


def _ipow(x: Bound, n: int) -> Bound:
    if is_inf(x):
        return x if (x > 0 or n % 2) else INT_OO
    return x ** n


def _fdiv(a: Bound, b: Bound) -> Bound:
    """floor(a / b) for bounds, b != 0; infinities handled by sign."""
    if is_inf(b):
        if is_inf(a):
            return INT_OO if (a > 0) == (b > 0) else NEG_INT_OO
        # a finite: a / +-oo -> 0 from one side; floor gives 0 or -1
        if a == 0:
            return 0
        return 0 if (a >= 0) == (b > 0) else -1
    if is_inf(a):
        return a if b > 0 else -a
    return a // b


@rule("range.floordiv_pos", "range.floordiv_neg", "range.floordiv_straddle")
def vr_floordiv(a: ValueRange, b: ValueRange) -> ValueRange:
    """floor(a / b).  For a divisor range of one sign floor(x/y) is monotone in x and in y
    on that range, so the extremes sit at the corners; a divisor range containing 0 gives
    the union over its negative and positive parts (0 itself is a ZeroDivisionError)."""
    if b.lower > 0 or b.upper < 0:
        corners = [_fdiv(x, y) for x in (a.lower, a.upper) for y in (b.lower, b.upper)]
        return ValueRange(min(corners), max(corners))
    parts = []
    if b.lower < 0:
        parts.append(vr_floordiv(a, ValueRange(b.lower, -1)))
    if b.upper > 0:
        parts.append(vr_floordiv(a, ValueRange(1, b.upper)))
    if not parts:
        return UNBOUNDED
    return ValueRange(min(p.lower for p in parts), max(p.upper for p in parts))


@rule("range.mod_nowrap", "range.mod_pos", "range.mod_neg", "range.mod_straddle")
def vr_mod(a: ValueRange, b: ValueRange) -> ValueRange:
    """Python ``a % b``: the result has the divisor's sign and magnitude below |b|."""
    if b.is_singleton and b.lower > 0 and not is_inf(a.lower) and not is_inf(a.upper):
        m = b.lower
        if a.lower // m == a.upper // m:       # no wrap-around inside the range
            return ValueRange(a.lower % m, a.upper % m)
    if b.lower > 0:
        hi = b.upper - 1 if not is_inf(b.upper) else INT_OO
        if a.lower >= 0:                       # x % m == x when 0 <= x < m
            hi = min(hi, a.upper)
        return ValueRange(0, hi)
    if b.upper < 0:
        lo = b.lower + 1 if not is_inf(b.lower) else NEG_INT_OO
        return ValueRange(lo, 0)
    lo = b.lower + 1 if not is_inf(b.lower) else NEG_INT_OO
    hi = b.upper - 1 if not is_inf(b.upper) else INT_OO
    return ValueRange(min(lo, 0), max(hi, 0))


def min_step(acc: ValueRange, a: ValueRange) -> ValueRange:
    """The range of ``min(x, y)`` for x in ``acc`` and y in ``a``: the fold step of
    ``vr_min``."""
    return ValueRange(min(acc.lower, a.lower), min(acc.upper, a.upper))


def max_step(acc: ValueRange, a: ValueRange) -> ValueRange:
    """The range of ``max(x, y)`` for x in ``acc`` and y in ``a``: the fold step of
    ``vr_max``."""
    return ValueRange(max(acc.lower, a.lower), max(acc.upper, a.upper))


# Each n-ary function is exactly a left fold of its two-argument step (and nothing else):
# proofs/folds.py reads that from this code, so range.min / range.max hold for every arity.
@rule("range.min")
def vr_min(args: Iterable[ValueRange]) -> ValueRange:
    """The range of ``Min`` of members of ``args`` (one or more ranges)."""
    return reduce(min_step, args)


@rule("range.max")
def vr_max(args: Iterable[ValueRange]) -> ValueRange:
    """The range of ``Max`` of members of ``args`` (one or more ranges)."""
    return reduce(max_step, args)


# --------------------------------------------------------------------------- bound()
SymRange = Callable[[Sym], ValueRange]


@rule("range.bound")
def bound(x: IntLike, sym_range: SymRange) -> ValueRange:
    """A range containing every value of ``x`` when each symbol is in ``sym_range(sym)``.

    Range layer 1 (``symshape.contract.exact_ranges``): interval arithmetic, sound but not
    exact (no facts, and a symbol that occurs twice is treated as two), no solver; for the
    tracer's hot path and as the sound fallback of the exact layers.  Nothing published
    may come from it."""
    if type(x) is int:
        return point(x)
    total = point(x.const)
    for term, coeff in x.terms:
        total = vr_add(total, vr_scale(_bound_term(term, sym_range), coeff))
    if len(x.terms) > 1:
        factored = _bound_factored(x, sym_range)
        if factored is not None:
            total = total.intersect(factored)
        # the same value written so that interval arithmetic loses less; each form is an
        # identity, so the intersection stays sound
        for alt in (_divmod_split(x, sym_range), _minmax_pushed(x, sym_range)):
            if alt is not None:
                total = _meet(total, alt)
    return total


def _meet(a: ValueRange, b: ValueRange) -> ValueRange:
    lo, hi = max(a.lower, b.lower), min(a.upper, b.upper)
    return ValueRange(lo, hi) if lo <= hi else a


@rule("range.divmod_split")
def _divmod_split(x: Expr, sym_range: SymRange):
    """``c1*s + c2*(s // k) + c3*Mod(s, k)`` as ``(c1*k + c2)*Q + (c1 + c3)*R`` with
    ``Q = s // k`` in ``range(s) // k`` and ``R = Mod(s, k)`` in ``[0, k - 1]``: the terms
    no longer cancel each other's intervals (``s - s // 2`` is ``Q + R >= 1`` for s >= 2;
    ``-s + s // 2`` is bounded above).  Terms where ``s`` appears otherwise keep ``s``."""
    linear = {t[0]: c for t, c in x.terms if len(t) == 1}
    for t, c in x.terms:
        if len(t) != 1 or type(t[0]) is not OpAtom or t[0].kind not in ("FloorDiv", "Mod"):
            continue
        num, k = t[0].args
        if type(k) is not int or k <= 0 or type(num) is not Expr:
            continue
        s = num.as_symbol()
        if s is None or s not in linear:
            continue
        # stand-ins, never real symbols; below any stand-in of an enclosing split, whose
        # quotient must not merge with this one (s0 + s0 // 2 - s1 - s1 // 3)
        low = min([0] + [a.index for a in x.free_symbols if a.index < 0])
        q, r = Sym(low - 1, True), Sym(low - 2, True)
        div, rem = OpAtom("FloorDiv", (num, k)), OpAtom("Mod", (num, k))
        coeffs = {}
        for term, cc in x.terms:
            if term == (s,):
                coeffs[(q,)] = coeffs.get((q,), 0) + cc * k
                coeffs[(r,)] = coeffs.get((r,), 0) + cc
            elif term == (div,):
                coeffs[(q,)] = coeffs.get((q,), 0) + cc
            elif term == (rem,):
                coeffs[(r,)] = coeffs.get((r,), 0) + cc
            else:
                coeffs[term] = coeffs.get(term, 0) + cc
        coeffs = {tt: cc for tt, cc in coeffs.items() if cc}
        if not coeffs:
            return point(x.const)
        vs = sym_range(s)
        extra = {q: vr_floordiv(vs, point(k)), r: vr_mod(vs, point(k))}
        return bound(Expr(coeffs, x.const), lambda a: extra.get(a) or sym_range(a))
    return None


@rule("range.minmax_push")
def _minmax_pushed(x: Expr, sym_range: SymRange):
    """``r + Max(a, b)`` as ``Max(r + a, r + b)`` (``-Max`` as ``Min`` of negations), so
    that ``Max(a, b) - a`` is bounded by ``Max(0, b - a)``."""
    hits = [(t, c) for t, c in x.terms if any(type(a) is OpAtom and a.kind in ("Min", "Max")
                                                for a in t)]
    # exactly one Min / Max term, alone in its term: pushing the rest in cannot cascade
    if len(hits) != 1:
        return None
    for t, c in hits:
        if c not in (1, -1) or len(t) != 1:
            return None
        atom = t[0]
        rest = add(x, scale(atom_expr(atom), -c))
        if type(rest) is int:
            return None
        kind = atom.kind if c == 1 else ("Max" if atom.kind == "Min" else "Min")
        args = [bound(add(rest, scale(a, c)), sym_range) for a in atom.args]
        return vr_min(args) if kind == "Min" else vr_max(args)
    return None


@rule("range.factored")
def _bound_factored(x: Expr, sym_range: SymRange):
    """``a*(rest) + c`` when atom ``a`` divides every term: interval arithmetic loses less
    when a repeated factor is pulled out (s0*s3 - 2*s3 = s3*(s0 - 2))."""
    common = common_atoms(x)
    if not common:
        return None
    atom = min(common, key=lambda a: a.key)
    inner = divide_terms(x, atom)
    return vr_add(vr_mul(bound_atom(atom, sym_range), bound(inner, sym_range)), point(x.const))


def _bound_term(term, sym_range: SymRange) -> ValueRange:
    out = None
    i = 0
    while i < len(term):
        j = i
        while j < len(term) and term[j] == term[i]:
            j += 1
        r = vr_pow(bound_atom(term[i], sym_range), j - i)
        out = r if out is None else vr_mul(out, r)
        i = j
    return out


def bound_atom(atom: Atom, sym_range: SymRange) -> ValueRange:
    if type(atom) is Sym:
        return sym_range(atom)
    args = [bound(a, sym_range) for a in atom.args]
    kind = atom.kind
    if kind == "FloorDiv":
        return vr_floordiv(args[0], args[1])
    if kind == "Mod":
        return vr_mod(args[0], args[1])
    return vr_min(args) if kind == "Min" else vr_max(args)
