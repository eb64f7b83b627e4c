"""Proof of ``broadcast.shapes`` for every number of operands of every rank: an induction
on the code's own fold over the operands, its step run on every accumulator and size.

``broadcast_shapes`` (``capture/ops/elementwise.py``) reads its shapes in three ways, each
read here from its code (``SHAPES_READS``, ``proofs/alike.py``'s ``read_alike``, and the
statement structure ``_structure`` pins):

* the output rank ``nd = max(len(s) for s in shapes)``, 0 for no shapes (NumPy's: the
  largest rank, shapes aligned on the right);
* one output size per aligned axis ``i`` in ``range(-nd, 0)``, each computed alone (the
  accumulator reset to 1 at every axis, no other state carried);
* per axis, a left fold over *every* operand in order of the loop body ``STEP``: an operand
  without the axis (``len(s) < -i``: NumPy prepends 1s) leaves the accumulator as it is,
  one with it (``s[i]``, Python's index from the right: its aligned axis) replaces it with
  ``broadcast_pair(size, s[i])`` or raises when that is None.

The proof runs that loop body itself -- compiled from the function's own statements, in
its own module -- on an arbitrary accumulator and an arbitrary size (each a Z3 integer
>= 0 whose kind, literal int or symbolic size, is symbolic too: ``proofs/sized.py``), along
every path, and proves NumPy's n-ary rule by induction on the number of operands, over a
Z3 function ``f`` giving the sizes of operands ``0 .. n-1`` at the axis (``n`` symbolic):
NumPy accepts the first ``n`` exactly when every two sizes other than 1 are equal
(``OK(n)``), and the size is then the one other than 1, or 1 (``R(n, r)``, which fixes
``r``).  Base: the code's start 1 satisfies ``R(0, 1)``.  Step: from ``OK(n)`` and
``R(n, acc)``, the code's step on operand ``n`` refuses exactly when ``OK(n + 1)`` fails,
else gives an ``acc'`` with ``R(n + 1, acc')``; once refused, the code has raised (and
``OK`` never holds again).  So for every count of operands, every rank and every size,
``broadcast_shapes`` admits exactly NumPy's broadcastable shapes, with NumPy's shape.

The ops that call it (ufuncs, np.where / clip / select / choose, np.meshgrid through
np.broadcast_arrays, np.broadcast_to, out=) are traced once each with the real tracer
(contract, NumPy's shapes, and the converse), on one representative input each.
"""
from __future__ import annotations

import ast
import inspect
import types
from contextlib import contextmanager
from typing import Dict, Tuple

import numpy as np
import z3

from symshape.capture.ops import elementwise as EW
from symshape.errors import UserError

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .code import prove_code
from .op_rules import A, _case
from .op_shape_rules import _check, _shape
from .pyint import Py, ProofFailure, require
from .reads import header, source_tree
from .sized import combine, run_paths, sizes

#: every statement of ``broadcast_shapes`` that mentions each name (its text; a loop's or
#: an ``if``'s header only): the shapes read whole for the rank and once per axis in the
#: fold, each operand only through its length and its aligned size, the accumulator reset
#: per axis and appended once
SHAPES_READS: Dict[str, Tuple[str, ...]] = {
    "shapes": ("nd = max((len(s) for s in shapes), default=0)", "for s in shapes"),
    "s": ("nd = max((len(s) for s in shapes), default=0)", "for s in shapes", "if len(s) >= -i", "got = broadcast_pair(size, s[i])"),
    "i": ("for i in range(-nd, 0)", "if len(s) >= -i", "got = broadcast_pair(size, s[i])"),
    "nd": ("nd = max((len(s) for s in shapes), default=0)", "for i in range(-nd, 0)"),
    "size": ("size = 1", "got = broadcast_pair(size, s[i])", "size = got",
             "out.append(size)"),
    "got": ("got = broadcast_pair(size, s[i])", "if got is None", "size = got"),
    "out": ("out: List[Any] = []", "out.append(size)", "return tuple(out)"),
}

#: the function's statements and its axis loop's, in order (headers only)
BODY = ("nd = max((len(s) for s in shapes), default=0)", "out: List[Any] = []",
        "for i in range(-nd, 0)", "return tuple(out)")
AXIS = ("size = 1", "for s in shapes", "out.append(size)")


