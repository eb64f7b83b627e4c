"""``floordiv`` / ``mod`` by an expression divisor (``symshape/algebra/expr.py``): the
exact quotient by a monomial (``_exact_quotient``) and the common atom
(``_common_atom``), for every dividend and divisor, the code run with symbolic coefficients
and constant (``proofs/symcoeff.py``) along every path.

What the code reads of its inputs.  The divisor ``b``: whether it is one monomial (one
term, no constant; else both helpers answer None), that term's atoms and coefficient
``d``.  The dividend ``a``: whether it is an int, its constant (non-zero: both answer
None), and each term ``t`` with its coefficient ``c`` -- ``_exact_quotient`` tests ``c %
d`` and whether ``b``'s atoms can be removed from ``t`` one by one (``list.remove``:
whatever atoms ``t`` and ``b`` hold, it succeeds exactly when ``t`` is ``b``'s monomial
times the atoms left, and those are kept as the quotient's term), ``_common_atom`` whether
an atom of ``b``'s monomial (the first such, in order) lies in every term.  Each term is
read alike, one loop (``_exact_quotient`` stops at the first that fails), so what matters
of a term is which of these outcomes it gives: with ``b = d*s*u`` the terms ``s*u*t``
(divisible, something left), ``s*u`` (divisible, nothing left: the quotient's constant),
``s*t`` (``u`` missing, ``s`` there) and ``u*t`` (``s`` missing, ``u`` there) give every
outcome, each with a symbolic coefficient (zero: the term absent, so every subset of
outcomes occurs, the int dividend 0 included) and in both helpers' orders.  A recursive
``floordiv`` / ``mod`` call (on the common atom's quotients) stands for its own value: the
induction hypothesis.
"""
from __future__ import annotations

from typing import Callable

import z3

from symshape.algebra import expr as E

from . import every, proves
from .alike import read_alike
from .code import Symbols, prove_code
from .expr_rules import code_guards_divisor
from .pyint import Py, require
from .symcoeff import SInt, encode, patched, prove_paths, sym_ints
from .symexec import Explorer, TrackedPy

S, T, U = E.Sym(940), E.Sym(941), E.Sym(942)
#: the divisions' operands and what the helpers' specifications name (any values)
A, B, Q, M, A1, B1 = (E.Sym(950 + i) for i in range(6))


def _op(kind: str):
    return E.floordiv if kind == "FloorDiv" else E.mod


def _py(P: Py, kind: str):
    return P.floordiv if kind == "FloorDiv" else P.mod


def _helper_paths(build: Callable, claims: Callable, what: str) -> int:
    """``build()`` (the code's helpers run on symbolic coefficients; it returns what
    ``claims`` reads) along every path; ``claims(P, zs, got)`` gives each path's Z3
    claims, proven all at once.  Returns the number of paths."""
    zs = Symbols()
    c1, c2, d, k = sym_ints("c1 c2 d k")
    ex = Explorer([c1.v != 0, c2.v != 0, d.v != 0, k.v != 0])

    def one_path():
        ex.P = TrackedPy()
        return build(c1, c2, d, k), ex.P
    with patched(ex, inductive=False):
        paths = ex.paths(one_path)
    for n, (pc, got) in enumerate(paths):      # one query per path: small for Z3
        if isinstance(got, Exception):
            raise got
        out, P = got
        terms, make = claims(P, zs, out)
        prove_code(make, terms, pc, P.side,
                   what="%s, path %d of %d" % (what, n + 1, len(paths)))
    return len(paths)


def _term(*syms) -> tuple:
    """The term (sorted atoms) of the product of ``syms``."""
    return tuple(sorted(syms, key=lambda a: a.key))


SU, SUT, ST, UT = _term(S, U), _term(S, U, T), _term(S, T), _term(U, T)


def _quotient_claim(P, zs, a, b, q):
    """(the Z3 terms the claim reads, the claim): None, or ``a == b*q`` at every point."""
    if q is None:
        return [z3.IntVal(0)], lambda v: v == 0
    return [encode(P, q, zs)], lambda v: encode(P, a, zs) == encode(P, b, zs) * v


