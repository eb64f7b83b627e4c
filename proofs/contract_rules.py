"""Proofs of the rules behind the exact contract: the projection of facts onto ranges
(``symshape/reasoning/projection.py``, ``solver.tighten``), the rewrites that let interval
arithmetic see through ``s - s // k`` and ``Max(a, b) - a`` (``symshape/algebra/ranges.py``), the
pairwise matching of reshape factors (``solver.solve_factor_pairs``), the case split on
residues (``solver.split_residues``) and Min / Max folding by facts.

Every proof is about the engine's own output (``proofs/code.py``): the ranges ``project``
returns are proven bounds of the goal on every point of the facts (and each finite end is
attained); the ranges ``_divmod_split`` / ``_minmax_pushed`` return are proven to hold the
expression for every member of the box; after the environment learns a guard, what it
admits (replacements, root ranges, facts) is proven to be exactly the guard's solutions;
and a Min / Max the environment folds by its facts is proven equal to the original on every
point of the facts.
"""
from __future__ import annotations


import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG
from symshape.algebra import relations as R
from symshape.reasoning import decision
from symshape.algebra import simplify
from symshape.reasoning import solver
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.reasoning import projection as PJ
from symshape.algebra.ranges import ValueRange, bound

from . import samples, proves
from .code import Symbols, divisors, encode, encode_cond, prove_code
from .pyint import Py, prove, require, zmax, zmin
from .range_rules import _member, prove_box_ranges
from .solver_rules import _in_ranges, _solutions_kept


def _env(*specs):
    env = ShapeEnv()
    syms = [env.create_symbol(h, "v%d" % i, ValueRange(lo, hi))
            for i, (h, lo, hi) in enumerate(specs)]
    return (env,) + tuple(syms)


def _learned(specs, guard_fn, what: str):
    """A fresh environment learns ``guard_fn(*symbols)``; proves that what it then admits
    is exactly the guard's solutions inside the old ranges.  The environment is returned."""
    env, *syms = _env(*specs)
    old = dict(env.ranges)
    g = guard_fn(*(s.expr for s in syms))
    env.add_guard(g, None)
    _solutions_kept(old, g, env, syms, what)
    return env, syms


# ---------------------------------------------------------------------------- projection
def _check_projection(goal, facts, ranges, got: ValueRange, what: str) -> None:
    """The code's ``got`` bounds ``goal`` on every point of ``facts`` and ``ranges`` (Z3:
    nothing beyond it), and each finite end is attained (Z3: a point on it)."""
    for side, end in (("lower", got.lower), ("upper", got.upper)):
        if is_inf(end):
            continue
        P_ = Py()
        zs = Symbols()
        g = encode(P_, goal, zs)
        hyp = [encode_cond(P_, f, zs) for f in facts]
        for f in facts:
            hyp += [d != 0 for d in divisors(P_, f, zs)]
        hyp += [c for s in list(zs) for c in _member(ranges[s], zs[s])]
        prove_code(lambda v: g >= v if side == "lower" else g <= v, [z3.IntVal(end)], hyp,
                   P=P_, what="%s: %s bound %s of %s" % (what, side, end, goal))
        solver = z3.Solver()
        solver.add(*hyp)
        solver.add(*P_.side)
        solver.add(g == end)
        require(solver.check() == z3.sat, "%s: %s bound %s of %s is not attained",
                what, side, end, goal)


@proves("project.exact", over=samples("hand-picked goals and facts"))
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
    # the ways out before the solver: a constant goal, one symbol with no facts
    cases += [(7, [], {}), (n, [], {s0: ValueRange(3, 9)})]
    finite = 0
    for goal, facts, ranges in cases:
        # through the module, so the coverage check sees which of its returns ran
        got = PJ.project(goal, facts, ranges)
        finite += (not is_inf(got.lower)) + (not is_inf(got.upper))
        _check_projection(goal, facts, ranges, got, "project")
    require(finite >= 12, "project left most ends open (%d finite)", finite)
    # never narrower than the truth when the facts are contradictory: the sound interval
    got = PJ.project(n, [R.le(n, 1)], {s0: top})
    require(got == ValueRange(2, INT_OO), "contradictory facts gave %s", got)


