"""Proofs of the ``Min`` / ``Max`` constructor's rules (``_minmax`` in
``symshape/algebra/expr.py``: ``minmax.flatten``, ``minmax.const_merge``,
``minmax.offset_dominance``) for every argument list of any length: the code run along every
path on arguments of each class it tells apart, with ``undominated`` as its proven
specification, its reads of the list read from the code.

How the code reads its arguments (``MINMAX_READS``, required by ``read_alike``): one loop
over them, each tested alike -- an int (``type(x) is int``: gathered), an expression whose
``as_atom()`` is a Min / Max atom of the same kind (its arguments gathered one by one in a
second loop, each tested the same way), or any other expression (read through nothing but
that test: a symbol, an atom of the other kind, a sum all fail it alike; gathered).  The
gathered ints are replaced by their pick, Python's builtin ``min`` / ``max`` (taken as its
meaning: a value equal to the min / max of the ints), which joins the gathered
expressions; ``undominated`` keeps those that can be the value, and the kept ones are the
output (the one argument itself, else a Min / Max atom over them, sorted: a permutation).
So two of each class (two ints, two nested atoms each holding an int and an expression,
a symbol and an atom of the other kind), in any order, stand for every list: each loop's
step is the same for every item, its state is only appended to (induction on the loop).

``undominated`` (``fold.minmax_dominance``, proven for every argument list by induction on
its loop) is replaced by its specification: for a sound dominance predicate, it keeps a
non-empty subsequence of its input (every one is explored: each argument kept or not)
whose min is the input's, no kept argument dominating another.  The predicate the code
hands it is proven sound for the kind (``_offset_le`` / ``_offset_ge`` with ``sub`` as the
expression arithmetic every encoding rests on: an int equal to ``y - x``, or any
expression).  The output's form is proven on every path: no argument a Min / Max of its
own kind (given nested atoms the constructor built: flat), at most one int, and the
output's arguments are exactly the kept ones (an antichain of the predicate); two offsets
``x + d1``, ``x + d2`` of one expression are always comparable by it (so at most one
offset of each expression is kept).
"""
from __future__ import annotations

import inspect
from contextlib import contextmanager

import z3

from symshape.algebra import expr as E

from . import every, proves
from .alike import read_alike
from .code import Symbols, prove_code
from .pyint import Py, require, zmax, zmin
from .symcoeff import SInt, encode, patched, sym_ints, value
from .symexec import Explorer, Infeasible, raise_on_paths

S, T, U, W, P, Q = (E.Sym(i) for i in range(920, 926))

#: every statement of ``_minmax`` that mentions its argument list or what it gathers
MINMAX_READS = {
    "args": ("for x in args",),
    "x": ("for x in args", "if type(x) is int", "ints.append(x)", "atom = x.as_atom()",
          "exprs.append(x)"),
    "atom": ("atom = x.as_atom()", "if type(atom) is OpAtom and atom.kind == kind",
             "for y in atom.args"),
    "y": ("for y in atom.args", "(ints if type(y) is int else exprs).append(y)"),
    "ints": ("ints = []", "ints.append(x)", "(ints if type(y) is int else exprs).append(y)",
             "if ints", "exprs.append(pick(ints))"),
    "exprs": ("exprs: list = []", "exprs.append(x)", "exprs.append(pick(ints))",
              "(ints if type(y) is int else exprs).append(y)",
              "kept = undominated(exprs, _offset_le if kind == 'Min' else _offset_ge)"),
    "kept": ("kept = undominated(exprs, _offset_le if kind == 'Min' else _offset_ge)",
             "if len(kept) == 1", "return kept[0]", "kept.sort(key=_arg_key)",
             "return atom_expr(OpAtom(kind, tuple(kept)))"),
}


@contextmanager
def names_of(fn, **names):
    """``names`` bound in the globals ``fn`` looks its names up in (its module's, or the
    copy a mutation test gives it: ``type`` then the patched one, an SInt an int), then
    restored."""
    g = inspect.unwrap(fn).__globals__
    if g is not vars(E):
        names.setdefault("type", E.type)
    saved = {n: g[n] for n in names if n in g}
    g.update(names)
    try:
        yield
    finally:
        for n in names:
            del g[n]
        g.update(saved)


def _fold(kind: str):
    return zmin if kind == "Min" else zmax


def _args(kind: str) -> list:
    """Two arguments of each class the code tells apart, interleaved: ints, Min / Max
    atoms of the kind (each holding an int and an expression), other expressions (a
    symbol, an atom of the other kind); every int symbolic, every symbol any value."""
    k1, k2, k3, k4 = sym_ints("mm.k1 mm.k2 mm.k3 mm.k4")
    other = "Max" if kind == "Min" else "Min"
    return [k1, E.atom_expr(E.OpAtom(kind, (k3, P.expr))), T.expr, k2,
            E.atom_expr(E.OpAtom(other, (U.expr, W.expr))),
            E.atom_expr(E.OpAtom(kind, (Q.expr, k4)))]


