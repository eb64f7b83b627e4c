"""Proofs of ``linalg.outer`` and ``linalg.kron`` for operands of every rank: each shape
read from the code as a whole (or axis by axis alike), the integer parts proven for every
integer, the op traced once.

``np.outer`` (``capture/ops/linalg.py``: ``_outer``) reads its operands' shapes only as
``prod(x.shape)`` and ``prod(y.shape)`` (``OUTER_READS``), and ``prod`` is the fold of
``_times`` from 1 (``proofs/reshape_every.py``'s ``product_fold``: the step proven on
every accumulator and size of either kind), so the output ``(a.size, b.size)`` is NumPy's
for every rank; the op refuses nothing an array pair gives NumPy (no guard).

``np.kron`` (``capture/ops/linalg_calls.py``: ``_kron``) reads the shapes whole, pads the
shorter on the left with ``nd - len(xs)`` 1s, ``nd`` the larger rank, and multiplies the
padded shapes axis by axis in one comprehension over ``zip`` (``KRON_READS``).  For every
pair of ranks ``la, lb >= 0`` (Z3 integers) the pad counts are >= 0 and both padded
lengths are ``nd`` (so ``zip`` pairs every axis, none cut off), and output axis ``k``
pairs a's axis ``k - (nd - la)`` with b's ``k - (nd - lb)`` (a 1 where that is < 0):
NumPy's alignment on the right.  Both ops are traced with the real tracer (contract,
NumPy's shapes, the converse) on one input per shape of the code's paths.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Tuple

import numpy as np
import z3

from symshape.capture.ops import elementwise as EW
from symshape.capture.ops import linalg as LA
from symshape.capture.ops import linalg_calls as LC
from symshape.capture.ops import shape as SH
from symshape.errors import UserError

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .code import prove_code
from .op_shape_rules import _bind2, _check_many, _shape
from .pyint import Py, require
from .reshape_every import product_fold
from .sized import combine, run_paths, sizes

Reads = Dict[str, Tuple[str, ...]]

#: every statement of ``_outer`` mentioning each operand: checked to be arrays, their
#: dtypes resolved, their shapes read only through ``prod``
OUTER_READS: Reads = {
    "x": ("x, y = _operands(t, a, b, 'outer')", "dt = resolve(np.multiply, [x, y])",
          "return t.emit('outer', (x.node, y.node), {}, (prod(x.shape), prod(y.shape)), dt)"),
    "y": ("x, y = _operands(t, a, b, 'outer')", "dt = resolve(np.multiply, [x, y])",
          "return t.emit('outer', (x.node, y.node), {}, (prod(x.shape), prod(y.shape)), dt)"),
}

#: every statement of ``_kron`` mentioning each shape: read whole, padded on the left by
#: the rank difference, multiplied axis by axis alike
KRON_READS: Reads = {
    "xs": ("xs = tuple(x.shape) if x is not None else np.shape(a.val('a'))",
           "nd = max(len(xs), len(ys))", "xs = (1,) * (nd - len(xs)) + xs",
           "return tuple((p * q for p, q in zip(xs, ys)))"),
    "ys": ("ys = tuple(y.shape) if y is not None else np.shape(a.val('b'))",
           "nd = max(len(xs), len(ys))", "ys = (1,) * (nd - len(ys)) + ys",
           "return tuple((p * q for p, q in zip(xs, ys)))"),
    "nd": ("nd = max(len(xs), len(ys))", "xs = (1,) * (nd - len(xs)) + xs",
           "ys = (1,) * (nd - len(ys)) + ys"),
}


@proves("linalg.outer", over=every(
    "every pair of operand arrays of every rank, sizes symbolic: _outer read from its code "
    "(read_alike: each shape read only as prod(shape)), prod the fold of _times from 1 "
    "proven by induction (reshape_every.product_fold: the step on every accumulator and "
    "size of either kind), traced at ranks (2, 3) and (0, 1), both directions"))
def linalg_outer_every():
    read_alike(LA._outer, OUTER_READS)
    require(LA.prod is SH.prod, "_outer's prod is not capture/ops/shape.py's")
    product_fold()
    spec = lambda P, ins, v: N.outer(ins[0], ins[1])         # noqa: E731
    _check_many([(_bind2(np.outer), [_shape(2), _shape(3)], spec, ()),
                 (_bind2(np.outer), [_shape(0), _shape(1)], spec, ())], "np.outer")


def kron_alignment() -> None:
    """For every pair of ranks: the code's pad counts (``nd - len``, ``nd`` the larger
    rank) are >= 0, both padded shapes have ``nd`` axes, and output axis ``k`` pairs
    a's axis ``k - (nd - la)`` with b's ``k - (nd - lb)`` -- NumPy's right alignment:
    the axis ``nd - k`` from the end of each (a 1 beyond its rank)."""
    P = Py()
    la, lb, k = z3.Ints("la lb k")
    nd = z3.If(la >= lb, la, lb)                 # max(len(xs), len(ys))
    pa, pb = nd - la, nd - lb                    # (1,) * (nd - len(xs))
    hyps = [la >= 0, lb >= 0]
    P.prove(z3.And(pa >= 0, pb >= 0, pa + la == nd, pb + lb == nd), *hyps,
            what="kron's pads are counts and both padded shapes have nd axes")
    # position k of (1,) * pad + xs is xs[k - pad] past the pad: the axis nd - k from the
    # end of x, which NumPy pairs with the same axis from the end of y
    P.prove(z3.And((k - pa) - la == (k - pb) - lb, z3.Or(k < pa, k - pa < la)), *hyps,
            0 <= k, k < nd, what="kron pairs the axes aligned on the right")


@proves("linalg.kron", over=every(
    "every pair of ranks la, lb >= 0 (Z3 integers), sizes symbolic: _kron read from its "
    "code (read_alike: the shapes read whole, padded on the left by nd - len, multiplied "
    "axis by axis in one comprehension over zip), the pads proven counts, the padded "
    "lengths nd and the axes paired aligned on the right for every la, lb, traced at ranks "
    "(3, 1) and (1, 2), both directions"))
def linalg_kron_every():
    read_alike(LC._kron, KRON_READS)
    kron_alignment()
    spec = lambda P, ins, v: N.kron(ins[0], ins[1])          # noqa: E731
    _check_many([(_bind2(np.kron), [_shape(3), _shape(1)], spec, ()),
                 (_bind2(np.kron), [_shape(1), _shape(2)], spec, ())], "np.kron")


# ---------------------------------------------------------------------------- matmul
_BATCH = "batch = broadcast_shapes([aa[:-2], bb[:-2]], '%s batch dimensions' % what)"

#: every statement of ``matmul_shape`` mentioning each name: an operand read through its
#: length (0, 1 or more), its last two axes and its batch prefix, handed whole to
#: ``broadcast_shapes``
MATMUL_READS: Reads = {
    "a": ("if len(a) == 0 or len(b) == 0", "a1, b1 = (len(a) == 1, len(b) == 1)",
          "aa = (1,) + tuple(a) if a1 else tuple(a)"),
    "b": ("if len(a) == 0 or len(b) == 0", "a1, b1 = (len(a) == 1, len(b) == 1)",
          "bb = tuple(b) + (1,) if b1 else tuple(b)"),
    "aa": ("aa = (1,) + tuple(a) if a1 else tuple(a)", "k1, k2 = (aa[-1], bb[-2])", _BATCH,
           "out.append(aa[-2])"),
    "bb": ("bb = tuple(b) + (1,) if b1 else tuple(b)", "k1, k2 = (aa[-1], bb[-2])", _BATCH,
           "out.append(bb[-1])"),
    "batch": (_BATCH, "out = list(batch)"),
    "out": ("out = list(batch)", "return tuple(out)", "out.append(aa[-2])",
            "out.append(bb[-1])"),
}


@contextmanager
def _matmul_messages_unread():
    """A refusal's message built from nothing (its sizes are symbolic here)."""
    saved = LA.describe, LA.shape_repr, EW.shape_repr
    LA.describe = LA.shape_repr = EW.shape_repr = lambda x: "<size>"
    try:
        yield
    finally:
        LA.describe, LA.shape_repr, EW.shape_repr = saved


