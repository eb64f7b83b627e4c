"""``ss.cond`` as ``If``, ``ss.map`` as ``Scan``, ``ss.while_loop`` and ``for_loop`` (a
Python ``for`` over a symbolic count, capture/loops.py) as ``Loop``.

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

from symshape.algebra.expr import Sym
from symshape.capture.ir import CondExpr, Node, Subgraph

from .context import Ctx, Refusal
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


def _trip_count(cx: Ctx, start, stop, step) -> str:
    """``len(range(start, stop, step))`` as an int64 scalar (a constant step: the count is
    ``max(0, ceil((stop - start) / step))``)."""
    if type(step) is not int or step == 0:
        raise Refusal("a loop whose step is not a constant",
                      "loop over range(start, stop) with a constant step, or keep this "
                      "program on ep.compile()")
    if all(type(v) is int for v in (start, stop)):
        return cx.w.const(len(range(start, stop, step)), np.int64)
    span = stop - start + step - 1 if step > 0 else start - stop - step - 1
    n = cx.sizes.scalar(span // abs(step) if abs(step) != 1 else span)
    return cx.w.op("Max", [n, cx.w.const(0, np.int64)], "trip_count")


def _index_sym(ph: Node) -> Sym:
    """The size symbol of the loop index (the body's first input is named after it)."""
    name = ph.name
    if not (name[:1] in "us" and name[1:].isdigit()):
        raise Refusal("a loop body whose index is not a size symbol")
    return Sym(int(name[1:]), unbacked=name[0] == "u")


def for_loop(cx: Ctx, node: Node):
    """A ``for`` over ``range(start, stop, step)`` as ``Loop``: the trip count from the
    sizes, the index ``start + iter * step``, the carried values loop-carried and the
    appended rows scan outputs (reshaped to ``(count, *row)``: with no trip the scan
    output's row shape is not known to the runtime)."""
    start, stop, step, carried, lifted, row_shapes = node.inputs
    sub: Subgraph = node.attrs["body"]
    if sub.checks:
        raise Refusal("the loop's body checks a condition on the loop index at every "
                      "iteration", "make the condition hold for every index (or check it "
                      "before the loop), or keep this program on ep.compile()")
    w0, names = cx.w, cx.w.names
    count = _trip_count(cx, start, stop, step)
    phs = sub.inputs
    init = [cx.value(c) if type(c) is Node else cx.operand(c, ph.dtype)
            for c, ph in zip(carried, phs[1:])]
    it, cin = names.fresh("iter"), names.fresh("cond_in")
    vars_in = [names.fresh("carried") for _ in carried]
    bound = dict(zip(phs[1:], vars_in))
    for ph, o in zip(phs[1 + len(carried):], lifted):
        bound[ph] = cx.value(o) if type(o) is Node else cx.operand(o, ph.dtype)
    w = GraphWriter(names, w0)
    child = cx.child(w)
    # the index: start + iter * step, also the size symbol the body's indexing uses
    i = it if step == 1 else w.op("Mul", [it, w.const(step, np.int64)], "index")
    if not (type(start) is int and start == 0):
        i = w.op("Add", [i, child.sizes.scalar(start)], "index")
    child.sizes.bind(_index_sym(phs[0]), i)
    bound[phs[0]] = i
    child.values.update(bound)
    cx.convert(child, [n for n in sub.graph.nodes if n not in bound])
    outs = []
    for k, o in enumerate(sub.graph.outputs):
        src = child.operand(o, o.dtype if type(o) is Node else np.asarray(o).dtype)
        outs.append(w.op("Identity", [src], "carried_out" if k < len(carried) else "row"))
    cout = w.op("Identity", [cin], "cond_out")
    ins = [value_info(it, INT64, []), value_info(cin, BOOL, [])] + \
        _infos(cx, vars_in, phs[1:1 + len(carried)])
    outs_info = [value_info(cout, BOOL, [])] + _infos(cx, outs, sub.graph.outputs)
    g = w.graph(sub.name, ins, outs_info,
                infos=[v for v in _body_infos(w, cx) if v.name not in outs + [cout]])
    res = w0.op("Loop", [count, ""] + init, "for_loop", n_out=len(outs), body=g)
    res = res if isinstance(res, list) else [res]
    for k, shape in enumerate(row_shapes):
        j = len(carried) + k
        whole = w0.op("Concat", [w0.op("Unsqueeze", [count, w0.const(np.array([0], np.int64))]),
                                 cx.sizes.vector(tuple(shape))], "rows_shape", axis=0) \
            if len(shape) else w0.op("Unsqueeze", [count, w0.const(np.array([0], np.int64))])
        res[j] = w0.op("Reshape", [res[j], whole], "rows", allowzero=1)
        dt = sub.graph.outputs[j].dtype if type(sub.graph.outputs[j]) is Node else None
        if dt is not None:
            w0.typed(res[j], dt, cx.dims.dims((_count_expr(start, stop, step),) +
                                              tuple(shape)))
    return res


def _count_expr(start, stop, step):
    """The trip count as a size expression (for the rows' dim_param)."""
    if all(type(v) is int for v in (start, stop)):
        return len(range(start, stop, step))
    if step > 0:
        span = stop - start + step - 1
    else:
        span = start - stop - step - 1
    return span // abs(step) if abs(step) != 1 else span


RULES = {"cond": cond, "map": map_, "while_loop": while_loop, "for_loop": for_loop}
