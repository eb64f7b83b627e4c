"""Ops whose output size is known only at run time: ``argwhere`` / ``flatnonzero``
(``NonZero``) and ``unique`` (``Unique``, sorted, with first indices, inverse and counts as
NumPy returns them).  The size they make is an unbacked symbol (``u0``); its value is
read off the result's shape so later sizes can use it."""
from __future__ import annotations

import numpy as np

from symshape.capture.ir import Node

from .context import Ctx, Refusal, refuse_dtype
from .dtypes import BOOL, INT64, compute_dtype

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
    if src.dtype.kind == "f":
        raise Refusal("np.unique of floats (NumPy collapses NaNs into one, onnxruntime's "
                      "Unique keeps each)", "unique integer keys instead, or keep this "
                      "program on ep.compile()")
    comp = compute_dtype(src.dtype, UNIQUE) if src.dtype != BOOL else np.dtype("int8")
    if comp is None:
        raise refuse_dtype("unique", src.dtype)
    x = cx.value(src)
    if comp != src.dtype:
        x = cx.cast(x, comp)
    y, first, inverse, counts = cx.w.op("Unique", [x], "unique", n_out=4, sorted=1)
    if comp != src.dtype:
        y = cx.cast(y, src.dtype)
    flags = [k for k in ("return_index", "return_inverse", "return_counts")
             if node.attrs.get(k)]
    if not flags:
        return cx.out(y)
    by = {"return_index": first, "return_inverse": inverse, "return_counts": counts}
    return [y] + [by[k] for k in flags]


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

__all__ = ["RULES", "INT64"]
