"""Proofs of the sound ranges ``bounds_expr`` meets, for every expression and every list of
facts: the loop over the facts is a fold the code's own ``reduce`` performs (read by
capturing it, ``contract_folds.captured_folds``), its step proven for every state by
induction; the expression is opaque (the code reads it only through its type, its free
symbols, ``is_linear`` and ``E.subs``), and the callees that act on it are their proven
specifications: ``E.subs`` (``subst.subs_replace``: the substituted expression's value at a
point is the original's with the symbol given the substitute's value there) and
``ranges.bound`` (``range.bound``: the range holds the expression's value at every point
inside the ranges it is handed), each instantiated at the point the proof needs.
"""
from __future__ import annotations

import builtins
from contextlib import ExitStack

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R

from . import every, proves
from .contract_folds import Folded, captured_folds
from .code import Symbols, prove_code
from .contract_every import int_like, proven_normal_form
from .pyint import ProofFailure, require
from .symcoeff import encode, patched as coefficients, sym_ints
from .symexec import Ext, Explorer, TrackedPy, interval, inside, patched as ends, to_pair

A, B, C, D = (E.Sym(990 + i) for i in range(4))


def given_range(lo, hi):
    """A ``ValueRange`` with the symbolic ends ``lo``, ``hi`` that the proof's hypotheses
    make well formed (``symexec.interval``): built without the constructor's comparison,
    an input of the proof, not the code's."""
    from symshape.algebra.ranges import ValueRange
    r = object.__new__(ValueRange)
    r.lower, r.upper = lo, hi
    return r


class Opaque:
    """An expression as ``slack_substituted`` reads it: not linear, over ``A``, ``B``, ``C``
    (its value at a point any function of theirs: ``fn``)."""

    def __init__(self) -> None:
        self.free_symbols = frozenset((A, B, C))
        self.fn = z3.Function("e", z3.IntSort(), z3.IntSort(), z3.IntSort(), z3.IntSort())

    def is_linear(self) -> bool:
        return False

    def value(self, at: dict):
        return self.fn(at[A], at[B], at[C])


class Substituted:
    """What ``E.subs(e, {b: v})`` returns, as its specification says: an expression whose
    value at a point is ``e``'s with ``b`` given ``v``'s value there; ``at`` is the point
    the proof reads it at (the facts' point, the new symbol a fresh value)."""

    def __init__(self, e: Opaque, b, v, at: dict, P) -> None:
        self.free_symbols = (e.free_symbols - {b}) | v.free_symbols
        point = dict(at)
        point[b] = encode(P, v, at)
        self.at, self.val = at, e.value(point)


class Constant(Ext):
    """An int ``E.subs`` returned (its value symbolic): ``type`` reads it as an int."""


def _int_type(x):
    return int if isinstance(x, Constant) else builtins.type(x)


class Specs:
    """``E.subs`` and ``bound`` as their specifications, at the point ``p`` of the proof:
    each substitution read at ``p`` with its new symbol a fresh value chosen so that the
    substitute takes the value the replaced symbol has at ``p`` (a definition: any value
    would be an instance of the specification)."""

    def __init__(self, ex: Explorer, e: Opaque, p: dict) -> None:
        self.ex, self.e, self.p, self.n = ex, e, p, 0

    def subs(self, x, mapping):
        require(x is self.e and len(mapping) == 1, "slack_substituted substitutes %s in %s",
                mapping, x)
        (b, v), = mapping.items()
        new = v.free_symbols - self.e.free_symbols
        require(len(new) == 1, "the substitute %s brings %d new symbols", v, len(new))
        self.n += 1
        (slack,) = new
        at = dict(self.p)
        at[slack] = z3.Int("slack!%d" % self.n)
        zero = dict(self.p)
        zero[slack] = z3.IntVal(0)
        P = self.ex.P
        self.ex.assume(at[slack] == self.p[b] - encode(P, v, zero))
        out = Substituted(self.e, b, v, at, P)
        if self.ex.fork(z3.Bool("subs.constant!%d" % self.n)):
            k = z3.Int("subs.value!%d" % self.n)
            self.ex.assume(out.val == k)           # a constant: its value everywhere
            return Constant(0, k)
        return out

    def bound(self, x, rng):
        lo, hi, wf, _, _ = interval("bound!%d" % self.n)
        self.ex.assume(*wf)
        within = []
        for s in x.free_symbols:
            r = rng(s)
            within.append(inside(*to_pair(r.lower), *to_pair(r.upper), x.at[s]))
        self.ex.assume(z3.Implies(z3.And(*within), inside(lo.s, lo.v, hi.s, hi.v, x.val)))
        return given_range(lo, hi)


    def meet(self, got, r):
        """``meet``'s specification (``_meet_lemma``): ``r`` when there is no range yet;
        else a range holding every value both hold (at the proof's value)."""
        if got is None:
            return r
        self.n += 1
        lo, hi, wf, _, _ = interval("meet!%d" % self.n)
        v = self.e.value(self.p)
        self.ex.assume(*wf, z3.Implies(z3.And(_holds(got, v), _holds(r, v)),
                                       inside(lo.s, lo.v, hi.s, hi.v, v)))
        return given_range(lo, hi)


