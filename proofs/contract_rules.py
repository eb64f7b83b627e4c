"""Proofs of the rules behind the exact contract: the projection of facts onto ranges
(``symshape/projection.py``, ``ShapeEnv._tighten``), the rewrites that let interval
arithmetic see through ``s - s // k`` and ``Max(a, b) - a`` (``symshape/ranges.py``), the
pairwise matching of reshape factors (``ShapeEnv._solve_factor_pairs``) and Min / Max
folding by facts.

Where a rule acts on the engine's own output, the proof builds its Z3 terms from that
output: the ranges ``project`` returns are checked to be bounds (nothing beyond them is
feasible) and attained (a feasible point sits on each finite end), and the congruences the
solver learns from a product equation are checked equivalent to it.
"""
from __future__ import annotations

import itertools

import z3

from symshape import expr as E
from symshape import relations as R
from symshape.env import ShapeEnv
from symshape.infinity import INT_OO, is_inf
from symshape.projection import project
from symshape.ranges import ValueRange, bound
from symshape.z3bridge import Encoder

from . import proves
from .pyint import Py, prove, require, zmax, zmin


def _env(*specs):
    env = ShapeEnv()
    syms = [env.create_symbol(h, "v%d" % i, ValueRange(lo, hi))
            for i, (h, lo, hi) in enumerate(specs)]
    return (env,) + tuple(syms)


# ---------------------------------------------------------------------------- projection
def _check_projection(goal, facts, ranges, got: ValueRange, what: str) -> None:
    """``got`` bounds ``goal`` on every point of ``facts`` and ``ranges`` (Z3: nothing
    beyond it), and each finite end is attained (Z3: a point on it)."""
    for side, end in (("lower", got.lower), ("upper", got.upper)):
        if is_inf(end):
            continue
        enc = Encoder()
        hyp = [enc.cond(f) for f in facts]
        g = enc.expr(goal)
        for s in list(enc.vars):
            hyp += enc.range(s, ranges[s])
        hyp += enc.side
        prove(g >= end if side == "lower" else g <= end, hyp,
              what="%s: %s bound %s of %s" % (what, side, end, goal))
        solver = z3.Solver()
        solver.add(*hyp)
        solver.add(g == end)
        require(solver.check() == z3.sat, "%s: %s bound %s of %s is not attained",
                what, side, end, goal)


@proves("project.exact")
def project_exact():
    s0, s1 = E.Sym(0), E.Sym(1)
    n, m = s0.expr, s1.expr
    top = ValueRange(2, INT_OO)
    cases = [
        (n, [R.ge(E.floordiv(n + 1, 2), 2)], {s0: top}),
        (n, [R.eq(E.floordiv(n, 100), 30)], {s0: top}),
        (n, [R.le(E.floordiv(n, 4), 4)], {s0: top}),
        (n, [R.le(n * n, 100)], {s0: top}),
        (n, [R.eq(E.smin(n, 5), 5)], {s0: top}),
        (n, [R.le(E.floordiv(3 * n, 2), 12)], {s0: top}),
        (n, [R.le(m, n - 1)], {s0: top, s1: top}),
        (m, [R.le(n * m, 28), R.ge(n, 3)], {s0: top, s1: top}),
        (n - m, [R.ge(n, m + 2), R.le(m, 64)], {s0: ValueRange(1, INT_OO),
                                                 s1: ValueRange(1, INT_OO)}),
        (n, [R.ge(E.smax(0, E.smin(256, n + 1) - E.smin(256, n)), 1)], {s0: top}),
    ]
    for goal, facts, ranges in cases:
        got = project(goal, facts, ranges)
        _check_projection(goal, facts, ranges, got, "project")
    # never narrower than the truth when the facts are contradictory: the sound interval
    got = project(n, [R.le(n, 1)], {s0: top})
    require(got == ValueRange(2, INT_OO), "contradictory facts gave %s", got)


