"""Proofs of range-folding rewrites of ``symshape/algebra/simplify.py`` for every input of
their domain: the code run along every path on expressions whose coefficients, constant
and range ends are symbolic integers (``proofs/symcoeff.py``), a lemma instance
(``proofs/divmod_every.py``) making each path's claim linear.
"""
from __future__ import annotations

from types import SimpleNamespace

import z3

from symshape.algebra import expr as E
from symshape.algebra import simplify as SI

from . import every, proves
from .code import Symbols, prove_code
from .divmod_every import Lemma, instance_of
from .pyint import ProofFailure
from .symcoeff import encode, patched, sym_ints, value
from .symexec import Explorer, TrackedPy

S, T, U = E.Sym(940), E.Sym(941), E.Sym(942)

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
            return e, real(env, e)
        finally:
            SI.range_fold, SI.strip_positive_factors = saved
    with patched(ex):
        paths = ex.paths(run)
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("strip_positive_factors raises %r on the path %s"
                               % (got, z3.And(*pc)))
        e, out = got
        P = ex.P
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
