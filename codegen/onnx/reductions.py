"""Reductions, scans and sorts, with NumPy's accumulation dtypes and NaN rules.

``sum`` / ``prod`` compute in the node's dtype (NumPy's accumulator: ints widen to int64,
``dtype=`` as given; float16 sums in float32 and rounds once, as NumPy's pairwise float16
sum does); unsigned and narrow integers are summed in a signed integer of at least their
width (the same bits modulo 2**bits).  ``max`` / ``min`` / ``argmax`` / ``argmin``
propagate NaN as NumPy does (the first NaN wins).  ``sort`` / ``argsort`` are ``TopK``
over the whole axis, which orders ties by index (a stable sort), NaN last as NumPy puts
it.
"""
from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from symshape.capture.ir import Node

from .context import Ctx, Refusal, refuse_dtype
from .dtypes import BOOL, ELEM, INT64, compute_dtype
from .graph import GraphWriter, value_info

SUM = frozenset(("int32", "int64", "float32", "float64"))
#: the dtypes onnxruntime's Add and Mul run (a Scan step)
SCAN_NATIVE = frozenset(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                         "uint64", "float32", "float64"))
MINMAX = frozenset(("int8", "int32", "int64", "uint8", "float32", "float64"))
TOPK = frozenset(("int32", "int64", "float32", "float64"))
#: the same bits modulo 2**64 / 2**32: sums and products of unsigned ints
SAME_BITS = {"uint64": "int64", "uint32": "int64", "uint16": "int32", "uint8": "int32",
             "int8": "int32", "int16": "int32", "bool": "int64", "float16": "float32"}


def order_key(cx: Ctx, x: str, dt) -> tuple:
    """(a tensor ordered as ``x``, its dtype): onnxruntime's ArgMax / ReduceMax / TopK run
    on few integer dtypes; narrower ones widen, and uint64 becomes int64 with the sign
    bit flipped (the same order, and the flip undoes itself: ``from_key``)."""
    dt = np.dtype(dt)
    if dt.name == "uint64":
        flip = cx.w.const(np.array(np.iinfo(np.int64).min, np.int64))
        return cx.w.op("BitwiseXor", [cx.cast(x, INT64), flip], "key"), INT64
    comp = compute_dtype(dt, MINMAX) if dt != BOOL else np.dtype("uint8")
    if comp is None:
        raise refuse_dtype("ordering", dt)
    return (x if comp == dt else cx.cast(x, comp)), comp


def from_key(cx: Ctx, r: str, comp, dt) -> str:
    """The values of ``dt`` back from ``order_key``'s tensor."""
    dt = np.dtype(dt)
    if dt.name == "uint64":
        flip = cx.w.const(np.array(np.iinfo(np.int64).min, np.int64))
        return cx.cast(cx.w.op("BitwiseXor", [r, flip]), dt)
    return r if comp == dt else cx.cast(r, dt)


def _axes_input(cx: Ctx, node: Node):
    axis = node.attrs.get("axis")
    if axis is None:
        return []
    if isinstance(axis, int):
        axis = (axis,)
    return [cx.w.const(np.array(list(axis), np.int64), base="axes")]


def _keep(node: Node) -> int:
    return 1 if node.attrs.get("keepdims") else 0


def sum_prod(cx: Ctx, node: Node) -> str:
    """``sum`` / ``prod`` in the accumulator dtype."""
    dt = node.dtype
    comp = dt if dt.name in SUM else np.dtype(SAME_BITS.get(dt.name, dt.name))
    if comp.name not in SUM:
        raise refuse_dtype(node.op, dt)
    x = cx.operand(node.inputs[0], dt)
    if comp != dt:
        x = cx.cast(x, comp)
    op = "ReduceSum" if node.op == "sum" else "ReduceProd"
    r = cx.w.op(op, [x] + _axes_input(cx, node), node.op, keepdims=_keep(node))
    return cx.out(r if comp == dt else cx.cast(r, dt))


