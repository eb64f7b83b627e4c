"""User translations: an op the exporter has no rule for (an ``ss.custom_op``, or any op
name such as ``linalg_eigh``) written as ONNX nodes by a function the user registers.

``register_translation("mylib::scale", fn)``: ``fn(g, *inputs, **attrs)`` receives a
``Nodes`` writer and the node's inputs: arrays as ONNX value names, sizes as int64 scalar
tensors, Python values as they are (``g.const(v, dtype)`` makes one a tensor); it returns
the name of the value it computes (a list for several outputs).
The node keeps its dtype and symbolic shape in the model; the translation must compute
exactly that.  Nodes in a domain other than ONNX's own (``g.op("Scale", x,
domain="mylib")``) make the model need that custom op at run time (onnxruntime:
``SessionOptions.register_custom_ops_library``).
"""
from __future__ import annotations

from typing import Callable, Dict

import numpy as np

from symshape.errors import UserError

#: op name -> the user's translation
TRANSLATIONS: Dict[str, Callable] = {}


def register_translation(op: str, fn: Callable) -> None:
    """Export op ``op`` (``node.op``: ``"mylib::scale"``, ``"linalg_eigh"``) with ``fn``."""
    if not isinstance(op, str) or not callable(fn):
        raise UserError("register_translation(op, fn) takes an op name and a function, got "
                        "%r, %r" % (op, fn))
    TRANSLATIONS[op] = fn


class Nodes:
    """What a translation writes with: ``op(op_type, *inputs, domain="", outputs=1,
    **attrs)`` appends a node and returns its output name(s); ``const(value)`` a constant."""

    def __init__(self, cx) -> None:
        self._cx = cx
        self.domains = set()

    def op(self, op_type: str, *inputs: str, domain: str = "", outputs: int = 1, **attrs):
        """Append an ``op_type`` node; its output name (a list for several)."""
        if domain:
            self.domains.add(domain)
            attrs["domain"] = domain
        return self._cx.w.op(op_type, list(inputs), op_type.lower(), n_out=outputs, **attrs)

    def const(self, value, dtype=None) -> str:
        """A constant tensor of ``value``."""
        return self._cx.w.const(np.asarray(value, dtype))


def translate(cx, node, fn: Callable):
    """Run the user's translation of ``node``."""
    g = Nodes(cx)
    args = []
    for x in node.inputs:
        if type(x) in (tuple, list):
            args.append([cx.value(v) for v in x])
        elif hasattr(x, "op") and hasattr(x, "inputs"):
            args.append(cx.value(x))
        elif hasattr(x, "free_symbols"):            # a size: an int64 scalar tensor
            args.append(cx.sizes.scalar(x))
        else:                                        # a Python value, as it is
            args.append(x)
    # a custom op's attributes are its own bookkeeping: its call arguments are the inputs
    attrs = {} if "::" in node.op else dict(node.attrs)
    out = fn(g, *args, **attrs)
    cx.domains |= g.domains
    return cx.out(out) if isinstance(out, str) else out
