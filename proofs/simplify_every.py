"""Proofs of range-folding rewrites of ``symshape/algebra/simplify.py`` for every input of
their domain: the code run along every path on expressions whose coefficients, constant
and range ends are symbolic integers (``proofs/symcoeff.py``), a lemma instance
(``proofs/divmod_every.py``) making each path's claim linear.
"""
from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.algebra import simplify as SI

from . import every, proves
from .code import Symbols, prove_code
from .divmod_every import Lemma, instance_of
from .pyint import ProofFailure, require
from .symcoeff import encode, encode_cond, patched, sym_ints, value
from .symexec import Explorer, TrackedPy

S, T, U, V = E.Sym(940), E.Sym(941), E.Sym(942), E.Sym(943)

#: a factor b >= 1 changes no comparison with 0: F == b*E gives F == 0 <=> E == 0 and
#: F <= 0 <=> E <= 0
POSITIVE_FACTOR = Lemma("posfactor", 3, lambda P, b, e, f: [b >= 1, f == b * e],
                        lambda P, b, e, f: z3.And((f == 0) == (e == 0), (f <= 0) == (e <= 0)))


@proves("rel.strip_positive_factor", over=every(
    "every e = c1*s*t + c2*s*u + k (coefficients and constant symbolic integers; the code "
    "reads the other factors of a term only through divide_terms) and every range of s, t "
    "and u (lower ends symbolic), for ==, != and <= against 0, along every path; "
    "range_fold and the recursive call as their specification (the same value)"))
def rel_strip_positive_factor():
    POSITIVE_FACTOR.prove()
    c1, c2, k, ls, lt, lu = sym_ints("c1 c2 k ls lt lu")
    zs = Symbols()
    # the code reads a range only through its lower end
    env = SimpleNamespace(replacements={}, ranges={
        S: SimpleNamespace(lower=ls), T: SimpleNamespace(lower=lt), U: SimpleNamespace(lower=lu)})
    ex = Explorer([c1.v != 0, c2.v != 0])
    real = SI.strip_positive_factors
    stripped: list = []

    def run():
        ex.P = TrackedPy()
        saved = SI.range_fold, SI.strip_positive_factors
        SI.range_fold = lambda env_, x: x                 # as proven: the same value
        SI.strip_positive_factors = lambda env_, x: x     # the induction hypothesis
        try:
            e = E.Expr({(S, T): c1, (S, U): c2}, k)
            return e, real(env, e), ex.P
        finally:
            SI.range_fold, SI.strip_positive_factors = saved
    with patched(ex):
        paths = ex.paths(run)
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("strip_positive_factors raises %r on the path %s"
                               % (got, z3.And(*pc)))
        e, out, P = got
        before, after = encode(P, e, zs), encode(P, out, zs)
        where = "strip_positive_factors (path %s)" % z3.And(*pc)
        # every symbol inside its range (the lower end the code read)
        inside = [zs[x] >= value(r.lower) for x, r in env.ranges.items()]
        extra = []
        if out is not e:
            stripped.append(out)
            extra.append(instance_of(POSITIVE_FACTOR, P, pc + inside,
                                     (zs[S], after, before), where))
        for op, f in (("==", lambda x: x == 0), ("!=", lambda x: x != 0),
                      ("<=", lambda x: x <= 0)):
            prove_code(lambda v, f=f: v == f(before), [f(after)], pc, inside, extra,
                       what="%s, %s 0" % (where, op))
    if not stripped:
        raise ProofFailure("strip_positive_factors strips on no path")


# ---------------------------------------------------------------------------- by facts
_FACTS_DOMAIN = (
    "every y = c1*s + c2*t + d1 and x = c3*s + c4*t + d2 (coefficients and constants "
    "symbolic), every fact a1*s + a2*t + a0 <= 0 (symbolic) and every point of every range "
    "of s and t, both kinds, whether or not a fold by the facts is under way, along every "
    "path; y and x over symbols u, v the facts do not mention on a run of their own; "
    "env.decide as its specification (True only where the facts imply the relation), "
    "relations.make as proven by rel.le_gcd_ceil")


@proves("fold.minmax_by_facts", over=every(_FACTS_DOMAIN))
def fold_minmax_by_facts():
    for kind in ("Min", "Max"):
        for syms in ((S, T), (U, V)):       # U, V: symbols the facts do not mention
            _by_facts_paths(kind, syms)


def _by_facts_paths(kind: str, syms) -> int:
    """``dominates_by_facts`` on symbolic ``y``, ``x`` and fact along every path: where it
    answers True, ``y <= x`` (Min; Max: ``y >= x``) at every point where the fact holds."""
    c1, c2, c3, c4, d1, d2, a0, a1, a2 = sym_ints("c1 c2 c3 c4 d1 d2 a0 a1 a2")
    zs = Symbols()
    ex = Explorer([c1.v != 0, c2.v != 0, c3.v != 0, c4.v != 0, a1.v != 0, a2.v != 0])
    asked: list = []

    def decide(c):
        """The decision procedure as proven: True only where the facts imply ``c``."""
        said = z3.Bool("decided!%d" % len(asked))
        asked.append((c, said))
        return True if ex.branch(said) else None

    def run():
        ex.P = TrackedPy()
        asked.clear()
        fact = R.Rel(R.LE, E.Expr({(S,): a1, (T,): a2}, a0))
        env = SimpleNamespace(facts=[fact], folding_by_facts=nullcontext, decide=decide,
                              is_folding_by_facts=lambda: ex.branch(z3.Bool("folding")))
        y = E.Expr({(syms[0],): c1, (syms[1],): c2}, d1)
        x = E.Expr({(syms[0],): c3, (syms[1],): c4}, d2)
        real = R.make       # as rel.le_gcd_ceil proves it: e <= 0 means exactly that
        R.make = lambda op, e: R.Rel(op, e) if isinstance(e, E.Expr) else real(op, e)
        try:
            out = SI.dominates_by_facts(env, kind, y, x)
        finally:
            R.make = real
        return out, y, x, fact, list(asked), ex.P
    with patched(ex):
        paths = ex.paths(run)
    said_true = 0
    outs, wants, guards, side = [], [], [], []
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("dominates_by_facts raises %r on the path %s"
                               % (got, z3.And(*pc)))
        out, y, x, fact, decided, P = got
        yv, xv = encode(P, y, zs), encode(P, x, zs)
        here = z3.And(*pc)
        # the decision procedure's answers on this path, as its proof states them
        guards += [z3.Implies(here, z3.Implies(said, encode_cond(P, c, zs)))
                   for c, said in decided]
        guards.append(z3.Implies(here, encode_cond(P, fact, zs)))     # the fact holds
        wants.append((here, yv <= xv if kind == "Min" else yv >= xv))
        outs.append(z3.BoolVal(out is True))
        side += P.side
        said_true += out is True
    # all paths in one claim: where the code answers True, y is the pick (a claim on the
    # code's answers: with other answers it fails where the code answers False)
    prove_code(lambda *vs: z3.And(*[z3.Implies(here, z3.Implies(v, want))
                                    for v, (here, want) in zip(vs, wants)]),
               outs, ex.hyps, guards, side,
               what="dominates_by_facts(%s, over %s; %d paths)" % (kind, syms, len(paths)))
    require(said_true > 0 or syms[0] is U, "dominates_by_facts answers True on no path (%s)",
            kind)
    return len(paths)
