"""Relations between size expressions, normalised so that equal facts have equal keys.

Every comparison is reduced to one of three forms over a non-constant ``Expr`` e:
``e == 0``, ``e != 0`` or ``e <= 0`` (``a < b`` is ``a - b + 1 <= 0`` over the integers).
Normal form:
  * ``==`` / ``!=``: coefficients divided by their gcd (if the constant is not divisible,
    the relation is decided), first coefficient positive;
  * ``<=``: term coefficients divided by their gcd g, the constant rounded *up*
    (``g*t + c <= 0`` iff ``t + ceil(c/g) <= 0``).
Constructors return a Python ``bool`` when the relation is decided syntactically.
``BoolOp`` combines relations with and / or (``not`` is pushed into the relations).
"""
from __future__ import annotations

from typing import Callable, Tuple, Union

from symshape.algebra.expr import Expr, IntLike, Sym, default_name, add, ceildiv, format_expr, scale, sub
from symshape.rules import rule

EQ, NE, LE = "==", "!=", "<="


class Rel:
    __slots__ = ("op", "expr", "_hash")

    def __init__(self, op: str, expr: Expr) -> None:
        self.op = op
        self.expr = expr
        self._hash = hash((op, expr))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rel) and self.op == other.op and self.expr == other.expr

    @property
    def free_symbols(self) -> frozenset:
        return self.expr.free_symbols

    @rule("rel.le_negate")
    def negate(self) -> "Cond":
        if self.op == EQ:
            return Rel(NE, self.expr)
        if self.op == NE:
            return Rel(EQ, self.expr)
        return make(LE, scale(self.expr, -1) + 1)     # not (e <= 0)  <=>  -e + 1 <= 0

    def holds(self, value: int) -> bool:
        """Whether the relation holds when ``expr`` evaluates to ``value``."""
        if self.op == EQ:
            return value == 0
        if self.op == NE:
            return value != 0
        return value <= 0

    def format(self, name: Callable[[Sym], str] = default_name, py: bool = False) -> str:
        """The relation as text; ``py``: Python's notation (``n % 4 == 0``), for users."""
        lhs, rhs = _split_sides(self.expr)
        op = self.op
        if op == LE and type(lhs) is not int and type(rhs) is not int and lhs.const:
            # u0 + 1 <= 0 reads as u0 <= -1: constants to the right
            c = lhs.const
            lhs, rhs = add(lhs, -c), add(rhs, -c)
        elif type(lhs) is not int and lhs.const and rhs == 0:
            c = lhs.const
            lhs, rhs = add(lhs, -c), -c
        if op == LE and type(lhs) is int and type(rhs) is not int:
            lhs, rhs, op = rhs, lhs, ">="
        return "%s %s %s" % (_side(lhs, name, py), op, _side(rhs, name, py))

    def __repr__(self) -> str:
        return self.format()


def _side(x: IntLike, name, py: bool) -> str:
    text = format_expr(x, name, py)
    if py and type(x) is not int and x.as_atom() is not None and text.startswith("(") \
            and " % " in text and text.endswith(")"):
        return text[1:-1]              # a whole side ``(n % 4)`` needs no brackets
    return text


def _split_sides(e: Expr) -> Tuple[IntLike, IntLike]:
    """``e`` as ``lhs - rhs`` with positive coefficients and constant on each side."""
    pos = {t: c for t, c in e.terms if c > 0}
    negs = {t: -c for t, c in e.terms if c < 0}
    lhs: IntLike = Expr(pos, 0) if pos else 0
    rhs: IntLike = Expr(negs, 0) if negs else 0
    if e.const > 0:
        lhs = add(lhs, e.const)
    elif e.const < 0:
        rhs = add(rhs, -e.const)
    return lhs, rhs


class BoolOp:
    __slots__ = ("op", "args", "_hash")

    def __init__(self, op: str, args: Tuple["Cond", ...]) -> None:
        self.op = op          # "and" | "or"
        self.args = args
        self._hash = hash((op, args))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BoolOp) and self.op == other.op and self.args == other.args

    @property
    def free_symbols(self) -> frozenset:
        out: frozenset = frozenset()
        for a in self.args:
            out |= a.free_symbols
        return out

    def negate(self) -> "Cond":
        return combine("or" if self.op == "and" else "and", [a.negate() for a in self.args])

    def format(self, name: Callable[[Sym], str] = default_name, py: bool = False) -> str:
        return (" %s " % self.op).join("(%s)" % a.format(name, py) for a in self.args)

    def __repr__(self) -> str:
        return self.format()


Cond = Union[Rel, BoolOp]
CondLike = Union[bool, Rel, BoolOp]


@rule("rel.eq_gcd", "rel.eq_sign", "rel.le_gcd_ceil")
def make(op: str, e: IntLike) -> CondLike:
    """Normalise ``e <op> 0``."""
    if type(e) is int:
        return e == 0 if op == EQ else e != 0 if op == NE else e <= 0
    g = e.coeff_gcd()
    if op == LE:
        if g > 1:
            e = Expr({t: c // g for t, c in e.terms}, ceildiv(e.const, g))
        return Rel(LE, e)
    if e.const % g:
        return op == NE
    if g > 1:
        e = Expr({t: c // g for t, c in e.terms}, e.const // g)
    if e.terms[0][1] < 0:
        e = scale(e, -1)
    return Rel(op, e)


def eq(a: IntLike, b: IntLike) -> CondLike:
    return make(EQ, sub(a, b))


def ne(a: IntLike, b: IntLike) -> CondLike:
    return make(NE, sub(a, b))


def le(a: IntLike, b: IntLike) -> CondLike:
    return make(LE, sub(a, b))


@rule("rel.lt_as_le")
def lt(a: IntLike, b: IntLike) -> CondLike:
    return make(LE, sub(a, b) + 1)


def ge(a: IntLike, b: IntLike) -> CondLike:
    return le(b, a)


def gt(a: IntLike, b: IntLike) -> CondLike:
    return lt(b, a)


def negate(c: CondLike) -> CondLike:
    return (not c) if type(c) is bool else c.negate()


def combine(op: str, args) -> CondLike:
    """``and`` / ``or`` of conditions, folding decided ones and flattening."""
    absorbing = op == "or"               # True absorbs an or; False absorbs an and
    out = []
    for a in args:
        if type(a) is bool:
            if a == absorbing:
                return absorbing
            continue
        for b in (a.args if isinstance(a, BoolOp) and a.op == op else (a,)):
            if b not in out:
                out.append(b)
    if not out:
        return not absorbing
    if len(out) == 1:
        return out[0]
    return BoolOp(op, tuple(out))
