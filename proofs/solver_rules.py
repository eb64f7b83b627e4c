"""Proofs of the shape environment's range folding, decision by ranges and equation solver
(``symshape/algebra/simplify.py``, ``decision.py``, ``solver.py``), and of the Z3 encoding itself
(``symshape/reasoning/z3bridge.py``).

A solver rule replaces a guard by a replacement or a range; each lemma shows that the
replacement keeps the solution set: the guard's solutions inside the old ranges are exactly
the values the new form takes inside the new ranges.  Each proof also drives a real
``ShapeEnv`` and proves what it *learned* (its replacements, ranges, facts, simplified
expressions, decisions) right for every integer value in the ranges, with Z3.
"""
from __future__ import annotations

import itertools
from typing import Dict

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning import decision
from symshape.reasoning import solver
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.algebra.ranges import ValueRange

from . import every, samples, proves
from .extint import Ext, X, fin, inside, le, lt, select
from .code import Symbols, divisors, encode, encode_cond, prove_code
from .alike import read_alike
from .folds import fold_step
from .pyint import Py, prove, require, zmax, zmin


# ---------------------------------------------------------------------------- env helpers
def _env(*specs) -> tuple:
    """A ShapeEnv with one symbol per (hint, lower, upper); a None hint: unbacked."""
    env = ShapeEnv()
    syms = [env.create_symbol(h, "v%d" % i, ValueRange(lo, hi))
            for i, (h, lo, hi) in enumerate(specs)]
    return (env,) + tuple(syms)


def _in_ranges(env: ShapeEnv, zs, syms, ranges=None) -> list:
    """Each symbol inside its range (an infinite end is no constraint)."""
    out = []
    for sym in syms:
        r = (ranges or env.ranges)[sym]
        if not is_inf(r.lower):
            out.append(zs[sym] >= r.lower)
        if not is_inf(r.upper):
            out.append(zs[sym] <= r.upper)
    return out


def _check_folds(env: ShapeEnv, syms, cases, what: str) -> None:
    """Each ``(e, want)`` of ``cases`` simplifies to ``want`` (``None``: to anything) and
    keeps its value on the ranges of ``syms``."""
    for e, want in cases:
        got = env.simplify(e)
        if want is not None:
            require(got == want, "%s folded to %s, expected %s", e, got, want)
        _same_on_ranges(env, syms, e, got, what)


def _same_on_ranges(env: ShapeEnv, syms, before, after, what: str) -> None:
    """The environment's output ``after`` (a simplified ``before``) has the same value as
    ``before`` for every symbol value inside the ranges (Z3, not a window)."""
    P_ = Py()
    zs = Symbols()
    want = encode(P_, before, zs)
    hyps = _in_ranges(env, zs, syms) + [d != 0 for d in divisors(P_, before, zs)]
    impl = encode(P_, after, zs)
    prove_code(lambda v: v == want, [impl], hyps, P=P_,
               what="%s: %s became %s" % (what, before, after))


def _same_truth(env: ShapeEnv, syms, before, after, what: str) -> None:
    """The environment's rewritten relation ``after`` holds exactly where ``before`` does,
    for every symbol value inside the ranges."""
    P_ = Py()
    zs = Symbols()
    want = encode_cond(P_, before, zs)
    hyps = _in_ranges(env, zs, syms) + [d != 0 for d in divisors(P_, before, zs)]
    prove_code(lambda v: v == want, [encode_cond(P_, after, zs)], hyps, P=P_,
               what="%s: %s became %s" % (what, before, after))


def _holds(c, p) -> bool:
    if type(c) is bool:
        return c
    if isinstance(c, R.BoolOp):
        vals = [_holds(a, p) for a in c.args]
        return all(vals) if c.op == "and" else any(vals)
    return c.holds(E.evaluate(c.expr, p))