def _any_nan(cx: Ctx, x: str, axes, keep: int) -> str:
    n = cx.w.op("ReduceMax", [cx.cast(cx.w.op("IsNaN", [x]), np.uint8)] + axes, keepdims=keep)
    return cx.w.op("Cast", [n], "anynan", to=ELEM["bool"])


def max_min(cx: Ctx, node: Node) -> str:
    """``max`` / ``min``, NaN propagating."""
    dt = node.dtype
    x, comp = order_key(cx, cx.operand(node.inputs[0], dt), dt)
    axes = _axes_input(cx, node)
    keep = _keep(node)
    r = cx.w.op("ReduceMax" if node.op == "max" else "ReduceMin", [x] + axes, node.op,
                keepdims=keep)
    if comp.kind == "f":
        nan = cx.w.const(np.array(np.nan, comp))
        r = cx.w.op("Where", [_any_nan(cx, x, axes, keep), nan, r], node.op)
    return cx.out(from_key(cx, r, comp, dt))


def any_all(cx: Ctx, node: Node) -> str:
    """``any`` / ``all`` as counts of true elements (empty axes give NumPy's answer)."""
    x = cx.operand(node.inputs[0], BOOL)
    if node.op == "all":
        x = cx.w.op("Not", [x])
    n = cx.w.op("ReduceSum", [cx.cast(x, INT64)] + _axes_input(cx, node), keepdims=_keep(node))
    zero = cx.w.const(0, INT64)
    r = cx.w.op("Greater" if node.op == "any" else "Equal", [n, zero], node.op)
    return cx.out(r)


def arg_max_min(cx: Ctx, node: Node) -> str:
    """``argmax`` / ``argmin``, the first NaN winning as in NumPy."""
    src = node.inputs[0]
    x, comp = order_key(cx, cx.value(src), src.dtype)
    axis = node.attrs.get("axis")
    keep = _keep(node)
    if axis is None:
        x = cx.w.op("Reshape", [x, cx.w.const(np.array([-1], np.int64))], "flat")
        axis = 0
    op = "ArgMax" if node.op == "argmax" else "ArgMin"
    r = cx.w.op(op, [x], node.op, axis=int(axis), keepdims=keep)
    if comp.kind == "f":
        isnan = cx.cast(cx.w.op("IsNaN", [x]), np.uint8)
        first = cx.w.op("ArgMax", [isnan], axis=int(axis), keepdims=keep)
        anyn = cx.w.op("Cast", [cx.w.op("ReduceMax", [isnan, cx.w.const(
            np.array([axis], np.int64))], keepdims=keep)], to=ELEM["bool"])
        r = cx.w.op("Where", [anyn, first, r], node.op)
    if node.attrs.get("axis") is None and keep == 0:
        r = cx.w.op("Reshape", [r, cx.w.const(np.zeros((0,), np.int64))], node.op)
    return cx.out(r if node.dtype == INT64 else cx.cast(r, node.dtype))


def cumulative_sum(cx: Ctx, node: Node) -> str:
    """``cumulative_sum`` as ``CumSum``; ``cumulative_prod`` and float16 sums as a Scan."""
    dt = node.dtype
    if node.attrs.get("include_initial"):
        raise Refusal("%s with include_initial=True" % node.op)
    if node.op == "cumulative_prod" or dt.name == "float16":
        # NumPy accumulates one element at a time, rounding each partial result to the
        # dtype: a Scan does the same steps in the same order
        return cx.out(scan_accumulate(cx, node))
    comp = dt if dt.name in SUM else np.dtype(SAME_BITS.get(dt.name, dt.name))
    x = cx.operand(node.inputs[0], dt)
    if comp != dt:
        x = cx.cast(x, comp)
    r = cx.w.op("CumSum", [x, cx.w.const(np.array(int(node.attrs["axis"]), np.int64))],
                "cumsum")
    return cx.out(r if comp == dt else cx.cast(r, dt))


