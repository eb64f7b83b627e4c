"""Proof of ``index.take`` for every rank, every index rank and every axis: ``_take`` run
on stand-in arrays of symbolic rank along every path.

``np.take(x, i, axis)`` (``capture/ops/advanced.py``) reads its arrays only through their
rank (``x.ndim``, to normalise the axis), one size (``x.shape[ax]``, the bound of a
constant index) and three pieces of shape: ``x.shape[:ax] + i.shape + x.shape[ax + 1:]``
-- NumPy's documented ``Ni + Nj + Nk`` with ``Ni, Nk = a.shape[:axis], a.shape[axis+1:]``
and ``Nj = indices.shape``; ``axis=None`` takes from the flattened array.  So the proof
runs ``_take`` itself on stand-ins (``proofs/axes_every.py``: a rank that is a Z3 integer,
a shape that records each read and each slice as a piece) with the axis a Z3 integer,
along every path, and proves: the call is admitted exactly when NumPy admits the axis
(``-nd <= axis < nd``: ``norm_axis``, run as written), and the shape emitted is exactly the
three pieces at the normalised axis; with ``axis=None``, ``reshape(x, (-1,))`` is
replaced by its proven specification (``shape.ravel``, every input: a rank-1 array of
every element count) and the shape is ``i.shape`` between the empty pieces of that rank-1
shape.  The index array's rank is a Z3 integer the code never reads: its shape is used
whole.  The real tracer then runs ``np.take`` once with each kind of axis (rank 3, an
index of rank 2; NumPy's shapes and the converse).
"""
from __future__ import annotations

import builtins
from contextlib import contextmanager

import numpy as np
import z3

from symshape.capture.ops import advanced as AD
from symshape.capture.ops import shape as SH
from symshape.capture.tracer import TracedArray
from symshape.errors import UserError

from . import every, proves
from . import numpy_shapes as N
from .axes_every import Num, StandIn, StandInTracer, in_range, messages_unread, pieces
from .code import prove_code
from .intpaths import int_paths
from .op_shape_rules import _check_many, _shape
from .pyint import require
from .symcoeff import value


@contextmanager
def _stand_ins(flat: list):
    """``advanced`` sees a stand-in as a ``TracedArray`` (``type``), and ``reshape`` of a
    stand-in to ``(-1,)`` is ``shape.ravel``'s proven result: a rank-1 stand-in."""
    def typ(v):
        return TracedArray if isinstance(v, StandIn) else builtins.type(v)

    def ravel(t, x, target):
        require(isinstance(x, StandIn) and target == (-1,), "np.take reshapes %r to %r, "
                "not the array to (-1,)", x, target)
        f = StandIn(1, "flat")
        flat.append(f)
        return f
    saved = AD.reshape
    AD.type, AD.reshape = typ, ravel
    try:
        yield
    finally:
        del AD.type
        AD.reshape = saved


def _run(axis, nd, ni, flat):
    """``_take`` on stand-ins: (x, i, emitted attributes and shape) or None (refused)."""
    x, i = StandIn(Num(nd), "x"), StandIn(Num(ni), "i")
    del flat[:]
    try:
        attrs, shape = AD._take(StandInTracer(x), None, i, axis)
    except UserError:
        return None
    return attrs, pieces(shape)


def take_axis_paths() -> None:
    """An int axis: admitted exactly when ``-nd <= axis < nd``, the shape the three
    pieces at ``a = axis % nd`` (and the attribute ``a``), for every rank of both arrays."""
    nd, ni, ax = z3.Ints("nd ni ax")
    flat: list = []
    with messages_unread(), _stand_ins(flat):
        ex, paths = int_paths(lambda: _run(Num(ax), nd, ni, flat), [nd >= 0, ni >= 0], SH)
    impl, parts = [], []
    for pc, got in paths:
        require(not isinstance(got, BaseException), "np.take raises %r on %s", got,
                z3.And(*pc))
        if got is None:
            parts.append((pc, None))
            continue
        attrs, ps = got
        require([p[:2] for p in ps] == [("x", "slice"), ("i", "whole"), ("x", "slice")]
                and ps[0][2] is None and ps[2][3] is None and not flat,
                "np.take emits the shape %s, not x.shape[:a] + i.shape + x.shape[a + 1:]", ps)
        parts.append((pc, len(impl)))
        impl += [value(ps[0][3]), value(ps[2][2]), value(attrs["axis"])]

    def claim(*t):
        out = []
        for pc, k in parts:
            a = ax % nd
            out.append(z3.Implies(z3.And(*pc), z3.Not(in_range(ax, nd)) if k is None else
                                  z3.And(in_range(ax, nd), t[k] == a, t[k + 1] == a + 1,
                                         t[k + 2] == a)))
        return z3.And(*out)
    prove_code(claim, impl, [nd >= 0, ni >= 0], P=ex.P,
               what="np.take(x, i, axis) on ranks nd, ni (%d paths)" % len(paths))


def take_none() -> None:
    """``axis=None``: the flattened array's shape pieces around ``i.shape`` (empty: it
    has rank 1), for every rank of both arrays."""
    flat: list = []
    with messages_unread(), _stand_ins(flat):
        ex, paths = int_paths(lambda: _run(None, z3.Int("nd"), z3.Int("ni"), flat), [], SH)
    require(len(paths) == 1 and len(flat) == 1, "np.take(axis=None) takes %d paths",
            len(paths))
    (pc, got), = paths
    require(got is not None and not isinstance(got, BaseException),
            "np.take(axis=None) refuses: %r", got)
    attrs, ps = got
    require(ps == [("flat", "slice", None, 0), ("i", "whole", None, None),
                   ("flat", "slice", 1, None)] and attrs == {"axis": 0},
            "np.take(axis=None) emits %s: not the flattened array's shape[:0] + i.shape + "
            "shape[1:]", ps)


@proves("index.take", over=every(
    "every rank of the array and of the index array (traced integer index arrays: a "
    "Python int index is basic indexing, index.basic; a constant array is also bounded "
    "by its values) and every int axis or None: _take run on stand-in arrays of symbolic "
    "rank (Z3 integers) along every path with the axis a Z3 integer -- admitted exactly "
    "when -nd <= axis < nd (both directions), the emitted shape exactly x.shape[:a] + "
    "i.shape + x.shape[a + 1:] at a = axis % nd (NumPy's Ni + Nj + Nk), the index shape "
    "used whole; axis=None with reshape(x, (-1,)) replaced by its proven specification "
    "(shape.ravel: rank 1), i.shape; traced with the real tracer at rank 3 with an index "
    "of rank 2 (axis -2 and None), every size symbolic"))
def index_take():
    take_axis_paths()
    take_none()
    _check_many([(lambda x, i: np.take(x, i.astype(np.intp) % 1, axis=-2),
                  [_shape(3), ((2, 3), {})], lambda P, ins, v: N.take(ins[0], ins[1], -2), ()),
                 (lambda x, i: np.take(x, i.astype(np.intp) % 1),
                  [_shape(3), ((2, 3), {})], lambda P, ins, v: N.take(ins[0], ins[1], None),
                  ())], "np.take(rank 3, an index of rank 2, axis -2 and None)")
