"""Chunk locality: along which axes a program can run chunk by chunk.

Every axis of every value in the graph gets a *class*: two axes are in one class when a
chunk of one lines up with the same chunk of the other (an elementwise op's output axis and
the operand axis it reads, a transpose's permuted axes, a matmul's free axes, axes whose
size is the same size symbol).  A node *crosses* a class when an element of its output
along that class depends on elements of another chunk: a reduction over the axis, a
matmul's contraction, a reshape, a shift or a gather (partial slices, integer indices,
index arrays), and every op without a rule below.

A set of *active* classes (those the caller's arrays are chunked along) lets a node run
per chunk when:

* its op has a locality rule (``LOCAL_RULES``: elementwise, reductions, basic indexing,
  matmul, transposes, expand/squeeze, broadcast, uniform creation),
* it crosses no active class, and
* each active class's size symbol appears in the node only as the size of that class's
  axes: bound per chunk, the symbol then means "rows of this chunk" everywhere the node
  uses it.  A size used as a value (``x * n``, ``x[:, :n]``) or inside a compound size
  (``2*n``) makes the node global.

A class is *blockable* when its size is one root size symbol: per chunk the generated code
binds that symbol to the chunk's size.  Static sizes are fixed in generated code, so a
class of static size is never blockable (export the axis as dynamic to chunk along it).
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import numpy as np

from symshape.capture.ir import ArrRef, IndexAttr, Node, Subgraph
from symshape.algebra.expr import Expr, Sym
from symshape.errors import UserError

from .fusion import REDUCTIONS, ew_ufunc

Axis = Tuple[Node, int]

#: creation ops whose values do not depend on the position (any chunk of zeros is zeros)
UNIFORM_CREATION = frozenset(("zeros", "ones", "empty", "full", "zeros_like", "ones_like",
                              "empty_like", "full_like"))
_ELEMENTWISE = frozenset(("astype", "where", "clip", "copy"))
#: attrs that hold the node's own output shape (checked through the shape itself)
_SHAPE_ATTRS = {"zeros": "shape", "ones": "shape", "empty": "shape", "full": "shape",
                "broadcast_to": "shape"}
_PLAIN_ATTR = (bool, int, float, complex, str, type(None), np.dtype, type, type(Ellipsis))


def _is_one(s) -> bool:
    return type(s) is int and s == 1


class _UnionFind:
    def __init__(self) -> None:
        self.parent: Dict[Axis, Axis] = {}

    def find(self, a: Axis) -> Axis:
        p = self.parent.setdefault(a, a)
        if p != a:
            p = self.parent[a] = self.find(p)
        return p

    def union(self, a: Axis, b: Axis) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


# --------------------------------------------------------------------------- op rules
# Each rule gets (node, unify(out_axis, input_node, input_axis), cross(input_node, axis))
# and links the node's output axes to the input axes they read chunk for chunk.

def _broadcast_rule(n: Node, unify, cross, operands: Iterable[Node], out_rank: int,
                    out_offset: int = 0) -> None:
    """Right-aligned broadcasting: an operand axis of the output's size lines up with it;
    a size-1 operand axis is broadcast (read whole, by every chunk)."""
    for m in operands:
        d = out_rank - len(m.shape)
        for j, s in enumerate(m.shape):
            if j + d < 0:
                cross(m, j)
                continue
            if _is_one(s) and not _is_one(n.shape[out_offset + j + d]):
                continue
            unify(out_offset + j + d, m, j)


def _rule_elementwise(n, unify, cross) -> None:
    _broadcast_rule(n, unify, cross, n.input_nodes(), len(n.shape))


def _rule_reduction(n, unify, cross) -> None:
    src = n.inputs[0]
    axes = set(a % max(1, len(src.shape)) for a in n.attrs["axis"])
    keep = bool(n.attrs.get("keepdims"))
    q = 0
    for j in range(len(src.shape)):
        if j in axes:
            cross(src, j)
            if keep:
                q += 1
            continue
        unify(q, src, j)
        q += 1


def _rule_getitem(n, unify, cross) -> None:
    src = n.inputs[0]
    items = list(n.attrs["index"].items)
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k:k + 1] = [slice(None)] * (len(src.shape) - used)
    p = q = 0
    for i in items:
        if i is None:
            q += 1
        elif isinstance(i, slice):
            if i.start is None and i.stop is None and i.step is None:
                unify(q, src, p)
            else:
                cross(src, p)            # a shift or a window: rows move between chunks
            p += 1
            q += 1
        else:
            cross(src, p)                # an integer index picks one row of one chunk
            p += 1
    while p < len(src.shape):
        unify(q, src, p)
        p += 1
        q += 1


def _rule_setitem_owned(n, unify, cross) -> None:
    """``y[idx] = v`` into a loop's own array (``setitem_owned``): the result has ``y``'s
    axes; an axis written whole (``:``) stays with the value's axis it receives, an axis
    written at an index or a window is crossed (the row written lies in one chunk)."""
    target, value = n.inputs[0], n.inputs[1]
    items = list(n.attrs["index"].items)
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k:k + 1] = [slice(None)] * (len(target.shape) - used)
    items += [slice(None)] * (len(target.shape) - used)
    sel = []                    # per axis of the selection: the target axis, whole or not
    p = 0
    for i in items:
        if i is None:
            sel.append(None)
        elif isinstance(i, slice):
            whole = i.start is None and i.stop is None and i.step is None
            sel.append((p, whole))
            p += 1
        else:
            cross(target, p)
            p += 1
    for j in range(len(target.shape)):
        unify(j, target, j)
    for s in sel:
        if s is not None and not s[1]:
            cross(target, s[0])
    if type(value) is not Node:
        return
    off = len(sel) - len(value.shape)
    for k in range(len(value.shape)):
        s = sel[k + off] if k + off >= 0 else None
        if s is None or not s[1]:
            cross(value, k)
        elif not (_is_one(value.shape[k]) and not _is_one(target.shape[s[0]])):
            unify(s[0], value, k)


def _rule_matmul(n, unify, cross) -> None:
    a, b = n.inputs[0], n.inputs[1]
    ra, rb, R = len(a.shape), len(b.shape), len(n.shape)
    if ra == 1 and rb == 1:
        cross(a, 0)
        cross(b, 0)
        return
    if ra == 1:
        cross(a, 0)
        cross(b, rb - 2)
        unify(R - 1, b, rb - 1)
        _batch(n, unify, cross, [(b, rb - 2)], R - 1)
        return
    if rb == 1:
        cross(a, ra - 1)
        cross(b, 0)
        unify(R - 1, a, ra - 2)
        _batch(n, unify, cross, [(a, ra - 2)], R - 1)
        return
    cross(a, ra - 1)
    cross(b, rb - 2)
    unify(R - 2, a, ra - 2)
    unify(R - 1, b, rb - 1)
    _batch(n, unify, cross, [(a, ra - 2), (b, rb - 2)], R - 2)


def _batch(n, unify, cross, parts, out_batch: int) -> None:
    """Batch axes of matmul operands broadcast against each other like elementwise ops."""
    for m, k in parts:
        d = out_batch - k
        for j in range(k):
            if _is_one(m.shape[j]) and not _is_one(n.shape[j + d]):
                continue
            unify(j + d, m, j)


def _rule_permute(n, unify, cross) -> None:
    src = n.inputs[0]
    for j, a in enumerate(n.attrs["axes"]):
        unify(j, src, a % len(src.shape))


def _kept_axes(rank: int, dropped):
    """(axis of the ``rank``-dimensional side, the same axis on the side without the
    ``dropped`` axes) for every axis that both sides have."""
    gone = set(a % rank for a in dropped)
    return [(j, q) for q, j in enumerate(j for j in range(rank) if j not in gone)]


def _rule_expand(n, unify, cross) -> None:
    src = n.inputs[0]
    for j, p in _kept_axes(len(n.shape), n.attrs["axis"]):
        unify(j, src, p)


def _rule_squeeze(n, unify, cross) -> None:
    src = n.inputs[0]
    for j, q in _kept_axes(len(src.shape), n.attrs["axis"]):
        unify(q, src, j)


def _rule_creation(n, unify, cross) -> None:
    """Uniform values: every chunk is the same constant; its axes join whatever class the
    values they combine with belong to."""


def _rule_broadcast_to(n, unify, cross) -> None:
    _broadcast_rule(n, unify, cross, [n.inputs[0]], len(n.shape))


def _rule_default(n, unify, cross) -> None:
    for m in n.input_nodes():
        if m.shape is not None:
            for j in range(len(m.shape)):
                cross(m, j)


def _reduction_form(n: Node) -> bool:
    return isinstance(n.attrs.get("axis"), tuple) and len(n.inputs) == 1 and \
        set(n.attrs) <= {"axis", "keepdims", "dtype", "ddof"}


def _basic_index(n: Node) -> bool:
    idx = n.attrs.get("index")
    return type(idx) is IndexAttr and len(n.input_nodes()) == 1 and \
        not any(isinstance(i, ArrRef) for i in idx.items)


#: op -> (the form the rule needs, rule); elementwise ufuncs, reductions and uniform
#: creation are recognised by family in ``rule_of``
RULES = {
    "getitem": (_basic_index, _rule_getitem),
    "setitem_owned": (lambda n: len(n.inputs) == 2 and type(n.inputs[0]) is Node and
                      type(n.attrs.get("index")) is IndexAttr and
                      not any(isinstance(i, ArrRef) for i in n.attrs["index"].items),
                      _rule_setitem_owned),
    "matmul": (lambda n: len(n.inputs) == 2 and len(n.input_nodes()) == 2, _rule_matmul),
    "permute_dims": (lambda n: isinstance(n.attrs.get("axes"), tuple), _rule_permute),
    "expand_dims": (lambda n: isinstance(n.attrs.get("axis"), tuple), _rule_expand),
    "squeeze": (lambda n: isinstance(n.attrs.get("axis"), tuple), _rule_squeeze),
    "broadcast_to": (lambda n: len(n.input_nodes()) == 1, _rule_broadcast_to),
}


def _plain(n: Node) -> bool:
    return n.shape is not None and n.dtype is not None and n.dtype.kind not in "OV"


def _for_loop_rule(n: Node):
    """A loop over a symbolic count (``for_loop``) runs chunk by chunk along the axes of a
    size its body treats locally (a batch the body's elementwise ops and row reductions
    never mix): every other axis of its operands is crossed (the rows the loop walks, the
    axes a matmul contracts).  None: a bound of the loop that cannot be inspected."""
    sub = n.attrs.get("body")
    if not isinstance(sub, Subgraph) or len(n.inputs) != 6:
        return None
    bounds: Set = set()
    for v in n.inputs[:3]:
        _collect(v, bounds)
    if None in bounds:
        return None
    body = ChunkInfo(sub.graph.nodes)
    index = sub.inputs[0].name if sub.inputs else None
    compute = [m for m in body.nodes if m.op not in ("input", "constant")]
    batch = {sym for sym, c in body.class_of_symbol.items()
             if sym not in bounds and sym.name != index and
             all(body.local(m, frozenset((c,))) for m in compute)}

    def rule(n, unify, cross) -> None:
        for m in n.input_nodes():
            for j, d in enumerate(m.shape or ()):
                if (d.as_symbol() if type(d) is Expr else None) not in batch:
                    cross(m, j)
    return rule


def rule_of(n: Node):
    """The locality rule of a node, or None when it has none (it then crosses every axis it
    reads and runs globally)."""
    if n.op == "for_loop":
        return _for_loop_rule(n)
    if n.op == "tuple_get" and type(n.inputs[0]) is Node and n.inputs[0].op == "for_loop" \
            and _plain(n):
        # a loop's result: its axes join the classes of their sizes (the loop's rule says
        # which of those it keeps local)
        return _rule_creation
    if not _plain(n) or "binds" in n.meta or not all(_plain(m) for m in n.input_nodes()):
        return None
    if any(isinstance(v, Subgraph) for v in n.attrs.values()):
        return None
    if n.op in UNIFORM_CREATION:
        return _rule_creation
    if ew_ufunc(n) is not None or n.op in _ELEMENTWISE:
        return _rule_elementwise
    if n.op in REDUCTIONS:
        return _rule_reduction if _reduction_form(n) else None
    form, rule = RULES.get(n.op, (None, None))
    return rule if form is not None and form(n) else None


# --------------------------------------------------------------------------- analysis
class ChunkInfo:
    """Axis classes of a graph, what crosses them, and which nodes can run per chunk."""

    def __init__(self, nodes: List[Node]) -> None:
        self.nodes = [n for n in nodes if n.shape is not None]
        uf = _UnionFind()
        self.crosses: Dict[Node, List[Axis]] = {}
        self.rules: Dict[Node, object] = {}
        by_symbol: Dict[Sym, Axis] = {}
        for n in self.nodes:
            for j in range(len(n.shape)):
                uf.find((n, j))
            if n.op in ("input", "constant"):
                continue
            rule = rule_of(n)
            self.rules[n] = rule
            crossed: List[Axis] = []
            rule = rule or _rule_default
            rule(n, lambda j, m, k, n=n: uf.union((n, j), (m, k)),
                 lambda m, k: crossed.append((m, k)))
            self.crosses[n] = crossed
        # axes of the same size symbol must be chunked alike: one class
        for n in self.nodes:
            for j, s in enumerate(n.shape):
                sym = s.as_symbol() if type(s) is Expr else None
                if sym is not None:
                    first = by_symbol.setdefault(sym, (n, j))
                    uf.union(first, (n, j))
        self.cls: Dict[Axis, Axis] = {a: uf.find(a) for a in list(uf.parent)}
        sizes: Dict[Axis, Set] = {}
        for (n, j), c in self.cls.items():
            sizes.setdefault(c, set()).add(n.shape[j])
        #: class -> its size symbol, for blockable classes
        self.symbol: Dict[Axis, Sym] = {}
        for c, ss in sizes.items():
            if len(ss) == 1:
                (s,) = ss
                sym = s.as_symbol() if type(s) is Expr else None
                if sym is not None:
                    self.symbol[c] = sym
        self.class_of_symbol: Dict[Sym, Axis] = {s: c for c, s in self.symbol.items()}
        self._uses: Dict[Node, FrozenSet[Sym]] = {}

    # ------------------------------------------------------------------ queries
    def axis_class(self, n: Node, j: int) -> Axis:
        return self.cls[(n, j)]

    def blockable(self, c: Axis) -> bool:
        return c in self.symbol

    def crossed_classes(self, n: Node) -> Set[Axis]:
        return {self.cls[a] for a in self.crosses.get(n, ())}

    def value_symbols(self, n: Node) -> FrozenSet[Sym]:
        """Symbols the node uses other than as the size of one of its own axes (sizes as
        values, slice bounds, sizes in attributes); ``None`` in the set means an attribute
        that cannot be inspected (treated as using every symbol)."""
        got = self._uses.get(n)
        if got is None:
            out: Set = set()
            skip = _SHAPE_ATTRS.get(n.op)
            # a loop's row shapes are sizes of its own results; its body is checked by
            # its rule (_for_loop_rule)
            for x in (n.inputs[:3] if n.op == "for_loop" else n.inputs):
                _collect(x, out)
            for k, v in n.attrs.items():
                if k != skip and n.op != "for_loop":
                    _collect(v, out)
            got = self._uses[n] = frozenset(out)
        return got

    def local(self, n: Node, active: FrozenSet[Axis]) -> bool:
        """Can ``n`` run chunk by chunk along the ``active`` classes?"""
        if self.rules.get(n) is None:
            return False
        if n.op == "tuple_get" and n.inputs[0].op == "for_loop" and \
                not self.local(n.inputs[0], active):
            return False                # a part of a loop runs where the loop runs
        if self.crossed_classes(n) & active:
            return False
        syms = {self.symbol[c]: c for c in active}
        uses = self.value_symbols(n)
        if None in uses and syms:
            return False
        if uses & set(syms):
            return False
        for m in [n] + n.input_nodes():
            for j, s in enumerate(m.shape):
                if type(s) is not Expr:
                    continue
                hit = s.free_symbols & set(syms)
                if not hit:
                    continue
                sym = s.as_symbol()
                if sym is None or self.cls[(m, j)] != syms.get(sym):
                    return False
        return True

    def mentions(self, n: Node, sym: Sym) -> bool:
        if None in self.value_symbols(n) or sym in self.value_symbols(n):
            return True
        for m in [n] + n.input_nodes():
            for s in m.shape:
                if type(s) is Expr and sym in s.free_symbols:
                    return True
        return False

    def _first_nonlocal(self, c: Axis) -> Optional[Node]:
        """The first node that reads across chunks of the blockable class ``c``."""
        sym = self.symbol[c]
        active = frozenset((c,))
        for n in self.nodes:
            if n.op in ("input", "constant"):
                continue
            if self.mentions(n, sym) and not self.local(n, active):
                return n
        return None

    def program_local(self, c: Axis) -> bool:
        """Is every node of the program local along class ``c`` (whole program per chunk)?"""
        return self.blockable(c) and self._first_nonlocal(c) is None

    def why_not(self, c: Axis) -> Optional[str]:
        """Why class ``c`` is not program-local (the first node that prevents it)."""
        if not self.blockable(c):
            return "its size is not a single dynamic size"
        n = self._first_nonlocal(c)
        if n is None:
            return None
        where = (" at %s" % n.source) if n.source else ""
        return "%s%s reads across chunks" % (n.op, where)


def _collect(v, out: Set) -> None:
    t = type(v)
    if t is Expr:
        out.update(v.free_symbols)
    elif t is Node or isinstance(v, _PLAIN_ATTR):
        return
    elif t is tuple or t is list:
        for x in v:
            _collect(x, out)
    elif t is slice:
        _collect(v.start, out)
        _collect(v.stop, out)
        _collect(v.step, out)
    elif t is IndexAttr:
        for x in v.items:
            _collect(x, out)
    elif isinstance(v, np.ndarray) or isinstance(v, np.generic):
        return
    else:
        out.add(None)


def chunkable_axes(ep) -> Dict[str, tuple]:
    """Per user input path, the axes along which the whole program is local: chunking the
    input along them (and nothing else) runs the program as one task per chunk.  Takes an
    ExportedProgram, or an ``ss.compile`` function (its latest compiled variant)."""
    variants = getattr(ep, "variants", None)
    if isinstance(variants, list):
        if not variants:
            raise UserError("chunkable_axes: %r has not been called yet, so no program is "
                            "compiled; call it once, or pass ss.export(...)" % (ep,))
        ep = variants[-1].program
    graph = getattr(ep, "graph", None)
    if graph is None or not hasattr(graph, "inputs"):
        raise UserError("chunkable_axes takes an ExportedProgram (from ss.export) or an "
                        "ss.compile function, got %s" % type(ep).__name__)
    info = ChunkInfo(ep.graph.nodes)
    out: Dict[str, tuple] = {}
    for n in ep.graph.inputs:
        path = n.attrs.get("path", n.name)
        if n.shape is None:
            continue
        out[path] = tuple(j for j in range(len(n.shape))
                          if info.program_local(info.axis_class(n, j)))
    return out