@proves("project.drop_implied")
def project_drop_implied():
    # a fact implied by the ranges alone adds nothing: {f, ranges} and {ranges} have the
    # same points; the environment drops it only when Z3 proves the implication
    n, lo, hi = z3.Ints("n lo hi")
    f = z3.Bool("f")
    prove(z3.Implies(z3.Implies(z3.And(lo <= n, n <= hi), f),
                     z3.And(lo <= n, n <= hi, f) == z3.And(lo <= n, n <= hi)))
    env, x = _env((5, 2, INT_OO))
    X = x.expr
    env.add_guard(R.ge(E.floordiv(X + 1, 2), 2), None)
    require(env.ranges[x] == ValueRange(3, INT_OO) and not env.facts,
            "(n + 1)//2 >= 2 should leave n in [3, int_oo] and no fact: %s %s",
            env.ranges[x], env.facts)


# ---------------------------------------------------------------------------- ranges.py
@proves("range.divmod_split")
def range_divmod_split():
    P = Py()
    s, k, lo, hi = z3.Ints("s k lo hi")
    q, r = P.floordiv(s, k), P.mod(s, k)
    P.prove(z3.And(s == k * q + r, 0 <= r, r <= k - 1,
                   P.floordiv(lo, k) <= q, q <= P.floordiv(hi, k)),
            k > 0, lo <= s, s <= hi)
    # the real bound() on a grid: every value of the expression lies in its range
    s0 = E.Sym(0)
    S = s0.expr
    exprs = [S - E.floordiv(S, 2), -S + E.floordiv(S, 2), S - 3 * E.floordiv(S, 3),
             2 * S - E.floordiv(S, 4) + E.mod(S, 4), E.floordiv(-S, 2)]
    for lo_, hi_ in [(2, 9), (0, 5), (-7, 3), (5, 5)]:
        vr = ValueRange(lo_, hi_)
        for e in exprs:
            got = bound(e, lambda _s: vr)
            for v in range(lo_, hi_ + 1):
                val = E.evaluate(e, {s0: v})
                require(val in got, "bound(%s) over %s = %s misses %d at s = %d",
                        e, vr, got, val, v)


@proves("range.minmax_push")
def range_minmax_push():
    r, a, b = z3.Ints("r a b")
    prove(z3.And(r + zmax(a, b) == zmax(r + a, r + b), r - zmax(a, b) == zmin(r - a, r - b),
                 r + zmin(a, b) == zmin(r + a, r + b), r - zmin(a, b) == zmax(r - a, r - b)))
    s0, s1 = E.Sym(0), E.Sym(1)
    A, B = s0.expr, s1.expr
    ranges = {s0: ValueRange(-3, 6), s1: ValueRange(0, 4)}
    for e in [E.smax(A, B) - A, B - E.smin(A, B), E.smax(A, B) - B + 2]:
        got = bound(e, ranges.__getitem__)
        for va, vb in itertools.product(range(-3, 7), range(0, 5)):
            val = E.evaluate(e, {s0: va, s1: vb})
            require(val in got, "bound(%s) = %s misses %d", e, got, val)
    require(bound(E.smax(A, B) - A, ranges.__getitem__).lower == 0,
            "Max(a, b) - a should be bounded below by 0")


