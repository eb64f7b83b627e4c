"""``ss.cond``: a data-dependent branch kept in the graph.

Both branches are traced, each into its own subgraph whose inputs are the operands (plus
any outer traced value a branch reaches through a closure, lifted automatically).  Every
guard either branch needs joins the program's contract, as with ``torch.cond``: an input
the contract admits never fails inside a branch.  (A ``while_loop`` body, which may run
zero times, keeps its guards local as run-time checks.)  Both
branches must return the same structure, dtypes and shapes; a mismatch names each side,
e.g. ``true_fn: f32[6, 4]`` / ``false_fn: f32[6, 3]``.  Outside tracing, ``cond`` just
calls the chosen branch.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, List, Sequence

import numpy as np

from symshape.specs import pytree
from symshape.algebra import relations as R
from symshape.errors import UserError, where
from symshape.algebra.ranges import ValueRange
from symshape.sizes.symint import SymBool, SymInt, describe
from symshape.userframe import user_frame

from .ir import CondExpr, Graph, Node, Subgraph
from .value_text import dtype_short
from .ops.registry import defop
from .state.objstate import active
from .tracer import TracedArray, Tracer, to_expr


defop("cond", emit=lambda a, k: "(%s if %s else %s)(*%s)" % (
    k["true_graph"], a[0], k["false_graph"], a[1]),
    doc="run true_graph or false_graph on the operands")


def _find_tracer(pred, operands) -> Any:
    for v in [pred] + list(operands):
        if type(v) is TracedArray:
            return v.tracer
        if isinstance(v, (SymBool, SymInt)):
            return v.env.tracer
    return None


def _annot(v) -> str:
    if type(v) is TracedArray:
        return "%s[%s]" % (dtype_short(v.dtype), ", ".join(describe(s) for s in v.shape))
    return repr(v)


def _split_operands(t: Tracer, fn: Callable, values: Sequence):
    """The array operands of a branch or loop body, and ``fn`` taking only those: a NumPy
    scalar is a 0-d array (NumPy promotes both alike); any other operand (a Python number,
    a size ``x.shape[0]``) is passed to ``fn`` as it is, like a value ``fn`` closes over, so
    its weak dtype promotion stays what eager NumPy does."""
    arrays, fixed = [], {}
    for i, v in enumerate(values):
        if isinstance(v, (TracedArray, np.ndarray, np.generic)):
            arrays.append(t.operand(np.asarray(v) if isinstance(v, np.generic) else v))
        else:
            fixed[i] = v
    if not fixed:
        return arrays, fn

    def bound(*xs):
        it = iter(xs)
        return fn(*[fixed[i] if i in fixed else next(it) for i in range(len(values))])
    return arrays, bound


def _carried_arrays(t: Tracer, vals: Sequence, frame) -> list:
    """ss.while_loop's carried values as traced arrays; a Python number or a size changes
    dtype promotion once it is an array, so it is refused with the fix."""
    out = []
    for i, v in enumerate(vals):
        if isinstance(v, np.generic):
            v = np.asarray(v)
        if not isinstance(v, (TracedArray, np.ndarray)):
            shown = describe(v) if isinstance(v, SymInt) else repr(v)
            raise UserError("ss.while_loop: carried value %d (%s) is a Python %s, not an "
                            "array; carry np.int64(%s) or np.asarray(%s) instead (a value that "
                            "does not change can be read from the enclosing scope)%s"
                            % (i, shown, "size" if isinstance(v, SymInt) else type(v).__name__,
                               shown, shown, where(frame)))
        out.append(t.operand(v))
    return out


def cond(pred, true_fn: Callable, false_fn: Callable, operands: Sequence = ()):
    """Run ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; while tracing,
    keep both in the graph."""
    operands = tuple(operands) if isinstance(operands, (list, tuple)) else (operands,)
    t = _find_tracer(pred, operands)
    if t is None:
        return (true_fn if bool(pred) else false_fn)(*operands)
    if isinstance(pred, (bool, np.bool_)):
        return (true_fn if pred else false_fn)(*operands)
    frame = user_frame(2)
    t.env.commit_pending()
    if getattr(t, "runs_eagerly", False) and type(pred) is TracedArray:
        # a run through graph breaks (codegen/breaks.py): the predicate has a value
        pred = t.breaker.value(pred, "the predicate of ss.cond", frame)
        return (true_fn if bool(pred) else false_fn)(*operands)
    if type(pred) is TracedArray:
        if pred.ndim and not all(s == 1 for s in pred.shape):
            raise UserError("ss.cond: the predicate must be a single value, got an array of "
                            "shape %s%s" % (tuple(pred.shape), where(frame)))
        pred_in = pred.node
    elif isinstance(pred, SymBool):
        c = t.env.subst_cond(pred.cond)
        if isinstance(c, bool):
            return (true_fn if c else false_fn)(*operands)
        pred_in = CondExpr(c)
    else:
        raise UserError("ss.cond: the predicate must be a bool, a size comparison or a 0-d "
                        "array, got %s%s" % (type(pred).__name__, where(frame)))
    ops, true_fn = _split_operands(t, true_fn, operands)
    _, false_fn = _split_operands(t, false_fn, operands)
    t.__dict__.setdefault("_cond_count", [0])
    k = t._cond_count[0]
    t._cond_count[0] += 1
    # every guard either branch needs joins the program's contract (as with torch.cond):
    # module() then never fails inside a branch on an input the contract admits
    with _no_state_writes(t, frame):
        tsub, tout, tspec, tdims = _trace_branch(t, true_fn, ops, "true_graph_%d" % k,
                                                 local=False)
        fsub, fout, fspec, fdims = _trace_branch(t, false_fn, ops, "false_graph_%d" % k,
                                                 local=False)
    if tspec != fspec or len(tout) != len(fout):
        raise UserError("ss.cond: the branches return different structures%s\n  true_fn: %s\n"
                        "  false_fn: %s" % (where(frame), _structure(tout, tspec),
                                            _structure(fout, fspec)))
    shapes, made = [], []
    for a, b, da, db in zip(tout, fout, tdims, fdims):
        shape = _joint_shape(t, a, b, da, db, frame, made)
        if shape is None:
            raise UserError("ss.cond: the branches' outputs must agree in dtype and shape%s\n"
                            "  true_fn: %s\n  false_fn: %s" % (where(frame), _annot(a),
                                                               _annot(b)))
        shapes.append(shape)
    # both subgraphs take the same inputs: operands, then values lifted by either branch
    extra = _unify_inputs(tsub, fsub)
    args = tuple(o.node for o in ops) + tuple(extra)
    if len(tout) == 1:
        out = t.emit("cond", (pred_in, args), {"true_graph": tsub, "false_graph": fsub},
                     shapes[0], tout[0].dtype)
        results = [out]
    else:
        whole = t.emit("cond", (pred_in, args), {"true_graph": tsub, "false_graph": fsub},
                       (len(tout),), np.dtype(object))
        results = [t.emit("tuple_get", (whole.node,), {"index": i}, shapes[i], o.dtype,
                          name="getitem") for i, o in enumerate(tout)]
    for r in results:
        for axis, s in enumerate(r.shape):
            if type(s) is SymInt and s.expr.as_symbol() in made:
                r.node.meta.setdefault("binds", []).append((s.expr.as_symbol(), axis))
    return pytree.unflatten(results, tspec)


def _structure(outs, spec) -> str:
    return repr(pytree.unflatten([_annot(o) for o in outs], spec))


def _joint_shape(t: Tracer, a, b, da, db, frame, made: list):
    """The shape of a cond output both branches agree on, or None.  Where a branch makes a
    data-dependent size, the output gets a fresh one spanning both branches' ranges, bound
    from the result at run time."""
    if type(a) is not TracedArray or type(b) is not TracedArray:
        return None
    if a.dtype != b.dtype or a.ndim != b.ndim:
        return None
    if all(not isinstance(x, ValueRange) and not isinstance(y, ValueRange)
           for x, y in zip(da, db)):
        return a.shape if _same_meta(t, a, b) else None
    shape = []
    for x, y, s in zip(da, db, a.shape):
        if not isinstance(x, ValueRange) and not isinstance(y, ValueRange):
            if x != y and t.env.decide(R.eq(x, y)) is not True:
                return None
            shape.append(s)
            continue
        rx = x if isinstance(x, ValueRange) else t.env.bound(x)
        ry = y if isinstance(y, ValueRange) else t.env.bound(y)
        joint = ValueRange(min(rx.lower, ry.lower), max(rx.upper, ry.upper))
        u = t.env.create_unbacked("cond", joint, frame)
        made.append(u)
        shape.append(SymInt(u.expr, None, t.env))
    return tuple(shape)


def _same_meta(t: Tracer, a, b) -> bool:
    if type(a) is not TracedArray or type(b) is not TracedArray:
        return False
    if a.dtype != b.dtype or a.ndim != b.ndim:
        return False
    for x, y in zip(a.shape, b.shape):
        ex, ey = t.env.simplify(to_expr(x)), t.env.simplify(to_expr(y))
        if ex == ey:
            continue
        if t.env.decide(R.eq(ex, ey)) is not True:
            return False
    return True


def _snapshot(env):
    return env.save_state()


def _restore(env, snap) -> None:
    env.restore_state(snap)


@contextlib.contextmanager
def _no_state_writes(t: Tracer, frame):
    """Both branches of a cond are traced, and the one that runs is chosen at run time:
    a write to Python state or to a state array inside one cannot be replayed by the
    program (it would happen whichever branch runs), so it is refused, naming the line."""
    rec = active()
    finals = dict(t.final)
    if rec is not None:
        rec.cond_depth += 1
    try:
        yield
    finally:
        if rec is not None:
            rec.cond_depth -= 1
    written = [n for n in t.state_nodes if t.final.get(n, n) is not finals.get(n, n)]
    if written:
        raise UserError("ss.cond: a branch writes the state array %s%s; the exported program "
                        "chooses the branch at run time and cannot replay a write made in "
                        "one; return the new value from both branches and assign it after "
                        "the cond" % (written[0].meta.get("state", written[0].name),
                                      where(frame)))


def _trace_branch(t: Tracer, fn: Callable, ops: List[TracedArray], name: str,
                  local: bool = True):
    """Trace ``fn`` into a subgraph.  ``local``: the body may not run (a branch, a loop
    body), so what it teaches the environment is undone and kept as run-time checks; a
    body that always runs (map over a non-empty axis, a loop condition) keeps its guards
    in the program's constraint set."""
    env = t.env
    snap = _snapshot(env)
    outer = t.graph
    sub = Graph()
    sub._names.update({k: v for k, v in outer._names.items()})
    t.graph = sub
    inputs = []
    proxies = []
    done = False
    # a branch is traced whole: an operation it cannot record is an error of the branch,
    # never a graph break (its inputs have no values to run eagerly on)
    breaker, t.breaker = t.breaker, None
    env.branch_depth += 1
    try:
        for i, o in enumerate(ops):
            n = sub.create("input", (), {"path": "arg%d" % i}, o.dtype,
                           tuple(to_expr(s) for s in o.shape), None, name="%s_arg%d" % (name, i))
            inputs.append(n)
            proxies.append(TracedArray(t, n, o.shape, o.dtype))
        result = fn(*proxies)
        leaves, spec = pytree.flatten(result)
        outs = []
        for _, v in leaves:
            if type(v) is not TracedArray:
                if isinstance(v, np.ndarray):
                    v = t.constant(v)
                else:
                    raise UserError("ss.cond: %s returned a %s; branches must return arrays%s"
                                    % (getattr(fn, "__name__", "branch"), type(v).__name__,
                                       where(user_frame(2))))
            outs.append(v)
        # a size made inside the branch (``a[a > 0]``) dies with the branch's environment:
        # keep its range so cond can give the output a size of its own
        dims = [tuple(_branch_dim(env, s, snap[1]) for s in o.shape) for o in outs]
        if local:
            guards = env.guards[snap[3]:]
        else:
            # the body's guards join the program's contract, except those on sizes the body
            # itself computes (``ss.check(m.shape[0] == 2)`` after ``m = x[x > 0]``): only
            # the body's own code can check them, once the size exists
            # (and those on data-dependent sizes from outside it: they hold only where the
            # body runs); what those taught the environment is forgotten with them
            guards = [g for g in env.guards[snap[3]:]
                      if g.data_dependent or any(x not in snap[1] for x in g.cond.free_symbols)]
            _forget_inner(env, snap, guards)
            env.forget_data_dependent(snap)
        checks = [(g.cond, "%s%s" % (g.cond.format(env.user_label, py=True), where(g.frame)))
                  for g in guards if g.kind != "range"]
        goals = [g.cond for g in guards if g.kind == "check"]
        done = True
    finally:
        env.branch_depth -= 1
        t.graph = outer
        t.breaker = breaker
        # the branch's names stay taken: a constant made in it lives in the namespace of
        # the generated code, beside the outer graph's
        for k, v in sub._names.items():
            if outer._names.get(k, 0) < v:
                outer._names[k] = v
        if local or not done:          # a failed trace never leaves its guards behind
            _restore(env, snap)
    sub.outputs = [o.node for o in outs]
    sub.out_spec = ("tuple", tuple(("leaf",) for _ in outs))
    _lift_outer(sub, inputs, outer)
    made = Subgraph(name, sub, inputs, checks)
    made.goals = goals
    return made, outs, spec, dims