def _admitted(env: ShapeEnv, syms, zs, P_: Py):
    """What the environment admits for the original symbols (Z3 over ``zs``): some root
    values inside the roots' ranges reproduce them through the replacements and satisfy the
    recorded facts.  Built from the environment's own output, with an encoder independent
    of the engine's (``proofs.code.encode``)."""
    rz = Symbols()
    rz.update({sym: z3.Int("root_" + sym.name) for sym in env.ranges})
    inner = Py()
    body = [zs[sym] == encode(inner, env.replacements.get(sym, sym.expr), rz) for sym in syms]
    body += [encode_cond(inner, f, rz) for f in env.facts]
    roots = [sym for sym in rz if sym not in env.replacements]
    body += _in_ranges(env, rz, roots)
    body += inner.side
    bound = [rz[sym] for sym in roots] + [z3.Int(str(q)) for q in _quotients(inner)]
    return z3.Exists(bound, z3.And(*body)) if bound else z3.And(*body)


def _quotients(P_: Py) -> list:
    return sorted({str(v) for v in P_._memo.values()})


def _solutions_kept(old_ranges: Dict, guard, env: ShapeEnv, syms, what: str) -> None:
    """The environment's output keeps the solution set: for every value of the original
    symbols inside their old ranges, the guard holds exactly when the environment (its
    replacements, root ranges and facts) admits the point.  Z3 over all integers."""
    P_ = Py()
    zs = Symbols({sym: z3.Int("orig_" + sym.name) for sym in syms})
    want = encode_cond(P_, guard, zs)
    hyps = _in_ranges(env, zs, syms, old_ranges)
    impl = _admitted(env, syms, zs, P_)
    prove_code(lambda v: v == want, [impl], hyps, P=P_, what="%s: %s" % (what, guard))


# ---------------------------------------------------------------------------- range folding
@proves("fold.small_numerator", over=every(
    "every numerator (its value anywhere in the range bound() gives it: range.bound as "
    "proven), every range (finite or infinite ends symbolic), every int divisor "
    "(symbolic) and both kinds, along every path of fold_small_numerator"))
def fold_small_numerator():
    P_ = Py()
    x, k = z3.Ints("x k")
    P_.prove(z3.And(P_.floordiv(x, k) == 0, P_.mod(x, k) == x), 0 <= x, x < k)
    for kind in ("FloorDiv", "Mod"):
        _small_numerator_every(kind)


def _small_numerator_every(kind: str) -> None:
    """``fold_small_numerator`` run with a symbolic divisor ``d`` and ``bound`` giving a
    symbolic range ``[lo, hi]`` (``proofs/symexec.py``): on every path where it folds, the
    folded value equals ``x // d`` (``x % d``) for every member ``x`` of the range."""
    from symshape.algebra import simplify as SI
    from .symexec import Ext, Explorer, interval, patched, raise_on_paths
    num = E.Sym(964)
    lo, hi, wf, xv, member = interval("num_" + kind)
    dz = z3.Int("den_" + kind)
    ex = Explorer(wf)
    saved = SI.bound
    SI.bound = lambda e, rng: ValueRange(lo, hi)       # bound() as range.bound proves it
    SI.type = lambda v: int if isinstance(v, Ext) else type(v)   # the divisor is an int
    try:
        with patched(ex):
            paths = ex.paths(lambda: SI.fold_small_numerator(kind, num.expr, Ext(0, dz),
                                                             None))
    finally:
        SI.bound = saved
        del SI.type
    raise_on_paths(paths, "fold_small_numerator")
    folded = [(pc, got) for pc, got in paths if got is not None]
    require(folded, "fold_small_numerator never folds")
    P_ = ex.P
    want = P_.floordiv(xv, dz) if kind == "FloorDiv" else P_.mod(xv, dz)
    impl = [encode(P_, got, Symbols({num: xv})) for _, got in folded]
    prove_code(lambda *vs: z3.And(*[z3.Implies(z3.And(*pc), v == want)
                                    for (pc, _), v in zip(folded, vs)]),
               impl, wf, member, P=P_,
               what="%s folded on a symbolic range and divisor (%d paths)"
               % (kind, len(paths)))


# ---------------------------------------------------------------------------- deciding
class _RangesOnly:
    """The environment ``decision.decide_ranges`` reads: the ranges, and a cache that
    always computes (each symbolic path recomputes its bounds)."""

    def __init__(self, ranges) -> None:
        self.ranges = ranges

    def memo(self, table, key, compute, *args):
        return compute(*args)


