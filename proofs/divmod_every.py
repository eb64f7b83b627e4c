"""Proofs of the ``floordiv`` / ``mod`` rewrites by an int divisor ``b > 1`` -- the
coefficient split and reduction, the common gcd and the nested operation -- for every input
of their domain: ``expr.py``'s own ``floordiv`` / ``mod`` run along every path on
``a = c1*s + c2*A + k`` (``A`` the operation's own atom ``FloorDiv(t, c)`` / ``Mod(t, c)``,
so the nesting rule is reached) with every coefficient, the constant, ``c`` and ``b``
symbolic integers (``proofs/symcoeff.py``).  The code treats the terms of ``a`` one by one
(each coefficient split, reduced or divided by the gcd on its own; an atom looked into only
when it is the whole remainder), so two terms -- one that may be nested, one that may not
-- and a constant reach its every path.

What Z3 cannot do alone here is nonlinear: floor division by a symbolic divisor.  Three
things make each path's claim linear:

* each coefficient is written ``c = b*q + r`` with ``0 <= r < b`` (every integer is so
  written, once: the domain is unchanged), and the code's ``c // b`` / ``c % b`` *is*
  ``q`` / ``r`` (``ExactPy``: a division whose quotient is known, checked against the
  definition of ``//`` under the hypotheses);
* ``math.gcd`` is a fresh ``g >= 0`` dividing each number it was asked about (directly or
  through an earlier gcd: ``gcd(gcd(b, c1), c2)`` divides ``b``, ``c1`` and ``c2``), each
  with a fresh witness ``u == g*w`` that is also the code's quotient ``u // g``.  The true
  gcd is one such ``g``: every path the code takes for it is explored (and possibly more);
* lemma instances: a lemma about ``//`` / ``%`` (``LEMMAS``) proven once for all integers,
  its premise proven on the path, its conclusion added to the path's hypotheses
  (``(b*Y + R) // b == Y + R // b``, ``(g*X) // (g*m) == X // m``, ``(t // c) // b ==
  t // (c*b)`` ...).  A recursive ``floordiv`` / ``mod`` call stands for its own value (the
  induction hypothesis: each is on a smaller input, ``symcoeff._opaque``).
"""
from __future__ import annotations

import builtins
import math
from typing import Callable, Dict, List, NamedTuple

import z3

from symshape.algebra import expr as E

from . import every, proves, z3cache
from .code import Symbols, prove_code
from .pyint import RLIMIT, ProofFailure, Py, limited_solver, prove, require
from .symcoeff import SInt, divisors_of, encode, patched, value
from .symexec import Explorer, TrackedPy

S, T = E.Sym(920), E.Sym(921)


def _key(a, b) -> tuple:
    return z3.simplify(a).sexpr(), z3.simplify(b).sexpr()


class ExactPy(TrackedPy):
    """``Py`` that knows some quotients: ``a // b`` for a registered pair is its known
    quotient (``exact``), not a fresh integer.  Registered only where it is Python's
    ``//`` under the path's hypotheses (``c == b*q + r`` with ``0 <= r < b``; ``u == g*w``
    with ``g != 0``, the code having raised on ``g == 0``)."""

    def __init__(self, exact: Dict[tuple, object], b) -> None:
        super().__init__()
        self.exact = dict(exact)
        self.b = b
        self.divides: Dict[str, List] = {}     # gcd term -> the numbers it divides
        self.gcds: List = []                   # each gcd the path computed
        self.gcd_divided = False               # the code divided b by a gcd
        self.gcd_facts: List = []              # what the last gcd is (also in ``side``)
        self.b_fact: List = []                 # ... of them, what it says of b
        self.split_keys = {k for k in exact}   # c // b, c % b of a coefficient: a split
        self.prune = frozenset()               # ways a path is not followed on (Pruned)
        self.made = 0                          # fresh names made on this path

    def fresh(self, stem: str):
        """A new integer of this path (its name unique on the path, the same on every
        run: a path's queries are proven on their own)."""
        self.made += 1
        return z3.Int("%s!p%d" % (stem, self.made))

    def floordiv(self, a, b):
        key = _key(value_of(a), value_of(b))
        q = self.exact.get(key)
        if q is None:
            return super().floordiv(a, b)
        if key[0] == z3.simplify(self.b).sexpr() and key[1] != key[0]:
            self.gcd_divided = True
            if "gcd" in self.prune:
                raise Pruned("the gcd path")
        elif key in self.split_keys and "split" in self.prune:
            raise Pruned("a coefficient split")
        return q


