"""Proof of ``index.take_along_axis`` for every rank and every axis.

``_take_along_axis`` (``capture/ops/advanced.py``) is read here whole (``TAKE_ALONG``):
the two arrays must have one rank (NumPy's ValueError otherwise), the axis is normalised
by ``norm_axis`` (proven for every integer and rank: ``proofs/axes_every.py``), the sizes
off the axis are gathered from both arrays by one filter (``k != ax``: two tuples of the
same length, the rank less one) and broadcast by ``broadcast_shapes``, and the index's
size is inserted at the axis -- NumPy's rule (``arr[_make_along_axis_idx(...)]``: off the
axis, ``arange(n_k)`` broadcasts against the index's size; on it, the index's size).

``broadcast_shapes`` (``capture/ops/elementwise.py``, read whole: ``BROADCAST``) on two
shapes of one length L runs ``for i in range(-L, 0)``, where ``len(s) >= -i`` holds for
both shapes at every position, so each position is the same step: ``size = 1``, then
``broadcast_pair`` with each shape's size there.  That step is run on two sizes of
symbolic value and kind (``proofs/sized.py``) along every path, for shapes of length one:
admitted exactly when NumPy broadcasts the two sizes, with NumPy's size.  The real tracer
then runs ``np.take_along_axis`` at rank 3 (an index of the array's sizes, and one of
size 1 off the axis).
"""
from __future__ import annotations

import numpy as np
import z3

from symshape.capture.ops import advanced as AD
from symshape.capture.ops import elementwise as EW
from symshape.errors import UserError

from . import every, proves
from . import numpy_shapes as N
from .axes_every import code_text, norm_axis_every
from .code import prove_code
from .op_shape_rules import _check_many, _shape
from .pyint import require
from .shape_every import NONE, np_broadcast
from .sized import combine, run_paths, sizes

TAKE_ALONG = (
    "x = t.operand(arr)\ni = _as_index_array(t, indices)\n"
    "if i.ndim != x.ndim:\n    raise UserError\n"
    "ax = norm_axis(axis, x.ndim)\n"
    "others = broadcast_shapes([tuple((s for k, s in enumerate(x.shape) if k != ax)), "
    "tuple((s for k, s in enumerate(i.shape) if k != ax))], 'take_along_axis: arr and "
    "indices')\n"
    "shape = list(others)\nshape.insert(ax, i.shape[ax])\n"
    "return t.emit('take_along_axis', (x.node, i.node), {'axis': ax}, tuple(shape), "
    "x.dtype)")
BROADCAST = (
    "nd = max((len(s) for s in shapes), default=0)\nout: List[Any] = []\n"
    "for i in range(-nd, 0):\n    size = 1\n    for s in shapes:\n"
    "        if len(s) >= -i:\n            got = broadcast_pair(size, s[i])\n"
    "            if got is None:\n                raise UserError\n"
    "            size = got\n    out.append(size)\nreturn tuple(out)")


def code_reads() -> None:
    """``_take_along_axis`` and ``broadcast_shapes`` are the code the proof reads."""
    require(code_text(AD._take_along_axis) == TAKE_ALONG, "_take_along_axis is no longer "
            "the code the proof reads:\n%s", code_text(AD._take_along_axis))
    require(code_text(EW.broadcast_shapes) == BROADCAST, "broadcast_shapes is no longer "
            "the code the proof reads:\n%s", code_text(EW.broadcast_shapes))


def broadcast_position() -> None:
    """``broadcast_shapes`` of two one-size shapes (one position, the step every
    position of two equal-length shapes runs), every size of both kinds, every path."""
    a, b = sizes("a b")
    hyps = [a.v >= 0, b.v >= 0]
    saved = EW.shape_repr
    EW.shape_repr = lambda s: "<shape>"          # a message's text only

    def run():
        try:
            out = EW.broadcast_shapes([(a,), (b,)])
        except UserError:
            return None
        require(len(out) == 1, "two one-size shapes broadcast to %r", out)
        return out[0]
    try:
        ex, paths = run_paths(run, hyps, [EW])
    finally:
        EW.shape_repr = saved
    for pc, got in paths:
        require(not isinstance(got, BaseException), "broadcast_shapes raises %r", got)
    ok, out = combine(paths, lambda got: (got is not None, 0 if got is None else got))
    want = np_broadcast(a.v, b.v)
    prove_code(lambda ok, o: z3.And(ok == (want != NONE), z3.Implies(ok, o == want)),
               [ok, out], hyps, P=ex.P, what="broadcast_shapes at one position")


@proves("index.take_along_axis", over=every(
    "every rank, every int axis and every pair of sizes at each position: "
    "_take_along_axis and broadcast_shapes read from the code whole (one rank for both "
    "arrays, the axis normalised, the sizes off the axis filtered alike from both into "
    "two tuples of one length, the index's size inserted at the axis; on equal-length "
    "shapes broadcast_shapes runs the same step at every position); norm_axis proven for "
    "every integer and rank, and broadcast_shapes' step run on two sizes of symbolic value "
    "and kind along every path (admitted exactly when NumPy broadcasts them, NumPy's "
    "size); traced with the real tracer at rank 3 (an index of the array's sizes, one of "
    "size 1 off the axis), every size symbolic"))
def index_take_along_axis():
    code_reads()
    norm_axis_every()
    broadcast_position()
    _check_many([(lambda x, i: np.take_along_axis(x, i.astype(np.intp) % 1, -2),
                  [_shape(3), ((3, 2, 5), {})],
                  lambda P, ins, v: N.take_along_axis(ins[0], ins[1], -2), ()),
                 (lambda x, i: np.take_along_axis(x, i.astype(np.intp) % 1, 2),
                  [_shape(3), ((1, 1, 2), {0: 1, 1: 1})],
                  lambda P, ins, v: N.take_along_axis(ins[0], ins[1], 2), ())],
                "np.take_along_axis(rank 3, axes -2 and 2)", not_one=True)
