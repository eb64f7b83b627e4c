"""The integer parts of the axis-taking op rules for every integer: ``norm_axis``, the
axis-tuple checks (NumPy's ``normalize_axis_tuple``) over a symbolic rank, and the reads
that make two symbolic axes stand for any number of them.

OPSHAPE's route (``proofs/reshape_every.py``, ``proofs/histogram_every.py`` are models):

* ``norm_axis(a, ndim)`` (``capture/ops/shape.py``) run on a symbolic ``a`` and ``ndim >= 0``
  along every path (``proofs/intpaths.py``): it returns ``a % ndim`` exactly when
  ``-ndim <= a < ndim`` (NumPy's ``normalize_axis_index``) and raises a UserError
  otherwise -- both directions.  (A raising path builds its message with ``%d`` of the
  symbolic ``a``, which a concrete int formats; such a path counts as the ``raise
  UserError`` it is when the exception comes from inside that very statement.)
* Each function that normalises an axis argument is then run on a symbolic rank and on
  symbolic axes -- one int, a tuple and a list of two -- with ``norm_axis`` replaced by
  that proven specification (``norm_spec``: both outcomes explored), and its answer
  compared with NumPy's rule stated here in Z3 (``numpy_axes``: each axis in
  ``[-ndim, ndim)``, no two equal after normalisation), both directions.
* ``read_alike`` (``proofs/alike.py``) with the proof module's own table: every statement
  of the function that mentions the axis tuple or the shape reads it whole or item by item
  alike (a comprehension over every axis, a set of all of them, ``sorted`` of all), so two
  symbolic axes stand for any number of them, and the shape is read per axis alike in one
  comprehension, so one traced rank stands for every rank.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from contextlib import contextmanager
from typing import Callable, List, Sequence

import z3

from symshape.capture.ops import shape as SH
from symshape.errors import UserError

from .intpaths import int_module, prove_int_paths
from .pyint import require
from .symcoeff import SInt, patched, sym_ints, value
from .symexec import Explorer

__all__ = ["NORM_PROOF", "SIZE_AT", "RankedInput", "axis_paths", "in_range", "none_paths",
           "norm_axis_every", "norm_spec", "numpy_axes", "prove_helper", "prove_paths",
           "raise_site", "sorted2", "symbolic_axes"]

#: what the declarations cite for ``norm_axis``
NORM_PROOF = ("norm_axis proven for every integer axis and rank (returns a % ndim iff "
              "-ndim <= a < ndim, a UserError otherwise)")


def in_range(a, nd) -> z3.BoolRef:
    """NumPy's ``normalize_axis_index`` accepts ``a`` for rank ``nd``."""
    return z3.And(-nd <= a, a < nd)


def numpy_axes(axes: Sequence, nd) -> tuple:
    """NumPy's ``normalize_axis_tuple`` over Z3 axes and rank: (accepted, the normalised
    axes in order given) -- accepted iff every axis is in range and no two normalise to the
    same axis (``ValueError: repeated axis`` / ``duplicate value in 'axis'``)."""
    norm = [z3.If(a < 0, a + nd, a) for a in axes]
    ok = [in_range(a, nd) for a in axes]
    ok += [norm[i] != norm[j] for i in range(len(norm)) for j in range(i)]
    return z3.And(*ok), norm


def raise_site(exc: BaseException, fn: Callable) -> bool:
    """Whether ``exc`` was raised by a ``raise UserError(...)`` statement of ``fn`` (a
    UserError itself, or a TypeError building its message from a symbolic int)."""
    if isinstance(exc, UserError):
        return True
    if not isinstance(exc, TypeError):
        return False
    fn = inspect.unwrap(fn)
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code is not fn.__code__:
        tb = tb.tb_next
    if tb is None or tb.tb_next is not None:     # not raised in fn's own frame
        return False
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    line = tb.tb_lineno - first + 1
    return any(isinstance(n, ast.Raise) and n.lineno <= line <= n.end_lineno
               and isinstance(n.exc, ast.Call) and isinstance(n.exc.func, ast.Name)
               and n.exc.func.id == "UserError" for n in ast.walk(tree))


def norm_axis_every() -> None:
    """``norm_axis(a, ndim)`` on a symbolic axis and rank ``ndim >= 0``, every path: it
    returns ``a % ndim`` (in ``[0, ndim)``) iff ``-ndim <= a < ndim``, and raises its
    UserError otherwise."""
    a, nd = sym_ints("axis_a ndim")
    za, zn = value(a), value(nd)
    prove_int_paths(lambda: SH.norm_axis(a, nd),
                    lambda r: z3.And(in_range(za, zn), r == z3.If(za < 0, za + zn, za),
                                     0 <= r, r < zn),
                    [zn >= 0], SH, "norm_axis(a, ndim)",
                    raises=lambda e: z3.Not(in_range(za, zn)) if raise_site(e, SH.norm_axis)
                    else z3.BoolVal(False))