class Pruned(ArithmeticError):
    """A path that left the code a way the proof does not cover (another rule's domain):
    not followed further."""


def value_of(x):
    """A Z3 term of an int or a Z3 term."""
    return z3.IntVal(x) if isinstance(x, int) else x


def _gcd_model(ex: Explorer) -> Callable:
    """``math.gcd`` as the module docstring states it, on the current path's ``ExactPy``:
    the numbers a gcd of a gcd divides are the first one's (its own value is not needed,
    and a fact left out explores more paths, never fewer)."""
    def gcd(a, b):
        if not isinstance(a, SInt) and not isinstance(b, SInt):
            return math.gcd(a, b)
        P = ex.P
        g = P.fresh("gcd")
        nums = P.divides.get(z3.simplify(value(a)).sexpr(), [value(a)]) + [value(b)]
        facts = [g >= 0]
        for u in nums:
            w = P.fresh("w")
            facts.append(u == g * w)
            P.exact[_key(u, g)] = w
            if z3.eq(z3.simplify(u), z3.simplify(P.b)):
                P.b_fact = [g >= 0, u == g * w]     # what the claim needs: b // g
        P.side.extend(facts)
        P.gcd_facts = facts             # the last gcd's: the one the code divides by
        P.divides[z3.simplify(g).sexpr()] = nums
        P.gcds.append(g)
        return SInt(g)
    return gcd


# ---------------------------------------------------------------------------- lemmas
class Lemma(NamedTuple):
    """``premise(P, *xs) => conclusion(P, *xs)`` for all integers ``xs`` (Python's ``//``
    and ``%`` built in ``P``); ``arity`` variables."""
    name: str
    arity: int
    premise: Callable
    conclusion: Callable

    def prove(self) -> None:
        """The lemma for all integers."""
        P = Py()
        xs = z3.Ints(" ".join("%s_%d" % (self.name, i) for i in range(self.arity)))
        P.prove(self.conclusion(P, *xs), self.premise(P, *xs), what="lemma " + self.name)


def _fd(P, a, b):
    return P.floordiv(a, b)


LEMMAS = {
    # (b*Y + R) // b == Y + R // b;  (b*Y + R) % b == R % b
    "split FloorDiv": Lemma("splitfd", 4, lambda P, V, b, Y, R: [b > 0, V == b * Y + R],
                            lambda P, V, b, Y, R: _fd(P, V, b) == Y + _fd(P, R, b)),
    "split Mod": Lemma("splitmod", 4, lambda P, V, b, Y, R: [b > 0, V == b * Y + R],
                       lambda P, V, b, Y, R: P.mod(V, b) == P.mod(R, b)),
    # 0 <= R < b: R // b == 0, R % b == R
    "small FloorDiv": Lemma("smallfd", 2, lambda P, R, b: [0 <= R, R < b],
                            lambda P, R, b: _fd(P, R, b) == 0),
    "small Mod": Lemma("smallmod", 2, lambda P, R, b: [0 <= R, R < b],
                       lambda P, R, b: P.mod(R, b) == R),
    # (g*X) // (g*m) == X // m;  (g*X) % (g*m) == g*(X % m)
    "gcd FloorDiv": Lemma("gcdfd", 5, lambda P, R, b, g, X, m: [g > 0, m > 0, b == g * m,
                                                                R == g * X],
                          lambda P, R, b, g, X, m: _fd(P, R, b) == _fd(P, X, m)),
    "gcd Mod": Lemma("gcdmod", 5, lambda P, R, b, g, X, m: [g > 0, m > 0, b == g * m,
                                                            R == g * X],
                     lambda P, R, b, g, X, m: P.mod(R, b) == g * P.mod(X, m)),
    # (t // c) // b == t // (c*b) for b, c > 0;  (t % c) % b == t % b for b > 0, c == b*w
    "nested FloorDiv": Lemma("nestfd", 4, lambda P, t, c, b, w: [b > 0, c > 0],
                             lambda P, t, c, b, w: _fd(P, _fd(P, t, c), b) == _fd(P, t, c * b)),
    "nested Mod": Lemma("nestmod", 4, lambda P, t, c, b, w: [b > 0, c == b * w],
                        lambda P, t, c, b, w: P.mod(P.mod(t, c), b) == P.mod(t, b)),
}


