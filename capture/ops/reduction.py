"""Reductions: sum, mean, prod, max, min, argmax, argmin, any, all, var, std, cumsum.

The output shape drops (or, with keepdims, keeps as 1) the reduced axes; the dtype is
NumPy's own answer for the same call on a one-element array of the input dtype.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from symshape.errors import UserError, where
from symshape.userframe import user_frame
from symshape.sizes.symint import sym_max
from symshape.rules import rule

from ..tracer import FUNCTIONS, METHOD_OPS, SIZE_FUNCTIONS, TracedArray, Tracer, implements
from .elementwise import astype
from .indexing import bound_constant_index
from .registry import defop
from .shape import norm_axis, reshape
from .traits import REDUCE

_REDUCTIONS = tuple(REDUCE)        # sum, mean, prod, max, min, any, all, var, std
# emitted as methods (x.sum(...)): the same C code without the np.* dispatch layer
for _n in _REDUCTIONS + ("argmax", "argmin", "cumsum", "cumprod"):
    defop(_n, emit=lambda a, k, n=_n: "%s.%s(%s)" % (
        a[0], n, ", ".join("%s=%s" % kv for kv in k.items())), doc="np.%s over axes" % _n)


def _frame():
    return where(user_frame(3))


def _axes(axis, nd: int):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        axes = tuple(norm_axis(a, nd) for a in axis)
        if len(set(axes)) != len(axes):
            raise UserError("duplicate value in 'axis'%s" % _frame())
        return tuple(sorted(axes))
    return (norm_axis(axis, nd),)


@lru_cache(maxsize=None)
def _dtype(name: str, in_dtype: np.dtype, nd: int, axes, keepdims: bool, dtype, extra) -> np.dtype:
    probe = np.ones((1,) * nd, in_dtype)
    kw = dict(extra)
    if dtype is not None:
        kw["dtype"] = dtype
    if keepdims:
        kw["keepdims"] = True
    with np.errstate(all="ignore"):
        return np.asarray(getattr(np, name)(probe, axis=axes, **kw)).dtype


# reductions with no identity: NumPy raises on an empty reduced extent
_NO_IDENTITY = {"max": "maximum", "min": "minimum", "argmax": "argmax", "argmin": "argmin"}


def require_nonempty(name: str, sizes) -> None:
    """``x.max()`` over an extent that may be empty: the program needs it non-empty, so
    that becomes a guard (or, for an explicit ``min=0``, a violation), never an admitted
    shape on which eager NumPy raises."""
    # the extent is non-empty iff every reduced size is: one simple guard per axis
    if not all(s >= 1 for s in sizes):
        raise UserError("zero-size array to reduction operation %s which has no identity%s"
                        % (_NO_IDENTITY[name], _frame()))


@rule("reduce.axes")
def reduce(t: Tracer, name: str, a, axis=None, keepdims=False, dtype=None, out=None,
           **extra):
    if out is not None:
        return _into(t, name, a, axis, keepdims, dtype, out, extra)
    bad = set(extra) - {"ddof"}
    if bad or extra.get("where") is not None:
        raise UserError("np.%s(..., %s=...) is not supported while tracing%s"
                        % (name, sorted(bad)[0], _frame()))
    x = t.operand(a)
    if type(x) is not TracedArray:
        return getattr(np, name)(x)
    nd = x.ndim
    axes = _axes(axis, nd)
    reduced = range(nd) if axes is None else axes
    if name in _NO_IDENTITY:
        require_nonempty(name, [x.shape[i] for i in reduced])
    if keepdims:
        shape = tuple(1 if i in reduced else s for i, s in enumerate(x.shape))
    else:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in reduced)
    keepdims = bool(keepdims)
    dt = _dtype(name, x.dtype, nd, axes, keepdims, None if dtype is None else np.dtype(dtype),
                tuple(sorted(extra.items())))
    attrs = {"axis": axes}
    if keepdims:
        attrs["keepdims"] = True
    if dtype is not None:
        attrs["dtype"] = np.dtype(dtype)
    attrs.update(sorted(extra.items()))
    return t.emit(name, (x.node,), attrs, shape, dt)


def _into(t: Tracer, name: str, a, axis, keepdims, dtype, out, extra):
    """``np.sum(x, axis, out=buf)``: the result is written into ``buf`` (computed in
    ``buf``'s dtype when no dtype is given, as NumPy does) and ``buf`` is returned."""
    o = t.operand(out)
    if type(o) is not TracedArray:
        raise UserError("np.%s(..., out=...) into a plain NumPy array while tracing: make the "
                        "output with np.zeros(..., like=x) or pass it in%s" % (name, _frame()))
    if dtype is None and REDUCE[name].acc == "widened" and o.dtype.kind in "fc":
        dtype = o.dtype
    res = reduce(t, name, a, axis, keepdims, dtype, None, **extra)
    if len(res.shape) != len(o.shape) or not all(p == q for p, q in zip(res.shape, o.shape)):
        raise UserError("np.%s: out= has shape %s, the result has shape %s%s"
                        % (name, tuple(o.shape), tuple(res.shape), _frame()))
    if res.dtype != o.dtype:
        res = astype(t, res, o.dtype)
    t.rebind(o, res)
    return out


def _unsupported(name: str, keyword: str) -> None:
    raise UserError("np.%s(..., %s=...) is not supported while tracing%s"
                    % (name, keyword, where(user_frame(3))))


def _no_initial(name: str, kw: dict) -> None:
    if kw.pop("initial", None) is not None:
        _unsupported(name, "initial")


def _make(name):
    def handler(t, a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        _no_initial(name, kw)
        return reduce(t, name, a, axis, keepdims, dtype, out, **kw)
    return handler


for _n, _f in (("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("var", np.var),
               ("std", np.std)):
    implements(_f)(_make(_n))


def _make_nodtype(name):
    def handler(t, a, axis=None, out=None, keepdims=False, **kw):
        _no_initial(name, kw)
        return reduce(t, name, a, axis, keepdims, None, out, **kw)
    return handler


for _n, _fs in (("max", (np.max, np.amax)), ("min", (np.min, np.amin)), ("any", (np.any,)),
                ("all", (np.all,))):
    implements(*_fs)(_make_nodtype(_n))


@rule("reduce.arg")
def _arg(name):
    def handler(t, a, axis=None, out=None, *, keepdims=False):
        if out is not None:
            _unsupported(name, "out")
        x = t.operand(a)
        if axis is None:
            require_nonempty(name, x.shape)
            shape = (1,) * x.ndim if keepdims else ()
            attrs = {"axis": None}
        else:
            ax = norm_axis(axis, x.ndim)
            require_nonempty(name, [x.shape[ax]])
            shape = tuple((1 if keepdims else None) if i == ax else s
                          for i, s in enumerate(x.shape))
            shape = tuple(s for s in shape if s is not None)
            attrs = {"axis": ax}
        if keepdims:
            attrs["keepdims"] = True
        return t.emit(name, (x.node,), attrs, shape, np.dtype(np.intp))
    return handler


implements(np.argmax)(_arg("argmax"))
implements(np.argmin)(_arg("argmin"))


def _cum(name):
    def handler(t, a, axis=None, dtype=None, out=None):
        if out is not None:
            _unsupported(name, "out")
        x, ax = _flat_or_axis(t, t.operand(a), axis)
        dt = _dtype(name, x.dtype, x.ndim, ax, False,
                    None if dtype is None else np.dtype(dtype), ())
        attrs = {"axis": ax}
        if dtype is not None:
            attrs["dtype"] = np.dtype(dtype)
        return t.emit(name, (x.node,), attrs, x.shape, dt)
    return handler


implements(np.cumsum)(_cum("cumsum"))
implements(np.cumprod)(_cum("cumprod"))

#: np.add.reduce -> sum, ...: the traits table's combine ufuncs of the plain reductions
_UFUNC_REDUCE = {r.combine: n for n, r in REDUCE.items()
                 if r.combine is not None and r.finish is None}
_UFUNC_ACCUMULATE = {np.add: "cumsum", np.multiply: "cumprod"}


def ufunc_method(t: Tracer, ufunc, method: str, inputs, kwargs):
    """``np.add.reduce`` and friends, mapped onto the reductions above."""
    if method == "reduce" and ufunc in _UFUNC_REDUCE and len(inputs) == 1:
        kwargs = dict(kwargs)
        axis = kwargs.pop("axis", 0)
        return reduce(t, _UFUNC_REDUCE[ufunc], inputs[0], axis, kwargs.pop("keepdims", False),
                      kwargs.pop("dtype", None), kwargs.pop("out", None), **kwargs)
    if method == "accumulate" and ufunc in _UFUNC_ACCUMULATE and len(inputs) == 1:
        kwargs = dict(kwargs)
        return _cum(_UFUNC_ACCUMULATE[ufunc])(t, inputs[0], kwargs.pop("axis", 0),
                                              kwargs.pop("dtype", None), kwargs.pop("out", None))
    if method == "at" and len(inputs) in (2, 3) and not kwargs:
        return _at(t, ufunc, *inputs)
    if method == "outer" and len(inputs) == 2 and not kwargs and ufunc.nin == 2:
        # ufunc.outer(a, b) is ufunc over a with b.ndim trailing size-1 axes, and b
        a, b = (t.operand(v) for v in inputs)
        b_nd = b.ndim if type(b) is TracedArray else np.ndim(b)
        a = np.reshape(a, tuple(np.shape(a)) + (1,) * b_nd) if b_nd else a
        return ufunc(a, b)
    if method == "reduce" and len(inputs) == 1 and ufunc.nin == 2 and \
            set(kwargs) <= {"axis", "keepdims", "dtype"}:
        # any other binary ufunc: a left fold along the axis, as NumPy's reduce computes
        return _fold(t, ufunc, inputs[0], kwargs)
    raise UserError("np.%s.%s is not supported while tracing%s; use the matching np function "
                    "(np.sum, np.cumsum, ...)" % (ufunc.__name__, method, where(user_frame(2))))


defop("ufunc_at", "_rt.ufunc_at({ufunc}, {0}, {1}, {2})",
      doc="unbuffered in-place ufunc at indices (np.add.at), on a copy")


def _at(t: Tracer, ufunc, a, indices, b=None):
    """``np.add.at(x, idx, v)``: repeated indices accumulate.  Functional: the result is a
    new value that ``x`` (and its views) then stands for, as for ``x[idx] = v``."""
    x = t.operand(a)
    if type(x) is not TracedArray:
        raise UserError("np.%s.at on a plain NumPy array while tracing: the target must be a "
                        "traced value (an input, model state, or made with like=)%s"
                        % (ufunc.__name__, _frame()))
    if isinstance(indices, tuple) or (ufunc.nin == 2) != (b is not None):
        raise UserError("np.%s.at while tracing takes one index (an int or an integer array) "
                        "and %s%s" % (ufunc.__name__, "a value" if ufunc.nin == 2 else
                                      "no value", _frame()))
    idx = t.operand(indices if not isinstance(indices, list) else np.asarray(indices))
    if type(idx) is not TracedArray:
        idx = t.constant(np.asarray(idx))
    if idx.dtype.kind not in "iu" or not x.ndim:
        raise UserError("np.%s.at needs an integer index into an array%s"
                        % (ufunc.__name__, _frame()))
    bound_constant_index(idx, x.shape[0], 0)
    v = t.operand(b) if b is not None else None
    args = (x.node, idx.node, v.node if type(v) is TracedArray else v)
    res = t.emit("ufunc_at", args, {"ufunc": ufunc}, x.shape, x.dtype)
    t.rebind(x, res)


def _fold(t: Tracer, ufunc, a, kwargs):
    x = t.operand(a)
    axis = kwargs.get("axis", 0)
    if type(axis) is not int or not x.ndim:
        raise UserError("np.%s.reduce while tracing takes one int axis%s"
                        % (ufunc.__name__, where(user_frame(3))))
    ax = axis % x.ndim
    n = x.shape[ax]
    if type(n) is not int:
        raise UserError("np.%s.reduce over an axis of dynamic size %s has no traced form (it "
                        "is a loop over that axis)%s" % (ufunc.__name__, n, where(user_frame(3))))
    if n == 0:
        raise UserError("np.%s.reduce over an empty axis%s" % (ufunc.__name__,
                                                              where(user_frame(3))))
    take = [np.take(x, i, axis=ax) for i in range(n)]
    acc = take[0]
    for v in take[1:]:
        acc = ufunc(acc, v)
    if kwargs.get("dtype") is not None:
        acc = acc.astype(kwargs["dtype"])
    return np.expand_dims(acc, ax) if kwargs.get("keepdims") else acc


# --------------------------------------------------------------------------- sort & friends
defop("sort", "np.sort({0}, axis={axis})", doc="sorted copy along an axis")
defop("argsort", "np.argsort({0}, axis={axis}, kind={kind}, stable={stable})",
      doc="indices that sort along an axis")
defop("diff", "np.diff({0}, n={n}, axis={axis})", doc="n-th discrete difference")
defop("norm", "np.linalg.norm({0}, ord={ord}, axis={axis}, keepdims={keepdims})",
      doc="vector / matrix norm")


@rule("reduce.flat_or_axis")
def _flat_or_axis(t, x, axis):
    if axis is None:
        return reshape(t, x, (-1,)), 0
    return x, norm_axis(axis, x.ndim)


@implements(np.sort)
def _sort(t, a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise UserError("np.sort(order=...) is not supported while tracing%s" % _frame())
    x, ax = _flat_or_axis(t, t.operand(a), axis)
    return t.emit("sort", (x.node,), {"axis": ax}, x.shape, x.dtype)


@implements(np.argsort)
def _argsort(t, a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise UserError("np.argsort(order=...) is not supported while tracing%s" % _frame())
    x, ax = _flat_or_axis(t, t.operand(a), axis)
    return t.emit("argsort", (x.node,), {"axis": ax, "kind": kind, "stable": stable}, x.shape,
                  np.dtype(np.intp))


@rule("diff.length")
@implements(np.diff)
def _diff(t, a, n=1, axis=-1, prepend=None, append=None):
    if prepend is not None or append is not None:
        raise UserError("np.diff(prepend=/append=) is not supported while tracing%s" % _frame())
    x = t.operand(a)
    ax = norm_axis(axis, x.ndim)
    n = int(n)
    if n < 0:       # NumPy raises; the size rule below would grow the axis instead
        raise UserError("np.diff: order must be non-negative but got %d%s" % (n, _frame()))
    size = x.shape[ax] - n
    size = sym_max(size, 0) if type(size) is not int else max(size, 0)
    shape = tuple(size if i == ax else s for i, s in enumerate(x.shape))
    dt = np.diff(np.zeros((2,) * max(x.ndim, 1), x.dtype), axis=-1).dtype
    return t.emit("diff", (x.node,), {"n": n, "axis": ax}, shape, dt)


@implements(np.linalg.norm)
def _norm(t, x, ord=None, axis=None, keepdims=False):
    v = t.operand(x)
    if ord not in (None, 2, 1, np.inf, "fro") or (ord not in (None, "fro") and axis is None
                                                  and v.ndim != 1):
        raise UserError("np.linalg.norm(ord=%r) is not supported while tracing%s"
                        % (ord, _frame()))
    axes = _axes(axis, v.ndim)
    reduced = range(v.ndim) if axes is None else axes
    if keepdims:
        shape = tuple(1 if i in reduced else s for i, s in enumerate(v.shape))
    else:
        shape = tuple(s for i, s in enumerate(v.shape) if i not in reduced)
    dt = np.asarray(np.linalg.norm(np.ones((1,) * max(v.ndim, 1), v.dtype))).dtype
    ax_attr = None if axis is None else (axes[0] if isinstance(axis, (int, np.integer))
                                          else axes)
    return t.emit("norm", (v.node,), {"ord": ord, "axis": ax_attr, "keepdims": bool(keepdims)},
                  shape, dt)


@implements(np.median)
def _median(t, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle of the sorted values (the mean of the two middle ones for an even count),
    NaN where the reduced values hold a NaN, exactly as NumPy's median."""
    if out is not None or (axis is not None and type(axis) is not int):
        raise UserError("np.median while tracing takes axis=None or one int axis, no out=%s"
                        % _frame())
    x = t.operand(a)
    if axis is None:
        flat, ax = reshape(t, x, (-1,)), 0
    else:
        flat, ax = x, norm_axis(axis, x.ndim)
    n = flat.shape[ax]
    if not (n >= 1):
        # eager NumPy returns NaN with a warning for no values; a traced median needs one
        raise UserError("np.median over an axis that may be empty is not supported while "
                        "tracing (give the axis min=1)%s" % _frame())
    s = np.sort(flat, axis=ax)
    lo = np.take(s, (n - 1) // 2, axis=ax)
    hi = np.take(s, n // 2, axis=ax)
    mid = np.mean(np.stack([lo, hi]), axis=0)
    if x.dtype.kind in "fc":
        mid = np.where(np.isnan(np.take(s, n - 1, axis=ax)), np.nan, mid).astype(mid.dtype)
    if keepdims:
        mid = mid.reshape(tuple(1 for _ in x.shape)) if axis is None else \
            np.expand_dims(mid, ax)
    return mid


METHOD_OPS["ufunc_method"] = ufunc_method


# a list of traced values (``np.sum([np.sum(W ** 2) for W in weights])``) never reaches
# ``__array_function__`` (NumPy dispatches on the list, not its items): routed like the
# functions that take sizes
SIZE_FUNCTIONS.extend(f for f in (np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin,
                                  np.std, np.var, np.average, np.median) if f in FUNCTIONS)