def _forget_inner(env, snap, inner: list) -> None:
    """Drop, from the outer environment, the guards (and their run-time checks) that the
    body's own code checks."""
    if not inner:
        return
    drop = {id(g) for g in inner}
    conds = {g.cond for g in inner}
    env.guards[snap[3]:] = [g for g in env.guards[snap[3]:] if id(g) not in drop]
    env.checks[len(snap[6]):] = [c for c in env.checks[len(snap[6]):] if c[0] not in conds]
    env.forget_caches()


def _branch_dim(env, s, outer_ranges):
    """An output size as the outer program can see it: the expression, or, when it uses a
    data-dependent size made inside the branch, that expression's value range."""
    e = env.simplify(to_expr(s))
    if type(e) is int or all(x in outer_ranges for x in e.free_symbols):
        return e
    return env.bound(e)


def _lift_outer(sub: Graph, inputs: List[Node], outer: Graph) -> None:
    """Outer values a branch reached through a closure become extra subgraph inputs."""
    own = set(sub.nodes)
    lifted = {}
    for n in list(sub.nodes):
        new_inputs = []
        for x in n.inputs:
            new_inputs.append(_lift_one(x, own, lifted, sub, inputs))
        n.inputs = tuple(new_inputs)
    sub.outputs = [_lift_one(o, own, lifted, sub, inputs) for o in sub.outputs]
    sub.lifted = list(lifted)


