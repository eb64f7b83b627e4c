"""Proofs of the ``Min`` / ``Max`` constructor's rules (``_minmax`` in
``symshape/algebra/expr.py``: ``minmax.flatten``, ``minmax.const_merge``,
``minmax.offset_dominance``) on arguments whose coefficient, offsets and constants are
symbolic integers, along every path, up to a fixed arity.

Each proof builds its arguments with the code's own ``smin`` / ``smax`` (a nested Min / Max
is the code's output too) and proves, on every path, that the output's value is the min /
max of the arguments' values, and that its form is the rule's: no argument of a Min is a
Min (flattened), at most one constant among them (merged), at most one argument ``c*s + d``
(the others dominated by a constant offset).  The arguments are chosen so that each rule
acts: the nested Min holds a symbol and a constant (a Min of two offsets of one expression
would collapse before it could be flattened), three constants are merged, three offsets of
one expression dominate each other in every order.

Why bounded: the n-ary constructor reads its arguments in three loops over lists of any
length (the flattening loop, ``undominated``'s loop over the kept arguments, the sort), and
the min of the kept arguments is the min of all only by ``undominated``'s own correctness
(``fold.minmax_dominance``, proven on samples); an induction on arity needs that loop's step
proven on an arbitrary kept list first.
"""
from __future__ import annotations

from typing import Callable, List

import z3

from symshape.algebra import expr as E

from . import bounded, proves
from .code import Symbols
from .pyint import zmax, zmin
from .symcoeff import prove_paths, sym_ints

S, T, U = E.Sym(920), E.Sym(921), E.Sym(922)


def _single_atom(x):
    """The op atom an output ``Expr`` is exactly (coefficient 1, constant 0), else None
    (read off the structure: no comparison of a symbolic coefficient)."""
    if type(x) is not E.Expr or len(x.terms) != 1:
        return None
    (term, c), = x.terms
    if type(c) is not int or c != 1 or type(x.const) is not int or x.const != 0 \
            or len(term) != 1 or type(term[0]) is not E.OpAtom:
        return None
    return term[0]


def _form(kind: str, out) -> List:
    """The rules' form of an output (Z3 truth values, proven with the value on each path):
    no argument of a ``kind`` atom is itself one (flattened), at most one argument is a
    constant (merged) and at most one is an offset of ``c*s`` (the others dominated)."""
    atom = _single_atom(out)
    if atom is None or atom.kind != kind:
        return []
    nested = [a for a in atom.args if _single_atom(a) is not None
              and _single_atom(a).kind == kind]
    consts = [a for a in atom.args if type(a) is int]
    offsets = [a for a in atom.args if type(a) is E.Expr and [t for t, _ in a.terms] == [(S,)]]
    return [z3.BoolVal(not nested), z3.BoolVal(len(consts) <= 1),
            z3.BoolVal(len(offsets) <= 1)]


def _minmax_paths(kind: str, args: Callable, what: str) -> int:
    """``smin`` / ``smax`` (``kind``) of ``args(same, other, x, v)`` for every coefficient,
    offset and constant, along every path: ``same`` / ``other`` build a Min / Max of this /
    the other kind, ``x(d)`` is ``c*s + d``, ``v`` the symbolic values.  ``args`` is run
    twice: on the code's constructors (the input) and on Z3's min / max (its value)."""
    c1, d1, d2, d3, k1, k2, k3 = sym_ints("c1 d1 d2 d3 k1 k2 k3")
    v = {"d1": d1, "d2": d2, "d3": d3, "k1": k1, "k2": k2, "k3": k3, "t": T.expr, "u": U.expr}
    zs = Symbols()
    zv = {n: (zs[T] if n == "t" else zs[U] if n == "u" else x.v) for n, x in v.items()}

    def code(*a):
        return (E.smin if kind == "Min" else E.smax)(*a)

    def run():
        other = E.smax if kind == "Min" else E.smin
        return code(*args(code, other, lambda d: E.Expr({(S,): c1}, d), v)), {}

    def want(P, atom):
        same, other = (zmin, zmax) if kind == "Min" else (zmax, zmin)
        return same(*args(same, other, lambda d: c1.v * zs[S] + d, zv))
    return prove_paths(run, want, [c1.v != 0], zs, what, check=lambda out: _form(kind, out))


def _flatten_args(same, other, x, v):
    # a Min of an offset of c*s and a symbol inside a Min (flattened); a Max holding a
    # constant inside a Min (kept whole: its constant is no argument of the Min)
    return [same(x(v["d1"]), v["t"]), other(v["u"], v["k1"]), v["k2"]]


def _flatten_const_args(same, other, x, v):
    # a Min holding a constant inside a Min (flattened: its constant merged with k3)
    return [same(v["t"], v["k1"]), other(v["u"], v["k2"]), v["k3"]]


def _const_args(same, other, x, v):
    return [v["k1"], x(v["d1"]), v["k2"], v["k3"]]


def _offset_args(same, other, x, v):
    return [x(v["d1"]), v["t"], x(v["d2"])]


_MM = ("Min / Max of %s (x = c*s; coefficient, offsets and constants symbolic integers), "
       "along every path: the value, and the output's form (flat, one constant, one offset "
       "of x); arity %s")


@proves("minmax.flatten", over=bounded(_MM % (
    "Min(x + d1, t), Max(u, k1) and k2, and of Min(t, k1), Max(u, k2) and k3 (a Min / Max "
    "of each kind nested, one holding a constant)", "3, 4 flattened")))
def minmax_flatten():
    for kind in ("Min", "Max"):
        _minmax_paths(kind, _flatten_args, "%s flattening" % kind)
        _minmax_paths(kind, _flatten_const_args, "%s flattening a constant" % kind)


@proves("minmax.const_merge", over=bounded(_MM % ("k1, x + d1, k2 and k3", "4")))
def minmax_const_merge():
    _minmax_paths("Min", _const_args, "Min constants")
    _minmax_paths("Max", _const_args, "Max constants")


@proves("minmax.offset_dominance", over=bounded(_MM % ("x + d1, t and x + d2", "3")))
def minmax_offset_dominance():
    _minmax_paths("Min", _offset_args, "Min offsets")
    _minmax_paths("Max", _offset_args, "Max offsets")
