"""``ss.cond`` as ``If``, ``ss.map`` as ``Scan``, ``ss.while_loop`` and ``for_loop`` as ``Loop``.

A branch or body is a ``Subgraph`` of the program's graph; it is converted by the same
node converter as the main graph (``cx.convert``), in a child context whose placeholders
are the operands: an ``If`` branch reads the operands from the enclosing graph (ONNX
bodies see outer names), a ``Scan`` body gets one row of ``xs`` per iteration, a ``Loop``
body gets the carried values.  The loop condition is converted twice: once before the
``Loop`` (is the first iteration run?) and once at the end of the body.
"""
from __future__ import annotations

from typing import List

import numpy as np

from symshape.algebra import expr as E
from symshape.algebra.expr import Sym
from symshape.capture.ir import CondExpr, Node, Subgraph

from .context import Ctx
from .dtypes import BOOL, INT64
from .graph import GraphWriter, value_info
from .guards import condition


def _body(cx: Ctx, sub: Subgraph, bound: dict, outs_base: str):
    """Convert ``sub`` in a child graph with its placeholders bound to ``bound`` (node ->
    ONNX name, possibly graph inputs of the body); returns (writer, child ctx, output
    names)."""
    w = GraphWriter(cx.w.names, cx.w)
    child = cx.child(w)
    child.values.update(bound)
    cx.convert(child, [n for n in sub.graph.nodes if n not in bound])
    outs = []
    for o in sub.graph.outputs:
        src = child.operand(o, o.dtype if type(o) is Node else np.asarray(o).dtype)
        outs.append(w.op("Identity", [src], outs_base))
    return w, child, outs


def _infos(cx: Ctx, names: List[str], nodes) -> list:
    return [value_info(n, o.dtype, cx.dims.dims(o.shape)) for n, o in zip(names, nodes)]


def _body_infos(w: GraphWriter, cx: Ctx):
    out = []
    for name, (dt, dims) in w.types.items():
        out.append(value_info(name, dt, dims))
    return out


def cond(cx: Ctx, node: Node):
    """``ss.cond`` as ``If``: each branch converted with the operands read from the
    enclosing graph."""
    pred, operands = node.inputs
    if isinstance(pred, CondExpr):
        p = condition(cx.w, cx.sizes, pred.cond)
    else:
        p = cx.w.op("Reshape", [cx.operand(pred, BOOL), cx.w.const(np.zeros((0,), np.int64))],
                    "pred")
    branches = []
    for key in ("true_graph", "false_graph"):
        sub = node.attrs[key]
        bound = {ph: cx.value(o) if type(o) is Node else cx.operand(o, INT64)
                 for ph, o in zip(sub.inputs, operands)}
        w, child, outs = _body(cx, sub, bound, key.split("_")[0])
        g = w.graph(sub.name, [], _infos(cx, outs, sub.graph.outputs),
                    infos=[i for i in _body_infos(w, cx) if i.name not in outs])
        branches.append(g)
    n_out = len(node.attrs["true_graph"].graph.outputs)
    res = cx.w.op("If", [p], "cond", n_out=n_out, then_branch=branches[0],
                  else_branch=branches[1])
    if n_out == 1:
        return cx.out(res)
    return res


def map_(cx: Ctx, node: Node):
    """``ss.map`` as ``Scan`` over the first axis of ``xs``."""
    xs, extras = node.inputs
    sub: Subgraph = node.attrs["body"]
    names = cx.w.names
    row_name = names.fresh("row")
    row = sub.inputs[0]
    bound = {row: row_name}
    for ph, o in zip(sub.inputs[1:], extras):
        bound[ph] = cx.value(o)
    w, child, outs = _body(cx, sub, bound, "mapped")
    g = w.graph(sub.name, [value_info(row_name, row.dtype, cx.dims.dims(row.shape))],
                _infos(cx, outs, sub.graph.outputs),
                infos=[i for i in _body_infos(w, cx) if i.name not in outs])
    res = cx.w.op("Scan", [cx.value(xs)], "map", n_out=len(outs), body=g, num_scan_inputs=1)
    return cx.out(res if len(outs) == 1 else res[0])


