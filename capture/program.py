"""``ExportedProgram``: graph, signature, the one constraint set, ``module()``, printing."""
from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from symshape.errors import UserError
from symshape.expr import IntLike, format_expr
from symshape.guards import ConstraintSet
from symshape.ranges import ValueRange
from symshape.contract import guard_texts
from symshape.sympy_bridge import public

from . import STAGES
from .ir import Graph, Node, Subgraph
from .function_writer import render_outputs
from .pycode import Renderer, build_function, emit_node

_DTYPE_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8",
                "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16",
                "uint32": "u32", "uint64": "u64", "bool": "b8", "complex64": "c64",
                "complex128": "c128"}


def dtype_short(dt) -> str:
    if dt is None:
        return "?"
    return _DTYPE_SHORT.get(np.dtype(dt).name, np.dtype(dt).name)


def annotation(node: Node) -> str:
    if "symint" in node.attrs:
        return "Sym(%s)" % format_expr(node.attrs["symint"])
    if node.shape is None:
        return repr(node.attrs.get("value"))
    return "%s[%s]" % (dtype_short(node.dtype), ", ".join(format_expr(s) for s in node.shape))


class InputSpec:
    __slots__ = ("kind", "name", "target", "path")

    def __init__(self, kind: str, name: str, target: Optional[str] = None,
                 path: Optional[str] = None) -> None:
        self.kind = kind            # USER_INPUT | CONSTANT
        self.name = name
        self.target = target
        self.path = path

    def __repr__(self) -> str:
        return "%s: %s%s" % (self.name, self.kind,
                             " target=%r" % self.target if self.target else "")


class OutputSpec:
    __slots__ = ("kind", "name", "target")

    def __init__(self, kind: str, name: str, target: Optional[str] = None) -> None:
        self.kind = kind            # USER_OUTPUT | USER_INPUT_MUTATION
        self.name = name
        self.target = target

    def __repr__(self) -> str:
        return "%s: %s%s" % (self.name, self.kind,
                             " target=%r" % self.target if self.target else "")


class Signature:
    """Which graph inputs are user inputs and which are lifted constants; which outputs are
    user outputs and which are writes to user inputs."""

    def __init__(self, graph: Graph, input_nodes: List[Node], leaves, mutations) -> None:
        written = {inp for inp, _ in mutations}
        self.input_specs: List[InputSpec] = []
        for n in graph.constants:
            # model state keeps its path; written state is STATE (torch's buffers)
            path = n.meta.get("state")
            kind = "STATE" if n in written else "CONSTANT"
            self.input_specs.append(InputSpec(kind, n.name, n.attrs["target"], path))
        for n, leaf in zip(input_nodes, leaves):
            self.input_specs.append(InputSpec("USER_INPUT", n.name, path=leaf.path))
        self.output_specs: List[OutputSpec] = []
        for o in graph.outputs:
            self.output_specs.append(OutputSpec("USER_OUTPUT", o.name if type(o) is Node
                                                else repr(o)))
        for inp, final in mutations:
            if inp.op == "constant":
                self.output_specs.append(OutputSpec("STATE_MUTATION", final.name,
                                                    inp.attrs["target"]))
            else:
                self.output_specs.append(OutputSpec("USER_INPUT_MUTATION", final.name,
                                                    inp.name))

    @property
    def user_inputs(self) -> List[str]:
        return [s.name for s in self.input_specs if s.kind == "USER_INPUT"]

    @property
    def lifted_constants(self) -> List[str]:
        return [s.target for s in self.input_specs if s.kind == "CONSTANT"]

    @property
    def state(self) -> List[str]:
        """Paths of the model state the program reads or writes."""
        return [s.path for s in self.input_specs if s.kind in ("CONSTANT", "STATE")
                and s.path]

    @property
    def state_to_mutate(self) -> Dict[str, str]:
        """Output node name -> path of the state array it is written into."""
        return {s.name: s.target for s in self.output_specs if s.kind == "STATE_MUTATION"}

    @property
    def user_outputs(self) -> List[str]:
        return [s.name for s in self.output_specs if s.kind == "USER_OUTPUT"]

    @property
    def inputs_to_mutate(self) -> Dict[str, str]:
        return {s.name: s.target for s in self.output_specs if s.kind == "USER_INPUT_MUTATION"}

    def __str__(self) -> str:
        lines = ["# inputs"] + [repr(s) for s in self.input_specs]
        lines += ["", "# outputs"] + [repr(s) for s in self.output_specs]
        return "\n".join(lines)


