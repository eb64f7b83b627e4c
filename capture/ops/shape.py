"""Shape ops: reshape, ravel, transpose / swapaxes / moveaxis, expand_dims, squeeze,
concatenate, stack.  Each rule computes with SymInts; the guards are exactly the
comparisons the rule makes (reshape's divisibility, concatenate's equal sizes)."""
from __future__ import annotations

from functools import reduce
from operator import index
from typing import Sequence

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symfloat import SymFloat
from symshape.sizes.symint import SymInt, describe, sym_min, sym_max
from symshape.userframe import user_frame
from symshape.algebra.expr import smax, smin
from symshape.rules import rule

from ..ir import IndexAttr
from ..tracer import (METHOD_OPS, SIZE_FUNCTIONS, TracedArray, Tracer, holds_traced,
                      implements, shape_repr, to_expr)
from .indexing import getitem
from .creation import nonnegative
from .registry import defop

# methods rather than np.* functions: the same C code without the Python dispatch layer
defop("reshape", "{0}.reshape({shape})", doc="reshape (C order) to a shape")
defop("permute_dims", "{0}.transpose({axes})", doc="permute axes")
defop("expand_dims", "np.expand_dims({0}, {axis})", doc="insert size-1 axes")
defop("squeeze", "np.squeeze({0}, {axis})", doc="drop size-1 axes")
defop("concat", emit=lambda a, k: "np.concatenate(%s, axis=%s%s)" % (
    a[0], k["axis"], ", dtype=%s" % k["dtype"] if "dtype" in k else ""),
    doc="join along an existing axis")
defop("stack", emit=lambda a, k: "np.stack(%s, axis=%s%s)" % (
    a[0], k["axis"], ", dtype=%s" % k["dtype"] if "dtype" in k else ""),
    doc="join along a new axis")


def _times(out, s) -> object:
    """One step of ``prod``: the product so far times the next size."""
    return out * s


def prod(sizes) -> object:
    """The product of ``sizes`` (1 for none): the left fold of ``_times`` from 1 (a fold,
    so that a proof of its one step covers every number of sizes: proofs/reshape_every.py)."""
    return reduce(_times, sizes, 1)


def norm_axis(axis, ndim: int, what: str = "axis") -> int:
    """``axis`` as an index in ``[0, ndim)``, as NumPy's ``normalize_axis_index`` reads it:
    an integer (``operator.index``: a float or a string is a TypeError there too) in
    ``[-ndim, ndim)``; a UserError otherwise."""
    try:
        a = int(axis) if isinstance(axis, int) or type(axis) is SymInt else index(axis)
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


def _int_size(s) -> object:
    """A reshape target's size as an int or a SymInt (a NumPy integer as an int); a
    UserError for anything else."""
    if not (type(s) is SymInt or isinstance(s, (int, np.integer))):
        raise UserError("reshape: sizes must be ints, got %r%s" % (s, _frame()))
    return int(s) if isinstance(s, np.integer) else s


def _not_negative(s, target: tuple) -> None:
    """A UserError for a size of ``target`` below -1 (a literal) or below 0 (a symbolic
    size: never inferred)."""
    if type(s) is int and s < -1:
        raise UserError("reshape: negative size %d in shape %s%s"
                        % (s, shape_repr(target), _frame()))
    if type(s) is SymInt and not (s >= 0):
        raise UserError("reshape: the size %s is negative for the example inputs%s"
                        % (s, _frame()))


