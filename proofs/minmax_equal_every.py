"""``solve.minmax_equal`` for every Min / Max arity and every term: an induction on the
lists the code walks, each step the code's own.

``minmax_equal(e)`` reads, read from the code (``proofs/filters.py``), a Min / Max atom's
arguments only through ``y in args`` and ``bounds_against(y, args, rel)``, the other term
only through ``term_value``, and answers ``all_of`` of the bounds.  Each of these is a form
over a list, one item at a time:

* ``term_value(t)`` is ``reduce(term_step, [atom_expr(a) for a in t])``: the product of the
  term's atoms, ``term_step`` (``mul``) run on symbols standing for any expressions;
* ``bounds_against(y, args, rel)`` is ``[rel(y, a) for a in args if a != y]``: ``rel`` (``R.le``
  / ``R.ge``) run on symbols; an argument dropped is ``y`` itself, whose bound holds;
* ``all_of(conds)`` folds ``and_step`` over the conditions from ``[]`` and converts the list:
  ``and_step`` is run on any list (opaque: its meaning a Z3 Bool, ``c in out`` either
  answer, a yes meaning the list implies ``c``) and every kind of condition, the
  conversion on the fold's result as the step makes it: the conjunction, every length.

So ``all_of(bounds_against(y, args, rel))`` means ``y <= a`` (Max: ``>=``) for every
argument, which is ``y <= Min(args)`` for every arity (the min fold's step lemma, for all
integers).  ``minmax_equal`` itself is run with that in place of those two calls (a
relation ``y <= W``, ``W`` the Min / Max) on symbolic coefficients along every path.
"""
from __future__ import annotations

import inspect
from functools import reduce

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning import solver

from . import every, proves
from .choices import Choices
from .code import Symbols, encode, encode_cond, prove_code
from .filters import read_form
from .pyint import Py, prove, require, zmax, zmin
from .solve_explore import sint_paths

_MINMAX_EQUAL = '''
def minmax_equal(e: Expr):
    if e.const or len(e.terms) != 2:
        return None
    for (t1, c1), (t2, c2) in ((e.terms[0], e.terms[1]), (e.terms[1], e.terms[0])):
        if len(t1) != 1 or type(t1[0]) is not OpAtom or t1[0].kind not in ("Min", "Max") \\
                or c1 not in (1, -1) or c2 != -c1:
            continue
        y = TERM_VALUE(t2)
        args = t1[0].args
        if y not in args:
            continue
        rel = R.le if t1[0].kind == "Min" else R.ge
        return ALL_OF(BOUNDS(y, args, rel))
    return None
'''

_TERM_VALUE = '''
def term_value(term: tuple) -> IntLike:
    return REDUCE(STEP, [atom_expr(a) for a in term])
'''

_BOUNDS = '''
def bounds_against(y: Expr, args: tuple, rel) -> list:
    return [rel(y, a) for a in args if a != y]
'''

_ALL_OF = '''
def all_of(conds: list):
    out = REDUCE(STEP, conds, [])
    if out is False:
        return False
    if not out:
        return True
    return out[0] if len(out) == 1 else R.BoolOp("and", tuple(out))
'''

#: the symbols: y, the other arguments, the Min / Max's value W, two conditions' symbols
Y, A, B, W, G, Z = (E.Sym(983 + i) for i in range(6))


def _same(got, want) -> bool:
    """``got`` is ``want`` (a rule function may be wrapped while coverage is traced)."""
    return inspect.unwrap(got) is inspect.unwrap(want)


def _atoms(kind: str) -> list:
    """A Min / Max with ``y`` first, with ``y`` second, without ``y``: what the code reads of
    the arguments is whether ``y`` is among them (read above)."""
    y, a, b = Y.expr, A.expr, B.expr
    return [E.OpAtom(kind, (y, a)), E.OpAtom(kind, (a, y)), E.OpAtom(kind, (a, b))]


