"""Indexing: basic slicing (start / stop / step of any sign), integers, None, Ellipsis,
and functional ``__setitem__``.

A slice's length follows ``len(range(n)[start:stop:step])`` exactly, kept symbolic with
Min / Max (``y[:, :16]`` has length ``Min(16, s3)``) rather than guessed from the example;
the environment folds the Min / Max away when the ranges decide it.
"""
from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symint import SymBool, SymInt, describe, sym_ceildiv, sym_max, sym_min
from symshape.userframe import user_frame
from symshape.rules import rule

from ..ir import IndexAttr
from ..lenrange import SymRange
from ..tracer import METHOD_OPS, TracedArray, Tracer, shape_repr, to_expr
from ..views import register_index
from .elementwise import broadcast_shapes, node_input
from .registry import defop


defop("getitem", emit=lambda a, k: "%s[%s]" % (a[0], k["index"]),
      doc="basic indexing: integers, slices, None, Ellipsis (a view)")
defop("setitem", emit=lambda a, k: "_rt.setitem(%s, np.s_[%s], %s)" % (a[0], k["index"], a[1]),
      doc="a copy of the array with the indexed region replaced (functional __setitem__)")


def _frame():
    return where(user_frame(3))


def is_int(v) -> bool:
    return type(v) is SymInt or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))


def as_int(v):
    return int(v) if isinstance(v, np.integer) else v


def _negative(v, n, step_pos: bool) -> bool:
    """Whether bound ``v`` counts from the end (``v < 0``).  With a positive step, a bound
    that is negative except where the axis is empty (``x[:x.shape[0] // -2]`` at size 0:
    ``x[:0]``) takes the negative rule with no guard: both rules give an empty slice of an
    empty axis, so the program stays valid where eager NumPy is."""
    neg = v < 0
    if step_pos and isinstance(neg, SymBool) and v.env.decide(neg.cond) is None:
        agree = neg | ((v == 0) & (n == 0))
        if agree is True or (isinstance(agree, SymBool) and v.env.decide(agree.cond)):
            return True
    return bool(neg)


def _clamp(v, n, lo_neg: int, step_pos: bool):
    """Python's slice bound normalisation for a given (not None) bound."""
    if _negative(v, n, step_pos):
        v = v + n
        return sym_max(v, lo_neg) if type(v) is SymInt or type(n) is SymInt else max(v, lo_neg)
    upper = n if step_pos else n - 1
    return sym_min(v, upper) if type(v) is SymInt or type(upper) is SymInt else min(v, upper)


@rule("slice.length_step_pos", "slice.length_step_neg")
def slice_length(n, start, stop, step):
    """``len(range(n)[start:stop:step])`` for symbolic ``n`` and bounds."""
    step = 1 if step is None else step
    if type(step) is SymInt:
        step = int(step)
    if step == 0:
        raise UserError("slice step cannot be zero%s" % _frame())
    if step > 0:
        lo = 0 if start is None else _clamp(start, n, 0, True)
        hi = n if stop is None else _clamp(stop, n, 0, True)
        span = hi - lo
        length = sym_ceildiv(span, step)
    else:
        lo = n - 1 if start is None else _clamp(start, n, -1, False)
        hi = -1 if stop is None else _clamp(stop, n, -1, False)
        span = lo - hi
        length = sym_ceildiv(span, -step)
    if type(length) is int:
        return max(length, 0)
    return sym_max(length, 0)


def _expand(idx, ndim: int) -> List[Any]:
    items = list(idx) if isinstance(idx, tuple) else [idx]
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise UserError("an index can only have a single ellipsis ('...')%s" % _frame())
    if consumed > ndim:
        raise UserError("too many indices for array: array is %d-dimensional, but %d were "
                        "indexed%s" % (ndim, consumed, _frame()))
    out: List[Any] = []
    for i in items:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(i)
    if not any(i is Ellipsis for i in items):
        out.extend([slice(None)] * (ndim - consumed))
    return out


def _check_basic(items) -> None:
    for i in items:
        if i is None or isinstance(i, slice) or is_int(i):
            if isinstance(i, slice):
                for b in (i.start, i.stop, i.step):
                    if b is not None and not is_int(b):
                        raise UserError("slice bounds must be ints or sizes, got %r%s"
                                        % (b, _frame()))
            continue
        raise UserError("unsupported index %r (%s)%s" % (i, type(i).__name__, _frame()))