@rule("reshape.infer", "reshape.divisibility", "reshape.explicit")
def reshape(t: Tracer, x: TracedArray, newshape) -> TracedArray:
    # each size read alone (every type first, then every sign), so that a proof of one
    # size's checks covers targets of every length (proofs/reshape_every.py)
    target = tuple(_int_size(s) for s in _sizes(newshape))
    for s in target:
        _not_negative(s, target)
    numel = prod(x.shape)
    holes = [i for i, s in enumerate(target) if type(s) is int and s == -1]
    if len(holes) > 1:
        raise UserError("reshape: can only specify one unknown dimension (-1)%s" % _frame())
    if holes:
        known = prod(s for i, s in enumerate(target) if i != holes[0])
        if not (known >= 1):
            raise UserError("reshape: cannot infer -1 next to a size 0%s" % _frame())
        if not (numel % known == 0):
            raise UserError("cannot reshape an array of shape %s (size %s) into shape %s: the "
                            "size is not divisible by %s%s" % (shape_repr(x.shape), describe(numel),
                                                               shape_repr(target), describe(known),
                                                               _frame()))
        out = list(target)
        out[holes[0]] = numel // known
    else:
        if not (numel == prod(target)):
            raise UserError("cannot reshape an array of shape %s (size %s) into shape %s%s"
                            % (shape_repr(x.shape), describe(numel), shape_repr(target), _frame()))
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


@rule("shape.ravel")
@implements(np.ravel)
def _ravel(t, a, order="C"):
    x = t.operand(a)
    if order not in ("C", "A", "K"):
        raise UserError("ravel/flatten(order=%r) is not supported; only C order%s"
                        % (order, _frame()))
    return reshape(t, x, (-1,))


@rule("shape.permute")
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
    # NumPy's normalize_axis_tuple refuses a repeated axis (a repeated destination would
    # otherwise build a permutation and fail later, outside the rule)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise UserError("np.moveaxis: repeated axis in source %s or destination %s (after "
                        "normalising negative axes); name each axis once%s"
                        % (tuple(src), tuple(dst), _frame()))
    if len(src) != len(dst):
        raise UserError("moveaxis: source and destination need the same number of axes%s"
                        % _frame())
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(t, x, order)


@rule("shape.expand_dims")
def expand_dims(t: Tracer, x: TracedArray, axis) -> TracedArray:
    norm = _inserted_axes(x, axis)
    shape = list(x.shape)
    for a in norm:
        shape.insert(a, 1)
    return t.emit("expand_dims", (x.node,), {"axis": tuple(norm)}, tuple(shape), x.dtype)


def _inserted_axes(x: TracedArray, axis) -> list:
    """The axes of the result where ``expand_dims`` puts its 1s: every axis normalised
    alike against the result's rank, sorted, a repeated one refused (NumPy's
    ``normalize_axis_tuple``).  Apart, so that a proof runs it on a symbolic rank
    (proofs/expand_squeeze_every.py)."""
    axes = _sizes(axis)
    nd = x.ndim + len(axes)
    norm = sorted(norm_axis(a, nd) for a in axes)
    if len(set(norm)) != len(norm):
        raise UserError("expand_dims: repeated axis%s" % _frame())
    return norm


@implements(np.expand_dims)
def _expand_dims(t, a, axis):
    return expand_dims(t, t.operand(a), axis)


@rule("shape.squeeze")
@implements(np.squeeze)
def _squeeze(t, a, axis=None):
    x = t.operand(a)
    if axis is None:
        drop = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        drop = _squeezed_axes(x, axis)
    if not drop:
        return x
    shape = tuple(s for i, s in enumerate(x.shape) if i not in drop)
    return t.emit("squeeze", (x.node,), {"axis": tuple(drop)}, shape, x.dtype)


def _squeezed_axes(x: TracedArray, axis) -> list:
    """The axes ``np.squeeze(x, axis)`` removes (axis not None): every axis normalised
    alike, sorted, a repeated one refused as NumPy refuses it, each of size 1.  Apart, so
    that a proof runs it on a symbolic rank (proofs/expand_squeeze_every.py)."""
    drop = sorted(norm_axis(i, x.ndim) for i in _sizes(axis))
    if len(set(drop)) != len(drop):
        # NumPy raises; a set here would squeeze the axis once instead
        raise UserError("np.squeeze: axis=%r names an axis twice (NumPy raises: duplicate "
                        "value in 'axis'); name each axis once%s" % (axis, _frame()))
    for i in drop:
        if not (x.shape[i] == 1):
            raise UserError("squeeze: cannot select axis %d, whose size %s is not 1%s"
                            % (i, x.shape[i], _frame()))
    return drop