def scan_accumulate(cx: Ctx, node: Node) -> str:
    """``cumulative_sum`` / ``cumulative_prod`` as a ``Scan`` along the axis: the running
    value (in the node's dtype) combined with each slice in turn, each step computed as
    NumPy's loop computes it (float16 in float32, rounded back every step)."""
    dt = node.dtype
    src = node.inputs[0]
    rank = len(src.shape)
    axis = int(node.attrs["axis"]) % rank
    comp = compute_dtype(dt, SCAN_NATIVE)
    if comp is None:
        raise refuse_dtype(node.op, dt)
    w = cx.w
    x = cx.operand(src, dt)
    perm = [axis] + [i for i in range(rank) if i != axis]
    if axis:
        x = w.op("Transpose", [x], "to_front", perm=perm)
    row_shape = w.op("Slice", [w.op("Shape", [x]), w.const(np.array([1], np.int64)),
                               w.const(np.array([rank], np.int64))], "row_shape")
    ident = np.ones(1, dt) if node.op == "cumulative_prod" else np.zeros(1, dt)
    init = w.op("ConstantOfShape", [row_shape], "identity",
                value=numpy_helper.from_array(ident))
    body = GraphWriter(w.names, w)
    acc, row = w.names.fresh("acc"), w.names.fresh("slice")
    a, b = acc, row
    if comp != dt:
        a, b = (body.op("Cast", [v], to=ELEM[comp.name]) for v in (acc, row))
    step = body.op("Mul" if node.op == "cumulative_prod" else "Add", [a, b], "step")
    if comp != dt:
        step = body.op("Cast", [step], to=ELEM[dt.name])
    out = body.op("Identity", [step], "partial")
    dims = [None] * (rank - 1)
    g = body.graph(node.name + "_step", [value_info(acc, dt, dims), value_info(row, dt, dims)],
                   [value_info(step, dt, dims), value_info(out, dt, dims)])
    _, stacked = w.op("Scan", [init, x], node.op, n_out=2, body=g, num_scan_inputs=1)
    if axis:
        inv = [perm.index(i) for i in range(rank)]
        stacked = w.op("Transpose", [stacked], node.op, perm=inv)
    return stacked


def _topk(cx: Ctx, x: str, axis: int, n) -> list:
    k = cx.w.op("Unsqueeze", [cx.sizes.scalar(n), cx.w.const(np.array([0], np.int64))], "k")
    return cx.w.op("TopK", [x, k], "sorted", n_out=2, axis=axis, largest=0, sorted=1)


def sort(cx: Ctx, node: Node) -> str:
    """``sort`` / ``argsort``: a stable ascending TopK over the whole axis; for floats a
    second stable pass by "is NaN" moves NaNs last, as NumPy does."""
    src = node.inputs[0]
    axis = int(node.attrs.get("axis", -1)) % len(src.shape)
    x, comp = order_key(cx, cx.value(src), src.dtype)
    if comp.name not in TOPK:
        x, comp = cx.cast(x, INT64), INT64
    n = src.shape[axis]
    w = cx.w
    if comp.kind == "f":
        isnan = w.op("IsNaN", [x])
        key = w.op("Where", [isnan, w.const(np.array(np.inf, comp)), x])
        _, i1 = _topk(cx, key, axis, n)
        nan_key = w.op("GatherElements", [cx.cast(isnan, np.int32), i1], axis=axis)
        _, i2 = _topk(cx, nan_key, axis, n)
        idx = w.op("GatherElements", [i1, i2], "argsort", axis=axis)
        vals = w.op("GatherElements", [cx.value(src), idx], "sort", axis=axis)
    else:
        _, idx = _topk(cx, x, axis, n)
        vals = w.op("GatherElements", [cx.value(src), idx], "sort", axis=axis)
    if node.op == "argsort":
        return cx.out(idx if node.dtype == INT64 else cx.cast(idx, node.dtype))
    return cx.out(vals if src.dtype == node.dtype else cx.cast(vals, node.dtype))


RULES = {
    "sum": sum_prod, "prod": sum_prod, "max": max_min, "min": max_min, "any": any_all,
    "all": any_all, "argmax": arg_max_min, "argmin": arg_max_min,
    "cumulative_sum": cumulative_sum, "cumulative_prod": cumulative_sum, "sort": sort,
    "argsort": sort,
}
