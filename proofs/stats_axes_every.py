"""Proof of ``stats.reduction`` for every rank and every axis argument (``proofs/axisargs.py``
gives the route).

The NaN-aware reductions and the quantiles (``capture/ops/statistics.py``: ``_reduction``,
``_quantile``) read the axis argument only through ``reduced_shape`` and ``_reduced_axes``;
``reduced_shape`` (``capture/ops/npcall.py``) only through ``reduced_axes``, then keeps,
keeps as 1 or drops each axis alike in one comprehension.  So the proof

* runs ``reduced_axes`` on an input of symbolic rank with one axis, a tuple and a list of
  two symbolic axes (each read alike in one loop, the set of them checked whole: two stand
  for any number), along every path: admitted exactly when NumPy's
  ``normalize_axis_tuple`` admits (both directions: out of range and repeated axes
  refused), the sorted normalised axes returned;
* runs ``_reduced_axes`` likewise on what ``reduced_axes`` admitted: the same axes,
  normalised (the ones whose extents the functions of ``_NEEDS_ELEMENTS`` check, each
  alike, in one loop);
* pins every read of these functions (``READS``), and
* traces the calls at rank 3 with the real tracer (NumPy's shapes and its refusal of an
  empty extent, both directions).
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np
import z3

from symshape.capture.ops import npcall as NC
from symshape.capture.ops import statistics as ST

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .axisargs import RankedInput, numpy_axes, prove_helper, sorted2
from .intpaths import prove_int_paths
from .op_shape_rules import _bind1, _check_all, _check_many, _group, _shape
from .symcoeff import sym_ints, value

Reads = Dict[str, Tuple[str, ...]]

#: every statement of each function that mentions the axes, the input or the shape
READS: Dict[object, Reads] = {
    NC.reduced_shape: {
        "axis": ("if axis is None", "norm = reduced_axes(x, axis, what, frame)"),
        "norm": ("norm = reduced_axes(x, axis, what, frame)",
                 "return tuple((s for i, s in enumerate(x.shape) if i not in norm))",
                 "return tuple((1 if i in norm else s for i, s in enumerate(x.shape)))"),
        "x": ("norm = reduced_axes(x, axis, what, frame)",
              "return tuple((s for i, s in enumerate(x.shape) if i not in norm))",
              "return (1,) * x.ndim if keepdims else ()",
              "return tuple((1 if i in norm else s for i, s in enumerate(x.shape)))"),
    },
    NC.reduced_axes: {
        "axis": ("axes = axis if isinstance(axis, (tuple, list)) else (axis,)",),
        "axes": ("axes = axis if isinstance(axis, (tuple, list)) else (axis,)", "for ax in axes",
                 "if len(norm) != len(axes)"),
        "ax": ("for ax in axes", "if not isinstance(ax, (int, np.integer)) or isinstance(ax, bool)",
               "a = int(ax) + x.ndim if ax < 0 else int(ax)"),
        "a": ("a = int(ax) + x.ndim if ax < 0 else int(ax)", "if not 0 <= a < x.ndim",
              "norm.add(a)"),
        "norm": ("norm = set()", "if len(norm) != len(axes)", "return sorted(norm)",
                 "norm.add(a)"),
        "x": ("a = int(ax) + x.ndim if ax < 0 else int(ax)", "if not 0 <= a < x.ndim"),
    },
    ST._reduction: {
        "axis": ("axis = a.val('axis')",
                 "shape = reduced_shape(x, axis, bool(a.val('keepdims', False)), a.what, "
                 "a.frame)", "for i in _reduced_axes(x, axis)"),
        "x": ("x = a.arr('a')", "if x is None",
              "shape = reduced_shape(x, axis, bool(a.val('keepdims', False)), a.what, a.frame)",
              "for i in _reduced_axes(x, axis)", "if not x.shape[i] >= 1"),
        "shape": ("shape = reduced_shape(x, axis, bool(a.val('keepdims', False)), a.what, "
                  "a.frame)", "return shape"),
        "i": ("for i in _reduced_axes(x, axis)", "if not x.shape[i] >= 1"),
    },
    ST._reduced_axes: {
        "axis": ("if axis is None", "return [int(i) % x.ndim for i in (axis if isinstance(axis, "
                 "(tuple, list)) else (axis,))]"),
        "x": ("return [int(i) % x.ndim for i in (axis if isinstance(axis, (tuple, list)) else "
              "(axis,))]", "return list(range(x.ndim))"),
    },
    # q's shape, then the reduction's
    ST._quantile: {"a": ("return _q_shape(a) + _reduction(a)",)},
}

#: ``_average``: the axes through ``_reduction`` and ``_reduced_axes``, the weights' sizes
#: compared with the array's along the axes pair by pair alike, every axis checked alike
AVERAGE_READS: Reads = {
    "axis": ("axis = a.val('axis')", "reduced = _reduced_axes(x, axis)", "if axis is None",
             "along = [x.shape[i] for i in _reduced_axes(x, axis)]"),
    "x": ("x = a.arr('a')", "if w is not None and (w.ndim != x.ndim or w.shape != x.shape)",
          "reduced = _reduced_axes(x, axis)", "for i in range(x.ndim)",
          "along = [x.shape[i] for i in _reduced_axes(x, axis)]",
          "if w is None and i not in reduced and (not x.shape[i] >= 1)",
          "if w is not None and i in reduced and (not x.shape[i] >= 1)"),
    "w": ("w = a.arr('weights')",
          "if w is not None and (w.ndim != x.ndim or w.shape != x.shape)",
          "if w.ndim != len(along) or not all((p == q for p, q in zip(w.shape, along)))",
          "if w is None and i not in reduced and (not x.shape[i] >= 1)",
          "if w is not None and i in reduced and (not x.shape[i] >= 1)"),
    "shape": ("shape = _reduction(a)",
              "return [shape, shape] if a.val('returned', False) else shape"),
    "reduced": ("reduced = _reduced_axes(x, axis)",
                "if w is None and i not in reduced and (not x.shape[i] >= 1)",
                "if w is not None and i in reduced and (not x.shape[i] >= 1)"),
    "along": ("along = [x.shape[i] for i in _reduced_axes(x, axis)]",
              "if w.ndim != len(along) or not all((p == q for p, q in zip(w.shape, along)))"),
}


def reads() -> None:
    """Every function's reads, pinned."""
    for fn, table in READS.items():
        read_alike(fn, table)


