"""Proof of ``diff.length`` for every rank, every axis and every order ``n``: the code's
reads pinned, its size arithmetic run on a symbolic ``n`` and a size of symbolic value and
kind, one rank traced.

``_diff`` (``capture/ops/reduction.py``) reads the axis only through ``norm_axis`` (proven
for every integer, ``proofs/axisargs.py``) and the input's shape at that one axis and,
per axis alike, in one comprehension (``DIFF_READS``); the order ``n`` only in its check
and in ``x.shape[ax] - n``.  So the proof

* runs ``_diff`` itself (a stand-in tracer: ``operand`` the input, ``emit`` the shape) on
  an input of rank 1 whose size has a symbolic value >= 0 and a symbolic kind (a literal
  int or a SymInt, ``proofs/sized.py``: ``s - n`` keeps the size's kind, as a SymInt minus
  an int is a SymInt) and a symbolic ``n``, along every path, ``sym_max`` replaced by its
  specification (the max, proven for every operand by ``symint.operators``): it raises
  exactly when ``n < 0`` (NumPy: "order must be non-negative") and otherwise gives
  ``max(s - n, 0)``;
* pins the reads (the other axes kept alike by the comprehension), and
* traces ``np.diff`` at rank 3 on two axes with n = 2 (NumPy's shapes, both directions).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Tuple

import numpy as np
import z3

from symshape.capture.ops import reduction as R
from symshape.errors import UserError

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .axisargs import NORM_PROOF, norm_axis_every, prove_paths, raise_site
from .intpaths import Int
from .op_shape_rules import _bind1, _check_all, _shape
from .sized import Size, patched
from .symcoeff import SInt, sym_ints, value
from .symexec import Explorer

Reads = Dict[str, Tuple[str, ...]]

#: every statement of ``_diff`` that mentions the input, the axis, the order or the sizes
DIFF_READS: Reads = {
    "axis": ("ax = norm_axis(axis, x.ndim)",),
    "ax": ("ax = norm_axis(axis, x.ndim)", "size = x.shape[ax] - n",
           "shape = tuple((size if i == ax else s for i, s in enumerate(x.shape)))",
           "return t.emit('diff', (x.node,), {'n': n, 'axis': ax}, shape, dt)"),
    "n": ("n = int(n)", "if n < 0", "size = x.shape[ax] - n",
          "return t.emit('diff', (x.node,), {'n': n, 'axis': ax}, shape, dt)"),
    "size": ("size = x.shape[ax] - n",
             "size = sym_max(size, 0) if type(size) is not int else max(size, 0)",
             "shape = tuple((size if i == ax else s for i, s in enumerate(x.shape)))"),
    "shape": ("shape = tuple((size if i == ax else s for i, s in enumerate(x.shape)))",
              "return t.emit('diff', (x.node,), {'n': n, 'axis': ax}, shape, dt)"),
    "x": ("x = t.operand(a)", "ax = norm_axis(axis, x.ndim)", "size = x.shape[ax] - n",
          "shape = tuple((size if i == ax else s for i, s in enumerate(x.shape)))",
          "dt = np.diff(np.zeros((2,) * max(x.ndim, 1), x.dtype), axis=-1).dtype",
          "return t.emit('diff', (x.node,), {'n': n, 'axis': ax}, shape, dt)"),
}


class _Kinded(Size):
    """A size whose difference with an int keeps its kind (a SymInt minus an int is a
    SymInt, an int minus an int an int)."""

    __slots__ = ()

    def __sub__(self, o):
        return _Kinded(self.v - value(o), self.lit)


class _Input:
    """The input as ``_diff`` reads it: rank 1, its one size ``s``."""

    def __init__(self, s) -> None:
        self.shape, self.ndim, self.dtype, self.node = (s,), 1, np.dtype(np.float64), None


class _Tracer:
    """``operand`` gives the input, ``emit`` returns the output shape."""

    def __init__(self, x) -> None:
        self.x = x

    def operand(self, a):
        return self.x

    def emit(self, op, args, attrs, shape, dt):
        return tuple(shape)


def _sym_max(a, b):
    """``sym_max``'s specification (symint.operators): the max of the values."""
    return SInt(z3.If(value(a) >= value(b), value(a), value(b)))


@contextmanager
def _module():
    saved = R.sym_max
    R.int, R.sym_max = Int, _sym_max
    try:
        yield
    finally:
        del R.int
        R.sym_max = saved


def diff_size() -> None:
    """``_diff`` on a size of symbolic value (>= 0) and kind and a symbolic order ``n``:
    raises exactly when ``n < 0``, else the size is ``max(s - n, 0)``."""
    s = _Kinded(z3.Int("s"), z3.Bool("s.lit"))
    n, = sym_ints("n")
    zs, zn = value(s), value(n)
    ex = Explorer([zs >= 0])

    def run():
        try:
            return R._diff(_Tracer(_Input(s)), None, n=n, axis=0)
        except UserError as e:
            return e
    with patched(ex, R), _module():
        paths = ex.paths(run)
    prove_paths(paths, lambda out: z3.And(zn >= 0, out == z3.If(zs - zn > 0, zs - zn, 0)),
                lambda e: zn < 0 if raise_site(e, R._diff) else z3.BoolVal(False),
                [zs >= 0], ex.P, "np.diff(x, n) of a size of either kind")


@proves("diff.length", over=every(
    "every rank, every axis (either sign) and every order n: _diff's reads of the axis, "
    "the order and the shape read from the code (the axis only through norm_axis, the "
    "other sizes kept alike in one comprehension), " + NORM_PROOF + ", _diff run on a size "
    "of symbolic value and kind (literal or SymInt; sym_max as symint.operators proves it) "
    "and a symbolic n along every path (n < 0 refused, as NumPy does, max(s - n, 0) "
    "otherwise), traced at rank 3 (n = 2 on axes -2 and 0), sizes symbolic, both "
    "directions"))
def diff_length():
    norm_axis_every()
    read_alike(R._diff, DIFF_READS)
    diff_size()
    _check_all([(_bind1(np.diff, n=2, axis=-2), lambda P, ins, v: N.diff(ins[0], 2, -2)),
                (_bind1(np.diff, n=2, axis=0), lambda P, ins, v: N.diff(ins[0], 2, 0))],
               [_shape(3)], "np.diff(rank 3, n = 2)")