def _structure() -> ast.For:
    """The function is ``BODY``, its axis loop ``AXIS`` (each axis alone, from 1); the
    operand loop (returned) has no ``else``."""
    tree = source_tree(EW.broadcast_shapes)
    body = [b for b in tree.body if not (isinstance(b, ast.Expr) and
                                         isinstance(b.value, ast.Constant))]
    require(tuple(header(b) for b in body) == BODY, "broadcast_shapes is no longer %s: %s",
            BODY, [header(b) for b in body])
    axis = body[2]
    require(tuple(header(b) for b in axis.body) == AXIS and not axis.orelse,
            "broadcast_shapes' axis loop is no longer %s", AXIS)
    inner = axis.body[1]
    require(not inner.orelse, "broadcast_shapes' operand loop has an else")
    return inner


def _step_from(loop: ast.For) -> types.FunctionType:
    """The operand loop's body as a function of (size, s, i) returning the new size, in
    ``broadcast_shapes``' own module (its ``broadcast_pair``, ``UserError``...); ``shapes``
    and ``what`` are read by the error message only."""
    fn = ast.FunctionDef(
        name="step", args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=a) for a in ("size", "s", "i", "shapes", "what")],
            kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=list(loop.body) + [ast.Return(value=ast.Name(id="size", ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    mod = ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[]))
    code = compile(mod, inspect.getsourcefile(EW.broadcast_shapes), "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(fcode, vars(EW))


@contextmanager
def _messages_unread():
    """A refusal's message built from nothing (the step has no shapes to print)."""
    saved = EW.shape_repr
    EW.shape_repr = lambda shape: "<shape>"
    try:
        yield
    finally:
        EW.shape_repr = saved


def _run_step(step, present: bool):
    """(explorer, paths) of the step on an arbitrary accumulator and size >= 0, the
    operand holding the axis (``(x,)`` at ``i = -1``) or not (``()``)."""
    acc, x = sizes("acc x")

    def run():
        try:
            return step(acc, (x,) if present else (), -1, (), "operands")
        except UserError:
            return None
    with _messages_unread():
        ex, paths = run_paths(run, [acc.v >= 0, x.v >= 0], [EW])
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("broadcast_shapes' step raises %r on %s" % (got, z3.And(*pc)))
    return acc, x, ex, paths


# ---------------------------------------------------------------------------- NumPy's rule
F = z3.Function("f", z3.IntSort(), z3.IntSort())     # operand k's size at the axis


def _within(k, m):
    return z3.And(0 <= k, k < m)


def ok_upto(m):
    """NumPy accepts operands 0 .. m-1 at the axis: every two sizes other than 1 equal."""
    j, k = z3.Ints("j k")
    return z3.ForAll([j, k], z3.Implies(z3.And(_within(j, m), _within(k, m), F(j) != 1,
                                               F(k) != 1), F(j) == F(k)))


def result_upto(m, r):
    """``r`` is NumPy's size for operands 0 .. m-1: each size is 1 or r, and r is 1 or one
    of the sizes."""
    k = z3.Int("k")
    return z3.And(z3.ForAll([k], z3.Implies(_within(k, m), z3.Or(F(k) == 1, F(k) == r))),
                  z3.Or(r == 1, z3.Exists([k], z3.And(_within(k, m), F(k) == r))))


def induction(step) -> None:
    """Base, step (the code's, present and absent operand), and NumPy's rule's own
    facts: the result is unique, and a refusal stays one."""
    P = Py()
    n, m, r, r2 = z3.Ints("n m r r2")
    k = z3.Int("k")
    sized = z3.ForAll([k], z3.Implies(_within(k, n + 1), F(k) >= 0))
    P.prove(z3.And(ok_upto(0), result_upto(0, 1)), what="the fold's start 1 is NumPy's "
            "size of no operands")
    P.prove(r == r2, n >= 0, ok_upto(n), result_upto(n, r), result_upto(n, r2),
            what="NumPy's broadcast size is unique")
    P.prove(z3.Not(ok_upto(m)), 0 <= n, n <= m, z3.Not(ok_upto(n)),
            what="a refused prefix stays refused")
    for present in (True, False):
        acc, x, ex, paths = _run_step(step, present)
        ok, out = combine(paths, lambda got: (got is not None, 0 if got is None else got))
        here = F(n) == x.v if present else F(n) == 1
        hyps = [n >= 0, sized, ok_upto(n), result_upto(n, acc.v), here]
        prove_code(lambda o, v: z3.And(o == ok_upto(n + 1),
                                       z3.Implies(o, result_upto(n + 1, v))),
                   [ok, out], hyps, P=ex.P,
                   what="broadcast_shapes' step on operand n (%s the axis)"
                   % ("holding" if present else "without"))


# ---------------------------------------------------------------------------- the traces
def traces() -> None:
    """One representative trace per op that broadcasts: x + y*z, np.where, np.clip,
    np.broadcast_to, out=, np.select, np.choose and np.broadcast_arrays (three arrays, and
    three 1-D inputs reshaped as np.meshgrid does)."""
    r = np.ones

    def spec_n(P, ins):
        (out,), extra = N.broadcast(*ins)
        return [out], extra
    _case(lambda x, y, z: x + y * z, (r((4, 3)), r((3,)), r((2, 1, 3))),
          {"x": (A, A), "y": (A,), "z": (A, 1, A)}, spec_n, "x + y*z",
          (r((5, 7)), r((7,)), r((3, 1, 7))))
    _case(lambda c, x, y: np.where(c > 0, x, y), (r((4, 1)), r((4, 5)), r((5,))),
          {"c": (A, 1), "x": (A, A), "y": (A,)}, spec_n, "np.where")
    _case(lambda x, lo, hi: np.clip(x, lo, hi), (r((3, 4)), r((4,)), r((3, 1))),
          {"x": (A, A), "lo": (A,), "hi": (A, 1)}, spec_n, "np.clip")

    def spec_to(P, ins):
        x, = ins
        (out,), extra = N.broadcast(x, (x[0] * 0 + 6,) + tuple(x))
        return [out], extra
    _case(lambda x: np.broadcast_to(x, (6,) + x.shape), (r((4, 3)),), {"x": (A, A)}, spec_to,
          "np.broadcast_to")

    def out_kw(x, y):
        o = np.empty((y.shape[0] * 0 + x.shape[0], y.shape[0]))
        np.add(x, y, out=o)
        return o
    _case(out_kw, (r((4, 1)), r((5,))), {"x": (A, 1), "y": (A,)}, spec_n, "np.add(out=)")
    same = lambda P, ins, v: N.broadcast(*ins)     # noqa: E731
    # the conditions carry the most axes: a rule broadcasting the choices alone fails
    arrays = [((3, 4), {}), ((1, 4), {0: 1}), ((4,), {})]
    _check(lambda x, y, z: np.select([x > 0, y > 0], [y, z]), arrays, same, "np.select",
           not_one=True)
    _check(lambda x, y, z: np.choose(x.astype(np.intp), [y, z], mode="wrap"), arrays, same,
           "np.choose", not_one=True)
    # np.meshgrid is NumPy's code over np.broadcast_arrays (its inputs reshaped to one
    # axis each): the engine's part is np.broadcast_arrays, traced on three arrays

    def spec_arrays(P, ins, v):
        (out,), extra = N.broadcast(*ins)
        return [out] * len(ins), extra
    _check(lambda x, y, z: tuple(np.broadcast_arrays(x, y, z)), arrays, spec_arrays,
           "np.broadcast_arrays", not_one=True)
    def spec_grid(P, ins, v):
        return spec_arrays(P, [(ins[0][0], 1, 1), (1, ins[1][0], 1), (1, 1, ins[2][0])], v)
    _check(lambda x, y, z: tuple(np.broadcast_arrays(x.reshape(-1, 1, 1), y.reshape(1, -1, 1),
                                                     z.reshape(1, 1, -1))),
           [_shape(1)] * 3, spec_grid, "np.broadcast_arrays (np.meshgrid's, indexing='ij')",
           not_one=True)


@proves("broadcast.shapes", over=every(
    "every number of shapes of every rank, every size a Z3 integer >= 0 and a literal int "
    "or a symbolic size (the kind symbolic), both directions: broadcast_shapes read from "
    "its code (read_alike: the rank the largest, each aligned axis alone from 1, a fold "
    "of its own loop body over every operand), that body run along every path on every "
    "accumulator and size (the axis held or not), and NumPy's n-ary rule (every two "
    "sizes other than 1 equal; the size the one other than 1) proven by induction on the "
    "number of operands (a Z3 function of the sizes, n symbolic); the ops that broadcast "
    "traced once each (ufunc, np.where, np.clip, np.select, np.choose, "
    "np.broadcast_arrays as np.meshgrid calls it, np.broadcast_to, out=)"))
def broadcast_shapes_every():
    read_alike(EW.broadcast_shapes, SHAPES_READS)
    step = _step_from(_structure())
    induction(step)
    traces()