def _holds(r, v):
    return inside(*to_pair(r.lower), *to_pair(r.upper), v)


def _meet_lemma() -> None:
    """``meet(got, r)`` for every ``got`` (None or any range) and every range ``r`` (ends
    symbolic, finite or infinite), along every path: a value both hold, the result holds
    (``r`` itself when there is no ``got``)."""
    from symshape.reasoning import symbolic
    g_lo, g_hi, g_wf, v, _ = interval("meet.got")
    r_lo, r_hi, r_wf, _, _ = interval("meet.r")
    ex = Explorer(g_wf + r_wf)
    for prior in (False, True):
        def run(prior=prior):
            got = given_range(g_lo, g_hi) if prior else None
            return symbolic.meet(got, given_range(r_lo, r_hi))
        with ends(ex):
            paths = ex.paths(run)
        outs, cases = [], []
        for pc, out in paths:
            if isinstance(out, Exception):
                raise ProofFailure("meet raises %s on the path %s" % (out, z3.And(*pc)))
            outs.append(_holds(out, v))
            before = inside(g_lo.s, g_lo.v, g_hi.s, g_hi.v, v) if prior else z3.BoolVal(True)
            cases.append(z3.And(*pc, before, inside(r_lo.s, r_lo.v, r_hi.s, r_hi.v, v)))
        prove_code(lambda *x: z3.And(*[z3.Implies(on, y) for y, on in zip(x, cases)]),
                   outs, g_wf, r_wf, what="meet of %s and a range" % ("a range" if prior
                                                                      else "none"))


class _Env:
    def __init__(self, ranges) -> None:
        self.ranges = ranges


def _slack_step(fact: str, prior: bool) -> int:
    """``slack_meet((got, e, env), f)`` for every opaque ``e`` over ``A, B, C``, every
    environment (each range's ends symbolic, finite or infinite), ``got`` None or any
    range (``prior``: sound for ``e`` wherever the earlier facts hold), and the fact
    ``fact``: ``c1*A + c2*B + k <= 0`` (two of ``e``'s symbols, symbolic coefficients),
    ``c1*A + c2*D + k <= 0`` (one symbol ``e`` lacks), ``c1*A + k <= 0``, ``c1*A*B + k <=
    0``, three symbols, an int expression, a bool, the relation ``==`` / ``!=`` or
    ``and``: along every path, the new range (when
    any) holds ``e``'s value at every point of the ranges where the earlier facts and
    ``f`` hold; ``e`` and the environment are handed on."""
    from symshape.reasoning import symbolic
    c1, c2, k = sym_ints("c1 c2 k")
    hyps = [c1.v != 0, c2.v != 0]
    zs = Symbols()
    p = {s: zs[s] for s in (A, B, C, D)}
    e = Opaque()
    ranges, wfs = {}, []
    for s in (A, B, C, D):
        lo, hi, wf, _, _ = interval("range.%s" % s.name)
        ranges[s], wfs = (lo, hi), wfs + wf
    g_lo, g_hi, g_wf, _, _ = interval("got")
    before = z3.Bool("before")
    in_ranges = z3.And(*[inside(lo.s, lo.v, hi.s, hi.v, p[s]) for s, (lo, hi) in ranges.items()])
    hyps += wfs + g_wf
    ex = Explorer(hyps)

    def build():
        lin = {"two": {(A,): c1, (B,): c2}, "foreign": {(A,): c1, (D,): c2},
               "one": {(A,): c1}, "product": {(A, B): c1},
               "three": {(A,): c1, (B,): c2, (C,): c1}}
        if fact in lin:
            return R.Rel(R.LE, E.Expr(lin[fact], k))
        if fact == "constant":          # an int expression: read only through its type
            return R.Rel(R.LE, 0)
        if fact == "bool":
            return True
        rel = R.Rel(R.LE, E.Expr({(A,): c1, (B,): c2}, k))
        if fact == "and":
            return R.BoolOp("and", (rel, rel))
        return R.Rel(R.EQ if fact == "==" else R.NE, rel.expr)

    def run():
        ex.P = TrackedPy()
        specs = Specs(ex, e, p)
        env = _Env({s: given_range(lo, hi) for s, (lo, hi) in ranges.items()})
        got = given_range(g_lo, g_hi) if prior else None
        f = build()
        real = (E.subs, symbolic.bound, symbolic.meet)
        E.subs, symbolic.bound, symbolic.meet = specs.subs, specs.bound, specs.meet
        symbolic.type = _int_type
        try:
            return symbolic.slack_meet((got, e, env), f), (got, e, env), f, ex.P
        finally:
            E.subs, symbolic.bound, symbolic.meet = real
            del symbolic.type
    with ExitStack() as stack:
        stack.enter_context(coefficients(ex, inductive=False))
        stack.enter_context(ends(ex))
        stack.enter_context(int_like())
        stack.enter_context(proven_normal_form())
        paths = ex.paths(run)
    value = e.value(p)
    outs, cases = [], []
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("slack_meet: raises %s: %s on the feasible path %s"
                               % (type(got).__name__, got, z3.And(*pc)))
        (new, e1, env1), (old, _, env0), f, P = got
        require(e1 is e and env1 is env0, "slack_meet did not hand on e and the ranges")
        if new is None or new is old:      # the state as it was: the invariant as it was
            require(new is old, "slack_meet forgot the range it had")
            continue
        # where the earlier facts (``before``) and this one hold, within the ranges
        outs.append(_holds(new, value))
        cases.append(z3.And(*pc, in_ranges, before, _cond(P, f, zs), *P.side))
    if not outs:
        return 0
    prior_sound = z3.Implies(z3.And(before, in_ranges),
                             inside(g_lo.s, g_lo.v, g_hi.s, g_hi.v, value))
    prove_code(lambda *v: z3.And(*[z3.Implies(on, x) for x, on in zip(v, cases)]),
               outs, hyps, prior_sound,
               what="slack_meet on a fact %s, %s" % (fact, "a range" if prior else "none"))
    return len(outs)


