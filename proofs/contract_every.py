"""Proofs that the contract's printed guards mean what the enforced ones mean, for every
coefficient and constant: the rewrites that make a guard readable (``_readable``:
``max(0, X) == 0`` as ``X <= 0``; ``in_axis_terms``: a root written back as the axis that
reads it) run on guards whose coefficients, constants and divisors are symbolic integers
(``proofs/symcoeff.py``) along every path, and the printed guard proven equivalent to the
enforced one on each path (a path that returns the guard itself prints what is enforced).
(``readable_minmax``: ``proofs/readable_every.py``.)  (``shown_facts``,
``exact_range`` and ``range_constraints``, loops over lists of any length, are proven by
induction on their fold steps in ``proofs/contract_folds.py``, which uses the stand-ins
``Guard``, ``Implied`` and ``Ends`` below.)

The grammar: a guard ``e <op> 0`` for every operator the code builds (``==``, ``!=``,
``<=``), ``e`` a sum of symbolic-coefficient terms over symbols and a Min / Max atom, and
``and`` / ``or`` of two guards.  The rewrites read a guard only through its operator, its
constant, its terms' coefficients and the atoms' kinds and arguments, so these cover their
every path.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Sequence

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R

from . import every, proves
from .code import Symbols, prove_code, restart_names as restart_fresh
from .pyint import restart_names
from .pyint import ProofFailure
from .symcoeff import SInt, divisors_of, encode, patched, sym_ints, value
from .symexec import Explorer, TrackedPy

S, T = E.Sym(920), E.Sym(921)


def cond(P, c, zs, opaque=None):
    """A condition with SInt coefficients (``Rel``, ``BoolOp`` or bool) as a Z3 formula."""
    if isinstance(c, bool):
        return z3.BoolVal(c)
    if isinstance(c, R.BoolOp):
        args = [cond(P, a, zs, opaque) for a in c.args]
        return z3.And(*args) if c.op == "and" else z3.Or(*args)
    e = encode(P, c.expr, zs, opaque)
    return e == 0 if c.op == R.EQ else (e != 0 if c.op == R.NE else e <= 0)


def _divisors(P, c, zs) -> list:
    if isinstance(c, R.BoolOp):
        return [d for a in c.args for d in _divisors(P, a, zs)]
    return divisors_of(P, c, zs)


@contextmanager
def int_like():
    """SInt arithmetic with an operand that is not an integer returns ``NotImplemented``,
    as ``int``'s does, so ``k + expr`` reaches ``Expr.__radd__`` (a rewrite that removes
    every term of an expression leaves a constant, then adds an expression to it)."""
    names = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__")
    saved = {n: vars(SInt)[n] for n in names}

    def deferring(f):
        def op(self, o):
            if not isinstance(o, (int, SInt)):
                return NotImplemented
            return f(self, o)
        return op
    for n, f in saved.items():
        setattr(SInt, n, deferring(f))
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(SInt, n, f)


def same_condition(run: Callable[[], tuple], hyps: Sequence, zs: Symbols, what: str) -> int:
    """``run()`` returns (the code's output guard, the guard it was given, a function of
    ``P`` giving facts about the output's stand-in symbols); along every path under
    ``hyps`` the output holds exactly where the input does (given the facts; every divisor
    of the input non-zero).  A path that returns the input itself is the same guard.
    Returns the number of paths that rewrote it (each a claim proven)."""
    ex = Explorer(hyps)

    def one_path():
        ex.P = TrackedPy()
        return run() + (ex.P,)
    with patched(ex, inductive=False), int_like():
        paths = ex.paths(one_path)
    claims = 0
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s: raises %s: %s on the feasible path %s"
                               % (what, type(got).__name__, got, z3.And(*pc)))
        out, given, facts, P = got
        if out is given:
            continue
        defined = [d != 0 for d in _divisors(P, given, zs)]
        if isinstance(out, R.Rel) and isinstance(given, R.Rel) and out.op == given.op:
            # the same operator: the expressions are equal (whatever the operator)
            want, got = encode(P, given.expr, zs), encode(P, out.expr, zs)
        else:
            want, got = cond(P, given, zs), cond(P, out, zs)
        prove_code(lambda v: v == want, [got], list(hyps), pc, defined,
                   facts(P), P=P, what="%s (path %s)" % (what, z3.And(*pc) if pc else True))
        claims += 1
    return claims


@contextmanager
def inductive(module, name: str):
    """``module.name`` (a rule that recurses into the parts of an ``and`` / ``or``) runs
    for the outermost call; a recursive call returns its argument: the induction
    hypothesis (each part is a smaller guard, proven rewritten to an equivalent one)."""
    real = getattr(module, name)
    depth = [0]

    def call(c, *args, **kwargs):
        if depth[0]:
            return c
        depth[0] += 1
        try:
            return real(c, *args, **kwargs)
        finally:
            depth[0] -= 1
    setattr(module, name, call)
    try:
        yield
    finally:
        setattr(module, name, real)


# ---------------------------------------------------------------------------- readable
def _atom_args(shape: str, k2, x, y):
    return {"k, X": (k2, x), "X, k": (x, k2), "X, Y": (x, y), "k, X, Y": (k2, x, y)}[shape]


@proves("contract.readable_guard", over=every(
    "every guard q*A + k0 <op> 0 for op in ==, !=, <= and q*A + r*s + k0 == 0 with A a "
    "Max or Min of (k, X), (X, k), (X, Y) or (k, X, Y), X = c1*s + c2*t + j, Y = c3*t, "
    "and q*s + k0 == 0, q*s*t + k0 == 0 (every coefficient, constant and k symbolic "
    "integers), along every path: the code "
    "reads the guard only through its operator, constant, terms, the atom's kind and "
    "arguments"))
def contract_readable_guard():
    from symshape.specs.constraints import _readable
    q, r, k0, k2, c1, c2, j, c3 = sym_ints("q r k0 k2 c1 c2 j c3")
    zs = Symbols()
    hyps = [x.v != 0 for x in (q, r, c1, c2, c3)]
    claims = 0
    for op in (R.EQ, R.NE, R.LE):
        for kind in ("Max", "Min"):
            for shape in ("k, X", "X, k", "X, Y", "k, X, Y"):
                # a second term: the code reads no further (a guard of one term only),
                # once past the operator
                for second in ((False, True) if op == R.EQ else (False,)):
                    def run(op=op, kind=kind, shape=shape, second=second):
                        x = E.Expr({(S,): c1, (T,): c2}, j)
                        atom = E.OpAtom(kind, _atom_args(shape, k2, x, E.Expr({(T,): c3}, 0)))
                        terms = {(atom,): q, (S,): r} if second else {(atom,): q}
                        c = R.Rel(op, E.Expr(terms, k0))
                        return _readable(c), c, lambda P: []
                    claims += same_condition(run, hyps, zs, "_readable %s %s(%s)%s"
                                             % (op, kind, shape, " + r*s" if second else ""))
    for term in ("s", "s*t"):           # a term that is no atom: a symbol, a product
        def run(term=term):
            t = (S,) if term == "s" else (S, T)
            c = R.Rel(R.EQ, E.Expr({t: q}, k0))
            return _readable(c), c, lambda P: []
        claims += same_condition(run, hyps, zs, "_readable q*%s + k0 == 0" % term)
    if not claims:
        raise ProofFailure("_readable rewrote no guard of the grammar")


# ---------------------------------------------------------------------------- axis terms
@proves("contract.axis_terms", over=every(
    "every guard c1*s + c2*t + k <op> 0 (op ==, !=, <=) with s read off an axis as "
    "a*s + rest, one over a FloorDiv atom, and every and / or of guards (by induction: "
    "each part is a smaller guard), every coefficient, constant, a != 0 and rest symbolic "
    "integers, along every path: the code reads a guard only through its linear "
    "coefficients, and rewrites one solved root per step of its loop, so a second solved "
    "root is the same step on c1'*s' + c2*t + k'"))
def contract_axis_terms():
    from symshape.contract import guard_text
    c1, c2, k, a, rest, d = sym_ints("c1 c2 k a rest d")
    zs = Symbols()
    hyps = [c1.v != 0, c2.v != 0, a.v != 0, d.v != 0]
    solved = {S: (a, rest, "x.shape[0]")}

    def facts(axes):
        def at(P):           # each stand-in symbol is its axis: a*root + rest
            return [zs[t] == value(sa) * zs[r] + value(sr)
                    for t, text in axes.items()
                    for r, (sa, sr, axis) in solved.items() if axis == text]
        return at

    claims = 0
    for form in ("rel", "and", "or", "floordiv"):
        for op in (R.EQ, R.NE, R.LE):
            # the code passes the operator through: with the names numbered alike, the
            # claims for each operator are one query (answered once, z3cache)
            restart_names()
            restart_fresh()

            def run(op=op, form=form):
                lin = E.Expr({(S,): c1, (T,): c2}, k)
                if form == "floordiv":
                    lin = E.Expr({(S,): c1, (E.OpAtom("FloorDiv", (T.expr, d)),): c2}, k)
                c = R.Rel(op, lin)
                if form in ("and", "or"):
                    c = R.BoolOp(form, (c, R.Rel(R.LE, E.Expr({(S,): c2}, k))))
                axes = {}
                with inductive(guard_text, "in_axis_terms"):
                    return guard_text.in_axis_terms(c, solved, axes), c, facts(axes)
            claims += same_condition(run, hyps, zs, "in_axis_terms %s %s" % (form, op))
    if not claims:
        raise ProofFailure("in_axis_terms rewrote no guard of the grammar")


# ---------------------------------------------------------------------------- shown guards
@contextmanager
def proven_normal_form():
    """``relations.make`` as its own proofs state it (``rel.eq_gcd``, ``rel.le_gcd_ceil``,
    over every coefficient): an expression ``e`` stays ``e <op> 0``, a relation meaning
    exactly that; an int is the code's own.  Keeps the claims free of the quotients a gcd
    brings (the normal form is proven apart)."""
    real = R.make

    def make(op, e):
        return R.Rel(op, e) if isinstance(e, E.Expr) else real(op, e)
    R.make = make
    try:
        yield
    finally:
        R.make = real


class Guard:
    """A residual guard as ``shown_facts`` reads it: by identity only (it hands guards to
    the solver); its truth at the point is a free Boolean."""

    def __init__(self, name: str) -> None:
        self.holds = z3.Bool(name)


class Implied:
    """``projection.implied(goal, facts, ranges)`` as its specification: an answer on each
    path, True only where the goal follows from the facts and the root ranges at the
    point (``in_ranges``).  Remembers each answer."""

    def __init__(self, explorer: Explorer, meaning: Callable, in_ranges) -> None:
        self.ex, self.meaning, self.in_ranges = explorer, meaning, in_ranges
        self.answers: list = []

    def __call__(self, goal, facts, ranges, budget=None) -> bool:
        d = z3.Bool("implied!%d" % len(self.answers))
        given = z3.And(self.in_ranges, *[self.meaning(f) for f in facts])
        yes = self.ex.branch(z3.And(d, z3.Implies(given, self.meaning(goal))))
        self.answers.append((goal, yes))
        return yes


class Ends:
    """A printed range as ``shown_facts`` reads it: its two ends (symbolic or infinite)."""

    def __init__(self, lower, upper) -> None:
        self.lower, self.upper = lower, upper