def _facts_kept(env: ShapeEnv, before, what: str) -> None:
    """On the environment's ranges, its facts say exactly what ``before`` said."""
    P_ = Py()
    zs = Symbols()
    old = z3.And(*[encode_cond(P_, f, zs) for f in before]) if before else z3.BoolVal(True)
    new = z3.And(*[encode_cond(P_, f, zs) for f in env.facts]) if env.facts else \
        z3.BoolVal(True)
    hyps = _in_ranges(env, zs, list(env.ranges))
    hyps += [d != 0 for f in before for d in divisors(P_, f, zs)]
    prove_code(lambda v: v == old, [new], hyps, P=P_, what=what)


@proves("project.drop_implied", over=samples("hand-picked facts"))
def project_drop_implied():
    # a fact implied by the ranges alone adds nothing: {f, ranges} and {ranges} have the
    # same points; the environment drops it only when Z3 proves the implication
    n, lo, hi = z3.Ints("n lo hi")
    f = z3.Bool("f")
    prove(z3.Implies(z3.Implies(z3.And(lo <= n, n <= hi), f),
                     z3.And(lo <= n, n <= hi, f) == z3.And(lo <= n, n <= hi)))
    # the code's own output: facts left after dropping, against the facts before (some
    # implied by the ranges, some not, one unbacked)
    env, x, y, u = _env((5, 3, 40), (4, 2, 9), (None, 0, INT_OO))
    X, Y, U = x.expr, y.expr, u.expr
    env.facts = [R.ge(E.floordiv(X + 1, 2), 2), R.le(X * Y, 40), R.ne(E.mod(X, 3), 2),
                 R.le(E.floordiv(X * Y, 4), 90), R.ge(U * U, 0), R.le(E.smax(X, Y), 40)]
    before = list(env.facts)
    solver.drop_implied_facts(env)
    _facts_kept(env, before, "facts after dropping the implied ones")
    require(len(env.facts) < len(before) and R.le(X * Y, 40) in env.facts,
            "implied facts should go and the others stay: %s", env.facts)
    # through the environment: the guard becomes a range and no fact
    env, (v,) = _learned([(5, 2, INT_OO)], lambda V: R.ge(E.floordiv(V + 1, 2), 2),
                         "(n + 1) // 2 >= 2 learned")
    require(env.ranges[v] == ValueRange(3, INT_OO) and not env.facts,
            "(n + 1)//2 >= 2 should leave n in [3, int_oo] and no fact: %s %s",
            env.ranges[v], env.facts)


# ---------------------------------------------------------------------------- ranges.py


@proves("range.divmod_split", over=samples("11 expressions times 5 boxes"))
def range_divmod_split():
    P = Py()
    s, k, lo, hi = z3.Ints("s k lo hi")
    q, r = P.floordiv(s, k), P.mod(s, k)
    P.prove(z3.And(s == k * q + r, 0 <= r, r <= k - 1,
                   P.floordiv(lo, k) <= q, q <= P.floordiv(hi, k)),
            k > 0, lo <= s, s <= hi)
    s0, s1 = E.Sym(0), E.Sym(1)
    S, T = s0.expr, s1.expr
    exprs = [S - E.floordiv(S, 2), -S + E.floordiv(S, 2), S - 3 * E.floordiv(S, 3),
             2 * S - E.floordiv(S, 4) + E.mod(S, 4), E.floordiv(-S, 2),
             S - 2 * E.floordiv(S, 2) - E.mod(S, 2),             # cancels to a constant
             3 * S - 9 * E.floordiv(S, 3) - 3 * E.mod(S, 3) + 4,
             S + T - E.floordiv(S, 2) + E.mod(S + T, 3),          # a numerator not a symbol
             T * S - E.floordiv(S, 2),                            # s only in a product
             # two symbols split in turn: each split's quotient stays its own
             S - T + E.floordiv(S, 2) - E.floordiv(T, 3),
             S + T - E.floordiv(S, 2) - E.floordiv(T, 4)]
    boxes = [ValueRange(2, 9), ValueRange(-7, 3), ValueRange(5, 5), ValueRange(0, INT_OO),
             ValueRange(NEG_INT_OO, -1)]
    n = prove_box_ranges(lambda e, rng: RG._divmod_split(e, rng), exprs, (s0, s1), boxes,
                   "_divmod_split")
    require(n > 0, "_divmod_split rewrote nothing")
    # and it is what makes bound() tight: s - s // 2 >= 1 for s >= 2
    got = bound(S - E.floordiv(S, 2), {s0: ValueRange(2, 9)}.__getitem__)
    require(got.lower == 1, "bound(s - s // 2) over [2, 9] = %s, expected lower end 1", got)