def _lift_one(x, own, lifted, sub: Graph, inputs: List[Node]):
    if type(x) is tuple or type(x) is list:
        return type(x)(_lift_one(y, own, lifted, sub, inputs) for y in x)
    if type(x) is not Node or x in own:
        return x
    got = lifted.get(x)
    if got is None:
        got = Node(sub.fresh_name("lifted_" + x.name), "input", (), {"path": x.name},
                   x.dtype, x.shape, None)
        sub.nodes.insert(len(inputs) + len(lifted), got)
        lifted[x] = got
        own.add(got)
    return got


def _unify_inputs(a: Subgraph, b: Subgraph) -> List[Node]:
    """Give both branches the same extra inputs, in one order; return the outer nodes."""
    outer_nodes = list(a.graph.lifted)
    for n in b.graph.lifted:
        if n not in outer_nodes:
            outer_nodes.append(n)
    for sub in (a, b):
        have = dict(zip(sub.graph.lifted, [n for n in sub.graph.nodes if n.op == "input"
                                           ][len(sub.inputs):]))
        extra = []
        for n in outer_nodes:
            node = have.get(n)
            if node is None:
                node = Node(sub.graph.fresh_name("unused_" + n.name), "input", (),
                            {"path": n.name}, n.dtype, n.shape, None)
                sub.graph.nodes.insert(len(sub.inputs) + len(extra), node)
            extra.append(node)
        sub.inputs = sub.inputs + extra
    return outer_nodes


