"""``Dim``, derived dims (``A*d + B``, ``B - d``), the AUTO / DYNAMIC / STATIC markers, ``dims``.

A root ``Dim`` names a symbolic size with inclusive bounds; its effective range is
``[min or 2, max or int_oo]`` (an explicit ``min=0`` or ``min=1`` is honoured exactly).
A derived dim is ``coeff*root + offset`` with an int ``coeff`` > 0, or ``offset - root``;
derived dims chain (``2*(dx + 1)`` is ``2*dx + 2``).  Two Dims are the same dimension
when they have the same name.
"""
from __future__ import annotations

import keyword
from typing import Optional, Tuple, Union

from symshape.errors import UserError
from symshape.algebra.infinity import INT_OO
from symshape.algebra.ranges import ValueRange


class Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "Dim." + self.name

    def __reduce__(self):
        return (getattr, (Dim, self.name))


AUTO = Marker("AUTO")
DYNAMIC = Marker("DYNAMIC")
STATIC = Marker("STATIC")


def _check_int(name: str, what: str, v) -> Optional[int]:
    if v is None:
        return None
    import numpy as np
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        if v is INT_OO:
            return None
        raise UserError("Dim(%r): %s must be an int, got %r" % (name, what, v))
    return int(v)


class Dim:
    """A named symbolic dimension ``Dim(name, min=None, max=None)``."""

    AUTO = AUTO
    DYNAMIC = DYNAMIC
    STATIC = STATIC

    __slots__ = ("name", "min", "max")

    def __init__(self, name: str, *, min: Optional[int] = None, max: Optional[int] = None):
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise UserError("Dim name must be a Python identifier, got %r" % (name,))
        lo = _check_int(name, "min", min)
        hi = _check_int(name, "max", max)
        if lo is not None and lo < 0:
            raise UserError("Dim(%r): min=%d is negative; sizes are >= 0" % (name, lo))
        if lo is not None and hi is not None and lo > hi:
            raise UserError("Dim(%r): min=%d is larger than max=%d" % (name, lo, hi))
        if lo is None and hi is not None and hi < 2:
            raise UserError("Dim(%r): max=%d is below the default min 2; pass min=%d "
                            "explicitly if sizes that small are meant" % (name, hi, hi))
        self.name = name
        self.min = lo
        self.max = hi

    @property
    def range(self) -> ValueRange:
        return ValueRange(2 if self.min is None else self.min,
                          INT_OO if self.max is None else self.max)

    # derived dims ------------------------------------------------------------
    def __mul__(self, k):
        return _derive(self, 1, 0) * k

    __rmul__ = __mul__

    def __add__(self, k):
        return _derive(self, 1, 0) + k

    __radd__ = __add__

    def __sub__(self, k):
        return _derive(self, 1, 0) - k

    def __rsub__(self, k):
        return k - _derive(self, 1, 0)

    def __neg__(self):
        raise UserError("-%s is not a derived dim; write B - %s with an int B" % (self.name,
                                                                                 self.name))

    def _not_linear(self, op: str, k):
        raise UserError("Dim(%r) %s %r is not a derived dim: derived dims are linear, A*%s + B "
                        "with ints A > 0 and B. For %s %s %r, give the other axis its own Dim "
                        "and let export find the relation, or use Dim.AUTO"
                        % (self.name, op, k, self.name, self.name, op, k))

    def __floordiv__(self, k):
        self._not_linear("//", k)

    def __mod__(self, k):
        self._not_linear("%", k)

    def __pow__(self, k):
        self._not_linear("**", k)

    def __truediv__(self, k):
        self._not_linear("/", k)

    __rfloordiv__ = __rmod__ = __rpow__ = __rtruediv__ = __floordiv__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dim) and (self.name, self.min, self.max) == \
            (other.name, other.min, other.max)

    def __hash__(self) -> int:
        return hash(("Dim", self.name))

    def __repr__(self) -> str:
        return fix_line_dim(self)