def _result_dtype(xs: Sequence[TracedArray], dtype=None) -> np.dtype:
    if dtype is not None:
        return np.dtype(dtype)
    return np.result_type(*[x.dtype for x in xs])


@rule("concatenate.shape")
@implements(np.concatenate)
def _concatenate(t, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise UserError("np.concatenate(..., out=...) is not supported while tracing%s"
                        % _frame())
    if type(arrays) is TracedArray:
        _some_rows(arrays)
        return _fresh(t, _rows_joined(t, arrays, axis), dtype)
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


@rule("shape.pad_tile_repeat_stack")
@implements(np.stack)
def _stack(t, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise UserError("np.stack(..., out=...) is not supported while tracing%s" % _frame())
    if type(arrays) is TracedArray:            # the rows of one array, stacked again
        _some_rows(arrays)
        if arrays.ndim == 0:
            raise UserError("need at least one array to stack%s" % _frame())
        return _fresh(t, np.moveaxis(arrays, 0, norm_axis(axis, arrays.ndim)), dtype)
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
    attrs = {"axis": ax} if dtype is None else {"axis": ax, "dtype": np.dtype(dtype)}
    return t.emit("stack", (tuple(x.node for x in xs),), attrs, tuple(shape),
                  _result_dtype(xs, dtype))


def _list_item(t: Tracer, v) -> TracedArray:
    if type(v) is TracedArray:
        return t.operand(v)
    if isinstance(v, (list, tuple)) and holds_traced(v):
        return array_from_list(t, v)          # a nested list: a row of the result
    if type(v) is SymInt or type(v) is SymFloat:
        # a size (or a float of sizes) as data: NumPy's dtype for the same Python number
        dt = np.dtype(int) if type(v) is SymInt else np.dtype(float)
        return t.emit("full", (to_expr(v),), {"shape": (), "dtype": dt}, (), dt)
    return t.constant(np.asarray(v))


def array_from_list(t: Tracer, xs) -> TracedArray:
    """A (nested) list mixing traced arrays, traced scalars, sizes and numbers used as an
    operand (``np.array([[1 - 2 * q2, ...], ...])``, ``np.sum([np.sum(W ** 2) for W in
    weights])``): stacked, row by row."""
    return _stack(t, [_list_item(t, v) for v in xs])


# --------------------------------------------------------------------------- more shape ops
defop("tile", "np.tile({0}, {reps})", doc="repeat the whole array (static counts)")
defop("repeat", "np.repeat({0}, {repeats}, axis={axis})", doc="repeat elements (static count)")
defop("pad", emit=lambda a, k: "np.pad(%s, %s, mode=%s%s)" % (
    a[0], k["pad_width"], k["mode"], "".join(", %s=%s" % (n, v) for n, v in k.items()
                                             if n not in ("pad_width", "mode"))),
    doc="pad with static widths")
defop("flip", "np.flip({0}, axis={axis})", doc="reverse along axes")
defop("roll", "np.roll({0}, {shift}, axis={axis})", doc="roll along axes")


def _static_ints(v, what: str) -> tuple:
    vals = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    out = []
    for x in vals:
        if isinstance(x, (tuple, list)):
            out.append(_static_ints(x, what))
        elif isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            out.append(int(x))
        elif type(x) is SymInt:
            out.append(int(x))          # specialises, with a logged warning
        else:
            raise UserError("%s must be static ints while tracing, got %r%s"
                            % (what, x, _frame()))
    return tuple(out)


def _sizes_or_ints(v, what: str) -> tuple:
    """Like ``_static_ints``, keeping sizes symbolic (pad widths computed from sizes)."""
    vals = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    out = []
    for x in vals:
        if isinstance(x, (tuple, list)):
            out.append(_sizes_or_ints(x, what))
        elif type(x) is SymInt:
            out.append(x)
        else:
            out.extend(_static_ints(x, what))
    return tuple(out)


@implements(np.tile)
def _tile(t, A, reps):
    x = t.operand(A)
    # counts computed from sizes stay sizes (``np.tile(np.arange(k), (numframes, 1))``)
    reps = _sizes_or_ints(reps, "np.tile reps")
    for r in reps:
        if type(r) is SymInt:       # a guard r >= 0: NumPy raises on a negative count
            nonnegative(r, "np.tile reps", user_frame(3))
        elif r < 0:     # NumPy raises "negative dimensions are not allowed"
            raise UserError("np.tile: negative repetitions %s%s" % (reps, _frame()))
    nd = max(x.ndim, len(reps))
    shape = (1,) * (nd - x.ndim) + tuple(x.shape)
    reps_full = (1,) * (nd - len(reps)) + reps
    out = tuple(s if type(r) is int and r == 1 else s * r for s, r in zip(shape, reps_full))
    return t.emit("tile", (x.node,), {"reps": tuple(map(to_expr, reps))}, out, x.dtype)


@implements(np.repeat)
def _repeat(t, a, repeats, axis=None):
    x = t.operand(a)
    if (type(repeats) is TracedArray and repeats.ndim == 1) or (
            isinstance(repeats, np.ndarray) and repeats.ndim == 1 and repeats.shape[0] != 1):
        return METHOD_OPS["repeat_counts"](t, x, repeats, axis)    # datadep.py
    # one count, a size kept symbolic (``np.repeat(a, N)``: N stays a size of the program)
    (r,) = _sizes_or_ints(repeats, "np.repeat counts (arrays of counts are data-dependent)") \
        if not isinstance(repeats, (tuple, list)) or len(repeats) == 1 else (None,)
    if r is None:
        raise UserError("np.repeat with a list of counts is not supported while tracing; use a "
                        "single static count%s" % _frame())
    if type(r) is SymInt:     # a guard r >= 0: NumPy raises on a negative count
        nonnegative(r, "np.repeat count", user_frame(3))
    elif r < 0:       # NumPy raises; the size rule below would give a negative size
        raise UserError("np.repeat: negative count %d%s" % (r, _frame()))
    if axis is None:
        return t.emit("repeat", (x.node,), {"repeats": to_expr(r), "axis": None},
                      (prod(x.shape) * r,), x.dtype)
    ax = norm_axis(axis, x.ndim)
    shape = tuple(s * r if i == ax else s for i, s in enumerate(x.shape))
    return t.emit("repeat", (x.node,), {"repeats": to_expr(r), "axis": ax}, shape, x.dtype)


@implements(np.pad)
def _pad(t, array, pad_width, mode="constant", **kwargs):
    x = t.operand(array)
    widths = _sizes_or_ints(pad_width, "np.pad widths")
    if widths and not isinstance(widths[0], tuple):
        widths = (widths,)
    if any(not isinstance(w, tuple) or len(w) not in (1, 2) for w in widths):
        # NumPy broadcasts pad_width to (ndim, 2): an entry of three widths never fits
        raise UserError("np.pad: pad_width %r is not one width, a (before, after) pair or "
                        "one of those per axis%s" % (pad_width, _frame()))
    if len(widths) == 1:
        widths = widths * x.ndim
    widths = tuple(w if len(w) == 2 else (w[0], w[0]) for w in widths)
    if len(widths) != x.ndim:
        raise UserError("np.pad: pad_width needs one (before, after) pair per axis%s" % _frame())
    if not isinstance(mode, str):
        raise UserError("np.pad: mode must be a string while tracing%s" % _frame())
    for k, v in kwargs.items():
        if type(v) is TracedArray:
            raise UserError("np.pad: %s must be a constant while tracing%s" % (k, _frame()))
    if mode in _PAD_NEEDS_VALUES:
        # these modes read the axis' own values: NumPy raises on an empty axis it pads
        for ax, (s, (a, b)) in enumerate(zip(x.shape, widths)):
            if (a or b) and not (s >= 1):
                raise UserError("np.pad: can't extend empty axis %d using modes other than "
                                "'constant' or 'empty'%s" % (ax, _frame()))
    for w in widths:
        for v in w:
            if type(v) is SymInt and not (v >= 0):
                raise UserError("np.pad: the width %s is negative for the example inputs "
                                "(NumPy raises 'index can't contain negative values')%s"
                                % (describe(v), _frame()))
    shape = tuple(s + a + b for s, (a, b) in zip(x.shape, widths))
    attr = tuple(tuple(to_expr(v) for v in w) for w in widths)
    return t.emit("pad", (x.node,), dict({"pad_width": attr, "mode": mode}, **kwargs),
                  shape, x.dtype)


_PAD_NEEDS_VALUES = {"edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean",
                     "median", "linear_ramp"}


def _once(axes: tuple, what: str) -> tuple:
    """``axes`` (normalised) when each is named once; NumPy's ``normalize_axis_tuple``
    raises "repeated axis" otherwise.  Each axis is tested against those before it only
    (a loop over the whole tuple: proofs/keep_every.py reads it so)."""
    seen: list = []
    for a in axes:
        if a in seen:
            raise UserError("%s: axis %d is named twice (NumPy raises 'repeated axis'): name "
                            "each axis once%s" % (what, a, _frame()))
        seen.append(a)
    return axes


@rule("shape.flip")
@implements(np.flip)
def _flip(t, m, axis=None):
    x = t.operand(m)
    ax = None if axis is None else _once(tuple(norm_axis(a, x.ndim) for a in _sizes(axis)),
                                         "np.flip")
    return t.emit("flip", (x.node,), {"axis": ax}, x.shape, x.dtype)


@implements(np.fliplr)
def _fliplr(t, m):
    return _flip(t, m, 1)


@implements(np.flipud)
def _flipud(t, m):
    return _flip(t, m, 0)


def _broadcast_pair(n: int, m) -> bool:
    """Whether NumPy broadcasts a sequence of ``n`` items against ``m`` items (``None``: a
    scalar): equal lengths, or either of one item."""
    return m is None or n == m or n == 1 or m == 1


@rule("shape.roll")
@implements(np.roll)
def _roll(t, a, shift, axis=None):
    x = t.operand(a)
    shift = _static_ints(shift, "np.roll shift") if isinstance(shift, (tuple, list)) else \
        (shift.expr if type(shift) is SymInt else int(shift))
    ax = None if axis is None else (tuple(norm_axis(v, x.ndim) for v in axis)
                                    if isinstance(axis, (tuple, list))
                                    else norm_axis(axis, x.ndim))
    if isinstance(shift, tuple) and (tuple in map(type, shift) or not _broadcast_pair(
            len(shift), len(ax) if isinstance(ax, tuple) else None)):
        raise UserError("np.roll: the shifts %r do not pair with the axes %r (NumPy "
                        "broadcasts them, each a scalar or a 1-D sequence): give one shift, "
                        "or one per axis%s" % (shift, axis, _frame()))
    return t.emit("roll", (x.node,), {"shift": shift, "axis": ax}, x.shape, x.dtype)


def _some_rows(x: TracedArray) -> None:
    """One array passed where NumPy wants a sequence of arrays (``np.vstack(x)``) is the
    sequence of its rows: NumPy raises when there are none, so the contract needs one
    (a guard on ``x.shape[0]``; eager NumPy: "need at least one array to concatenate")."""
    if x.ndim == 0 or not (x.shape[0] >= 1):
        raise UserError("need at least one array to concatenate or stack: %s has no rows%s"
                        % (shape_repr(x.shape), _frame()))


def _rows_joined(t: Tracer, x: TracedArray, axis) -> TracedArray:
    """``np.concatenate(x, axis)`` of one array: its ``x.shape[0]`` rows joined along
    ``axis`` of a row, i.e. ``x`` with axis 0 moved to ``axis`` and merged with the next
    one; no loop over the rows, so their number stays symbolic."""
    if x.ndim < 2:
        raise UserError("zero-dimensional arrays cannot be concatenated%s" % _frame())
    if axis is None:
        return reshape(t, x, (-1,))
    a = norm_axis(axis, x.ndim - 1)
    y = np.moveaxis(x, 0, a)
    merged = tuple(y.shape[:a]) + (y.shape[a] * y.shape[a + 1],) + tuple(y.shape[a + 2:])
    return reshape(t, y, merged)


def _fresh(t: Tracer, x: TracedArray, dtype=None) -> TracedArray:
    """A new array (what concatenate / stack return), never a view of their input."""
    if dtype is not None:
        return x.astype(dtype)
    return t.emit("copy", (x.node,), {}, x.shape, x.dtype)


@rule("shape.hstack")
@implements(np.hstack)
def _hstack(t, tup, *, dtype=None, casting="same_kind"):
    if type(tup) is TracedArray:
        _some_rows(tup)
        if tup.ndim == 1:                       # rows () -> (1,): x itself, copied
            return _fresh(t, tup, dtype)
        return _fresh(t, _rows_joined(t, tup, 0 if tup.ndim == 2 else 1), dtype)
    xs = [_atleast_1d(t, a) for a in tup]       # NumPy's atleast_1d of each array
    axis = 0 if xs and xs[0].ndim == 1 else 1
    return _concatenate(t, xs, axis=axis, dtype=dtype)


@rule("shape.vstack")
@implements(np.vstack)
def _vstack(t, tup, *, dtype=None, casting="same_kind"):
    if type(tup) is TracedArray:                # rows of 1-D become (1, m): x itself
        _some_rows(tup)
        if tup.ndim == 1:                       # rows () -> (1, 1): (n, 1)
            return _fresh(t, expand_dims(t, tup, 1), dtype)
        return _fresh(t, tup if tup.ndim == 2 else _rows_joined(t, tup, 0), dtype)
    xs = [_atleast_2d(t, a) for a in tup]       # NumPy's atleast_2d of each array
    return _concatenate(t, xs, axis=0, dtype=dtype)


@rule("shape.dstack")
@implements(np.dstack)
def _dstack(t, tup):
    """Rows (or arrays) made at least 3-D, joined along axis 2."""
    if type(tup) is TracedArray:
        _some_rows(tup)
        x = tup
        if x.ndim == 1:                         # rows () -> (1, 1, 1): (1, 1, n)
            return _fresh(t, expand_dims(t, x, (0, 1)))
        if x.ndim == 2:                         # rows (m,) -> (1, m, 1): (1, m, n)
            return _fresh(t, expand_dims(t, np.transpose(x), 0))
        if x.ndim == 3:                         # rows (a, b) -> (a, b, 1): (a, b, n)
            return _fresh(t, np.moveaxis(x, 0, 2))
        return _fresh(t, _rows_joined(t, x, 2))
    return _concatenate(t, list(np.atleast_3d(*tup)) if len(tup) > 1
                        else [np.atleast_3d(*tup)], axis=2)


# their dispatchers iterate over the argument (a traced array's rows) before dispatching
SIZE_FUNCTIONS.extend([np.concatenate, np.stack, np.vstack, np.hstack, np.dstack, np.tile,
                       np.repeat])


@rule("shape.atleast_2d")
@implements(np.atleast_2d)
def _atleast_2d(t, *arys):
    out = []
    for a in arys:
        x = _list_item(t, a)                    # a scalar or a list: an array, as NumPy
        if x.ndim == 0:
            x = reshape(t, x, (1, 1))
        elif x.ndim == 1:
            x = expand_dims(t, x, 0)
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


@rule("shape.atleast_1d")
@implements(np.atleast_1d)
def _atleast_1d(t, *arys):
    xs = [_list_item(t, a) for a in arys]       # a scalar or a list: an array, as NumPy
    out = [reshape(t, x, (1,)) if x.ndim == 0 else x for x in xs]
    return out[0] if len(out) == 1 else tuple(out)


def _split_at(t, x, ax: int, bounds) -> list:
    out = []
    for lo, hi in bounds:
        out.append(getitem(t, x, (slice(None),) * ax + (slice(lo, hi),)))
    return out


@implements(np.split)
def _split(t, ary, indices_or_sections, axis=0):
    x = t.operand(ary)
    ax = norm_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)) or type(indices_or_sections) is SymInt:
        # the number of pieces is the number of outputs: a size here is specialised
        k = int(indices_or_sections)
        if k <= 0:
            raise UserError("np.split: the number of sections must be > 0%s" % _frame())
        if not (n % k == 0):
            raise UserError("np.split: array split does not result in an equal division: "
                            "size %s into %d sections%s" % (describe(n), k, _frame()))
        q = n // k
        return _split_at(t, x, ax, [(i * q, (i + 1) * q) for i in range(k)])
    idx = list(indices_or_sections)
    edges = [0] + idx + [None]
    return _split_at(t, x, ax, list(zip(edges[:-1], edges[1:])))