class ExportedProgram:
    """A traced program: ``graph`` (the functional graph), ``graph_signature`` (inputs,
    outputs, mutations), the contract (``range_constraints``, ``input_shapes``, ``guards``,
    the one ``constraints`` set they come from), ``module()`` (checks its inputs against the
    contract, then runs the graph as NumPy code), ``compile(backend)``,
    ``run_decompositions()``; ``print(ep)`` shows all of it.  Made by ``ss.export`` or
    ``ss.load``."""

    def __init__(self, graph: Graph, signature: Signature, constraints: ConstraintSet,
                 sig: Optional[inspect.Signature], name: str, env=None) -> None:
        self.graph = graph
        self.graph_signature = signature
        self.constraints = constraints
        self.call_signature = sig
        self.name = name
        self._env = env
        self._module = None
        self._checked = None
        self._source: Optional[str] = None
        # globals and closure cells the traced code read (capture/state.py), for the JIT's
        # guards; empty for loaded programs
        self.name_reads: List[tuple] = []

    # ------------------------------------------------------------------ contract
    @property
    def range_constraints(self) -> Dict[Any, ValueRange]:
        """{size symbol or expression (sympy): its exact range}: every bound is attained by
        an input ``module()`` accepts."""
        rng = self.constraints.ranges      # each symbol's sympy sign follows its range
        return {public(k, rng): v for k, v in self.constraints.range_constraints().items()}

    @property
    def guards(self) -> List[str]:
        """The contract that ranges and shapes cannot say (``x.shape[0] + y.shape[0] <=
        100``), one line per guard in the inputs' terms; empty when they say it all."""
        return guard_texts(self.constraints)

    @property
    def input_shapes(self) -> Dict[str, tuple]:
        """{input path: its shape}, each axis an int or a size expression (sympy)."""
        rng = self.constraints.ranges
        return {d.path: tuple(public(s, rng) for s in d.dims)
                for d in self.constraints.inputs if d.is_array}

    # ------------------------------------------------------------------ running
    @property
    def state(self) -> Dict[str, np.ndarray]:
        """Path of each state array (``self.layers[0].wq``) -> the array itself (no copy)."""
        by_name = {n.name: n for n in self.graph.constants}
        return {s.path: by_name[s.name].meta["value"]
                for s in self.graph_signature.input_specs
                if s.kind in ("CONSTANT", "STATE") and s.path and s.name in by_name}

    def _mutations(self) -> List[Tuple[Node, Node]]:
        """(input or state node, node holding its new value) for every write."""
        by_name = {n.name: n for n in self.graph.nodes}
        by_target = {n.attrs["target"]: n for n in self.graph.constants}
        sig = self.graph_signature
        return [(by_name[t], by_name[f]) for f, t in sig.inputs_to_mutate.items()] + \
            [(by_target[t], by_name[f]) for f, t in sig.state_to_mutate.items()]

    @property
    def module_source(self) -> str:
        """The Python source ``module()`` runs: the input check, then the graph's code."""
        self._build()
        return self._source

    def _build(self):
        if self._module is None:
            gen = build_function(self)
            self._source = gen.source
            self._module = gen.full
        return self._module

    def module(self):
        """A callable with ``f``'s signature: checks its inputs, then runs the graph."""
        if self._checked is None:
            self._checked = signature_checked(self._build(), self.call_signature, self.name)
        return self._checked

    # ------------------------------------------------------------------ printing
    def __str__(self) -> str:
        g = self.graph
        params = []
        for n in g.constants:
            params.append('%s: "%s"' % (n.name, annotation(n)))
        for n in g.inputs:
            params.append('%s: "%s"' % (n.name, annotation(n)))
        lines = ["ExportedProgram:",
                 "    def forward(self, %s):" % ", ".join(params)]
        last = None
        r = _PrintRenderer({n: n.name for n in g.nodes}, {})
        r.labels = {id(n.attrs["source"]): n.attrs["path"] for n in g.nodes
                    if "source" in n.attrs and n.attrs.get("path")}
        for n in g.nodes:
            if n.op in ("input", "constant"):
                continue
            if n.frame is not None and (n.frame.filename, n.frame.lineno) != last:
                last = (n.frame.filename, n.frame.lineno)
                lines.append("        # File: %s" % n.frame.describe())
            lines.append('        %s: "%s" = %s' % (n.name, annotation(n), emit_node(n, r)))
        lines.append("        return %s" % render_outputs(g.out_spec, g.outputs, r))
        for sub in _subgraphs(g):
            lines += _subgraph_text(sub, r)
        lines.append("")
        lines.append("Graph signature:")
        lines += ["    " + l if l else "" for l in str(self.graph_signature).splitlines()]
        lines.append("")
        lines.append("Range constraints: %s" % format_ranges(
            self.constraints.range_constraints()))
        guards = self.guards
        if guards:
            lines.append("Guards:")
            lines += ["    " + g for g in guards]
        return "\n".join(lines)

    __repr__ = __str__

    # ------------------------------------------------------------------ later stages
    def run_decompositions(self, table=None) -> "ExportedProgram":
        """A new program lowered to the core op set (``docs/core_ops.md``), or by ``table``
        ({op name: function over traced arrays})."""
        return STAGES["run_decompositions"](self, table)

    def compile(self, backend: str = "numpy"):
        """Generated code for this program, shape-polymorphic over its whole valid range:
        ``backend`` ``"numpy"`` (fused, blocked NumPy), ``"cupy"`` (CUDA kernels) or
        ``"dask"`` (chunked); the result checks its inputs as ``module()`` does."""
        return STAGES["compile"](self, backend)