def instance(name: str, P: Py, facts: List, terms: tuple, what: str, rewrite=()):
    """The conclusion of lemma ``name`` for ``terms`` (Z3 terms of the path, built in its
    ``P``), after proving its premise from ``facts`` (the path's hypotheses; the main
    claim's proof shows them consistent).  A conjunct of the premise that is a polynomial
    identity once the ``rewrite`` pairs (``(x, t)``: ``x == t`` among the facts) are
    substituted needs no solver; the rest is one query."""
    return instance_of(LEMMAS[name], P, facts, terms, what, rewrite)


def instance_of(lemma: Lemma, P: Py, facts: List, terms: tuple, what: str, rewrite=()):
    """``instance`` of a lemma given itself (not by its name in ``LEMMAS``)."""
    rest = []
    for p in lemma.premise(P, *terms):
        if not z3.is_true(z3.simplify(z3.substitute(p, *rewrite), som=True)):
            rest.append(z3.simplify(p, som=True))
    concl = lemma.conclusion(P, *terms)
    if rest:
        s = limited_solver(RLIMIT, *facts, z3.Not(z3.And(*rest)))
        if z3cache.check(s, RLIMIT) != z3.unsat:
            raise ProofFailure("%s: the premise of %s is not proven: %s"
                               % (what, lemma.name, z3.And(*rest)))
    return concl


def _rewrites(facts: List) -> List[tuple]:
    """The facts ``x == t`` with ``x`` a variable other than ``b``, as substitution pairs."""
    out = []
    for f in facts:
        if z3.is_eq(f):
            x, t = f.arg(0), f.arg(1)
            x = z3.simplify(x)
            if z3.is_const(x) and not z3.is_int_value(x) and str(x) != "b":
                out.append((x, t))
    return out


# ---------------------------------------------------------------------------- the runs
class Family(NamedTuple):
    """What one run of ``floordiv`` / ``mod`` over the domain found: the number of paths
    and the ways out of the code they took (``_path_kind``)."""
    paths: int
    kinds: frozenset


def _top_atom(out, kind: str, atom):
    """The op atom of ``kind`` the code made among the output's terms (not the input's
    ``atom``, which a quotient keeps as a term), or None."""
    if type(out) is not E.Expr:
        return None
    found = [a for t, _ in out.terms for a in t
             if type(a) is E.OpAtom and a.kind == kind and a is not atom]
    return found[0] if found else None


def _path_kind(P: ExactPy, out, kind: str, atom) -> str:
    """Which way out of the code the path took: ``int`` (no remainder term), ``gcd`` (the
    divisor divided by the gcd), ``nested`` (the atom's own argument ``t`` divided) or
    ``split`` (the remainder terms kept under the operation)."""
    top = _top_atom(out, kind, atom)
    if top is None:
        return "int"
    if P.gcd_divided:
        return "gcd"
    arg = top.args[0]
    return "nested" if arg is T.expr else "split"      # the input atom's own argument


