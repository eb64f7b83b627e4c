"""The IR: the functional graph (nodes in execution order, no mutation) and every value a
node holds besides Python scalars, dtypes and size expressions.

A ``Node`` records its op name, inputs (other nodes, Python scalars, or size expressions),
attributes, output dtype, symbolic output shape (ints and ``Expr``), and the user frame
that produced it.  Op names never end in ``_`` and no node has an ``out`` attribute.
The value types: ``IndexAttr`` (a basic index, its ``ArrRef`` items standing for index
arrays among the inputs), ``Subgraph`` (a branch or loop body of ``cond`` / ``map`` /
``while_loop``) and ``CondExpr`` (a size predicate as a ``cond`` predicate).  Passes and
backends recognise them with ``isinstance``; this module imports nothing of capture.
"""
from __future__ import annotations

import keyword
import re
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from symshape.algebra.expr import format_expr
from symshape.userframe import UserFrame


class Node:
    __slots__ = ("name", "op", "inputs", "attrs", "dtype", "shape", "frame", "meta")

    def __init__(self, name: str, op: str, inputs: tuple, attrs: Dict[str, Any],
                 dtype: Optional[np.dtype], shape: Optional[tuple],
                 frame: Optional[UserFrame]) -> None:
        self.name = name
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.dtype = dtype
        self.shape = shape
        self.frame = frame
        self.meta: Dict[str, Any] = {}

    @property
    def source(self) -> str:
        return self.frame.location if self.frame is not None else ""

    def input_nodes(self) -> List["Node"]:
        out = []
        for x in self.inputs:
            if type(x) is Node:
                out.append(x)
            elif type(x) in (list, tuple):
                out.extend(y for y in x if type(y) is Node)
        return out

    def __repr__(self) -> str:
        return "Node(%s = %s)" % (self.name, self.op)


_IDENT = re.compile(r"[^0-9a-zA-Z_]")


# The one list of names generated code uses: Python's keywords and the builtins it calls, and
# (GENERATED_HELPER) the size symbols and every name of its own: helpers in its namespace
# (``_rt``, ``_ndarray``, the JIT dispatcher's ``_CNT``, ``_ONCE``, ``_ND0``, ``_K0_1``,
# ``_core0``, ``_ss_self``), constants and temporaries (``_k0``, ``_a0``, ``_x_0``, ``_r``,
# ``_``) all start with an underscore, so any parameter that does is renamed.  A node is
# never named like one (node names never start with an underscore); a parameter named like
# one is renamed behind a wrapper.
CODE_BUILTINS = frozenset({"min", "max", "sum", "abs", "any", "all", "round", "divmod", "type",
                           "len", "int", "float", "bool", "range", "slice", "tuple", "list",
                           "dict", "isinstance", "np", "self"})
GENERATED_HELPER = re.compile(r"^([su]\d+|_\w*)$")
RESERVED = set(keyword.kwlist) | CODE_BUILTINS | {"_rt", "_ndarray"}


def used_by_generated_code(name: str) -> bool:
    """Whether a user's name would clash with what generated code names."""
    return name in CODE_BUILTINS or bool(GENERATED_HELPER.match(name))


class Graph:
    def __init__(self) -> None:
        self.nodes: List[Node] = []
        self._names: Dict[str, int] = {n: 1 for n in RESERVED}
        self.outputs: List[Any] = []        # Nodes or Python values, flattened
        self.out_spec: tuple = ("leaf",)

    def fresh_name(self, base: str) -> str:
        base = _IDENT.sub("_", base).strip("_") or "v"
        if base[0].isdigit():
            base = "v_" + base
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else "%s_%d" % (base, n)

    def reserve(self, name: str) -> None:
        """Keep ``name`` (a parameter of the traced function) away from other nodes."""
        self._names.setdefault(name, 1)

    def create(self, op: str, inputs: tuple, attrs: Dict[str, Any], dtype, shape,
               frame: Optional[UserFrame], name: Optional[str] = None) -> Node:
        if op == "input" and name is not None:
            # an input is named after its path: x, batch[0] -> batch_0
            base = _IDENT.sub("_", name).strip("_") or "v"
            node_name = base if "_" + base not in self._names else self.fresh_name(base)
            self._names["_" + base] = 1
            # a second input with the same path-derived name gets a fresh one
            self._names["_" + node_name] = 1
            self._names.setdefault(node_name, 1)
        else:
            node_name = self.fresh_name(name or op.split("::")[-1])
        node = Node(node_name, op, inputs, attrs, dtype, shape, frame)
        self.nodes.append(node)
        return node

    @property
    def inputs(self) -> List[Node]:
        return [n for n in self.nodes if n.op == "input"]

    @property
    def constants(self) -> List[Node]:
        return [n for n in self.nodes if n.op == "constant"]

    #: ``Graph -> lines``: how a graph prints.  ``capture.graph_text`` installs it when it is
    #: imported (with ``capture.program``, i.e. with ``symshape``): the renderer emits nodes
    #: as NumPy calls and builds on this module, which imports nothing of capture
    printer: Optional[Callable[["Graph"], List[str]]] = None

    def __str__(self) -> str:
        """The graph as ``print(ep.graph)`` shows it in torch.export: one node a line with
        its dtype, symbolic shape, op and inputs, under the user line that made it (the
        graph part of ``str(ep)``)."""
        if Graph.printer is None:
            return object.__repr__(self)
        return "\n".join(Graph.printer(self))

    def users(self) -> Dict[Node, List[Node]]:
        out: Dict[Node, List[Node]] = {n: [] for n in self.nodes}
        for n in self.nodes:
            for i in n.input_nodes():
                out[i].append(n)
        return out


# --------------------------------------------------------------------------- value types
class ArrRef:
    """Placeholder for the i-th index array among a node's inputs."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def render_items(items, fmt) -> str:
    """Index items as subscript source: slices, ``None``, ``...``, ``fmt`` of the rest; an
    ``ArrRef`` as a mark the emitter replaces with its array's name."""
    parts = []
    for i in items:
        if i is None:
            parts.append("None")
        elif isinstance(i, slice):
            a = "" if i.start is None else fmt(i.start)
            b = "" if i.stop is None else fmt(i.stop)
            s = "%s:%s" % (a, b)
            if i.step is not None:
                s += ":" + fmt(i.step)
            parts.append(s)
        elif i is Ellipsis:
            parts.append("...")
        elif isinstance(i, ArrRef):
            parts.append("\x00%d\x00" % i.i)
        else:
            parts.append(fmt(i))
    return ", ".join(parts)


class IndexAttr:
    """A normalised basic index, rendered as subscript source by the code generator."""

    __slots__ = ("items",)

    def __init__(self, items) -> None:
        self.items = tuple(items)

    def render(self, fmt) -> str:
        return render_items(self.items, fmt)

    def __repr__(self) -> str:
        return "[%s]" % render_items(self.items, lambda v: v if isinstance(v, str) else
                                     format_expr(v))


class Subgraph:
    """A branch: its graph, its input placeholders, and its run-time checks."""

    def __init__(self, name: str, graph: Graph, inputs: List[Node], checks: List[tuple]):
        self.name = name
        self.graph = graph
        self.inputs = inputs
        self.checks = checks          # (cond, text) guards the branch needed
        # for translation validation: the ss.check conditions made inside the branch
        self.goals: List[object] = []

    def __repr__(self) -> str:
        return self.name


class CondExpr:
    """A size predicate used as a cond predicate (rendered as Python over the symbols)."""

    __slots__ = ("cond",)

    def __init__(self, c) -> None:
        self.cond = c

    def __repr__(self) -> str:
        return self.cond.format()
