"""Graph -> one straight-line Python function over NumPy (what ``ep.module()`` runs).

The function has ``f``'s signature, begins with the input check generated from the
program's ``ConstraintSet`` (so it accepts exactly what ``range_constraints`` describes),
binds the size symbols, computes every node with a direct NumPy call, writes input
mutations back, and returns the outputs in ``f``'s output structure.
"""
from __future__ import annotations

import copy
import inspect
import re
from typing import Any, Dict, List, Tuple

import numpy as np

from symshape import runtime as _rt
from symshape.expr import Expr, format_py
from symshape.symfloat import FloatExpr
from symshape.guards import CheckWriter, ConstraintSet

from .ir import CondExpr, Graph, IndexAttr, Node, Subgraph, used_by_generated_code
from .ops.registry import lookup


class Renderer:
    """Renders node inputs and attributes as Python source; odd values go to a namespace."""

    def __init__(self, names: Dict[Node, str], namespace: Dict[str, Any]) -> None:
        self.names = names
        self.ns = namespace

    def const(self, v) -> str:
        label = getattr(v, "__name__", None) if callable(v) else None
        if isinstance(label, str) and label.isidentifier():
            name = "_fn_" + label          # readable in .source: _fn_scale(x, factor=3.0)
            if self.ns.get(name) is v:
                return name
        else:
            name = "_v%d" % len(self.ns)
        while name in self.ns:
            name += "_"
        self.ns[name] = v
        return name

    def size(self, e) -> str:
        return format_py(e, lambda s: s.name) if type(e) is Expr else self.value(e)

    def value(self, v) -> str:
        t = type(v)
        if t is Node:
            return self.names.get(v) or v.name
        if t is Expr:
            return format_py(v, lambda s: s.name)
        if v is None or t is bool:
            return repr(v)
        if t is int:
            return repr(v)
        if t is float:
            return repr(v) if v == v and v not in (float("inf"), float("-inf")) else \
                "float(%r)" % repr(v)
        if t is str:
            return repr(v)
        if t is tuple or t is list:
            body = ", ".join(self.value(x) for x in v)
            if t is tuple:
                return "(%s%s)" % (body, "," if len(v) == 1 else "")
            return "[%s]" % body
        if t is slice:
            return "slice(%s, %s, %s)" % (self.value(v.start), self.value(v.stop),
                                         self.value(v.step))
        if t is IndexAttr or t is FloatExpr:
            return v.render(self.size)
        if isinstance(v, Subgraph):
            return v.name
        if isinstance(v, CondExpr):
            from symshape.guards import cond_py
            return "(%s)" % cond_py(v.cond, lambda e: format_py(e, lambda s: s.name))
        if isinstance(v, np.dtype):
            return "np.dtype(%r)" % v.str if v.names is None else self.const(v)
        return self.const(v)


def emit_node(node: Node, r: Renderer) -> str:
    op = lookup(node.op)
    args = [r.value(x) for x in node.inputs]
    attrs = {k: r.value(v) for k, v in node.attrs.items()}
    return op.emit(args, attrs)


def signature_source(sig: inspect.Signature, r: Renderer) -> str:
    parts = []
    seen_kwonly = False
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            parts.append("*" + p.name)
            seen_kwonly = True
            continue
        if p.kind == p.VAR_KEYWORD:
            parts.append("**" + p.name)
            continue
        if p.kind == p.KEYWORD_ONLY and not seen_kwonly:
            parts.append("*")
            seen_kwonly = True
        text = p.name
        if p.default is not p.empty:
            text += "=" + r.const(p.default)
        parts.append(text)
        if p.kind == p.POSITIONAL_ONLY:
            pass
    pos_only = [p for p in sig.parameters.values() if p.kind == p.POSITIONAL_ONLY]
    if pos_only:
        parts.insert(len(pos_only), "/")
    return ", ".join(parts)


def render_outputs(spec, leaves: List[Any], r: Renderer) -> str:
    it = iter(leaves)

    def go(s):
        if s == ("leaf",):
            return r.value(next(it))
        if s[0] == "dict":
            return "{%s}" % ", ".join("%s: %s" % (r.const(k) if not isinstance(k, (str, int))
                                                  else repr(k), go(c))
                                      for k, c in zip(s[1], s[2]))
        items = [go(c) for c in s[1]]
        if s[0] == "tuple":
            return "(%s%s)" % (", ".join(items), "," if len(items) == 1 else "")
        return "[%s]" % ", ".join(items)

    return go(spec)


