"""``contract.readable_minmax`` for every guard: the code run along every path, the
expressions and conditions it only compares, adds and hands on as opaque values, the
callees it relies on as their proven specifications.

How the code reads a guard ``c``: its class, operator and expression (a guard that is no
``==`` of an expression is returned as is); the expression's terms, each alike, through
its being one Min / Max atom with a coefficient of 1 or -1 (a *hit*), how many terms and
hits there are, the constant's being 0, the hits' kinds and coefficients.  So ``k1*A +
k2*B + k0`` (``A``, ``B`` Min / Max atoms of every pair of kinds), ``k1*A + k3*t + k0``
(``t`` a term of any other class: a Min / Max atom with another coefficient is one) and
three hits, each hit's coefficient 1 or -1 (a finite domain, exhausted), ``k3`` and ``k0``
symbolic, cover every path of that part.  Past it the code reads:

* the atoms' arguments only through ``undominated`` (``fold.minmax_dominance``: a
  non-empty subsequence whose min / max is the input's, for the sound predicate
  ``dominates_proven`` -- ``range.bound``, ``z3bridge.implies`` -- or the ``KeyError`` of
  a symbol without a range) and ``smin`` / ``smax`` (``minmax.flatten``,
  ``minmax.const_merge``, ``minmax.offset_dominance``: an expression equal to the min /
  max), each explored as every answer its specification allows; two arguments stand for
  any number (the lists are read alike: ``READS``);
* the expressions it builds through ``sub`` / ``mul`` (the exact arithmetic every
  encoding rests on) and their equality (``in``, ``!=``): each an opaque value, equality
  any answer, True only where the values are equal;
* ``R.le`` / ``R.ge`` as the relation normal forms (``rel.le_gcd_ceil``): an opaque
  condition meaning ``y <= a`` (Max: ``y >= a``), or True / False where that holds / fails
  at the point; ``_undivided`` as its own lemma proven here for every relation
  (``undivided_every``): a condition of the same meaning (``p`` itself stands for
  every one: its caller reads only its class and equality); ``R.combine`` run as
  written (its reads of its list alike: ``READS``), its equality tests any answer.

On every path the printed guard (where it is not ``c`` itself) holds exactly where ``c``
does, at every point the path admits.
"""
from __future__ import annotations

import inspect
import itertools
from types import SimpleNamespace

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R

from . import every, proves
from .alike import read_alike
from .code import Symbols, prove_code
from .minmax_rules import names_of
from .pyint import require, zmax, zmin
from .reads import require_reads, source_tree
from .symcoeff import SInt, patched, sym_ints
from .symexec import Explorer, Infeasible, TrackedPy, raise_on_paths

S, T = E.Sym(940), E.Sym(941)

_TRY = ("try:\n    if len(atoms) == 2 and len(c.expr.terms) == 2 and (c.expr.const == 0) and "
        "(atoms[0][0].kind == atoms[1][0].kind) and (atoms[0][1] == -atoms[1][1]):\n"
        "        kind = atoms[0][0].kind\n        left, right = (_kept_args(atoms[0][0], "
        "ranges), _kept_args(atoms[1][0], ranges))\n    elif len(atoms) == 1:\n"
        "        (atom, k), = atoms\n        kind = atom.kind\n        whole = "
        "E.smin(*atom.args) if kind == 'Min' else E.smax(*atom.args)\n        rest = "
        "E.sub(c.expr, E.mul(k, whole))\n        left, right = (_kept_args(atom, ranges), "
        "[E.mul(-k, rest)])\n    else:\n        return c\nexcept KeyError:\n    return c")
_LR = "left, right = (_kept_args(atoms[0][0], ranges), _kept_args(atoms[1][0], ranges))"
_LR1 = "left, right = (_kept_args(atom, ranges), [E.mul(-k, rest)])"
_LOOP = "for (whole, one) in ((left, right), (right, left))"
_PARTS = "parts = [R.le(y, a) if kind == 'Min' else R.ge(y, a) for a in whole if a != y]"