def region_item(x: TracedArray, i, shape: list, norm: list, dim: int) -> int:
    """One basic index item at axis ``dim`` of ``x``: its size appended to ``shape`` (None:
    a 1; a slice: its length; an int, checked in range: nothing) and its normalised form
    to ``norm``; the next axis.  ``region`` is the loop of this step over the items, so a
    proof of the step on any axis covers indices of every length
    (proofs/basic_index_every.py)."""
    if i is None:
        shape.append(1)
        norm.append(None)
        return dim
    n = x.shape[dim]
    if isinstance(i, slice):
        shape.append(slice_length(n, as_int(i.start), as_int(i.stop), as_int(i.step)))
        norm.append(slice(to_expr(as_int(i.start)), to_expr(as_int(i.stop)),
                          to_expr(as_int(i.step))))
    else:
        v = as_int(i)
        if not (v < n) or not (v >= -n):
            raise UserError("index %s is out of bounds for axis %d with size %s%s"
                            % (describe(v), dim, describe(n), _frame()))
        norm.append(to_expr(v))
    return dim + 1


@rule("index.basic")
def region(x: TracedArray, items) -> Tuple[tuple, list]:
    """The shape selected by basic index items (already expanded), and the normalised
    index as it appears in the node (SymInts as expressions)."""
    shape: list = []
    norm: list = []
    dim = 0
    for i in items:
        dim = region_item(x, i, shape, norm, dim)
    return tuple(shape), norm


def _simplify_items(items, ndim: int):
    """Drop trailing full slices (x[0, :] is x[0])."""
    items = list(items)
    while items and isinstance(items[-1], slice) and items[-1] == slice(None):
        items.pop()
    return items


def _is_advanced(idx) -> bool:
    items = idx if isinstance(idx, tuple) else (idx,)
    return any(type(i) is TracedArray or isinstance(i, (np.ndarray, list)) for i in items)


def bound_constant_index(i: TracedArray, n, axis: int) -> None:
    """A constant integer index array (``x[[0, 4]]``) needs ``n > max`` and ``n >= -min``,
    exactly as a scalar index does: guards, so the contract never admits a size on which
    NumPy raises IndexError.  (State arrays used as indices may change between calls:
    NumPy checks those when the program runs.)"""
    node = i.node
    if node.op != "constant" or "state" in node.meta or i.dtype.kind not in "iu":
        return
    values = node.meta["value"]
    if values.size == 0:
        return
    hi, lo = int(values.max()), int(values.min())
    if not (hi < n) or not (lo >= -n):
        raise UserError("index %d is out of bounds for axis %d with size %s%s"
                        % (hi if not (hi < n) else lo, axis, describe(n), _frame()))


def _ranges_as_arrays(t: Tracer, idx):
    """``range`` objects in an index are integer arrays to NumPy; a range over sizes
    (``wpe[range(len(ids))]``) becomes a traced ``arange`` so the size stays symbolic."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if not any(isinstance(i, (range, SymRange)) for i in items):
        return idx
    new = tuple(i.arange(t) if isinstance(i, SymRange) else
                t.constant(np.arange(i.start, i.stop, i.step)) if isinstance(i, range) else i
                for i in items)
    return new if isinstance(idx, tuple) else new[0]


def getitem(t: Tracer, x: TracedArray, idx):
    idx = _ranges_as_arrays(t, idx)
    if _is_advanced(idx):
        return METHOD_OPS["advanced_getitem"](t, x, idx)
    return register_index(t, x, idx, getitem_value(t, x, idx))


def getitem_value(t: Tracer, x: TracedArray, idx):
    """Basic indexing as a value (no view bookkeeping)."""
    items = _expand(idx, x.ndim)
    _check_basic(items)
    shape, norm = region(x, items)
    norm = _simplify_items(norm, x.ndim)
    if not norm:
        return x
    return t.emit("getitem", (x.node,), {"index": IndexAttr(norm)}, shape, x.dtype)


def setitem(t: Tracer, x: TracedArray, idx, value) -> None:
    idx = _ranges_as_arrays(t, idx)
    if _is_advanced(idx):
        return METHOD_OPS["advanced_setitem"](t, x, idx, value)
    t.rebind(x, setitem_value(t, x, idx, value))


def setitem_value(t: Tracer, x: TracedArray, idx, value) -> TracedArray:
    """``x`` with ``x[idx] = value`` applied, as a new value (basic index)."""
    items = _expand(idx, x.ndim)
    _check_basic(items)
    shape, norm = region(x, items)
    v = assigned_value(t, value, shape)
    return t.emit("setitem", (x.node, node_input(v)), {"index": IndexAttr(norm)}, x.shape,
                  x.dtype)


def assigned_value(t: Tracer, value, region_shape):
    """The operand of an assignment, checked to broadcast into the indexed region."""
    v = t.operand(value)
    vshape = v.shape if type(v) is TracedArray else ()
    got = broadcast_shapes([region_shape, vshape], "the assigned value and the indexed region")
    if len(got) != len(region_shape):
        raise UserError("could not broadcast a value of shape %s into the indexed region of "
                        "shape %s%s" % (shape_repr(vshape), shape_repr(region_shape),
                                        where(user_frame(3))))
    return v


METHOD_OPS.update(getitem=getitem, setitem=setitem, getitem_value=getitem_value,
                  setitem_value=setitem_value)