@proves("range.minmax_push", over=samples("8 expressions times 4 boxes"))
def range_minmax_push():
    r, a, b = z3.Ints("r a b")
    prove(z3.And(r + zmax(a, b) == zmax(r + a, r + b), r - zmax(a, b) == zmin(r - a, r - b),
                 r + zmin(a, b) == zmin(r + a, r + b), r - zmin(a, b) == zmax(r - a, r - b)))
    s0, s1 = E.Sym(0), E.Sym(1)
    A, B = s0.expr, s1.expr
    exprs = [E.smax(A, B) - A, B - E.smin(A, B), E.smax(A, B) - B + 2,
             E.smin(A, 2 * B) + 3 * A - 1, E.smax(A, B) + 3,    # nothing to push in
             E.smax(A, B) - E.smin(A, B),          # two Min / Max terms: not pushed
             2 * E.smax(A, B) - A,                 # coefficient 2: not pushed
             A * E.smax(A, B) - B]                 # Max inside a product: not pushed
    boxes = [ValueRange(-3, 6), ValueRange(0, 4), ValueRange(1, INT_OO),
             ValueRange(NEG_INT_OO, 2)]
    n = prove_box_ranges(lambda e, rng: RG._minmax_pushed(e, rng), exprs, (s0, s1), boxes,
                   "_minmax_pushed")
    require(n > 0, "_minmax_pushed rewrote nothing")
    ranges = {s0: ValueRange(-3, 6), s1: ValueRange(0, 4)}
    require(bound(E.smax(A, B) - A, ranges.__getitem__).lower == 0,
            "Max(a, b) - a should be bounded below by 0")


# ---------------------------------------------------------------------------- solver
@proves("fold.minmax_by_facts", over=samples("hand-picked Min / Max under facts"))
def fold_minmax_by_facts():
    env, s, t, u, v = _env((9, 1, INT_OO), (3, 1, 64), (5, 1, 20), (7, 1, 20))
    S, T, U, V = s.expr, t.expr, u.expr, v.expr
    env.add_guard(R.ge(S, T + 2), None)
    require(bool(env.facts), "s >= t + 2 should stay a fact: %s", env.ranges)
    folded = 0
    for e in (E.smax(S, T), E.smin(S, T), E.smin(S, T, U), E.smax(T + 1, S, 3),
              E.smax(U, V),                       # symbols the facts do not mention
              E.smin(S + 1, T + 3), E.smax(S, 2 * T)):
        got = env.simplify(e)
        folded += got != e
        P_ = Py()
        zs = Symbols()
        want = encode(P_, e, zs)
        hyps = _in_ranges(env, zs, (s, t, u, v)) + [encode_cond(P_, f, zs) for f in env.facts]
        prove_code(lambda x: x == want, [encode(P_, got, zs)], hyps, P=P_,
                   what="Min/Max folded by facts: %s became %s" % (e, got))
    require(env.simplify(E.smax(S, T)) == S and env.simplify(E.smin(S, T)) == T,
            "a >= b + 2 should fold Max(a, b) to a and Min(a, b) to b: %s, %s",
            env.simplify(E.smax(S, T)), env.simplify(E.smin(S, T)))
    # a pair whose difference is a constant is decided without the solver
    require(simplify.dominates(env, "Min", S + 1, S) is False and
            simplify.dominates(env, "Max", S + 1, S),
            "S + 1 against S should be decided by the constant difference")


# ---------------------------------------------------------------------------- contract
def _cs(dims, ranges, facts):
    """A constraint set with one array input per compound dim list, as export makes it."""
    from symshape.contract.constraint_set import ConstraintSet, InputDesc
    descs = [InputDesc("x%d" % i, "x%d" % i, dims=d, dtype="float64")
             for i, d in enumerate(dims)]
    return ConstraintSet(descs, dict(ranges), list(facts), {}, {})