def axis_paths() -> None:
    """``reduced_axes`` (both directions against NumPy) and ``_reduced_axes`` (on what it
    admits) on a symbolic rank, one axis and a tuple / list of two."""
    a, b, r = sym_ints("st_a st_b rank")
    za, zb, zr = value(a), value(b), value(r)
    x = RankedInput(r)
    ok1, (n1,) = numpy_axes([za], zr)
    prove_helper(lambda: NC.reduced_axes(x, a, "np.nansum", None),
                 ok1, [n1], NC.reduced_axes, [zr >= 0], NC,
                 "reduced_axes(rank r, a)")
    prove_int_paths(lambda: tuple(ST._reduced_axes(x, a)), lambda o: o == n1, [zr >= 0, ok1],
                    ST, "_reduced_axes(rank r, a)")
    ok2, (na, nb) = numpy_axes([za, zb], zr)
    lo, hi = sorted2(na, nb)
    for wrap in (tuple, list):
        prove_helper(lambda w=wrap: NC.reduced_axes(x, w((a, b)), "np.nansum", None),
                     ok2, [lo, hi],
                     NC.reduced_axes, [zr >= 0], NC,
                     "reduced_axes(rank r, %s(a, b))" % wrap.__name__)
        prove_int_paths(lambda w=wrap: tuple(ST._reduced_axes(x, w((a, b)))),
                        lambda o0, o1: z3.And(o0 == na, o1 == nb), [zr >= 0, ok2], ST,
                        "_reduced_axes(rank r, %s(a, b))" % wrap.__name__)


def _plain(f, axis, keep):
    return (_bind1(f, axis=axis, keepdims=keep),
            lambda P, ins, v: N.reduction(ins[0], axis, keep))


def _nanq(f, q, axis, keep):
    return (_bind1(f, q, axis=axis, keepdims=keep),
            lambda P, ins, v: N.quantile(np.shape(q), ins[0], axis, keep, False))


def _needs(f, axis, keep):
    return (_bind1(f, axis=axis, keepdims=keep),
            lambda P, ins, v: N.nonempty_reduction(ins[0], axis, keep))


def _q(f, q, axis, keep):
    return (_bind1(f, q, axis=axis, keepdims=keep),
            lambda P, ins, v: N.quantile(np.shape(q), ins[0], axis, keep, True))


