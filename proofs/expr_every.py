"""Proofs of ``floordiv`` / ``mod`` / ``ceildiv`` rewrites (``Min`` / ``Max``:
``proofs/minmax_rules.py``), the relation normal forms (``symshape/algebra/relations.py``),
``recombine_divmod`` and the display fold for every input of their domain (the
monomial-divisor rules: ``proofs/monomial_every.py``):
the code run with symbolic coefficients, constants and divisors (``proofs/symcoeff.py``)
along every path, under exactly the side condition of the rule.

The input grammar is ``a = c1*s + c2*A + k``: a symbol term and an op-atom term (``A`` the
operation's own atom over a symbol, ``FloorDiv(t, c)`` / ``Mod(t, c)``, so the nesting rules
are reached), every coefficient, the constant, the atom's divisor ``c`` and the divisor ``b``
symbolic integers.  The code treats the terms of ``a`` one by one (each coefficient split or
reduced on its own, an atom looked into only when it is the whole remainder), so two terms
-- one that may be nested, one that may not -- and a constant cover its every path.  A
recursive ``floordiv`` / ``mod`` call stands for its own value (the induction hypothesis:
each recursion is on a smaller input).  Each proof states the rule's side condition as the
hypotheses and proves the code's output on every path they admit equal to Python's operator.
"""
from __future__ import annotations

from typing import Callable, List

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R

from . import every, proves
from .code import Symbols
from .expr_rules import code_guards_divisor
from .pyint import Py, require
from .symcoeff import prove_paths, sym_ints, value

S, T, U = E.Sym(910), E.Sym(911), E.Sym(912)

_GRAMMAR = ("every a = c1*s + c2*%s(t, c) + k and divisor b (coefficients, constant and "
            "divisors symbolic integers) with %s, along every path")


def _domain(kind: str, side: str):
    return every(_GRAMMAR % (kind, side))


def _op(kind: str) -> Callable:
    return E.floordiv if kind == "FloorDiv" else E.mod


def _py(P: Py, kind: str):
    return P.floordiv if kind == "FloorDiv" else P.mod


def _int_divisor(kind: str, side: Callable[[List], List], what: str) -> int:
    """Run ``floordiv`` / ``mod`` (``kind``) on the grammar's ``a`` and a symbolic int
    divisor ``b`` along every path ``side(c1, c2, k, b, c)`` (the rule's side condition,
    Z3 formulas over the symbolic values) admits; prove each path's output."""
    c1, c2, k, b, c = sym_ints("c1 c2 k b c")
    zs = Symbols()
    def run():            # the operation looked up now: the patched one (see symcoeff)
        atom = E.OpAtom(kind, (T.expr, c))
        return _op(kind)(E.Expr({(S,): c1, (atom,): c2}, k), b), {"A": atom}

    def want(P, atom):
        return _py(P, kind)(c1.v * zs[S] + c2.v * atom("A") + k.v, b.v)
    hyps = [c1.v != 0, c2.v != 0, c.v != 0] + side([x.v for x in (c1, c2, k, b, c)])
    return prove_paths(run, want, hyps, zs, what)


def _multiple(x, m, name: str):
    """``x`` is a multiple of ``m`` (a fresh quotient)."""
    return x == m * z3.Int(name)


# ---------------------------------------------------------------------------- floordiv
@proves("floordiv.by_one", over=_domain("FloorDiv", "b == 1"))
def floordiv_by_one():
    _int_divisor("FloorDiv", lambda v: [v[3] == 1], "floordiv by one")


@proves("floordiv.neg_divisor", over=_domain("FloorDiv", "b < 0"))
def floordiv_neg_divisor():
    _int_divisor("FloorDiv", lambda v: [v[3] < 0], "floordiv by a negative divisor")


@proves("floordiv.coeff_split", over=_domain("FloorDiv", "b > 1 and c1 % b != 0"))
def floordiv_coeff_split():
    r = z3.Int("r")
    _int_divisor("FloorDiv", lambda v: [v[3] > 1, 0 < r, r < v[3],
                                        v[0] == v[3] * z3.Int("q") + r],
                 "floordiv coefficient split")


@proves("floordiv.const_remainder", over=_domain("FloorDiv", "b > 1 dividing c1 and c2"))
def floordiv_const_remainder():
    _int_divisor("FloorDiv", lambda v: [v[3] > 1, _multiple(v[0], v[3], "q1"),
                                        _multiple(v[1], v[3], "q2")],
                 "floordiv with a constant remainder")