def exact_quotient_every() -> int:
    """``_exact_quotient(a, b)`` for ``b = d*s*u`` (or with a constant ``k``, or of two
    terms: no monomial) and ``a`` each way its terms can meet it: ``c1*s*u*t + c2*s*u``
    (divisible or not, something / nothing left), ``c1*s*u*t + c2*s*t`` (``u`` missing),
    ``c2*s*u`` alone (the quotient an int), with a constant ``k``, and an int ``a`` (every
    coefficient and constant symbolic, non-zero: a zero one is an absent term), along
    every path: None, or ``q`` with ``a == b*q`` at every point."""
    def build(c1, c2, d, k):
        b = E.Expr({SU: d}, 0)
        a1 = E.Expr({SUT: c1, SU: c2}, 0)           # both divisible: something / nothing left
        a2 = E.Expr({SUT: c1, ST: c2}, 0)           # u missing from s*t
        a3 = E.Expr({SU: c2}, 0)                    # the quotient an int
        a4 = E.Expr({SU: c2}, k)                    # a constant: no quotient
        b2 = E.Expr({SU: d}, k)                     # no monomial: no quotient
        b3 = E.Expr({SU: d, ST: c1}, 0)             # two terms: no monomial either
        return [(a1, b, E._exact_quotient(a1, b)), (a2, b, E._exact_quotient(a2, b)),
                (a3, b, E._exact_quotient(a3, b)), (a4, b, E._exact_quotient(a4, b)),
                (k, b, E._exact_quotient(k, b)), (a1, b2, E._exact_quotient(a1, b2)),
                (a1, b3, E._exact_quotient(a1, b3))]

    def claims(P, zs, got):
        parts = [_quotient_claim(P, zs, a, b, q) for a, b, q in got]
        terms = [t for ts, _ in parts for t in ts]

        def make(*vals):
            return z3.And(*[f(v) for (_, f), v in zip(parts, vals)])
        return terms, make
    return _helper_paths(build, claims, "_exact_quotient")


def common_atom_every() -> int:
    """``_common_atom(a, b)`` for ``b = d*s*u`` (or with a constant ``k``, or of two terms:
    no monomial) and ``a`` each way its terms can share an atom of ``b``: ``c1*s*u*t +
    c2*s*t`` (``s`` in every term), ``c1*s*u*t + c2*u*t`` (``u``, not ``s``), ``c1*s*t +
    c2*u*t`` (neither), with a constant ``k``, and an int ``a``, along every path: None, or
    an atom of ``b``'s monomial by which ``_exact_quotient`` divides both ``a`` and ``b``
    (so both quotients the common-factor rewrite takes exist; their values:
    ``exact_quotient_every``).
    Returns the number of paths."""
    c1, c2, d, k = sym_ints("c1 c2 d k")
    ex = Explorer([c1.v != 0, c2.v != 0, d.v != 0, k.v != 0])
    checked: list = []

    def divides(a, b):
        m = E._common_atom(a, b)
        if m is None:
            return None
        require(m in b.terms[0][0], "_common_atom(%s, %s) = %s: not in the divisor", a, b, m)
        by = E.atom_expr(m)
        require(E._exact_quotient(a, by) is not None and E._exact_quotient(b, by) is not None,
                "_common_atom gives %s, which does not divide both", m)
        checked.append(m)
        return m

    def run():
        b = E.Expr({SU: d}, 0)
        got = [divides(E.Expr({SUT: c1, ST: c2}, 0), b), divides(E.Expr({SUT: c1, UT: c2}, 0), b),
               divides(E.Expr({ST: c1, UT: c2}, 0), b), divides(E.Expr({SUT: c1}, k), b),
               divides(k, b), divides(E.Expr({SUT: c1}, 0), E.Expr({SU: d}, k)),
               divides(E.Expr({SUT: c1}, 0), E.Expr({SU: d, ST: c2}, 0))]
        require(got[:3] == [S, U, None] and got[3:] == [None] * 4,
                "_common_atom picks %s", got)
        return got
    with patched(ex, inductive=False):
        paths = ex.paths(run)
    for _, got in paths:
        if isinstance(got, Exception):
            raise got
    return len(paths)