def build_function(graph: Graph, cs: ConstraintSet, sig: inspect.Signature,
                   input_nodes: List[Node], mutations: List[Tuple[Node, Node]],
                   name: str = "forward") -> Tuple[str, Dict[str, Any]]:
    """Python source of the whole program and the namespace it runs in."""
    clash = reserved_params(sig)
    if clash:
        return _build_renamed(graph, cs, sig, input_nodes, mutations, name, clash)
    ns: Dict[str, Any] = {"np": np, "_ndarray": np.ndarray, "_rt": _rt}
    names: Dict[Node, str] = {}
    for node in graph.nodes:
        names[node] = node.name
    r = Renderer(names, ns)
    writer = CheckWriter(cs)
    for desc, node in zip(cs.inputs, input_nodes):
        if desc.is_array:
            desc_var = names[node]
            writer.var_names[id(desc)] = desc_var
    check_lines = writer.emit()
    ns.update(writer.consts)
    body = list(check_lines)
    bound = set(writer.bound)
    runtime_checks = list(getattr(cs, "runtime_checks", ()))
    # free each temporary after its last use, as eager code's refcounts would: large
    # intermediates must not all stay alive until the function returns
    keep = {o for o in graph.outputs if type(o) is Node} | {n for pair in mutations
                                                            for n in pair}
    last_use: Dict[Node, Node] = {}
    for node in graph.nodes:
        for i in node.input_nodes():
            last_use[i] = node
    dying: Dict[Node, List[str]] = {}
    for dead, user in last_use.items():
        if dead.op not in ("input", "constant") and dead not in keep:
            dying.setdefault(user, []).append(names[dead])
    for node in graph.nodes:
        if not _node_lines(node, r, ns, body):
            continue
        if node in dying:
            body.append("del " + ", ".join(dying[node]))
        body.extend(after_node(node, bound, runtime_checks, r))
    for inp, final in mutations:
        body.append("%s[...] = %s" % (names[inp], names[final]))
    body.append("return " + render_outputs(graph.out_spec, graph.outputs, r))
    params = signature_source(sig, r)
    src = "def %s(%s):\n" % (name, params) + "".join("    %s\n" % line for line in body)
    return src, ns


def reserved_params(sig: inspect.Signature) -> List[str]:
    """Parameters named like something generated code uses (``type``, ``max``, ``s0``,
    ``_ndarray``): such a function is built as a body with renamed parameters."""
    return [p for p in sig.parameters if used_by_generated_code(p)]


def renamed_inputs(sig: inspect.Signature, cs: ConstraintSet, ren: Dict[str, str]):
    """The signature and input descriptions with parameters renamed by ``ren``."""
    params = [p.replace(name=ren.get(p.name, p.name)) for p in sig.parameters.values()]
    lead = re.compile(r"^([A-Za-z_][A-Za-z_0-9]*)")
    new_inputs = []
    for d in cs.inputs:
        nd = copy.copy(d)
        nd.access = lead.sub(lambda m: ren.get(m.group(1), m.group(1)), d.access)
        new_inputs.append(nd)
    cs2 = copy.copy(cs)
    cs2.inputs = new_inputs
    return sig.replace(parameters=params), cs2


def forwarding_source(sig: inspect.Signature, ren: Dict[str, str], name: str, inner: str,
                      ns: Dict[str, Any]) -> str:
    """``def name(<the user's signature>): return inner(<renamed parameters>)``."""
    r = Renderer({}, ns)
    call = []
    for p in sig.parameters.values():
        target = ren.get(p.name, p.name)
        if p.kind == p.VAR_POSITIONAL:
            call.append("*" + p.name)
        elif p.kind == p.VAR_KEYWORD:
            call.append("**" + p.name)
        elif p.kind == p.KEYWORD_ONLY:
            call.append("%s=%s" % (target, p.name))
        else:
            call.append(p.name)
    return "def %s(%s):\n    return %s(%s)\n" % (name, signature_source(sig, r), inner,
                                                   ", ".join(call))


