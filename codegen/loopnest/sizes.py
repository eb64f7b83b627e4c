"""The program's size ranges as kernel planning uses them, and Python's index
normalization (slice starts, negative indices) decided by them."""
from __future__ import annotations

from typing import Dict, Optional

from symshape.algebra.expr import Expr, OpAtom, mod, smax, smin, sub
from symshape.algebra.infinity import INT_OO
from symshape.algebra.ranges import ValueRange, bound


# --------------------------------------------------------------------------- ranges
class Ranges:
    """Value ranges of the program's symbols (unknown symbols: [0, int_oo])."""

    def __init__(self, ranges: Dict) -> None:
        self.ranges = dict(ranges)

    def of(self, s) -> ValueRange:
        """The range of symbol ``s``."""
        return self.ranges.get(s) or ValueRange(0, INT_OO)

    def bound(self, e) -> ValueRange:
        """A range holding every value of expression ``e``."""
        return bound(e, self.of)

    def simplify(self, e):
        """Min / Max at the top of ``e`` decided by the ranges (``Max(s0 - 1, 0)`` is
        ``s0 - 1`` when ``s0 >= 1``)."""
        if type(e) is not Expr:
            return e
        atom = e.as_atom()
        if atom is None or not isinstance(atom, OpAtom) or atom.kind not in ("Min", "Max"):
            return e
        args = list(atom.args)
        for a in args:
            if all(b is a or self._le(a, b) if atom.kind == "Min" else
                   b is a or self._le(b, a) for b in args):
                return a
        return e

    def _le(self, a, b) -> bool:
        return self.bound(sub(b, a)).lower >= 0


# --------------------------------------------------------------------------- classify
def slice_start(start, n, step: int, rg: Ranges):
    """Python's normalized start of ``slice(start, ., step)`` on an axis of size n."""
    if step > 0:
        if start is None:
            return 0
        sign = _sign(start, rg)
        if sign is None:
            return None
        return rg.simplify(smin(start, n) if sign >= 0 else smax(start + n, 0))
    if start is None:
        return rg.simplify(sub(n, 1))
    sign = _sign(start, rg)
    if sign is None:
        return None
    return rg.simplify(smin(start, sub(n, 1)) if sign >= 0 else smax(start + n, -1))


def norm_index(v, n, rg: Ranges):
    """Python's normalized integer index ``v`` on an axis of size n (``v % n`` when the
    ranges do not decide its sign)."""
    sign = _sign(v, rg)
    if sign is None:
        return mod(v, n)          # -n <= v < n, so v % n is the index
    return v if sign >= 0 else v + n


def _sign(v, rg: Ranges) -> Optional[int]:
    if type(v) is int:
        return 1 if v >= 0 else -1
    r = rg.bound(v)
    if r.lower >= 0:
        return 1
    if r.upper < 0:
        return -1
    return None