#: every statement that mentions a list of arguments, of kept arguments or of parts
READS = {
    "readable_minmax": {
        "left": (_TRY, _LR, _LR1, _LOOP),
        "right": (_TRY, _LR, _LR1, _LOOP),
        "whole": (_TRY, "whole = E.smin(*atom.args) if kind == 'Min' else E.smax(*atom.args)",
                  "rest = E.sub(c.expr, E.mul(k, whole))", _LOOP,
                  "if len(one) != 1 or one[0] not in whole", _PARTS),
        "one": (_LOOP, "if len(one) != 1 or one[0] not in whole", "y = one[0]"),
        "parts": (_PARTS, "got = R.combine('and', [_undivided(p) for p in parts])"),
    },
    "_kept_args": {
        "atom": ("return E.undominated(atom.args, lambda v, u: dominates_proven(atom.kind, "
                 "v, u, ranges))",),
    },
    "combine": {
        "args": ("for a in args",),
        "a": ("for a in args", "if type(a) is bool", "if a == absorbing",
              "for b in a.args if isinstance(a, BoolOp) and a.op == op else (a,)"),
        "b": ("for b in a.args if isinstance(a, BoolOp) and a.op == op else (a,)",
              "if b not in out", "out.append(b)"),
        "out": ("out = []", "if b not in out", "out.append(b)", "if not out",
                "if len(out) == 1", "return out[0]", "return BoolOp(op, tuple(out))"),
    },
}


def require_reads_of(fn, reads) -> None:
    """``fn`` reads each list exactly through the listed statements (``proofs/reads.py``);
    unlike ``read_alike`` its one loop is over the two orders of (left, right), not over
    a list, and may return from either."""
    tree = source_tree(fn)
    for var, allowed in reads.items():
        seen = require_reads(tree, var, allowed, fn.__name__)
        require(seen == set(allowed), "%s no longer reads %s as %s", fn.__name__, var,
                sorted(set(allowed) - seen))


class Opaque:
    """An expression or condition the code only compares and hands on: its value (a Z3
    integer or truth value) and its equality with another, any answer that is True only
    where the values agree."""

    def __init__(self, world: "World", v) -> None:
        self.world, self.v = world, v
        self.n = next(world.ids)
        self.key = (9, self.n)              # an atom's sort key reads its arguments'

    def __eq__(self, other) -> bool:
        return self.world.same(self, other)

    def __ne__(self, other) -> bool:
        return not self.world.same(self, other)

    def __hash__(self) -> int:
        return self.n


class World:
    """One run's opaque values, their equalities and the callees' specifications."""

    def __init__(self, ex: Explorer, zs: Symbols) -> None:
        self.ex, self.zs = ex, zs
        self.ids = itertools.count()
        self.asked: dict = {}
        self.calls = itertools.count()
        self.kind_of: dict = {}             # id(an atom's arguments) -> the atom's kind
        self.facts: list = []               # the answers taken and what they mean

    def fresh(self, what: str) -> str:
        """A fresh answer's name (its Z3 Boolean built only for a path that is claimed)."""
        return "rm.%s%d" % (what, next(self.calls))

    def fork(self, name: str) -> bool:
        """The free answer ``name`` (True, then False), kept with the run's facts (no
        solver: no later test of the code is on the path's symbolic integers)."""
        take = self.ex.choose()
        self.facts.append((name, take))
        return take

    def assume(self, fact) -> None:
        """What an answer means (a function building the Z3 fact, for a claimed path)."""
        self.facts.append(fact)

    def path_facts(self) -> list:
        """The run's answers and their meanings as Z3 facts."""
        return [(z3.Bool(f[0]) if f[1] else z3.Not(z3.Bool(f[0])))
                if isinstance(f, tuple) else f() for f in self.facts]

    def same(self, a, b) -> bool:
        if a is b:
            return True
        if not (isinstance(a, Opaque) and isinstance(b, Opaque)):
            return False
        pair = (min(a.n, b.n), max(a.n, b.n))
        if pair not in self.asked:
            q = self.asked[pair] = self.fresh("eq")
            self.assume(lambda: z3.Implies(z3.Bool(q), a.v == b.v))
        return self.fork(self.asked[pair])

    # values ----------------------------------------------------------------------
    def val(self, x):
        """The value of an int, SInt, opaque value or expression (its atoms' arguments
        opaque or expressions)."""
        if isinstance(x, Opaque):
            return x.v
        if isinstance(x, SInt):
            return x.v
        if isinstance(x, int):
            return z3.IntVal(x)
        total = self.val(x.const)
        for term, c in x.terms:
            prod = self.val(c)
            for a in term:
                prod = prod * (self.zs[a] if type(a) is E.Sym else self.atom(a))
            total = total + prod
        return total

    def atom(self, a):
        args = [self.val(y) for y in a.args]
        if a.kind == "FloorDiv":
            return self.ex.P.floordiv(*args)
        return (zmin if a.kind == "Min" else zmax)(*args)

    def mean(self, c):
        """The meaning of a condition: a bool, an opaque one, a relation, and / or."""
        if isinstance(c, bool):
            return z3.BoolVal(c)
        if isinstance(c, Opaque):
            return c.v
        if isinstance(c, R.BoolOp):
            parts = [self.mean(a) for a in c.args]
            return z3.And(*parts) if c.op == "and" else z3.Or(*parts)
        e = self.val(c.expr)
        return e == 0 if c.op == R.EQ else (e != 0 if c.op == R.NE else e <= 0)

    # specifications ----------------------------------------------------------------
    def undominated(self, args, dominates):
        """fold.minmax_dominance: a non-empty subsequence with the input's min / max, or
        the predicate's KeyError (a symbol without a range)."""
        items = list(args)
        if len(items) > 1 and self.fork(self.fresh("keyerror")):
            raise KeyError("a symbol without a range")
        keep = [x for x in items if self.fork(self.fresh("kept"))]
        if not keep:                    # the specification keeps one at least
            raise Infeasible()
        kind = self.kind_of[id(args)]
        fold = zmin if kind == "Min" else zmax
        self.assume(lambda: fold(*[self.val(x) for x in keep])
                    == fold(*[self.val(x) for x in items]))
        return keep

    def rel(self, kind: str):
        """``R.le`` (``kind`` Min) / ``R.ge``: True / False where it holds / fails at the
        point, or an opaque condition of that meaning."""
        def spec(a, b):
            m = self.val(a) <= self.val(b) if kind == "Min" else self.val(a) >= self.val(b)
            if self.fork(self.fresh("decided")):
                t = self.fork(self.fresh("true"))
                self.assume(lambda: m if t else z3.Not(m))
                return t
            return Opaque(self, m)
        return spec

    def undivided(self, p):
        """``_undivided`` as proven by ``undivided_every``: a bool as it is, any other
        condition as one of the same meaning that is no bool and no and / or (what its
        caller reads of it: ``p`` itself stands for every such answer)."""
        return p