def divmod_family(kind: str, ways: frozenset, what: str, prune: frozenset = frozenset(),
                  nested: bool = False) -> Family:
    """``floordiv`` / ``mod`` (``kind``) of ``a = c1*s + c2*A + k`` by ``b > 1`` along every
    path (see the module docstring): on each that leaves the code one of the ``ways``
    (``_path_kind``: the rule's domain is the inputs the code sends that way), the output
    equals Python's operator; at least one path must.  A path is not followed past the
    point where it takes one of the ways in ``prune`` (``ExactPy``).  ``nested``: the
    remainders of ``c1``, ``c2``, ``k`` mod ``b`` are 0, 1, 0 (the remainder of ``a`` is
    ``A`` itself: the inputs the code looks into ``A`` for)."""
    b, q1, q2, qk, c = z3.Ints("b q1 q2 qk c")
    rems = [z3.IntVal(0), z3.IntVal(1), z3.IntVal(0)] if nested else z3.Ints("r1 r2 rk")
    coeffs = list(zip((q1, q2, qk), rems))
    c1, c2, k = (b * q + r for q, r in coeffs)
    hyps = [b > 1, c != 0, c1 != 0, c2 != 0]
    hyps += [z3.And(0 <= r, r < b) for _, r in coeffs]
    exact = {_key(n, b): q for n, (q, _) in zip((c1, c2, k), coeffs)}
    for n, (q, _) in zip((c1, c2, k), coeffs):      # each is Python's // (checked)
        prove(z3.And(b * q <= n, n < b * q + b), hyps, what="%s: %s // b" % (what, n))
    zs = Symbols()
    ex = Explorer(hyps)

    def one_path():
        op = E.floordiv if kind == "FloorDiv" else E.mod    # the patched one (symcoeff)
        ex.P = ExactPy(exact, b)
        ex.P.prune = prune
        E.gcd = _gcd_model(ex)          # inside patched(): restored on its exit
        atom = E.OpAtom(kind, (T.expr, SInt(c)))
        out = op(E.Expr({(S,): SInt(c1), (atom,): SInt(c2)}, SInt(k)), SInt(b))
        return out, atom, ex.P
    with patched(ex):
        paths = ex.paths(one_path)
    kinds = set()
    for pc, got in paths:
        if isinstance(got, Pruned):
            continue
        if isinstance(got, Exception):
            raise ProofFailure("%s: raises %s: %s on the feasible path %s"
                               % (what, builtins.type(got).__name__, got, z3.And(*pc)))
        out, atom, P = got
        path_kind = _path_kind(P, out, kind, atom)
        kinds.add(path_kind)
        if path_kind not in ways:
            continue
        _prove_path(P, out, atom, kind, path_kind, zs, hyps + pc, (b, c, c1, c2, k, coeffs),
                    "%s (%s path %s)" % (what, path_kind, z3.And(*pc)))
    require(bool(kinds & ways), "%s: no path leaves the code as %s (only %s)", what,
            sorted(ways), sorted(kinds))
    return Family(len(paths), frozenset(kinds))