def _decide_on_symbolic_ranges(conds, syms, what: str) -> int:
    """``decide_ranges`` run on ``conds`` over symbols whose ranges have symbolic ends
    (any integer or infinite end, ``proofs/symexec.py``), along every path: where it
    answers True (False) the condition holds (fails) at every point of the ranges; where
    ``exact`` (a relation over one symbol) and it answers None, both truth values occur."""
    from .symexec import Explorer, interval, patched, raise_on_paths
    ivs = {sym: interval("%s.%s" % (what.replace(" ", "_"), sym.name)) for sym in syms}
    hyps = [c for iv in ivs.values() for c in iv[2]]
    ex = Explorer(hyps)

    def run():
        env = _RangesOnly({sym: ValueRange(iv[0], iv[1]) for sym, iv in ivs.items()})
        return [decision.decide_ranges(env, c) for c, _ in conds]
    with patched(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, what)
    P_ = Py()
    zs = Symbols({sym: iv[3] for sym, iv in ivs.items()})
    member = [m for iv in ivs.values() for m in iv[4]]
    points = [iv[3] for iv in ivs.values()]
    # the answers as Z3 terms: 1 true, 0 false, -1 open, per path and condition
    impl, cases = [], []
    for pc, got in paths:
        cases.append((pc, len(impl)))
        impl += [z3.IntVal(-1 if d is None else int(d)) for d in got]

    def claim(*ans):
        out = []
        for pc, k in cases:
            for j, (c, exact) in enumerate(conds):
                holds = encode_cond(P_, c, zs)
                every = z3.ForAll(points, z3.Implies(z3.And(*member), holds))
                never = z3.ForAll(points, z3.Implies(z3.And(*member), z3.Not(holds)))
                sound = z3.And(z3.Implies(ans[k + j] == 1, every),
                               z3.Implies(ans[k + j] == 0, never))
                if exact:
                    sound = z3.And(sound, z3.Implies(ans[k + j] == -1,
                                                     z3.And(z3.Not(every), z3.Not(never))))
                out.append(z3.Implies(z3.And(*pc), sound))
        return z3.And(*out)
    prove_code(claim, impl, hyps, P=P_, what="%s on symbolic ranges (%d paths)"
               % (what, len(paths)))
    return len(paths)


@proves("decide.by_range",
        over=every("every range of e (finite or infinite ends symbolic) and every operator "
                   "(==, !=, <=), exactly; and / or of any number of conditions: two relations "
                   "on independent ranges run (every pair of answers), every other number by "
                   "the arguments decided alike and read whole (read from the code: "
                   "proofs/alike.py), a nested and / or by the recursive call (induction)"))
def decide_by_range():
    read_alike(decision.decide_ranges)
    Ex = Ext()
    lo, hi, w = Ex.interval("e")
    e, = z3.Ints("e")
    zero = fin(0)
    prove(z3.And(z3.Implies(le(hi, zero), e <= 0), z3.Implies(lt(zero, lo), z3.Not(e <= 0)),
                 z3.Implies(z3.And(lo.s == 0, hi.s == 0, lo.v == 0, hi.v == 0), e == 0),
                 z3.Implies(z3.Not(z3.And(le(lo, zero), le(zero, hi))), e != 0)),
          w, inside(lo, hi, e))
    # the code: decide_ranges sees e only through bound(e), a range; e as a symbol whose
    # range has symbolic ends is every such range
    s0, s1 = E.Sym(940), E.Sym(941)
    A, B = s0.expr, s1.expr
    for op in (R.EQ, R.NE, R.LE):
        _decide_on_symbolic_ranges([(R.make(op, A), True)], (s0,), "decide_ranges")
        for op2 in (R.EQ, R.NE, R.LE):
            _decide_on_symbolic_ranges([(R.BoolOp(kind, (R.make(op, A), R.make(op2, B))),
                                         False) for kind in ("and", "or")], (s0, s1),
                                       "decide_ranges and / or")