def _build_renamed(graph, cs, sig, input_nodes, mutations, name, clash):
    """A parameter named like something the body uses (``type``, ``max``, ``s0``): the
    public function keeps ``f``'s signature and forwards to a body with renamed
    parameters."""
    ren = {p: "_p_" + p for p in clash}
    inner_sig, cs2 = renamed_inputs(sig, cs, ren)
    saved = {n: n.name for n in input_nodes if n.name in ren}
    for n in saved:
        n.name = ren[n.name]
    try:
        inner, ns = build_function(graph, cs2, inner_sig, input_nodes, mutations, "_impl")
    finally:
        for n, old in saved.items():
            n.name = old
    return inner + "\n" + forwarding_source(sig, ren, name, "_impl", ns), ns


def _node_lines(node: Node, r: Renderer, ns: Dict[str, Any], body: List[str]) -> bool:
    """Append the lines computing ``node`` (its subgraphs first); False for inputs and
    constants, which the namespace or the parameters provide."""
    if node.op == "input":
        return False
    if node.op == "constant":
        ns[node.name] = node.meta["value"]
        return False
    for v in node.attrs.values():
        if isinstance(v, Subgraph):
            body.extend(subgraph_lines(v, r, ns))
    body.append("%s = %s" % (node.name, emit_node(node, r)))
    return True


def subgraph_lines(sub, r: Renderer, ns: Dict[str, Any]) -> List[str]:
    """A branch as a nested function (it sees the enclosing function's size symbols)."""
    from symshape.guards import cond_py
    params = [n.name for n in sub.inputs]
    lines = ["def %s(%s):" % (sub.name, ", ".join(params))]
    body = []
    # a check on a size the branch computes (x[mask].shape[0]) runs once that size is bound
    inner = {sym for n in sub.graph.nodes for sym, _ in n.meta.get("binds", ())}
    inner |= {n.meta["binds_value"] for n in sub.graph.nodes if "binds_value" in n.meta}
    # a quotient the solver made for a size the branch computes (u0 -> 2*u1) is bound from
    # that size as soon as it is (u1 = (u0 - 0) // 2): checks written over it can then run
    quotients = [q for q in getattr(sub, "quotients", ()) if q[1] in inner]
    inner |= {q[0] for q in quotients}
    later = [(c, t) for c, t in sub.checks if c.free_symbols & inner]
    for cond, text in sub.checks:
        if (cond, text) in later:
            continue
        body.append("if not (%s): _rt.bad_guard(%r)" % (
            cond_py(cond, lambda e: format_py(e, lambda s: s.name)), text))
    bound = {s for c, _ in later for s in c.free_symbols} - inner
    for node in sub.graph.nodes:
        if _node_lines(node, r, ns, body) and later:
            body.extend(after_node(node, bound, later, r))
            for q, p, k, rest in quotients:
                if p in bound and q not in bound:
                    body.append("%s = (%s - %d) // %d" % (q.name, p.name, rest, k))
                    bound.add(q)
                    body.extend(_ready_checks(later, bound, r))
    outs = [r.value(o) for o in sub.graph.outputs]
    body.append("return " + (outs[0] if len(outs) == 1 else "(%s,)" % ", ".join(outs)))
    return lines + ["    " + b for b in body]


def after_node(node: Node, bound: set, checks: list, r: Renderer) -> List[str]:
    """Lines after a node: bind the data-dependent sizes it computes, then run the
    ss.check conditions that have become checkable (shared by every backend)."""
    out = []
    for sym, axis in node.meta.get("binds", ()):
        out.append("%s = %s.shape[%d]" % (sym.name, node.name, axis))
        bound.add(sym)
    if "binds_value" in node.meta:
        out.append("%s = %s" % (node.meta["binds_value"].name, node.name))
        bound.add(node.meta["binds_value"])
    out.extend(_ready_checks(checks, bound, r))
    return out


def _ready_checks(pending: list, bound: set, r: Renderer) -> List[str]:
    """ss.check conditions on data-dependent sizes, emitted once their symbols are bound."""
    from symshape.guards import cond_py
    out = []
    for item in list(pending):
        cond, text = item
        if cond.free_symbols <= bound:
            pending.remove(item)
            out.append("if not (%s): _rt.bad_check(%r)" % (
                cond_py(cond, lambda e: format_py(e, lambda s: s.name)), text))
    return out


def compile_function(src: str, ns: Dict[str, Any], filename: str, name: str = "forward"):
    """Compile generated source; tracebacks show its lines (a ``linecache`` entry that lives
    exactly as long as the function, so building many programs leaks nothing)."""
    import linecache
    import weakref
    code = compile(src, filename, "exec")
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(code, ns)
    fn = ns[name]
    weakref.finalize(fn, linecache.cache.pop, filename, None)
    return fn