def explore(kind: str) -> tuple:
    """``_minmax(kind, args)`` on ``_args`` along every path, ``undominated`` its
    specification (each argument kept or not; the kept ones' min the input's) and the
    pick its meaning.  Returns (paths of (condition, (output, what undominated got, what
    it kept, the predicate))), the arguments, the symbols)."""
    fold = _fold(kind)
    zs, py = Symbols(), Py()
    ex = Explorer([])

    def val(x):
        return encode(py, x, zs)

    def spec(items, dominates):
        items = list(items)
        keep = [x for i, x in enumerate(items) if ex.fork(z3.Bool("mm.kept%d" % i))]
        if not keep:                    # the spec keeps one at least of a non-empty input
            raise Infeasible()
        ex.assume(fold(*[val(x) for x in keep]) == fold(*[val(x) for x in items]))
        seen.append((items, keep, dominates))
        return list(keep)

    def run():
        seen[:] = []
        with names_of(E._minmax, undominated=spec,      # the builtins' meaning
                      min=lambda xs: SInt(zmin(*[value(x) for x in xs])),
                      max=lambda xs: SInt(zmax(*[value(x) for x in xs]))):
            out = E._minmax(kind, list(args))
        require(len(seen) == 1, "_minmax(%s) called undominated %d times", kind, len(seen))
        return (out,) + seen[0]
    seen: list = []
    with patched(ex):                   # an SInt is an int to expr.py (its sort keys too)
        args = _args(kind)
        paths = ex.paths(run)
    raise_on_paths(paths, "_minmax(%s)" % kind)
    return paths, args, zs


def prove_value(kind: str, paths, args, zs) -> None:
    """On every path the output's value is the min / max of the arguments' values."""
    py = Py()
    want = _fold(kind)(*[encode(py, a, zs) for a in args])
    impl = [encode(py, got[0], zs) for _, got in paths]
    prove_code(lambda *vs: z3.And(*[z3.Implies(z3.And(*pc), v == want)
                                    for (pc, _), v in zip(paths, vs)]),
               impl, P=py, what="_minmax(%s) (%d paths)" % (kind, len(paths)))


def shown(x) -> str:
    """``x`` (an output, a list of arguments) in a failure message: printing an SInt
    coefficient needs expr.py patched, so each argument shows as its class."""
    if isinstance(x, list):
        return "[%s]" % ", ".join(shown(a) for a in x)
    if _is_int(x):
        return "an int"
    atom = x.as_atom() if type(x) is E.Expr else None
    return "%s(%d arguments)" % (atom.kind, len(atom.args)) if type(atom) is E.OpAtom \
        else "an expression"


def _is_atom_of(out) -> bool:
    return type(out) is E.Expr and type(out.as_atom()) is E.OpAtom


def _same_kind(kind: str, x) -> bool:
    atom = x.as_atom() if type(x) is E.Expr else None
    return type(atom) is E.OpAtom and atom.kind == kind


def _is_int(x) -> bool:
    return type(x) is int or isinstance(x, SInt)


def _checked(kind: str, form) -> list:
    """read_alike on ``_minmax``, then its paths explored, ``form(paths)`` (the rule's
    structural claims) checked and their value proven."""
    read_alike(E._minmax, MINMAX_READS, exits_last=True)
    paths, args, zs = explore(kind)
    form(paths)
    # the specification of undominated holds for a sound predicate: the one handed over
    preds = {id(p) for _, (_, _, _, p) in paths}
    require(len(preds) == 1, "_minmax(%s) hands undominated several predicates", kind)
    _offset_sound(kind, paths[0][1][3])
    prove_value(kind, paths, args, zs)
    return paths


def _kept_is_output(kind: str, paths) -> None:
    """The output's arguments are exactly the kept ones: one kept is the output itself,
    several the arguments of a ``kind`` atom (in some order)."""
    for pc, (out, items, keep, _) in paths:
        got = [out] if len(keep) == 1 else (list(out.as_atom().args)
                                           if _same_kind(kind, out) else None)
        require(got is not None and len(got) == len(keep)
                and all(any(g is k for g in got) for k in keep),
                "_minmax(%s) returned %s for the kept %s", kind, shown(out), shown(keep))


