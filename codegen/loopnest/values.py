"""The value walk of a loop nest: a node's value at coordinates, as the target's text.

Views map coordinates and recurse; pointwise nodes the kernel computes are inlined from
their inputs' values (the target renders the expression); everything else is loaded from
its buffer (the target renders the load); a reduction of the kernel is read at its own row
only.  Values are memoized per coordinates, and values that do not vary along the row are
hoisted (computed once per row).
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from symshape.capture.ir import Node
from symshape.expr import Expr

from ..fusion import numel
from .classify import Operand, operand_of
from .index import ZERO, Coordinates, Idx
from .plan import NoFuse, same_shape


_NAME = re.compile(r"[^0-9a-zA-Z_]")


def cname(s: str) -> str:
    s = _NAME.sub("_", s)
    return s if not s[:1].isdigit() else "v_" + s



class LoopEmitter(Coordinates):
    """The target-independent part of a kernel writer."""

    # ---------------------------------------------------------------- names
    def fresh(self, base: str = "v") -> str:
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
        name = self.scalars.get(e)
        if name is None:
            name = self.scalars[e] = "sc%d" % len(self.scalars)
        return name


    # ---------------------------------------------------------------- values
    def row_level(self, coords) -> bool:
        return self.spec.axes is not None and not any(c.deps & self.inner_vars
                                                      for c in coords)


    def value(self, n: Node, coords: List[Idx]) -> str:
        P = self.P
        kind = P.kind[n]
        if kind == "view":
            return self.value(n.inputs[0], self.view_coords(n, coords))
        key = (n, tuple(c.text for c in coords))
        row = self.row_level(coords)
        memo = self.row_memo if row else self.memo
        got = memo.get(key) or self.row_memo.get(key)
        if got is not None:
            return got
        spec = self.spec
        if n in self.red_vars or (kind == "red" and any(n is r for r in spec.reductions())):
            if n not in self.red_vars:
                raise NoFuse("%s read before it is reduced" % n.name)
            if [c.text for c in coords] != self.row_coords(n):
                raise NoFuse("%s read outside its own row" % n.name)
            return self.red_vars[n]
        inline = kind == "pw" and (not P.needs_array[n] or any(n is o for o in spec.outs()))
        if inline:
            ops: List[Optional[Operand]] = []
            for x in n.inputs:
                if type(x) is Node:
                    ops.append(Operand(self.value(x, self.bcast(x.shape, n.shape, coords)),
                                       x.dtype))
                elif type(x) is Expr:
                    ops.append(Operand(self.scalar(x), int, value=x))
                else:
                    ops.append(operand_of(x, "?"))
            text = self.pointwise_text(n, ops)
            note = n.name if n.name.split("_")[0] == n.op.split("_")[0] else \
                "%s (%s)" % (n.name, n.op)
        else:
            if kind not in ("input", "const", "lib", "pw", "red"):
                raise NoFuse("cannot load %s" % n.name)
            p = P.pos.get(n)
            if p is None or p >= spec.pos:
                raise NoFuse("%s is not computed before this kernel" % n.name)
            text, note = self.load_text(n, coords, row), ""
        v = self.emit(n.dtype, text, row, note)
        memo[key] = v
        return v


    def offset(self, shape, coords: List[Idx]) -> Idx:
        if same_shape(shape, self.spec.shape) and \
                [c.text for c in coords] == [c.text for c in self.dom]:
            lin = self.dom_linear()
            if lin is not None:
                return lin
        return self.horner(coords, shape)


    def dom_linear(self) -> Optional[Idx]:
        if self.spec.axes is None:
            return Idx("i", {"i"})
        if self.trailing:
            inner = numel([self.spec.shape[a] for a in self.spec.axes])
            if type(inner) is int and inner == 1:
                return Idx("row", {"row"})
            return Idx("(row * %s + j)" % self.size(inner), {"row", "j"})
        return None

    def row_out_coords(self, n: Node) -> List[Idx]:
        keep, _ = self.spec.row_shapes()
        axes = set(self.spec.axes)
        if same_shape(n.shape, keep):
            return [ZERO if k in axes else c for k, c in enumerate(self.dom)]
        return [c for k, c in enumerate(self.dom) if k not in axes]

    def row_coords(self, r: Node) -> List[str]:
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


    def _inline(self, n) -> bool:
        """Is ``n`` computed in this kernel from its inputs (not loaded)?"""
        return type(n) is Node and self.P.kind.get(n) == "pw" and (
            not self.P.needs_array[n] or any(n is o for o in self.spec.outs()))

    def merged_pairs(self) -> Dict[Node, Tuple[str, Node]]:
        """Adjacent reductions (r0, r1) of the row that one read of it computes:
        ``online``: r0 = max(x), r1 = sum(exp(x - r0)) (softmax, logsumexp);
        ``welford``: r0 = mean(x), r1 = mean or sum of (x - r0)**2 (layer norm, variance).
        x is the same per-element value in both, of dtype float32 or float64."""
        reds = self.spec.reductions()
        out: Dict[Node, Tuple[str, Node]] = {}
        for r0, r1 in zip(reds, reds[1:]):
            if r0 in out or any(r0 is v for _, v in out.values()):
                continue
            kind = self._merge_kind(r0, r1)
            if kind:
                out[r0] = (kind, r1)
        return out

    def _merge_kind(self, r0: Node, r1: Node) -> str:
        x = r0.inputs[0]
        if type(x) is not Node or not same_shape(x.shape, self.spec.shape):
            return ""
        dt = x.dtype
        if dt.name not in ("float32", "float64") or r0.dtype != dt or r1.dtype != dt:
            return ""
        t = r1.inputs[0]
        if not self._inline(t) or t.dtype != dt:
            return ""
        if r0.op == "max" and r1.op == "sum" and t.op == "exp":
            d = t.inputs[0]
            kind = "online"
        elif r0.op == "mean" and r1.op in ("mean", "sum"):
            if t.op == "power" and len(t.inputs) == 2 and type(t.inputs[1]) in (int, float) \
                    and t.inputs[1] == 2:
                d = t.inputs[0]
            elif t.op == "square" or (t.op == "multiply" and t.inputs[0] is t.inputs[1]):
                d = t.inputs[0]
            else:
                return ""
            kind = "welford"
        else:
            return ""
        if not (self._inline(d) and d.op == "subtract" and d.dtype == dt and
                d.inputs[0] is x and d.inputs[1] is r0):
            return ""
        return kind

