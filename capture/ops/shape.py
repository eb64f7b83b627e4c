"""Shape ops: reshape, ravel, transpose / swapaxes / moveaxis, expand_dims, squeeze,
concatenate, stack.  Each rule computes with SymInts; the guards are exactly the
comparisons the rule makes (reshape's divisibility, concatenate's equal sizes)."""
from __future__ import annotations

from typing import List, Sequence

import numpy as np

from symshape.errors import UserError, where
from symshape.symint import SymInt
from symshape.userframe import user_frame

from ..tracer import TracedArray, Tracer, implements, shape_repr, to_expr
from .registry import defop

# methods rather than np.* functions: the same C code without the Python dispatch layer
defop("reshape", "{0}.reshape({shape})", doc="reshape (C order) to a shape")
defop("permute_dims", "{0}.transpose({axes})", doc="permute axes")
defop("expand_dims", "np.expand_dims({0}, {axis})", doc="insert size-1 axes")
defop("squeeze", "np.squeeze({0}, {axis})", doc="drop size-1 axes")
defop("concat", emit=lambda a, k: "np.concatenate(%s, axis=%s%s)" % (
    a[0], k["axis"], ", dtype=%s" % k["dtype"] if "dtype" in k else ""),
    doc="join along an existing axis")
defop("stack", "np.stack({0}, axis={axis})", doc="join along a new axis")


def prod(sizes) -> object:
    out = 1
    for s in sizes:
        out = out * s
    return out


def norm_axis(axis, ndim: int, what: str = "axis") -> int:
    try:
        a = int(axis)
    except TypeError:
        raise UserError("%s must be an int, got %r%s" % (what, axis, where(user_frame(3))))
    if not -ndim <= a < ndim:
        raise UserError("%s %d is out of bounds for an array of dimension %d%s"
                        % (what, a, ndim, where(user_frame(3))))
    return a % ndim


def _frame():
    return where(user_frame(3))


def _sizes(shape) -> tuple:
    if isinstance(shape, (tuple, list)):
        return tuple(shape)
    return (shape,)


def reshape(t: Tracer, x: TracedArray, newshape) -> TracedArray:
    target = _sizes(newshape)
    for s in target:
        if not (type(s) is SymInt or isinstance(s, (int, np.integer))):
            raise UserError("reshape: sizes must be ints, got %r%s" % (s, _frame()))
    target = tuple(int(s) if isinstance(s, np.integer) else s for s in target)
    numel = prod(x.shape)
    holes = [i for i, s in enumerate(target) if type(s) is int and s == -1]
    if len(holes) > 1:
        raise UserError("reshape: can only specify one unknown dimension (-1)%s" % _frame())
    if holes:
        known = prod(s for i, s in enumerate(target) if i != holes[0])
        if type(known) is int and known == 0:
            raise UserError("reshape: cannot infer -1 next to a size 0%s" % _frame())
        if not (numel % known == 0):
            raise UserError("cannot reshape an array of shape %s (size %s) into shape %s: the "
                            "size is not divisible by %s%s" % (shape_repr(x.shape), numel,
                                                               shape_repr(target), known, _frame()))
        out = list(target)
        out[holes[0]] = numel // known
    else:
        if not (numel == prod(target)):
            raise UserError("cannot reshape an array of shape %s (size %s) into shape %s%s"
                            % (shape_repr(x.shape), numel, shape_repr(target), _frame()))
        out = list(target)
    return t.emit("reshape", (x.node,), {"shape": tuple(map(to_expr, target))}, tuple(out),
                  x.dtype)


@implements(np.reshape)
def _reshape(t, a, shape=None, order="C", *, newshape=None, copy=None):
    if order not in ("C", "A"):
        raise UserError("reshape(order=%r) is not supported; only C order%s" % (order, _frame()))
    shape = shape if shape is not None else newshape
    t.env.cancel_pending([to_expr(s) for s in _sizes(shape)])
    return reshape(t, t.operand(a), shape)


@implements(np.ravel)
def _ravel(t, a, order="C"):
    x = t.operand(a)
    if order not in ("C", "A", "K"):
        raise UserError("ravel/flatten(order=%r) is not supported; only C order%s"
                        % (order, _frame()))
    return reshape(t, x, (-1,))


def transpose(t: Tracer, x: TracedArray, axes) -> TracedArray:
    nd = x.ndim
    if axes is None:
        axes = tuple(range(nd))[::-1]
    axes = tuple(norm_axis(a, nd) for a in axes)
    if sorted(axes) != list(range(nd)):
        raise UserError("transpose: axes %s are not a permutation of %d axes%s"
                        % (axes, nd, _frame()))
    if axes == tuple(range(nd)):
        return x
    return t.emit("permute_dims", (x.node,), {"axes": axes}, tuple(x.shape[a] for a in axes),
                  x.dtype, name="transpose")