# ---------------------------------------------------------------------------- mod
@proves("mod.by_one", over=_domain("Mod", "b == 1"))
def mod_by_one():
    _int_divisor("Mod", lambda v: [v[3] == 1], "mod by one")


@proves("mod.neg_divisor", over=_domain("Mod", "b < 0"))
def mod_neg_divisor():
    _int_divisor("Mod", lambda v: [v[3] < 0], "mod by a negative divisor")


# ---------------------------------------------------------------------------- a or b fixed
def _expr_divisor(kind: str, same: bool, what: str) -> int:
    """``op(a, a')`` for ``a'`` built apart with the same coefficients (``same``), or
    ``op(0, a)``: the code's output on every path, for every coefficient and constant."""
    c1, c2, k, c = sym_ints("c1 c2 k c")
    zs = Symbols()
    def build():
        atom = E.OpAtom(kind, (T.expr, c))
        return E.Expr({(S,): c1, (atom,): c2}, k), atom

    def run():
        a, atom = build()
        if not same:
            return _op(kind)(0, a), {"A": atom}
        b, atom2 = build()
        return _op(kind)(a, b), {"A": atom, "B": atom2}

    def want(P, atom):
        a = c1.v * zs[S] + c2.v * atom("A") + k.v
        if not same:
            return _py(P, kind)(0, a)
        return _py(P, kind)(a, c1.v * zs[S] + c2.v * atom("B") + k.v)

    def nonzero(P, atom):
        return [c1.v * zs[S] + c2.v * atom("A") + k.v != 0]
    hyps = [c1.v != 0, c2.v != 0, c.v != 0]
    return prove_paths(run, want, hyps, zs, what, nonzero=nonzero)


@proves("floordiv.self", over=every("every a = c1*s + c2*FloorDiv(t, c) + k (symbolic "
                                    "coefficients) divided by itself, built apart, a != 0"))
