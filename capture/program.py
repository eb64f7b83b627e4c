"""``ExportedProgram``: graph, signature, the one constraint set, ``module()``, printing."""
from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from symshape.errors import UserError
from symshape.algebra.expr import IntLike, format_expr
from symshape.contract import published
from symshape.contract.constraint_set import ConstraintSet
from symshape.algebra.ranges import ValueRange

from . import STAGES
from . import loaded_guard
from .ir import Graph, Node
from .state.verify import verified_module, verify_default

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
    __slots__ = ("kind", "name", "target", "mutation")

    def __init__(self, kind: str, name: str, target: Optional[str] = None,
                 mutation: Optional[str] = None) -> None:
        self.kind = kind            # USER_OUTPUT | USER_INPUT_MUTATION | STATE_MUTATION
        self.name = name
        self.target = target
        # STATE_MUTATION: "inplace" (written into the array) or "rebind" (a fresh array
        # bound at the path ``target``, as ``self.x = ...`` does)
        self.mutation = mutation if mutation is not None else (
            "inplace" if kind == "STATE_MUTATION" else None)

    def __repr__(self) -> str:
        return "%s: %s%s%s" % (self.name, self.kind,
                               " target=%r" % self.target if self.target else "",
                               " (rebind)" if self.mutation == "rebind" else "")


