"""Proofs of ``linalg.inner``, ``linalg.dot`` and ``linalg.tensordot`` for every rank and
every axis argument: the code's reads of shapes and axes pinned, ``norm_axis`` and the
axis arithmetic proven for every integer, each op traced once per code path.

All three end in ``contract`` (``capture/ops/linalg.py``), which reads (``CONTRACT_READS``):

* each axis of each list alike, through ``norm_axis(i, ndim)`` (one comprehension);
* the normalised lists whole for repeats (``len(set(ax)) != len(ax)``: refused);
* each pair of axes alike (``zip``): the two sizes compared, a refusal where they differ;
* each shape axis by axis alike: the axes not contracted, in order, a's then b's.

NumPy's rule (``np.tensordot``'s code and docs; ``np.inner`` and N-D ``np.dot`` are its
special cases) is the same reading over the axes as NumPy normalises them: every axis in
``[-ndim, ndim)`` (an ``IndexError`` otherwise), none named twice (as given, or once
normalised: its transpose refuses a repeated axis), the paired sizes equal, the result the
axes not contracted in order.  So the proof needs, for every integer:

* ``norm_axis(a, nd)`` (``norm_axis_every``): run along every path on symbolic ``a`` and
  ``nd >= 0``: it refuses exactly when ``a`` is outside ``[-nd, nd)`` and otherwise
  returns NumPy's normalised axis (``a + nd`` for a negative one);
* two axes named alike as given are named alike once normalised (NumPy's repeat check on
  the raw axes refuses nothing the engine's check on the normalised ones admits);
* the axes each op hands to ``contract``: ``np.inner``'s ``[nd - 1]`` and N-D
  ``np.dot``'s ``[nd - 1]``, ``[max(ndb - 2, 0)]`` are NumPy's (the last axis; b's
  second-to-last, or its only one), and ``np.tensordot(axes=n)``'s
  ``range(nd - n, nd)`` / ``range(n)`` are admitted exactly when NumPy's ``range(-n, 0)``
  / ``range(n)`` are, normalised alike -- for every ``n`` and every rank (an ``n`` past
  the rank repeats an axis of a, which the engine refuses as NumPy does).

Each op is then traced with the real tracer (contract, NumPy's shapes and conditions, and
the converse) on one input per path of its code: the reads above show the ranks enter only
through them.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np
import z3

from symshape.capture.ops import linalg as LA
from symshape.capture.ops import shape as SH

from . import every, proves
from .axisargs import norm_axis_every
from . import numpy_shapes as N
from .alike import read_alike
from .op_shape_rules import _bind2, _check_many
from .pyint import Py, require

Reads = Dict[str, Tuple[str, ...]]

_EMIT = "return t.emit('tensordot', (x.node, y.node), {'axes': (tuple(ax_a), tuple(ax_b))}, " \
        "shape, dt)"
_SHAPE = "shape = tuple((s for i, s in enumerate(x.shape) if i not in ax_a)) + " \
         "tuple((s for j, s in enumerate(y.shape) if j not in ax_b))"
_REPEAT = "if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b)"
_PAIRS = "for (i, j) in zip(ax_a, ax_b)"
_SIZES = "if not x.shape[i] == y.shape[j]"

#: every statement of ``contract`` mentioning each name
CONTRACT_READS: Reads = {
    "ax_a": ("ax_a = [norm_axis(i, x.ndim) for i in ax_a]", _REPEAT, _PAIRS, _SHAPE, _EMIT),
    "ax_b": ("ax_b = [norm_axis(i, y.ndim) for i in ax_b]", _REPEAT, _PAIRS, _SHAPE, _EMIT),
    "x": ("ax_a = [norm_axis(i, x.ndim) for i in ax_a]", _SHAPE,
          "dt = resolve(np.matmul, [x, y])", _EMIT, _SIZES),
    "y": ("ax_b = [norm_axis(i, y.ndim) for i in ax_b]", _SHAPE,
          "dt = resolve(np.matmul, [x, y])", _EMIT, _SIZES),
    "i": ("ax_a = [norm_axis(i, x.ndim) for i in ax_a]",
          "ax_b = [norm_axis(i, y.ndim) for i in ax_b]", _PAIRS, _SHAPE, _SIZES),
    "j": (_PAIRS, _SHAPE, _SIZES),
    "shape": (_SHAPE, _EMIT),
}

_SCALAR = "if type(x) is not TracedArray or type(y) is not TracedArray or (not x.ndim) or " \
          "(not y.ndim)"
_OPERANDS = "x, y = (t.operand(a), t.operand(b))"
_INNER = "return contract(t, x, y, [x.ndim - 1], [y.ndim - 1], 'np.inner')"
INNER_READS: Reads = {"x": (_OPERANDS, _SCALAR, _INNER), "y": (_OPERANDS, _SCALAR, _INNER)}

_DOT = ("if x.ndim > 2 or y.ndim > 2", "shape = matmul_shape(x.shape, y.shape, 'dot')",
        "dt = resolve(np.matmul, [x, y])", "return t.emit('dot', (x.node, y.node), {}, shape, dt)",
        "return np.multiply(x, y)",
        "return contract(t, x, y, [x.ndim - 1], [max(y.ndim - 2, 0)], 'np.dot')")
DOT_READS: Reads = {"x": (_OPERANDS, _SCALAR) + _DOT, "y": (_OPERANDS, _SCALAR) + _DOT}

_TD_CALL = "return contract(t, x, y, ax_a, ax_b, 'np.tensordot')"
_TD_A = "ax_a = list(range(x.ndim - n, x.ndim))"
TENSORDOT_READS: Reads = {
    "axes": ("if isinstance(axes, (int, np.integer))", "n = int(axes)", "ax_a, ax_b = axes"),
    "ax_a": ("if len(ax_a) != len(ax_b)", _TD_CALL, _TD_A, "ax_a, ax_b = axes",
             "ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)"),
    "ax_b": ("if len(ax_a) != len(ax_b)", _TD_CALL, "ax_b = list(range(n))",
             "ax_a, ax_b = axes",
             "ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)"),
    "n": ("n = int(axes)", _TD_A, "ax_b = list(range(n))"),
    "x": ("x, y = _operands(t, a, b, 'tensordot')", _TD_CALL, _TD_A),
    "y": ("x, y = _operands(t, a, b, 'tensordot')", _TD_CALL),
}


# ---------------------------------------------------------------------------- integers
def _in(a, nd):
    return z3.And(-nd <= a, a < nd)


def _norm(a, nd):
    """NumPy's ``normalize_axis_index`` of an axis in range."""
    return z3.If(a < 0, a + nd, a)