def _guard(world: World, shape: str, kinds, coeffs, op: str) -> R.Rel:
    """The guard ``e <op> 0`` of one shape: ``k1*A + k2*B + k0`` (two hits: ``k1``, ``k2``
    each 1 or -1, both explored), ``k1*A + k3*t + k0`` (one hit: ``k1`` 1 or -1, ``k3``
    symbolic; ``A`` with any other coefficient is no hit, like ``t``) or ``k1*A + k2*B +
    k4*C + k0`` (three hits, each coefficient 1 or -1); ``k0`` symbolic."""
    sign = [1 if world.ex.choose() else -1 for _ in kinds]     # each hit's: 1 or -1
    p, q, r, w, u, v = (Opaque(world, z3.Int("rm.%s" % n)) for n in "pqrwuv")
    atoms = [E.OpAtom(kinds[0], (p, q))]
    atoms += [E.OpAtom(kinds[1], (r, w))] if shape != "one" else []
    atoms += [E.OpAtom(kinds[2], (u, v))] if shape == "three" else []
    terms = {(a,): k for a, k in zip(atoms, sign)}
    if shape == "one":
        terms[(T,)] = coeffs[0]
    world.kind_of = {id(x.args): x.kind for x in atoms}
    return R.Rel(op, E.Expr(terms, coeffs[1]))


def _explore(shape: str, kinds, op: str = R.EQ) -> None:
    """``readable_minmax`` of the guard of ``shape`` and ``kinds`` along every path; on
    each, the printed guard (where it is not the guard) means what the guard means."""
    from symshape.contract import guard_text as G
    zs = Symbols()
    coeffs = sym_ints("rm.k3 rm.k0")
    # the other term of the shape "one" present (absent, it is read the same: only by sub
    # and the number of terms, which matters only with two hits)
    ex = Explorer([coeffs[0].v != 0])

    def run():
        ex.P = TrackedPy()
        world = World(ex, zs)
        c = _guard(world, shape, kinds[:1] if shape == "one" else kinds, coeffs, op)
        ns_e = SimpleNamespace(**vars(E))
        ns_e.undominated = world.undominated
        ns_e.smin = lambda *xs: Opaque(world, zmin(*[world.val(x) for x in xs]))
        ns_e.smax = lambda *xs: Opaque(world, zmax(*[world.val(x) for x in xs]))
        ns_e.sub = lambda x, y: Opaque(world, world.val(x) - world.val(y))
        ns_e.mul = lambda x, y: Opaque(world, world.val(x) * world.val(y))
        ns_r = SimpleNamespace(**vars(R))
        ns_r.le, ns_r.ge = world.rel("Min"), world.rel("Max")
        kept_args = inspect.unwrap(G.readable_minmax).__globals__["_kept_args"]
        with names_of(G.readable_minmax, E=ns_e, R=ns_r, _undivided=world.undivided), \
                names_of(kept_args, E=ns_e):        # the callee it reads the kept ones by
            out = G.readable_minmax(c, {})
        return out, c, world
    with patched(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, "readable_minmax")
    cases, impl = [], []
    for pc, (out, c, world) in paths:
        if out is not c:
            cases.append((z3.And(*pc, *world.path_facts()), world.mean(c)))
            impl.append(world.mean(out))
    require(impl or shape == "three" or op != R.EQ or len(set(kinds)) > 1,
            "readable_minmax rewrote no guard %s of %s", shape, kinds)
    if impl:
        prove_code(lambda *v: z3.And(*[z3.Implies(on, x == want)
                                       for x, (on, want) in zip(v, cases)]),
                   impl, what="readable_minmax(%s, %s) (%d paths)" % (shape, kinds,
                                                                        len(paths)))