def _spec_paths(kind: str) -> int:
    """``floordiv`` / ``mod`` (``kind``) of any expressions ``a`` and ``b`` (values any
    integers, ``b != 0``; ``a`` and ``b`` not the same expression: ``floordiv.self``) with
    ``_exact_quotient`` and ``_common_atom`` as ``exact_quotient_every`` and
    ``common_atom_every`` prove them: ``_exact_quotient(a, b)`` None or ``q`` with ``a ==
    b*q``; ``_common_atom`` None or an atom ``m`` with ``a == m*a1`` and ``b == m*b1``,
    ``a1`` and ``b1`` the quotients ``_exact_quotient`` gives by ``m``; every answer
    explored, along every path, a recursive call its own value (the induction
    hypothesis): the output equals Python's operator."""
    zs = Symbols()
    some_q, some_m = z3.Int("quotient.some"), z3.Int("common.some")

    def run():
        saved = E._exact_quotient, E._common_atom
        a, b = A.expr, B.expr

        def exact(x, y):
            if x is a and y is b:
                return Q.expr if SInt(some_q) else None
            require(type(y) is E.Expr and y.as_atom() is M and (x is a or x is b),
                    "_exact_quotient(%s, %s) called off the common-factor path", x, y)
            return A1.expr if x is a else B1.expr

        def common(x, y):
            require(x is a and y is b, "_common_atom(%s, %s): not the operands", x, y)
            return M if SInt(some_m) else None
        E._exact_quotient, E._common_atom = exact, common
        try:
            return _op(kind)(a, b), {}
        finally:
            E._exact_quotient, E._common_atom = saved

    def want(P, atom):
        return _py(P, kind)(zs[A], zs[B])
    hyps = [z3.Implies(some_q != 0, zs[A] == zs[B] * zs[Q]),
            z3.Implies(some_m != 0, z3.And(zs[A] == zs[M] * zs[A1],
                                           zs[B] == zs[M] * zs[B1]))]
    return prove_paths(run, want, hyps, zs, "%s by an expression" % kind,
                       nonzero=lambda P, atom: [zs[B] != 0])


_EXACT = ("every dividend and divisor expression: _exact_quotient run on every way a term "
          "meets a monomial divisor (divisible with something / nothing left, an atom "
          "missing; the code reads a term only through its coefficient, list.remove of the "
          "divisor's atoms and what is left, each term alike in one loop), with a constant, "
          "an int dividend and a divisor that is no monomial (coefficients symbolic), along "
          "every path: None or q with a == b*q; then %s along every path with it as that "
          "specification (and _common_atom as common_atom_every proves it), every answer "
          "explored; an expression dividend other than the divisor (a == b: floordiv.self / "
          "mod.self; an int one: both helpers give None, as proven)")
_COMMON = ("every dividend and divisor expression: _common_atom run on every way the terms "
           "can share an atom of a monomial divisor (the first of its atoms in every term, "
           "the second, none; a term read only through membership, each alike), with a "
           "constant, an int dividend and a divisor that is no monomial (coefficients "
           "symbolic), along every path: None or an atom dividing both, by which "
           "_exact_quotient divides both; then %s along every path with both helpers as "
           "their proven specifications, every answer explored, the recursive call its own "
           "value (the induction hypothesis); an expression dividend other than the "
           "divisor (a == b: floordiv.self / mod.self; an int one: both helpers give None)")


@proves("floordiv.exact_quotient", over=every(_EXACT % "floordiv"))
def floordiv_exact_quotient():
    read_alike(E._exact_quotient)
    exact_quotient_every()
    _spec_paths("FloorDiv")
    code_guards_divisor(lambda a, b: (a * b) // b)


@proves("floordiv.common_factor", over=every(_COMMON % "floordiv"))
def floordiv_common_factor():
    read_alike(E._common_atom)
    common_atom_every()
    _spec_paths("FloorDiv")


@proves("mod.exact_quotient", over=every(_EXACT % "mod"))
def mod_exact_quotient():
    read_alike(E._exact_quotient)
    exact_quotient_every()
    _spec_paths("Mod")
    code_guards_divisor(lambda a, b: (a * b) % b)


@proves("mod.common_factor", over=every(_COMMON % "mod"))
def mod_common_factor():
    read_alike(E._common_atom)
    common_atom_every()
    _spec_paths("Mod")
