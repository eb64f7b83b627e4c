"""Fusion: which nodes are evaluated together, block by block.

A *group* is a run of nodes that share a block domain: every member's shape starts with
the same ``prefix`` = sizes of axes ``0..k`` (the same expressions, not merely equal
values).  The group is evaluated in blocks: for each index of the outer axes ``0..k'-1``
and each range of rows ``lo:hi`` of a block axis ``k' <= k``, every member is computed on
its block (outer axes indexed away, rows sliced), temporaries living in block-sized
scratch buffers that stay in cache.  Any ``k' <= k`` is valid (each condition below at
``k`` implies it at ``k'``); the generated code picks at run time the outermost axis whose
trailing block fits the cache.  A group starts with the deepest ``k`` its first node
allows and lowers ``k`` when that admits a later node.  Members:

* elementwise ops (single-output ufuncs, ``astype``, ``where``, ``clip``: the op traits
  table's ``fuse="ew"``); an operand computed inside the group must have the member's rank
  (so its block lines up);
* reductions (``fuse="red"``) over axes ``> k`` (each row's result depends only on that
  row, and NumPy reduces a row the same way whether or not its neighbours are present:
  bit-identical);
* basic indexing whose first ``k+1`` items are full slices (a view of a block).

An operand from outside the group is aligned from the right; on each domain axis
``a <= k`` it must be *full* (the member's size there) or *broadcast* (size 1, or absent).
Full axes are indexed per block, broadcast axes are not.  When every member has the same
shape and every outside operand has that shape or none (0-d), the group is *flat*: all
arrays are viewed as 1-D and blocks are plain ranges.

Invariant: each member reads only values computed before it (members, or nodes emitted
before the group); a node that does not read any member may be hoisted before the group
instead of ending it (``Plan.items`` holds the resulting order).
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Set

import numpy as np

from symshape.capture.ir import Node
from symshape.capture.ir import IndexAttr
from symshape.capture.ops.traits import ROW_REDUCTIONS, TRAITS
from symshape.algebra.expr import mul

#: the reductions a group may hold (the traits table's: NumPy computes each row on its own)
REDUCTIONS = ROW_REDUCTIONS
_BAD_KINDS = set("OMmUSV")


def numel(shape) -> object:
    n = 1
    for s in shape:
        n = mul(n, s)
    return n


def ew_ufunc(node: Node) -> Optional[np.ufunc]:
    """The NumPy ufunc of an elementwise single-output ufunc node (NumPy-named: it is
    written ``np.<op>(..., out=)``), else None."""
    t = TRAITS.get(node.op)
    if t is not None and t.fuse == "ew" and t.ufunc is not None and \
            set(node.attrs) <= {"dtype"}:
        return t.ufunc
    return None


def _plain_dtype(node: Node) -> bool:
    if node.dtype is None or node.dtype.kind in _BAD_KINDS or node.shape is None:
        return False
    return all(i.dtype is not None and i.dtype.kind not in _BAD_KINDS for i in
               node.input_nodes())


def kind(node: Node) -> Optional[str]:
    """'ew' (elementwise), 'red' (reduction), 'view' (basic getitem) or None."""
    if not _plain_dtype(node) or "binds" in node.meta:
        return None
    t = TRAITS.get(node.op)
    role = None if t is None else t.fuse
    if role == "ew":
        return "ew" if t.ufunc is None or set(node.attrs) <= {"dtype"} else None
    if role == "red" and isinstance(node.attrs.get("axis"), tuple) and \
            set(node.attrs) <= {"axis", "keepdims", "dtype", "ddof"} and \
            not (t.reduce.half_acc and "dtype" not in node.attrs and
                 node.inputs[0].dtype == np.float16):
        # (a group writes its outputs with out=; NumPy's float16 mean sums in float32 and
        # rounds once, but into a float16 out= it rounds the sum first)
        return "red"
    if role == "view" and type(node.attrs.get("index")) is IndexAttr:
        return "view"
    return None


def _full_slice(i) -> bool:
    return type(i) is slice and i.start is None and i.stop is None and i.step is None


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


class Group:
    """A fused group; see the module docstring."""

    def __init__(self, k: int, prefix: tuple) -> None:
        self.k = k
        self.prefix = prefix
        self.nodes: List[Node] = []
        self.members: Set[Node] = set()
        self.outputs: List[Node] = []      # members needed after the group (never views)
        self.after: List[Node] = []        # views needed after the group, re-emitted there
        self.flat = False
        self.domain: tuple = prefix        # the largest member shape (for block sizes)

    # ------------------------------------------------------------------ membership
    def operand_ok(self, m: Node, d: int) -> bool:
        """Can outside value ``m``, right-aligned at offset ``d``, be split into blocks?"""
        for a in range(self.k + 1):
            ax = a - d
            if ax < 0:
                continue
            if ax >= len(m.shape):
                return False
            s = m.shape[ax]
            if not (_same(s, self.prefix[a]) or (type(s) is int and s == 1)):
                return False
        return True

    def accepts(self, n: Node) -> bool:
        kd = kind(n)
        if kd is None:
            return False
        k = self.k
        if len(n.shape) < k + 1 or not all(_same(a, b) for a, b in
                                           zip(n.shape[:k + 1], self.prefix)):
            return False
        ins = n.input_nodes()
        if kd == "ew":
            for m in ins:
                if m in self.members:
                    if len(m.shape) != len(n.shape):
                        return False
                elif not self.operand_ok(m, len(n.shape) - len(m.shape)):
                    return False
            return True
        src = ins[0] if len(ins) == 1 else None
        if src is None or src is not n.inputs[0] or len(src.shape) < k + 1:
            return False
        if not all(_same(a, b) for a, b in zip(src.shape[:k + 1], self.prefix)):
            return False
        if kd == "red":
            return all(a > k for a in n.attrs["axis"])
        items = n.attrs["index"].items
        return all(_full_slice(i) for i in items[:k + 1])

    def add(self, n: Node) -> None:
        self.nodes.append(n)
        self.members.add(n)

    @property
    def compute_nodes(self) -> List[Node]:
        return [n for n in self.nodes if kind(n) != "view"]


def _start(n: Node) -> Optional[Group]:
    """A group of ``n`` alone, with the deepest block axis ``n`` allows (the generated code
    picks, at run time, the outermost axis ``<= k`` whose trailing block fits in cache)."""
    kd = kind(n)
    if kd not in ("ew", "red") or len(n.shape) == 0:
        return None
    if kd == "red":
        src = n.inputs[0]
        if type(src) is not Node:
            return None
        limit = min(n.attrs["axis"])
        if limit == 0:
            return None
    else:
        limit = len(n.shape)
    for kk in range(limit - 1, -1, -1):
        g = Group(kk, tuple(n.shape[:kk + 1]))
        if g.accepts(n):
            g.add(n)
            return g
    return None


def _lowered(g: Group, n: Node) -> Optional[Group]:
    """``g`` with a shallower block axis that also admits ``n`` (members stay valid: every
    condition at axis k implies the same condition at any k' < k), or None."""
    for kk in range(g.k - 1, -1, -1):
        h = Group(kk, g.prefix[:kk + 1])
        if h.accepts(n):
            # copies: the caller may reject the lowered group, and ``g`` must stay as it was
            h.nodes = list(g.nodes)
            h.members = set(g.members)
            h.add(n)
            return h
    return None


def form_groups(nodes: Sequence[Node], hint: Callable, block: int, needed_after: Callable
                ) -> List[object]:
    """The emission order: a list of Nodes and Groups.

    ``needed_after(node, group)`` tells whether a member is used outside its group (by a
    later node, an output, a mutation).  Groups with fewer than two compute members are
    dissolved back into single nodes.
    """
    items: List[object] = []
    cur: Optional[Group] = None
    hoisted: List[Node] = []

    def close():
        nonlocal cur, hoisted
        items.extend(hoisted)
        hoisted = []
        if cur is not None:
            items.extend(_finish(cur, needed_after, hint))
        cur = None

    for n in nodes:
        if cur is not None and cur.accepts(n):
            cur.add(n)
            continue
        if cur is not None and kind(n) is not None:
            low = _lowered(cur, n)
            if low is not None and any(m in cur.members for m in _all_inputs(n)):
                cur = low
                continue
        if cur is not None and kind(n) is None and not any(
                m in cur.members for m in _all_inputs(n)):
            hoisted.append(n)
            continue
        close()
        cur = _start(n)
        if cur is None:
            items.append(n)
    close()
    return items


def _all_inputs(n: Node) -> List[Node]:
    """Array inputs, including those a subgraph (``cond`` branch) reaches."""
    return n.input_nodes()


def _finish(g: Group, needed_after: Callable, hint: Callable) -> List[object]:
    """Outputs, views re-emitted after the group, flatness; or dissolve a trivial group."""
    if len(g.compute_nodes) < 2:
        return list(g.nodes)
    outs: List[Node] = []
    after: List[Node] = []

    def need(m: Node):
        if kind(m) == "view":
            if m not in after:
                src = m.inputs[0]
                if src in g.members:
                    need(src)
                after.append(m)
        elif m not in outs:
            outs.append(m)

    for m in g.nodes:
        if needed_after(m, g):
            need(m)
    order = {n: i for i, n in enumerate(g.nodes)}
    g.outputs = sorted(outs, key=order.__getitem__)
    g.after = sorted(after, key=order.__getitem__)
    # the domain: the member with the most elements at the hinted sizes decides block rows
    g.domain = max((m.shape for m in g.nodes), key=lambda s: (_hinted(s, hint), len(s)))
    shape0 = g.nodes[0].shape
    g.flat = all(kind(m) == "ew" and len(m.shape) == len(shape0) and
                 all(_same(a, b) for a, b in zip(m.shape, shape0)) for m in g.nodes) and \
        all(_flat_operand(o, shape0) for m in g.nodes for o in m.input_nodes()
            if o not in g.members)
    if g.flat:
        g.domain = shape0
    return [g]


def _hinted(shape: tuple, hint: Callable) -> int:
    n = 1
    for s in shape:
        n *= max(1, hint(s))
    return n


def _flat_operand(o: Node, shape: tuple) -> bool:
    if len(o.shape) == 0:
        return True
    return len(o.shape) == len(shape) and all(_same(a, b) for a, b in zip(o.shape, shape))
