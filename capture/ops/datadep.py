"""Data-dependent sizes: ``nonzero``, ``argwhere``, ``flatnonzero``, ``unique``, boolean
masks and ``.item()``.

Each produces an *unbacked* symbol ``u<i>``: a size known only when the program runs, with
the range that is known statically (``[0, N]`` for N elements) and the fact ``u <= N``.
The node that produces it binds it at run time (``node.meta["binds"]``), so later shapes can
use it.  Branching on it raises ``GuardOnDataDependentError`` unless ranges, facts or an
``ss.check`` decide the question.
"""
from __future__ import annotations


import numpy as np

from symshape.algebra import relations as R
from symshape.errors import UserError, where
from symshape.algebra.ranges import ValueRange
from symshape.sizes.symint import SymInt, describe
from symshape.userframe import user_frame

from ..tracer import METHOD_OPS, TracedArray, Tracer, implements, to_expr
from .elementwise import astype
from .indexing import getitem
from .reduction import reduce
from .shape import reshape
from .registry import defop

defop("argwhere", "np.argwhere({0})", doc="indices of non-zero elements, one row each")
defop("flatnonzero", "np.flatnonzero({0})", doc="indices of non-zero elements, flattened")
defop("item", "{0}.item()", doc="the single element as a Python scalar")
defop("tuple_get", "{0}[{index}]", doc="one output of a multi-output node")
defop("unique", emit=lambda a, k: "np.unique(%s%s%s)" % (a[0], "".join(
    ", %s=True" % n for n in ("return_index", "return_inverse", "return_counts")
    if k.get(n) == "True"), ", axis=%s" % k["axis"] if k.get("axis", "None") != "None" else ""),
    doc="sorted unique elements or rows (and index / inverse / counts)")
defop("repeat_counts", "np.repeat({0}, {1}, axis={axis})",
      doc="repeat each element by its own count (a data-dependent length)")


def _frame():
    return where(user_frame(3))


def numel(x: TracedArray):
    n = 1
    for s in x.shape:
        n = n * s
    return n


def new_size(t: Tracer, source: str, upper, lower: int = 0) -> SymInt:
    """A fresh unbacked size in ``[lower, upper]`` (upper: an int or a size expression)."""
    env = t.env
    frame = user_frame(3)
    hi = env.bound(to_expr(upper)).upper if not isinstance(upper, int) else upper
    u = env.create_unbacked(source, ValueRange(lower, hi), frame)
    if not isinstance(upper, int):
        env.add_fact(R.le(u.expr, to_expr(upper)))
    return SymInt(u.expr, None, env)


def bind(arr: TracedArray, size: SymInt, axis: int) -> None:
    arr.node.meta.setdefault("binds", []).append((size.expr.as_symbol(), axis))


# ops whose two calls with the same inputs give different values: never the same mask
_IMPURE = ("random", "drawn", "draw", "custom", "::")


def _same_value_key(t: Tracer, node):
    """A key equal for two nodes that compute the same value (the same pure op of inputs
    with the same keys and the same scalars, with the same attributes):
    ``a[a > 0] = a[a > 0] ** -1.5`` computes its mask twice, and both masks select the same
    number of elements.  Inputs, constants and impure ops are their own key."""
    memo = t.__dict__.setdefault("_value_keys", {})
    got = memo.get(id(node))
    if got is not None:
        return got
    if any(w in node.op for w in _IMPURE) or node.op in ("input", "constant"):
        key = ("node", id(node))          # graph nodes live as long as the trace
    else:
        ins = tuple(_same_value_key(t, i) if hasattr(i, "op") else (type(i).__name__, repr(i))
                    for i in node.inputs)
        key = (node.op, ins, repr(sorted(node.attrs.items(), key=lambda kv: kv[0])))
    memo[id(node)] = key
    return key


def _count(t: Tracer, mask: TracedArray, what: str) -> SymInt:
    """The number of True elements of ``mask``: one unbacked symbol per mask value (two
    nodes computing the same value share it)."""
    cache = t.__dict__.setdefault("_mask_counts", {})
    key = _same_value_key(t, mask.node)
    got = cache.get(key)
    if got is None:
        got = cache[key] = new_size(t, "%s(%s)" % (what, mask.node.name), numel(mask))
    return got


def _nonzero_indices(t: Tracer, x: TracedArray, op: str, trailing: tuple) -> TracedArray:
    """``op`` (argwhere / flatnonzero) of ``x``: one row per non-zero element, the row count
    an unbacked size bound by the node."""
    u = _count(t, x, "nonzero")
    out = t.emit(op, (x.node,), {}, (u,) + trailing, np.intp)
    bind(out, u, 0)
    return out


@implements(np.argwhere)
def _argwhere(t, a):
    x = t.operand(a)
    return _nonzero_indices(t, x, "argwhere", (x.ndim,))


@implements(np.nonzero)
def _nonzero(t, a):
    x = t.operand(a)
    if x.ndim == 0:
        raise UserError("np.nonzero of a 0-d array is not supported; use np.atleast_1d%s"
                        % _frame())
    w = _argwhere(t, x)
    return tuple(getitem(t, w, (slice(None), i)) for i in range(x.ndim))


@implements(np.flatnonzero)
def _flatnonzero(t, a):
    return _nonzero_indices(t, t.operand(a), "flatnonzero", ())


@implements(np.count_nonzero)
def _count_nonzero(t, a, axis=None, *, keepdims=False):
    x = t.operand(a)
    return reduce(t, "sum", astype(t, np.not_equal(x, 0), np.intp), axis, keepdims)