class Signature:
    """Which graph inputs are user inputs and which are lifted constants; which outputs are
    user outputs and which are writes to user inputs."""

    def __init__(self, graph: Graph, input_nodes: List[Node], leaves, mutations,
                 rebinds=()) -> None:
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
        for target, name in rebinds:       # (path, the value's node name)
            self.output_specs.append(OutputSpec("STATE_MUTATION", name, target, "rebind"))

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
        return {s.name: s.target for s in self.output_specs if s.kind == "STATE_MUTATION"
                and s.mutation != "rebind"}

    @property
    def state_rebinds(self) -> List[Tuple[str, str]]:
        """(value, path) of each state the program rebinds to a fresh array."""
        return [(s.name, s.target) for s in self.output_specs if s.mutation == "rebind"]

    def mutations_in(self, graph: Graph) -> List[Tuple[Node, Node]]:
        """(input or state node, node holding its new value) for each ``USER_INPUT_MUTATION``
        and in-place ``STATE_MUTATION`` of this signature, as nodes of ``graph``."""
        by_name = {n.name: n for n in graph.nodes}
        by_target = {n.attrs["target"]: n for n in graph.constants}
        return [(by_name[t], by_name[f]) for f, t in self.inputs_to_mutate.items()] + \
            [(by_target[t], by_name[f]) for f, t in self.state_to_mutate.items()]

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
        self._mutation_pairs = None
        self._source: Optional[str] = None
        # globals and closure cells the traced code read (capture/state/binding.py), for the JIT's
        # guards; empty for loaded programs
        self.name_reads: List[tuple] = []
        # set by ss.load: failures of the generated code are reported as a UserError naming
        # the node (capture/loaded_guard.py), as the file may have been crafted
        self._loaded = False
        # Python state: guards on what was read, state arrays read through their paths,
        # writes replayed (capture/state/stateprog.py); None when the program uses none
        self.state_program = None
        # the traced function (export sets it), for the verify mode's eager runs
        self.eager_function = None

    # ------------------------------------------------------------------ contract
    @property
    def range_constraints(self) -> Dict[Any, ValueRange]:
        """The exact range of each size symbol or expression (a dict, sympy keys); every
        bound is attained by an input that ``module()`` accepts."""
        return published.range_constraints(self.constraints)

    @property
    def guards(self) -> List[str]:
        """The contract that ranges and shapes cannot say (``x.shape[0] + y.shape[0] <=
        100``), one line per guard in the inputs' terms; empty when they say it all."""
        return published.guards(self.constraints)

    @property
    def input_shapes(self) -> Dict[str, tuple]:
        """The shape of each input path (a dict), each axis an int or a size expression
        (sympy)."""
        return published.input_shapes(self.constraints)

    # ------------------------------------------------------------------ running
    @property
    def state(self) -> Dict[str, np.ndarray]:
        """Path of each state array (``self.layers[0].wq``) -> the array itself (no copy)."""
        sp = self.state_program
        if sp is not None and sp.scope is not None and sp.nodes:
            # read through the paths: a rebind by the program (or by the user) shows
            live = {}
            for node, (path, _, _) in zip(sp.nodes, sp.arrays):
                if path.root.kind != "arg":
                    try:
                        live[node.name] = path.get(sp.scope)
                    except (AttributeError, KeyError, IndexError, TypeError, UserError):
                        pass
            by_name = {n.name: n for n in self.graph.constants}
            return {s.path: live.get(s.name, by_name[s.name].meta["value"])
                    for s in self.graph_signature.input_specs
                    if s.kind in ("CONSTANT", "STATE") and s.path and s.name in by_name}
        by_name = {n.name: n for n in self.graph.constants}
        return {s.path: by_name[s.name].meta["value"]
                for s in self.graph_signature.input_specs
                if s.kind in ("CONSTANT", "STATE") and s.path and s.name in by_name}

    @property
    def mutation_pairs(self) -> List[Tuple[Node, Node]]:
        """(input or state node, node holding its new value) for every in-place write, in
        the signature's order: what every backend writes back after a call."""
        if self._mutation_pairs is None:
            self._mutation_pairs = self.graph_signature.mutations_in(self.graph)
        return self._mutation_pairs

    @property
    def module_source(self) -> str:
        """The Python source that ``module()`` runs, the input check and then the graph's
        code."""
        self._build()
        return self._source

    def _build(self):
        if self._module is None:
            gen = STAGES["module"](self)
            self._source = gen.source
            self._module = gen.full
        return self._module

    def module(self, verify=None):
        """A callable with ``f``'s signature: checks its inputs, then runs the graph.
        ``verify=True`` (default: ``SYMSHAPE_VERIFY``): each call also runs the eager
        function on deep copies and raises ``VerifyError`` at the first difference."""
        if self._checked is None:
            self._checked = signature_checked(self._build(), self.call_signature, self.name)
            if self._loaded:
                self._checked = loaded_guard.guarded(self._checked, self.graph)
        if verify or verify is None and verify_default() and self.eager_function is not None:
            return verified_module(self, self._checked)
        return self._checked

    # ------------------------------------------------------------------ printing
    def __str__(self) -> str:
        lines = ["ExportedProgram:"] + STAGES["print"](self.graph)
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
        sp = self.state_program
        if sp is not None and sp.effects:
            lines.append("State writes (replayed in this order):")
            lines += ["    " + w[len("write: "):] for w in sp.describe() if w.startswith("write")]
        return "\n".join(lines)

    __repr__ = __str__

    # ------------------------------------------------------------------ later stages
    def run_decompositions(self, table=None) -> "ExportedProgram":
        """A new program lowered to the core op set (``docs/core_ops.md``), or by ``table``
        ({op name: function over traced arrays})."""
        return STAGES["run_decompositions"](self, table)

    def draw(self, path) -> str:
        """Draw the graph to ``path``, each node with its op, dtype and symbolic shape and
        the user line that made it, plus the sizes, ranges and guards: ``.html`` a
        self-contained page (inline SVG, no dependency); ``.svg`` / ``.png`` through
        graphviz's ``dot`` when installed (``.svg`` falls back to the built-in drawing);
        ``.dot`` the graphviz source.  Returns ``path``."""
        return STAGES["draw"](self, path)

    def to_onnx(self, path=None, *, opset: int = 18, guards: bool = True):
        """This program as an ``onnx.ModelProto`` (written to ``path`` when given): sizes
        as ``dim_param`` in the user's names, the contract checked inside the graph
        (``guards``) and described in its metadata (``docs/onnx.md``).  Needs the extra
        ``onnx``."""
        return STAGES["to_onnx"](self, path, opset, guards)

    def compile(self, backend: str = "numpy"):
        """Generated code for this program, shape-polymorphic over its whole valid range:
        ``backend`` ``"numpy"`` (fused, blocked NumPy), ``"cupy"`` (CUDA kernels),
        ``"dask"`` (chunked), ``"numba"`` or ``"onnxruntime"`` (the ``to_onnx`` model in
        a session); the result checks its inputs as ``module()`` does."""
        run = STAGES["compile"](self, backend)
        return loaded_guard.guarded(run, self.graph) if self._loaded else run


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


def format_ranges(rc: Dict[IntLike, ValueRange]) -> str:
    return "{%s}" % ", ".join("%s: %s" % (format_expr(k), v) for k, v in rc.items())