@proves("contract.shown_guards", over=samples("hand-picked guards"))
def contract_shown_guards():
    from symshape.contract.guard_text import shown_facts
    s0, s1, s2 = E.Sym(0), E.Sym(1), E.Sym(2)
    A, B, C = s0.expr, s1.expr, s2.expr
    top = ValueRange(2, INT_OO)
    cases = [
        # z.shape[0] = s0 + s1, and the guard s0 + s1 <= 20: the printed [4, 20] says it
        ([(A,), (B,), (A + B,)], {s0: top, s1: top}, [R.le(A + B, 20)], 0),
        # a guard implied by another guard goes, the other stays
        ([(A,), (B,)], {s0: top, s1: top}, [R.le(A + B, 20), R.le(A + B, 30)], 1),
        # a relation no range says stays
        ([(A,), (B,), (C,)], {s0: top, s1: top, s2: top},
         [R.le(B, A - 1), R.le(A + C, 50)], 2),
        # a compound dim's printed range says one guard, not the other
        ([(A,), (B,), (A * B,)], {s0: top, s1: top}, [R.le(A, B), R.le(A * B, 60)], 1),
        ([(A,), (B,), (A * B,)], {s0: top, s1: top}, [R.le(A, B), R.le(A + B, 20)], 2),
    ]
    for dims, ranges, facts, n_left in cases:
        cs = _cs(dims, ranges, facts)
        shown = shown_facts(cs)
        said = []
        for e, vr in cs.range_constraints().items():
            if type(e) is E.Expr and e.as_symbol() is None:
                said += [c for c in (None if is_inf(vr.lower) else R.ge(e, vr.lower),
                                     None if is_inf(vr.upper) else R.le(e, vr.upper))
                         if c is not None and not isinstance(c, bool)]
        P_ = Py()
        zs = Symbols()
        hyp = [c for s in ranges for c in _member(ranges[s], zs[s])]
        old = z3.And(*[encode_cond(P_, f, zs) for f in facts])
        new = z3.And(*([encode_cond(P_, f, zs) for f in shown + said] or [z3.BoolVal(True)]))
        prove_code(lambda v: v == old, [new], hyp, P=P_,
                   what="the guards shown with the printed ranges, for %s" % facts)
        require(len(shown) == n_left, "%s: expected %d guards shown, got %s", facts,
                n_left, shown)


@proves("contract.relation_box", over=samples("hand-picked relations and boxes"))
def contract_relation_box():
    from symshape.specs.constraints import relation_box
    from symshape.specs.dims import Dim
    cases = [
        # (example, declared range) of each Dim, the relation
        [(8, 4, 64), (3, 2, 16)], lambda d, n: [R.le(n, d)],
        [(20, 2, 64), (3, 2, 100)], lambda d, n: [R.le(n, d)],
        [(8, 2, 64), (3, 2, 64)], lambda d, n: [R.eq(E.smax(0, n + 2 - d), 0)],
        [(6, 2, INT_OO), (7, 2, INT_OO)], lambda d, n: [R.ge(d + n, 11)],
        [(10, 2, 64), (3, 2, 64)], lambda d, n: [R.le(2 * n, d), R.le(d + n, 40)],
        # three Dims: one narrowed; one split and one narrowed; two split and one narrowed
        [(5, 2, 14), (6, 2, 64), (20, 2, 100)], lambda a, b, c: [R.le(a + b, c)],
        [(5, 2, 64), (6, 2, 64), (20, 2, 100)], lambda a, b, c: [R.le(a + b, c)],
        [(5, 4, 64), (6, 4, 64), (20, 2, 20)], lambda a, b, c: [R.le(a + b, c)],
        [(3, 2, 64), (4, 2, 64), (5, 2, 64), (30, 2, 64)],
        lambda a, b, c, d: [R.le(a + b + c, d)],
    ]
    for specs, rel in zip(cases[::2], cases[1::2]):
        env = ShapeEnv()
        syms = tuple(env.create_symbol(h, "d%d" % i, ValueRange(lo, hi), kind="named",
                                       dim=Dim("d%d" % i, min=lo,
                                               max=None if is_inf(hi) else hi))
                     for i, (h, lo, hi) in enumerate(specs))
        group = rel(*(t.expr for t in syms))
        box = relation_box(env, syms, group)
        require(box is not None, "no box for %s", group)
        P_ = Py()
        zs = Symbols()
        for t in syms:
            require(box[t].issubset(env.ranges[t]) and env.infos[t].hint in box[t] and
                    box[t].lower < box[t].upper,
                    "%s: box %s of %s leaves the ranges %s or the example", group, box[t],
                    t, env.ranges[t])
        hyp = [c for t in syms for c in _member(box[t], zs[t])]
        holds = z3.And(*[encode_cond(P_, f, zs) for f in group])
        prove_code(lambda v: v, [holds], hyp, P=P_,
                   what="every point of the box %s satisfies %s" % (box, group))
    # no box: every split leaves a violating point, or a single size
    env = ShapeEnv()
    syms = tuple(env.create_symbol(h, "d%d" % i, ValueRange(lo, hi), kind="named",
                                   dim=Dim("d%d" % i, min=lo, max=hi))
                 for i, (h, lo, hi) in enumerate([(5, 5, 6), (6, 6, 7), (11, 11, 12)]))
    a, b, c = (t.expr for t in syms)
    require(relation_box(env, syms, [R.le(a + b, c)]) is None, "a box for a + b <= c "
            "holding 5, 6, 11 with two sizes each")


