"""Proofs of ``shape.atleast_1d`` and ``shape.atleast_2d`` for every number of operands of
every rank: the rules run on operands of symbolic rank, their reads pinned from the code.

``np.atleast_nd`` (NumPy's docs and code) maps each array alike: an array of rank below
``nd`` gets the leading / surrounding 1s, every other array is returned as it is.  The
proof, for ``_atleast_1d`` / ``_atleast_2d`` (``capture/ops/shape.py``) and for NumPy's own
``atleast_3d`` (traced as NumPy's code: the engine runs it on traced arrays):

* reads from the code that the operands are read alike, each handed whole to the
  converter and mapped by a test of its rank alone, the results kept in order and
  returned whole (one operand: itself) -- ``read_alike`` with this module's tables;
* runs the rule on one and on two operands of *symbolic* rank (``proofs/ranked.py``),
  along every path: an operand of rank ``>= nd`` is returned itself (its shape NumPy's
  for every rank), one of rank ``< nd`` goes to ``reshape`` / ``expand_dims`` / a basic
  index giving rank ``nd`` (``_list_item``, the conversion of a scalar or a list, is the
  operand itself here);
* traces the ranks below ``nd`` (the only ones not returned as they are) with the real
  tracer, every size symbolic, both directions (``op_shape_rules._check_many``).
"""
from __future__ import annotations

import inspect

import numpy as np
import z3

from symshape.capture.ops import shape as SH

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .intpaths import prove_int_paths
from .op_shape_rules import _check_many, _shape
from .pyint import ProofFailure, require
from .ranked import Call, Ranked, patched_name, recorders, scope_of
from .symcoeff import SInt

#: {name: every statement of ``_atleast_1d`` mentioning it}: each operand converted alike,
#: mapped by its rank alone, the list returned whole (one operand: the one item)
READS_1D = {
    "arys": ("xs = [_list_item(t, a) for a in arys]",),
    "xs": ("xs = [_list_item(t, a) for a in arys]",
           "out = [reshape(t, x, (1,)) if x.ndim == 0 else x for x in xs]"),
    "out": ("out = [reshape(t, x, (1,)) if x.ndim == 0 else x for x in xs]",
            "return out[0] if len(out) == 1 else tuple(out)"),
}

#: the same for ``_atleast_2d``: one loop over every operand, each tested on its rank
READS_2D = {
    "arys": ("for a in arys",),
    "x": ("x = _list_item(t, a)", "if x.ndim == 0", "x = reshape(t, x, (1, 1))",
          "if x.ndim == 1", "x = expand_dims(t, x, 0)", "out.append(x)"),
    "out": ("out = []", "out.append(x)", "return out[0] if len(out) == 1 else tuple(out)"),
}

#: and for NumPy's own ``atleast_3d`` (numpy/_core/shape_base.py)
READS_3D = {
    "arys": ("for ary in arys",),
    "ary": ("for ary in arys", "ary = asanyarray(ary)", "if ary.ndim == 0",
            "result = ary.reshape(1, 1, 1)", "if ary.ndim == 1",
            "result = ary[_nx.newaxis, :, _nx.newaxis]", "if ary.ndim == 2",
            "result = ary[:, :, _nx.newaxis]", "result = ary"),
    "res": ("res = []", "res.append(result)", "if len(res) == 1", "return res[0]",
            "return tuple(res)"),
}


class _Viewed(Ranked):
    """A ``Ranked`` operand with NumPy's two view-making reads, recorded."""

    def reshape(self, *shape):
        return Call("reshape", (self, shape))

    def __getitem__(self, index):
        return Call("getitem", (self, index))


def _encode(item, op) -> tuple:
    """(rank of ``item``, 1 if it is ``op`` itself, a Z3 test that a basic index fits
    ``op``'s rank) for what the rule returned for the operand ``op``."""
    one = SInt(z3.IntVal(1))
    if item is op:
        return op.ndim, 1, one
    if isinstance(item, Call) and item.args[0] is op:
        if item.fn == "reshape" and all(type(s) is int and s == 1 for s in item.args[1]):
            return len(item.args[1]), 0, one
        if item.fn == "expand_dims" and type(item.args[1]) is int and item.args[1] == 0:
            return op.ndim + 1, 0, one
        index = item.args[1]
        if item.fn == "getitem" and all(i is None or i == slice(None) for i in index):
            slices = sum(1 for i in index if i is not None)
            return len(index), 0, SInt(z3.If(op.ndim.v == slices, 1, 0))
    raise ProofFailure("the rule gives %r for the operand %r" % (item, op))


