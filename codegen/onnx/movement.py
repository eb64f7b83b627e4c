"""Creation, shape and data-movement ops: reshape (``allowzero=1``: size-0 axes stay),
transposes, basic and advanced indexing, functional writes, gathers, ``concat``,
``matmul``.

Basic indexing is one ``Slice`` (Python's clamping of bounds is ONNX's), ``Gather`` per
integer item and one ``Unsqueeze`` for the ``None`` items.  A functional write
(``setitem``, ``index_put``) indexes a grid of flat positions (``arange(size)`` in
``x``'s shape) the same way and scatters the values there (``ScatterElements``), so every
index a read supports, a write supports too.  Advanced indexing moves the indexed axes to
the front, broadcasts the index arrays (a boolean mask becomes its ``NonZero`` rows) and
gathers with ``GatherND``; the broadcast axes land where NumPy puts them.
"""
from __future__ import annotations

from typing import List

import numpy as np

from symshape.capture.ir import ArrRef, Node
from symshape.algebra.expr import Expr, Sym

from .context import Ctx, Refusal, refuse_dtype
from .dtypes import BOOL, ELEM, INT64, compute_dtype

BIG = np.iinfo(np.int64).max
SMALL = np.iinfo(np.int64).min
MATMUL = frozenset(("int32", "int64", "uint32", "uint64", "float32", "float64"))


def _is_size(v) -> bool:
    return type(v) in (int, Expr, Sym) or isinstance(v, np.integer)


def _axes(cx: Ctx, axes) -> str:
    return cx.w.const(np.array(list(axes), np.int64), base="axes")


# --------------------------------------------------------------------------- creation
def full(cx: Ctx, node: Node) -> str:
    """``zeros`` / ``ones`` / ``empty`` (as zeros) / ``full``: ``ConstantOfShape``
    (``Expand`` of a computed fill)."""
    dt = node.dtype
    shape = cx.shape_of(node.attrs["shape"])
    if node.op == "full":
        v = node.inputs[0]
        if type(v) is Node or type(v) in (Expr, Sym):
            return cx.out(cx.w.op("Expand", [cx.operand(v, dt), shape], "full"))
        fill = np.asarray(v).astype(dt)
    else:
        fill = np.ones((), dt) if node.op == "ones" else np.zeros((), dt)
    from onnx import numpy_helper
    return cx.out(cx.w.op("ConstantOfShape", [shape], node.op,
                          value=numpy_helper.from_array(fill.reshape(1))))


def arange(cx: Ctx, node: Node) -> str:
    """``arange`` of sizes: ``Range`` in int64, cast to the dtype."""
    a = node.attrs
    if not all(_is_size(a[k]) for k in ("start", "stop", "step")):
        raise Refusal("an arange with non-integer bounds")
    r = cx.w.op("Range", [cx.sizes.scalar(a["start"]), cx.sizes.scalar(a["stop"]),
                          cx.sizes.scalar(a["step"])], "arange")
    return cx.out(r if node.dtype == INT64 else cx.cast(r, node.dtype))


def eye(cx: Ctx, node: Node) -> str:
    """``eye``: ``EyeLike`` of an (N, M) zero matrix."""
    a = node.attrs
    dt = node.dtype
    zeros = cx.w.op("ConstantOfShape", [cx.sizes.vector((a["N"], a["M"]))], "zeros")
    r = cx.w.op("EyeLike", [zeros], "eye", k=int(a["k"]), dtype=ELEM[INT64.name])
    return cx.out(cx.cast(r, dt))


# --------------------------------------------------------------------------- shapes
def reshape(cx: Ctx, node: Node) -> str:
    """``reshape`` to the node's shape (``allowzero=1``: size-0 axes stay 0)."""
    return cx.out(cx.w.op("Reshape", [cx.value(node.inputs[0]), cx.shape_of(node)],
                          "reshape", allowzero=1))


def permute_dims(cx: Ctx, node: Node) -> str:
    """``permute_dims`` as ``Transpose``."""
    return cx.out(cx.w.op("Transpose", [cx.value(node.inputs[0])], "permute",
                          perm=[int(a) for a in node.attrs["axes"]]))


def expand_dims(cx: Ctx, node: Node) -> str:
    """``expand_dims`` as ``Unsqueeze``."""
    return cx.out(cx.w.op("Unsqueeze", [cx.value(node.inputs[0]),
                                        _axes(cx, node.attrs["axis"])], "expand_dims"))


