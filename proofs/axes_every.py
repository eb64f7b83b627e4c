"""Axis arguments over every rank and every integer: ``norm_axis`` and ``np.diagonal``'s
rule run on a symbolic rank, symbolic axes and a symbolic offset, along every path.

The op-shape sweeps (``proofs/op_shape_rules.py``) trace a rule at every rank up to 4.
NumPy's domain is every rank and every axis argument; the route here (``OPSHAPE.md``):

* ``norm_axis(a, ndim)`` (``capture/ops/shape.py``) is run with ``a`` and ``ndim >= 0``
  as Z3 integers (``proofs/intpaths.py``): it returns ``a % ndim`` exactly when
  ``-ndim <= a < ndim`` (NumPy's ``normalize_axis_index``) and raises a ``UserError``
  otherwise -- for every integer, not a grid;
* the rule's own function is run on a stand-in array whose rank is a Z3 integer and whose
  shape records every read (``_Shape``): an index read returns a fresh size symbol (the
  size at that symbolic position), an iteration is recorded and yields nothing, a length
  read fails the proof.  So the code's checks, its axis normalisation, the sizes it reads
  and the size it computes are proven for every rank, every axis and every offset;
* what the stand-in cannot run -- the one comprehension that keeps the other sizes -- is
  read from the code (``proofs/reads.py``: every statement mentioning the array or the
  kept sizes is a listed text) and the whole op is traced once with the real tracer
  (``op_shape_rules._check_all``: NumPy's shapes and the converse, sizes symbolic).
"""
from __future__ import annotations

import ast
from contextlib import contextmanager
from typing import List

import numpy as np
import z3

from symshape.algebra import expr as E
from symshape.capture.ops import shape as SH
from symshape.errors import UserError

from . import every, proves
from .axisargs import norm_axis_every
from . import numpy_shapes as N
from .code import Symbols, prove_code
from .intpaths import int_paths
from .op_shape_rules import _bind1, _check_all, _shape
from .pyint import ProofFailure, require, zmax, zmin
from .alike import read_alike
from .reads import require_reads, source_tree
from .symcoeff import SInt, encode, value


# ---------------------------------------------------------------------------- stand-ins
class Num(SInt):
    """A symbolic int an error message may print (``%d``: the text only, never a claim)."""

    __slots__ = ()

    def __int__(self) -> int:
        return 0


class _Shape:
    """A shape of symbolic length: ``shape[i]`` is a fresh size symbol (recorded with the
    index read), ``shape[a:b]`` a piece ``(name, 'slice', a, b)`` and the shape in a sum a
    piece ``(name, 'whole')`` (``Pieces``), iterating it is recorded and yields nothing
    (the code's comprehension over the shape is read from its text instead), its length
    is never read."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reads: List = []
        self.iterated = 0

    def __getitem__(self, i):
        if isinstance(i, slice):
            require(i.step is None, "a shape sliced with a step: %r", i)
            return Pieces([(self.name, "slice", i.start, i.stop)])
        s = E.Sym(9000 + len(self.reads))
        self.reads.append((i, s))
        return E.atom_expr(s)

    def __iter__(self):
        self.iterated += 1
        return iter(())

    def __len__(self):
        raise ProofFailure("the rule reads the rank as len(x.shape), not x.ndim")

    def __add__(self, o):
        return Pieces([(self.name, "whole", None, None)]) + o

    def __radd__(self, o):
        return o + Pieces([(self.name, "whole", None, None)])


class Pieces:
    """A shape built of pieces of stand-in shapes (a slice of one, or one whole)."""

    def __init__(self, parts: List) -> None:
        self.parts = parts

    @staticmethod
    def _of(o) -> List:
        if isinstance(o, Pieces):
            return o.parts
        if isinstance(o, _Shape):
            return [(o.name, "whole", None, None)]
        require(o == (), "a shape piece joined to %r", o)
        return []

    def __add__(self, o):
        return Pieces(self.parts + self._of(o))

    def __radd__(self, o):
        return Pieces(self._of(o) + self.parts)


def pieces(shape) -> List:
    """The pieces of an emitted shape (a ``Pieces``; a plain tuple must be empty)."""
    return Pieces._of(shape)


class _Node:
    """A traced input's node: no constant (a constant index is bounded by its values)."""

    op = "input"
    meta: dict = {}