def _equations() -> None:
    """``minmax_equal`` on ``c1*Min(..) + c2*y + k`` with symbolic ``c1``, ``c2``, ``k``, the
    bounds' conjunction by its proven meaning (``rel(y, W)``, ``W`` the Min / Max): on every
    path where it rewrites, the relation holds exactly where the equation does."""
    from .symcoeff import SInt
    c1, c2, k = z3.Ints("c1 c2 k")
    cases = [(atom, kind) for kind in ("Min", "Max") for atom in _atoms(kind)]
    saved = solver.bounds_against, solver.all_of

    def run():
        solver.bounds_against = lambda y, args, rel: (y, rel)
        solver.all_of = lambda got: got[1](got[0], W.expr)
        try:
            return [solver.minmax_equal(E.Expr({(atom,): SInt(c1), (Y,): SInt(c2)}, SInt(k)))
                    for atom, _ in cases]
        finally:
            solver.bounds_against, solver.all_of = saved
    ex, paths = sint_paths([], run, "minmax_equal")
    P_ = ex.P
    zs = Symbols()
    impl, claims = [], []
    for pc, got in paths:
        for (atom, kind), out in zip(cases, got):
            if out is not None:
                value = (zmin if kind == "Min" else zmax)(*[encode(P_, a, zs)
                                                            for a in atom.args])
                want = c1 * value + c2 * encode(P_, Y.expr, zs) + k == 0
                claims.append((pc, want, encode(P_, W.expr, zs) == value, len(impl)))
                impl.append(encode_cond(P_, out, zs))
    require(claims, "minmax_equal rewrote nothing")
    prove_code(lambda *v: z3.And(*[z3.Implies(z3.And(*pc, is_w), v[i] == want)
                                   for pc, want, is_w, i in claims]),
               impl, P=P_, what="minmax_equal on c1*Min(..) + c2*y + k (%d paths, %d "
               "rewrites)" % (len(paths), len(claims)))


def _lemmas() -> None:
    """The min / max fold's step, for all integers: ``y`` is below the fold exactly when it
    is below the fold so far and the new argument; the fold is at most each of them."""
    y, m, a = z3.Ints("y m a")
    lo, hi = zmin(m, a), zmax(m, a)
    prove(z3.And((y <= lo) == z3.And(y <= m, y <= a), lo <= m, lo <= a,
                 (y >= hi) == z3.And(y >= m, y >= a), hi >= m, hi >= a))


def _forms(P_: Py, zs: Symbols) -> None:
    """The three list forms, read; their steps run: ``term_step`` and ``rel`` on symbols."""
    got = read_form(solver.minmax_equal, _MINMAX_EQUAL)
    require(_same(got["TERM_VALUE"], solver.term_value) and
            _same(got["ALL_OF"], solver.all_of) and
            _same(got["BOUNDS"], solver.bounds_against), "minmax_equal calls %s", got)
    tv = read_form(solver.term_value, _TERM_VALUE)
    require(tv["REDUCE"] is reduce and _same(tv["STEP"], solver.term_step),
            "term_value folds %s with %s", tv["STEP"], tv["REDUCE"])
    read_form(solver.bounds_against, _BOUNDS)
    y, a = encode(P_, Y.expr, zs), encode(P_, A.expr, zs)
    outs = [solver.term_step(Y.expr, A.expr), R.le(Y.expr, A.expr), R.ge(Y.expr, A.expr)]
    prove_code(lambda t, le, ge: z3.And(t == y * a, le == (y <= a), ge == (y >= a)),
               [encode(P_, outs[0], zs), encode_cond(P_, outs[1], zs),
                encode_cond(P_, outs[2], zs)], P=P_,
               what="term_step and the bounds' rel on any two expressions")


