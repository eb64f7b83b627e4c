"""Advanced indexing: integer arrays and boolean masks, in ``[]``, ``take`` and
``take_along_axis``, and their functional ``__setitem__``.

NumPy's rule: the advanced indices (arrays, and integers once an array is present)
broadcast together to a shape B.  If they are adjacent in the index, B replaces them in
place; otherwise B comes first.  A boolean mask over k axes stands for k integer arrays of
one unbacked length ``u`` (its number of True elements).
"""
from __future__ import annotations

from typing import Any, List

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symint import SymInt, describe
from symshape.userframe import user_frame
from symshape.rules import rule

from ..ir import ArrRef, IndexAttr
from ..tracer import METHOD_OPS, TracedArray, Tracer, implements, to_expr
from .datadep import bind, boolean_mask_count
from .elementwise import broadcast_shapes, node_input
from .indexing import as_int, is_int, assigned_value, bound_constant_index, slice_length
from .shape import norm_axis, reshape
from .registry import defop


_MARK = "\x00%d\x00"


def _fill(text: str, args) -> str:
    for i, a in enumerate(args[1:]):
        text = text.replace(_MARK % i, a)
    return text


defop("index", emit=lambda a, k: "%s[%s]" % (a[0], _fill(k["index"], a)),
      doc="advanced indexing with integer arrays / boolean masks")
defop("index_put", emit=lambda a, k: "_rt.setitem(%s, np.s_[%s], %s)" % (
    a[0], _fill(k["index"], a[:-1]), a[-1]),
    doc="a copy with the advanced-indexed elements replaced")
defop("take", emit=lambda a, k: "np.take(%s, %s, axis=%s)" % (a[0], a[1], k["axis"]),
      doc="np.take along an axis")
defop("take_along_axis", "np.take_along_axis({0}, {1}, axis={axis})",
      doc="np.take_along_axis")


def _frame():
    return where(user_frame(3))


def _items(idx) -> list:
    return list(idx) if isinstance(idx, tuple) else [idx]


def _as_index_array(t: Tracer, v):
    if type(v) is TracedArray:
        return v
    arr = np.asarray(v)
    if arr.dtype == object or arr.dtype.kind not in "iub":
        raise UserError("arrays used as indices must be of integer or boolean type, got %s%s"
                        % (arr.dtype, _frame()))
    return t.constant(arr)


def _index_items(t: Tracer, raw: list) -> List[Any]:
    """The index's items: None, ..., slices and ints as they are, arrays (traced, NumPy,
    lists) as traced index arrays."""
    items: List[Any] = []
    for v in raw:
        if v is None or v is Ellipsis or isinstance(v, slice) or is_int(v):
            items.append(v)
        elif type(v) is TracedArray or isinstance(v, (np.ndarray, list, tuple)):
            items.append(_as_index_array(t, v))
        else:
            raise UserError("unsupported index %r%s" % (v, _frame()))
    return items


def _expanded(x: TracedArray, items: List[Any]) -> List[Any]:
    """The items with the ellipsis (or the end) filled with full slices up to x's rank."""
    consumed = sum(it.ndim if type(it) is TracedArray and it.dtype == bool else 1
                   for it in items if it is not None and it is not Ellipsis)
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise UserError("an index can only have a single ellipsis ('...')%s" % _frame())
    if consumed > x.ndim:
        raise UserError("too many indices for array: array is %d-dimensional, but %d were "
                        "indexed%s" % (x.ndim, consumed, _frame()))
    expanded: List[Any] = []
    for it in items:
        if it is Ellipsis:
            expanded.extend([slice(None)] * (x.ndim - consumed))
        else:
            expanded.append(it)
    if not any(it is Ellipsis for it in items):
        expanded.extend([slice(None)] * (x.ndim - consumed))
    return expanded


