"""Op shape code run on sizes whose *values and kinds* are symbolic: proofs for every size,
literal or symbolic, not for a grid of them.

An op rule sees a size as a Python ``int`` (a literal of the program, ``type(s) is int``)
or a ``SymInt`` (a size of the input, or an expression of such sizes).  ``Size`` is a
``symcoeff.SInt`` (its value a Z3 integer; comparisons branch through ``symexec.Explorer``)
that also carries its *kind* as a Z3 Boolean: ``type(size)`` answers ``int`` or ``SymInt``
as the path decides, so both kinds are explored along every path.  A ``SymInt``'s
comparison answers as its value does (the example's answer, kept as a guard of the
contract: every admitted input takes the same path), which is exactly what a branching
comparison models.  ``patched(explorer, module)`` makes the op module's ``type`` and
``isinstance`` see ``Size`` this way while the proof runs.

``combine(paths, ...)`` folds the paths' results into one Z3 term per output (an ``If`` on
each path condition; the feasible paths partition the inputs), so a proof states its claim
once, over every path at once.
"""
from __future__ import annotations

import builtins
from contextlib import contextmanager
from typing import Callable, List, Sequence

import z3

from symshape.sizes.symint import SymInt

from . import symcoeff
from .symcoeff import SInt, value
from .symexec import Explorer

__all__ = ["Size", "sizes", "patched", "combine", "run_paths", "term"]


class Size(SInt):
    """A symbolic size: value ``v`` (Z3 integer) and kind ``lit`` (Z3 Boolean, True for
    a literal ``int``)."""

    __slots__ = ("lit",)

    def __init__(self, v, lit) -> None:
        super().__init__(v)
        self.lit = lit

    def __int__(self) -> int:
        """For ``%d`` in an error message only (``int(size)`` is a text here, never part
        of a claim: a rule that computes with ``int(s)`` must not be proven with Size)."""
        return 0

    def __repr__(self) -> str:
        return "Size(%s, literal=%s)" % (self.v, self.lit)


def sizes(names: str) -> List[Size]:
    """Fresh sizes, one per name: value ``name``, kind ``name.lit``."""
    return [Size(z3.Int(n), z3.Bool(n + ".lit")) for n in names.split()]


def _kind(x, ex: Explorer):
    if isinstance(x, Size):
        return int if ex.branch(x.lit) else SymInt
    if isinstance(x, SInt):
        return int                    # arithmetic on sizes: an int (a count, a product)
    return None


@contextmanager
def patched(explorer: Explorer, *modules):
    """``modules`` (op modules) see ``Size`` as an int or a SymInt, as each path decides,
    while ``explorer`` runs them (``symcoeff.patched`` makes SInt arithmetic branch)."""
    def typ(x):
        k = _kind(x, explorer)
        return builtins.type(x) if k is None else k

    def inst(x, classes):
        k = _kind(x, explorer)
        if k is None:
            return builtins.isinstance(x, classes)
        classes = classes if builtins.isinstance(classes, tuple) else (classes,)
        return any(builtins.issubclass(k, c) for c in classes)
    with symcoeff.patched(explorer, inductive=False):
        for m in modules:
            m.type, m.isinstance = typ, inst
        try:
            yield explorer
        finally:
            for m in modules:
                del m.type, m.isinstance


def run_paths(fn: Callable[[], object], hyps: Sequence, modules: Sequence) -> tuple:
    """``fn()`` along every feasible path under ``hyps`` with ``modules`` patched: the
    explorer (its ``P`` holds the quotients' definitions) and the (path condition,
    result) pairs."""
    ex = Explorer(hyps)
    with patched(ex, *modules):
        paths = ex.paths(fn)
    return ex, paths


def combine(paths, outputs: Callable[[object], Sequence]) -> List:
    """One Z3 term per output over all paths: ``outputs(result)`` gives each path's
    outputs (Z3 terms, SInts or ints); the last path's are the default (the paths cover
    every input the hypotheses admit)."""
    terms = None
    for pc, got in reversed(paths):
        outs = [term(o) for o in outputs(got)]
        terms = outs if terms is None else [z3.If(z3.And(*pc), o, t)
                                            for o, t in zip(outs, terms)]
    return terms


def term(x):
    """A path's output as a Z3 term: a bool, an int, an SInt or a Z3 term."""
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, z3.ExprRef):
        return x
    return value(x)
