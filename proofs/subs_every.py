"""``subst.subs_replace`` for every input: ``expr.subs`` and ``ShapeEnv.set_replacement`` run
along every path on sizes whose coefficients and constant are symbolic integers.

``subs(x, m)`` reads ``x`` term by term and each term atom by atom: a symbol is looked up in
``m`` (mapped or not), an operation atom is rebuilt from its arguments each substituted by
the recursive call (the induction hypothesis: each argument is a smaller size; here each is
a symbol, mapped or not, the recursion's base case run as written).  The products and sums it
builds are ``E.mul`` / ``E.add`` run as written on the symbolic coefficients; a rebuilt
``FloorDiv`` / ``Mod`` runs as written on two ints (Python's operator, 0 raising) and is
taken at its specification otherwise (its atom, ``a // b`` / ``a % b``: the ``floordiv.*`` /
``mod.*`` proofs; read as uninterpreted functions, equal to Python's where the code computed
them), a ``Min`` / ``Max`` is ``_minmax`` run as written.  So
``c1*s*t + c2*s*A(u, w) + k`` (``s``, ``u``, ``w`` mapped, ``t`` not, ``A`` each of the four
operation kinds, every coefficient and constant symbolic) reaches every path of the term
loop for every count of terms and atoms (a product's factor is an int or an expression on
either side, the first factor a symbol mapped or not, a later one a mapped symbol or a
rebuilt atom), and each mapped symbol's value is an int (symbolic: a divisor may become 0,
where ``subs`` raises as Python does) or an expression (opaque: ``subs`` only multiplies by
it and rebuilds atoms over it).  The early returns
(an int, an empty mapping, a mapping of other symbols) give their input back.

``ShapeEnv.replace`` is ``solver.replace`` (proven by ``solve.replacement_range``, its facts
by ``solve.refresh_facts``) around ``set_replacement``, the part that keeps the replacements
over root symbols: it runs as written on earlier replacements over root symbols (one that
mentions the replaced symbol, one that does not; the loop treats each alike) and a value of
either kind, along every path: afterwards each earlier replacement is its old value with the
symbol substituted, the new one is recorded, and no replaced symbol occurs in any value.
"""
from __future__ import annotations

from contextlib import contextmanager

import z3

from symshape.algebra import expr as E
from symshape.reasoning.env import ShapeEnv

from . import every, proves
from .code import Symbols, prove_code
from .pyint import OpaqueDivMod, Py, prove, require
from .symcoeff import SInt, divisors_of, encode, patched as coeff_patched, sym_ints, value
from .symexec import Explorer, raise_on_paths

#: s, u mapped; t, w not; z mapped but absent; V an opaque value expression
S, T, U, W, Z, V, V2 = (E.Sym(i) for i in range(930, 937))


def _int_value(k, other=False):
    """a symbolic int"""
    return k


def _expr_value(k, other=False):
    """an opaque expression"""
    return (V2 if other else V).expr


def _term_size(kind: str):
    def build(c1, c2, k):
        a = E.OpAtom(kind, (U.expr, W.expr))
        return E.Expr({(S, T): c1, (S, a): c2}, k)
    build.__doc__ = "c1*s*t + c2*s*%s(u, w) + k" % kind
    return build


#: the sizes substituted into, and the kinds of value a mapped symbol gets
_SIZES = (_term_size("FloorDiv"), _term_size("Mod"), _term_size("Min"), _term_size("Max"))
_VALUES = (_int_value, _expr_value)


class _Opaque(OpaqueDivMod):
    """``//`` and ``%`` as uninterpreted functions (``OpaqueDivMod``), linked to the
    quotients the code computed on ints."""

    def links(self, P) -> list:
        """The functions at the quotients ``P`` (the code's own, on ints) computed: there
        they are Python's ``//`` and ``%`` (so one interpretation of them is Python's)."""
        return [z3.And(self.FD(a, b) == q, self.MD(a, b) == a - b * q)
                for a, b, q in P.quotients]


@contextmanager
def _rebuilt(ex: Explorer):
    """``subs`` on SInt coefficients, a rebuilt ``FloorDiv`` / ``Mod`` the code itself on
    two ints (Python's operator; 0 raises) and its atom otherwise (its specification: the
    ``floordiv.*`` / ``mod.*`` proofs)."""
    saved = (E.floordiv, E.mod)
    with coeff_patched(ex, inductive=False):
        E.floordiv, E.mod = _int_or_atom("FloorDiv", saved[0]), _int_or_atom("Mod", saved[1])
        try:
            yield
        finally:
            E.floordiv, E.mod = saved


def _int_or_atom(kind: str, real):
    def call(a, b):
        if isinstance(a, (int, SInt)) and isinstance(b, (int, SInt)):
            return real(a, b)
        return E.atom_expr(E.OpAtom(kind, (a, b)))
    return call


def _value_of(P: Py, v, zs):
    return value(v) if isinstance(v, SInt) else encode(P, v, zs)


