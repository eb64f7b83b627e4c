"""Writing ONNX graphs: nodes, constants, names and the type of every value.

A ``GraphWriter`` collects the nodes of one ONNX graph (the model's, or an ``If`` / ``Loop``
/ ``Scan`` body) and records the element type and symbolic shape of each value it makes, so
the model carries a ``value_info`` for every intermediate.  Writers of one model share
one ``Names`` (ONNX wants every value name unique across the model and its subgraphs).
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from onnx import GraphProto, NodeProto, ValueInfoProto, helper, numpy_helper

from .dtypes import onnx_type

_IDENT = re.compile(r"[^0-9A-Za-z_.\[\]']")

Dims = Sequence[Union[int, str, None]]


class Names:
    """Unique value names for one model."""

    def __init__(self) -> None:
        self.used: Dict[str, int] = {}

    def fresh(self, base: str) -> str:
        """A name no value of the model has yet, from ``base``."""
        base = _IDENT.sub("_", base) or "v"
        n = self.used.get(base, 0)
        self.used[base] = n + 1
        return base if n == 0 else "%s__%d" % (base, n)

    def claim(self, name: str) -> str:
        """``name`` itself (a graph input or output named by the user's path)."""
        self.used[name] = max(self.used.get(name, 0), 1)
        return name


def value_info(name: str, dtype, dims: Optional[Dims], what: str = "a value") -> ValueInfoProto:
    """A typed value (``dims`` None: rank unknown; an axis None: unknown size)."""
    return helper.make_tensor_value_info(name, onnx_type(dtype, what), dims)


class GraphWriter:
    """The nodes of one ONNX graph, with the types of the values they make."""

    def __init__(self, names: Names, parent: Optional["GraphWriter"] = None) -> None:
        self.names = names
        self.parent = parent
        self.nodes: List[NodeProto] = []
        self.types: Dict[str, Tuple[np.dtype, Optional[Dims]]] = {}
        self._consts: Dict[tuple, str] = {}

    def op(self, op_type: str, inputs: Sequence[str], base: Optional[str] = None,
           n_out: int = 1, name: Optional[str] = None, **attrs) -> Union[str, List[str]]:
        """Append one node; returns its output name (a list when ``n_out > 1``)."""
        outs = [self.names.fresh(base or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs,
                                           name=name or outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    def typed(self, name: str, dtype, dims: Optional[Dims]) -> str:
        """Record the type of value ``name``; returns ``name``."""
        self.types[name] = (np.dtype(dtype), dims)
        return name

    def type_of(self, name: str) -> Optional[Tuple[np.dtype, Optional[Dims]]]:
        """(dtype, dims) recorded for value ``name`` here or in an enclosing graph."""
        w: Optional[GraphWriter] = self
        while w is not None:
            if name in w.types:
                return w.types[name]
            w = w.parent
        return None

    def const(self, value, dtype=None, base: str = "c") -> str:
        """A constant tensor (one ``Constant`` node per distinct value in this graph)."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        w: Optional[GraphWriter] = self
        while w is not None:
            got = w._consts.get(key)
            if got is not None:
                return got
            w = w.parent
        name = self.names.fresh(base)
        self.nodes.append(helper.make_node("Constant", [], [name], name=name,
                                           value=numpy_helper.from_array(arr, name)))
        self._consts[key] = name
        return self.typed(name, arr.dtype, list(arr.shape))

    def graph(self, name: str, inputs: List[ValueInfoProto], outputs: List[ValueInfoProto],
              initializers=(), infos: Sequence[ValueInfoProto] = ()) -> GraphProto:
        """The ``GraphProto`` of the nodes written."""
        return helper.make_graph(self.nodes, name, inputs, outputs,
                                 initializer=list(initializers), value_info=list(infos))