@proves("stats.reduction", over=every(
    "every rank and every axis argument (None, an int, a tuple or list of any length, "
    "either sign), keepdims or not, q of any shape: the reads of _reduction, _quantile, "
    "reduced_shape, reduced_axes and _reduced_axes read from the code (each axis "
    "normalised alike in one loop, the set of them checked for repeats whole, the shape "
    "read per axis alike in one comprehension, every reduced extent checked alike), "
    "reduced_axes run on a symbolic rank with one axis and a tuple / list of two symbolic "
    "axes against NumPy's normalize_axis_tuple (both directions: out of range and repeated "
    "axes refused), _reduced_axes proven to give the same axes, every function of the rule "
    "traced at rank 3 (nansum, nanprod, nanmean, nanvar, nanstd, nanmedian, nanpercentile, "
    "nanquantile over None, ints and tuples of both signs; nanmin, nanmax, nanargmin, "
    "nanargmax, percentile, quantile, which need a non-empty extent, each on its own "
    "inputs), sizes symbolic, both directions"))
def stats_reduction():
    reads()
    axis_paths()
    _check_all([_plain(np.nansum, None, False), _plain(np.nanprod, 1, False),
                _plain(np.nanmean, -1, True), _plain(np.nanvar, (0, -1), False),
                _plain(np.nanstd, -2, True), _plain(np.nanmedian, (2, 0), True),
                _nanq(np.nanpercentile, 50.0, (0, -1), False),
                _nanq(np.nanquantile, [0.25, 0.5], None, True)],
               [_shape(3)], "nan reductions / nan quantiles(rank 3)")
    _check_many([_group([_needs(np.nanmax, (0, -1), True)], [_shape(3)]),
                 _group([_needs(np.nanmin, None, False)], [_shape(3)]),
                 _group([_needs(np.nanargmin, 1, False)], [_shape(3)]),
                 _group([_needs(np.nanargmax, -1, True)], [_shape(3)]),
                 _group([_q(np.percentile, 50.0, (2, 0), False)], [_shape(3)]),
                 _group([_q(np.quantile, [0.25, 0.5], None, True)], [_shape(3)])],
                "nanmin / nanmax / nanargmin / nanargmax / percentile / quantile(rank 3)")


def _weighted(axis, keep, returned=False):
    """np.average(x, axis, weights=w): NumPy's shape; NumPy accepts w of x's shape, or
    (an axis given) of x's sizes along the axes in the order given, and raises on an empty
    reduced extent (the weights sum to zero there)."""
    def spec(P, ins, v):
        shape, wshape = ins
        (out,), _ = N.reduction(shape, axis, keep)
        axes = list(range(len(shape))) if axis is None else \
            [N.norm(a, len(shape)) for a in (axis if isinstance(axis, tuple) else (axis,))]
        along = shape if len(wshape) == len(shape) else [shape[i] for i in axes]
        ok = [p == q for p, q in zip(wshape, along)] + [shape[i] >= 1 for i in axes]
        return [out] * (2 if returned else 1), ok
    return (lambda x, w: np.average(x, axis=axis, weights=w, keepdims=keep,
                                    returned=returned), spec)


def _plain_average(axis, keep):
    return (_bind1(np.average, axis=axis, keepdims=keep),
            lambda P, ins, v: N.average(ins[0], axis, keep))


@proves("stats.average", over=every(
    "every rank and every axis argument (None, an int, a tuple or list of any length, "
    "either sign), keepdims or not, without weights or with weights of the array's shape "
    "or of its sizes along the axes: _average's reads read from the code (the axes through "
    "_reduction -- reduced_axes, proven as for stats.reduction, both directions against "
    "NumPy's normalize_axis_tuple -- and _reduced_axes, proven to give the same axes; the "
    "weights' sizes compared with the array's along the axes pair by pair alike; every "
    "axis checked alike: a kept one non-empty without weights, a reduced one with "
    "weights), traced at rank 3 (no weights: None, -1, (0, -1), keepdims both ways; "
    "weights of x's shape with axis None and returned=True, 1-D weights on axis 1, 2-D "
    "weights on axes (2, 0)), sizes symbolic, both directions; one corner is the example's: "
    "weights of the array's rank averaged over every axis listed out of order, where NumPy "
    "takes the array's shape or the permuted one and the trace keeps the branch its "
    "example took (a false refusal of the other, e.g. a square array)"))
def stats_average():
    reads()
    read_alike(ST._average, AVERAGE_READS)
    axis_paths()
    three = [_shape(3)]
    _check_many([_group([_plain_average(None, False), _plain_average(None, True)], three),
                 _group([_plain_average(-1, False), _plain_average(-1, True)], three),
                 _group([_plain_average((0, -1), False), _plain_average((0, -1), True)],
                        three),
                 _group([_weighted(None, False, True)], [_shape(3), _shape(3)]),
                 _group([_weighted(1, True)], [_shape(3), ((4,), {})]),
                 _group([_weighted((2, 0), False)], [_shape(3), ((5, 3), {})])],
                "np.average(rank 3, with and without weights)")