def _subs_every(build, vs_kind, vu_kind) -> int:
    """``subs(x, {s: vs, u: vu})`` on every path: equal to ``x`` read with ``s``, ``u``
    standing for their values, wherever ``x``'s divisors after substitution are non-zero."""
    c1, c2, k, ks, ku, kw = sym_ints("c1 c2 k ks ku kw")
    hyps = [c1.v != 0, c2.v != 0]
    ex = Explorer(hyps)

    def run():
        x = build(c1, c2, k)
        m = {S: vs_kind(ks), U: vu_kind(ku), W: vu_kind(kw, True)}
        try:
            return x, m, E.subs(x, m)
        except ZeroDivisionError as e:      # an int divisor 0 after substitution
            return x, m, e
    with _rebuilt(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, "subs")
    P, zs = _Opaque(), Symbols()
    got, want = [], []
    links = P.links(ex.P)
    for pc, (x, m, out) in paths:       # one query: on each path, under its condition
        sub = Symbols(zs)
        for s, v in m.items():
            sub[s] = _value_of(P, v, zs)
        defined = [d != 0 for d in divisors_of(P, x, sub)]
        if isinstance(out, ZeroDivisionError):      # Python raises there too
            prove(z3.Not(z3.And(*defined)), hyps, pc, what="subs raises only dividing by 0")
            continue
        got.append(encode(P, out, zs))
        want.append((z3.And(*pc, *defined), encode(P, x, sub)))
    prove_code(lambda *g: z3.And(*[z3.Implies(h, a == b) for a, (h, b) in zip(g, want)]),
               got, hyps, links, P=P, what="subs(%s, {s: %s, u: %s}) on %d paths" % (
                   build.__doc__, vs_kind.__doc__, vu_kind.__doc__, len(got)))
    return len(paths)


def _unchanged_every() -> None:
    """An int, an empty mapping and a mapping of symbols ``x`` lacks: ``x`` itself."""
    c1, c2, k = sym_ints("c1 c2 k")
    ex = Explorer([c1.v != 0, c2.v != 0])

    def run():
        x = _SIZES[0](c1, c2, k)
        return x, E.subs(k, {S: V.expr}), E.subs(x, {}), E.subs(x, {Z: V.expr})
    with coeff_patched(ex, inductive=True, opaque=True):
        paths = ex.paths(run)
    raise_on_paths(paths, "subs")
    for pc, (x, on_int, empty, other) in paths:
        require(on_int is k and empty is x and other is x,
                "subs changed an input it had nothing to substitute in")


class _Env:
    """What ``set_replacement`` touches of the environment: the replacements (and two
    bookkeeping hooks)."""

    def __init__(self, replacements) -> None:
        self.replacements = dict(replacements)

    def _note(self, s) -> None:
        """(records why ``s`` changed: nothing to prove)"""

    def _bump(self) -> None:
        """(invalidates caches: nothing to prove)"""


def _replacement_every(v_kind) -> None:
    """``set_replacement(s, v)`` with earlier replacements ``t -> c1*s + c2*w + k`` and
    ``u -> c3*w + k2`` (over root symbols) and ``v`` of ``v_kind``, every path."""
    c1, c2, c3, k, k2, kv = sym_ints("c1 c2 c3 k k2 kv")
    hyps = [c1.v != 0, c2.v != 0, c3.v != 0]
    ex = Explorer(hyps)

    def run():
        before = {T: E.Expr({(S,): c1, (W,): c2}, k), U: E.Expr({(W,): c3}, k2)}
        env = _Env(before)
        v = v_kind(kv)
        ShapeEnv.set_replacement(env, S, v)
        return before, v, env.replacements
    with coeff_patched(ex, inductive=True, opaque=True):
        paths = ex.paths(run)
    raise_on_paths(paths, "set_replacement")
    P, zs = _Opaque(), Symbols()
    got, want = [], []
    for pc, (before, v, after) in paths:
        require(set(after) == set(before) | {S}, "the replacements after: %s", list(after))
        for r in after.values():
            if isinstance(r, E.Expr):
                require(not (r.free_symbols & set(after)),
                        "a replacement mentions a replaced symbol")
        sub = Symbols(zs)
        sub[S] = _value_of(P, v, zs)
        got += [_value_of(P, after[t], zs) for t in (T, U, S)]
        here = z3.And(*pc)
        want += [(here, encode(P, before[T], sub)), (here, encode(P, before[U], sub)),
                 (here, sub[S])]
    prove_code(lambda *g: z3.And(*[z3.Implies(h, a == b) for a, (h, b) in zip(g, want)]),
               got, hyps, P=P, what="set_replacement(s, %s) on %d paths" % (
                   v_kind.__doc__, len(paths)))


@proves("subst.subs_replace", over=every(
    "every size, by its terms: c1*s*t + c2*s*A(u, w) + k (coefficients and constant "
    "symbolic integers, A each of FloorDiv / Mod / Min / Max, s, u, w mapped to symbolic "
    "ints or opaque expressions, t not; the code reads a size term by term, atom by atom) along "
    "every path, the early returns; and set_replacement on earlier replacements over root "
    "symbols (mentioning the symbol or not) with a value of either kind, every path "
    "(solver.replace's range and facts: solve.replacement_range, solve.refresh_facts)"))
def subst_subs_replace():
    for build in _SIZES:
        for vs in _VALUES:
            for vu in _VALUES:
                _subs_every(build, vs, vu)
    _unchanged_every()
    for v in _VALUES:
        _replacement_every(v)