def matmul_claim(ra: int, rb: int) -> None:
    """``matmul_shape`` on operands of ranks ``ra``, ``rb`` whose sizes are Z3 integers
    >= 0 of symbolic kind, along every path: admitted exactly when NumPy's matmul accepts
    (``numpy_shapes.matmul``: rank >= 1, the contracted sizes equal, the batch axes
    broadcast), with NumPy's shape."""
    a = sizes(" ".join("a%d" % i for i in range(ra))) if ra else []
    b = sizes(" ".join("b%d" % i for i in range(rb))) if rb else []
    hyps = [s.v >= 0 for s in a + b]

    def run():
        try:
            return LA.matmul_shape(tuple(a), tuple(b))
        except UserError:
            return None
    with _matmul_messages_unread():
        ex, paths = run_paths(run, hyps, [EW, LA])
    for pc, got in paths:
        require(not isinstance(got, Exception), "matmul_shape raises %r", got)
    if not (ra and rb):
        require(all(got is None for _, got in paths), "matmul_shape admits a 0-d operand")
        return
    (want,), ok = N.matmul(tuple(s.v for s in a), tuple(s.v for s in b))
    outs = combine(paths, lambda got: [got is not None] + (
        [0] * len(want) if got is None else list(got)))
    require(all(got is None or len(got) == len(want) for _, got in paths),
            "matmul_shape(ranks %d, %d) gives another rank than NumPy's %d", ra, rb, len(want))
    prove_code(lambda k, *o: z3.And(k == z3.And(*ok),
                                    z3.Implies(k, z3.And(*[x == y for x, y in zip(o, want)]))),
               outs, hyps, P=ex.P, what="matmul_shape(ranks %d, %d) against NumPy" % (ra, rb))