@rule("split.sizes")
@implements(np.array_split)
def _array_split(t, ary, indices_or_sections, axis=0):
    x = t.operand(ary)
    ax = norm_axis(axis, x.ndim)
    if not isinstance(indices_or_sections, (int, np.integer)) and \
            type(indices_or_sections) is not SymInt:
        return _split(t, x, indices_or_sections, ax)
    k = int(indices_or_sections)
    if k <= 0:
        raise UserError("np.array_split: the number of sections must be > 0%s" % _frame())
    n = x.shape[ax]
    q, r = n // k, n % k
    if type(r) is not SymInt:
        starts = [i * q + min(i, r) for i in range(k + 1)]
        return _split_at(t, x, ax, [(starts[i], starts[i + 1]) for i in range(k)])
    # piece i starts at i*q + min(i, r) and has q + 1 elements for i < r, else q: the
    # lengths are written down exactly instead of being re-derived from clamped slices
    out = []
    for i in range(k):
        start = i * q + sym_min(i, r)
        stop = (i + 1) * q + sym_min(i + 1, r)
        length = q + sym_min(1, sym_max(r - i, 0))
        items = [slice(None)] * ax + [slice(to_expr(start), to_expr(stop), None)]
        shape = tuple(length if j == ax else s for j, s in enumerate(x.shape))
        out.append(t.emit("getitem", (x.node,), {"index": IndexAttr(items)}, shape, x.dtype))
    return out