def floordiv_self():
    _expr_divisor("FloorDiv", True, "floordiv by itself")
    code_guards_divisor(lambda a, b: a // b)


@proves("floordiv.zero", over=every("0 // every a = c1*s + c2*FloorDiv(t, c) + k (symbolic "
                                    "coefficients), a != 0"))
def floordiv_zero():
    _expr_divisor("FloorDiv", False, "0 // e")
    code_guards_divisor(lambda a, b: 0 // b)


@proves("mod.self", over=every("every a = c1*s + c2*Mod(t, c) + k (symbolic coefficients) "
                               "modulo itself, built apart, a != 0"))
def mod_self():
    _expr_divisor("Mod", True, "mod by itself")
    code_guards_divisor(lambda a, b: a % b)


@proves("mod.zero", over=every("0 % every a = c1*s + c2*Mod(t, c) + k (symbolic "
                               "coefficients), a != 0"))
def mod_zero():
    _expr_divisor("Mod", False, "0 % e")
    code_guards_divisor(lambda a, b: 0 % b)


# ---------------------------------------------------------------------------- ceildiv
@proves("ceildiv.def", over=every("every a = c1*s + c2*FloorDiv(t, c) + k and every divisor: "
                                  "a symbolic int b != 0 or b = d*t + e (symbolic "
                                  "coefficients) != 0, along every path; floordiv as proven"))
def ceildiv_def():
    P_ = Py()
    a, b = z3.Ints("a b")
    q = P_.ceildiv(a, b)                          # -((-a) // b)
    P_.prove(z3.And(b * q >= a, a > b * (q - 1)), b > 0)
    P_.prove(z3.And(b * q <= a, a < b * (q - 1)), b < 0)
    P_.prove(P_.floordiv(a + b - 1, b) == q, b > 0)     # the spelling for an int b > 0
    c1, c2, k, c, bi, d, e = sym_ints("c1 c2 k c bi d e")
    zs = Symbols()
    for divisor in ("int", "expr", "both ints"):
        def run(divisor=divisor):
            atom = E.OpAtom("FloorDiv", (T.expr, c))
            a = k if divisor == "both ints" else E.Expr({(S,): c1, (atom,): c2}, k)
            return E.ceildiv(a, E.Expr({(T,): d}, e) if divisor == "expr" else bi), \
                {"A": atom}

        def den(divisor=divisor):
            return d.v * zs[T] + e.v if divisor == "expr" else bi.v

        def want(P, atom, divisor=divisor):
            a = k.v if divisor == "both ints" else c1.v * zs[S] + c2.v * atom("A") + k.v
            return P.ceildiv(a, den(divisor))

        prove_paths(run, want, [c1.v != 0, c2.v != 0, c.v != 0, d.v != 0, bi.v != 0], zs,
                    "ceildiv (%s)" % divisor, nonzero=lambda P, atom, den=den: [den() != 0],
                    opaque=True)


# ---------------------------------------------------------------------------- relations
_REL = ("every e = c1*s + c2*t + k (coefficients and constant symbolic integers; the code "
        "reads a term only through its coefficient)%s, along every path")


def _py_rel(op: str, e):
    return e == 0 if op == "==" else (e != 0 if op == "!=" else e <= 0)


def _make_as_proven(real: Callable) -> Callable:
    """``relations.make`` as its proofs (``rel.eq_gcd``, ``rel.le_gcd_ceil``) state it: an
    expression ``e`` stays ``e <op> 0`` (a relation meaning exactly that); an int is the
    code's own."""
    def make(op, e):
        return R.Rel(op, e) if isinstance(e, E.Expr) else real(op, e)
    return make


def _lead_positive(out) -> list:
    """A normal form ``e == 0`` / ``e != 0`` has a positive first coefficient."""
    if isinstance(out, R.Rel) and out.op in ("==", "!="):
        return [value(out.expr.terms[0][1]) > 0]
    return []


def _rel_paths(build: Callable, want_fn: Callable, side: Callable, what: str,
               make_proven: bool = False, check: Callable = None) -> int:
    """``build(a, b)`` (the code's normal form of a comparison of ``a = c1*s + c2*t + k``
    with ``b = d*u + j``) along every path ``side`` admits; the normal form holds exactly
    where ``want_fn(a, b)`` (the comparison in Z3) does."""
    c1, c2, k, d, j = sym_ints("c1 c2 k d j")
    zs = Symbols()

    def run():
        real = R.make
        if make_proven:     # the rule's own step; the normal form it hands on is proven
            R.make = _make_as_proven(real)
        try:
            return build(E.Expr({(S,): c1, (T,): c2}, k), E.Expr({(U,): d}, j)), {}
        finally:
            R.make = real

    def want(P, atom):
        return want_fn(c1.v * zs[S] + c2.v * zs[T] + k.v, d.v * zs[U] + j.v)
    vals = [x.v for x in (c1, c2, k, d, j)]
    hyps = [c1.v != 0, c2.v != 0, d.v != 0] + side(vals)
    return prove_paths(run, want, hyps, zs, what, check=check)


@proves("rel.eq_gcd", over=every(_REL % ", == and != against 0"))
def rel_eq_gcd():
    for op in ("==", "!="):
        _rel_paths(lambda a, b, op=op: R.make(op, a),
                   lambda a, b, op=op: _py_rel(op, a), lambda v: [], "make(%s)" % op)


@proves("rel.eq_sign", over=every(_REL % " and c1 < 0 (a sign to normalise), == and !="))
def rel_eq_sign():
    for op in ("==", "!="):
        _rel_paths(lambda a, b, op=op: R.make(op, a),
                   lambda a, b, op=op: _py_rel(op, a), lambda v: [v[0] < 0],
                   "make(%s) of a negative lead" % op, check=_lead_positive)


@proves("rel.le_gcd_ceil", over=every(_REL % ", <= against 0"))
def rel_le_gcd_ceil():
    _rel_paths(lambda a, b: R.make("<=", a), lambda a, b: a <= 0, lambda v: [], "make(<=)")


@proves("rel.lt_as_le", over=every(_REL % " against every b = d*u + j (symbolic), <, > "
                                          "and >=; make as proven by rel.le_gcd_ceil"))
def rel_lt_as_le():
    _rel_paths(lambda a, b: R.lt(a, b), lambda a, b: a < b, lambda v: [], "lt", True)
    _rel_paths(lambda a, b: R.gt(a, b), lambda a, b: a > b, lambda v: [], "gt", True)
    _rel_paths(lambda a, b: R.ge(a, b), lambda a, b: a >= b, lambda v: [], "ge", True)


@proves("rel.le_negate", over=every(_REL % ", the negation of e == 0, e != 0 and e <= 0; "
                                           "make as proven by rel.le_gcd_ceil"))
def rel_le_negate():
    for op in ("==", "!=", "<="):
        _rel_paths(lambda a, b, op=op: R.negate(R.Rel(op, a)),
                   lambda a, b, op=op: z3.Not(_py_rel(op, a)), lambda v: [], "not %s" % op,
                   True)


# ---------------------------------------------------------------------------- recombining
def _recombine_paths(with_mod: bool, side: Callable, what: str) -> int:
    """``simplify.recombine_divmod`` of ``x = c1*FloorDiv(t, k) + c2*Mod(t, k) + c3*s + K``
    (``with_mod``) or ``x = c1*FloorDiv(t, k) + c3*t + K``, every coefficient, constant and
    divisor symbolic, along every path ``side(c1, c2, c3, K, k)`` admits: the output has the
    value of ``x``.  Its recursive call stands for its own specification (an expression of
    equal value: the identity), ``mod`` for its proven value."""
    from symshape.algebra import simplify as SI
    c1, c2, c3, K, k = sym_ints("c1 c2 c3 K k")
    zs = Symbols()
    real = SI.recombine_divmod

    def run():
        saved = SI.mod, SI.recombine_divmod
        SI.type, SI.mod, SI.recombine_divmod = E.type, E.mod, lambda y: y   # as patched
        try:
            fd = E.OpAtom("FloorDiv", (T.expr, k))
            md = E.OpAtom("Mod", (T.expr, k))
            terms = {(fd,): c1, (md,): c2, (S,): c3} if with_mod else {(fd,): c1, (T,): c3}
            return real(E.Expr(terms, K)), ({"FD": fd, "MD": md} if with_mod else {"FD": fd})
        finally:
            SI.mod, SI.recombine_divmod = saved
            del SI.type

    def want(P, atom):
        if with_mod:
            return c1.v * atom("FD") + c2.v * atom("MD") + c3.v * zs[S] + K.v
        return c1.v * atom("FD") + c3.v * zs[T] + K.v
    hyps = [c1.v != 0, c2.v != 0, c3.v != 0, k.v != 0] + side([x.v for x in (c1, c2, c3, K, k)])
    outs: list = []
    n = prove_paths(run, want, hyps, zs, what, opaque=True,
                    check=lambda out: outs.append(out) or [])
    # the rule fires: on some path the FloorDiv term is gone (recombined, or made a Mod)
    require(any(not _top_kinds(out) & {"FloorDiv"} for out in outs),
            "%s: recombine_divmod rewrites on no path", what)
    return n


def _top_kinds(x) -> set:
    """The kinds of the op atoms among ``x``'s terms (no comparison of coefficients)."""
    if not isinstance(x, E.Expr):
        return set()
    return {a.kind for t, _ in x.terms for a in t if type(a) is E.OpAtom}


@proves("fold.recombine_divmod", over=every(
    "every x = c1*FloorDiv(t, k) + c2*Mod(t, k) + c3*s + K with c1 == c2*k (coefficients, "
    "constant and divisor symbolic), along every path of recombine_divmod"))
def fold_recombine_divmod():
    _recombine_paths(True, lambda v: [v[0] == v[1] * v[4]], "divmod recombination")
    from symshape.algebra import simplify as SI
    k, = sym_ints("k")                  # an int (a sum folded to a constant) is kept

    def run():
        SI.type = E.type                # as patched (symcoeff)
        try:
            return SI.recombine_divmod(k), {}
        finally:
            del SI.type
    prove_paths(run, lambda P, atom: k.v, [], Symbols(), "recombine_divmod of an int")


@proves("fold.divmod_to_mod", over=every(
    "every x = c1*FloorDiv(t, k) + c3*t + K (coefficients, constant and divisor symbolic), "
    "along every path of recombine_divmod"))
def fold_divmod_to_mod():
    _recombine_paths(False, lambda v: [], "r - k*(r//k) as Mod")


# ---------------------------------------------------------------------------- display
@proves("floordiv.display_fold", over=every(
    "every x = c1*FloorDiv(t + e, b) + c2*s + K (coefficients, offset, divisor and constant "
    "symbolic integers), along every path of _fold_const_into_floordiv"))
def floordiv_display_fold():
    P_ = Py()
    c, r, b = z3.Ints("c r b")
    P_.prove(c + P_.floordiv(r, b) == P_.floordiv(r + c * b, b), b > 0)
    c1, c2, e, b, K = sym_ints("c1 c2 e b K")
    zs = Symbols()
    rewrote: list = []          # one entry per run that reached its end (a path)

    def run():
        fd = E.OpAtom("FloorDiv", (E.Expr({(T,): 1}, e), b))
        x = E.Expr({(fd,): c1, (S,): c2}, K)
        out = E._fold_const_into_floordiv(x)
        rewrote.append(out is not None)
        return (x if out is None else out), {"F": fd}

    def want(P, atom):
        return c1.v * atom("F") + c2.v * zs[S] + K.v
    prove_paths(run, want, [c1.v != 0, c2.v != 0, b.v != 0], zs, "display fold")
    require(any(rewrote), "_fold_const_into_floordiv folds on no path")
