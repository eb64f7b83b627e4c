"""Index arithmetic of a loop nest: coordinates as index expressions, and how views,
broadcasting and reshapes map them.

A value is computed at *coordinates*: index expressions of the kernel's loop variables
(``Idx``: the text and the loop variables it depends on).  Views map coordinates (a slice
``a:b:k`` maps c to ``start + k*c``, ``None`` drops an axis, reshape linearizes and
decodes), broadcasting maps an axis of size 1 to coordinate 0 (a stride of 0).  A linear
index is the Horner form of the coordinates over the buffer's symbolic shape.  The text is
valid C and Python alike (``+``, ``*``, ``%`` and parentheses); a target names its sizes
(``size``) and its integer division of non-negative indices (``DIV``).
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from symshape.capture.ir import Node

from ..fusion import numel
from .plan import NoFuse, same_shape
from .sizes import norm_index, slice_start


# --------------------------------------------------------------------------- index text
class Idx:
    """An index expression and the loop variables it depends on; ``part`` = (lin, sizes,
    k) when it is coordinate k of the linear index ``lin`` decoded over ``sizes``."""

    __slots__ = ("text", "deps", "part")

    def __init__(self, text: str, deps=frozenset(), part=None) -> None:
        self.text = text
        self.deps = frozenset(deps)
        self.part = part

    @property
    def zero(self) -> bool:
        """Is this the constant index 0?"""
        return self.text == "0"

    def __repr__(self) -> str:
        return self.text


ZERO = Idx("0")


class Coordinates:
    """Coordinate maps of one kernel (a mixin of the emitter: it needs ``size``, ``DIV``
    and the ranges ``rg``)."""

    DIV = "/"           # integer division of non-negative indices in the kernel's language

    def bcast(self, shape, out_shape, coords) -> List[Idx]:
        """Coordinates in an operand of ``shape`` broadcast to ``out_shape``."""
        off = len(out_shape) - len(shape)
        return [ZERO if (type(s) is int and s == 1) else coords[off + k]
                for k, s in enumerate(shape)]

    def horner(self, coords: Sequence[Idx], sizes) -> Idx:
        """The C-order linear index of ``coords`` in ``sizes``; re-linearizing a decoded
        linear index over the same sizes gives it back (``(c / s) * s + c % s`` is c)."""
        real = [(k, c) for k, (c, s) in enumerate(zip(coords, sizes))
                if not (type(s) is int and s == 1)]
        if real and all(c.part is not None and c.part[0] is real[0][1].part[0] and
                        c.part[2] == k for k, c in real):
            lin, dsizes, _ = real[0][1].part
            if same_shape(dsizes, sizes):
                return lin
        acc: Optional[str] = None
        deps: set = set()
        for c, s in zip(coords, sizes):
            if acc is not None and not (type(s) is int and s == 1):
                acc = "%s * %s" % (par(acc), self.size(s))
            if not c.zero:
                acc = c.text if acc is None else "%s + %s" % (acc, c.text)
                deps |= c.deps
        return ZERO if acc is None else Idx(par(acc) if "+" in acc or "*" in acc else acc,
                                            deps)

    def decode(self, lin: Idx, sizes) -> List[Idx]:
        """The C-order coordinates of linear index ``lin`` in ``sizes``."""
        if lin.zero:
            return [ZERO] * len(sizes)
        out = []
        first = next((k for k, s in enumerate(sizes) if not (type(s) is int and s == 1)),
                     None)
        for k, s in enumerate(sizes):
            if type(s) is int and s == 1:
                out.append(ZERO)
                continue
            p = numel(sizes[k + 1:])
            t = lin.text if (type(p) is int and p == 1) else "(%s %s %s)" % (
                lin.text, self.DIV, self.size(p))
            if k != first:
                t = "(%s %% %s)" % (t, self.size(s))
            out.append(Idx(t, lin.deps, (lin, tuple(sizes), k)))
        return out

    def view_coords(self, n: Node, coords: List[Idx]) -> List[Idx]:
        """The coordinates in view ``n``'s source of its element at ``coords``."""
        rule = VIEW_RULES.get(n.op)
        if rule is None:
            raise NoFuse("view %s" % n.op)
        return rule(self, n, coords)

    def _getitem(self, n: Node, coords: List[Idx]) -> List[Idx]:
        """A basic index: slices map affinely, integers pin an axis, None adds one."""
        S = n.inputs[0].shape
        out_k = 0
        ins: List[Idx] = []
        for it in n.attrs["index"].items:
            if it is None:
                out_k += 1
                continue
            size = S[len(ins)]
            if isinstance(it, slice):
                step = 1 if it.step is None else it.step
                start = slice_start(it.start, size, step, self.rg)
                c = coords[out_k]
                out_k += 1
                ins.append(self.affine(start, step, c))
            else:
                v = norm_index(it, size, self.rg)
                ins.append(Idx(self.size(v)) if not (type(v) is int and v == 0) else ZERO)
        while len(ins) < len(S):
            ins.append(coords[out_k])
            out_k += 1
        return ins

    def _expand_dims(self, n: Node, coords: List[Idx]) -> List[Idx]:
        axes = set(n.attrs["axis"])
        return [c for k, c in enumerate(coords) if k not in axes]

    def _squeeze(self, n: Node, coords: List[Idx]) -> List[Idx]:
        axes = set(n.attrs["axis"])
        it = iter(coords)
        return [ZERO if k in axes else next(it) for k in range(len(n.inputs[0].shape))]

    def _permute_dims(self, n: Node, coords: List[Idx]) -> List[Idx]:
        ins = [ZERO] * len(n.inputs[0].shape)
        for j, a in enumerate(n.attrs["axes"]):
            ins[a] = coords[j]
        return ins

    def _broadcast_to(self, n: Node, coords: List[Idx]) -> List[Idx]:
        return self.bcast(n.inputs[0].shape, n.shape, coords)

    def _reshape(self, n: Node, coords: List[Idx]) -> List[Idx]:
        return self.reshape_coords(tuple(n.inputs[0].shape), tuple(n.shape), coords)

    def affine(self, start, step: int, c: Idx) -> Idx:
        """``start + step * c`` (a slice's element c)."""
        st = None if (type(start) is int and start == 0) else self.size(start)
        if c.zero:
            return Idx(st) if st is not None else ZERO
        term = c.text if step == 1 else "%s * %s" % (self.size(step), c.text)
        if st is None:
            return Idx(term if step == 1 else "(%s)" % term, c.deps)
        return Idx("(%s + %s)" % (st, term), c.deps)

    def reshape_coords(self, S: tuple, O: tuple, coords: List[Idx]) -> List[Idx]:
        """Coordinates in shape ``S`` of the element at ``coords`` of its reshape to
        ``O``: the axes both shapes share at either end map one to one, the middle is
        linearized over ``O`` and decoded over ``S``."""
        i = 0
        while i < min(len(S), len(O)) and same_shape(S[i:i + 1], O[i:i + 1]):
            i += 1
        j = 0
        while j < min(len(S), len(O)) - i and same_shape(S[len(S) - 1 - j:len(S) - j],
                                                         O[len(O) - 1 - j:len(O) - j]):
            j += 1
        lin = self.horner(coords[i:len(O) - j], O[i:len(O) - j])
        mid = self.decode(lin, S[i:len(S) - j])
        return list(coords[:i]) + mid + list(coords[len(O) - j:])


#: view op -> how it maps coordinates to its source's
VIEW_RULES = {"getitem": Coordinates._getitem, "expand_dims": Coordinates._expand_dims,
              "squeeze": Coordinates._squeeze, "permute_dims": Coordinates._permute_dims,
              "broadcast_to": Coordinates._broadcast_to, "reshape": Coordinates._reshape}


def par(s: str) -> str:
    """``s`` parenthesized unless it is one term already."""
    return "(%s)" % s if (" " in s and not (s.startswith("(") and balanced(s[1:-1]))) else s


def balanced(s: str) -> bool:
    """Do the parentheses of ``s`` balance (never closing more than opened)?"""
    d = 0
    for ch in s:
        d += ch == "("
        d -= ch == ")"
        if d < 0:
            return False
    return d == 0