def signature_checked(fn, sig: Optional[inspect.Signature], name: str):
    """``fn`` (generated with ``f``'s signature), where a call that does not fit the
    signature (missing, extra or unknown arguments) raises ``UserError`` naming them
    instead of Python's TypeError.  No cost on calls that fit."""
    def module(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            if sig is not None:
                try:
                    sig.bind(*args, **kwargs)
                except TypeError as e:
                    raise UserError("%s%s was called with arguments that do not fit its "
                                    "signature: %s" % (name, sig, e)) from None
            raise
    module.__name__ = getattr(fn, "__name__", name)
    module.__qualname__ = module.__name__
    module.__wrapped__ = fn
    if sig is not None:
        module.__signature__ = sig
    module.__doc__ = "The exported %s: checks its inputs against the contract, then runs " \
        "the graph." % name
    return module


class _PrintRenderer(Renderer):
    """Renders values that generated code keeps in its namespace as readable text, so the
    printed program names no undefined helper (``_v0``)."""

    labels: dict = {}          # id(object) -> how the user's code names it

    def const(self, v) -> str:
        if id(v) in self.labels:
            return self.labels[id(v)]
        if isinstance(v, np.ndarray):
            return "<%s array %s>" % (dtype_short(v.dtype), list(v.shape))
        label = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
        if callable(v) and isinstance(label, str):
            return label
        text = repr(v)
        return text if len(text) <= 60 else text[:57] + "..."


def _subgraphs(g: Graph) -> list:
    out = []
    for n in g.nodes:
        for v in n.attrs.values():
            if isinstance(v, Subgraph):
                out.append(v)
                out += _subgraphs(v.graph)
    return out


def _subgraph_text(sub, r) -> List[str]:
    params = ", ".join('%s: "%s"' % (n.name, annotation(n)) for n in sub.inputs)
    lines = ["", "    class %s:" % sub.name, "        def forward(self, %s):" % params]
    for cond, text in sub.checks:
        lines.append("            # run-time check: %s" % text)
    for n in sub.graph.nodes:
        if n.op in ("input", "constant"):
            continue
        lines.append('            %s: "%s" = %s' % (n.name, annotation(n), emit_node(n, r)))
    outs = ", ".join(r.value(o) for o in sub.graph.outputs)
    lines.append("            return (%s,)" % outs)
    return lines


def format_ranges(rc: Dict[IntLike, ValueRange]) -> str:
    return "{%s}" % ", ".join("%s: %s" % (format_expr(k), v) for k, v in rc.items())