def _cond(P, f, zs):
    if isinstance(f, R.BoolOp):
        args = [_cond(P, a, zs) for a in f.args]
        return z3.And(*args) if f.op == "and" else z3.Or(*args)
    v = encode(P, f.expr, zs)
    return v == 0 if f.op == R.EQ else (v != 0 if f.op == R.NE else v <= 0)


def _no_fold(x, facts, env) -> None:
    """``slack_substituted`` of a linear expression or an int: None, no fold."""
    from symshape.reasoning import symbolic
    calls, out = captured_folds(symbolic, symbolic.slack_substituted, x, facts, env)
    require(not calls and out is None, "slack_substituted of %r: %r", x, out)


def _slack_structure() -> None:
    """``slack_substituted(e, facts, env)`` is ``reduce(slack_meet, facts, (None, e,
    env))[0]`` for an expression that is not linear, None for a linear one (or an int)."""
    from symshape.reasoning import symbolic
    e, facts, env = Opaque(), object(), object()
    calls, out = captured_folds(symbolic, symbolic.slack_substituted, e, facts, env)
    require(calls == [(symbolic.slack_meet, facts, (None, e, env))] and isinstance(out, Folded)
            and out.index == 0 and out.part == 0,
            "slack_substituted is not the fold of slack_meet over its facts: %s", calls)
    linear = Opaque()
    linear.is_linear = lambda: True
    _no_fold(linear, facts, env)
    _no_fold(0, facts, env)          # an int: the code reads only its type


@proves("bounds.slack", over=every(
    "every expression that is not linear (opaque: the code reads it through its type, "
    "is_linear, free symbols and E.subs; its value any function of its symbols), every "
    "list of facts of any length (by induction on the fold of slack_meet slack_substituted "
    "is, read from the code by capturing its reduce), each fact c1*a + c2*b + k <= 0 over "
    "two of its symbols (coefficients symbolic) or one it skips (another symbol, one "
    "term, a product, three symbols, an int, a bool, == / !=, an and), every "
    "environment (range ends symbolic, finite or infinite), along every path of the "
    "step; E.subs and bound as their specifications (subst.subs_replace, range.bound), "
    "meet as its own (proven here for every pair of ranges), relations.make as proven by "
    "rel.le_gcd_ceil"))
def bounds_slack():
    """By induction on the facts: the meet is None or holds ``e``'s value at every point
    of the ranges where the facts seen so far hold (base None; the step, for every state,
    ``_slack_step``), so the result does on every point of all the facts."""
    _slack_structure()
    _meet_lemma()
    applied = 0
    for prior in (False, True):
        for fact in ("two", "foreign", "one", "product", "three", "constant", "bool", "==",
                     "!=", "and"):
            applied += _slack_step(fact, prior)
    require(applied, "slack_meet applied no fact")