def squeeze(cx: Ctx, node: Node) -> str:
    """``squeeze`` of the given size-1 axes."""
    axes = node.attrs["axis"]
    x = cx.value(node.inputs[0])
    if not axes:
        return cx.out(cx.w.op("Identity", [x], "squeeze"))
    return cx.out(cx.w.op("Squeeze", [x, _axes(cx, axes)], "squeeze"))


def broadcast_to(cx: Ctx, node: Node) -> str:
    """``broadcast_to`` as ``Expand`` to the node's shape."""
    return cx.out(cx.w.op("Expand", [cx.operand(node.inputs[0], node.dtype),
                                     cx.shape_of(node)], "broadcast_to"))


def concat(cx: Ctx, node: Node) -> str:
    """``concat`` with every part cast to the result dtype."""
    parts = [cx.operand(x, node.dtype) for x in node.inputs[0]]
    return cx.out(cx.w.op("Concat", parts, "concat", axis=int(node.attrs["axis"])))


def matmul(cx: Ctx, node: Node) -> str:
    """``matmul`` (ONNX's has NumPy's 1-D and batch rules), narrow integers and bools widened."""
    dt = node.dtype
    comp = compute_dtype(dt, MATMUL)
    if comp is None:
        raise refuse_dtype("matmul", dt)
    a, b = (cx.operand(x, dt) for x in node.inputs)
    if comp != dt:
        a, b = cx.cast(a, comp), cx.cast(b, comp)
    r = cx.w.op("MatMul", [a, b], "matmul")
    if dt == BOOL:
        r = cx.w.op("Not", [cx.w.op("Equal", [r, cx.w.const(0, comp)])])
    elif comp != dt:
        r = cx.cast(r, dt)
    return cx.out(r)


# --------------------------------------------------------------------------- basic indexing
def _expand_ellipsis(items, ndim: int) -> list:
    """The items with ``...`` (and the missing trailing axes) as full slices."""
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    out = []
    for i in items:
        out.extend([slice(None)] * (ndim - used) if i is Ellipsis else [i])
    if not any(i is Ellipsis for i in items):
        out.extend([slice(None)] * (ndim - used))
    return out


def basic_index(cx: Ctx, x: str, items, ndim: int) -> str:
    """``x[items]`` for a basic index (ints and sizes, slices, ``None``, ``...``)."""
    items = _expand_ellipsis(items, ndim)
    w = cx.w
    starts, ends, axes, steps, ints = [], [], [], [], []
    ax = 0
    for it in items:
        if it is None:
            continue
        if isinstance(it, slice):
            step = 1 if it.step is None else it.step
            if type(step) is not int:
                raise Refusal("a slice with a symbolic step")
            if it.start is not None or it.stop is not None or step != 1:
                lo = (0 if step > 0 else BIG) if it.start is None else it.start
                hi = (BIG if step > 0 else SMALL) if it.stop is None else it.stop
                starts.append(lo)
                ends.append(hi)
                axes.append(ax)
                steps.append(step)
        else:
            ints.append((ax, it))
        ax += 1
    if axes:
        x = w.op("Slice", [x, cx.sizes.vector(starts), cx.sizes.vector(ends),
                           _axes(cx, axes), _axes(cx, steps)], "slice")
    for a, i in sorted(ints, key=lambda t: -t[0]):
        x = w.op("Gather", [x, cx.sizes.scalar(i)], "index", axis=a)
    news = []
    pos = 0
    for it in items:
        if it is None:
            news.append(pos)
            pos += 1
        elif isinstance(it, slice):
            pos += 1
    if news:
        x = w.op("Unsqueeze", [x, _axes(cx, news)], "newaxis")
    if not axes and not ints and not news:
        x = w.op("Identity", [x], "view")
    return x


def getitem(cx: Ctx, node: Node) -> str:
    """Basic indexing (``basic_index``)."""
    x = node.inputs[0]
    return cx.out(basic_index(cx, cx.value(x), node.attrs["index"].items, len(x.shape)))


def _flat_grid(cx: Ctx, x: Node) -> str:
    """``arange(x.size).reshape(x.shape)``: every element's flat position."""
    n = 1
    for d in x.shape:
        n = n * d
    r = cx.w.op("Range", [cx.sizes.scalar(0), cx.sizes.scalar(n), cx.sizes.scalar(1)], "pos")
    return cx.w.op("Reshape", [r, cx.shape_of(x)], "grid", allowzero=1)