# ---------------------------------------------------------------------------- solver
def _solver_paths(hyps: list, fn, what: str):
    """``fn()`` (a ``symshape.reasoning.solver`` helper on ``Ext`` values) along every feasible path
    (``proofs/symexec.py``), the solver module seeing the symbolic infinities too."""
    from symshape.algebra import ranges as RG
    from .symexec import Explorer, patched, raise_on_paths
    ex = Explorer(hyps)
    saved = (solver.INT_OO, solver.NEG_INT_OO)
    with patched(ex):
        solver.INT_OO, solver.NEG_INT_OO = RG.INT_OO, RG.NEG_INT_OO
        try:
            paths = ex.paths(fn)
        finally:
            solver.INT_OO, solver.NEG_INT_OO = saved
    raise_on_paths(paths, what)
    return ex, paths


def _ranges_on_paths(paths) -> tuple:
    """The ranges the code returned, as Z3 terms: (terms, [(path condition, index)]) for
    the paths that returned a range (None: no claim on that path)."""
    from .symexec import to_pair
    impl, cases = [], []
    for pc, got in paths:
        if got is not None:
            cases.append((pc, len(impl)))
            impl += [*to_pair(got.lower), *to_pair(got.upper)]
    return impl, cases


@proves("solve.le_to_range",
        over=every("every coefficient a != 0 and constant k (Z3 integers), along every "
                   "path of le_to_range"))
def solve_le_to_range():
    from .symexec import Ext
    from .symexec import inside as within
    P_ = Py()
    a, s, k = z3.Ints("a s k")
    P_.prove((a * s + k <= 0) == (s <= P_.floordiv(-k, a)), a > 0)
    P_.prove((a * s + k <= 0) == (s >= P_.ceildiv(k, -a)), a < 0)
    # the code itself, on symbolic a and k: on every path, the range it returns holds
    # exactly the s with a*s + k <= 0
    ex, paths = _solver_paths([a != 0], lambda: solver.le_to_range(Ext(0, a), Ext(0, k)),
                              "le_to_range")
    impl, cases = _ranges_on_paths(paths)
    require(len(cases) == len(paths), "le_to_range returned no range on a path")
    prove_code(lambda *t: z3.And(*[z3.Implies(z3.And(*pc), (a * s + k <= 0) ==
                                              within(t[i], t[i + 1], t[i + 2], t[i + 3], s))
                                   for pc, i in cases]),
               impl, a != 0, P=ex.P, what="le_to_range on symbolic a, k (%d paths)" % len(paths))


@proves("solve.ne_to_range",
        over=every("a = +-1 (the normal form's coefficients), every constant k and every "
                   "range (finite or infinite ends symbolic), along every path"))
def solve_ne_to_range():
    from .symexec import Ext, interval
    from .symexec import inside as within
    P_ = Py()
    a, s, k, t, lo, hi = z3.Ints("a s k t lo hi")
    P_.prove((a * s + k != 0) == (s != P_.floordiv(-k, a)), a != 0, k == a * t)
    P_.prove(a * s + k != 0, a != 0, P_.mod(k, a) != 0)
    prove(z3.And(lo <= s, s <= hi, s != lo) == z3.And(lo + 1 <= s, s <= hi))
    prove(z3.And(lo <= s, s <= hi, s != hi) == z3.And(lo <= s, s <= hi - 1))
    # the code itself: a symbolic coefficient, constant and range; where it narrows, the
    # narrower range holds exactly the old range's s with a*s + k != 0.  Side conditions:
    # the relation is normalised (rel.eq_gcd and rel.eq_sign: one symbol's coefficient
    # divides the constant, so a = +-1, as ne_to_range's docstring says) and the guard
    # holds at the example, a point x of the range (learn's precondition)
    rlo, rhi, wf, x, member = interval("ne")
    hyps = wf + member + [z3.Or(a == 1, a == -1), a * x + k != 0]
    ex, paths = _solver_paths(hyps, lambda: solver.ne_to_range(
        Ext(0, a), Ext(0, k), ValueRange(rlo, rhi)), "ne_to_range")
    impl, cases = _ranges_on_paths(paths)
    require(cases, "ne_to_range narrowed on no path")
    old = within(rlo.s, rlo.v, rhi.s, rhi.v, s)
    prove_code(lambda *r: z3.And(*[z3.Implies(z3.And(*pc), z3.And(old, a * s + k != 0)
                                              == within(r[i], r[i + 1], r[i + 2], r[i + 3], s))
                                   for pc, i in cases]),
               impl, *hyps, P=ex.P,
               what="ne_to_range(a, k, r) on symbolic a, k, r (%d paths)" % len(paths))


