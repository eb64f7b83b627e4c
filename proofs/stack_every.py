"""Proofs of ``shape.hstack``, ``shape.vstack`` and ``shape.dstack`` for every number of
operands of every rank, and for one array's rows of every rank: the rules run on operands
of symbolic rank, their callees replaced by the rules proven for every input.

NumPy's code for each (``numpy/_core/shape_base.py``) is: make every array at least 1-D /
2-D / 3-D (``atleast_Nd``), then ``concatenate`` them along axis 0 if the first is 1-D else
1 (hstack), along 0 (vstack), along 2 (dstack); one array given is the sequence of its
rows.  The proof runs ``_hstack`` / ``_vstack`` / ``_dstack`` (``capture/ops/shape.py``) on
operands whose rank is a Z3 integer (``proofs/ranked.py``), along every path, with

* ``_atleast_1d`` / ``_atleast_2d`` / ``np.atleast_3d`` replaced by their proven answer
  (``shape.atleast_1d`` / ``shape.atleast_2d``: an array of rank ``max(n, N)``, the operand
  itself for ``n >= N``), ``_concatenate`` and ``_rows_joined`` by recorders (their result
  is ``concatenate.shape``'s, proven for every rank and axis), ``expand_dims`` /
  ``np.transpose`` / ``np.moveaxis`` / ``_fresh`` / ``_some_rows`` recorded;
* a claim per path: what the rule hands on, as a form (``_concatenate([atleast_1d(X0),
  atleast_1d(X1)], #)``) whose axis ``#`` is NumPy's for the ranks of that path, each form
  allowed only for the ranks NumPy's code gives it (the forms' rank conditions are
  disjoint, so the form is NumPy's for every rank).

Two operands stand for every number (each converted alike in one comprehension: the
reads are pinned from the code, ``read_alike``).  The rows' forms other than
``_rows_joined`` (ranks 1..3, which move or add axes instead) and the lists' forms are
traced with the real tracer, every size symbolic, both directions.
"""
from __future__ import annotations

from contextlib import ExitStack
from typing import Callable, Dict, List

import numpy as np
import z3

from symshape.capture.ops import shape as SH

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .intpaths import prove_int_paths
from .op_shape_rules import _check_many, _shape
from .pyint import ProofFailure
from .ranked import Call, Ranked, patched_name, recorders, scope_of
from .symcoeff import SInt

#: {rule function: {name: every statement mentioning it}} (read from the code)
READS = {
    "_hstack": {
        "tup": ("if type(tup) is TracedArray", "_some_rows(tup)", "if tup.ndim == 1",
                "return _fresh(t, tup, dtype)",
                "return _fresh(t, _rows_joined(t, tup, 0 if tup.ndim == 2 else 1), dtype)",
                "xs = [_atleast_1d(t, a) for a in tup]"),
        "xs": ("xs = [_atleast_1d(t, a) for a in tup]",
               "axis = 0 if xs and xs[0].ndim == 1 else 1",
               "return _concatenate(t, xs, axis=axis, dtype=dtype)"),
    },
    "_vstack": {
        "tup": ("if type(tup) is TracedArray", "_some_rows(tup)", "if tup.ndim == 1",
                "return _fresh(t, expand_dims(t, tup, 1), dtype)",
                "return _fresh(t, tup if tup.ndim == 2 else _rows_joined(t, tup, 0), dtype)",
                "xs = [_atleast_2d(t, a) for a in tup]"),
        "xs": ("xs = [_atleast_2d(t, a) for a in tup]",
               "return _concatenate(t, xs, axis=0, dtype=dtype)"),
    },
    "_dstack": {
        "tup": ("if type(tup) is TracedArray", "_some_rows(tup)", "x = tup",
                "return _concatenate(t, list(np.atleast_3d(*tup)) if len(tup) > 1 else "
                "[np.atleast_3d(*tup)], axis=2)"),
        "x": ("x = tup", "if x.ndim == 1", "return _fresh(t, expand_dims(t, x, (0, 1)))",
              "if x.ndim == 2", "return _fresh(t, expand_dims(t, np.transpose(x), 0))",
              "if x.ndim == 3", "return _fresh(t, np.moveaxis(x, 0, 2))",
              "return _fresh(t, _rows_joined(t, x, 2))"),
    },
    # the rows' guard: no 0-d array, at least one row (its only reads of the array)
    "_some_rows": {"x": ("if x.ndim == 0 or not x.shape[0] >= 1",)},
}


def _atleast(nd: int) -> Callable:
    """``shape.atleast_Nd``'s proven answer for one operand: an array of rank
    ``max(n, nd)`` (the operand itself for ``n >= nd``)."""
    def answer(a):
        if not isinstance(a, Ranked):
            raise ProofFailure("atleast_%dd of %r" % (nd, a))
        n = a.ndim.v
        return Ranked("atleast_%dd(%s)" % (nd, a), SInt(z3.If(n >= nd, n, nd)))
    return answer


