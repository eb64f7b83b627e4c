"""The simplifier: size expressions under the environment's replacements and ranges.

``simplify(env, x)`` substitutes the replacements (``s4 -> s2``) and, when ``x`` has
``Min`` / ``Max`` / ``//`` / ``%`` atoms, folds them by the ranges (``range_fold``).  Every
step is a rule of ``symshape/rules.py`` (the tag on its function names it) with a Z3 proof in
``proofs/``: each rewrite returns an expression equal to its input at every point where the
symbols lie in their ranges (and, for ``dominates_by_facts``, the recorded facts hold).

The functions take the ``ShapeEnv`` as their first argument and read its state (ranges,
replacements, facts, caches); they never change what it knows.
"""
from __future__ import annotations

from typing import Optional

from symshape.algebra import relations as R
from symshape.algebra.expr import (Expr, IntLike, OpAtom, Sym, add, atom_expr, floordiv, mod, smax,
                                   smin)
from symshape.algebra.expr import common_atoms, divide_terms, mul, scale, subs, undominated
from symshape.algebra.ranges import ValueRange, bound
from symshape.algebra.infinity import INT_OO
from symshape.rules import rule
from symshape.reasoning.z3bridge import implies

DEFAULT_RANGE = ValueRange(2, INT_OO)


def simplify(env, x: IntLike) -> IntLike:
    """Replacements substituted and range-decided Min / Max / Mod / FloorDiv folded
    (cached until the environment learns something)."""
    if type(x) is int:
        return x
    return env.memo("subs", x, _simplified, env, x)


def _simplified(env, x: Expr) -> IntLike:
    got = subs(x, env.replacements) if env.replacements else x
    if type(got) is Expr and has_op_atoms(got):
        got = range_fold(env, got)
    return got


@rule("rel.strip_positive_factor")
def strip_positive_factors(env, e: IntLike) -> IntLike:
    """``b*(L - 4*(L//4)) <op> 0`` is ``Mod(L, 4) <op> 0`` when b >= 1: a factor common
    to every term whose range is positive changes no comparison with 0."""
    if type(e) is int or e.const or len(e.terms) < 1:
        return e
    for atom in common_atoms(e):
        if type(atom) is Sym and env.ranges.get(atom, DEFAULT_RANGE).lower >= 1 \
                and atom not in env.replacements:
            inner = divide_terms(e, atom)
            return strip_positive_factors(env, range_fold(env, inner)) \
                if type(inner) is Expr else inner
    return e


def range_fold(env, x: IntLike) -> IntLike:
    """Each Min / Max / FloorDiv / Mod atom of ``x`` folded by the ranges (``fold_atom``),
    then the whole recombined (``recombine_divmod``, ``push_into_minmax``).  A rewrite, not
    a range: layer 3 of ``symshape.contract.exact_ranges``, deciding by layer 1."""
    if type(x) is int or not has_op_atoms(x):
        return x
    total: IntLike = x.const
    for term, c in x.terms:
        prod: IntLike = c
        for atom in term:
            prod = mul(prod, atom.expr if type(atom) is Sym else fold_atom(env, atom))
        total = add(total, prod)
    total = recombine_divmod(total)
    pushed = push_into_minmax(total)
    if pushed is not None:
        return range_fold(env, pushed)
    return total


def fold_atom(env, atom: OpAtom) -> IntLike:
    """One atom with its arguments folded: Min / Max by dominance, ``//`` / ``%`` by a
    small numerator."""
    args = [range_fold(env, a) for a in atom.args]
    kind = atom.kind
    if kind in ("Min", "Max"):
        return fold_minmax(env, kind, args)
    num, den = args
    small = fold_small_numerator(kind, num, den, env.ranges.__getitem__)
    if small is not None:
        return small
    return floordiv(num, den) if kind == "FloorDiv" else mod(num, den)


def _minmax(kind: str, args) -> IntLike:
    # expr's own Min / Max constructor (flattening, constants, offset dominance), by kind
    return smin(*args) if kind == "Min" else smax(*args)


def fold_minmax(env, kind: str, args) -> IntLike:
    """``Min(x, y, rest...) == Min(y, rest...)`` when ``y`` dominates ``x`` on the ranges
    or by the facts (``dominates``; the dropping is ``expr.undominated``'s)."""
    flat = _minmax(kind, args)
    a = flat.as_atom() if type(flat) is Expr else None
    if type(a) is not OpAtom or a.kind != kind:
        return flat
    return _minmax(kind, undominated(a.args, lambda y, x: dominates(env, kind, y, x)))


@rule("fold.small_numerator")
def fold_small_numerator(kind: str, num: IntLike, den: IntLike, rng) -> Optional[IntLike]:
    """``0 <= num < den`` on the ranges: ``num // den == 0`` and ``num % den == num``;
    None when the ranges do not show it."""
    if type(den) is int and den > 0:
        b = bound(num, rng)
        if b.lower >= 0 and b.upper < den:
            return 0 if kind == "FloorDiv" else num
    return None


def dominates(env, kind: str, y: IntLike, x: IntLike) -> bool:
    """y is always at least as good a pick as x: by the ranges, else (when facts
    relate them: ``a >= b + 2`` makes ``Max(a, b)`` just ``a``) by the facts."""
    if dominates_by_ranges(kind, y, x, env.ranges.__getitem__):
        return True
    return dominates_by_facts(env, kind, y, x)


