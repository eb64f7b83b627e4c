"""Integer infinities for value ranges: ``int_oo`` and ``-int_oo``.

They order against every ``int``, absorb finite addends, and keep their sign under
multiplication by a non-zero int.  ``0 * int_oo`` is taken as ``0``: a range bound of
``0 * [.., int_oo]`` arises only from the corner products of interval multiplication,
where 0 is the right bound.  ``int_oo - int_oo`` is undefined and raises, because a
range computation that reaches it is a bug.
"""
from __future__ import annotations

from typing import Union


class _IntInfinity:
    """One of the two integer infinities; ``sign`` is +1 or -1."""

    __slots__ = ("sign",)

    def __init__(self, sign: int) -> None:
        self.sign = sign

    # ordering ---------------------------------------------------------------
    def __lt__(self, other: object) -> bool:
        if other is self:
            return False
        return self.sign < 0

    def __le__(self, other: object) -> bool:
        return other is self or self.sign < 0

    def __gt__(self, other: object) -> bool:
        if other is self:
            return False
        return self.sign > 0

    def __ge__(self, other: object) -> bool:
        return other is self or self.sign > 0

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return hash(("int_oo", self.sign))

    # arithmetic ---------------------------------------------------------------
    def __neg__(self) -> "_IntInfinity":
        return NEG_INT_OO if self.sign > 0 else INT_OO

    def __add__(self, other: "Bound") -> "_IntInfinity":
        if isinstance(other, _IntInfinity) and other is not self:
            raise ArithmeticError("int_oo - int_oo is undefined")
        return self

    __radd__ = __add__

    def __sub__(self, other: "Bound") -> "_IntInfinity":
        return self + (-other)

    def __rsub__(self, other: "Bound") -> "_IntInfinity":
        return (-self) + other

    def __mul__(self, other: "Bound") -> "Bound":
        if isinstance(other, _IntInfinity):
            return INT_OO if self.sign == other.sign else NEG_INT_OO
        if other == 0:
            return 0
        return self if other > 0 else -self

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return "int_oo" if self.sign > 0 else "-int_oo"

    __str__ = __repr__

    def __reduce__(self):  # keep the singletons singletons under copy/pickle
        return (_infinity, (self.sign,))


def _infinity(sign: int) -> _IntInfinity:
    return INT_OO if sign > 0 else NEG_INT_OO


INT_OO = _IntInfinity(1)
NEG_INT_OO = _IntInfinity(-1)
int_oo = INT_OO

Bound = Union[int, _IntInfinity]


def is_inf(x: object) -> bool:
    return isinstance(x, _IntInfinity)
