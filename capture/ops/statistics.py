"""Statistics: order statistics, NaN-aware reductions, weighted averages, covariance and
histograms, computed by NumPy itself (``ops/npcall.py``) with symbolic output shapes.

NumPy writes these in Python that branches on the values (``if np.any(np.isnan(...))``,
warnings for all-NaN slices) or converts a ratio of sizes with ``np.float64``, so tracing
through its code fails or specialises; their output shapes follow from the input shapes and
constant arguments alone, which the rows below state.  ``np.histogram(bins='auto')`` (a bin
count computed from the values) is refused; ``np.bincount``'s length is data-dependent (an
unbacked size of at least ``minlength``).
"""
from __future__ import annotations

import numpy as np

from symshape.rules import rule
from symshape.sizes.symint import describe

from ..tracer import TracedArray
from .npcall import Args, Call, reduced_shape, register
from .shape import prod


def _no_out(a: Args) -> None:
    if a.val("out") is not None:
        raise a.fail("out= is not supported while tracing (assign the result instead)")


#: the functions for which NumPy raises on an empty reduced extent: nanmin / nanmax /
#: nanargmin / nanargmax have no identity (ValueError), percentile / quantile index the
#: sorted extent's last element (IndexError); the nan-quantiles return NaN instead
_NEEDS_ELEMENTS = ("np.nanmin", "np.nanmax", "np.nanargmin", "np.nanargmax", "np.percentile",
                   "np.quantile")


@rule("stats.reduction")
def _reduction(a: Args) -> tuple:
    """The shape of a NaN-aware reduction or quantile of ``a`` over ``axis`` (None, an int
    or a tuple, either sign), keepdims or not; for ``_NEEDS_ELEMENTS`` the reduced extent
    must be non-empty (a guard, as for ``np.max``)."""
    x = a.arr("a")
    if x is None:
        raise a.fail("the array argument must be an array while tracing")
    axis = a.val("axis")
    shape = reduced_shape(x, axis, bool(a.val("keepdims", False)), a.what, a.frame)
    if a.what in _NEEDS_ELEMENTS:
        for i in _reduced_axes(x, axis):
            if not (x.shape[i] >= 1):
                raise a.fail("the reduced axis %d is empty; NumPy raises on an empty extent "
                             "(give the axis a size of at least 1)" % i)
    return shape


def _reduced_axes(x: TracedArray, axis) -> list:
    """The axes a reduction over ``axis`` (None, an int or a tuple, already validated by
    ``reduced_shape``) removes, as indices."""
    if axis is None:
        return list(range(x.ndim))
    return [int(i) % x.ndim for i in (axis if isinstance(axis, (tuple, list)) else (axis,))]


def _q_shape(a: Args) -> tuple:
    q = a.val("q")
    arr = a.arr("q")
    return tuple(arr.shape) if arr is not None else np.shape(q)


def _quantile(a: Args) -> tuple:
    return _q_shape(a) + _reduction(a)


@rule("stats.scan")
def _scan(a: Args) -> tuple:
    """np.nancumsum / np.nancumprod: the shape along any axis; axis=None flattens."""
    x = a.arr("a")
    axis = a.val("axis")
    if axis is None:
        return (prod(x.shape),)
    # NumPy takes one axis (operator.index): a tuple, a float or a bool is a TypeError
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise a.fail("axis must be an int or None, got %r: pass one axis" % (axis,))
    if not -x.ndim <= axis < x.ndim:
        raise a.fail("axis %d is out of bounds for an array of dimension %d: pass an axis "
                     "in [-%d, %d)" % (axis, x.ndim, x.ndim, x.ndim))
    return tuple(x.shape)


@rule("stats.average")
def _average(a: Args):
    """np.average: the reduction's shape (the axes checked first, as NumPy normalises
    them first); weights of another shape than the array need an axis and, along the
    axes in the order given, the array's sizes (NumPy's rule); without weights the result
    must not be empty (NumPy divides by its size), with weights no reduced extent may be
    (NumPy divides by the weights' sum, zero over an empty extent)."""
    x = a.arr("a")
    w = a.arr("weights")
    axis = a.val("axis")
    shape = _reduction(a)
    # ranks first: a tuple comparison of sizes would record a guard on sizes it compares
    if w is not None and (w.ndim != x.ndim or w.shape != x.shape):
        if axis is None:
            raise a.fail("weights of another shape than the array need axis=")
        along = [x.shape[i] for i in _reduced_axes(x, axis)]
        if w.ndim != len(along) or not all(p == q for p, q in zip(w.shape, along)):
            raise a.fail("weights of shape (%s) must have the array's sizes along axis=%r, "
                         "(%s), in that order" % (", ".join(map(describe, w.shape)), axis,
                                                  ", ".join(map(describe, along))))
    reduced = _reduced_axes(x, axis)
    for i in range(x.ndim):
        if w is None and i not in reduced and not (x.shape[i] >= 1):
            raise a.fail("the result would be empty (axis %d has size 0 and is not "
                         "averaged), where NumPy divides by zero" % i)
        if w is not None and i in reduced and not (x.shape[i] >= 1):
            raise a.fail("the averaged axis %d may be empty, where the weights sum to zero "
                         "and NumPy raises (give the axis a size of at least 1)" % i)
    return [shape, shape] if a.val("returned", False) else shape