def while_loop(cx: Ctx, node: Node):
    """``ss.while_loop`` as ``Loop``: the condition tested before the loop and at the end
    of each iteration."""
    (carried,) = node.inputs
    csub: Subgraph = node.attrs["cond_graph"]
    bsub: Subgraph = node.attrs["body_graph"]
    w0 = cx.w
    init = [cx.value(c) if type(c) is Node else cx.operand(c, INT64) for c in carried]
    # the first test, in the enclosing graph
    first = cx.child(w0)
    first.values.update(dict(zip(csub.inputs, init)))
    cx.convert(first, [n for n in csub.graph.nodes if n not in csub.inputs])
    c0 = w0.op("Reshape", [first.operand(csub.graph.outputs[0], BOOL),
                           w0.const(np.zeros((0,), np.int64))], "loop_cond")
    names = w0.names
    it, cin = names.fresh("iter"), names.fresh("cond_in")
    vars_in = [names.fresh("carried") for _ in carried]
    w, child, outs = _body(cx, bsub, dict(zip(bsub.inputs, vars_in)), "carried_out")
    # the test again, on the new values, inside the body
    again = child.child(w)
    again.values.update(dict(zip(csub.inputs, outs)))
    cx.convert(again, [n for n in csub.graph.nodes if n not in csub.inputs])
    cout = w.op("Reshape", [again.operand(csub.graph.outputs[0], BOOL),
                            w.const(np.zeros((0,), np.int64))], "cond_out")
    ins = [value_info(it, INT64, []), value_info(cin, BOOL, [])] + \
        _infos(cx, vars_in, bsub.inputs)
    outs_info = [value_info(cout, BOOL, [])] + _infos(cx, outs, bsub.inputs)
    g = w.graph(bsub.name, ins, outs_info,
                infos=[i for i in _body_infos(w, cx) if i.name not in outs + [cout]])
    res = w0.op("Loop", ["", c0] + init, "while_loop", n_out=len(init), body=g)
    return res if isinstance(res, list) else [res]


def _trip_count(start, stop, step: int):
    """``len(range(start, stop, step))`` as a size expression (step a nonzero int)."""
    if step > 0:
        n = E.floordiv(E.add(E.sub(stop, start), step - 1), step)
    else:
        n = E.floordiv(E.add(E.sub(start, stop), -step - 1), -step)
    return E.smax(n, 0)


def for_loop(cx: Ctx, node: Node):
    """The ``for_loop`` node (capture/loops.py) as ``Loop`` with a trip count: the body
    gets the iteration number (the index is ``start + i * step``, bound as the index's
    size symbol), the carried values, and reads the lifted ones from the enclosing graph;
    the rows it returns are the ``Loop``'s scan outputs, stacked on a new first axis."""
    start, stop, step, carried, lifted, _ = node.inputs
    sub: Subgraph = node.attrs["body"]
    w0 = cx.w
    n = len(carried)
    trips = cx.sizes.scalar(_trip_count(start, stop, step))
    init = [cx.value(c) for c in carried]
    names = w0.names
    it, cin = names.fresh("iter"), names.fresh("cond_in")
    vars_in = [names.fresh("carried") for _ in carried]
    w = GraphWriter(names, w0)
    child = cx.child(w)
    first = sub.inputs[0]
    index = w.op("Add", [cx.sizes.scalar(start), w.op("Mul", [it, w.const(step, INT64)])],
                 "index")
    if first.name[:1] == "u" and first.name[1:].isdigit():
        child.sizes.bind(Sym(int(first.name[1:]), True), index)
    bound = {first: index}
    bound.update(zip(sub.inputs[1:1 + n], vars_in))
    bound.update((ph, cx.value(o)) for ph, o in zip(sub.inputs[1 + n:], lifted))
    child.values.update(bound)
    cx.convert(child, [m for m in sub.graph.nodes if m not in bound])
    outs = [w.op("Identity", [child.operand(o, o.dtype if type(o) is Node
                                            else np.asarray(o).dtype)], "loop_out")
            for o in sub.graph.outputs]
    cout = w.op("Identity", [cin], "cond_out")
    ins = [value_info(it, INT64, []), value_info(cin, BOOL, [])] + \
        _infos(cx, vars_in, sub.inputs[1:1 + n])
    outs_info = [value_info(cout, BOOL, [])] + _infos(cx, outs, sub.graph.outputs)
    g = w.graph(sub.name, ins, outs_info,
                infos=[i for i in _body_infos(w, cx) if i.name not in outs + [cout]])
    res = w0.op("Loop", [trips, ""] + init, "for_loop", n_out=len(outs), body=g)
    return res if isinstance(res, list) else [res]


RULES = {"cond": cond, "map": map_, "while_loop": while_loop, "for_loop": for_loop}
