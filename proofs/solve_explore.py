"""The machinery of ``proofs/solve_every.py``: a solver step run on symbolic values along
every feasible path (``symexec.Explorer``), with its callees captured.

``solver_paths`` runs a step whose coefficients, constants and range ends are ``Ext``
values (finite or infinite: ``Ext`` passes for an int in ``expr.py``, ``relations.py`` and
``solver.py`` meanwhile, ``ext_ints``); ``sint_paths`` one that reads no range, on
``symcoeff.SInt`` values (plain Z3 terms); ``both_paths`` one that reads both.  The
solver's callees named in ``stubs`` are replaced while it runs (``stubbed``): what a step
hands them is its output.  ``Explorer2`` asks Z3 less and answers more: see its docstring.
``Enc`` / ``enc_cond`` translate what a step built into Z3.
"""
from __future__ import annotations

import builtins
from contextlib import ExitStack, contextmanager
from types import SimpleNamespace
from typing import Callable, List

import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG
from symshape.algebra import relations as R
from symshape.algebra.ranges import ValueRange
from symshape.reasoning import solver

from .pyint import RLIMIT, Py, zmax, zmin
from .symexec import Ext, Explorer, inside, patched, raise_on_paths, to_pair

_ABSENT = object()


@contextmanager
def stubbed(**names):
    """``solver.<name>`` replaced by the given stand-ins while the block runs (a name the
    module does not define, like ``type``, shadows the builtin meanwhile)."""
    saved = {n: vars(solver).get(n, _ABSENT) for n in names}
    for n, f in names.items():
        setattr(solver, n, f)
    try:
        yield
    finally:
        for n, f in saved.items():
            if f is _ABSENT:
                delattr(solver, n)
            else:
                setattr(solver, n, f)


def _type(x):
    """``type`` as the solver and the expression layer see it: an ``Ext`` is an int."""
    return int if isinstance(x, Ext) else builtins.type(x)


def _no_digits(self) -> int:
    """An ``Ext`` printed with ``%d`` in a symbol's name (display only) prints 0."""
    return 0


@contextmanager
def ext_ints():
    """``Ext`` values pass for Python ints in ``expr.py``, ``relations.py`` and
    ``solver.py`` (coefficients, constants and divisors symbolic) while the block runs;
    ``%d`` prints one as 0 (only the names of new symbols use it; ``range`` and indexing
    still refuse an ``Ext``)."""
    E.type = R.type = _type
    Ext.__int__ = _no_digits
    try:
        yield
    finally:
        del E.type, R.type, Ext.__int__


def quotient_bounds(P, witnesses) -> list:
    """For each quotient ``q = n // d`` that ``P`` (a ``TrackedPy``) made and each term
    ``z`` of ``witnesses``: ``d > 0 => (q >= z) == (n >= d*z)`` (floor division, proven by
    ``prove_quotient_bounds``): instances Z3 does not find by itself, which relate a
    quotient to a product the hypotheses already hold (linearly)."""
    return [z3.Implies(d > 0, (q >= z) == (n >= d * z))
            for n, d, q in P.quotients for z in witnesses]


def prove_quotient_bounds() -> None:
    """The lemma ``quotient_bounds`` instantiates, for all integers."""
    P = Py()
    n, d, z = z3.Ints("n d z")
    P.prove((P.floordiv(n, d) >= z) == (n >= d * z), d > 0)


#: the resource limit of a feasibility check in the incremental solver (a check it cannot
#: answer within it goes to a fresh solver with the full limit)
QUICK_RLIMIT = 1_000_000


class Explorer2(Explorer):
    """``Explorer`` whose feasibility check, where the incremental solver answers
    unknown, asks a fresh solver (one-shot, so Z3 picks its nonlinear-integer tactic):
    fewer infeasible paths explored for want of an answer; and a condition already
    decided on the path is answered as before without asking Z3 again (the code asks
    ``c == 1`` once per input it is given).  ``witnesses``: the checks know the
    ``quotient_bounds`` of these terms."""

    def __init__(self, hyps=(), witnesses=()) -> None:
        super().__init__(hyps)
        self.witnesses = list(witnesses)

    def branch(self, cond) -> bool:
        if self._pos == 0 and not self.pc:          # a new path (or its replay) starts
            self._known = {}
        key = z3.simplify(cond).sexpr()
        if key not in self._known:
            self._known[key] = super().branch(cond)
        return self._known[key]

    def _feasible(self, cond) -> bool:
        s = self._solver
        s.push()
        s.add(*self.P.side)
        s.add(*quotient_bounds(self.P, self.witnesses))
        s.add(cond)
        self.checks += 1
        s.set("rlimit", QUICK_RLIMIT)   # the incremental solver gives up early ...
        r = s.check()
        s.pop()
        if r == z3.unknown:             # ... for a one-shot solver and its nonlinear tactic
            one = z3.Solver()
            one.set("rlimit", RLIMIT)
            one.add(*s.assertions())
            one.add(*self.P.side)
            one.add(*quotient_bounds(self.P, self.witnesses))
            one.add(cond)
            r = one.check()
        return r != z3.unsat           # still unknown: explored as feasible


#: the explorer of the exploration under way (a stub's answer branches through it)
_EXPLORING: List[Explorer] = []


def solver_paths(hyps: List, fn: Callable[[], object], what: str, witnesses=(), **stubs):
    """``fn()`` (a solver step on ``Ext`` values) along every feasible path under ``hyps``,
    the solver module seeing the symbolic infinities (its ``INT_OO``, ``NEG_INT_OO`` and
    ``is_inf``) and ``stubs`` in place of its callees; a path that raises fails."""
    ex = Explorer2(hyps, witnesses)
    # the stub's values are read once the patch is in: the symbolic infinities
    return _explore(ex, fn, what, lambda: patched(ex), ext_ints,
                    lambda: stubbed(INT_OO=RG.INT_OO, NEG_INT_OO=RG.NEG_INT_OO,
                                    is_inf=RG.is_inf, type=_type, **stubs))


