"""``ep.to_onnx()``: an exported program as an ONNX model, its contract inside.

The program is first lowered to the core op set (``run_decompositions``), then written
graph node by graph node through the op table (``rules``):

1. graph inputs: user inputs named by their paths (a Python int input is a rank-0 int64
   tensor), written state named by its path; read-only state as initializers named by
   their paths (or, for ``ep.compile(backend="onnxruntime")``, as inputs too, so the
   session reads the live arrays on every call);
2. the input check (``guards``): the size symbols read off the input shapes, and with
   ``guards=True`` one guard node per check of the contract, gating every user input;
3. one or more ONNX nodes per graph node, each value typed with its dtype and symbolic
   shape (``dim_param`` text in the user's names); sizes a node makes at run time (masks,
   ``nonzero``, ``unique``, ``.item()``) are read off its result, and the ``ss.check``
   conditions on them become guards once their sizes are known;
4. graph outputs: the user outputs, then each write (``STATE_MUTATION`` /
   ``USER_INPUT_MUTATION``) as an output named ``<path>:new``;
5. ``metadata_props``: ``symshape.contract`` and ``symshape.signature`` (``metadata``).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from symshape.capture.ir import Node
from symshape.errors import UserError
from symshape.algebra.expr import Expr, Sym

from ..function_writer import input_check
from .context import Ctx, Refusal, refusal_error, user_error
from .dtypes import INT64, onnx_type, supported
from .graph import GraphWriter, Names, value_info
from .guards import GuardChain, bind_and_check, condition
from .metadata import CONTRACT_KEY, SIGNATURE_KEY, contract_json, output_paths, signature_json
from .rules import CONVERTERS, REFUSED
from .translations import TRANSLATIONS, translate
from .sizes import DimText, SizeValues

#: what to do with an op the exporter has no rule for (linalg, fft, random draws, custom)
OUTSIDE_ADVICE = ("register an ONNX translation for it (symshape.codegen.onnx."
                  "register_translation), compute it before the exported function and pass "
                  "the result in, or keep this program on ep.compile()")
#: the opsets the converter writes (its ops and attributes are those of opset 18)
MIN_OPSET, MAX_OPSET = 18, 21
IR_VERSION = 8


def convert_nodes(cx: Ctx, nodes, pending: Optional[list] = None,
                  chain: Optional[GuardChain] = None) -> None:
    """Convert ``nodes`` (program order) into ``cx``'s graph."""
    for node in nodes:
        if node.op in ("input", "constant"):
            continue
        cx.node = node
        fn = CONVERTERS.get(node.op)
        user = TRANSLATIONS.get(node.op)
        try:
            if user is not None:
                cx.values[node] = translate(cx, node, user)
                _bind_sizes(cx, node)
                continue
            if fn is None:
                raise Refusal(REFUSED.get(node.op, "it is not in the core op set the "
                                                   "exporter translates"), OUTSIDE_ADVICE)
            if node.dtype is not None and node.dtype.kind not in "O" and \
                    not supported(node.dtype):
                raise Refusal("its result has dtype %s" % node.dtype.name)
            cx.values[node] = fn(cx, node)
        except Refusal as r:
            raise refusal_error(node, r) from None
        except KeyError as e:
            raise user_error(node, "it needs the size %s, which the exporter cannot compute "
                             "in the graph" % e) from None
        _bind_sizes(cx, node)
        if pending and chain is not None:
            _ready_checks(cx, pending, chain)


def _bind_sizes(cx: Ctx, node: Node) -> None:
    """Sizes ``node`` makes at run time, read off its value."""
    v = cx.values.get(node)
    for sym, axis in node.meta.get("binds", ()):
        shape = cx.w.op("Shape", [v], "shape")
        cx.sizes.bind(sym, cx.w.op("Gather", [shape, cx.w.const(np.array(axis, np.int64))],
                                   sym.name, axis=0))
    if "binds_value" in node.meta:
        cx.sizes.bind(node.meta["binds_value"], cx.cast(v, INT64))