def _offset_sound(kind: str, dominates) -> None:
    """The predicate ``_minmax`` hands ``undominated`` is sound for ``kind``: True only where
    ``y <= x`` (Min; Max: ``y >= x``), ``sub`` an int equal to ``y - x`` or any
    expression (every answer explored)."""
    ex = Explorer([])
    y, x = z3.Ints("mm.y mm.x")

    def sub(a, b):
        return SInt(y - x) if ex.fork(z3.Bool("mm.sub_int")) else S.expr

    def run():
        with names_of(dominates, sub=sub):
            return dominates("y", "x")
    with patched(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, "the %s dominance predicate" % kind)
    good = y <= x if kind == "Min" else y >= x
    prove_code(lambda *vs: z3.And(*[z3.Implies(z3.And(*pc, v), good)
                                    for (pc, _), v in zip(paths, vs)]),
               [z3.BoolVal(bool(got)) for _, got in paths],
               what="%s dominance predicate sound (%d paths)" % (kind, len(paths)))


def _offsets_comparable(dominates) -> None:
    """Two offsets ``x + d1``, ``x + d2`` of ``x = c1*s + c2*t`` (every coefficient and
    offset) are comparable by the predicate, the code's own ``sub`` run: one dominates."""
    c1, c2, d1, d2 = sym_ints("mm.c1 mm.c2 mm.d1 mm.d2")
    ex = Explorer([c1.v != 0, c2.v != 0])

    def run():
        a = E.Expr({(S,): c1, (T,): c2}, d1)
        b = E.Expr({(S,): c1, (T,): c2}, d2)
        with names_of(dominates):
            return dominates(a, b) or dominates(b, a)
    with patched(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, "offsets compared")
    prove_code(lambda *vs: z3.And(*[z3.Implies(z3.And(*pc), v)
                                    for (pc, _), v in zip(paths, vs)]),
               [z3.BoolVal(bool(got)) for _, got in paths], c1.v != 0, c2.v != 0,
               what="two offsets comparable (%d paths)" % len(paths))


_EVERY = ("every argument list of any length (each argument an int, a Min / Max atom of "
          "the kind holding ints and expressions, or any other expression: read alike "
          "in one loop, a nested atom's arguments in a second, so two of each class stand "
          "for any number; every int symbolic, every symbol any value), both kinds, along "
          "every path of _minmax, undominated as its specification (fold.minmax_dominance: "
          "a non-empty subsequence, every one explored, whose min is the input's, for the "
          "predicate _minmax hands it, proven sound for the kind: sub an int equal to "
          "y - x or any expression, every answer) and "
          "Python's min / max as their meaning: the output's value is the min / max of the "
          "arguments', and %s")


@proves("minmax.flatten", over=every(_EVERY % (
    "no argument of the output and none handed to undominated is a Min / Max of the "
    "output's kind (nested atoms the constructor built: flat)")))
def minmax_flatten():
    for kind in ("Min", "Max"):             # every kind, exhausted
        _checked(kind, lambda paths, kind=kind: _flat(kind, paths))


def _flat(kind: str, paths) -> None:
    """No argument handed to ``undominated``, none of the output, is a ``kind`` atom."""
    for pc, (out, items, keep, _) in paths:
        require(not any(_same_kind(kind, a) for a in items),
                "_minmax(%s) handed undominated a nested %s: %s", kind, kind, shown(items))
        require(not (_is_atom_of(out) and any(_same_kind(kind, a)
                                               for a in out.as_atom().args)),
                "_minmax(%s) returned %s, not flat", kind, shown(out))


@proves("minmax.const_merge", over=every(_EVERY % (
    "the ints are merged: at most one int among the arguments handed to undominated (the "
    "pick of all ints) and so among the output's, which are exactly those it kept")))
def minmax_const_merge():
    for kind in ("Min", "Max"):             # every kind, exhausted
        _checked(kind, lambda paths, kind=kind: _merged(kind, paths))


def _merged(kind: str, paths) -> None:
    """At most one int handed to ``undominated``; the output its kept arguments."""
    for pc, (out, items, keep, _) in paths:
        require(len([a for a in items if _is_int(a)]) <= 1,
                "_minmax(%s) handed undominated several ints: %s", kind, shown(items))
    _kept_is_output(kind, paths)


@proves("minmax.offset_dominance", over=every(_EVERY % (
    "the output's arguments are exactly those undominated kept (an antichain of the "
    "predicate), and two offsets x + d1, x + d2 of "
    "x = c1*s + c2*t (every coefficient and offset; sub reads x's terms alike, each "
    "cancelling) are comparable by it: at most one offset of an expression is kept")))
def minmax_offset_dominance():
    for kind in ("Min", "Max"):             # every kind, exhausted
        _checked(kind, lambda paths, kind=kind: _dominance(kind, paths))


def _dominance(kind: str, paths) -> None:
    """The output is the kept arguments; the predicate handed over (proven sound by
    ``_checked``) complete on offsets."""
    _kept_is_output(kind, paths)
    _offsets_comparable(paths[0][1][3])