def _prove_path(P: ExactPy, out, atom, kind, path_kind, zs, facts, ins, what) -> None:
    """The path's output equals Python's ``a // b`` (``a % b``), with the lemma instances
    its way out needs (the module docstring)."""
    b, c, c1, c2, k, coeffs = ins
    s = zs[S]
    # the input's atom: its definition on the nested path (the lemma looks into it), any
    # integer elsewhere (the code reads it only as a term: a stronger, linear claim)
    nested = path_kind == "nested"
    A = z3.Int("atom!A")
    opaque = None if nested else {id(atom): A}
    if nested:
        A = encode(P, E.atom_expr(atom), zs)
    V = c1 * s + c2 * A + k
    Y = coeffs[0][0] * s + coeffs[1][0] * A + coeffs[2][0]
    got = encode(P, out, zs, opaque)
    fd = kind == "FloorDiv"
    goal = P.floordiv(V, b) if fd else P.mod(V, b)
    top = _top_atom(out, kind, atom)
    if top is not None:
        X, m = (encode(P, y, zs, opaque) for y in top.args)
    # what the path knows: its hypotheses, and on the gcd path what the gcd is
    known = facts + (P.gcd_facts if path_kind == "gcd" else [])

    rewrite = _rewrites(P.gcd_facts) if path_kind == "gcd" else []

    def lemma(name: str, *terms):
        return instance(name, P, known, terms, what, rewrite)
    if path_kind == "int":
        rk = coeffs[2][1]
        extra = [lemma("split " + kind, V, b, Y, rk), lemma("small " + kind, rk, b)]
    elif path_kind == "split":
        extra = [lemma("split " + kind, V, b, Y, X)]
    elif path_kind == "nested":
        extra = [lemma("split " + kind, V, b, Y, A),
                 lemma("nested " + kind, zs[T], c, b, P.floordiv(c, b))]
    elif fd:                    # the gcd of b and every coefficient: a == g*X
        extra = [lemma("gcd FloorDiv", V, b, P.gcds[-1], X, m)]
    else:                       # the gcd of b and every remainder: a == b*Y + g*X
        g = P.gcds[-1]
        extra = [lemma("split Mod", V, b, Y, g * X), lemma("gcd Mod", g * X, b, g, X, m)]
    defined = [d != 0 for d in divisors_of(P, out, zs)]
    # the quotients' definitions are left out: the lemma instances say all the claim needs
    # of them (fewer hypotheses: a stronger claim, and a linear one)
    # the lemma instances hold on the path (their premises were proven from its facts), and
    # for a remainder they are all the claim needs, with b > 1, c != 0 and, of the gcd, what
    # it says of b (the divisors b // g, c*b are not 0): proven without the rest of the
    # path's facts, a stronger claim, and a linear one; a quotient also needs the path's
    # facts (which of its terms the code kept)
    gcd = P.b_fact if path_kind == "gcd" else []
    prove_code(lambda v: z3.And(v == goal, *defined), [got], b > 1, c != 0, gcd, extra,
               facts if fd else [], what=what)


# ---------------------------------------------------------------------------- the proofs
_DOMAIN = ("every a = c1*s + c2*%s(t, c) + k and divisor b > 1 (coefficients, constant, c "
           "and b symbolic integers) that the code %s, along every such path")


def _lemmas(*names: str) -> None:
    for name in names:
        LEMMAS[name].prove()


@proves("floordiv.common_gcd", over=every(_DOMAIN % (
    "FloorDiv", "divides by the gcd g > 1 of b and every coefficient: (g*x)//(g*m) == x//m")))
def floordiv_common_gcd():
    _lemmas("gcd FloorDiv")
    divmod_family("FloorDiv", frozenset({"gcd"}), "floordiv common gcd",
                  prune=frozenset({"split"}))


@proves("floordiv.nested", over=every(_DOMAIN % (
    "FloorDiv", "splits to q + FloorDiv(t, c)//b and merges to FloorDiv(t, c*b) (c > 0)")))
def floordiv_nested():
    _lemmas("split FloorDiv", "nested FloorDiv")
    divmod_family("FloorDiv", frozenset({"nested"}), "nested floordiv",
                  prune=frozenset({"gcd"}), nested=True)


@proves("mod.coeff_reduce", over=every(_DOMAIN % (
    "Mod", "reduces mod b without a common gcd or a nested Mod (an int, or Mod(r, b))")))
def mod_coeff_reduce():
    _lemmas("split Mod", "small Mod")
    divmod_family("Mod", frozenset({"int", "split"}), "mod coefficient reduction",
                  prune=frozenset({"gcd"}))


@proves("mod.common_gcd", over=every(_DOMAIN % (
    "Mod", "reduces mod b, then divides by the gcd g > 1 of b and the remainders: "
           "Mod(g*x, g*m) == g*Mod(x, m)")))
def mod_common_gcd():
    _lemmas("split Mod", "gcd Mod")
    divmod_family("Mod", frozenset({"gcd"}), "mod common gcd")


@proves("mod.nested", over=every(_DOMAIN % (
    "Mod", "reduces to Mod(Mod(t, c), b) and merges to Mod(t, b) (b divides c)")))
def mod_nested():
    _lemmas("split Mod", "nested Mod")
    divmod_family("Mod", frozenset({"nested"}), "nested mod", prune=frozenset({"gcd"}),
                  nested=True)