@rule("fold.minmax_by_facts")
def dominates_by_facts(env, kind: str, y: IntLike, x: IntLike) -> bool:
    """The recorded facts imply ``y <= x`` (Min) / ``y >= x`` (Max)."""
    if not env.facts or env.is_folding_by_facts():
        return False
    syms = (y.free_symbols if type(y) is Expr else frozenset()) | \
        (x.free_symbols if type(x) is Expr else frozenset())
    if not any(s in fact_symbols(env) for s in syms):
        return False
    c = R.le(y, x) if kind == "Min" else R.ge(y, x)
    if type(c) is bool:
        return c
    with env.folding_by_facts():
        return env.decide(c) is True


def fact_symbols(env) -> frozenset:
    out: frozenset = frozenset()
    for f in env.facts:
        out |= f.free_symbols
    return out


# The dominance predicates below decide "``y`` is always at least as good a pick as ``x``"
# (Min: ``y <= x``; Max: ``y >= x``) for the engine's one Min / Max dominance routine,
# ``expr.undominated``, each from what its caller may know: ``dominates_by_ranges`` the
# interval bound (the hot path), ``dominates`` that or the recorded facts (the tracer),
# ``dominates_proven`` that or Z3 on the ranges alone (the printed contract).
def dominates_by_ranges(kind: str, y: IntLike, x: IntLike, rng) -> bool:
    """y is always at least as good a pick as x (Min: y <= x; Max: y >= x), by the
    interval bound of their difference over ``rng`` (a function from symbol to range)."""
    d = bound(add(x, scale(y, -1)) if kind == "Min" else add(y, scale(x, -1)), rng)
    return d.lower >= 0


def dominates_proven(kind: str, y: IntLike, x: IntLike, ranges) -> bool:
    """y is always at least as good a pick as x on every point of ``ranges`` (a mapping
    from symbol to range): the interval bound first, then Z3 on the ranges alone -- never
    on recorded facts, so a guard being rewritten is not used to rewrite itself (the
    printed contract, ``contract.guard_text.readable_minmax``)."""
    if dominates_by_ranges(kind, y, x, ranges.__getitem__):
        return True
    c = R.le(y, x) if kind == "Min" else R.ge(y, x)
    if type(c) is bool:
        return c
    return implies([], c, ranges) is True


def size(x: IntLike) -> int:
    """How many terms ``x`` has, atoms' arguments counted: what the rewrites shrink."""
    if type(x) is int:
        return 1
    n = len(x.terms) + (1 if x.const else 0)
    for term, _ in x.terms:
        for a in term:
            if type(a) is OpAtom:
                n += sum(size(b) for b in a.args)
    return n


@rule("fold.recombine_divmod", "fold.divmod_to_mod")
def recombine_divmod(x: IntLike) -> IntLike:
    """``c*k*(r//k) + c*Mod(r, k) == c*r`` (Python's division identity)."""
    if type(x) is int:
        return x
    coeffs = dict(x.terms)
    floors = {}
    for t, c in x.terms:
        if len(t) == 1 and type(t[0]) is OpAtom and t[0].kind == "FloorDiv":
            floors[t[0].args] = (t, c)
    for t, c in x.terms:
        if len(t) == 1 and type(t[0]) is OpAtom and t[0].kind == "Mod":
            r, k = t[0].args
            hit = floors.get((r, k))
            if hit is not None and type(k) is int and hit[1] == c * k and t in coeffs:
                del coeffs[t]
                del coeffs[hit[0]]
                rest = _rebuild(coeffs, x.const)
                return recombine_divmod(add(rest, scale(r, c)))
    # c*r - c*k*(r//k) == c*Mod(r, k): L - 4*(L//4) is Mod(L, 4)
    for (r, k), (t, d) in floors.items():
        if type(k) is int and k > 0 and d % k == 0:
            c = -d // k
            cand = add(add(add(x, scale(r, -c)), scale(atom_expr(t[0]), -d)),
                       scale(mod(r, k), c))
            if size(cand) < size(x):
                return recombine_divmod(cand)
    return x


def _rebuild(coeffs, const) -> IntLike:
    total: IntLike = const
    for t, c in coeffs.items():
        prod: IntLike = c
        for a in t:
            prod = mul(prod, atom_expr(a))
        total = add(total, prod)
    return total


@rule("fold.push_minmax")
def push_into_minmax(x: IntLike) -> Optional[IntLike]:
    """``r + Min(a, b) == Min(r + a, r + b)`` and ``r - Max(a, b) == Min(r - a, r - b)``
    (and dually), applied only when it makes the expression smaller:
    ``s0 - Max(0, s0 - 3)`` becomes ``Min(3, s0)``."""
    if type(x) is int:
        return None
    hits = [(t, c) for t, c in x.terms if c in (1, -1) and len(t) == 1
            and type(t[0]) is OpAtom and t[0].kind in ("Min", "Max")]
    if len(hits) != 1:
        return None
    (atom,), c = hits[0]
    rest = add(x, scale(atom_expr(atom), -c))
    kind = atom.kind if c == 1 else ("Max" if atom.kind == "Min" else "Min")
    cand = _minmax(kind, [add(rest, scale(a, c)) for a in atom.args])
    return cand if size(cand) < size(x) else None


def has_op_atoms(x: Expr) -> bool:
    return any(type(a) is not Sym for t, _ in x.terms for a in t)


def bound_of(env, x: IntLike) -> ValueRange:
    """The value range of ``x`` under the current ranges (cached until they change): range
    layer 2, ``env.bound`` (``symshape.contract.exact_ranges``)."""
    return env.memo("bound", x, _bound_now, env, x)


def _bound_now(env, x: IntLike) -> ValueRange:
    return bound(simplify(env, x), env.ranges.__getitem__)