def _claim(nd: int, ops):
    """Each operand's item: itself exactly when its rank is >= nd, else of rank nd."""
    def ok(*t):
        parts = []
        for k, op in enumerate(ops):
            rank, ident, fits = t[3 * k:3 * k + 3]
            n = op.ndim.v
            parts += [(ident == 1) == (n >= nd), rank == z3.If(n >= nd, n, nd), fits == 1]
        return z3.And(*parts)
    return ok


def _run(fn, ops):
    """``fn(*ops)``'s items encoded (``_encode``), one operand: the item itself."""
    def run():
        got = fn(*ops)
        items = (got,) if len(ops) == 1 else got
        require(len(ops) == 1 or (type(got) is tuple and len(got) == len(ops)),
                "the rule returns %r for %d operands", got, len(ops))
        return tuple(v for item, op in zip(items, ops) for v in _encode(item, op))
    return run


def ranked_claims(fn, nd: int, module, make=Ranked) -> None:
    """``fn`` on one operand (the path returning the item itself) and on two (the path
    returning the tuple; two stand for every number, the reads being alike) of symbolic
    rank, along every path."""
    _ranked_claim(fn, nd, module, [make("x")])
    _ranked_claim(fn, nd, module, [make("x"), make("y")])


def _ranked_claim(fn, nd: int, module, ops) -> None:
    prove_int_paths(_run(fn, ops), _claim(nd, ops), [o.ndim.v >= 0 for o in ops],
                    module, "np.atleast_%dd of %d operands of every rank" % (nd, len(ops)))


def _engine(fn, nd: int) -> None:
    """The engine's rule, its converter and callees recorded."""
    read_alike(fn, READS_1D if nd == 1 else READS_2D)
    scope = scope_of(fn)
    with recorders(scope, ("reshape", "expand_dims"), {}), \
            patched_name(scope, "_list_item", lambda t, a: a):
        ranked_claims(lambda *ops: fn(_Tracer(), *ops), nd, scope)


class _Tracer:
    """The tracer as the rules get it: never read (the callees are recorded)."""


def numpy_atleast_3d() -> None:
    """NumPy's ``atleast_3d`` (run by the engine on traced arrays): its reads, and its
    code on operands of symbolic rank (``asanyarray`` the operand itself)."""
    fn = inspect.unwrap(np.atleast_3d)
    read_alike(fn, READS_3D)
    scope = scope_of(fn)
    with patched_name(scope, "asanyarray", lambda a: a):
        ranked_claims(fn, 3, scope, _Viewed)


def _spec(nd):
    return lambda P, ins, v: N.atleast_nd(ins, nd)


@proves("shape.atleast_1d", over=every(
    "every number of operands of every rank, every size symbolic: _atleast_1d read from "
    "its code to convert and map every operand alike by a test of its rank alone and to "
    "return them whole; run on one and on two operands of symbolic rank along every path "
    "(rank 0 reshaped to (1,), every other rank the operand itself); rank 0 traced (one "
    "operand, and beside a rank-3 one), both directions"))
def shape_atleast_1d():
    _engine(SH._atleast_1d, 1)
    _check_many([(lambda x: np.atleast_1d(x), [_shape(0)], _spec(1), ()),
                 (lambda x, y: np.atleast_1d(x, y), [_shape(0), _shape(3)], _spec(1), ())],
                "np.atleast_1d(rank 0; rank 0 and rank 3)")


@proves("shape.atleast_2d", over=every(
    "every number of operands of every rank, every size symbolic, np.atleast_2d (the "
    "rule) and np.atleast_3d (NumPy's code): both read from their code to map every "
    "operand alike by tests of its rank alone and to return them whole; run on one and on "
    "two operands of symbolic rank along every path (a rank >= nd the operand itself, a "
    "lower one reshaped / expanded / indexed to rank nd); the ranks below nd traced (one "
    "operand, and beside a higher one), both directions"))
def shape_atleast_2d():
    _engine(SH._atleast_2d, 2)
    numpy_atleast_3d()
    _check_many([(lambda x: np.atleast_2d(x), [_shape(0)], _spec(2), ()),
                 (lambda x, y: np.atleast_2d(x, y), [_shape(1), _shape(3)], _spec(2), ()),
                 (lambda x: np.atleast_3d(x), [_shape(0)], _spec(3), ()),
                 (lambda x, y: np.atleast_3d(x, y), [_shape(1), _shape(2)], _spec(3), ()),
                 (lambda x, y: np.atleast_3d(x, y), [_shape(2), _shape(4)], _spec(3), ())],
                "np.atleast_2d / np.atleast_3d(the ranks below 2 / 3)")
