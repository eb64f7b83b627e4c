"""Sizes: symbolic shapes as ``dim_param`` text, and size expressions computed in the graph.

``DimText`` writes a size as users read it: a root symbol by its ``Dim`` name (``batch``;
an AUTO / DYNAMIC axis keeps ``s0``), a data-dependent one as ``u0``, a derived size as a
Python expression over those names (``2*batch + 1``, ``batch // 2``, ``min(16, seq)``).

``SizeValues`` computes sizes in the graph as int64 scalars: each symbol's value is a
tensor (read off an input's shape by the input check, or off a node that makes a
data-dependent size), and an expression is folded into ``Add`` / ``Mul`` / ``Div`` / ``Mod`` /
``Min`` / ``Max`` nodes.  Sizes are never negative where they are used as sizes, and
``FloorDiv`` / ``Mod`` of sizes are by positive constants or sizes, so Python's floor
division is computed exactly (``Div`` truncates: a correction is applied when the
dividend can be negative).
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence

import numpy as np

from symshape.algebra.expr import Expr, OpAtom, Sym, format_expr

from .graph import GraphWriter

INT64 = np.int64


class DimText:
    """Size expressions as ``dim_param`` text in the user's names."""

    def __init__(self, dim_names: Mapping[Sym, str]) -> None:
        self.dim_names = dict(dim_names)

    def name(self, s: Sym) -> str:
        """The dim_param name of symbol ``s``."""
        return self.dim_names.get(s, s.name)

    def text(self, e) -> str:
        """Size ``e`` as dim_param text."""
        return format_expr(e, self.name, py=True)

    def dims(self, shape) -> Optional[list]:
        """ONNX dims: an int as ``dim_value``, an expression as ``dim_param``."""
        if shape is None:
            return None
        return [d if type(d) is int else self.text(d) for d in shape]


class SizeValues:
    """Size symbols and expressions as int64 scalar tensors of one graph (a subgraph sees
    its parents' values: ONNX bodies read the enclosing graph's names)."""

    def __init__(self, w: GraphWriter, parent: Optional["SizeValues"] = None) -> None:
        self.w = w
        self.parent = parent
        self.syms: Dict[Sym, str] = {}
        self._cache: Dict[object, str] = {}

    def child(self, w: GraphWriter) -> "SizeValues":
        """The sizes of a subgraph written by ``w``."""
        return SizeValues(w, self)

    def bind(self, s: Sym, tensor: str) -> None:
        """Symbol ``s`` has the value of scalar int64 ``tensor`` from here on."""
        self.syms[s] = tensor

    def _lookup(self, key):
        v: Optional[SizeValues] = self
        while v is not None:
            got = v.syms.get(key) if type(key) is Sym else v._cache.get(key)
            if got is not None:
                return got
            v = v.parent
        return None

    def has(self, s: Sym) -> bool:
        """Whether symbol ``s`` has a value here."""
        return self._lookup(s) is not None

    def scalar(self, e) -> str:
        """``e`` (an int or an expression) as an int64 scalar tensor."""
        if type(e) is not Expr and type(e) is not Sym:
            return self.w.const(int(e), INT64)
        got = self._lookup(e)
        if got is not None:
            return got
        if type(e) is Sym:
            raise KeyError(e)
        out = self._fold(e)
        self._cache[e] = out
        return out

    def _fold(self, e: Expr) -> str:
        w = self.w
        total = None
        for term, c in e.terms:
            prod = None
            for atom in term:
                v = self.scalar(atom) if type(atom) is Sym else self._atom(atom)
                prod = v if prod is None else w.op("Mul", [prod, v], "size")
            if c != 1:
                prod = w.op("Mul", [prod, w.const(c, INT64)], "size")
            total = prod if total is None else w.op("Add", [total, prod], "size")
        if e.const:
            total = w.op("Add", [total, w.const(e.const, INT64)], "size")
        return total

    def _atom(self, a: OpAtom) -> str:
        got = self._lookup(a)
        if got is not None:
            return got
        w = self.w
        args = [self.scalar(x) for x in a.args]
        if a.kind in ("Min", "Max"):
            out = w.op(a.kind, args, "size")
        else:
            out = floor_divmod(w, args[0], args[1], a.kind == "Mod")
        self._cache[a] = out
        return out

    def vector(self, sizes: Sequence) -> str:
        """A 1-D int64 tensor of ``sizes`` (a shape)."""
        if all(type(d) is int for d in sizes):
            return self.w.const(np.array([int(d) for d in sizes], np.int64), base="shape")
        key = ("vec",) + tuple(sizes)
        got = self._lookup(key)
        if got is not None:
            return got
        one = self.w.const(np.array([0], np.int64), base="axes0")
        parts = [self.w.op("Unsqueeze", [self.scalar(d), one], "dim") for d in sizes]
        out = self.w.op("Concat", parts, "shape", axis=0)
        self._cache[key] = out
        return out


def floor_divmod(w: GraphWriter, a: str, b: str, mod: bool) -> str:
    """Python's ``a // b`` (or ``a % b``) of int64 scalars, ``b != 0``: ONNX ``Div``
    truncates, so the quotient is lowered by one where the remainder is non-zero and the
    signs differ (``Mod`` with ``fmod=0`` already has Python's sign)."""
    if mod:
        return w.op("Mod", [a, b], "size", fmod=0)
    q = w.op("Div", [a, b], "size")
    r = w.op("Mod", [a, b], "size", fmod=1)
    zero = w.const(0, INT64)
    off = w.op("And", [w.op("Not", [w.op("Equal", [r, zero])]),
                       w.op("Xor", [w.op("Less", [a, zero]), w.op("Less", [b, zero])])])
    return w.op("Sub", [q, w.op("Cast", [off], to=7)], "size")