@implements(np.transpose)
def _transpose(t, a, axes=None):
    return transpose(t, t.operand(a), axes)


@implements(np.swapaxes)
def _swapaxes(t, a, axis1, axis2):
    x = t.operand(a)
    perm = list(range(x.ndim))
    i, j = norm_axis(axis1, x.ndim), norm_axis(axis2, x.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(t, x, perm)


@implements(np.moveaxis)
def _moveaxis(t, a, source, destination):
    x = t.operand(a)
    src = [norm_axis(s, x.ndim) for s in _sizes(source)]
    dst = [norm_axis(d, x.ndim) for d in _sizes(destination)]
    if len(src) != len(dst):
        raise UserError("moveaxis: source and destination need the same number of axes%s"
                        % _frame())
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(t, x, order)


def expand_dims(t: Tracer, x: TracedArray, axis) -> TracedArray:
    axes = _sizes(axis)
    nd = x.ndim + len(axes)
    norm = sorted(norm_axis(a, nd) for a in axes)
    if len(set(norm)) != len(norm):
        raise UserError("expand_dims: repeated axis%s" % _frame())
    shape = list(x.shape)
    for a in norm:
        shape.insert(a, 1)
    return t.emit("expand_dims", (x.node,), {"axis": tuple(norm)}, tuple(shape), x.dtype)


@implements(np.expand_dims)
def _expand_dims(t, a, axis):
    return expand_dims(t, t.operand(a), axis)


@implements(np.squeeze)
def _squeeze(t, a, axis=None):
    x = t.operand(a)
    if axis is None:
        drop = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        drop = sorted({norm_axis(i, x.ndim) for i in _sizes(axis)})
        for i in drop:
            if not (x.shape[i] == 1):
                raise UserError("squeeze: cannot select axis %d, whose size %s is not 1%s"
                                % (i, x.shape[i], _frame()))
    if not drop:
        return x
    shape = tuple(s for i, s in enumerate(x.shape) if i not in drop)
    return t.emit("squeeze", (x.node,), {"axis": tuple(drop)}, shape, x.dtype)


def _result_dtype(xs: Sequence[TracedArray], dtype=None) -> np.dtype:
    if dtype is not None:
        return np.dtype(dtype)
    return np.result_type(*[x.dtype for x in xs])


@implements(np.concatenate)
def _concatenate(t, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise UserError("np.concatenate(..., out=...) is not supported while tracing%s"
                        % _frame())
    xs = [t.operand(a) for a in arrays]
    if not xs:
        raise UserError("need at least one array to concatenate%s" % _frame())
    if axis is None:
        xs = [reshape(t, x, (-1,)) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0:
        raise UserError("zero-dimensional arrays cannot be concatenated%s" % _frame())
    ax = norm_axis(axis, nd)
    for x in xs[1:]:
        if x.ndim != nd:
            raise UserError("concatenate: all inputs need %d dimensions, got shapes %s%s"
                            % (nd, " ".join(shape_repr(y.shape) for y in xs), _frame()))
        for i in range(nd):
            if i != ax and not (x.shape[i] == xs[0].shape[i]):
                raise UserError("concatenate: sizes must match except along axis %d; got "
                                "shapes %s%s" % (ax, " ".join(shape_repr(y.shape) for y in xs),
                                                 _frame()))
    dt = _result_dtype(xs, dtype)
    shape = list(xs[0].shape)
    for x in xs[1:]:
        shape[ax] = shape[ax] + x.shape[ax]
    attrs = {"axis": ax} if dtype is None else {"axis": ax, "dtype": dt}
    return t.emit("concat", (tuple(x.node for x in xs),), attrs, tuple(shape), dt,
                  name="concatenate")


@implements(np.stack)
def _stack(t, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise UserError("np.stack(..., out=...) is not supported while tracing%s" % _frame())
    xs = [t.operand(a) for a in arrays]
    if not xs:
        raise UserError("need at least one array to stack%s" % _frame())
    nd = xs[0].ndim
    for x in xs[1:]:
        if x.ndim != nd or not all(a == b for a, b in zip(x.shape, xs[0].shape)):
            raise UserError("stack: all input arrays must have the same shape; got %s%s"
                            % (" ".join(shape_repr(y.shape) for y in xs), _frame()))
    ax = norm_axis(axis, nd + 1)
    shape = list(xs[0].shape)
    shape.insert(ax, len(xs))
    return t.emit("stack", (tuple(x.node for x in xs),), {"axis": ax}, tuple(shape),
                  _result_dtype(xs, dtype))


def array_from_list(t: Tracer, xs) -> TracedArray:
    """A list mixing traced arrays and scalars used as an operand: stacked."""
    parts = [t.operand(v) if type(v) is TracedArray else t.constant(np.asarray(v)) for v in xs]
    return _stack(t, parts)