def _scatter(cx: Ctx, x: Node, positions: str, value) -> str:
    """A copy of ``x`` with the elements at flat ``positions`` set to ``value``
    (broadcast to the positions' shape)."""
    w = cx.w
    flat_shape = w.const(np.array([-1], np.int64), base="flat")
    v = w.op("Expand", [cx.operand(value, x.dtype), w.op("Shape", [positions])], "value")
    data = w.op("Reshape", [cx.value(x), flat_shape], "flat")
    r = w.op("ScatterElements", [data, w.op("Reshape", [positions, flat_shape]),
                                 w.op("Reshape", [v, flat_shape])], "scatter", axis=0)
    return w.op("Reshape", [r, cx.shape_of(x)], "written", allowzero=1)


def setitem(cx: Ctx, node: Node) -> str:
    """``x[index] = value`` (basic index), as a scatter at the indexed flat positions."""
    x, value = node.inputs
    grid = _flat_grid(cx, x)
    pos = basic_index(cx, grid, node.attrs["index"].items, len(x.shape))
    return cx.out(_scatter(cx, x, pos, value))


# --------------------------------------------------------------------------- advanced
def _is_mask(it, arrays: List[Node]) -> bool:
    return type(it) is ArrRef and arrays[it.i].dtype == BOOL


def _full_items(items, arrays: List[Node], ndim: int) -> list:
    """The index items with the ellipsis, and the axes left out at the end, as full slices
    (a boolean mask takes as many axes as it has)."""
    consumed = 0
    for it in items:
        if _is_mask(it, arrays):
            consumed += len(arrays[it.i].shape)
        elif it is not None and it is not Ellipsis:
            consumed += 1
    flat = []
    for it in items:
        if it is Ellipsis:
            flat.extend([slice(None)] * (ndim - consumed))
        else:
            flat.append(it)
    flat.extend([slice(None)] * (ndim - sum(
        len(arrays[i.i].shape) if _is_mask(i, arrays) else
        (0 if i is None else 1) for i in flat)))
    return flat


def _new_axes(cx: Ctx, x: str, flat: list, arrays: List[Node], ndim: int) -> tuple:
    """(x, items, ndim) with the new axes (None) made: a new axis is a full slice of a
    size-1 axis, x[None, i] is x[None][:, i]."""
    if not any(i is None for i in flat):
        return x, flat, ndim
    news, pos = [], 0
    for i in flat:
        if i is None:
            news.append(pos)
        pos += len(arrays[i.i].shape) if _is_mask(i, arrays) else 1
    x = cx.w.op("Unsqueeze", [x, _axes(cx, news)], "newaxis")
    flat = [slice(None) if i is None else i for i in flat]
    return x, flat, ndim + len(news)


def _per_axis(cx: Ctx, flat: list, arrays: List[Node]) -> tuple:
    """(per input axis: its slice, or its index tensor (int64); the index tensors' ranks):
    a boolean mask gives one index tensor per axis it covers (its NonZero rows)."""
    w = cx.w
    per_axis: List[object] = []
    idx_ranks: List[int] = []
    for it in flat:
        if type(it) is ArrRef:
            arr = arrays[it.i]
            if arr.dtype == BOOL:
                nz = w.op("NonZero", [cx.value(arr)], "mask")
                for k in range(len(arr.shape)):
                    per_axis.append(w.op("Gather", [nz, cx.sizes.scalar(k)], "mask_rows",
                                         axis=0))
                    idx_ranks.append(1)
            else:
                per_axis.append(cx.operand(arr, INT64))
                idx_ranks.append(len(arr.shape))
        elif isinstance(it, slice):
            per_axis.append(it)
        else:
            per_axis.append(cx.sizes.scalar(it))
            idx_ranks.append(0)
    return per_axis, idx_ranks