def _ready_checks(cx: Ctx, pending: list, chain: GuardChain) -> None:
    for item in list(pending):
        c, text = item
        if all(cx.sizes.has(s) for s in c.free_symbols):
            pending.remove(item)
            chain.check(condition(cx.w, cx.sizes, c), text)


class Exported:
    """The pieces of one export (what ``session`` needs besides the model)."""

    def __init__(self) -> None:
        self.model = None
        self.user_inputs: List[Tuple[str, Node]] = []     # (graph name, input node)
        self.state_inputs: List[Tuple[str, Node]] = []    # (graph name, constant node)


def _state_path(ep, n: Node) -> Tuple[str, bool]:
    """The path of a state array (True), or the name of a lifted constant (False)."""
    for s in ep.graph_signature.input_specs:
        if s.name == n.name:
            return (s.path, True) if s.path else (s.target or n.name, False)
    return n.name, False


def build(ep, opset: int = 18, guards: bool = True, state_as_inputs: bool = False) -> Exported:
    """The ONNX model of ``ep`` (see the module docstring)."""
    from onnx import helper, numpy_helper
    if not (isinstance(opset, int) and MIN_OPSET <= opset <= MAX_OPSET):
        raise UserError("to_onnx(opset=%r): the exporter writes opsets %d to %d"
                        % (opset, MIN_OPSET, MAX_OPSET))
    _refuse_effects(ep)
    core = ep.run_decompositions()
    graph = core.graph
    cs = core.constraints
    dims = DimText(getattr(cs, "dim_names", {}) or {})
    names = Names()
    w = GraphWriter(names)
    cx = Ctx(w, SizeValues(w), dims)
    cx.convert = convert_nodes
    out = Exported()
    sig = core.graph_signature
    # state the program writes (in place or rebinds) is an input: the caller feeds it
    written = set(sig.state_to_mutate.values()) | \
        {t for _, t in ep.graph_signature.state_rebinds}
    inputs, inits, sig_in = [], [], []
    by_path: Dict[str, str] = {}
    for desc, n in zip(cs.inputs, graph.inputs):
        name = names.claim(desc.path)
        if desc.is_array:
            inputs.append(value_info(name, n.dtype, dims.dims(n.shape), "input %s" % desc.path))
        elif isinstance(desc.value, (int, np.integer)) or desc.sym is not None:
            inputs.append(value_info(name, INT64, []))
        else:
            continue
        by_path[desc.path] = by_path[desc.access] = name
        cx.values[n] = name
        out.user_inputs.append((name, n))
        sig_in.append({"name": name, "kind": "USER_INPUT", "path": desc.path})
    for n in graph.constants:
        path, is_state = _state_path(core, n)
        name = names.claim(path) if is_state else names.fresh(path)
        arr = np.asarray(n.meta["value"])
        onnx_type(arr.dtype, "state %s" % path)
        cx.values[n] = name
        if state_as_inputs or n.attrs["target"] in written:
            inputs.append(value_info(name, arr.dtype, list(arr.shape)))
            out.state_inputs.append((name, n))
            sig_in.append({"name": name, "kind": "STATE", "path": path})
        else:
            inits.append(numpy_helper.from_array(np.require(arr, requirements="C"), name))
    check = _input_check(core)
    chain = GuardChain(w) if guards else None
    bind_and_check(check, w, cx.sizes, by_path, chain)
    if chain is not None:
        for name, n in out.user_inputs:
            if n.dtype is not None:
                cx.values[n] = chain.gate(name, name.replace("'", "") + "_checked")
    pending = list(getattr(cs, "runtime_checks", ()) or ())
    convert_nodes(cx, graph.nodes, pending, chain)
    rebinds = {t for _, t in ep.graph_signature.state_rebinds}
    outputs, sig_out = _outputs(core, cx, names, chain, pending, rebinds)
    infos = [value_info(k, dt, d) for k, (dt, d) in w.types.items()
             if k not in {o.name for o in outputs}]
    g = w.graph(core.name if core.name.isidentifier() else "program", inputs, outputs, inits,
                infos)
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1)
                                                   for d in sorted(cx.domains)]
    model = helper.make_model(g, opset_imports=imports, producer_name="symshape")
    model.ir_version = IR_VERSION
    helper.set_model_props(model, {CONTRACT_KEY: contract_json(core, dims),
                                   SIGNATURE_KEY: signature_json(sig_in, sig_out)})
    out.model = model
    return out