# ---------------------------------------------------------------------------- solver
@proves("solve.factor_pairs")
def solve_factor_pairs():
    P = Py()
    x1, x2, k1, k2, c = z3.Ints("x1 x2 k1 k2 c")
    b1, b2 = k1 * P.floordiv(x1, k1), k2 * P.floordiv(x2, k2)
    hyps = [x1 >= 1, x2 >= 1, k1 >= 1, k2 >= 1, c >= 1]
    # the two facts the rule rests on: 0 <= k*(x//k) <= x, equal exactly when k | x
    P.prove(z3.And(0 <= b1, b1 <= x1, (b1 == x1) == (P.mod(x1, k1) == 0)), *hyps)
    # then products of positive factors are equal exactly when every factor is
    y1, y2 = z3.Ints("y1 y2")
    prove((c * x1 * x2 == c * y1 * y2) == z3.And(y1 == x1, y2 == x2),
          x1 >= 1, x2 >= 1, c >= 1, 0 <= y1, y1 <= x1, 0 <= y2, y2 <= x2)
    # the engine on the reshape equation: what it learns has the same solutions
    env, h, w = _env((8, 2, 40), (6, 2, 40))
    H, W = h.expr, w.expr
    eq = R.eq(H * W, 4 * E.floordiv(H, 2) * E.floordiv(W, 2))
    env.add_guard(eq, None)
    require(not env.facts and h in env.replacements and w in env.replacements,
            "dh*dw == 4*(dh//2)*(dw//2) should give two congruences, got facts %s, "
            "replacements %s", env.facts, env.replacements)
    for vh, vw in itertools.product(range(2, 41), range(2, 41)):
        want = vh * vw == 4 * (vh // 2) * (vw // 2)
        got = vh % 2 == 0 and vw % 2 == 0
        require(want == got, "at dh=%d, dw=%d the equation is %s but the congruences %s",
                vh, vw, want, got)


@proves("fold.minmax_by_facts")
def fold_minmax_by_facts():
    a, b = z3.Ints("a b")
    prove(z3.And(zmax(a, b) == a, zmin(a, b) == b), a >= b + 2)
    env, s, t = _env((9, 1, INT_OO), (3, 1, 64))
    S, T = s.expr, t.expr
    env.add_guard(R.ge(S, T + 2), None)
    require(env.simplify(E.smax(S, T)) == S and env.simplify(E.smin(S, T)) == T,
            "a >= b + 2 should fold Max(a, b) to a and Min(a, b) to b: %s, %s",
            env.simplify(E.smax(S, T)), env.simplify(E.smin(S, T)))


@proves("solve.residue_split")
def solve_residue_split():
    P = Py()
    s, k = z3.Ints("s k")
    f = z3.Function("f", z3.IntSort(), z3.BoolSort())
    q, r = P.floordiv(s, k), P.mod(s, k)
    # the case split itself: s is K*q + r with q = s // K and r = s % K in [0, K)
    P.prove(z3.And(s == k * q + r, 0 <= r, r < k, f(s) == f(k * q + r)), k > 0)
    # the engine on the reshape guard Mod(3*m, 2*(m//2)) == 0: it learns m % 2 == 0, and
    # over a window of m the guard and the congruence agree
    env, m = _env((8, 2, INT_OO))
    M = m.expr
    env.add_guard(R.eq(E.mod(3 * M, 2 * E.floordiv(M, 2)), 0), None)
    require(not env.facts and m in env.replacements,
            "Mod(3*m, 2*(m//2)) == 0 should become a congruence, got facts %s", env.facts)
    for v in range(2, 200):
        require(((3 * v) % (2 * (v // 2)) == 0) == (v % 2 == 0),
                "at m = %d the guard and m %% 2 == 0 disagree", v)


@proves("solve.minmax_equal")
def solve_minmax_equal():
    a, b, y = z3.Ints("a b y")
    prove(z3.And((zmin(a, y) == y) == (y <= a), (zmax(a, y) == y) == (y >= a),
                 (zmin(a, b, y) == y) == z3.And(y <= a, y <= b),
                 (zmax(y, a, b) == y) == z3.And(y >= a, y >= b)))
    # the engine's own rewrite, checked on a window against the equation it replaces
    from symshape.env import _minmax_equal
    s0, s1 = E.Sym(0), E.Sym(1)
    X, N = s0.expr, s1.expr
    for eq in (N - E.smin(X, N), E.smax(X, N) - N, E.smin(X, N, 7) - N):
        c = _minmax_equal(eq)
        require(c is not None, "no rewrite of %s == 0", eq)
        for vx, vn in itertools.product(range(-3, 12), range(-3, 12)):
            p = {s0: vx, s1: vn}
            want = E.evaluate(eq, p) == 0
            got = all(a.holds(E.evaluate(a.expr, p)) for a in
                      (c.args if isinstance(c, R.BoolOp) else (c,)))
            require(want == got, "%s == 0 and %s disagree at %s", eq, c, p)
