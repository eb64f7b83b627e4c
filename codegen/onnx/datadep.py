"""Ops whose output size is known only at run time: ``argwhere`` / ``flatnonzero``
(``NonZero``) and ``unique`` (``Unique``, sorted, with first indices, inverse and counts as
NumPy returns them).  The size they make is an unbacked symbol (``u0``); its value is
read off the result's shape so later sizes can use it."""
from __future__ import annotations

import numpy as np

from symshape.capture.ir import Node

from .context import Ctx, Refusal, refuse_dtype
from .dtypes import BOOL, compute_dtype
from .reductions import from_key, order_key

UNIQUE = frozenset(("int8", "int64", "float32", "float64"))


def argwhere(cx: Ctx, node: Node) -> str:
    """``argwhere`` (``NonZero`` transposed) and ``flatnonzero`` (of the flattened array)."""
    x = cx.operand(node.inputs[0], BOOL)
    w = cx.w
    if node.op == "flatnonzero":
        x = w.op("Reshape", [x, w.const(np.array([-1], np.int64))], "flat")
        nz = w.op("NonZero", [x], "nonzero")
        return cx.out(w.op("Reshape", [nz, w.const(np.array([-1], np.int64))], node.op))
    if not node.inputs[0].shape:
        raise Refusal("argwhere of a 0-d array")
    return cx.out(w.op("Transpose", [w.op("NonZero", [x], "nonzero")], node.op, perm=[1, 0]))


def unique(cx: Ctx, node: Node):
    """The values, and (with flags) the list of outputs ``tuple_get`` reads."""
    src = node.inputs[0]
    if node.attrs.get("axis") is not None:
        raise Refusal("np.unique along an axis")
    if src.dtype.name == "uint64":       # sorted as int64 with the sign bit flipped
        x, comp = order_key(cx, cx.value(src), src.dtype)
    else:
        comp = compute_dtype(src.dtype, UNIQUE) if src.dtype != BOOL else np.dtype("int8")
        if comp is None:
            raise refuse_dtype("unique", src.dtype)
        x = cx.value(src)
        if comp != src.dtype:
            x = cx.cast(x, comp)
    if comp.kind == "f":
        y, first, inverse, counts = _unique_nan_last(cx, x, comp)
    else:
        y, first, inverse, counts = cx.w.op("Unique", [x], "unique", n_out=4, sorted=1)
    y = from_key(cx, y, comp, src.dtype)
    flags = [k for k in ("return_index", "return_inverse", "return_counts")
             if node.attrs.get(k)]
    if not flags:
        return cx.out(y)
    by = {"return_index": first, "return_inverse": inverse, "return_counts": counts}
    return [y] + [by[k] for k in flags]


def _unique_nan_last(cx: Ctx, x: str, dt) -> list:
    """Unique of floats as NumPy (``equal_nan=True``) computes it: the distinct non-NaN
    values sorted, then one NaN if there is any (onnxruntime's Unique mixes NaN with
    zeros); first indices, inverse and counts to match."""
    w = cx.w
    flat = w.op("Reshape", [x, w.const(np.array([-1], np.int64))], "flat")
    nan = w.op("IsNaN", [flat])
    keep = w.op("Not", [nan])
    pos = w.op("Reshape", [w.op("NonZero", [keep]), w.const(np.array([-1], np.int64))], "pos")
    y, first, inverse, counts = w.op("Unique", [w.op("Compress", [flat, keep], axis=0)],
                                     "unique", n_out=4, sorted=1)
    n_nan = w.op("ReduceSum", [w.op("Cast", [nan], to=7)], keepdims=1)
    any_nan = w.op("Greater", [n_nan, w.const(np.array([0], np.int64))])

    def append(v, extra):       # v, then extra (shape [1]) when there is a NaN
        return w.op("Concat", [v, w.op("Compress", [extra, any_nan], axis=0)], axis=0)

    y = append(y, w.const(np.array([np.nan], dt)))
    first_nan = w.op("ArgMax", [w.op("Cast", [nan], to=2)], keepdims=1)      # uint8
    first = append(w.op("Gather", [pos, first], axis=0), first_nan)
    counts = append(counts, n_nan)
    n_valid = w.op("Shape", [y], start=0)
    nan_code = w.op("Sub", [n_valid, w.op("Cast", [any_nan], to=7)])
    base = w.op("Mul", [w.op("Cast", [nan], to=7), nan_code])
    inverse = w.op("ScatterElements", [base, pos, inverse], "inverse", axis=0)
    return [y, first, inverse, counts]


def tuple_get(cx: Ctx, node: Node) -> str:
    """One output of a node with several (``unique``'s, a branch's, a loop's)."""
    whole = cx.value(node.inputs[0])
    v = whole[int(node.attrs["index"])]
    t = cx.w.type_of(v)
    if len(node.shape) > 1 and (t is None or len(t[1] or ()) != len(node.shape)):
        # unique's inverse has the input's shape (NumPy 2)
        v = cx.w.op("Reshape", [v, cx.shape_of(node)], node.name, allowzero=1)
    elif node.dtype is not None and t is not None and t[0] != node.dtype:
        v = cx.cast(v, node.dtype)
    v = cx.w.op("Identity", [v], node.name)
    return cx.out(v)


RULES = {"argwhere": argwhere, "flatnonzero": argwhere, "unique": unique,
         "tuple_get": tuple_get}