@proves("contract.readable_guard", over=samples("hand-picked guards"))
def contract_readable_guard():
    from symshape.specs.constraints import _readable
    s0, s1 = E.Sym(0), E.Sym(1)
    D, N = s0.expr, s1.expr
    for c in (R.eq(E.smax(0, N + 2 - D), 0), R.eq(E.smax(0, 3 * N - D), 0),
              R.eq(E.smax(N - 5, 0), 0)):
        got = _readable(c)
        require(got is not c, "%s should read as an inequality", c)
        P_ = Py()
        zs = Symbols()
        prove_code(lambda v: v == encode_cond(P_, c, zs), [encode_cond(P_, got, zs)], [],
                   P=P_, what="%s reads as %s" % (c, got))


@proves("contract.readable_minmax", over=samples("hand-picked Min / Max"))
def contract_readable_minmax():
    from symshape.contract.guard_text import readable_minmax
    s0, s1, s2 = E.Sym(0), E.Sym(1), E.Sym(2)
    X, Y, Z = s0.expr, s1.expr, s2.expr
    top = ValueRange(2, INT_OO)
    ranges = {s0: top, s1: top, s2: ValueRange(0, 50)}
    m = E.smin(X, Y)
    changed = [
        R.eq(E.smin(20, E.floordiv(m, 3)), E.smin(X, Y, E.floordiv(m, 3))),
        R.eq(E.smax(8, E.floordiv(X, 4)), E.floordiv(X, 4)),
        R.eq(E.smax(Y, X + 1), E.smax(X + 1, Y, X)),
        R.eq(E.smin(Z, E.floordiv(X, 2)), E.floordiv(X, 2)),
        R.eq(E.smin(X, Y), X),
    ]
    kept = [
        R.eq(E.smin(X, Y), E.smin(Y, Z)),            # neither side one argument
        R.eq(E.smin(X, 7), E.smax(X, 7)),             # Min against Max
        R.le(E.smin(X, 7), 3),                        # not an equality
        R.eq(E.smin(X, Y), Y + 1),                    # y not among the arguments
        R.eq(E.smin(X, Y), E.smin(X, Y, Z * X)),      # Z * X >= 0 >= ... not dominated
    ]
    for c in changed + kept:
        if type(c) is bool:
            continue
        got = readable_minmax(c, ranges)
        if c in changed:
            require(got is not c, "%s should read without Min / Max equality", c)
        P_ = Py()
        zs = Symbols()
        hyps = [d != 0 for d in divisors(P_, c, zs)]
        want = encode_cond(P_, c, zs)
        hyps += [h for s in list(zs) for h in _member(ranges[s], zs[s])]
        prove_code(lambda v: v == want, [encode_cond(P_, got, zs)], hyps, P=P_,
                   what="%s reads as %s" % (c, got))
    # a symbol without a range, and a guard the ranges already settle, are left alone
    c = changed[0]
    require(readable_minmax(c, {s0: top}) is c, "a symbol without a range was rewritten")
    c = R.eq(E.smin(Z, 60), Z)
    require(type(c) is bool or readable_minmax(c, ranges) is c,
            "a guard the ranges settle became a constant")


@proves("contract.axis_terms", over=samples("hand-picked axis terms"))
def contract_axis_terms():
    from symshape.contract.guard_text import in_axis_terms
    s0, s1, s2 = E.Sym(0), E.Sym(1), E.Sym(2)
    X, Y, Z = s0.expr, s1.expr, s2.expr
    # x.shape[0] == 4*s0, z.shape[0] == 3*s2 + 1 (solved roots), y.shape[0] == s1 (plain)
    solved = {s0: (4, 0, "x.shape[0]"), s2: (3, 1, "z.shape[0]")}
    changed = [R.le(Y + X * 4, 20), R.le(X * 8 + Z * 3 + Y, 50), R.eq(Z * 6, Y * 2 + 2),
               R.combine("and", [R.le(Y + X * 4, 20), R.le(Z * 3, 9)])]
    kept = [R.le(Y + X * 2, 20), R.le(E.floordiv(X, 2) + Y, 7), R.le(Z + Y, 9)]
    for c in changed + kept:
        axes = {}
        got = in_axis_terms(c, solved, axes)
        require((got is not c) == (c in changed), "%s: rewritten is %s", c, got is not c)
        P_ = Py()
        zs = Symbols()
        want = encode_cond(P_, c, zs)
        impl = encode_cond(P_, got, zs)
        hyps = [zs[t] == a * zs[r] + rest
                for t, text in axes.items()
                for r, (a, rest, axis) in solved.items() if axis == text]
        hyps += [d != 0 for d in divisors(P_, c, zs)]
        prove_code(lambda v: v == want, [impl], hyps, P=P_, what="%s reads as %s" % (c, got))