class _Out:
    """A list of conditions as ``and_step`` and ``all_of`` read it: its meaning ``m`` (the
    conjunction), ``c in out`` either answer (a yes: the list implies ``c``), ``+ [c]`` the
    list with ``c``, its length none, one or more (a choice) and its items one relation of
    its meaning."""

    def __init__(self, m, choices: Choices, said: list) -> None:
        self.m, self.choices, self.said, self.n = m, choices, said, None

    def __contains__(self, c) -> bool:
        yes = self.choices.choose()
        if yes:
            self.said.append(z3.Implies(self.m, _meaning(c)))
        return yes

    def __add__(self, more):
        (c,) = more
        return _Out(z3.And(self.m, _meaning(c)), self.choices, self.said)

    def __len__(self) -> int:
        if self.n is None:
            self.n = 0 if self.choices.choose() else (1 if self.choices.choose() else 2)
            if self.n == 0:
                self.said.append(self.m == z3.BoolVal(True))    # the empty conjunction
        return self.n

    def __getitem__(self, i):
        require(i == 0 and len(self) == 1, "all_of read item %r of %d", i, len(self))
        return _ITEM

    def __iter__(self):
        return iter([_ITEM] * len(self) if len(self) <= 1 else [_ITEM])


#: a relation standing for a list's items (its meaning is the list's: ``z <= 0``)
_ITEM = R.Rel(R.LE, Z.expr)
_ZS = Symbols()
_PZ = Py()


def _meaning(c):
    """A condition's meaning (a bool, a relation, an and, an opaque list)."""
    if isinstance(c, _Out):
        return c.m
    if c is False or c is True:
        return z3.BoolVal(c)
    return encode_cond(_PZ, c, _ZS)


def _conjunction() -> None:
    """``all_of``: read as the fold of ``and_step`` from ``[]`` then a conversion; the step
    run on any list and every kind of condition, the conversion on the fold's result."""
    got = read_form(solver.all_of, _ALL_OF)
    require(got["REDUCE"] is reduce and _same(got["STEP"], solver.and_step),
            "all_of folds %s with %s", got["STEP"], got["REDUCE"])
    m = encode_cond(_PZ, _ITEM, _ZS)
    cases = []
    # the step: any list (or False), a condition of each kind
    for kind in ("true", "false", "rel"):
        for was_false in (False, True):
            choices = Choices()

            def step():
                said: list = []
                out = False if was_false else _Out(m, choices, said)
                c = {"true": True, "false": False}.get(kind, R.Rel(R.LE, G.expr))
                got_ = solver.and_step(out, c)
                return z3.And(*said), _meaning(got_) == z3.And(_meaning(out), _meaning(c))
            cases += choices.runs(step)
    # the conversion: the fold's result any list (or False)
    for was_false in (False, True):
        choices = Choices()

        def convert():
            said: list = []
            out = False if was_false else _Out(m, choices, said)
            saved = solver.reduce
            solver.reduce = lambda f, xs, init: out
            try:
                got_ = solver.all_of([])
            finally:
                solver.reduce = saved
            return z3.And(*said), _meaning(got_) == _meaning(out)
        cases += choices.runs(convert)
    prove_code(lambda *v: z3.And(*[z3.Implies(said, x) for (said, _), x in zip(cases, v)]),
               [x for _, x in cases], P=_PZ,
               what="and_step and all_of's conversion on any list (%d paths)" % len(cases))


@proves("solve.minmax_equal", over=every(
    "every equation c1*Min(args) + c2*t + k == 0 (Max too; coefficients and constant "
    "symbolic; every arity and every argument list, y among them or not; t any term, of "
    "any number of atoms), along every path of minmax_equal, by induction on the lists it "
    "walks: term_value, bounds_against and all_of read from the code as forms over a list "
    "(proofs/filters.py), their steps run on the code (term_step, rel, and_step on any "
    "list), the min / max fold's step proven for all integers"))
def solve_minmax_equal():
    """See the module docstring: the equations first (a mutant of ``minmax_equal`` fails
    there, with a counterexample), then the forms, their steps and the lemma."""
    _equations()
    _lemmas()
    _forms(Py(), Symbols())
    _conjunction()
