"""Graph -> one straight-line Python function over NumPy (what ``ep.module()`` runs).

The function has ``f``'s signature, begins with the input check generated from the
program's ``ConstraintSet`` (so it accepts exactly what ``range_constraints`` describes),
binds the size symbols, computes every node with a direct NumPy call, writes input
mutations back, and returns the outputs in ``f``'s output structure.  The function
writer (``function_writer``) assembles it; this module gives its body, and the pieces
every backend's body is made of: ``Renderer`` (node inputs and attributes as source),
``node_lines`` / ``subgraph_lines`` (a node, a branch), ``after_node`` (sizes a node
computes, and the ``ss.check`` conditions that become checkable).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import numpy as np

from symshape import runtime as _rt
from symshape.algebra.expr import Expr, format_py
from symshape.sizes.symfloat import FloatExpr
from symshape.contract.render_python import cond_py, render_size_checks

from .function_writer import (GeneratedFunction, Writing, del_lines, namespace_const,
                              program_spec, releases, write)
from symshape.capture.ir import CondExpr, IndexAttr, Node, Subgraph

from symshape.capture.ops.registry import lookup


class Renderer:
    """Renders node inputs and attributes as Python source; odd values go to a namespace."""

    def __init__(self, names: Dict[Node, str], namespace: Dict[str, Any]) -> None:
        self.names = names
        self.ns = namespace

    def const(self, v) -> str:
        return namespace_const(self.ns, v)

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
            return "(%s)" % cond_py(v.cond, lambda e: format_py(e, lambda s: s.name))
        if isinstance(v, np.dtype):
            return "np.dtype(%r)" % v.str if v.names is None else self.const(v)
        return self.const(v)


def emit_node(node: Node, r: Renderer) -> str:
    op = lookup(node.op)
    args = [r.value(x) for x in node.inputs]
    attrs = {k: r.value(v) for k, v in node.attrs.items()}
    return op.emit(args, attrs)


def build_function(ep) -> GeneratedFunction:
    """The whole program as one function (``ep.module()``): the input check, one NumPy
    call per node, temporaries freed after their last use, write-backs, the outputs."""
    ns: Dict[str, Any] = {"np": np, "_ndarray": np.ndarray, "_rt": _rt}
    graph = ep.graph

    def body(ctx: Writing) -> List[str]:
        r = Renderer({n: n.name for n in graph.nodes}, ns)
        compute = [n for n in graph.nodes if n.op not in ("input", "constant")]
        for n in graph.nodes:
            if n.op == "constant":
                ns[n.name] = n.meta["value"]
        keep = ctx.kept()
        dels = releases(compute, keep, Node.input_nodes, lambda n: (n,))
        bound = set(ctx.bound)
        pending = ctx.runtime_checks
        lines: List[str] = []
        for node, dead in zip(compute, dels):
            _node_lines(node, r, ns, lines)
            lines.extend(after_node(node, bound, pending, r))
            lines.extend(del_lines(dead))
        return lines + ctx.finish(r)

    return write(program_spec(ep, namespace=ns, core=False), body)


def _node_lines(node: Node, r: Renderer, ns: Dict[str, Any], body: List[str]) -> bool:
    """Append the lines computing ``node`` (its subgraphs first); False for inputs and
    constants, which the namespace or the parameters provide."""
    if node.op == "input":
        return False
    if node.op == "constant":
        ns[node.name] = node.meta["value"]
        return False
    body.extend(node_lines(node, r, ns))
    return True


def node_lines(node: Node, r: Renderer, ns: Dict[str, Any],
               emit: Optional[Callable[[], str]] = None) -> List[str]:
    """The lines computing ``node``: its branches as nested functions, then
    ``name = <one NumPy call>`` (``emit``: a backend's own text for the call)."""
    out = []
    for v in node.attrs.values():
        if isinstance(v, Subgraph):
            out.extend(subgraph_lines(v, r, ns))
    out.append("%s = %s" % (node.name, emit() if emit is not None else emit_node(node, r)))
    return out


def subgraph_lines(sub, r: Renderer, ns: Dict[str, Any]) -> List[str]:
    """A branch as a nested function (it sees the enclosing function's size symbols)."""
    params = [n.name for n in sub.inputs]
    lines = ["def %s(%s):" % (sub.name, ", ".join(params))]
    body = []
    # a check on a size the branch computes (x[mask].shape[0]) runs once that size is bound
    inner = {sym for n in sub.graph.nodes for sym, _ in n.meta.get("binds", ())}
    inner |= {n.meta["binds_value"] for n in sub.graph.nodes if "binds_value" in n.meta}
    later = [(c, t) for c, t in sub.checks if c.free_symbols & inner]
    body.extend(render_size_checks([ct for ct in sub.checks if ct not in later], "bad_guard"))
    bound = {s for c, _ in later for s in c.free_symbols} - inner
    for node in sub.graph.nodes:
        if _node_lines(node, r, ns, body) and later:
            body.extend(after_node(node, bound, later, r))
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
    out.extend(ready_checks(checks, bound, r))
    return out


def ready_checks(pending: list, bound: set, r: Renderer) -> List[str]:
    """ss.check conditions on data-dependent sizes, emitted once their symbols are bound."""
    ready = [item for item in pending if item[0].free_symbols <= bound]
    for item in ready:
        pending.remove(item)
    return render_size_checks(ready)


def evaluate(nodes: List[Node], target: Node, values: Dict[Node, Any],
             sizes: Dict[str, int]) -> Any:
    """The value of ``target`` on example values: the lines ``ep.module()`` runs for
    ``nodes`` (a prefix of a graph being traced, in graph order, holding what ``target``
    needs), run with ``values`` for its inputs and ``sizes`` for its size symbols (by name).
    A node whose value is not given (a generator, an input without an example) leaves a
    name unbound: the NameError says so (``capture/examples.py``)."""
    ns: Dict[str, Any] = {"np": np, "_ndarray": np.ndarray, "_rt": _rt}
    ns.update(sizes)
    r = Renderer({n: n.name for n in nodes}, ns)
    lines: List[str] = []
    bound: set = set()
    for n in nodes:
        if n in values:
            ns[n.name] = values[n]
        elif _node_lines(n, r, ns, lines):
            lines.extend(after_node(n, bound, [], r))
    exec(compile("\n".join(lines), "<example values>", "exec"), ns)
    return ns[target.name]