# ---------------------------------------------------------------------------- deciding
@proves("decide.fact_sum", over=samples("hand-picked facts and goals"))
def decide_fact_sum():
    # the lemma: f_1, f_2 <= 0 and e - f_1 - f_2 <= 0 give e <= 0
    e, f1, f2 = z3.Ints("e f1 f2")
    prove(e <= 0, f1 <= 0, f2 <= 0, e - f1 - f2 <= 0)
    # and on the code's own answers: each one is implied by the facts and the ranges
    env, a, b, c = _env((9, 1, INT_OO), (5, 1, 64), (12, 1, 30))
    A, B, C = a.expr, b.expr, c.expr
    fact_sets = [
        [R.ge(A, B + 2)],
        [R.le(A, B), R.le(B, C)],
        [R.eq(C, A + B)],
        [R.le(A * B, 64), R.ge(A, 8)],
        [R.ge(A, E.floordiv(B, 2) + 3), R.le(B, C - 1)],
        [R.eq(2 * A, B + 1), R.le(E.smax(A, C), 12)],
    ]
    goals = [R.ge(A, B), R.ge(A, 3), R.le(A, C), R.gt(B, C), R.ge(C, A + 1), R.eq(C - B, A),
             R.ne(C, A), R.le(A, B + 1), R.lt(A, B), R.ge(A, E.floordiv(B, 2)),
             R.le(B, 2 * A), R.ge(C, B), R.eq(C - A, B + 1)]
    answered = 0
    for facts in fact_sets:
        for goal in goals:
            if type(goal) is bool:
                continue
            d = decision.decide_by_fact_sums(env, goal, facts)
            if d is None:
                continue
            answered += 1
            P_ = Py()
            zs = Symbols()
            hyps = [encode_cond(P_, f, zs) for f in facts]
            hyps += [x != 0 for f in facts for x in divisors(P_, f, zs)]
            g = encode_cond(P_, goal, zs)
            hyps += _in_ranges(env, zs, [a, b, c])
            prove_code(lambda v: v, [g if d else z3.Not(g)], hyps, P=P_,
                       what="%s decided %s from %s" % (goal, d, facts))
    require(answered >= 10, "fact sums decided only %d goals", answered)
    # ``and`` / ``or`` and long fact lists are left to the later steps
    both = R.combine("and", [R.ge(A, B), R.le(A, C)])
    require(decision.decide_by_fact_sums(env, both, fact_sets[1]) is None,
            "a conjunction was decided by fact sums")
    many = [R.le(A, B + k) for k in range(decision.FACT_SUM_LIMIT + 1)]
    require(decision.decide_by_fact_sums(env, R.le(A, B + 1), many) is None,
            "more facts than the limit were summed")


# ---------------------------------------------------------------------------- bounds
@proves("bounds.univariate",
        over=samples("seven polynomials (the root bound: every polynomial of degree <= 2)"))
def bounds_univariate():
    from symshape.reasoning.symbolic import univariate_range
    # the root bound the rule rests on, for a quadratic derivative d2*x^2 + d1*x + d0
    x, d0, d1, d2 = z3.Reals("x d0 d1 d2")
    R_ = z3.Real("R")
    prove(z3.Implies(z3.And(d2 != 0, R_ >= 1, R_ * z3.If(d2 > 0, d2, -d2) >=
                            z3.If(d2 > 0, d2, -d2) + z3.If(d1 > 0, d1, -d1),
                            R_ * z3.If(d2 > 0, d2, -d2) >= z3.If(d2 > 0, d2, -d2) +
                            z3.If(d0 > 0, d0, -d0), x >= R_),
                     d2 * (d2 * x * x + d1 * x + d0) > 0))
    # the code's own root bound, for *every* integer polynomial of degree 1 and 2 (the
    # derivative of a quadratic or a cubic): run on symbolic coefficients, on every path of
    # its branches the bound T it returns has the leading sign from T on (Z3, reals)
    _cauchy_turn_symbolic()
    # the code's own output: exact ranges of polynomials over their symbol's range
    cases = [
        (lambda a: a * a - 2 * a + 1, (1, INT_OO)),
        (lambda a: a * a - 5 * a + 6, (1, INT_OO)),
        (lambda a: a * a * a - a * a, (1, INT_OO)),
        (lambda a: a * a - a, (1, 10)),
        (lambda a: 7 * a - a * a, (1, INT_OO)),
        (lambda a: a * a * a - 12 * a * a + 20 * a, (2, 40)),
        (lambda a: -(a * a * a) + 30 * a, (1, INT_OO)),
    ]
    for fn, (lo, hi) in cases:
        env, s = _env((lo, lo, hi))
        goal = fn(s.expr)
        got = univariate_range(goal, env)
        require(got is not None, "no range for %s", goal)
        _check_projection(goal, [], env.ranges, got, "univariate range of %s" % goal)


