"""The value walk of a loop nest: a node's value at coordinates, as the target's text.

Views map coordinates and recurse; pointwise nodes the kernel computes are inlined from
their inputs' values (the target renders the expression); everything else is loaded from
its buffer (the target renders the load); a reduction of the kernel is read at its own row
only.  Values are memoized per coordinates, and values that do not vary along the row are
hoisted (computed once per row).  ``LoopEmitter`` holds this walk and the state every
target's kernel writer shares; a target subclasses it and supplies the hooks at the end
(how a size, a buffer, an expression, a load and a local value are spelled).
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Set, Tuple

from symshape.capture.ir import Node
from symshape.algebra.expr import Expr

from ..fusion import numel
from . import reductions
from .classify import Operand, operand_of
from .index import ZERO, Coordinates, Idx
from .plan import KernelSpec, NoFuse, Planner, same_shape

_NAME = re.compile(r"[^0-9a-zA-Z_]")


def cname(s: str) -> str:
    """``s`` as an identifier of C and Python alike."""
    s = _NAME.sub("_", s)
    return s if not s[:1].isdigit() else "v_" + s


class LoopEmitter(Coordinates):
    """The target-independent part of a kernel writer: the group's domain as coordinates
    (``dom``: ``c<axis>``, depending on the loop variable ``i`` of a pointwise kernel, or
    ``row`` / ``j`` for the kept / reduced axes of a row kernel), the walk from a node to its
    value, and the names, sizes and buffers a kernel collects on the way."""

    def __init__(self, spec: KernelSpec, planner: Planner) -> None:
        self.spec = spec
        self.P = planner
        self.rg = planner.rg
        self.nd = len(spec.shape)
        self.sizes: Dict[Any, str] = {}       # index-typed size arguments
        self.scalars: Dict[Any, str] = {}     # data scalars
        self.bufs: Dict[Node, str] = {}       # loaded arrays
        self.loads: List[Node] = []
        self.counter = 0
        self.memo: Dict[tuple, str] = {}      # values of the current loop body
        self.row_memo: Dict[tuple, str] = {}  # values computed once per row
        self.pre: List[str] = []              # lines of the row-level values
        self.body: List[str] = []             # lines of the loop body's values
        self.red_vars: Dict[Node, str] = {}   # the row's reductions computed so far
        self.names: Set[str] = set()
        self.index_exprs: List[Any] = []      # every index quantity (index width)
        red = set(spec.axes or ())
        self.dom: List[Idx] = []
        for k, s in enumerate(spec.shape):
            if type(s) is int and s == 1:
                self.dom.append(ZERO)
            else:
                loopvar = "j" if (spec.axes is not None and k in red) else \
                    ("row" if spec.axes is not None else "i")
                self.dom.append(Idx("c%d" % k, {"c%d" % k, loopvar}))
        self.inner_vars = {"j"} | {"c%d" % k for k in red}
        self.trailing = spec.axes is not None and \
            tuple(spec.axes) == tuple(range(self.nd - len(spec.axes), self.nd))

    # ---------------------------------------------------------------- names
    def fresh(self, base: str = "v") -> str:
        """A new local name."""
        self.counter += 1
        return "%s%d" % (base, self.counter)

    def unique(self, base: str) -> str:
        """A parameter name: ``in_`` / ``out_`` prefixed, so it never meets a local
        (c0, v1, a0, r0, t, w, i, j, row), a size (s0, n0, sc0) or a C function."""
        base = cname(base)
        name, i = base, 1
        while name in self.names:
            name = "%s_%d" % (base, i)
            i += 1
        self.names.add(name)
        return name

    def scalar(self, e) -> str:
        """The argument holding the data scalar ``e`` (a size read as a value)."""
        name = self.scalars.get(e)
        if name is None:
            name = self.scalars[e] = "sc%d" % len(self.scalars)
        return name

    # ---------------------------------------------------------------- values
    def row_level(self, coords) -> bool:
        """Do ``coords`` stay fixed along the row (a value computed once per row)?"""
        return self.spec.axes is not None and not any(c.deps & self.inner_vars
                                                      for c in coords)

    def value(self, n: Node, coords: List[Idx]) -> str:
        """The local holding node ``n`` at ``coords`` (NoFuse: this kernel cannot)."""
        kind = self.P.kind[n]
        if kind == "view":
            return self.value(n.inputs[0], self.view_coords(n, coords))
        key = (n, tuple(c.text for c in coords))
        row = self.row_level(coords)
        memo = self.row_memo if row else self.memo
        got = memo.get(key) or self.row_memo.get(key)
        if got is not None:
            return got
        if n in self.red_vars or (kind == "red" and any(n is r for r in
                                                        self.spec.reductions())):
            return self._reduced(n, coords)
        if self.inline(n):
            text, note = self.pointwise_text(n, self._operands(n, coords)), _note(n)
        else:
            text, note = self._loaded(n, kind, coords, row), ""
        v = self.emit(n.dtype, text, row, note)
        memo[key] = v
        return v

    def _reduced(self, n: Node, coords: List[Idx]) -> str:
        """A reduction of this kernel: readable after its phase, at its own row only."""
        if n not in self.red_vars:
            raise NoFuse("%s read before it is reduced" % n.name)
        if [c.text for c in coords] != self.row_coords(n):
            raise NoFuse("%s read outside its own row" % n.name)
        return self.red_vars[n]

    def _operands(self, n: Node, coords: List[Idx]) -> List[Optional[Operand]]:
        """The operands of pointwise ``n`` at ``coords`` (inputs broadcast to its shape)."""
        ops: List[Optional[Operand]] = []
        for x in n.inputs:
            if type(x) is Node:
                ops.append(Operand(self.value(x, self.bcast(x.shape, n.shape, coords)),
                                   x.dtype))
            elif type(x) is Expr:
                ops.append(Operand(self.scalar(x), int, value=x))
            else:
                ops.append(operand_of(x, "?"))
        return ops

    def _loaded(self, n: Node, kind: str, coords: List[Idx], row: bool) -> str:
        """The load of array ``n``, which an earlier step must have computed."""
        if kind not in ("input", "const", "lib", "pw", "red"):
            raise NoFuse("cannot load %s" % n.name)
        p = self.P.pos.get(n)
        if p is None or p >= self.spec.pos:
            raise NoFuse("%s is not computed before this kernel" % n.name)
        return self.load_text(n, coords, row)

    def inline(self, n) -> bool:
        """Is ``n`` computed in this kernel from its inputs (not loaded)?"""
        return type(n) is Node and self.P.kind.get(n) == "pw" and (
            not self.P.needs_array[n] or any(n is o for o in self.spec.outs()))

    def merged_pairs(self) -> Dict[Node, Tuple[str, Node]]:
        """The adjacent reductions of the row one read computes (``reductions.py``)."""
        return reductions.merged_pairs(self.spec, self.inline)

    # ---------------------------------------------------------------- the domain
    def offset(self, shape, coords: List[Idx]) -> Idx:
        """The C-order offset of ``coords`` in a contiguous array of ``shape``."""
        if same_shape(shape, self.spec.shape) and \
                [c.text for c in coords] == [c.text for c in self.dom]:
            lin = self.dom_linear()
            if lin is not None:
                return lin
        return self.horner(coords, shape)

    def dom_linear(self) -> Optional[Idx]:
        """The linear index of the domain's element where the loops name it (``i``, or a
        row kernel reducing trailing axes: ``row * inner + j``)."""
        if self.spec.axes is None:
            return Idx("i", {"i"})
        if self.trailing:
            inner = numel([self.spec.shape[a] for a in self.spec.axes])
            if type(inner) is int and inner == 1:
                return Idx("row", {"row"})
            return Idx("(row * %s + j)" % self.size(inner), {"row", "j"})
        return None

    def row_out_coords(self, n: Node) -> List[Idx]:
        """The coordinates of a root of the row's shape (with or without keepdims)."""
        keep, _ = self.spec.row_shapes()
        axes = set(self.spec.axes)
        if same_shape(n.shape, keep):
            return [ZERO if k in axes else c for k, c in enumerate(self.dom)]
        return [c for k, c in enumerate(self.dom) if k not in axes]

    def row_coords(self, r: Node) -> List[str]:
        """The coordinates at which reduction ``r`` is its row's value."""
        axes = set(self.spec.axes)
        keep = bool(r.attrs.get("keepdims"))
        out = []
        for k, c in enumerate(self.dom):
            if k in axes:
                if keep:
                    out.append("0")
            else:
                out.append(c.text)
        return out

    # ---------------------------------------------------------------- target hooks
    def size(self, e) -> str:
        """The kernel's name (or literal) for the size expression ``e``."""
        raise NotImplementedError

    def buffer(self, n: Node) -> str:
        """The parameter holding array ``n`` (recorded in ``loads``)."""
        raise NotImplementedError

    def pointwise_text(self, n: Node, ops: List[Optional[Operand]]) -> str:
        """The expression computing pointwise ``n`` on ``ops`` (NoFuse: none)."""
        raise NotImplementedError

    def load_text(self, n: Node, coords: List[Idx], row: bool) -> str:
        """The expression loading array ``n`` at ``coords`` (``row``: at row level)."""
        raise NotImplementedError

    def emit(self, dt, text: str, row: bool, note: str = "") -> str:
        """Declare a local of dtype ``dt`` holding ``text`` (in ``pre`` when ``row``)."""
        raise NotImplementedError


def _note(n: Node) -> str:
    """The comment naming an inlined node (and its op when the name does not)."""
    return n.name if n.name.split("_")[0] == n.op.split("_")[0] else "%s (%s)" % (n.name, n.op)