def repeated_axes_stay_repeated() -> None:
    """An axis repeated as given is repeated once normalised (for every rank and axis)."""
    a, nd, b = z3.Ints("a nd b")
    Py().prove(_norm(a, nd) == _norm(b, nd), nd >= 0, _in(a, nd), _in(b, nd), a == b,
               what="an axis repeated as given is repeated once normalised")


def contract_reads() -> None:
    """``contract`` reads its axes and shapes as ``CONTRACT_READS`` says, and ``norm_axis``
    is proven for every integer."""
    read_alike(LA.contract, CONTRACT_READS)
    require(LA.norm_axis is SH.norm_axis, "contract's norm_axis is not shape.py's")
    norm_axis_every()
    repeated_axes_stay_repeated()


def last_axes() -> None:
    """``[nd - 1]`` (np.inner, N-D np.dot's a) is a's last axis for every rank >= 1, and
    ``[max(ndb - 2, 0)]`` (N-D np.dot's b) is b's second-to-last axis, or its only one."""
    P = Py()
    nd, ndb = z3.Ints("nd ndb")
    P.prove(z3.And(_in(nd - 1, nd), _norm(nd - 1, nd) == nd - 1), nd >= 1,
            what="[nd - 1] is the last axis")
    m = z3.If(ndb - 2 >= 0, ndb - 2, 0)             # max(y.ndim - 2, 0)
    P.prove(z3.And(_in(m, ndb), _norm(m, ndb) == z3.If(ndb >= 2, ndb - 2, 0)), ndb >= 1,
            what="[max(ndb - 2, 0)] is b's second-to-last axis, or its only one")


def tensordot_n() -> None:
    """``np.tensordot(axes=n)`` for every integer ``n`` and rank ``nd >= 0`` of a: the
    engine's ``range(nd - n, nd)`` (axis k: ``nd - n + k``) passes ``norm_axis`` and the
    repeat check exactly when NumPy's ``range(-n, 0)`` (axis k: ``k - n``) is in range, and
    then names the same axes; b's ``range(n)`` is NumPy's own.  An ``n`` past the rank
    repeats an axis (``k = 0`` and ``k = nd``) or leaves the range."""
    P = Py()
    n, nd, k, k2 = z3.Ints("n nd k k2")

    def within(v):
        return z3.And(0 <= v, v < n)
    eng = z3.And(z3.ForAll([k], z3.Implies(within(k), _in(nd - n + k, nd))),
                 z3.ForAll([k, k2], z3.Implies(z3.And(within(k), within(k2), k < k2),
                                               _norm(nd - n + k, nd) != _norm(nd - n + k2, nd))))
    numpy = z3.ForAll([k], z3.Implies(within(k), _in(k - n, nd)))
    P.prove(eng == numpy, nd >= 0, what="tensordot(axes=n) admitted iff NumPy's axes are")
    P.prove(_norm(nd - n + k, nd) == _norm(k - n, nd), nd >= 0, numpy, within(k),
            what="tensordot(axes=n) contracts NumPy's axes")