@implements(np.hsplit)
def _hsplit(t, ary, indices_or_sections):
    x = t.operand(ary)
    return _split(t, x, indices_or_sections, 1 if x.ndim > 1 else 0)


@implements(np.vsplit)
def _vsplit(t, ary, indices_or_sections):
    return _split(t, t.operand(ary), indices_or_sections, 0)


defop("diagonal", "np.diagonal({0}, {offset}, {axis1}, {axis2})",
      doc="a diagonal (read-only view)")


def _size(env, e):
    e = env.simplify(e)
    return e if type(e) is int else SymInt(e, None, env)


@rule("shape.diagonal")
@implements(np.diagonal)
def _diagonal(t, a, offset=0, axis1=0, axis2=1):
    x = t.operand(a)
    if x.ndim < 2:
        raise UserError("np.diagonal needs at least 2 dimensions, got shape %s%s"
                        % (shape_repr(x.shape), where(user_frame(2))))
    # out-of-range axes are NumPy's AxisError (``% ndim`` alone would wrap them around)
    a1 = norm_axis(axis1, x.ndim, "np.diagonal axis1")
    a2 = norm_axis(axis2, x.ndim, "np.diagonal axis2")
    if a1 == a2:
        raise UserError("np.diagonal: axis1 and axis2 cannot be the same%s" % where(user_frame(2)))
    if type(offset) is not int:
        raise UserError("np.diagonal offset must be an int while tracing%s" % where(user_frame(2)))
    n1, n2 = to_expr(x.shape[a1]), to_expr(x.shape[a2])
    k = smax(0, smin(n1, n2 - offset) if offset >= 0 else smin(n1 + offset, n2))
    rest = tuple(s for i, s in enumerate(x.shape) if i not in (a1, a2))
    return t.emit("diagonal", (x.node,), {"offset": offset, "axis1": a1, "axis2": a2},
                  rest + (_size(t.env, k),), x.dtype)


@implements(np.trace)
def _trace(t, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return np.sum(_diagonal(t, a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


METHOD_OPS.update(transpose=transpose, array_from_list=array_from_list)
