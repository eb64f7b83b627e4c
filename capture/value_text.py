"""How a graph value reads in text: its dtype and symbolic shape (``"f32[s0, 4]"``), or
``Sym(s0 + 1)`` for a size, or the Python value of a constant.  The printed graph, the drawing,
messages about branches and the generated code's comments all use this one spelling."""
from __future__ import annotations

import numpy as np

from symshape.algebra.expr import format_expr

from .ir import Node

_DTYPE_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8",
                "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16",
                "uint32": "u32", "uint64": "u64", "bool": "b8", "complex64": "c64",
                "complex128": "c128"}


def dtype_short(dt) -> str:
    """The short name of a dtype (``f32``, ``i64``, ``b8``); ``?`` when unknown."""
    if dt is None:
        return "?"
    return _DTYPE_SHORT.get(np.dtype(dt).name, np.dtype(dt).name)


def annotation(node: Node) -> str:
    """A node's value as text: ``f32[s0, 4]``, ``Sym(s0 + 1)`` or a constant's repr."""
    if "symint" in node.attrs:
        return "Sym(%s)" % format_expr(node.attrs["symint"])
    if node.shape is None:
        return repr(node.attrs.get("value"))
    return "%s[%s]" % (dtype_short(node.dtype), ", ".join(format_expr(s) for s in node.shape))
