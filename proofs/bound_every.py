"""The rewrites inside ``bound()`` (``symshape/algebra/ranges.py``) for every coefficient
and every box: each run on an expression template with symbolic coefficients, constant and
divisor over symbols whose ranges have symbolic ends (finite or infinite), along every path
(``proofs/boundpaths.py``), the recursive ``bound()`` call its induction hypothesis.

The templates are the rewrites' real domains as the code reads them: a rewrite looks for
its pattern among the terms (a ``FloorDiv`` / ``Mod`` of a symbol that also appears
linearly, the one ``Min`` / ``Max`` term, an atom common to every term) and copies every
other term through its coefficient; so one term of each kind the pattern names, one other
term ``t`` (any value: its range is the box's) and the constant cover every path, each
coefficient any integer (zero included: the term is then absent).
"""
from __future__ import annotations

import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG

from . import every, proves
from .boundpaths import b_ints, prove_rewrite
from . import symexec as SX
from .code import prove_code
from .pyint import Py, prove, require, zmax, zmin
from .symexec import Explorer, inside, interval, to_pair

S, T, A = E.Sym(0), E.Sym(1), E.Sym(2)
Q, R = E.Sym(-1, True), E.Sym(-2, True)      # the split's stand-ins (below 0, as coded)


@proves("range.divmod_split",
        over=every("every c1*s + c2*FloorDiv(s, k) + c3*Mod(s, k) + c4*t + c0 (coefficients, "
                   "constant and divisor k symbolic integers) over every box of s and t "
                   "(ends symbolic, finite or infinite), along every path; bound() on the "
                   "split expression sound (the induction hypothesis), vr_floordiv / vr_mod "
                   "their proven rules"))
def range_divmod_split():
    P = Py()
    s, k, lo, hi = z3.Ints("s k lo hi")
    q, r = P.floordiv(s, k), P.mod(s, k)
    P.prove(z3.And(s == k * q + r, 0 <= r, r <= k - 1,
                   P.floordiv(lo, k) <= q, q <= P.floordiv(hi, k)),
            k > 0, lo <= s, s <= hi)
    c0, c1, c2, c3, c4, kk = b_ints("c0 c1 c2 c3 c4 k")

    def build():
        div = E.OpAtom("FloorDiv", (S.expr, kk))
        rem = E.OpAtom("Mod", (S.expr, kk))
        return E.Expr({(S,): c1, (div,): c2, (rem,): c3, (T,): c4}, c0)

    def inst(P, zs):        # the split's quotient and remainder at s
        return {Q: P.floordiv(zs[S], kk.v), R: P.mod(zs[S], kk.v)}
    # vr_floordiv / vr_mod as their proven rules (range.floordiv_*, range.mod_*)
    prove_rewrite(lambda x, rng: RG._divmod_split(x, rng), build, (S, T), "_divmod_split",
                  inst, contracts={"vr_floordiv": lambda P, x, y: P.floordiv(x, y),
                                   "vr_mod": lambda P, x, y: P.mod(x, y)})
    # and it is what makes bound() tight: s - s // 2 >= 1 for s >= 2
    got = RG.bound(S.expr - E.floordiv(S.expr, 2), {S: RG.ValueRange(2, 9)}.__getitem__)
    require(got.lower == 1, "bound(s - s // 2) over [2, 9] = %s, expected lower end 1", got)


@proves("range.minmax_push",
        over=every("every c*K(a, b) + c1*a + c0 for K each of Min and Max "
                   "(coefficients and constant symbolic integers; the rest, read only "
                   "through expression addition, shares an argument's symbol and may "
                   "cancel it or be constant) over every box "
                   "(ends symbolic, finite or infinite), along every path; two arguments "
                   "stand for any number: the code reads each alike (one comprehension) "
                   "and hands them to vr_min / vr_max (range.min / range.max, proven "
                   "for every number of ranges); bound() "
                   "on each pushed argument sound (the induction hypothesis)"))
def range_minmax_push():
    r, a, b = z3.Ints("r a b")
    prove(z3.And(r + zmax(a, b) == zmax(r + a, r + b), r - zmax(a, b) == zmin(r - a, r - b),
                 r + zmin(a, b) == zmin(r + a, r + b), r - zmin(a, b) == zmax(r - a, r - b)))
    c, c0, c1 = b_ints("c c0 c1")
    for kind in ("Min", "Max"):
        def build(kind=kind):
            atom = E.OpAtom(kind, (S.expr, T.expr))
            return E.Expr({(atom,): c, (S,): c1}, c0)
        # vr_min / vr_max as their proven rules (range.min, range.max)
        prove_rewrite(lambda x, rng: RG._minmax_pushed(x, rng), build, (S, T),
                      "_minmax_pushed(%s)" % kind,
                      contracts={"vr_min": zmin, "vr_max": zmax})
    ranges = {S: RG.ValueRange(-3, 6), T: RG.ValueRange(0, 4)}
    require(RG.bound(E.smax(S.expr, T.expr) - S.expr, ranges.__getitem__).lower == 0,
            "Max(a, b) - a should be bounded below by 0")


def factored_every() -> None:
    """``_bound_factored`` on ``c1*a*s + c2*a*t + c0``: ``a`` divides every term (when
    ``c2`` is 0, ``s`` does too: the code then picks the least atom by key), the common
    atom's range and the quotient's range the induction hypothesis."""
    c0, c1, c2 = b_ints("c0 c1 c2")

    def build():
        return E.Expr({(A, S): c1, (A, T): c2}, c0)
    # vr_mul / vr_add as their proven rules (range.mul, range.add)
    prove_rewrite(lambda x, rng: RG._bound_factored(x, rng), build, (A, S, T),
                  "_bound_factored", hyps=[z3.Or(c1.v != 0, c2.v != 0)],
                  names=("bound", "bound_atom"),
                  contracts={"vr_mul": lambda P, x, y: x * y, "vr_add": lambda P, x, y: x + y})



def intersect_every() -> None:
    """``ValueRange.intersect`` of any two ranges that both hold a value v (ends symbolic,
    finite or infinite), along every path: the meet holds v (and is never empty)."""
    alo, ahi, wa, x, xa = interval("meet.a")
    blo, bhi, wb, y, yb = interval("meet.b")
    hyps = wa + wb + xa + yb + [x == y]
    ex = Explorer(hyps)
    with SX.patched(ex):
        paths = ex.paths(lambda: RG.ValueRange(alo, ahi).intersect(RG.ValueRange(blo, bhi)))
    SX.raise_on_paths(paths, "intersect")
    impl = [t for _, got in paths for t in (*to_pair(got.lower), *to_pair(got.upper))]

    def claim(*t):
        return z3.And(*[z3.Implies(z3.And(*pc), inside(*t[4 * k:4 * k + 4], x))
                        for k, (pc, _) in enumerate(paths)])
    prove_code(claim, impl, hyps, P=ex.P, what="intersect (%d paths)" % len(paths))