def _explore(ex: "Explorer2", fn: Callable[[], object], what: str, *contexts):
    """``ex``'s paths of ``fn()`` inside the context each of ``contexts`` (functions of no
    argument) makes, made and entered in order (a later one may read what an earlier one
    patched), ``ex`` the exploration under way meanwhile (``now_branch``); a path that
    raised fails."""
    _EXPLORING.append(ex)
    try:
        with ExitStack() as stack:
            for make in contexts:
                stack.enter_context(make())
            paths = ex.paths(fn)
    finally:
        _EXPLORING.pop()
    raise_on_paths(paths, what)
    return ex, paths


def _sint_type(x):
    """``type`` as the solver sees it while ``sint_paths`` runs: an ``SInt`` is an int."""
    from .symcoeff import SInt
    return int if isinstance(x, SInt) else builtins.type(x)


def sint_paths(hyps: List, fn: Callable[[], object], what: str, **stubs):
    """``solver_paths`` for a step that reads no range: its coefficients and constants
    ``symcoeff.SInt`` values (finite integers, plain Z3 terms; cheaper than ``Ext``)."""
    from . import symcoeff
    ex = Explorer2(hyps)
    return _explore(ex, fn, what, lambda: symcoeff.patched(ex, inductive=False),
                    lambda: stubbed(type=_sint_type, **stubs))


def ends(r: ValueRange) -> list:
    """A range the code built, as four Z3 terms (lower s, v, upper s, v)."""
    return [*to_pair(r.lower), *to_pair(r.upper)]


def within(t, i: int, x):
    """``x`` inside the range whose ends are ``t[i:i + 4]``."""
    return inside(t[i], t[i + 1], t[i + 2], t[i + 3], x)


def iv_inside(lo: Ext, hi: Ext, x):
    """``x`` inside the symbolic interval ``[lo, hi]``."""
    return inside(lo.s, lo.v, hi.s, hi.v, x)


class Enc:
    """Z3 terms of what a step built: expressions whose coefficients, constants and
    divisors are ``Ext`` values (or ints) over symbols mapped by ``zs``; ``finite`` collects
    the claims that every such ``Ext`` is finite (a coefficient is never an infinity)."""

    def __init__(self, P: Py, zs) -> None:
        self.P, self.zs, self.finite = P, zs, []

    def num(self, x):
        from .symcoeff import SInt
        if isinstance(x, Ext):
            self.finite.append(x.s == 0)
            return x.v
        if isinstance(x, SInt):
            return x.v
        return z3.IntVal(x)

    def __call__(self, x):
        if not isinstance(x, E.Expr):
            return self.num(x)
        total = self.num(x.const)
        for term, c in x.terms:
            prod = self.num(c)
            for a in term:
                prod = prod * (self.zs[a] if builtins.type(a) is E.Sym else self.atom(a))
            total = total + prod
        return total

    def atom(self, a):
        args = [self(y) for y in a.args]
        if a.kind == "FloorDiv":
            return self.P.floordiv(*args)
        if a.kind == "Mod":
            return self.P.mod(*args)
        return (zmin if a.kind == "Min" else zmax)(*args)


class StepEnv:
    """The environment a solver step reads and calls: its ranges, the infos of its
    symbols, and ``create_symbol`` / ``set_parent`` recording what the step creates."""

    def __init__(self, ranges, infos=None) -> None:
        self.ranges = ranges
        self.infos = infos or {}
        self.created: list = []

    def create_symbol(self, hint, source, vr, kind="auto", dim=None, frame=None):
        sym = E.Sym(990 + len(self.created), hint is None)
        self.created.append((sym, hint, vr))
        self.ranges[sym] = vr
        return sym

    def set_parent(self, child, parent) -> None:
        pass


def info(hint, kind: str = "auto") -> SimpleNamespace:
    """What ``env.infos[s]`` tells a step about ``s``."""
    return SimpleNamespace(hint=hint, source="s", kind=kind, frame=None)


def enc_cond(enc: Enc, c):
    """A relation the code handled (``Rel`` / ``BoolOp`` / bool, ``Ext`` coefficients
    allowed) as a Z3 formula."""
    if isinstance(c, bool):
        return z3.BoolVal(c)
    if isinstance(c, R.BoolOp):
        args = [enc_cond(enc, a) for a in c.args]
        return z3.And(*args) if c.op == "and" else z3.Or(*args)
    e = enc(c.expr)
    return e == 0 if c.op == R.EQ else (e != 0 if c.op == R.NE else e <= 0)


def now_branch(cond) -> bool:
    """The current exploration's outcome of ``cond`` (a step's answer, both explored)."""
    return _EXPLORING[-1].branch(cond)


def opaque_mod(a, b):
    """``mod`` as its own atom: Python's ``a % b`` (its rewrites are the mod.* rules)."""
    return E.atom_expr(E.OpAtom("Mod", (a, b)))


def both_paths(hyps: List, fn: Callable[[], object], what: str, **stubs):
    """``solver_paths`` for a step reading ranges (``Ext`` ends) and finite coefficients and
    divisors (``symcoeff.SInt``) at once."""
    from . import symcoeff
    ex = Explorer2(hyps)
    return _explore(ex, fn, what, lambda: patched(ex),
                    lambda: symcoeff.patched(ex, inductive=False),
                    lambda: stubbed(type=_sint_type, **stubs))