def undivided_every() -> None:
    """``_undivided`` for every relation: it rewrites only ``coeff*(X // k) + const <= 0``
    with one term, ``coeff`` 1 or -1 and an int ``k > 0`` (any other relation, condition or
    bool fails one of its tests and is returned as is); so that relation, ``X`` any
    expression (opaque: handed only to ``R.le`` / ``R.ge``, their specification), every
    coefficient, constant and divisor symbolic, along every path: the output holds
    exactly where the input does."""
    from symshape.contract import guard_text as G
    coeff, const, k = sym_ints("rm.coeff rm.const rm.k")
    zs = Symbols()
    ex = Explorer([])

    def run():
        ex.P = TrackedPy()
        world = World(ex, zs)
        x = Opaque(world, z3.Int("rm.X"))
        p = R.Rel(R.LE, E.Expr({(E.OpAtom("FloorDiv", (x, k)),): coeff}, const))
        ns_r = SimpleNamespace(**vars(R))
        ns_r.le, ns_r.ge = world.rel("Min"), world.rel("Max")
        with names_of(G._undivided, R=ns_r):
            out = G._undivided(p)
        return out, p, world, ex.P
    with patched(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, "_undivided")
    cases, impl, side = [], [], []
    for pc, (out, p, world, P) in paths:
        if out is not p:
            world.ex.P = P
            cases.append((z3.And(*pc, *world.path_facts()), world.mean(p)))
            impl.append(world.mean(out))
            side += P.side
    require(impl, "_undivided rewrote no relation")
    prove_code(lambda *v: z3.And(*[z3.Implies(on, x == want)
                                   for x, (on, want) in zip(v, cases)]),
               impl, side, what="_undivided (%d paths)" % len(paths))


@proves("contract.readable_minmax", over=every(
    "every guard: a condition that is no relation, or a relation of any other operator "
    "(!=, <=), is returned as is (run: an and of two, k1*A + k3*t + k0 <op> 0); the "
    "expression's terms read alike through their being one Min / Max atom with "
    "coefficient 1 or -1 (a hit), their number, the constant's being 0, the hits' kinds "
    "and coefficients: k1*A + k2*B + k0 (two hits, every pair of kinds), k1*A + k3*t + k0 "
    "(one hit; t any other term, A with another coefficient is one) and three hits, each "
    "hit's coefficient 1 or -1 (both explored), k3 and k0 symbolic; the atoms' arguments "
    "of any number (read alike) through undominated (fold.minmax_dominance, "
    "dominates_proven sound: range.bound, z3bridge.implies; or its KeyError) and smin / "
    "smax (minmax.flatten, minmax.const_merge, minmax.offset_dominance) as their "
    "specifications, every answer explored; the expressions built by sub / mul and "
    "compared by ==, != as opaque values (equality any answer true only on equal values); "
    "R.le / R.ge as the relation normal forms (rel.le_gcd_ceil), _undivided as proven "
    "here for every relation, R.combine run as written (its list read alike), along "
    "every path: the printed guard holds exactly where the guard does"))
def contract_readable_minmax():
    from symshape.contract import guard_text as G
    require_reads_of(G.readable_minmax, READS["readable_minmax"])
    read_alike(G._kept_args, READS["_kept_args"])
    read_alike(R.combine, READS["combine"], exits_last=True)
    undivided_every()
    for a in ("Min", "Max"):                # every kind, exhausted
        _explore("one", (a,))
        _explore("three", (a, a, a))        # read as two of one kind and a third
        for b in ("Min", "Max"):
            _explore("two", (a, b))
    for op in (R.NE, R.LE):                 # every other operator the code builds
        _explore("one", ("Min",), op)
    both = R.BoolOp("and", (R.eq(S.expr, 1), R.eq(T.expr, 2)))
    require(G.readable_minmax(both, {}) is both, "readable_minmax rewrote an and")
