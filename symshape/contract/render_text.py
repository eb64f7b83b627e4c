"""What an input-check record requires, in the user's names (no code, no run-time values):
the texts the failure calls carry (``y.shape[0] + 1``, ``4*dx``) and the guard a check
enforces (``x.shape[0] in [2, int_oo]``)."""
from __future__ import annotations

from typing import Dict, Tuple

from symshape.algebra.expr import IntLike, Sym, format_expr
from symshape.contract.records import (ArrayCheck, ClassCheck, CongruenceCheck, ConfiguredCheck, GuardCheck,
                      IntCheck, IntValue, KeysCheck, LenCheck, RangeCheck, RebindCheck,
                      RelationCheck, ScalarCheck, SizeCheck, StaticDim)


def zero(e: IntLike) -> bool:
    """Whether ``e`` is the int 0 (a bind without an offset)."""
    return type(e) is int and e == 0


class Names:
    """How messages call each root symbol: the Dim name, or the axis it was read from
    (``x.shape[1]``, ``(y.shape[0] - 1)/3``); filled by the writer as it binds."""

    def __init__(self, dim_names: Dict[Sym, str]) -> None:
        self.dim_names = dim_names
        self.origin: Dict[Sym, str] = {}
        # a root read off an axis as axis == a*s + rest: (a, rest, axis)
        self.solved: Dict[Sym, Tuple[int, IntLike, str]] = {}

    def user(self, s: Sym) -> str:
        return self.origin.get(s, self.dim_names.get(s, s.name))


class TextRenderer:
    """What a record requires, in the user's names (no code, no run-time values)."""

    def __init__(self, names: Names) -> None:
        self.names = names

    def expr(self, e: IntLike) -> str:
        return format_expr(e, self.names.user, py=True)

    def solved(self, s: Sym, a: int, rest: IntLike, axis: str) -> str:
        """How ``s`` is read off ``axis == a*s + rest``: ``(y.shape[0] - 1)/3``; with a
        negative ``a``, ``(rest - axis)/-a``: ``10 - x.shape[0]``, never ``/-1``."""
        if a < 0 and zero(rest):
            return "-%s/%d" % (axis, -a) if a != -1 else "-%s" % axis
        if a < 0:
            r = self.expr(rest)
            if type(rest) is not int:
                r = "(%s)" % r
            return "(%s - %s)/%d" % (r, axis, -a) if a != -1 else "%s - %s" % (r, axis)
        if zero(rest):
            return "%s/%d" % (axis, a) if a != 1 else axis
        r = self.expr(rest)
        if type(rest) is not int:
            r = "(%s)" % r
        elif rest < 0:
            return "(%s + %d)/%d" % (axis, -rest, a) if a != 1 else "%s + %d" % (axis, -rest)
        return "(%s - %s)/%d" % (axis, r, a) if a != 1 else "%s - %s" % (axis, r)

    def form(self, rec: CongruenceCheck) -> str:
        """``2*s1 + 1``: the form the axis must have; the root itself by its Dim name or
        symbol (it has no other name yet: this size is what defines it)."""
        s = rec.sym
        dims = self.names.dim_names
        # a root without a Dim name is "an integer k" to the user, not its symbol
        return format_expr(s.expr * rec.coeff + rec.rest,
                           lambda t: dims.get(s, "k") if t is s else self.names.user(t),
                           py=True)

    def range_subject(self, rec: RangeCheck) -> str:
        """``x.shape[0]``, or ``y.shape[0] (s1 = (y.shape[0] - 1)/2)`` for a solved root."""
        if rec.coeff == 1 and zero(rec.rest):
            return rec.axis
        return "%s (%s = %s)" % (rec.axis, rec.label or rec.sym.name,
                                 self.solved(rec.sym, rec.coeff, rec.rest, rec.axis))

    def guard(self, rec: GuardCheck) -> str:
        return rec.cond.format(self.names.user, py=True) + rec.note

    def describe(self, rec) -> str:
        """The guard a check record enforces: ``x.shape[0] == 5``,
        ``x.shape[0] in [2, int_oo] (Dim batch)``."""
        t = type(rec)
        if t is ArrayCheck:
            return "%s: ndarray, ndim %s, dtype %s" % (rec.path, rec.ndim, rec.dtype)
        if t is StaticDim:
            return "%s == %s" % (rec.axis, rec.size)
        if t is RangeCheck:
            label = (" (Dim %s)" % rec.label) if isinstance(rec.label, str) else ""
            return "%s in [%s, %s]%s" % (self.range_subject(rec), rec.lo, rec.hi, label)
        if t is RelationCheck:
            return "%s == %s" % (rec.axis, self.expr(rec.expr))
        if t is CongruenceCheck:
            return "%s == %s" % (rec.axis, self.form(rec))
        if t is GuardCheck:
            return self.guard(rec)
        if t is SizeCheck:
            return rec.text
        if t is IntCheck:
            return "type(%s) is int" % rec.path
        if t is IntValue:
            return "%s == %r" % (rec.path, rec.value)
        if t is ScalarCheck:
            return "%s == %r" % (rec.path, rec.value)
        if t is ClassCheck:
            return "isinstance(%s, %s)" % (rec.path, rec.cls.__name__)
        if t is ConfiguredCheck:
            return "%s is the default traced" % rec.param
        if t is LenCheck:
            return "%s: %s of length %d" % (rec.path, rec.kind, rec.n)
        if t is KeysCheck:
            return "%s: dict with keys {%s}" % (rec.path, ", ".join(sorted(map(repr, rec.keys))))
        if t is RebindCheck:
            return "%s %s is the object traced" % (rec.what, rec.name)
        if hasattr(rec, "guard_text"):     # a record of its own kind (the JIT's state guards)
            return rec.guard_text()
        raise TypeError("not a check record: %r" % (rec,))
