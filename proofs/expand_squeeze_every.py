"""Proofs of ``shape.expand_dims`` and ``shape.squeeze`` for every rank and every axis
argument (``proofs/axisargs.py`` gives the route).

Both rules read the axis argument only through a helper of their own
(``capture/ops/shape.py``: ``_inserted_axes``, ``_squeezed_axes``) that maps every axis
alike through ``norm_axis`` (``_sizes`` hands a tuple or list whole), sorts them and refuses
a repeat; these helpers read the input only through its rank and, for squeeze, the size
at each named axis.  So each helper is run here on an input of *symbolic* rank ``r >= 0``
(squeeze: whose size at a symbolic position ``i`` is ``size(i)``, an uninterpreted
function: the shape at symbolic positions) with one axis, a tuple and a list of two
symbolic axes (two stand for any number: each is read alike), ``norm_axis`` replaced by
its proven specification, along every path, against NumPy's rule stated in Z3, both
directions:

* ``np.expand_dims(x, axis)``: admitted iff ``normalize_axis_tuple(axis, r + len(axis))``
  accepts (each in ``[-(r+k), r+k)``, none repeated), the 1s at the sorted normalised axes;
* ``np.squeeze(x, axis)``: admitted iff ``normalize_axis_tuple(axis, r)`` accepts and every
  named axis has size 1, the removed axes the sorted normalised ones.

The rest of each rule is pinned by its reads (``EXPAND_READS``, ``SQUEEZE_READS``): the
1s inserted in increasing order of position into ``list(x.shape)``, the squeezed shape
one comprehension over every axis alike (axis=None: every size 1 alike), and traced at
one rank with the real tracer (NumPy's shapes, both directions).
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np
import z3

from symshape.capture.ops import shape as SH

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .axisargs import NORM_PROOF, SIZE_AT, RankedInput, norm_axis_every, numpy_axes, \
    prove_helper, sorted2
from .op_shape_rules import _bind1, _check, _check_all, _shape
from .symcoeff import sym_ints, value

Reads = Dict[str, Tuple[str, ...]]

#: ``_sizes``: a tuple or list handed whole, anything else one item
SIZES_READS: Reads = {"shape": ("if isinstance(shape, (tuple, list))", "return tuple(shape)",
                                "return (shape,)")}

#: ``expand_dims`` and ``_inserted_axes``: the axes only through the helper, each axis
#: normalised alike against the result's rank, the 1s inserted in increasing order
EXPAND_READS: Reads = {
    "norm": ("norm = _inserted_axes(x, axis)", "for a in norm",
             "return t.emit('expand_dims', (x.node,), {'axis': tuple(norm)}, tuple(shape), "
             "x.dtype)"),
    "shape": ("shape = list(x.shape)", "shape.insert(a, 1)",
              "return t.emit('expand_dims', (x.node,), {'axis': tuple(norm)}, tuple(shape), "
              "x.dtype)"),
    "a": ("for a in norm", "shape.insert(a, 1)"),
    "x": ("norm = _inserted_axes(x, axis)", "shape = list(x.shape)",
          "return t.emit('expand_dims', (x.node,), {'axis': tuple(norm)}, tuple(shape), "
          "x.dtype)"),
}
INSERTED_READS: Reads = {
    "axis": ("axes = _sizes(axis)",),
    "axes": ("axes = _sizes(axis)", "nd = x.ndim + len(axes)",
             "norm = sorted((norm_axis(a, nd) for a in axes))"),
    "nd": ("nd = x.ndim + len(axes)", "norm = sorted((norm_axis(a, nd) for a in axes))"),
    "norm": ("norm = sorted((norm_axis(a, nd) for a in axes))",
             "if len(set(norm)) != len(norm)", "return norm"),
    "x": ("nd = x.ndim + len(axes)",),
}

#: ``_squeeze`` and ``_squeezed_axes``: the shape read per axis alike in comprehensions,
#: the named axes only through the helper
SQUEEZE_READS: Reads = {
    "axis": ("if axis is None", "drop = _squeezed_axes(x, axis)"),
    "shape": ("shape = tuple((s for i, s in enumerate(x.shape) if i not in drop))",
              "return t.emit('squeeze', (x.node,), {'axis': tuple(drop)}, shape, x.dtype)"),
    "x": ("x = t.operand(a)",
          "shape = tuple((s for i, s in enumerate(x.shape) if i not in drop))",
          "return t.emit('squeeze', (x.node,), {'axis': tuple(drop)}, shape, x.dtype)",
          "drop = [i for i, s in enumerate(x.shape) if s == 1]",
          "drop = _squeezed_axes(x, axis)", "return x"),
    "drop": ("if not drop", "shape = tuple((s for i, s in enumerate(x.shape) if i not in drop))",
             "return t.emit('squeeze', (x.node,), {'axis': tuple(drop)}, shape, x.dtype)",
             "drop = [i for i, s in enumerate(x.shape) if s == 1]",
             "drop = _squeezed_axes(x, axis)"),
}
SQUEEZED_READS: Reads = {
    "axis": ("drop = sorted((norm_axis(i, x.ndim) for i in _sizes(axis)))",),
    "x": ("drop = sorted((norm_axis(i, x.ndim) for i in _sizes(axis)))",
          "if not x.shape[i] == 1"),
    "drop": ("drop = sorted((norm_axis(i, x.ndim) for i in _sizes(axis)))",
             "if len(set(drop)) != len(drop)", "for i in drop", "return drop"),
    "i": ("drop = sorted((norm_axis(i, x.ndim) for i in _sizes(axis)))", "for i in drop",
          "if not x.shape[i] == 1"),
}

def inserted_every() -> None:
    """``_inserted_axes`` on a symbolic rank: one axis, a tuple and a list of two."""
    a, b, r = sym_ints("ex_a ex_b rank")
    za, zb, zr = value(a), value(b), value(r)
    x = RankedInput(r)
    ok1, (n1,) = numpy_axes([za], zr + 1)
    prove_helper(lambda: SH._inserted_axes(x, a), ok1, [n1],
                 SH._inserted_axes, [zr >= 0], SH, "_inserted_axes(rank r, a)")
    ok2, (na, nb) = numpy_axes([za, zb], zr + 2)
    lo, hi = sorted2(na, nb)
    for wrap in (tuple, list):
        prove_helper(lambda w=wrap: SH._inserted_axes(x, w((a, b))),
                     ok2, [lo, hi],
                     SH._inserted_axes, [zr >= 0], SH,
                     "_inserted_axes(rank r, %s(a, b))" % wrap.__name__)


def squeezed_every() -> None:
    """``_squeezed_axes`` on a symbolic rank: one axis, a tuple and a list of two."""
    a, b, r = sym_ints("sq_a sq_b rank")
    za, zb, zr = value(a), value(b), value(r)
    x = RankedInput(r)
    ok1, (n1,) = numpy_axes([za], zr)
    ok1 = z3.And(ok1, SIZE_AT(n1) == 1)
    prove_helper(lambda: SH._squeezed_axes(x, a), ok1, [n1],
                 SH._squeezed_axes, [zr >= 0], SH, "_squeezed_axes(rank r, a)")
    ok2, (na, nb) = numpy_axes([za, zb], zr)
    ok2 = z3.And(ok2, SIZE_AT(na) == 1, SIZE_AT(nb) == 1)
    lo, hi = sorted2(na, nb)
    for wrap in (tuple, list):
        prove_helper(lambda w=wrap: SH._squeezed_axes(x, w((a, b))),
                     ok2, [lo, hi],
                     SH._squeezed_axes, [zr >= 0], SH,
                     "_squeezed_axes(rank r, %s(a, b))" % wrap.__name__)


def _expand(axis):
    return (_bind1(np.expand_dims, axis=axis), lambda P, ins, v: N.expand_dims(ins[0], axis))


@proves("shape.expand_dims", over=every(
    "every rank and every axis argument (an int, a tuple or list of any length, either "
    "sign): expand_dims's and _inserted_axes's reads read from the code (each axis "
    "normalised alike against the result's rank, sorted and checked for repeats whole, the "
    "1s inserted in increasing order into the input's sizes), " + NORM_PROOF + ", "
    "_inserted_axes run on a symbolic rank with one axis and a tuple / list of two "
    "symbolic axes against NumPy's normalize_axis_tuple(axis, rank + len(axis)) (both "
    "directions), traced at rank 2 (axis 0, -1, 2, (0, -1), (3, 1)), sizes symbolic"))
def shape_expand_dims():
    norm_axis_every()
    read_alike(SH._sizes, SIZES_READS)
    read_alike(SH.expand_dims, EXPAND_READS)
    read_alike(SH._inserted_axes, INSERTED_READS)
    inserted_every()
    _check_all([_expand(0), _expand(-1), _expand(2), _expand((0, -1)), _expand((3, 1))],
               [_shape(2)], "np.expand_dims(rank 2)")


def _squeeze(axis):
    return (_bind1(np.squeeze, axis=axis), lambda P, ins, v: N.squeeze(ins[0], axis))


@proves("shape.squeeze", over=every(
    "every rank, every shape and every axis argument (None, an int, a tuple or list of any "
    "length, either sign): _squeeze's and _squeezed_axes's reads read from the code (the "
    "shape read per axis alike in comprehensions, each named axis normalised alike, sorted "
    "and checked for repeats whole, each checked for size 1 alike), " + NORM_PROOF + ", "
    "_squeezed_axes run on an input of symbolic rank whose size at a symbolic position is "
    "an uninterpreted function, with one axis and a tuple / list of two symbolic axes, "
    "against NumPy (normalize_axis_tuple and every named size 1; both directions: a "
    "repeated axis refused), traced at rank 3 with static 1s at axes 0 and 2 (None, -1, "
    "(0, -1)), the other sizes symbolic"))
def shape_squeeze():
    norm_axis_every()
    read_alike(SH._sizes, SIZES_READS)
    read_alike(SH._squeeze, SQUEEZE_READS)
    read_alike(SH._squeezed_axes, SQUEEZED_READS)
    squeezed_every()
    ones = _shape(3, {0: 1, 2: 1})
    _check(_bind1(np.squeeze, axis=None), [ones], lambda P, ins, v: N.squeeze(ins[0], None),
           "np.squeeze(rank 3, ones at 0 and 2)")
    _check_all([_squeeze(-1), _squeeze((0, -1))], [ones],
               "np.squeeze(rank 3, ones at 0 and 2, named)")