# --------------------------------------------------------------------------- map, while_loop
defop("map", emit=lambda a, k: "_rt.map_stack(%s, %s, %s)" % (k["body"], a[0], a[1]),
      doc="stack body(xs[i], *args) over the first axis of xs")
defop("while_loop", emit=lambda a, k: "_rt.while_loop(%s, %s, %s)" % (
    k["cond_graph"], k["body_graph"], a[0]), doc="loop body while cond holds")


def map(fn: Callable, xs, *args):
    """``np.stack([fn(x, *args) for x in xs])``, kept as one node while tracing."""
    ops = (xs,) + tuple(args)
    t = _find_tracer(None, ops)
    if t is None:
        return np.stack([fn(x, *args) for x in xs])
    frame = user_frame(2)
    x = t.operand(xs)
    if type(x) is not TracedArray or x.ndim == 0:
        raise UserError("ss.map: xs must be an array with a leading axis to map over%s"
                        % where(frame))
    if not (x.shape[0] >= 1):
        raise UserError("ss.map over an empty leading axis%s" % where(frame))
    rest, body = _split_operands(t, fn, (xs,) + tuple(args))
    rest = rest[1:]
    t.__dict__.setdefault("_cond_count", [0])
    k = t._cond_count[0]
    t._cond_count[0] += 1
    row = TracedArray(t, x.node, x.shape[1:], x.dtype)     # stands for xs[i] in the body
    sub, outs, spec, _ = _trace_branch(t, body, [row] + rest, "map_body_%d" % k, local=False)
    if len(outs) != 1:
        raise UserError("ss.map: the body must return one array%s" % where(frame))
    out = outs[0]
    extra = list(sub.graph.lifted)
    sub.inputs = sub.inputs + [n for n in sub.graph.nodes if n.op == "input"][len(sub.inputs):]
    args_in = tuple(r.node for r in rest) + tuple(extra)
    return t.emit("map", (x.node, args_in), {"body": sub}, (x.shape[0],) + tuple(out.shape),
                  out.dtype)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: Sequence):
    """``while cond_fn(*vals): vals = body_fn(*vals)``; the body must keep every carried
    value's shape and dtype."""
    vals = tuple(carried_inputs)
    t = _find_tracer(None, vals)
    if t is None:
        while bool(cond_fn(*vals)):
            vals = tuple(body_fn(*vals))
        return vals
    frame = user_frame(2)
    ops = _carried_arrays(t, vals, frame)
    t.__dict__.setdefault("_cond_count", [0])
    k = t._cond_count[0]
    t._cond_count[0] += 1
    csub, couts, _, _ = _trace_branch(t, cond_fn, ops, "while_cond_%d" % k, local=False)
    if len(couts) != 1 or couts[0].dtype != bool or couts[0].ndim != 0:
        raise UserError("ss.while_loop: cond_fn must return a 0-d bool array%s" % where(frame))
    bsub, bouts, _, _ = _trace_branch(t, body_fn, ops, "while_body_%d" % k)
    if len(bouts) != len(ops) or not all(_same_meta(t, a, b) for a, b in zip(ops, bouts)):
        raise UserError("ss.while_loop: body_fn must return values of the same shapes and "
                        "dtypes as the carried inputs%s\n  carried: %s\n  body_fn: %s"
                        % (where(frame), ", ".join(_annot(o) for o in ops),
                           ", ".join(_annot(o) for o in bouts)))
    for sub in (csub, bsub):
        if sub.graph.lifted:
            raise UserError("ss.while_loop: cond_fn and body_fn may only use the carried "
                            "values (pass %s as a carried input)%s"
                            % (sub.graph.lifted[0].name, where(frame)))
    whole = t.emit("while_loop", (tuple(o.node for o in ops),),
                   {"cond_graph": csub, "body_graph": bsub}, (len(ops),), np.dtype(object))
    return tuple(t.emit("tuple_get", (whole.node,), {"index": i}, o.shape, o.dtype,
                        name="getitem") for i, o in enumerate(ops))


# public for the loop node (capture/loops.py), which traces its body as a map body is
trace_branch = _trace_branch
annotation = _annot