def _unique_probe(ndim: int, dtype, flags):
    res = np.unique(np.zeros((1,) * max(ndim, 1), dtype), **flags)
    return res if isinstance(res, tuple) else (res,)


@implements(np.unique)
def _unique(t, ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
            *, equal_nan=True, sorted=True):
    x = t.operand(ar)
    if axis is not None:
        return _unique_along(t, x, axis, return_index, return_inverse, return_counts)
    n = numel(x)
    lower = 1 if (isinstance(n, int) and n >= 1) or (type(n) is SymInt and
                                                     t.env.bound(n.expr).lower >= 1) else 0
    u = new_size(t, "unique(%s)" % x.node.name, n, lower)
    flags = {"return_index": bool(return_index), "return_inverse": bool(return_inverse),
             "return_counts": bool(return_counts)}
    probe = _unique_probe(x.ndim, x.dtype, flags)
    if len(probe) == 1:
        out = t.emit("unique", (x.node,), dict(flags), (u,), probe[0].dtype)
        bind(out, u, 0)
        return out
    whole = t.emit("unique", (x.node,), dict(flags), (len(probe),), np.dtype(object))
    outs = []
    names = ["values"] + [k[7:] for k, v in flags.items() if v]
    for i, name in enumerate(names):
        shape = (u,)
        if name == "inverse":
            shape = x.shape if probe[i].ndim == max(x.ndim, 1) and x.ndim > 1 else (n,)
        o = t.emit("tuple_get", (whole.node,), {"index": i}, shape, probe[i].dtype,
                   name="unique_" + name)
        if i == 0:
            bind(o, u, 0)
        outs.append(o)
    return tuple(outs)


def _unique_along(t: Tracer, x: TracedArray, axis, return_index, return_inverse,
                  return_counts):
    """``np.unique(x, axis=k)``: the distinct slices along ``k``, sorted; how many is a
    data-dependent size between 1 (0 when the axis may be empty) and ``x.shape[k]``."""
    if type(axis) is not int or not x.ndim:
        raise UserError("np.unique(axis=...) takes one int axis of an array%s" % _frame())
    ax = axis % x.ndim
    n = x.shape[ax]
    lower = 1 if (isinstance(n, int) and n >= 1) or (
        type(n) is SymInt and t.env.bound(n.expr).lower >= 1) else 0
    u = new_size(t, "unique(%s, axis=%d)" % (x.node.name, ax), n, lower)
    flags = {"return_index": bool(return_index), "return_inverse": bool(return_inverse),
             "return_counts": bool(return_counts)}
    shape = tuple(u if i == ax else s for i, s in enumerate(x.shape))
    attrs = dict(flags, axis=ax)
    if not any(flags.values()):
        out = t.emit("unique", (x.node,), attrs, shape, x.dtype)
        bind(out, u, ax)
        return out
    whole = t.emit("unique", (x.node,), attrs, (1 + sum(flags.values()),), np.dtype(object))
    outs = [t.emit("tuple_get", (whole.node,), {"index": 0}, shape, x.dtype,
                   name="unique_values")]
    bind(outs[0], u, ax)
    for name, on in flags.items():
        if on:
            size = n if name == "return_inverse" else u
            outs.append(t.emit("tuple_get", (whole.node,), {"index": len(outs)}, (size,),
                               np.dtype(np.intp), name="unique_" + name[7:]))
    return tuple(outs)


def repeat_counts(t: Tracer, x: TracedArray, counts, axis):
    """``np.repeat(x, counts)`` with one count per element (or per slice along ``axis``):
    the result's length is the sum of the counts, known only when the program runs."""
    c = t.operand(counts)
    if type(c) is not TracedArray or c.ndim != 1 or c.dtype.kind not in "iu":
        raise UserError("np.repeat counts must be an int, or a 1-D integer array of counts%s"
                        % _frame())
    if axis is None:
        x, ax = reshape(t, x, (-1,)), 0
    else:
        ax = axis % x.ndim if x.ndim else 0
    if not (c.shape[0] == x.shape[ax]):
        raise UserError("np.repeat: %s counts for an axis of size %s%s"
                        % (describe(c.shape[0]), describe(x.shape[ax]), _frame()))
    u = new_size(t, "repeat(%s)" % x.node.name, _NO_UPPER)
    shape = tuple(u if i == ax else s for i, s in enumerate(x.shape))
    out = t.emit("repeat_counts", (x.node, c.node), {"axis": ax}, shape, x.dtype)
    bind(out, u, ax)
    return out


_NO_UPPER = 1 << 62           # the sum of counts has no bound the program knows


def boolean_mask_count(t: Tracer, mask: TracedArray) -> SymInt:
    return _count(t, mask, "nonzero")


def item(t: Tracer, x: TracedArray, args):
    if args:
        raise UserError("x.item(*args) is not supported while tracing; index first%s"
                        % _frame())
    n = numel(x)
    if not (n == 1):
        raise UserError("x.item() needs an array of size 1, got shape %s%s"
                        % (tuple(x.shape), _frame()))
    if x.dtype.kind not in "iub":
        # a float value: keep it as a 0-d array; arithmetic works, branching raises
        return reshape(t, x, ())
    if x.dtype.kind == "b":
        vr = ValueRange(0, 1)
    else:
        info = np.iinfo(x.dtype)
        vr = ValueRange(int(info.min), int(info.max))
    u = t.env.create_unbacked("%s.item()" % x.node.name, vr, user_frame(3))
    node = t.emit("item", (x.node,), {}, (), np.dtype(np.intp))
    node.node.meta["binds_value"] = u
    return SymInt(u.expr, None, t.env)


METHOD_OPS.update(item=item, repeat_counts=repeat_counts)