def _opt_ceil(P_: Py, bound: X, r, k, low: bool) -> X:
    """``ceildiv(lo - r, k)`` / ``(hi - r) // k`` for a finite end, the infinity else."""
    if low:
        return select(bound.s != 0, bound, fin(P_.ceildiv(bound.v - r, k)))
    return select(bound.s != 0, bound, fin(P_.floordiv(bound.v - r, k)))


@proves("solve.two_var", over=samples("hand-picked equations"))
def solve_two_var():
    a, b, c, x, y, hx, hy, u, v, Q, kk, lo = z3.Ints("a b c x y hx hy u v Q k lo")
    eqn = lambda X_, Y_: a * X_ + b * Y_ + c == 0          # noqa: E731
    # |a|, |b| > 1 (a unit coefficient is substituted instead) and coprime (the relation
    # was divided by its gcd): a*u + b*v == 1 for some u, v; (hx, hy) is a solution.  Each
    # step below assumes only what it needs of that (a weaker hypothesis, a stronger step)
    # 1. every solution has x == hx (mod b): x - hx == b*w
    w = v * (x - hx) - u * (y - hy)
    prove(x - hx == b * w, a * u + b * v == 1, eqn(hx, hy), eqn(x, y))
    for sg in (1, -1):
        # m = |b| == sg*b; rx = hx % m, so hx == m*(hx // m) + rx
        P_ = Py()
        m = sg * b
        qh = P_.floordiv(hx, m)
        rx = hx - m * qh
        # 2. x - rx == m*(sg*w + qh): the code's k = (x - rx) // m is sg*w + qh, exactly,
        #    so x == m*k + rx (for any w with x - hx == b*w, which step 1 gives)
        W = z3.Int("w")
        P_.prove(x - rx == m * (sg * W + qh), m > 1, x - hx == b * W)
        P2 = Py()
        P2.prove(P2.floordiv(m * Q, m) == Q, m > 1)
        # 3. y == (-a*x - c) // b exactly: the numerator is b*y
        prove(-a * x - c == b * y, eqn(x, y))
        P_.prove(P_.floordiv(b * y, b) == y, m > 1)
        # 4. conversely every k gives a solution
        xv = m * kk + rx
        P_.prove(eqn(xv, P_.floordiv(-a * xv - c, b)), eqn(hx, hy), m > 1)
        # 5. k's range [ceil((lo - rx)/m), ..) (derived from x's range) holds every
        #    solution whose x lies in x's range [lo, ..)
        P_.prove(kk >= -P_.floordiv(rx - lo, m), m > 1, x == m * kk + rx, x >= lo,
                 what="k's range [ceil((lo - rx)/m), ..) must hold every solution "
                      "x = m*k + rx in x's range [lo, ..)")
        hi_ = z3.Int("hi")
        P_.prove(kk <= P_.floordiv(hi_ - rx, m), m > 1, x == m * kk + rx, x <= hi_,
                 what="k's range [.., (hi - rx)//m] must hold every solution "
                      "x = m*k + rx in x's range [.., hi]")
    # the real solver, for sizes and for (symbolic) int inputs
    for hx_lo_, (ca, cb, cc) in itertools.product(
            [(5, 2, INT_OO), (4, 0, INT_OO), (2, NEG_INT_OO, INT_OO), (5, 1, 14), (4, -3, 9)],
            [(2, 3, -19), (3, -2, -11), (-5, 3, 10)]):
        hx_, lo_, hi_ = hx_lo_
        if (ca * hx_ + cc) % cb:
            continue
        hy_ = -(ca * hx_ + cc) // cb
        env, xs, ys = _env((hx_, lo_, hi_), (hy_, NEG_INT_OO, INT_OO))
        old = dict(env.ranges)
        g = R.eq(ca * xs.expr + cb * ys.expr, -cc)
        env.add_guard(g, None)
        _solutions_kept(old, g, env, (xs, ys), "%s" % g)
    # equations no solver step takes (nonlinear, or both sizes data-dependent) stay facts,
    # and the solution set is still the guard's
    for specs, mk in ((((6, 2, 10), (2, 1, 5)), lambda a, b: R.eq(a * b, 12)),
                      (((6, 2, 10), (2, 1, 5)), lambda a, b: R.eq(a * b + a, 18)),
                      (((6, 2, 10), (2, 1, 5)), lambda a, b: R.eq(E.mod(a + b, 3), 2)),
                      (((None, 0, 10), (None, 0, 10)), lambda a, b: R.eq(2 * a + 3 * b, 12))):
        env, xs, ys = _env(*specs)
        old = dict(env.ranges)
        g = mk(xs.expr, ys.expr)
        env.add_guard(g, None)
        require(not env.replacements, "%s made a replacement: %s", g, env.replacements)
        _solutions_kept(old, g, env, (xs, ys), "%s (kept as a fact)" % g)