#: the degrees of p' the root bound is proven for on symbolic coefficients (p' of degree 3
#: takes Z3 over ten seconds; the polynomials of the cases below go beyond it)
CAUCHY_DEGREES = (1, 2)


def _cauchy_turn_symbolic() -> None:
    from symshape.reasoning.symbolic import cauchy_turn
    from .symexec import Ext, Explorer, patched, raise_on_paths
    for top in CAUCHY_DEGREES:
        ds = z3.Ints(" ".join("d%d_%d" % (k, top) for k in range(top + 1)))
        ex = Explorer([ds[top] != 0])
        with patched(ex):
            paths = ex.paths(lambda: cauchy_turn({k: Ext(0, d) for k, d in enumerate(ds)},
                                                 top))
        raise_on_paths(paths, "cauchy_turn")
        x = z3.Real("x_%d" % top)
        deriv = sum(z3.ToReal(d) * x ** k for k, d in enumerate(ds))
        for pc, got in paths:
            t = got.v if isinstance(got, Ext) else z3.IntVal(got)
            prove_code(lambda v: z3.Implies(x >= z3.ToReal(v), z3.ToReal(ds[top]) * deriv > 0),
                       [t], ds[top] != 0, *pc, P=ex.P,
                       what="Cauchy bound of a degree-%d polynomial" % top)


@proves("bounds.minmax_cases", over=samples("hand-picked Min / Max goals"))
def bounds_minmax_cases():
    from symshape.reasoning.symbolic import minmax_cases
    x, y, e1, e2 = z3.Ints("x y e1 e2")
    prove(z3.Implies(z3.And(x >= y), zmax(x, y) == x))
    prove(z3.Implies(z3.And(y >= x), zmax(x, y) == y))
    prove(z3.Or(x >= y, y >= x))
    env, a, b = _env((5, 1, INT_OO), (3, 1, INT_OO))
    A, B = a.expr, b.expr
    cases = [
        (E.smax(A, B) + E.smin(A, B) - A - B, []),
        (E.smax(A, B) - E.smin(A, B), []),
        (E.smax(0, E.smin(256, A + 1) - E.smin(256, A)), []),
        (E.smax(A, B) - A, [R.ge(A, B + 2)]),
        (E.smin(A, 4) + E.smax(B, 4) - A, [R.le(A, 3)]),
    ]
    for goal, facts in cases:
        got = minmax_cases(goal, facts, env)
        require(got is not None, "no case range for %s", goal)
        P_ = Py()
        zs = Symbols()
        g = encode(P_, goal, zs)
        hyp = [encode_cond(P_, f, zs) for f in facts]
        hyp += [c for s in list(zs) for c in _member(env.ranges[s], zs[s])]
        ends = [v for v in (got.lower, got.upper) if not is_inf(v)]
        require(ends, "%s: no finite end in %s", goal, got)
        for side, end in (("lower", got.lower), ("upper", got.upper)):
            if is_inf(end):
                continue
            prove_code(lambda v: g >= v if side == "lower" else g <= v, [z3.IntVal(end)],
                       hyp, P=P_, what="case range %s of %s" % (got, goal))