class StandIn:
    """The traced array as a rule reads it: a symbolic rank and a recording shape."""

    def __init__(self, ndim, name: str = "x") -> None:
        self.ndim = ndim
        self.shape = _Shape(name)
        self.node = _Node()
        self.dtype = None


class _Env:
    """The tracer's environment: ``simplify`` is the identity (a proof of the size's
    value; simplification keeps the value, proven with the expression layer)."""

    @staticmethod
    def simplify(e):
        return e


class StandInTracer:
    """The tracer: ``operand`` hands the stand-in array, ``emit`` returns what it got."""

    def __init__(self, x: StandIn) -> None:
        self.x = x
        self.env = _Env()

    def operand(self, a):
        return self.x

    @staticmethod
    def emit(op, ins, attrs, shape, dtype, **kw):
        return attrs, shape


@contextmanager
def messages_unread():
    """``shape_repr`` (a message's text) given nothing to read while the rule runs."""
    saved = SH.shape_repr
    SH.shape_repr = lambda shape: "<shape>"
    try:
        yield
    finally:
        SH.shape_repr = saved


def in_range(a, nd):
    """NumPy's ``normalize_axis_index`` accepts ``a`` for rank ``nd``."""
    return z3.And(-nd <= a, a < nd)


def code_text(fn) -> str:
    """``fn``'s body as ``ast.unparse`` writes it, its docstring dropped and each
    ``raise``'s message replaced by ``UserError`` (a message is no part of the rule): a
    proof that reads a function whole compares this text with its own copy."""
    tree = source_tree(fn)
    body = [b for b in tree.body
            if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
    mod = ast.Module(body=body, type_ignores=[])
    for n in ast.walk(mod):
        if isinstance(n, ast.Raise):
            n.exc = ast.Name("UserError")
    return ast.unparse(mod)


# ---------------------------------------------------------------------------- norm_axis
# ---------------------------------------------------------------------------- diagonal
#: every statement of ``_diagonal`` that reads the array or the kept sizes -> why it is
#: covered: the stand-in runs all but the comprehension, which is NumPy's "axis1 and
#: axis2 removed" for every rank as written (each position kept unless it is a1 or a2)
DIAG_READS = {
    "x": ("x = t.operand(a)", "if x.ndim < 2",
          "a1 = norm_axis(axis1, x.ndim, 'np.diagonal axis1')",
          "a2 = norm_axis(axis2, x.ndim, 'np.diagonal axis2')",
          "n1, n2 = (to_expr(x.shape[a1]), to_expr(x.shape[a2]))",
          "rest = tuple((s for i, s in enumerate(x.shape) if i not in (a1, a2)))",
          "return t.emit('diagonal', (x.node,), {'offset': offset, 'axis1': a1, 'axis2': a2}, "
          "rest + (_size(t.env, k),), x.dtype)"),
    "rest": ("rest = tuple((s for i, s in enumerate(x.shape) if i not in (a1, a2)))",
             "return t.emit('diagonal', (x.node,), {'offset': offset, 'axis1': a1, 'axis2': "
             "a2}, rest + (_size(t.env, k),), x.dtype)"),
}


def diagonal_length(n1, n2, k):
    """NumPy's length of the ``k``-th diagonal of an ``n1 x n2`` plane."""
    return zmax(0, z3.If(k >= 0, zmin(n1, n2 - k), zmin(n1 + k, n2)))


def diagonal_paths() -> None:
    """``_diagonal`` on a symbolic rank, axes and offset, along every path: it admits the
    call exactly when NumPy does (rank >= 2, both axes in range, distinct once
    normalised), reads the sizes at the two normalised axes and appends NumPy's diagonal
    length, for every offset."""
    nd, ax1, ax2, off = z3.Ints("nd ax1 ax2 off")
    box = []

    def run():
        x = StandIn(Num(nd))
        box[:] = [x]
        try:
            return x, SH._diagonal(StandInTracer(x), None, Num(off), Num(ax1), Num(ax2))
        except UserError:
            return x, None
    with messages_unread():
        ex, paths = int_paths(run, [nd >= 0], SH)
    acc = z3.And(nd >= 2, in_range(ax1, nd), in_range(ax2, nd), ax1 % nd != ax2 % nd)
    zs = Symbols()
    impl, parts = [], []
    for pc, got in paths:
        require(not isinstance(got, BaseException), "np.diagonal raises %r on %s", got,
                z3.And(*pc))
        x, out = got
        if out is None:
            parts.append((pc, None))
            continue
        attrs, shape = out
        reads = x.shape.reads
        require(len(reads) == 2 and x.shape.iterated == 1 and len(shape) == 1,
                "np.diagonal reads the shape %s (iterates it %d times), emits %d sizes",
                reads, x.shape.iterated, len(shape))
        size = shape[0]
        size = size.expr if hasattr(size, "expr") else size
        terms = [value(reads[0][0]), value(reads[1][0]), value(attrs["axis1"]),
                 value(attrs["axis2"]), value(attrs["offset"]), encode(ex.P, size, zs)]
        parts.append((pc, (len(impl), zs[reads[0][1]], zs[reads[1][1]])))
        impl += terms

    def claim(*t):
        out = []
        for pc, got in parts:
            if got is None:
                out.append(z3.Implies(z3.And(*pc), z3.Not(acc)))
                continue
            k, n1, n2 = got
            i1, i2, a1, a2, o, d = t[k:k + 6]
            out.append(z3.Implies(z3.And(*pc), z3.And(
                acc, i1 == ax1 % nd, i2 == ax2 % nd, a1 == ax1 % nd, a2 == ax2 % nd,
                o == off, d == diagonal_length(n1, n2, off))))
        return z3.And(*out)
    prove_code(claim, impl, [nd >= 0], P=ex.P,
               what="np.diagonal(x, off, ax1, ax2) on rank nd (%d paths)" % len(paths))


def diagonal_reads() -> None:
    """Every statement of ``_diagonal`` reading the array or the kept sizes is listed."""
    tree = source_tree(SH._diagonal)
    for name, allowed in DIAG_READS.items():
        seen = require_reads(tree, name, allowed, "_diagonal")
        require(seen == set(allowed), "_diagonal no longer reads %s as %s", name,
                sorted(set(allowed) - seen))


@proves("shape.diagonal", over=every(
    "every rank nd >= 0, every int axis1 / axis2 and every int offset, as Z3 integers: "
    "norm_axis proven for every integer and rank; _diagonal itself run along every path "
    "on a stand-in array of symbolic rank whose shape records its reads -- admitted "
    "exactly when NumPy admits (nd >= 2, both axes in [-nd, nd), distinct once "
    "normalised), the sizes read at the normalised axes, NumPy's diagonal length appended "
    "for every offset; the comprehension keeping the other sizes read from the code; "
    "traced with the real tracer at rank 3 (both offset signs), every size symbolic"))
def shape_diagonal():
    norm_axis_every()
    diagonal_paths()
    diagonal_reads()
    _check_all([(_bind1(np.diagonal, offset=1, axis1=0, axis2=-1),
                 lambda P, ins, v: N.diagonal(ins[0], 1, 0, -1)),
                (_bind1(np.diagonal, offset=-2, axis1=2, axis2=1),
                 lambda P, ins, v: N.diagonal(ins[0], -2, 2, 1))],
               [_shape(3)], "np.diagonal(rank 3, offsets 1 and -2)")


# ---------------------------------------------------------------------------- permute
#: every statement of ``transpose`` / ``_swapaxes`` / ``_moveaxis`` reading the axes, the
#: rank or the permutation built from them, and why it reads every axis alike:
#: * transpose: None is the reversed range (NumPy's default); each axis normalised alike
#:   by ``norm_axis`` (proven for every integer below); the permutation test is Python's
#:   "the normalised axes are 0..nd-1, each once" -- NumPy's "a permutation of [0, ...,
#:   N-1]" (axes out of range, repeated or of the wrong count refused); each output size
#:   the input's size at that axis (NumPy's ``shape[axes[i]]``); the identity returns x;
#: * swapaxes: the identity permutation with the two normalised axes exchanged;
#: * moveaxis: each axis of source and destination normalised alike, a repeated one
#:   refused (NumPy's normalize_axis_tuple), the other axes in
#:   their order, each source axis inserted at its destination (NumPy's definition: "other
#:   axes remain in their original order"), then transpose.
PERMUTE_READS = {
    SH.transpose: {
        "axes": ("if axes is None", "axes = tuple(range(nd))[::-1]",
                 "axes = tuple((norm_axis(a, nd) for a in axes))",
                 "if sorted(axes) != list(range(nd))", "if axes == tuple(range(nd))",
                 "return t.emit('permute_dims', (x.node,), {'axes': axes}, tuple((x.shape[a] "
                 "for a in axes)), x.dtype, name='transpose')"),
        "nd": ("nd = x.ndim", "axes = tuple(range(nd))[::-1]",
               "axes = tuple((norm_axis(a, nd) for a in axes))",
               "if sorted(axes) != list(range(nd))", "if axes == tuple(range(nd))"),
    },
    SH._swapaxes: {
        "perm": ("perm = list(range(x.ndim))", "perm[i], perm[j] = (perm[j], perm[i])",
                 "return transpose(t, x, perm)"),
        "i": ("i, j = (norm_axis(axis1, x.ndim), norm_axis(axis2, x.ndim))",
              "perm[i], perm[j] = (perm[j], perm[i])"),
    },
    SH._moveaxis: {
        "src": ("src = [norm_axis(s, x.ndim) for s in _sizes(source)]",
                "if len(set(src)) != len(src) or len(set(dst)) != len(dst)",
                "if len(src) != len(dst)", "order = [n for n in range(x.ndim) if n not in src]",
                "for (d, s) in sorted(zip(dst, src))"),
        "dst": ("dst = [norm_axis(d, x.ndim) for d in _sizes(destination)]",
                "if len(set(src)) != len(src) or len(set(dst)) != len(dst)",
                "if len(src) != len(dst)", "for (d, s) in sorted(zip(dst, src))"),
        "order": ("order = [n for n in range(x.ndim) if n not in src]", "order.insert(d, s)",
                  "return transpose(t, x, order)"),
    },
}


def permute_reads() -> None:
    """Every statement of the three functions reading the axes is one of ``PERMUTE_READS``
    (and no loop over them is left early)."""
    for fn, reads in PERMUTE_READS.items():
        read_alike(fn, reads)


@proves("shape.permute", over=every(
    "every rank and every axis argument: np.transpose with every permutation (either "
    "sign) or None, np.swapaxes with every pair of axes, np.moveaxis of one axis to every "
    "position -- every read of the axes in transpose, _swapaxes and _moveaxis read from the "
    "code (each axis normalised alike by norm_axis; the permutation test Python's "
    "sorted(axes) == list(range(nd)), NumPy's 'a permutation of [0, ..., N-1]'; each output "
    "size shape[a] for every axis alike), norm_axis proven for every integer axis and every "
    "rank (Z3 integers, every path: a % nd exactly when -nd <= a < nd, else a UserError), "
    "traced with the real tracer at rank 3 (None, a mixed-sign permutation, the identity, "
    "swapaxes, moveaxis), every size symbolic"))
def shape_permute():
    norm_axis_every()
    permute_reads()
    _check_all([(_bind1(np.transpose), lambda P, ins, v: N.transpose(ins[0], None)),
                (_bind1(np.transpose, axes=(-1, 0, 1)),
                 lambda P, ins, v: N.transpose(ins[0], (-1, 0, 1))),
                (_bind1(np.transpose, axes=(0, -2, 2)),
                 lambda P, ins, v: N.transpose(ins[0], (0, -2, 2))),
                (_bind1(np.swapaxes, 0, -1), lambda P, ins, v: N.swapaxes(ins[0], 0, -1)),
                (_bind1(np.moveaxis, -3, 1), lambda P, ins, v: N.moveaxis(ins[0], -3, 1))],
               [_shape(3)], "np.transpose / swapaxes / moveaxis (rank 3)")