def fix_line_dim(d: Dim) -> str:
    """``Dim('d', max=16)``: single quotes, only bounds that differ from the default."""
    args = [repr(d.name)]
    if d.min is not None and d.min != 2:
        args.append("min=%d" % d.min)
    if d.max is not None:
        args.append("max=%d" % d.max)
    return "Dim(%s)" % ", ".join(args)


class DerivedDim:
    """``coeff*root + offset``: a size determined by a root ``Dim``."""

    __slots__ = ("root", "coeff", "offset")

    def __init__(self, root: Dim, coeff: int, offset: int) -> None:
        self.root = root
        self.coeff = coeff
        self.offset = offset

    @property
    def name(self) -> str:
        return str(self)

    def _new(self, coeff: int, offset: int) -> "DerivedDim":
        if coeff == 0:
            raise UserError("derived dim %s: multiplying by 0 makes a constant; use an int"
                            % self)
        if coeff < 0 and not (coeff == -1):
            raise UserError("derived dim from %r: the coefficient must be a positive int "
                            "(or the form B - d), got %d" % (self.root.name, coeff))
        return DerivedDim(self.root, coeff, offset)

    def __mul__(self, k):
        if isinstance(k, bool) or not isinstance(k, int):
            raise UserError("derived dim %s * %r: only int coefficients make a linear "
                            "derived dim (A*d + B)" % (self, k))
        if k <= 0:
            raise UserError("derived dim %s * %d: the coefficient must be a positive int"
                            % (self, k))
        return self._new(self.coeff * k, self.offset * k)

    __rmul__ = __mul__

    def __add__(self, k):
        if isinstance(k, bool) or not isinstance(k, int):
            raise UserError("derived dim %s + %r: only an int offset makes a linear derived "
                            "dim; Dims cannot be added to each other" % (self, k))
        return DerivedDim(self.root, self.coeff, self.offset + k)

    __radd__ = __add__

    def __sub__(self, k):
        if isinstance(k, bool) or not isinstance(k, int):
            raise UserError("derived dim %s - %r: only an int offset makes a linear derived "
                            "dim" % (self, k))
        return DerivedDim(self.root, self.coeff, self.offset - k)

    def __rsub__(self, k):
        if isinstance(k, bool) or not isinstance(k, int):
            raise UserError("%r - %s is not a linear derived dim" % (k, self))
        return self._new(-self.coeff, k - self.offset)

    def __neg__(self):
        return self._new(-self.coeff, -self.offset)

    def value(self, root_value: int) -> int:
        return self.coeff * root_value + self.offset

    def solve(self, value: int) -> Optional[int]:
        """The root value giving ``value``, or None if none does."""
        num = value - self.offset
        if num % self.coeff:
            return None
        return num // self.coeff

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DerivedDim) and (self.root, self.coeff, self.offset) == \
            (other.root, other.coeff, other.offset)

    def __hash__(self) -> int:
        return hash(("DerivedDim", self.root.name, self.coeff, self.offset))

    def __repr__(self) -> str:
        return format_linear(self.root.name, self.coeff, self.offset)


def format_linear(name: str, coeff: int, offset: int) -> str:
    if coeff == -1:
        return "%d - %s" % (offset, name)
    body = name if coeff == 1 else "%d*%s" % (coeff, name)
    if offset > 0:
        return "%s + %d" % (body, offset)
    if offset < 0:
        return "%s - %d" % (body, -offset)
    return body


def _derive(d: Dim, coeff: int, offset: int) -> DerivedDim:
    return DerivedDim(d, coeff, offset)


def dims(*names: str, min: Optional[int] = None, max: Optional[int] = None) -> Tuple[Dim, ...]:
    """``dims('a', 'b')``: one ``Dim`` per name, all with the same bounds."""
    return tuple(Dim(n, min=min, max=max) for n in names)


AxisSpec = Union[None, int, Dim, DerivedDim, Marker]