@proves("bounds.slack", over=samples("hand-picked goals"))
def bounds_slack():
    from symshape.reasoning.symbolic import slack_substituted
    r_, b_, t_ = z3.Ints("r b t")
    prove(z3.Implies(r_ - b_ <= 0, z3.And(b_ == r_ + (b_ - r_), b_ - r_ >= 0)))
    env, a, b = _env((3, 1, INT_OO), (5, 1, INT_OO))
    A, B = a.expr, b.expr
    cases = [
        (B * B - A * A, [R.le(A, B)]),
        (A * B - A * A, [R.le(A, B)]),
        (B * B - 4 * A * A, [R.le(2 * A, B)]),
        (A * B - 2 * A - A * A, [R.le(A + 2, B)]),
    ]
    for goal, facts in cases:
        got = slack_substituted(goal, facts, env)
        require(got is not None and not is_inf(got.lower), "no slack range for %s", goal)
        P_ = Py()
        zs = Symbols()
        g = encode(P_, goal, zs)
        hyp = [encode_cond(P_, f, zs) for f in facts]
        hyp += [c for s in list(zs) for c in _member(env.ranges[s], zs[s])]
        for side, end in (("lower", got.lower), ("upper", got.upper)):
            if not is_inf(end):
                prove_code(lambda v: g >= v if side == "lower" else g <= v,
                           [z3.IntVal(end)], hyp, P=P_,
                           what="slack range %s of %s" % (got, goal))


# ---------------------------------------------------------------------------- published views
@proves("contract.range_constraints", over=samples("hand-picked programs"))
def contract_range_constraints():
    """``range_constraints`` lists every root and every compound input dim, nothing else,
    each with a range every admitted point lies in and whose finite ends are attained:
    roots narrowed by guards (a hand-built set), roots free of guards, compound dims."""
    import numpy as np
    from symshape.contract.constraint_set import ConstraintSet, InputDesc
    s0, s1, s2 = E.Sym(0), E.Sym(1), E.Sym(2)
    n, m, k = s0.expr, s1.expr, s2.expr
    top = ValueRange(2, INT_OO)
    cases = [
        # guards narrow both roots below their declared ranges
        ({s0: ValueRange(4, INT_OO), s1: top}, [R.le(n + m, 20)], [(n,), (m,), (n + m,)]),
        # a root no guard touches keeps its own range; a product of two connected roots
        ({s0: top, s1: top, s2: ValueRange(0, 9)}, [R.le(m, n - 1)], [(n, m), (k,),
                                                                     (n * m,)]),
        # one root under a congruence, read through a quotient
        ({s0: ValueRange(3, 50)}, [R.eq(E.mod(n, 4), 0)], [(n,), (E.floordiv(n, 4),)]),
    ]
    for ranges, facts, dims in cases:
        cs = ConstraintSet([InputDesc("x%d" % i, "x%d" % i, dims=d, dtype=np.float64)
                            for i, d in enumerate(dims)], dict(ranges), list(facts), {}, {})
        got = cs.range_constraints()
        want = {s.expr for s in ranges} | {e for d in dims for e in d
                                           if type(e) is E.Expr and e.as_symbol() is None}
        require(set(got) == want, "range_constraints keys %s, want %s", sorted(map(str, got)),
                sorted(map(str, want)))
        for e, vr in got.items():
            _check_projection(e, facts, ranges, vr, "range_constraints")


@proves("contract.exact_range", over=samples("hand-picked goals"))
def contract_exact_range():
    """The range ``range_constraints`` prints for a compound input dim is the projection:
    every admitted point lies in it and each finite end is attained (with and without
    residual guards; the polynomial case interval arithmetic left at [-int_oo, int_oo])."""
    import numpy as np
    from symshape.contract.constraint_set import ConstraintSet, InputDesc
    s0, s1 = E.Sym(0), E.Sym(1)
    n, m = s0.expr, s1.expr
    top = ValueRange(2, INT_OO)
    cases = [
        ({s0: ValueRange(5, INT_OO)}, [], n * n - 6 * n + 9),
        ({s0: top, s1: top}, [R.le(n + m, 100)], n * m),
        ({s0: top, s1: top}, [R.le(m, n - 1)], n - m),
        ({s0: ValueRange(2, 40)}, [], E.mod(2 * E.mod(n, 5), 3) + n),
        ({s0: top, s1: top}, [R.eq(E.mod(n, 3), 0)], n + m),
    ]
    for ranges, facts, e in cases:
        dims = [(s.expr,) for s in ranges] + [(e,)]
        cs = ConstraintSet([InputDesc("x%d" % i, "x%d" % i, dims=d, dtype=np.float64)
                            for i, d in enumerate(dims)], dict(ranges), list(facts), {}, {})
        got = cs.range_constraints()[e]
        require(got == cs.exact_range(e), "range_constraints and exact_range disagree")
        require(not is_inf(got.lower), "%s: no finite lower end (%s)", e, got)
        _check_projection(e, facts, ranges, got, "range_constraints")
