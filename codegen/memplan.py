"""The memory plan of the large-size path: which values get a planned buffer, and which.

A *planned* value is computed with ``out=`` into a buffer the plan owns: a single
out-capable node (single-output ufunc, ``astype``, ``clip``, ``matmul``) or an output of a
fused group.  Every other value is allocated by NumPy (or is a view).

*Storages.*  A planned value has its own storage.  Any other value may alias the storages
of its array inputs (views: ``reshape``, ``getitem``, ``transpose``...), except ops known to
return fresh arrays.  A storage is live until the last use of any value that may alias it.

*Escapes.*  A storage that a program output may alias escapes to the caller: it comes from
an output pool (``rt.take``: a fresh buffer, or one returned by an earlier call and since
dropped), and goes back to the pool after the call (``rt.give``).  Every other storage is
internal: it gets a *slot*, a scratch buffer that persists across calls, shared by values
whose lifetimes do not overlap and that have the same dtype and element count (the same
size expression).  An elementwise node may write into the slot of an operand whose life
ends at that node when both have the same shape (exact overlap is safe for ufuncs).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Set, Tuple

from symshape.capture.ir import Node

from .fusion import REDUCTIONS, Group, ew_ufunc, numel

FRESH = frozenset(("where", "clip", "astype", "copy", "matmul", "dot", "tensordot", "outer",
                   "concat", "stack", "index", "index_put", "setitem", "take",
                   "take_along_axis", "tile", "repeat", "pad", "roll", "zeros", "ones",
                   "empty", "full", "arange", "eye", "round", "argmax", "argmin", "cumsum",
                   "cumprod", "argwhere", "flatnonzero")) | REDUCTIONS

INF = 1 << 60


def out_capable(n: Node) -> bool:
    """Can ``n`` be computed with ``out=`` into a C-contiguous buffer of its shape?"""
    if n.shape is None or len(n.shape) == 0 or n.dtype is None or n.dtype.kind in "OMmUSV":
        return False
    return ew_ufunc(n) is not None or n.op in ("astype", "clip", "matmul")


def fresh(n: Node) -> bool:
    return n.op in FRESH or ew_ufunc(n) is not None


class Plan:
    def __init__(self) -> None:
        self.where: Dict[Node, Tuple[str, int]] = {}   # value -> ("pool", j) | ("slot", k)
        self.n_pools = 0
        self.n_slots = 0
        self.escapes: List[Node] = []                  # pooled values, in emission order
        self.inplace: Dict[Node, Node] = {}            # value -> operand whose slot it reuses


def item_inputs(item) -> List[Node]:
    if type(item) is Group:
        seen: Dict[Node, None] = {}
        for m in item.nodes:
            for i in m.input_nodes():
                if i not in item.members:
                    seen.setdefault(i, None)
        return list(seen)
    return item.input_nodes()


def item_values(item) -> List[Node]:
    return list(item.outputs) if type(item) is Group else [item]


def plan(items: List[object], outputs: Set[Node], keep: Set[Node],
         worth: Callable[[Node], bool]) -> Plan:
    """Assign buffers; ``outputs``: values returned to the caller; ``keep``: values needed
    until the end of the call (mutation write-backs, bound sizes)."""
    p = Plan()
    planned, last = _lifetimes(items, outputs, keep, worth)
    sid, stor, end = _storages(items, planned, last)
    escape: Set[int] = set()
    for v in outputs:
        escape |= stor.get(v, frozenset())
    # slots
    free: List[Tuple[int, object, object]] = []     # (slot, dtype, numel)
    busy: List[Tuple[int, int, object, object, Node]] = []  # (end, slot, dtype, numel, value)
    for i, v in planned:
        k = sid[v]
        free += [b[1:4] for b in busy if b[0] < i]
        busy = [b for b in busy if b[0] >= i]
        if k in escape:
            p.where[v] = ("pool", p.n_pools)
            p.n_pools += 1
            p.escapes.append(v)
            continue
        n = numel(v.shape)
        slot = _free_slot(free, v, n)
        if slot is None and type(items[i]) is not Group and ew_ufunc(v) is not None:
            slot = _dying_operand(busy, i, v, p)
        if slot is None:
            slot = p.n_slots
            p.n_slots += 1
        p.where[v] = ("slot", slot)
        busy.append((end[k], slot, v.dtype, n, v))
    return p


def _lifetimes(items, outputs, keep, worth):
    """The values given buffers of their own ((item index, value)) and the index of each
    value's last reader (INF: live to the end of the call)."""
    planned: List[Tuple[int, Node]] = []
    last: Dict[Node, int] = {}
    for i, item in enumerate(items):
        for v in item_inputs(item):
            last[v] = i
        for v in item_values(item):
            last.setdefault(v, i)
            if type(item) is Group or (out_capable(v) and worth(v)):
                planned.append((i, v))
    for v in outputs | keep:
        last[v] = INF
    return planned, last


def _storages(items, planned, last):
    """Each planned value's storage id, the storages every value may alias (views alias
    their inputs unless fresh), and the last use of each storage."""
    sid: Dict[Node, int] = {v: k for k, (_, v) in enumerate(planned)}
    stor: Dict[Node, frozenset] = {}
    end = [0] * len(planned)
    for i, item in enumerate(items):
        for v in item_values(item):
            if v in sid:
                stor[v] = frozenset((sid[v],))
            elif fresh(v):
                stor[v] = frozenset()
            else:
                s: Set[int] = set()
                for x in v.input_nodes():
                    s |= stor.get(x, frozenset())
                stor[v] = frozenset(s)
            for k in stor[v]:
                end[k] = max(end[k], last.get(v, i))
    return sid, stor, end


def _free_slot(free, v: Node, n):
    """A free slot of ``v``'s dtype and element count (taken from ``free``), or None."""
    for j, (s, dt, nn) in enumerate(free):
        if dt == v.dtype and type(nn) is type(n) and nn == n:
            del free[j]
            return s
    return None


def _dying_operand(busy, i: int, v: Node, p: Plan):
    """The slot of an operand of elementwise ``v`` whose last use is ``v`` itself (item
    ``i``), same dtype and shape: ``v`` is computed into it (recorded in ``p.inplace``)."""
    for j, (e, s, dt, nn, owner) in enumerate(busy):
        if e == i and dt == v.dtype and owner in v.input_nodes() and \
                same_shape(owner.shape, v.shape):
            p.inplace[v] = owner
            del busy[j]
            return s
    return None


def same_shape(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b))