# ---------------------------------------------------------------------------- specs
def _without(shape, axes):
    nd = len(shape)
    drop = {a % nd for a in axes}
    return tuple(s for i, s in enumerate(shape) if i not in drop)


def tensordot_axes(a, b, ax_a, ax_b):
    """``np.tensordot(a, b, axes=(ax_a, ax_b))`` (NumPy's docs): each pair of sizes equal,
    the result a's axes not summed then b's, in order."""
    return [_without(a, ax_a) + _without(b, ax_b)], [a[p] == b[q] for p, q in zip(ax_a, ax_b)]


def dot_any(a, b):
    """``np.dot`` with 0-d operands too: a 0-d operand multiplies (the other's shape)."""
    if not a or not b:
        return [tuple(b) if not a else tuple(a)], []
    return N.dot(a, b)


def _case(fn, sa, sb, spec):
    return (fn, [(sa, {}), (sb, {})], lambda P, ins, v: spec(ins[0], ins[1]), ())


# ---------------------------------------------------------------------------- the proofs
@proves("linalg.inner", over=every(
    "every pair of ranks (0-d: a product) and sizes symbolic: _inner and contract read "
    "from their code (read_alike: each axis normalised alike by norm_axis, repeats refused, "
    "each pair of sizes compared alike, the shapes filtered axis by axis), norm_axis proven "
    "for every integer axis and rank (both directions), [nd - 1] proven the last axis for "
    "every rank, traced at ranks (2, 3) and (0, 2), both directions"))
def linalg_inner_every():
    read_alike(LA._inner, INNER_READS)
    contract_reads()
    last_axes()
    _check_many([_case(_bind2(np.inner), (3, 4), (5, 6, 4), N.inner),
                 _case(_bind2(np.inner), (), (3, 4), N.inner)], "np.inner")


@proves("linalg.dot", over=every(
    "every pair of ranks and sizes symbolic: _dot read from its code (0-d: a product; "
    "ranks <= 2: matmul_shape, its four rank pairs traced; N-D: contract over [nd - 1] "
    "and [max(ndb - 2, 0)]), contract read from its code and norm_axis proven for every "
    "integer (as for linalg.inner), both axes proven NumPy's for every rank, the N-D "
    "branch traced at ranks (3, 1), (1, 3), (3, 2), 0-d at (0, 2), (2, 0), both "
    "directions"))
def linalg_dot_every():
    read_alike(LA._dot, DOT_READS)
    contract_reads()
    last_axes()
    f = _bind2(np.dot)
    _check_many([_case(f, (4,), (4,), dot_any), _case(f, (3, 4), (4,), dot_any),
                 _case(f, (4,), (4, 5), dot_any), _case(f, (3, 4), (4, 5), dot_any),
                 _case(f, (2, 3, 4), (4,), dot_any), _case(f, (4,), (3, 4, 5), dot_any),
                 _case(f, (2, 3, 4), (4, 5), dot_any), _case(f, (), (3, 4), dot_any),
                 _case(f, (3, 4), (), dot_any)], "np.dot")


@proves("linalg.tensordot", over=every(
    "every pair of ranks, every integer axes=n and every pair of axis lists (either sign), "
    "sizes symbolic: _tensordot and contract read from their code (each axis normalised "
    "alike by norm_axis, repeats refused, each pair of sizes compared alike), norm_axis "
    "proven for every integer (both directions), a repeat as given proven a repeat once "
    "normalised, range(nd - n, nd) proven admitted iff NumPy's range(-n, 0) is and the "
    "same axes for every n and rank, traced at axes=2, axes=0, axes=(1, 0) and "
    "([0, -1], [2, 0]), both directions"))
def linalg_tensordot_every():
    read_alike(LA._tensordot, TENSORDOT_READS)
    contract_reads()
    tensordot_n()

    def spec(ax_a, ax_b):
        return lambda a, b: tensordot_axes(a, b, ax_a, ax_b)
    _check_many([_case(_bind2(np.tensordot, axes=2), (3, 4, 5), (4, 5, 6), spec([1, 2], [0, 1])),
                 _case(_bind2(np.tensordot, axes=0), (3, 4), (5,), spec([], [])),
                 _case(_bind2(np.tensordot, axes=(1, 0)), (3, 4), (4, 5), spec([1], [0])),
                 _case(_bind2(np.tensordot, axes=([0, -1], [2, 0])), (3, 4, 5), (5, 6, 3),
                       spec([0, -1], [2, 0]))], "np.tensordot")
