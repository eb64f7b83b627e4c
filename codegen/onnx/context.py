"""What a rule converting one graph node sees: the graph being written, the sizes, the
ONNX value of every node converted so far, and how to refuse.

``Refusal`` is the one way a rule says "no exact form": ``to_onnx`` turns it into a
``UserError`` naming the op, the user's line and what to do.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from symshape.capture.ir import Node
from symshape.errors import UserError
from symshape.algebra.expr import Expr, Sym

from .dtypes import ELEM, INT64

#: the dtypes onnxruntime's CPU Where runs
WHERE = frozenset(("int8", "int32", "int64", "uint8", "uint32", "float16", "float32",
                   "float64"))
from .graph import GraphWriter
from .sizes import DimText, SizeValues

#: the advice that ends a refusal when the rule gives none of its own
DEFAULT_ADVICE = ("compute it in another dtype (.astype(...)), register an ONNX translation for "
                  "the op (symshape.codegen.onnx.register_translation), or keep this program "
                  "on ep.compile()")


class Refusal(Exception):
    """A rule has no exact ONNX form for this node: ``why`` (and ``advice``)."""

    def __init__(self, why: str, advice: str = DEFAULT_ADVICE) -> None:
        super().__init__(why)
        self.why = why
        self.advice = advice


def refusal_error(node: Node, r: Refusal) -> UserError:
    """The UserError of a refused node: the op, the user's line, why and what to do."""
    where = " at %s" % node.source if node.source else ""
    return UserError("to_onnx: %s (op %r%s) has no exact ONNX form that onnxruntime runs: %s. "
                     "To export it, %s." % (node.name, node.op, where, r.why, r.advice))


class Ctx:
    """The state of one graph's conversion (a subgraph gets a child)."""

    def __init__(self, w: GraphWriter, sizes: SizeValues, dims: DimText,
                 parent: Optional["Ctx"] = None) -> None:
        self.w = w
        self.sizes = sizes
        self.dims = dims
        self.parent = parent
        self.values: Dict[Node, Any] = {}     # node -> ONNX name (or list of names)
        self.node: Optional[Node] = None      # the node being converted
        # custom-op domains the model's nodes use (shared by the whole model)
        self.domains: set = parent.domains if parent is not None else set()

    def child(self, w: GraphWriter) -> "Ctx":
        """The context of a subgraph written by ``w`` (it sees this one's values)."""
        c = Ctx(w, self.sizes.child(w), self.dims, self)
        if "convert" in vars(self):
            # a loop or branch inside a body converts its own body with it
            c.convert = self.convert
        return c

    def value(self, n: Node):
        """The ONNX value of node ``n`` (from this graph or an enclosing one)."""
        c: Optional[Ctx] = self
        while c is not None:
            if n in c.values:
                return c.values[n]
            c = c.parent
        raise KeyError(n.name)

    # ------------------------------------------------------------------ operands
    def operand(self, x, dtype) -> str:
        """Node input ``x`` (a node, a Python / NumPy scalar or a size) as a tensor of
        ``dtype`` (cast when it differs: NumPy's promotion made explicit)."""
        dtype = np.dtype(dtype)
        if type(x) is Node:
            name = self.value(x)
            if x.dtype != dtype:
                return self.cast(name, dtype)
            return name
        if type(x) is Expr or type(x) is Sym:
            v = self.sizes.scalar(x)
            return v if dtype == INT64 else self.cast(v, dtype)
        if isinstance(x, (bool, int, float, np.generic)):
            return self.w.const(np.asarray(x).astype(dtype), base="k")
        raise Refusal("an operand of type %s" % type(x).__name__)

    def cast(self, name: str, dtype) -> str:
        """``name`` cast to ``dtype``."""
        dtype = np.dtype(dtype)
        return self.w.op("Cast", [name], "cast", to=ELEM[dtype.name])

    def where(self, c: str, a: str, b: str, dt) -> str:
        """``Where(c, a, b)`` of values of dtype ``dt``: onnxruntime's Where lacks bool,
        int16, uint16 and uint64, which select through a dtype of the same values (or
        ``And`` / ``Or`` for bool)."""
        dt = np.dtype(dt)
        w = self.w
        if dt.name in WHERE:
            return w.op("Where", [c, a, b], "where")
        if dt.kind == "b":
            return w.op("Or", [w.op("And", [c, a]), w.op("And", [w.op("Not", [c]), b])],
                        "where")
        via = np.dtype("int64" if dt.name == "uint64" else "int32")
        r = w.op("Where", [c, self.cast(a, via), self.cast(b, via)], "where")
        return self.cast(r, dt)

    def out(self, name: str, node: Optional[Node] = None) -> str:
        """Record ``name`` as the value of ``node`` (default: the node being converted),
        typed with its dtype and symbolic shape."""
        node = node or self.node
        if node.dtype is not None and node.dtype.name in ELEM:
            self.w.typed(name, node.dtype, self.dims.dims(node.shape))
        return name

    def shape_of(self, node_or_shape) -> str:
        """The shape (a node's, or a tuple of sizes) as a 1-D int64 tensor."""
        shape = node_or_shape.shape if type(node_or_shape) is Node else node_or_shape
        return self.sizes.vector(shape)


def refuse_dtype(what: str, dt) -> Refusal:
    """A refusal of ``what`` for dtype ``dt``."""
    return Refusal("%s of dtype %s" % (what, np.dtype(dt).name))


def user_error(node: Node, msg: str) -> UserError:
    """A UserError about ``node`` (its op and the user's line) saying ``msg``."""
    where = " at %s" % node.source if node.source else ""
    return UserError("to_onnx: %s (op %r%s): %s" % (node.name, node.op, where, msg))