class _Walk:
    """The axes walked in order: the output's pieces (sizes, or "B" where the broadcast
    shape of the advanced entries stands), the normalised items, the index arrays."""

    def __init__(self):
        self.positions: List[int] = []      # index into `parts` of each advanced entry
        self.b_shapes: List[tuple] = []
        self.parts: List[Any] = []
        self.norm: List[Any] = []
        self.arrays: List[TracedArray] = []

    def advanced(self, b_shape: tuple, entry) -> None:
        """An advanced entry: its shape joins B, which stands at this output position."""
        self.b_shapes.append(b_shape)
        self.positions.append(len(self.parts))
        self.parts.append("B")
        self.norm.append(entry)

    def item(self, t: Tracer, x: TracedArray, it, dim: int) -> int:
        """Take one item at input axis ``dim``; the number of input axes it covers."""
        if it is None:
            self.parts.append(1)
            self.norm.append(None)
            return 0
        if isinstance(it, slice):
            n = x.shape[dim]
            self.parts.append(slice_length(n, as_int(it.start), as_int(it.stop),
                                           as_int(it.step)))
            self.norm.append(slice(to_expr(as_int(it.start)), to_expr(as_int(it.stop)),
                                   to_expr(as_int(it.step))))
            return 1
        if type(it) is TracedArray and it.dtype == bool:
            k = it.ndim
            for j in range(k):
                if not (it.shape[j] == x.shape[dim + j]):
                    raise UserError("boolean index did not match indexed array along axis %d; "
                                    "size of axis is %s but size of boolean index is %s%s"
                                    % (dim + j, x.shape[dim + j], it.shape[j], _frame()))
            self.advanced((boolean_mask_count(t, it),), ArrRef(len(self.arrays)))
            self.arrays.append(it)
            return k
        if type(it) is TracedArray:
            bound_constant_index(it, x.shape[dim], dim)
            self.advanced(it.shape, ArrRef(len(self.arrays)))
            self.arrays.append(it)
            return 1
        v = as_int(it)
        n = x.shape[dim]
        if not (v < n) or not (v >= -n):
            raise UserError("index %s is out of bounds for axis %d with size %s%s"
                            % (describe(v), dim, describe(n), _frame()))
        self.advanced((), to_expr(v))
        return 1


def analyze(t: Tracer, x: TracedArray, idx):
    """(output shape, normalised index items, index arrays, broadcast shape B)."""
    expanded = _expanded(x, _index_items(t, _items(idx)))
    walk = _Walk()
    dim = 0
    for it in expanded:
        dim += walk.item(t, x, it, dim)
    positions = walk.positions
    B = broadcast_shapes(walk.b_shapes, "shape mismatch: indexing arrays")
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    shape: List[Any] = []
    placed = False
    if not adjacent:
        shape.extend(B)
        placed = True
    for p in walk.parts:
        if p == "B":
            if not placed:
                shape.extend(B)
                placed = True
            continue
        shape.append(p)
    return tuple(shape), walk.norm, walk.arrays, B


@rule("index.advanced")
def getitem(t: Tracer, x: TracedArray, idx):
    shape, norm, arrays, _ = analyze(t, x, idx)
    out = t.emit("index", (x.node,) + tuple(a.node for a in arrays),
                 {"index": IndexAttr(norm)}, shape, x.dtype)
    _bind_counts(t, out, shape, arrays)
    return out


def _bind_counts(t: Tracer, out: TracedArray, shape, arrays) -> None:
    """A mask's count symbol is bound by the first node whose shape shows it."""
    for a in arrays:
        if a.dtype != bool:
            continue
        u = boolean_mask_count(t, a)
        e = u.expr
        bound = t.__dict__.setdefault("_bound_syms", set())
        if e in bound:
            continue
        for i, s in enumerate(shape):
            if type(s) is SymInt and s.expr == e:
                bind(out, u, i)
                bound.add(e)
                break


def setitem(t: Tracer, x: TracedArray, idx, value) -> None:
    shape, norm, arrays, _ = analyze(t, x, idx)
    v = assigned_value(t, value, shape)
    res = t.emit("index_put", (x.node,) + tuple(a.node for a in arrays) + (node_input(v),),
                 {"index": IndexAttr(norm)}, x.shape, x.dtype)
    t.rebind(x, res)


@rule("index.take")
@implements(np.take)
def _take(t, a, indices, axis=None, out=None, mode="raise"):
    if out is not None or mode != "raise":
        raise UserError("np.take(..., out=/mode=) is not supported while tracing%s" % _frame())
    x = t.operand(a)
    i = _as_index_array(t, indices) if not isinstance(indices, (int, np.integer, SymInt)) \
        else indices
    if axis is None:
        x = reshape(t, x, (-1,))
        axis = 0
    ax = norm_axis(axis, x.ndim)
    if type(i) is not TracedArray:
        return getitem(t, x, (slice(None),) * ax + (i,))
    bound_constant_index(i, x.shape[ax], ax)
    shape = x.shape[:ax] + i.shape + x.shape[ax + 1:]
    return t.emit("take", (x.node, i.node), {"axis": ax}, shape, x.dtype)


@rule("index.take_along_axis")
@implements(np.take_along_axis)
def _take_along_axis(t, arr, indices, axis=-1):
    x = t.operand(arr)
    i = _as_index_array(t, indices)
    if i.ndim != x.ndim:
        raise UserError("take_along_axis: indices and arr must have the same number of "
                        "dimensions%s" % _frame())
    ax = norm_axis(axis, x.ndim)
    others = broadcast_shapes([tuple(s for k, s in enumerate(x.shape) if k != ax),
                               tuple(s for k, s in enumerate(i.shape) if k != ax)],
                              "take_along_axis: arr and indices")
    shape = list(others)
    shape.insert(ax, i.shape[ax])
    return t.emit("take_along_axis", (x.node, i.node), {"axis": ax}, tuple(shape), x.dtype)


METHOD_OPS.update(advanced_getitem=getitem, advanced_setitem=setitem)