def _rows(a: Args, name: str, rowvar: bool):
    """The number of variables (rows after NumPy's transposition) of cov's ``m`` / ``y``."""
    x = a.arr(name)
    if x is None:
        raise a.fail("%s must be an array while tracing" % name)
    if x.ndim > 2:
        raise a.fail("%s has more than 2 dimensions" % name)
    shape = (1,) * (2 - x.ndim) + tuple(x.shape)
    if not rowvar and not (shape[0] == 1):
        shape = shape[::-1]
    return shape


def _cov(a: Args) -> tuple:
    first = "m" if a.given("m") else "x"
    rowvar = bool(a.val("rowvar", True))
    r, c = _rows(a, first, rowvar)
    if a.arr("y") is not None:
        r2, c2 = _rows(a, "y", rowvar)
        if not (c == c2):
            raise a.fail("m and y have different numbers of observations (%s and %s)"
                         % (describe(c), describe(c2)))
        r = r + r2
    return () if r == 1 else (r, r)


@rule("stats.histogram_bins")
def _bins(a: Args, what: str = "bins"):
    """The number of bins: an int, or the length of an edges array minus one."""
    b = a.val(what, 10)
    arr = a.arr(what)
    if arr is not None:
        if arr.ndim != 1:
            raise a.fail("bins must be an int or a 1-D array of edges")
        # an empty edges array would make the count -1 (a guard: the contract admits
        # only edges arrays with at least one edge)
        if not (arr.shape[0] >= 1):
            raise a.fail("bins as an array of edges needs at least one edge")
        return arr.shape[0] - 1
    if isinstance(b, str):
        raise a.fail("bins=%r computes the number of bins from the values, which the output "
                     "shape would depend on: pass an int or an array of edges" % b)
    if isinstance(b, (int, np.integer)) and not isinstance(b, bool):
        if b < 1:
            raise a.fail("`bins` must be positive, when an integer")
        return int(b)
    if isinstance(b, (list, tuple)) and all(isinstance(v, (int, float, np.number)) for v in b):
        return len(b) - 1
    raise a.fail("bins must be an int or a 1-D array of edges while tracing")


def _histogram(a: Args):
    n = _bins(a)
    return [(n,), (n + 1,)]


def _bin_edges(a: Args):
    return (_bins(a) + 1,)


def _histogram2d(a: Args):
    b = a.val("bins", 10)
    if isinstance(b, (list, tuple)) and len(b) == 2:
        counts = []
        for v in b:
            if type(v) is TracedArray:
                if not (v.shape[0] >= 1):
                    raise a.fail("bins as an array of edges needs at least one edge")
                counts.append(v.shape[0] - 1)
            elif isinstance(v, (int, np.integer)):
                counts.append(int(v))
            else:
                counts.append(len(v) - 1)
        nx, ny = counts
    else:
        nx = ny = _bins(a)
    return [(nx, ny), (nx + 1,), (ny + 1,)]


def _digitize(a: Args) -> tuple:
    b = a.arr("bins")
    if b is not None and b.ndim != 1:
        raise a.fail("bins must be one-dimensional")
    x = a.arr("x")
    return tuple(x.shape) if x is not None else np.shape(a.val("x"))


def _bincount(a: Args) -> tuple:
    x = a.arr("x")
    if x is None or x.ndim != 1:
        raise a.fail("x must be a 1-D array of non-negative ints")
    if x.dtype.kind not in "biu":
        raise a.fail("x must hold integers, got %s (NumPy refuses to cast it)" % x.dtype)
    lo = a.val("minlength", 0) or 0
    if not isinstance(lo, (int, np.integer)):
        raise a.fail("minlength must be an int while tracing")
    # max(x) + 1 (at least minlength): known only when the program runs
    return (a.new_size("bincount length", int(lo)),)


_NAN_REDUCTIONS = (np.nansum, np.nanprod, np.nanmean, np.nanvar, np.nanstd, np.nanmin,
                   np.nanmax, np.nanargmin, np.nanargmax, np.nanmedian)

ROWS = [Call(f, _reduction, _no_out) for f in _NAN_REDUCTIONS] + [
    Call(f, _quantile, _no_out) for f in (np.percentile, np.quantile, np.nanpercentile,
                                           np.nanquantile)] + [
    Call(np.nancumsum, _scan, _no_out),
    Call(np.nancumprod, _scan, _no_out),
    Call(np.average, _average),
    Call(np.cov, _cov),
    Call(np.corrcoef, _cov),
    Call(np.histogram, _histogram),
    Call(np.histogram_bin_edges, _bin_edges),
    Call(np.histogram2d, _histogram2d),
    Call(np.digitize, _digitize),
    Call(np.bincount, _bincount, data=("x",)),
]

register(ROWS)