def _gather_indexed(cx: Ctx, x: str, per_axis: list, idx_ranks: List[int], ndim: int) -> str:
    """The indexed axes (slices already applied) gathered with GatherND: negative indices
    normalised, the index tensors broadcast to one shape, the result's axes in NumPy's
    order (adjacent index arrays stay in place, others go first)."""
    w = cx.w
    adv = [i for i, p in enumerate(per_axis) if not isinstance(p, slice)]
    rest = [i for i in range(ndim) if i not in adv]
    xshape = w.op("Shape", [x])
    zero = cx.sizes.scalar(0)
    norm = []
    for a in adv:
        i = per_axis[a]
        dim = w.op("Gather", [xshape, cx.sizes.scalar(a)], "dim", axis=0)
        norm.append(w.op("Where", [w.op("Less", [i, zero]), w.op("Add", [i, dim]), i]))
    base = None
    for i in norm:
        z = w.op("Mul", [i, zero])
        base = z if base is None else w.op("Add", [base, z])
    last = w.const(np.array([-1], np.int64))
    stacked = w.op("Concat", [w.op("Unsqueeze", [w.op("Add", [i, base]), last])
                              for i in norm], "indices", axis=-1)
    xt = x if adv == list(range(len(adv))) else w.op("Transpose", [x], perm=adv + rest)
    r = w.op("GatherND", [xt, stacked], "gathered")
    nb = max(idx_ranks) if idx_ranks else 0
    adjacent = adv == list(range(adv[0], adv[0] + len(adv)))
    if adjacent and adv[0] > 0:
        p = adv[0]
        rest_out = list(range(nb, nb + len(rest)))
        perm = rest_out[:p] + list(range(nb)) + rest_out[p:]
        r = w.op("Transpose", [r], perm=perm)
    return r


def advanced_index(cx: Ctx, x: str, shape, items, arrays: List[Node]) -> str:
    """``x[items]`` with index arrays (``ArrRef``) among the items."""
    flat = _full_items(items, arrays, len(shape))
    x, flat, ndim = _new_axes(cx, x, flat, arrays, len(shape))
    per_axis, idx_ranks = _per_axis(cx, flat, arrays)
    sl = [p if isinstance(p, slice) else slice(None) for p in per_axis]
    if any(s != slice(None) for s in sl):
        x = basic_index(cx, x, sl, ndim)
    return _gather_indexed(cx, x, per_axis, idx_ranks, ndim)


def index(cx: Ctx, node: Node) -> str:
    """Advanced indexing (``advanced_index``)."""
    x = node.inputs[0]
    return cx.out(advanced_index(cx, cx.value(x), x.shape, node.attrs["index"].items,
                                 list(node.inputs[1:])))


def index_put(cx: Ctx, node: Node) -> str:
    """``x[index] = value`` with index arrays, as a scatter at the indexed flat positions."""
    x = node.inputs[0]
    value = node.inputs[-1]
    grid = _flat_grid(cx, x)
    pos = advanced_index(cx, grid, x.shape, node.attrs["index"].items, list(node.inputs[1:-1]))
    return cx.out(_scatter(cx, x, pos, value))


def take(cx: Ctx, node: Node) -> str:
    """``take`` as ``Gather`` (of the flattened array for ``axis=None``)."""
    x, idx = node.inputs
    axis = node.attrs.get("axis")
    xv = cx.value(x)
    if axis is None:
        xv = cx.w.op("Reshape", [xv, cx.w.const(np.array([-1], np.int64))], "flat")
        axis = 0
    return cx.out(cx.w.op("Gather", [xv, cx.operand(idx, INT64)], "take", axis=int(axis)))


def take_along_axis(cx: Ctx, node: Node) -> str:
    """``take_along_axis`` as ``GatherElements`` over both operands broadcast as NumPy does."""
    x, idx = node.inputs
    axis = int(node.attrs["axis"])
    out_shape = list(node.shape)
    xs = list(out_shape)
    xs[axis] = x.shape[axis]
    xv = cx.w.op("Expand", [cx.value(x), cx.shape_of(tuple(xs))], "x")
    iv = cx.w.op("Expand", [cx.operand(idx, INT64), cx.shape_of(node)], "indices")
    return cx.out(cx.w.op("GatherElements", [xv, iv], "take_along_axis", axis=axis))


def item(cx: Ctx, node: Node) -> str:
    """``.item()``: the element as a 0-d tensor (a size it gives is bound by the exporter)."""
    x = node.inputs[0]
    r = cx.w.op("Reshape", [cx.value(x), cx.w.const(np.zeros((0,), np.int64))], "item")
    cx.w.typed(r, x.dtype, [])
    return r


RULES = {
    "zeros": full, "ones": full, "empty": full, "full": full, "arange": arange, "eye": eye,
    "reshape": reshape, "permute_dims": permute_dims, "expand_dims": expand_dims,
    "squeeze": squeeze, "broadcast_to": broadcast_to, "concat": concat, "matmul": matmul,
    "getitem": getitem, "setitem": setitem, "setitem_owned": setitem, "index": index, "index_put": index_put,
    "take": take, "take_along_axis": take_along_axis, "item": item,
}