def _spec(a, ndim, what: str = "axis"):
    """``norm_axis`` as its proof states it: ``a % ndim`` where ``-ndim <= a < ndim`` (a
    branch of the explorer), a UserError elsewhere."""
    if -ndim <= a and a < ndim:
        return a % ndim
    raise UserError("%s out of bounds (norm_axis's specification)" % what)


@contextmanager
def norm_spec(*modules):
    """Each of ``modules`` calls the proven specification of ``norm_axis`` in its place."""
    saved = [vars(m)["norm_axis"] for m in modules]
    for m in modules:
        m.norm_axis = _spec
    try:
        yield
    finally:
        for m, f in zip(modules, saved):
            m.norm_axis = f


def _caught(run: Callable[[], object]) -> Callable[[], object]:
    """``run`` returning the UserError it raises (the explorer catches only Python's own
    errors)."""
    def go():
        try:
            return run()
        except UserError as e:
            return e
    return go


def axis_paths(run: Callable[[], object], hyps: Sequence, module) -> tuple:
    """``run()`` on every feasible path (``module`` seeing SInts as ints, ``norm_axis``
    its specification): the explorer and (path condition, result or exception) per path."""
    ex = Explorer(hyps)
    with patched(ex, inductive=False), int_module(module), norm_spec(module):
        paths = ex.paths(_caught(run))
    return ex, paths


def none_paths(run: Callable[[], object], hyps: Sequence, module, what: str) -> None:
    """``run()`` returns None on every feasible path (``axis=None``)."""
    _, paths = axis_paths(run, hyps, module)
    for pc, got in paths:
        require(got is None, "%s: %r on the path %s, not None", what, got, pc)


def symbolic_axes(names: str) -> List[SInt]:
    """Fresh symbolic ints (axes, a rank)."""
    return sym_ints(names)




def prove_paths(paths, ok: Callable, raises: Callable, hyps: Sequence, P, what: str) -> None:
    """As ``intpaths.prove_int_paths`` on paths already run: each returning path's outputs
    satisfy ``ok``, each raising one ``raises(exc)`` (a Z3 formula: NumPy refuses)."""
    from .code import prove_code
    impl, cases = [], []
    for pc, got in paths:
        if isinstance(got, BaseException):
            cases.append((pc, None, raises(got)))
            continue
        outs = got if isinstance(got, tuple) else (got,)
        cases.append((pc, len(impl), len(outs)))
        impl += [value(o) if isinstance(o, SInt) else z3.IntVal(o) for o in outs]

    def claim(*t):
        return z3.And(*[z3.Implies(z3.And(*pc), n if k is None else ok(*t[k:k + n]))
                        for pc, k, n in cases])
    prove_code(claim, impl, list(hyps), P=P, what="%s (%d paths)" % (what, len(paths)))




#: the size of a stand-in input at a position: the shape at symbolic positions
SIZE_AT = z3.Function("size_at", z3.IntSort(), z3.IntSort())


class _Shape:
    """An input shape of symbolic rank: its size at any position ``i`` is ``SIZE_AT(i)``."""

    def __getitem__(self, i):
        return SInt(SIZE_AT(value(i) if isinstance(i, SInt) else z3.IntVal(i)))


class RankedInput:
    """A stand-in input of symbolic rank ``r`` (an SInt), as an axis helper reads it: its
    ``ndim`` and its size at a position (``SIZE_AT``); iterating over its shape fails."""

    def __init__(self, r) -> None:
        self.ndim, self.shape = r, _Shape()


def prove_helper(run: Callable[[], object], accepted, want: Sequence, fn: Callable,
                 hyps: Sequence, module, what: str) -> None:
    """``run()`` (a call of ``fn``, ``module``'s axis helper) on every path, ``norm_axis``
    its specification: it returns the list or tuple ``want`` (Z3 terms) where
    ``accepted`` holds (NumPy's rule), and raises (a ``raise UserError`` statement of
    ``fn``) only where it does not -- both directions."""
    def go():
        try:
            return tuple(run())
        except UserError as e:
            return e

    def ok(*got):
        if len(got) != len(want):
            return z3.BoolVal(False)
        return z3.And(accepted, *[g == w for g, w in zip(got, want)])

    def raises(e):
        return z3.Not(accepted) if raise_site(e, fn) else z3.BoolVal(False)
    with norm_spec(*[m for m in (module,) if "norm_axis" in vars(m)]):
        prove_int_paths(go, ok, list(hyps), module, what, raises=raises)


def sorted2(na, nb) -> tuple:
    """Two Z3 integers in increasing order."""
    return z3.If(na < nb, na, nb), z3.If(na < nb, nb, na)

