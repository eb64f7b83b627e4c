"""Proofs of ``reduce.axes`` for every rank and every axis argument (``proofs/axisargs.py``
gives the route): the code's reads pinned, its integer parts run on a symbolic rank and
symbolic axes, one rank traced.

``reduce`` (``capture/ops/reduction.py``) reads its axis argument only through ``_axes``,
and the input's shape only in the comprehensions listed in ``REDUCE_READS`` (each axis
alike: kept, kept as 1 or dropped by ``i in reduced``; every reduced size checked alike
by ``require_nonempty``), so the output shape is, for every rank, the input's sizes at the
positions not reduced -- traced at rank 3 (NumPy's shapes, both directions).  ``_axes``
maps every axis alike through ``norm_axis`` and checks the whole tuple for repeats: run
here on a symbolic rank with one axis, a tuple and a list of two symbolic axes (two stand
for any number: each is read alike), it admits exactly what NumPy's
``normalize_axis_tuple`` admits and returns the sorted normalised axes.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

from symshape.capture.ops import reduction as R

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .axisargs import NORM_PROOF, none_paths, norm_axis_every, numpy_axes, prove_helper, \
    sorted2, symbolic_axes
from .op_shape_rules import _bind1, _check_all, _check_many, _shape
from .symcoeff import value

Reads = Dict[str, Tuple[str, ...]]

#: every statement of ``_axes`` that mentions the axis argument, the normalised tuple or
#: the rank: each axis normalised alike, the tuple checked and sorted whole
AXES_READS: Reads = {
    "axis": ("if axis is None", "if isinstance(axis, (tuple, list))",
             "return (norm_axis(axis, nd),)", "axes = tuple((norm_axis(a, nd) for a in axis))"),
    "axes": ("axes = tuple((norm_axis(a, nd) for a in axis))",
             "if len(set(axes)) != len(axes)", "return tuple(sorted(axes))"),
    "nd": ("return (norm_axis(axis, nd),)", "axes = tuple((norm_axis(a, nd) for a in axis))"),
}

#: every statement of ``reduce`` that mentions the reduced axes, the rank or the output
#: shape: the shape read per axis alike in one comprehension, the axes only through
#: ``_axes`` (or every axis for None), the reduced sizes handed whole to the check
REDUCE_READS: Reads = {
    "axes": ("axes = _axes(axis, nd)", "reduced = range(nd) if axes is None else axes",
             "dt = _dtype(name, x.dtype, nd, axes, keepdims, None if dtype is None else "
             "np.dtype(dtype), tuple(sorted(extra.items())))", "attrs = {'axis': axes}"),
    "reduced": ("reduced = range(nd) if axes is None else axes",
                "require_nonempty(name, [x.shape[i] for i in reduced])",
                "shape = tuple((1 if i in reduced else s for i, s in enumerate(x.shape)))",
                "shape = tuple((s for i, s in enumerate(x.shape) if i not in reduced))"),
    "shape": ("return t.emit(name, (x.node,), attrs, shape, dt)",
              "shape = tuple((1 if i in reduced else s for i, s in enumerate(x.shape)))",
              "shape = tuple((s for i, s in enumerate(x.shape) if i not in reduced))"),
    "nd": ("nd = x.ndim", "axes = _axes(axis, nd)",
           "reduced = range(nd) if axes is None else axes",
           "dt = _dtype(name, x.dtype, nd, axes, keepdims, None if dtype is None else "
           "np.dtype(dtype), tuple(sorted(extra.items())))"),
}

REDUCE_READS["x"] = (
    "x = t.operand(a)", "if type(x) is not TracedArray", "nd = x.ndim",
    "dt = _dtype(name, x.dtype, nd, axes, keepdims, None if dtype is None else "
    "np.dtype(dtype), tuple(sorted(extra.items())))",
    "return t.emit(name, (x.node,), attrs, shape, dt)", "return getattr(np, name)(x)",
    "require_nonempty(name, [x.shape[i] for i in reduced])",
    "shape = tuple((1 if i in reduced else s for i, s in enumerate(x.shape)))",
    "shape = tuple((s for i, s in enumerate(x.shape) if i not in reduced))")

#: every statement of ``_arg``'s handler that mentions the input, the axis or the shape:
#: the axis only through ``norm_axis``, the shape whole (None) or per axis alike
ARG_READS: Reads = {
    "axis": ("if axis is None", "ax = norm_axis(axis, x.ndim)"),
    "ax": ("ax = norm_axis(axis, x.ndim)", "require_nonempty(name, [x.shape[ax]])",
           "shape = tuple(((1 if keepdims else None) if i == ax else s for i, s in "
           "enumerate(x.shape)))", "attrs = {'axis': ax}"),
    "shape": ("return t.emit(name, (x.node,), attrs, shape, np.dtype(np.intp))",
              "shape = (1,) * x.ndim if keepdims else ()",
              "shape = tuple(((1 if keepdims else None) if i == ax else s for i, s in "
              "enumerate(x.shape)))", "shape = tuple((s for s in shape if s is not None))"),
    "x": ("x = t.operand(a)",
          "return t.emit(name, (x.node,), attrs, shape, np.dtype(np.intp))",
          "require_nonempty(name, x.shape)", "shape = (1,) * x.ndim if keepdims else ()",
          "ax = norm_axis(axis, x.ndim)", "require_nonempty(name, [x.shape[ax]])",
          "shape = tuple(((1 if keepdims else None) if i == ax else s for i, s in "
          "enumerate(x.shape)))"),
}

#: ``require_nonempty``: every reduced size checked alike
NONEMPTY_READS: Reads = {"sizes": ("if not all((s >= 1 for s in sizes))",)}


def axes_arg_paths() -> None:
    """``_axes`` on a symbolic rank ``nd >= 0``: None stays None; one axis, a tuple and a
    list of two are admitted exactly when NumPy admits them, as the sorted normalised
    axes."""
    a, b, nd = symbolic_axes("ax_a ax_b ndim")
    za, zb, zn = value(a), value(b), value(nd)
    hyps = [zn >= 0]
    none_paths(lambda: R._axes(None, nd), hyps, R, "_axes(None, nd)")
    ok1, (n1,) = numpy_axes([za], zn)
    prove_helper(lambda: R._axes(a, nd), ok1, [n1], R._axes, hyps, R, "_axes(a, nd)")
    ok2, (na, nb) = numpy_axes([za, zb], zn)
    for wrap in (tuple, list):
        prove_helper(lambda w=wrap: R._axes(w((a, b)), nd), ok2, list(sorted2(na, nb)),
                     R._axes, hyps, R, "_axes(%s(a, b), nd)" % wrap.__name__)


def reads() -> None:
    """The reads of ``_axes``, ``reduce`` and ``require_nonempty``, pinned."""
    read_alike(R._axes, AXES_READS)
    read_alike(R.reduce, REDUCE_READS)
    read_alike(R.require_nonempty, NONEMPTY_READS)


def _sum(axis, keep):
    return (_bind1(np.sum, axis=axis, keepdims=keep),
            lambda P, ins, v: N.reduction(ins[0], axis, keep))


def _max(axis, keep):
    return (_bind1(np.max, axis=axis, keepdims=keep), [_shape(3)],
            lambda P, ins, v: N.nonempty_reduction(ins[0], axis, keep), ())


@proves("reduce.axes", over=every(
    "every rank and every axis argument (None, an int, a tuple or list of any length, "
    "either sign), keepdims or not: _axes and reduce's reads of the axes and the shape "
    "read from the code (each axis normalised alike, the tuple checked and sorted whole, "
    "the shape read per axis alike in one comprehension, every reduced size checked "
    "alike), " + NORM_PROOF + ", _axes run on a symbolic rank with one axis and a tuple / "
    "list of two symbolic axes against NumPy's normalize_axis_tuple (both directions: "
    "out of range and repeated axes refused, nothing else), traced at rank 3 (np.sum: "
    "None, -1, (0, -1), (2, 0, -2) with keepdims both ways; np.max, which needs a "
    "non-empty extent: None, 1, (0, -1)), sizes symbolic, both directions"))
def reduce_axes():
    norm_axis_every()
    reads()
    axes_arg_paths()
    _check_all([_sum(None, False), _sum(None, True), _sum(-1, False), _sum(-1, True),
                _sum((0, -1), False), _sum((0, -1), True), _sum((2, 0, -2), False),
                _sum((2, 0, -2), True)], [_shape(3)], "np.sum(rank 3)")
    _check_many([_max(None, False), _max(1, True), _max((0, -1), False)],
                "np.max(rank 3)")


def _arg(fn, axis, keep):
    return (_bind1(fn, axis=axis, keepdims=keep), [_shape(3)],
            lambda P, ins, v: N.arg_reduction(ins[0], axis, keep), ())


@proves("reduce.arg", over=every(
    "every rank and every axis argument (None or an int of either sign), keepdims or not: "
    "the handler's reads of the axis and the shape read from the code (the axis only "
    "through norm_axis, the shape whole for None or per axis alike in one comprehension, "
    "the reduced sizes checked alike by require_nonempty), " + NORM_PROOF + " (NumPy's "
    "normalize_axis_index, both directions), traced at rank 3 (np.argmax / np.argmin: "
    "None, 1, -1, keepdims both ways), sizes symbolic, both directions"))
def reduce_arg():
    norm_axis_every()
    read_alike(R._arg, ARG_READS)
    read_alike(R.require_nonempty, NONEMPTY_READS)
    _check_many([_arg(np.argmax, None, False), _arg(np.argmax, 1, True),
                 _arg(np.argmax, -1, False), _arg(np.argmin, None, True),
                 _arg(np.argmin, -3, False)], "np.argmax / np.argmin(rank 3)")