@proves("matmul.shape", over=every(
    "every pair of ranks, every size a Z3 integer >= 0 and a literal int or a symbolic "
    "size (the kind symbolic), both directions: matmul_shape read from its code "
    "(read_alike: each operand through its length -- 0, 1 or more -- its last two axes "
    "and its batch prefix handed whole to broadcast_shapes, proven for every number and "
    "rank of shapes by broadcast.shapes), run along every path at one rank pair per "
    "length class (1, 2 and 3 for 3 or more: ranks (1|2|3, 1|2|3)) and the 0-d refusals, "
    "against NumPy's rule; x @ y traced at ranks (4, 3) with a batch 1 and (1, 2)"))
def matmul_shape_every():
    read_alike(LA.matmul_shape, MATMUL_READS)
    require(LA.broadcast_shapes is EW.broadcast_shapes,
            "matmul_shape's broadcast_shapes is not elementwise.py's")
    matmul_claim(0, 2)
    matmul_claim(2, 0)
    matmul_claim(1, 1)
    matmul_claim(1, 2)
    matmul_claim(1, 3)
    matmul_claim(2, 1)
    matmul_claim(2, 2)
    matmul_claim(2, 3)
    matmul_claim(3, 1)
    matmul_claim(3, 2)
    matmul_claim(3, 3)
    spec = lambda P, ins, v: N.matmul(ins[0], ins[1])        # noqa: E731
    _check_many([(lambda x, y: x @ y, [((2, 1, 5, 4), {1: 1}), ((3, 4, 6), {})], spec, ()),
                 (lambda x, y: x @ y, [((4,), {}), ((4, 3), {})], spec, ())], "x @ y",
                not_one=True)
