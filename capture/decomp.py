"""``run_decompositions``: a program lowered to the core op set (docs/core_ops.md).

The program is re-traced node by node.  A fresh shape environment holds the program's
own symbols with their ranges and residual facts (no new symbols for the inputs, so every
size expression of the graph stays valid); a Tracer over it replays the graph:

  * a node whose op the table names is lowered: the table function receives the node's
    inputs as traced arrays (sizes as symbolic ints) and its attributes as keyword
    arguments, and computes the replacement with ordinary NumPy calls, which the tracer
    records as new nodes (carrying the original node's source line);
  * every other node is copied unchanged.

A replacement must have the node's dtype and (provably) its shape, and must not need a
guard the program's constraints do not already imply; otherwise ``UserError`` names the
node and what went wrong.  The result is a NEW ExportedProgram with the same constraint
set, call signature and output structure, and the same results.

``table=None`` lowers every op that has a default decomposition (repeating until only
core ops, and ops with no core equivalent, remain); a custom table lowers exactly the ops
it names, once.  A table function may return ``NotImplemented`` to keep a node as it is.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.algebra import relations as R
from symshape.reasoning.env import ShapeEnv, SymInfo
from symshape.errors import InternalError, UserError
from symshape.algebra.expr import Expr, Sym, format_expr
from symshape.algebra.infinity import INT_OO, is_inf
from symshape.algebra.ranges import ValueRange
from symshape.sizes.symint import SymInt, sym_max

from .ops import families
from .ir import ArrRef, Graph, IndexAttr, Node, Subgraph
from .ops.elementwise import emit_ufunc, astype, weak_type
from .ops.registry import OPS, defop
from .program import ExportedProgram, InputSpec, OutputSpec, Signature
from .finalize import finalize_node
from .ops.traits import API_RENAMES, CORE_OPS, TRAITS, traits_of
from .tracer import FUNCTIONS, TracedArray, Tracer, to_expr
from .ops.linalg import parse_einsum
from .custom import Functionalized

families()          # every op's handler and op-table row, before any use

# --------------------------------------------------------------------------- the core set
#: NumPy ufunc name -> array API name (the traits table's renames)
RENAMES: Dict[str, str] = API_RENAMES

#: the core op set is the traits table's ``CORE_OPS`` (ops whose ``core`` name is their own)
__all__ = ["CORE_OPS", "RENAMES", "default_decompositions", "is_core", "run_decompositions"]


def _ufunc_for(op: str):
    """The NumPy ufunc an elementwise op computes (array API names included)."""
    t = traits_of(op)
    return None if t is None else t.ufunc


# array API names of renamed ufuncs: they emit exactly the code the NumPy-named op emits
for _np_name, _api in RENAMES.items():
    if _api not in OPS:
        defop(_api, emit=lambda a, k, n=_np_name: emit_ufunc(a, k, n),
              doc="np.%s, elementwise with broadcasting (array API: %s)" % (_np_name, _api))
for _n in ("cumsum", "cumprod"):
    _api = "cumulative_" + _n[3:]
    if _api not in OPS:
        defop(_api, emit=lambda a, k, n=_n: "%s.%s(%s)" % (
            a[0], n, ", ".join("%s=%s" % kv for kv in k.items())),
            doc="np.%s along one axis (array API: %s)" % (_n, _api))


def is_core(node: Node) -> bool:
    """Whether ``node`` is in the core op set (ops and attributes, docs/core_ops.md)."""
    op = node.op
    t = traits_of(op)
    if t is None or not t.is_core:
        return False
    if t.ufunc is not None:
        return "dtype" not in node.attrs
    if op == "round":
        return node.attrs.get("decimals", 0) == 0
    return True


# --------------------------------------------------------------------------- lowering context
class _Ctx:
    def __init__(self, tracer: Tracer, node: Node) -> None:
        self.tracer = tracer
        self.node = node


_STACK: List[_Ctx] = []


def _ctx() -> _Ctx:
    if not _STACK:
        raise UserError("this decomposition can only run inside run_decompositions")
    return _STACK[-1]


def _inp(v):
    if type(v) is TracedArray:
        return v.node
    if type(v) is SymInt:
        return v.expr
    if type(v) in (tuple, list):
        return type(v)(_inp(x) for x in v)
    return v


def _emit_as(op: str, *args, attrs=None) -> TracedArray:
    """A node ``op(*args)`` with the shape and dtype of the node being lowered."""
    c = _ctx()
    t, n = c.tracer, c.node
    return t.emit(op, tuple(_inp(a) for a in args), dict(attrs or {}), t.sym_shape(n.shape),
                  n.dtype)


def _astype(x: TracedArray, dtype) -> TracedArray:
    return astype(x.tracer, x, dtype)


def _fix_dtype(r):
    want = _ctx().node.dtype
    if type(r) is TracedArray and r.dtype != want:
        return _astype(r, want)
    return r


def _count(x: TracedArray, axis) -> Any:
    n = 1
    for i in (range(x.ndim) if axis is None else axis):
        n = n * x.shape[i]
    return n


# --------------------------------------------------------------------------- default table
def _elementwise(op: str) -> Callable:
    """Rename to the array API name; an explicit ``dtype=`` becomes casts of the inputs."""
    ufunc = _ufunc_for(op)
    api = traits_of(op).core or op

    def lower(*args, dtype=None):
        if api == op and dtype is None:
            return NotImplemented
        if dtype is not None:
            loop = ufunc.resolve_dtypes(tuple(weak_type(a) for a in args) +
                                        (None,) * ufunc.nout, signature=(None,) * ufunc.nin +
                                        (np.dtype(dtype),) * ufunc.nout)
            cast = []
            for a, d in zip(args, loop):
                if type(a) is TracedArray and a.dtype != d:
                    a = _astype(a, d)
                elif isinstance(a, np.generic) and a.dtype != d:
                    a = np.dtype(d).type(a)
                cast.append(a)
            args = tuple(cast)
        return _emit_as(api, *args)
    return lower


def _same_as(op: str) -> Callable:
    """``fabs`` -> ``abs``, ``rint`` -> ``round``: cast to the output dtype, then the core op."""
    def lower(x, dtype=None):
        if dtype is not None or type(x) is not TracedArray:
            return NotImplemented
        want = _ctx().node.dtype
        if x.dtype != want:
            x = _astype(x, want)
        return _emit_as(op, x, attrs={"decimals": 0} if op == "round" else None)
    return lower


def _divmod(i: int) -> Callable:
    def lower(a, b):
        return (np.floor_divide if i == 0 else np.remainder)(a, b)
    return lower


def _mean(x, axis=None, keepdims=False, dtype=None):
    dt = dtype
    if dt is None:
        if x.dtype.kind in "iub":
            dt = np.dtype(np.float64)
        elif x.dtype == np.float16:
            dt = np.dtype(np.float32)
    s = np.sum(x, axis=axis, keepdims=keepdims, dtype=dt)
    return _fix_dtype(np.true_divide(s, _count(x, axis)))


def _var(x, axis=None, keepdims=False, dtype=None, ddof=0):
    if x.dtype.kind == "c" or not isinstance(ddof, (int, np.integer)) or \
            isinstance(ddof, bool):
        return NotImplemented
    dt = dtype
    if dt is None and x.dtype.kind in "iub":
        dt = np.dtype(np.float64)
    n = _count(x, axis)
    total = np.sum(x, axis=axis, keepdims=True, dtype=dt)
    mean = np.true_divide(total, n)
    if mean.dtype != total.dtype:
        mean = _astype(mean, total.dtype)
    sq = np.square(np.subtract(x, mean))
    s = np.sum(sq, axis=axis, keepdims=keepdims, dtype=dt)
    d = n - int(ddof)
    d = sym_max(d, 0) if type(d) is SymInt else max(d, 0)
    return _fix_dtype(np.true_divide(s, d))


def _std(x, axis=None, keepdims=False, dtype=None, ddof=0):
    v = _var(x, axis=axis, keepdims=keepdims, dtype=dtype, ddof=ddof)
    if v is NotImplemented:
        return v
    return np.sqrt(v)


def _clip(x, lo=None, hi=None):
    r = x
    if lo is not None:
        r = np.maximum(r, lo)
    if hi is not None:
        r = np.minimum(r, hi)
    if r is x:
        return NotImplemented
    return _fix_dtype(r)


def _copy(x):
    return _astype(x, x.dtype)


def _dot(a, b):
    return _fix_dtype(np.matmul(a, b))


def _outer(a, b):
    if a.ndim != 1:
        a = np.reshape(a, (-1,))
    if b.ndim != 1:
        b = np.reshape(b, (-1,))
    return _fix_dtype(np.multiply(np.expand_dims(a, 1), np.expand_dims(b, 0)))


def _prod(sizes) -> Any:
    out = 1
    for s in sizes:
        out = out * s
    return out


def _reshape(x: TracedArray, shape: tuple) -> TracedArray:
    """``np.reshape``, skipped when the shape is already that one."""
    if len(shape) == x.ndim and all(to_expr(a) == to_expr(b) for a, b in zip(x.shape, shape)):
        return x
    return np.reshape(x, shape)


def _tensordot(a, b, axes):
    ax_a, ax_b = list(axes[0]), list(axes[1])
    notin_a = [k for k in range(a.ndim) if k not in ax_a]
    notin_b = [k for k in range(b.ndim) if k not in ax_b]
    n2 = _prod(a.shape[k] for k in ax_a)
    at = _reshape(np.transpose(a, notin_a + ax_a), (_prod(a.shape[k] for k in notin_a), n2))
    bt = _reshape(np.transpose(b, ax_b + notin_b), (n2, _prod(b.shape[k] for k in notin_b)))
    res = np.matmul(at, bt)
    return _fix_dtype(_reshape(res, tuple(a.shape[k] for k in notin_a) +
                               tuple(b.shape[k] for k in notin_b)))


def _einsum_presum(ins, ops, out) -> List[Tuple[TracedArray, str]]:
    """Each operand with its subscripts, the letters no other operand nor the output names
    summed out first."""
    cur: List[Tuple[TracedArray, str]] = []
    for i, (spec, o) in enumerate(zip(ins, ops)):
        others = set(out).union(*[set(s) for j, s in enumerate(ins) if j != i])
        only = [k for k, c in enumerate(spec) if c not in others]
        if only:
            o = np.sum(o, axis=tuple(only))
            spec = "".join(c for c in spec if c in others)
        cur.append((o, spec))
    return cur


def _einsum_pair(a, la: str, b, lb: str, keep: set, sizes: dict) -> Tuple[TracedArray, str]:
    """Two operands contracted as one batched matmul: letters in both and still needed are
    batch axes, letters in both and no longer needed are contracted."""
    batch = [c for c in la if c in lb and c in keep]
    contr = [c for c in la if c in lb and c not in keep]
    fa = [c for c in la if c not in lb]
    fb = [c for c in lb if c not in la]
    bsz = tuple(sizes[c] for c in batch)
    A = np.transpose(a, [la.index(c) for c in batch + fa + contr])
    A = _reshape(A, bsz + (_prod(sizes[c] for c in fa), _prod(sizes[c] for c in contr)))
    B = np.transpose(b, [lb.index(c) for c in batch + contr + fb])
    B = _reshape(B, bsz + (_prod(sizes[c] for c in contr), _prod(sizes[c] for c in fb)))
    C = np.matmul(A, B)
    C = _reshape(C, bsz + tuple(sizes[c] for c in fa) + tuple(sizes[c] for c in fb))
    return C, "".join(batch + fa + fb)


def _einsum_output(res, spec: str, out: str):
    """The last operand summed over the letters the output drops, its axes in the output's
    order."""
    extra = [k for k, c in enumerate(spec) if c not in out]
    if extra:
        res = np.sum(res, axis=tuple(extra))
        spec = "".join(c for c in spec if c in out)
    if spec != out:
        res = np.transpose(res, [spec.index(c) for c in out])
    return res


def _einsum(*ops, subscripts):
    ins, out = parse_einsum(subscripts, ops)
    if any(len(set(s)) != len(s) for s in ins) or len(set(out)) != len(out):
        return NotImplemented          # diagonals: no core equivalent
    sizes = {}
    for spec, o in zip(ins, ops):
        for c, n in zip(spec, o.shape):
            sizes.setdefault(c, n)
    cur = _einsum_presum(ins, ops, out)
    while len(cur) > 1:
        (a, la), (b, lb) = cur[0], cur[1]
        keep = set(out).union(*[set(s) for _, s in cur[2:]])
        cur = [_einsum_pair(a, la, b, lb, keep, sizes)] + cur[2:]
    res = _einsum_output(cur[0][0], cur[0][1], out)
    if res is ops[0] and len(ops) == 1:
        res = _astype(res, res.dtype)
    return _fix_dtype(res)


def _stack(arrays, axis):
    parts = [np.expand_dims(x, axis) for x in arrays]
    return _fix_dtype(np.concatenate(parts, axis=axis))


def _size_or_int(v):
    """An attribute that is a size of the program (kept symbolic) or a plain int."""
    return v if type(v) is SymInt else int(v)


def _tile(x, reps):
    reps = tuple(_size_or_int(r) for r in reps)
    d = max(x.ndim, len(reps))
    if all(type(r) is int and r == 1 for r in reps):
        return _astype(x, x.dtype)
    shape = (1,) * (d - x.ndim) + tuple(x.shape)
    full = (1,) * (d - len(reps)) + reps
    inter, target, out = [], [], []
    for s, r in zip(shape, full):
        inter += [1, s]
        target += [r, s]
        out.append(s if type(r) is int and r == 1 else s * r)
    y = np.reshape(x, tuple(inter))
    y = np.broadcast_to(y, tuple(target))
    return np.reshape(y, tuple(out))


def _repeat(x, repeats, axis=None):
    r = _size_or_int(repeats)
    if axis is None:
        x = np.reshape(x, (-1,))
        axis = 0
    if type(r) is int and r == 1:
        return _astype(x, x.dtype)
    y = np.expand_dims(x, axis + 1)
    target = list(y.shape)
    target[axis + 1] = r
    y = np.broadcast_to(y, tuple(target))
    out = list(x.shape)
    out[axis] = x.shape[axis] * r
    return np.reshape(y, tuple(out))


def _flip(x, axis=None):
    axes = range(x.ndim) if axis is None else axis
    index = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))
    if not x.ndim:
        return _astype(x, x.dtype)
    return x[index]


def _roll(x, shift, axis=None):
    t = x.tracer
    if axis is None:
        flat = np.reshape(x, (-1,))
        return np.reshape(_roll(flat, shift, 0), tuple(x.shape))
    axes = (axis,) if not isinstance(axis, tuple) else axis
    shifts = shift if isinstance(shift, tuple) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        if len(axes) == 1:
            shifts = (sum(shifts),) * 1
        elif len(shifts) == 1:
            shifts = shifts * len(axes)
        else:
            return NotImplemented
    per: Dict[int, Any] = {}
    for s, a in zip(shifts, axes):
        per[a] = per.get(a, 0) + s
    res = x
    for a, s in per.items():
        n = x.shape[a]
        idx = np.remainder(np.subtract(FUNCTIONS[np.arange](t, n), s), n)
        res = np.take(res, idx, axis=a)
    if res is x:
        res = _astype(x, x.dtype)
    return res


def _pad(x, pad_width, mode, **kw):
    if mode != "constant" or set(kw) - {"constant_values"}:
        return NotImplemented
    try:
        pairs = np.broadcast_to(np.asarray(kw.get("constant_values", 0)), (x.ndim, 2))
    except ValueError:
        return NotImplemented
    if pairs.dtype == object:
        return NotImplemented
    t = x.tracer
    cur = x
    for ax, widths in enumerate(pad_width):
        pieces = [cur]
        for side, w in enumerate(widths):
            if not w:
                continue
            shape = list(cur.shape)
            shape[ax] = w
            block = FUNCTIONS[np.full](t, tuple(shape), pairs[ax][side].item(), dtype=x.dtype)
            pieces.insert(0 if side == 0 else len(pieces), block)
        if len(pieces) > 1:
            cur = np.concatenate(pieces, axis=ax)
    if cur is x:
        cur = _astype(x, x.dtype)
    return cur


def _round(x, decimals=0):
    d = int(decimals)
    if d == 0:
        return NotImplemented
    if x.dtype.kind in "iub":
        if d >= 0:
            return _astype(x, x.dtype)
        f = float(10 ** -d)
        y = np.true_divide(_astype(x, np.float64), f)
        y = _emit_round(y)
        return _astype(np.multiply(y, f), x.dtype)
    if x.dtype.kind != "f":
        return NotImplemented
    f = float(10 ** abs(d))
    if d > 0:
        return np.true_divide(_emit_round(np.multiply(x, f)), f)
    return np.multiply(_emit_round(np.true_divide(x, f)), f)


def _emit_round(x: TracedArray) -> TracedArray:
    return x.tracer.emit("round", (x.node,), {"decimals": 0}, x.shape, x.dtype)


def _diff(x, n, axis):
    n = int(n)
    if n == 0:
        return _astype(x, x.dtype)
    op = np.not_equal if x.dtype == np.bool_ else np.subtract
    lo = tuple(slice(1, None) if i == axis else slice(None) for i in range(x.ndim))
    hi = tuple(slice(None, -1) if i == axis else slice(None) for i in range(x.ndim))
    for _ in range(n):
        x = op(x[lo], x[hi])
    return _fix_dtype(x)


def _norm(x, ord=None, axis=None, keepdims=False):
    if x.dtype.kind == "c":
        return NotImplemented
    if x.dtype.kind not in "f":
        x = _astype(x, np.float64)
    if axis is None and x.ndim == 1 and ord is not None:
        axis = 0
    if axis is None:
        if ord not in (None, "fro") or (ord == "fro" and x.ndim != 2):
            return NotImplemented
        flat = np.reshape(x, (-1,)) if x.ndim != 1 else x
        r = np.sqrt(np.matmul(flat, flat))
        if keepdims:
            r = np.reshape(r, (1,) * x.ndim)
        return _fix_dtype(r)
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(axes) == 1 and ord in (None, 2):
        r = np.sqrt(np.sum(np.multiply(x, x), axis=axes, keepdims=keepdims))
    elif len(axes) == 1 and ord == 1:
        r = np.sum(np.abs(x), axis=axes, keepdims=keepdims)
    elif len(axes) == 1 and ord == np.inf:
        r = np.max(np.abs(x), axis=axes, keepdims=keepdims)
    elif len(axes) == 2 and ord in (None, "fro"):
        r = np.sqrt(np.sum(np.multiply(x, x), axis=axes, keepdims=keepdims))
    else:
        return NotImplemented
    return _fix_dtype(r)


def _cumulative(api: str) -> Callable:
    def lower(x, axis, dtype=None):
        return _emit_as(api, x, attrs={"axis": axis} if dtype is None else
                        {"axis": axis, "dtype": dtype})
    return lower


_FIXED: Dict[str, Callable] = {
    "mean": _mean, "var": _var, "std": _std, "clip": _clip, "copy": _copy, "dot": _dot,
    "outer": _outer, "tensordot": _tensordot, "einsum": _einsum, "stack": _stack,
    "tile": _tile, "repeat": _repeat, "flip": _flip, "roll": _roll, "pad": _pad,
    "round": _round, "diff": _diff, "norm": _norm, "cumsum": _cumulative("cumulative_sum"),
    "cumprod": _cumulative("cumulative_prod"),
    "fabs": _same_as("abs"), "rint": _same_as("round"),
    "divmod_0": _divmod(0), "divmod_1": _divmod(1),
}


def _default_for(op: str) -> Optional[Callable]:
    fn = _FIXED.get(op)
    if fn is not None:
        return fn
    if _ufunc_for(op) is not None:
        return _elementwise(op)
    return None


def default_decompositions() -> Dict[str, Callable]:
    """The table ``run_decompositions()`` uses, as a dict you may copy and edit."""
    table = dict(_FIXED)
    for n in sorted(TRAITS):
        if TRAITS[n].ufunc is not None:
            table.setdefault(n, _elementwise(n))
    return table


# --------------------------------------------------------------------------- the replay
def _make_env(ep) -> ShapeEnv:
    cs = ep.constraints
    old = getattr(ep, "_env", None)
    env = ShapeEnv()
    syms: Dict[Sym, ValueRange] = dict(cs.ranges)
    for s in _graph_symbols(ep.graph):
        if s not in syms:
            syms[s] = ValueRange(0, INT_OO)
    infos, ranges = {}, {}
    for s, vr in syms.items():
        hint = None
        source = cs.dim_names.get(s) or s.name
        if old is not None and s in old.infos:
            hint = old.infos[s].hint
            source = old.infos[s].source
        elif not s.unbacked:
            hint = _witness(vr)
        kind = "unbacked" if s.unbacked else ("named" if s in cs.dim_names else "auto")
        infos[s] = SymInfo(s, hint, source, kind, None, vr, None)
        ranges[s] = vr
    facts = list(cs.facts)
    if old is not None:
        for f in old.facts:
            g = old.subst_cond(f)
            if type(g) is not bool and g not in facts and g.free_symbols <= set(syms):
                facts.append(g)
    env.adopt(infos, ranges, facts)
    return env


def _witness(vr: ValueRange) -> int:
    if not is_inf(vr.lower):
        return vr.lower
    if not is_inf(vr.upper):
        return min(vr.upper, 2)
    return 2


def _graph_symbols(graph: Graph) -> set:
    out: set = set()

    def visit(v):
        t = type(v)
        if t is Expr:
            out.update(v.free_symbols)
        elif t is tuple or t is list:
            for x in v:
                visit(x)
        elif t is slice:
            visit(v.start), visit(v.stop), visit(v.step)
        elif t is IndexAttr:
            visit(v.items)
        elif t is Subgraph:
            out.update(_graph_symbols(v.graph))

    for n in graph.nodes:
        if n.shape is not None:
            visit(n.shape)
        visit(n.inputs)
        visit(tuple(n.attrs.values()))
    visit(tuple(graph.outputs))
    return out


class _Replay:
    def __init__(self, ep, table: Dict[str, Callable], default: bool) -> None:
        self.ep = ep
        self.table = table
        self.default = default
        self.env = _make_env(ep)
        self.tracer = Tracer(self.env, {})
        self.lowered = 0

    # values ------------------------------------------------------------------
    def _map(self, v, m: Dict[Node, Any]):
        t = type(v)
        if t is Node:
            got = m[v]
            if type(got) is tuple:
                raise UserError("run_decompositions: the multi-output node %s is used "
                                "directly; only tuple_get may read it" % v.name)
            return got
        if t is tuple or t is list:
            return t(self._map(x, m) for x in v)
        if t is Subgraph:
            return self._subgraph(v)
        return v

    def _traced(self, node: Node) -> TracedArray:
        t = self.tracer
        return TracedArray(t, node, t.sym_shape(node.shape), node.dtype)

    def _arg(self, v, m):
        t = type(v)
        if t is Node:
            got = self._map(v, m)
            return self._traced(got)
        if t is Expr:
            return SymInt(v, self.env.hint_of(v), self.env)
        if t is tuple or t is list:
            return t(self._arg(x, m) for x in v)
        return v

    def _attr(self, v, arrays):
        t = type(v)
        if t is Expr:
            return SymInt(v, self.env.hint_of(v), self.env)
        if t is tuple or t is list:
            return t(self._attr(x, arrays) for x in v)
        if t is slice:
            return slice(self._attr(v.start, arrays), self._attr(v.stop, arrays),
                         self._attr(v.step, arrays))
        if t is IndexAttr:
            out = []
            for item in v.items:
                if isinstance(item, ArrRef):
                    out.append(arrays[item.i])
                else:
                    out.append(self._attr(item, arrays))
            return tuple(out)
        return v

    # graphs ------------------------------------------------------------------
    def graph(self, g: Graph, new: Graph) -> Dict[Node, Any]:
        m: Dict[Node, Any] = {}
        t = self.tracer
        outer = t.graph
        t.graph = new
        try:
            for n in g.nodes:
                m[n] = self._node(n, m, new)
        finally:
            t.graph = outer
        new.outputs = [self._map(o, m) if type(o) is Node else o for o in g.outputs]
        new.out_spec = g.out_spec
        return m

    def _copy(self, n: Node, m, new: Graph, op: Optional[str] = None) -> Node:
        node = Node(n.name, op or n.op, tuple(self._map(x, m) for x in n.inputs),
                    {k: self._map(v, m) for k, v in n.attrs.items()}, n.dtype, n.shape,
                    n.frame)
        node.meta = {k: (list(v) if type(v) is list else v) for k, v in n.meta.items()}
        new.nodes.append(node)
        if n.op == "constant":
            arr = n.meta.get("value")
            if arr is not None:
                self.tracer._consts[id(arr)] = (arr, node)
        return node

    def _subgraph(self, sub):
        g = Graph()
        g._names = dict(sub.graph._names)
        m = self.graph(sub.graph, g)
        g.lifted = list(getattr(sub.graph, "lifted", []))
        return Subgraph(sub.name, g, [m[i] for i in sub.inputs], list(sub.checks))

    def _pick(self, n: Node) -> Optional[Callable]:
        if n.op in ("input", "constant", "tuple_get"):
            return None
        if self.default:
            if is_core(n):
                return None
            fn = self.table.get(n.op)
            if fn is None:
                fn = _default_for(n.op)
            return fn
        return self.table.get(n.op)

    def _node(self, n: Node, m, new: Graph):
        if n.op == "tuple_get":
            src = m.get(n.inputs[0]) if type(n.inputs[0]) is Node else None
            if type(src) is tuple:
                return src[n.attrs["index"]]
        fn = self._pick(n)
        if fn is None:
            return self._copy(n, m, new)
        return self._lower(n, fn, m, new)

    def _call_args(self, n: Node, m):
        args = [self._arg(x, m) for x in n.inputs]
        if "::" in n.op and "params" in n.attrs:
            pos, kw = [], {}
            for slot, a in zip(n.attrs["params"], args):
                if slot == "":
                    pos.append(a)
                elif slot == "*":
                    pos.extend(a)
                else:
                    kw[slot] = a
            return pos, kw
        arrays = [a for a in args[1:] if type(a) is TracedArray] \
            if n.op in ("index", "index_put") else []
        kwargs = {k: self._attr(v, arrays) for k, v in n.attrs.items()}
        if n.op in ("index", "index_put"):
            args = args[:1] + (args[-1:] if n.op == "index_put" else [])
        return args, kwargs

    def _lower(self, n: Node, fn: Callable, m, new: Graph):
        t, env = self.tracer, self.env
        where = "%s (op %s%s)" % (n.name, n.op, ", " + n.source if n.source else "")
        if "::" in n.op and isinstance(n.attrs.get("fn"), Functionalized):
            raise UserError("run_decompositions: %s writes into its arguments (mutates_args); "
                            "lowering a mutating custom op is not supported" % where)
        args, kwargs = self._call_args(n, m)
        start = len(new.nodes)
        guards = len(env.guards)
        _STACK.append(_Ctx(t, n))
        try:
            res = fn(*args, **kwargs)
            env.commit_pending()
        except UserError as e:
            raise UserError("run_decompositions: lowering %s failed: %s" % (where, e)) from e
        except InternalError as e:
            raise UserError("run_decompositions: lowering %s needs a fact about sizes that the "
                            "program's constraints do not imply (%s)" % (where, e)) from e
        except Exception as e:
            raise UserError("run_decompositions: the decomposition of %s raised %s: %s"
                            % (where, type(e).__name__, e)) from e
        finally:
            _STACK.pop()
        if len(env.guards) > guards:
            texts = ", ".join("`%s`" % g.cond.format() for g in env.guards[guards:])
            raise UserError("run_decompositions: lowering %s needs %s, which the program's "
                            "constraints do not imply; a decomposition must compute the same "
                            "shapes for every valid input (do not branch on or convert sizes)"
                            % (where, texts))
        if res is NotImplemented:
            gone = set(new.nodes[start:])
            del new.nodes[start:]
            for key, (_, node) in list(t._consts.items()):
                if node in gone:
                    del t._consts[key]
            return self._copy(n, m, new)
        self.lowered += 1
        for k in new.nodes[start:]:
            k.frame = n.frame
            finalize_node(env, k)
        if n.dtype == np.dtype(object):
            if not isinstance(res, (tuple, list)):
                raise UserError("run_decompositions: %s has several outputs; its decomposition "
                                "must return a tuple of arrays, got %s"
                                % (where, type(res).__name__))
            return tuple(self._result(n, r, where) for r in res)
        out = self._result(n, res, where)
        binds = n.meta.get("binds")
        if binds:
            out.meta.setdefault("binds", []).extend(b for b in binds
                                                    if b not in out.meta.get("binds", []))
        if "binds_value" in n.meta:
            out.meta["binds_value"] = n.meta["binds_value"]
        return out

    def _result(self, n: Node, res, where: str) -> Node:
        t, env = self.tracer, self.env
        if isinstance(res, np.ndarray):
            res = t.constant(res)
            res.node.frame = n.frame
        if type(res) is not TracedArray:
            raise UserError("run_decompositions: the decomposition of %s returned a %s; it "
                            "must return an array" % (where, type(res).__name__))
        if res.tracer is not t:
            raise UserError("run_decompositions: the decomposition of %s returned an array "
                            "from another trace" % where)
        if n.dtype != np.dtype(object) and res.dtype != n.dtype:
            raise UserError("run_decompositions: the decomposition of %s returned dtype %s, "
                            "but the op produces %s; cast it with .astype"
                            % (where, res.dtype, n.dtype))
        got = tuple(env.simplify(to_expr(s)) for s in res.shape)
        want = tuple(env.simplify(s) for s in n.shape) if n.shape is not None else None
        if n.dtype != np.dtype(object) and want is not None:
            same = len(got) == len(want) and all(
                a == b or env.decide(R.eq(a, b)) is True for a, b in zip(got, want))
            if not same:
                fmt = lambda sh: "(%s)" % ", ".join(format_expr(s) for s in sh)  # noqa: E731
                raise UserError("run_decompositions: the decomposition of %s returned shape %s, "
                                "but the op produces %s" % (where, fmt(got), fmt(want)))
        return res.node


def _signature(ep, graph: Graph, m: Dict[Node, Any]):
    old = ep.graph_signature
    sig = Signature.__new__(Signature)
    # constants and state keep their kind and path (a lowering may add constants)
    kinds = {s.target: (s.kind, s.path) for s in old.input_specs
             if s.kind in ("CONSTANT", "STATE")}
    sig.input_specs = [InputSpec(kinds.get(n.attrs["target"], ("CONSTANT", None))[0], n.name,
                                 n.attrs["target"], kinds.get(n.attrs["target"], (0, None))[1])
                       for n in graph.constants]
    sig.input_specs += [InputSpec(s.kind, s.name, s.target, s.path)
                        for s in old.input_specs if s.kind not in ("CONSTANT", "STATE")]
    sig.output_specs = [OutputSpec("USER_OUTPUT", o.name if type(o) is Node else repr(o))
                        for o in graph.outputs]
    by_name = {n.name: n for n in ep.graph.nodes}
    for s in old.output_specs:
        if s.kind in ("USER_INPUT_MUTATION", "STATE_MUTATION"):
            final = m[by_name[s.name]]
            sig.output_specs.append(OutputSpec(s.kind, final.name, s.target))
    return sig


def _one_pass(ep, table: Dict[str, Callable], default: bool):
    r = _Replay(ep, table, default)
    g = Graph()
    g._names = dict(ep.graph._names)
    m = r.graph(ep.graph, g)
    _unique_names(g)
    sig = _signature(ep, g, m)
    new = ExportedProgram(g, sig, ep.constraints, ep.call_signature, ep.name,
                          getattr(ep, "_env", None))
    return new, r.lowered


def _unique_names(g: Graph) -> None:
    seen = set()
    for n in g.nodes:
        if n.name in seen:
            base, k = n.name, 1
            while "%s_%d" % (base, k) in seen or "%s_%d" % (base, k) in g._names:
                k += 1
            n.name = "%s_%d" % (base, k)
            g._names[n.name] = 1
        seen.add(n.name)
        for v in n.attrs.values():
            if isinstance(v, Subgraph):
                _unique_names(v.graph)


def run_decompositions(ep, table: Optional[Dict[str, Callable]] = None):
    """A new ExportedProgram: ``ep`` lowered to the core op set, or by ``table``."""
    if table is None:
        new, lowered = _one_pass(ep, {}, True)
        for _ in range(8):
            if not lowered:
                break
            new, lowered = _one_pass(new, {}, True)
        return new
    if not isinstance(table, dict):
        raise UserError("run_decompositions: table must be a dict from op names to functions, "
                        "got %s" % type(table).__name__)
    for k, v in table.items():
        if not isinstance(k, str):
            raise UserError("run_decompositions: table keys are op names (str) as in "
                            "node.op, got %r" % (k,))
        if not callable(v):
            raise UserError("run_decompositions: table[%r] must be a function, got %s"
                            % (k, type(v).__name__))
    new, _ = _one_pass(ep, dict(table), False)
    return new