def _input_check(ep):
    """The records of ``ep``'s input check (the one ``module()`` runs)."""
    return input_check(ep.constraints, [n.name for n in ep.graph.inputs]).check


def _refuse_effects(ep) -> None:
    """A model file replays no Python: the program's writes must all be array writes (in
    place, or a rebind of a state path to an array the graph computes, which becomes a
    ``STATE_MUTATION`` output); any other replayed write is a UserError."""
    sp = ep.state_program
    if sp is None or not sp.effects:
        return
    from symshape.capture.stateprog import Slot
    rebound = {name for name, _ in ep.graph_signature.state_rebinds}
    others = []
    for e in sp.effects:
        v = e.args[-1] if e.args else None
        if e.op in ("setattr", "setitem", "setroot") and type(v) is Slot and \
                type(sp.slots[v.index]) is Node and sp.slots[v.index].name in rebound:
            continue
        others.append(e)
    if others:
        lines = [w[len("write: "):] for w in sp.describe() if w.startswith("write")]
        raise UserError("to_onnx: the program writes Python state that a model file cannot "
                        "replay (%s); keep those writes outside the exported function, or "
                        "use ep.compile()" % "; ".join(lines))


def _outputs(ep, cx: Ctx, names: Names, chain: Optional[GuardChain], pending: list,
             rebinds: set):
    graph = ep.graph
    if pending and chain is not None:
        raise user_error(graph.nodes[-1], "an ss.check condition uses sizes the graph never "
                         "computes: %s" % ", ".join(t for _, t in pending))
    w = cx.w
    outs, sig_out = [], []
    paths = output_paths(graph.out_spec)
    for i, (o, path) in enumerate(zip(graph.outputs, paths)):
        if type(o) is Node:
            v, dt, shape = cx.value(o), o.dtype, o.shape
        elif isinstance(o, (bool, int, float, np.generic, Expr, Sym)):
            dt = INT64 if not isinstance(o, (float, np.generic, bool)) else np.asarray(o).dtype
            v, shape = cx.operand(o, dt), ()
        else:
            raise UserError("to_onnx: output %s is %r, which a model cannot return; return "
                            "arrays (or sizes)" % (path or "0", o))
        name = names.claim("output" if len(paths) == 1 else "output_%d" % i)
        _rename(w, v, name)
        outs.append(value_info(name, dt, cx.dims.dims(shape)))
        sig_out.append({"name": name, "kind": "USER_OUTPUT", "path": path})
    by_name = {n.name: n for n in graph.nodes}
    for s in ep.graph_signature.output_specs:
        if s.kind == "USER_OUTPUT":
            continue
        node = by_name[s.name]
        path = s.target
        if s.kind == "STATE_MUTATION":
            path = next((x.path for x in ep.graph_signature.input_specs
                         if x.target == s.target and x.path), s.target)
        name = names.claim("%s:new" % path)
        _rename(w, cx.value(node), name)
        outs.append(value_info(name, node.dtype, cx.dims.dims(node.shape)))
        entry = {"name": name, "kind": s.kind, "path": path}
        if s.mutation == "rebind" or (s.kind == "STATE_MUTATION" and s.target in rebinds):
            entry["mutation"] = "rebind"
        sig_out.append(entry)
    return outs, sig_out


def _rename(w: GraphWriter, v: str, name: str) -> None:
    """Graph output ``name`` holding value ``v`` (an Identity: outputs need own names)."""
    from onnx import helper
    w.nodes.append(helper.make_node("Identity", [v], [name], name=name))
