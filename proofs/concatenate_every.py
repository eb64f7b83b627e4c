"""Proof of ``concatenate.shape`` for every number of operands of every rank, every axis
and None: the reads read from the code, ``norm_axis`` for every integer, one trace per
code path.

``_concatenate`` (``capture/ops/shape.py``) reads its operands and their shapes only as
``CONCAT_READS`` lists, each statement read from the code (``read_alike``):

* every operand converted alike (``t.operand``), flattened alike for ``axis=None``;
* the first operand's rank ``nd`` and shape, every later operand (``xs[1:]``) checked alike
  against them: the same rank, and at every axis ``i`` of ``range(nd)`` other than the
  normalised axis the same size (NumPy's rule) -- one test per axis, alike for every axis;
* the output: the first shape with, at the axis, the left fold of ``+`` over the later
  operands' sizes (their sum: the fold's step is ``+`` itself, whatever the count).

``norm_axis(axis, nd)`` is run on a symbolic axis and rank along every path
(``intpaths``): it admits exactly NumPy's ``normalize_axis_index`` domain ``-nd <= axis <
nd`` and gives ``axis + nd`` for a negative axis, ``axis`` otherwise, for every integer.
One array given alone is its rows (``_some_rows`` then ``_rows_joined``, whose reads are
``ROWS_READS``): the axis normalised against a row's rank, axis 0 moved there
(``np.moveaxis``) and merged with the next one, every other axis kept.

So the shape is the same function of (the shapes, the normalised axis) at every rank: a
size per axis, the axis the one summed.  The real tracer then checks each code path once
with every size symbolic, both directions (``op_shape_rules._check_many``): operands of
rank 3 on the first, a middle and the last axis (positive and negative) with two and with
three operands, one operand alone, ``axis=None`` on operands of different ranks, and the
rows of a rank-3 array on the first and last axis and ``None``.
"""
from __future__ import annotations

import numpy as np

from symshape.capture.ops import shape as SH

from . import every, proves
from .axisargs import norm_axis_every
from . import numpy_shapes as N
from .alike import read_alike
from .op_shape_rules import _check_many, _shape

#: {name: every statement of ``_concatenate`` that mentions it}
CONCAT_READS = {
    "xs": ("xs = [t.operand(a) for a in arrays]", "if not xs",
           "xs = [reshape(t, x, (-1,)) for x in xs]", "nd = xs[0].ndim", "for x in xs[1:]",
           "if i != ax and (not x.shape[i] == xs[0].shape[i])",
           "dt = _result_dtype(xs, dtype)", "shape = list(xs[0].shape)",
           "return t.emit('concat', (tuple((x.node for x in xs)),), attrs, tuple(shape), dt, "
           "name='concatenate')"),
    "x": ("xs = [reshape(t, x, (-1,)) for x in xs]", "for x in xs[1:]", "if x.ndim != nd",
          "if i != ax and (not x.shape[i] == xs[0].shape[i])",
          "shape[ax] = shape[ax] + x.shape[ax]",
          "return t.emit('concat', (tuple((x.node for x in xs)),), attrs, tuple(shape), dt, "
          "name='concatenate')"),
    "nd": ("nd = xs[0].ndim", "if nd == 0", "ax = norm_axis(axis, nd)", "if x.ndim != nd",
           "for i in range(nd)"),
    "i": ("for i in range(nd)", "if i != ax and (not x.shape[i] == xs[0].shape[i])"),
    "ax": ("ax = norm_axis(axis, nd)", "if i != ax and (not x.shape[i] == xs[0].shape[i])",
           "shape[ax] = shape[ax] + x.shape[ax]",
           "attrs = {'axis': ax} if dtype is None else {'axis': ax, 'dtype': dt}"),
    "shape": ("shape = list(xs[0].shape)", "shape[ax] = shape[ax] + x.shape[ax]",
              "return t.emit('concat', (tuple((x.node for x in xs)),), attrs, tuple(shape), "
              "dt, name='concatenate')"),
    "axis": ("if axis is None", "axis = 0", "ax = norm_axis(axis, nd)",
             "return _fresh(t, _rows_joined(t, arrays, axis), dtype)"),
}

#: {name: every statement of ``_rows_joined`` that mentions it}: the row's axis ``a``
#: normalised, the shape read before it, at it and the next, and after, as slices
ROWS_READS = {
    "x": ("if x.ndim < 2", "return reshape(t, x, (-1,))", "a = norm_axis(axis, x.ndim - 1)",
          "y = np.moveaxis(x, 0, a)"),
    "a": ("a = norm_axis(axis, x.ndim - 1)", "y = np.moveaxis(x, 0, a)",
          "merged = tuple(y.shape[:a]) + (y.shape[a] * y.shape[a + 1],) + "
          "tuple(y.shape[a + 2:])"),
    "merged": ("merged = tuple(y.shape[:a]) + (y.shape[a] * y.shape[a + 1],) + "
               "tuple(y.shape[a + 2:])", "return reshape(t, y, merged)"),
}


def _rows(shape, axis):
    """NumPy's ``np.concatenate(x, axis)`` of one array: its ``shape[0]`` rows (at least
    one, else NumPy raises) joined; ``None`` flattens."""
    count, row = shape[0], tuple(shape[1:])
    if axis is None:
        return [(N.prod(shape),)], [count >= 1]
    ax = N.norm(axis, len(row))
    return [tuple(count * s if i == ax else s for i, s in enumerate(row))], [count >= 1]


def _cat(axis):
    return lambda P, ins, v: N.concatenate(list(ins), axis)


def _cat_rows(axis):
    return lambda P, ins, v: _rows(ins[0], axis)


@proves("concatenate.shape", over=every(
    "every number of operands of every rank, every axis (every integer) and None, every "
    "size symbolic, both directions: _concatenate's and _rows_joined's reads of the "
    "operands, shapes and axis read from their code (every later operand and every axis "
    "off the normalised one checked alike, the sizes at the axis summed by a fold of +), "
    "norm_axis proven for every integer axis and rank against NumPy's "
    "normalize_axis_index (both directions); traced once per code path at rank 3 (axis 0, "
    "1, -1, two and three operands, one operand, None on ranks 3 and 1, the rows of one "
    "array on axis 0, -1 and None; the rows path's np.moveaxis(x, 0, a) is the engine's "
    "transpose, whose shape the shape.permute proof gives for every rank); out= is "
    "refused while tracing"))
def concatenate_shape():
    read_alike(SH._concatenate, CONCAT_READS)
    read_alike(SH._rows_joined, ROWS_READS)
    norm_axis_every()
    _check_many([
        (lambda x, y: np.concatenate([x, y], axis=0), [_shape(3)] * 2, _cat(0), ()),
        (lambda x, y, z: np.concatenate([x, y, z], axis=1), [_shape(3)] * 3, _cat(1), ()),
        (lambda x, y: np.concatenate([x, y], axis=-1), [_shape(3)] * 2, _cat(-1), ()),
        (lambda x: np.concatenate([x], axis=2), [_shape(3)], _cat(2), ()),
        (lambda x, y: np.concatenate([x, y], axis=None), [_shape(3), _shape(1)], _cat(None),
         ()),
        (lambda x: np.concatenate(x, axis=0), [_shape(3)], _cat_rows(0), ()),
        (lambda x: np.concatenate(x, axis=-1), [_shape(3)], _cat_rows(-1), ()),
        (lambda x: np.concatenate(x, axis=None), [_shape(3)], _cat_rows(None), ()),
    ], "np.concatenate(every code path at rank 3)")