def _np_atleast_3d(*arys):
    got = [_atleast(3)(a) for a in arys]
    return got[0] if len(got) == 1 else tuple(got)


def _form(v, holes: List) -> str:
    """``v`` (what the rule returned) as a text, each int in it a hole ``#`` whose value is
    appended to ``holes``."""
    if isinstance(v, Ranked):
        return repr(v)
    if isinstance(v, Call):
        return "%s(%s)" % (v.fn, ", ".join(_form(a, holes) for a in v.args))
    if isinstance(v, (list, tuple)):
        return "[%s]" % ", ".join(_form(a, holes) for a in v)
    if v is None:
        return "None"
    if isinstance(v, (int, SInt)):
        holes.append(v)
        return "#"
    raise ProofFailure("the rule hands on %r" % (v,))


def prove_forms(rule: Callable, arg, ops: List[Ranked], forms: Dict[str, Callable], scope,
                what: str) -> None:
    """``rule(tracer, arg)`` on every path (every operand's rank ``>= 0``; for one array's
    rows, ``>= 1``): its result's form is one of ``forms`` (text -> function of the form's
    holes giving the Z3 condition under which NumPy's code gives that form)."""
    names = sorted(forms)

    def run():
        holes: List = []
        text = _form(rule(None, arg), holes)
        if text not in forms:
            raise ProofFailure("%s: the rule gives %s" % (what, text))
        return (names.index(text),) + tuple(holes) + (0,) * (2 - len(holes))

    def ok(kind, *holes):
        return z3.And(*[z3.Implies(kind == k, forms[f](*holes)) for k, f in enumerate(names)])
    lo = 1 if isinstance(arg, Ranked) else 0
    prove_int_paths(run, ok, [o.ndim.v >= lo for o in ops], scope, what)


def _patches(fn: Callable, stack: ExitStack):
    """``fn``'s callees recorded or replaced by their proven answers while ``stack``: its
    global scope."""
    scope = scope_of(fn)
    stack.enter_context(recorders(scope, ("_concatenate", "_rows_joined", "_fresh",
                                          "expand_dims")))
    stack.enter_context(patched_name(scope, "_some_rows", lambda x: None))
    stack.enter_context(patched_name(scope, "TracedArray", Ranked))
    stack.enter_context(patched_name(scope, "_atleast_1d", lambda t, a: _atleast(1)(a)))
    stack.enter_context(patched_name(scope, "_atleast_2d", lambda t, a: _atleast(2)(a)))
    stack.enter_context(patched_name(np, "atleast_3d", _np_atleast_3d))
    stack.enter_context(patched_name(np, "transpose", lambda x: Call("transpose", (x,))))
    stack.enter_context(patched_name(np, "moveaxis", lambda x, s, d: Call("moveaxis",
                                                                        (x, s, d))))
    return scope


def ranked_rule(fn: Callable, lists: Callable, rows: Dict[str, Callable]) -> None:
    """(Run after the traces: an over-restrictive guard fails the converse first.)  ``fn`` on one and on two operands of symbolic rank (``lists(ops)``: their forms)
    and on one array of symbolic rank >= 1, its rows (``rows``: their forms), every path;
    ``R`` the array, its rank ``R.ndim``."""
    read_alike(fn, READS[fn.__name__])
    read_alike(SH._some_rows, READS["_some_rows"])
    x, y = Ranked("X0"), Ranked("X1")
    with ExitStack() as stack:
        scope = _patches(fn, stack)
        prove_forms(fn, [x], [x], lists([x]), scope, "%s of one operand of every rank"
                    % fn.__name__)
        prove_forms(fn, [x, y], [x, y], lists([x, y]), scope,
                    "%s of two operands of every rank" % fn.__name__)
        prove_forms(fn, ROWS, [ROWS], rows, scope, "%s of the rows of an array of every "
                    "rank" % fn.__name__)


#: the one array whose rows a rule joins
ROWS = Ranked("R")
_N = ROWS.ndim.v


def _rank(a: Ranked, nd: int):
    n = a.ndim.v
    return z3.If(n >= nd, n, nd)


def _joined(nd: int, ops, dtype: bool = True) -> str:
    return "_concatenate([%s], #%s)" % (", ".join("atleast_%dd(%s)" % (nd, o) for o in ops),
                                        ", None" if dtype else "")


def _lists_h(ops):
    return {_joined(1, ops): lambda ax, *_: ax == z3.If(_rank(ops[0], 1) == 1, 0, 1)}


def _lists_v(ops):
    return {_joined(2, ops): lambda ax, *_: ax == 0}


def _lists_d(ops):
    return {_joined(3, ops, dtype=False): lambda ax, *_: ax == 2}