# ---------------------------------------------------------------------------- z3bridge
@proves("z3bridge.divmod_encoding", over=every("every numerator and divisor (Z3 integers)"))
def z3bridge_divmod_encoding():
    from symshape.reasoning import z3bridge as ZB
    a, b, q1, q2 = z3.Ints("a b q1 q2")

    def pinned(q):
        return z3.If(b > 0, z3.And(b * q <= a, a < b * q + b), z3.And(b * q >= a, a > b * q + b))

    # exactly one q: unique ...
    prove(q1 == q2, b != 0, pinned(q1), pinned(q2))
    # ... and it is floor(a / b): with a positive divisor Z3's Euclidean div *is* floor
    ref = z3.If(b > 0, a / b, (-a) / (-b))
    prove(pinned(ref), b != 0)
    # the real Encoder: FloorDiv(s0, s1) and Mod(s0, s1)
    s0, s1 = E.Sym(920), E.Sym(921)
    fd = E.floordiv(s0.expr, s1.expr)
    md = E.mod(s0.expr, s1.expr)
    enc = ZB.Encoder()
    zf, zm = enc.expr(fd), enc.expr(md)
    require(enc.atom(fd.as_atom()) is enc.atom(fd.as_atom()), "the encoder gives one atom two quotients")
    za, zb = enc.sym(s0), enc.sym(s1)
    zref = z3.If(zb > 0, za / zb, (-za) / (-zb))
    prove_code(lambda f, m_: z3.And(f == zref, m_ == za - zb * zref), [zf, zm], zb != 0,
               *enc.side, what="the engine's encoding of // and %")
    # (the first two lemmas make the encoded quotient unique and Python's: a model's value
    # at any numerator and divisor is a // b, with no grid of them to check)


def _minmax_induction_step(ZB) -> None:
    """``min_term`` / ``max_term`` are, read from the code (``fold_step``), exactly
    ``functools.reduce`` of their steps: the term of one argument is that argument, and the
    term of ``args + [x]`` is the step on (the term of ``args``, ``x``).  Run the code's own
    step on ``m``, the minimum of an *abstract* set S (any size: ``m`` below every member
    of S and one of them), and ``x``: its output is the minimum of S and ``x``.  By
    induction the term of every number of arguments is their minimum (maximum)."""
    member = z3.Function("in_S", z3.IntSort(), z3.BoolSort())
    m, x, y = z3.Ints("m x y")
    for kind, term, below in (("Min", ZB.min_term, lambda a, b: a <= b),
                              ("Max", ZB.max_term, lambda a, b: a >= b)):
        step = fold_step(term)(m, x)
        hyps = [member(m), z3.ForAll([y], z3.Implies(member(y), below(m, y)))]
        prove_code(lambda v: z3.And(below(v, x), z3.Or(v == x, member(v)),
                                    z3.ForAll([y], z3.Implies(member(y), below(v, y)))),
                   [step], *hyps, what="the %s encoding's fold step" % kind)