ROWS_H = {"_fresh(R, None)": lambda *_: _N == 1,
          "_fresh(_rows_joined(R, #), None)": lambda ax, *_: z3.And(
              _N >= 2, ax == z3.If(_N - 1 == 1, 0, 1))}
ROWS_V = {"_fresh(expand_dims(R, #), None)": lambda ax, *_: z3.And(_N == 1, ax == 1),
          "_fresh(R, None)": lambda *_: _N == 2,
          "_fresh(_rows_joined(R, #), None)": lambda ax, *_: z3.And(_N >= 3, ax == 0)}
ROWS_D = {"_fresh(expand_dims(R, [#, #]))": lambda a, b: z3.And(_N == 1, a == 0, b == 1),
          "_fresh(expand_dims(transpose(R), #))": lambda a, *_: z3.And(_N == 2, a == 0),
          "_fresh(moveaxis(R, #, #))": lambda a, b: z3.And(_N == 3, a == 0, b == 2),
          "_fresh(_rows_joined(R, #))": lambda a, *_: z3.And(_N >= 4, a == 2)}


def _two(fn, spec):
    return (lambda x, y: fn([x, y]), spec)


_DECLARED = (
    "every number of operands of every rank, and one array's rows for every rank, every "
    "size symbolic: %s read from its code (each operand converted alike, the list handed "
    "whole); run on one and two operands and on one array of symbolic rank along every "
    "path, %s and concatenate / _rows_joined replaced by their proven answers "
    "(shape.atleast_*, concatenate.shape, every input), each form handed on NumPy's for "
    "the ranks of its path; traced %s, both directions")


@proves("shape.hstack", over=every(_DECLARED % (
    "_hstack", "_atleast_1d", "on operands of ranks 0 and 1, 1 and 1, 3 and 3 and on the "
    "rows of ranks 1, 2 and 3")))
def shape_hstack():
    spec = lambda P, ins, v: N.hstack(list(ins))        # noqa: E731
    rows = lambda P, ins, v: N.hstack(ins[0])           # noqa: E731
    _check_many([(lambda x, y: np.hstack([x, y]), [_shape(0), _shape(1)], spec, ()),
                 (lambda x, y: np.hstack([x, y]), [_shape(1), _shape(1)], spec, ()),
                 (lambda x, y: np.hstack([x, y]), [_shape(3), _shape(3)], spec, ()),
                 (lambda x: np.hstack(x), [_shape(1)], rows, ()),
                 (lambda x: np.hstack(x), [_shape(2)], rows, ()),
                 (lambda x: np.hstack(x), [_shape(3)], rows, ())], "np.hstack(every form)")
    ranked_rule(SH._hstack, _lists_h, ROWS_H)


@proves("shape.vstack", over=every(_DECLARED % (
    "_vstack", "_atleast_2d", "on operands of ranks 0 and 2, 1 and 1, 3 and 3 and on the "
    "rows of ranks 1, 2 and 3")))
def shape_vstack():
    spec = lambda P, ins, v: N.vstack(list(ins))        # noqa: E731
    rows = lambda P, ins, v: N.vstack(ins[0])           # noqa: E731
    _check_many([(lambda x, y: np.vstack([x, y]), [((1, 1), {0: 1, 1: 1}), _shape(0)], spec,
                  ()),
                 (lambda x, y: np.vstack([x, y]), [_shape(1), _shape(1)], spec, ()),
                 (lambda x, y: np.vstack([x, y]), [_shape(3), _shape(3)], spec, ()),
                 (lambda x: np.vstack(x), [_shape(1)], rows, ()),
                 (lambda x: np.vstack(x), [_shape(2)], rows, ()),
                 (lambda x: np.vstack(x), [_shape(3)], rows, ())], "np.vstack(every form)")
    ranked_rule(SH._vstack, _lists_v, ROWS_V)


@proves("shape.dstack", over=every(_DECLARED % (
    "_dstack", "np.atleast_3d", "on one operand of rank 0, operands of ranks 1 and 2, 3 "
    "and 3 and on the rows of ranks 1, 2, 3 and 4")))
def shape_dstack():
    spec = lambda P, ins, v: N.dstack(list(ins))        # noqa: E731
    rows = lambda P, ins, v: N.dstack(ins[0])           # noqa: E731
    _check_many([(lambda x: np.dstack([x]), [_shape(0)], spec, ()),
                 (lambda x, y: np.dstack([x, y]), [_shape(1), ((1, 3), {0: 1})], spec, ()),
                 (lambda x, y: np.dstack([x, y]), [_shape(3), _shape(3)], spec, ()),
                 (lambda x: np.dstack(x), [_shape(1)], rows, ()),
                 (lambda x: np.dstack(x), [_shape(2)], rows, ()),
                 (lambda x: np.dstack(x), [_shape(3)], rows, ()),
                 (lambda x: np.dstack(x), [_shape(4)], rows, ())], "np.dstack(every form)")
    ranked_rule(SH._dstack, _lists_d, ROWS_D)