def _minmax_dispatch(ZB) -> None:
    """``minmax_term(kind, args)`` hands its argument list, whatever it is, untouched to
    ``min_term`` (kind Min) or ``max_term`` (Max) and returns its term: run on an opaque
    token with the two folds replaced by recorders (every list alike: the code never looks
    inside it)."""
    token = object()
    saved = ZB.min_term, ZB.max_term
    try:
        ZB.min_term, ZB.max_term = (lambda a: ("Min", a)), (lambda a: ("Max", a))
        for kind in ("Min", "Max"):
            got = ZB.minmax_term(kind, token)
            require(type(got) is tuple and got[0] == kind and got[1] is token,
                    "minmax_term(%s) does not return the %s fold of its arguments", kind, kind)
    finally:
        ZB.min_term, ZB.max_term = saved


def _atom_reads_every_argument(ZB) -> None:
    """Encoder.atom encodes every argument of the atom alike (one comprehension over all of
    ``atom.args``, no slice, no filter) and hands that list to ``minmax_term``."""
    import ast
    import inspect
    import textwrap
    fn = inspect.unwrap(ZB.Encoder.atom)
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    stmts = {ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Assign)}
    binds = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign,
                                                         ast.AnnAssign, ast.NamedExpr))
             and any(isinstance(t, ast.Name) and t.id == "args" for t in
                     (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    require("args = [self.expr(a) for a in atom.args]" in stmts and len(binds) == 1,
            "Encoder.atom does not encode every argument alike: %s", sorted(stmts))
    require("out = minmax_term(atom.kind, args)" in stmts,
            "Encoder.atom does not hand every encoded argument to minmax_term")


@proves("z3bridge.minmax_encoding",
        over=every("every number of arguments (one or more), every argument value: the "
                   "code's own two-argument fold step keeps the minimum / maximum of a set "
                   "of any size (the induction step), min_term / max_term read from the "
                   "code to be exactly functools.reduce of that step, minmax_term run on "
                   "an opaque argument list, and Encoder.atom read to encode every argument "
                   "alike and hand them all to minmax_term; its output checked on Min / "
                   "Max of three symbols, and each comparison kind and and / or of the "
                   "condition encoding on symbols of any value"))
def z3bridge_minmax_encoding():
    """By induction on the code's fold (``proofs/folds.py``): the encoder's loop is
    ``functools.reduce``, so no arity is left unchecked (the old bound, arity 8, let an
    encoder looping over ``args[1:9]`` pass)."""
    from symshape.reasoning import z3bridge as ZB
    _minmax_induction_step(ZB)
    _minmax_dispatch(ZB)
    _atom_reads_every_argument(ZB)
    s0, s1, s2 = syms = [E.Sym(930), E.Sym(931), E.Sym(932)]
    enc = ZB.Encoder()
    xs = [enc.sym(s) for s in syms]
    zmn = enc.expr(E.smin(s0.expr, s1.expr, s2.expr))
    zmx = enc.expr(E.smax(s0.expr, s1.expr, s2.expr))
    prove_code(lambda mn, mx: z3.And(mn == zmin(*xs), mx == zmax(*xs)),
               [zmn, zmx], *enc.side, what="the engine's encoding of Min / Max of 3")
    # and relations, as the engine encodes them for its queries: each comparison kind, and
    # and / or, on symbols of any value
    P_ = Py()
    zs = Symbols({s_: enc.sym(s_) for s_ in syms})
    a, b, c = s0.expr, s1.expr, s2.expr
    def alone(r):
        return r

    def in_or(r):
        return R.combine("or", [r, R.eq(c, a)])

    def in_and(r):
        return R.combine("and", [r, R.le(c, b)])
    for make in (R.le, R.lt, R.eq, R.ne):
        for node in (alone, in_or, in_and):
            cond = node(make(a, b))
            want = encode_cond(P_, cond, zs)
            prove_code(lambda v: v == want, [enc.cond(cond)], *enc.side, P=P_,
                       what="the engine's encoding of %s" % cond)
