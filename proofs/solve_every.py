"""Proofs of the equation solver's steps (``symshape/reasoning/solver.py``) for every input
of their domain: the step's own code run with symbolic coefficients, constants and range
ends (``proofs/symexec.py``: ``Ext`` values, finite or infinite, branching through
``Explorer`` along every feasible path).

Each step turns a guard into a replacement (``s -> value``), a narrower range or a fact.
The step's claim is that the guard's solution set is kept exactly, for every coefficient,
constant and prior range.  A step hands its result to the environment through ``replace``,
``refine`` or ``create_symbol``; these calls are captured (the code's output) rather than
run, since each is a rule of its own with its own proof (``solve.replacement_range``,
``solve.refresh_facts``).  The hypotheses are exactly the step's preconditions as its
caller guarantees them: the guard holds at the example values (a point of the ranges).
"""
from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG
from symshape.algebra import relations as R
from symshape.algebra.ranges import ValueRange
from symshape.reasoning import solver

from . import every, proves
from .code import prove_code
from .pyint import Py, require, zmin
from .solve_explore import (Enc, StepEnv, ends, enc_cond, info, iv_inside,
                            now_branch, prove_quotient_bounds, sint_paths,
                            solver_paths, stubbed, within)
from .symexec import Ext, inside, interval


# ---------------------------------------------------------------------------- constrain


@proves("solve.constrain_linear", over=every(
    "every value a*t + k (a != 0 and k symbolic), every range [lo, hi] of the replaced "
    "symbol and every range of t (ends symbolic, finite or infinite), bound() any sound "
    "range of the value (as the range proofs prove it), along every path of constrain"))
def solve_constrain_linear():
    """``constrain(env, a*t + k, [lo, hi])`` on symbolic ``a``, ``k``, ranges: where it
    narrows ``t`` (``refine``, captured), the range it gives holds exactly the ``t`` with
    ``a*t + k`` in ``[lo, hi]``; where it returns without narrowing, every ``t`` in
    ``t``'s range already has its value in ``[lo, hi]``.  The value's one term is a
    symbol with a coefficient (the linear case, the rule's domain: the code reads the
    value through ``linear_coeffs`` and its constant).  Precondition: some ``t`` in its
    range has its value in ``[lo, hi]`` (the example)."""
    prove_quotient_bounds()
    t_sym = E.Sym(975)
    a, k, t, x = z3.Ints("a k t x")
    vlo, vhi, vwf, _, _ = interval("v")
    tlo, thi, twf, _, _ = interval("t")
    blo, bhi, bwf, _, _ = interval("b")
    val = lambda p: a * p + k            # noqa: E731
    hyps = vwf + twf + bwf + [a != 0, iv_inside(tlo, thi, x), iv_inside(vlo, vhi, val(x)),
                              # bound() is sound: it holds the value of every t in range
                              z3.Implies(iv_inside(tlo, thi, t), iv_inside(blo, bhi, val(t)))]
    got: list = []

    def run():
        del got[:]
        env = StepEnv({t_sym: ValueRange(tlo, thi)})
        value = E.Expr({(t_sym,): Ext(0, a)}, Ext(0, k))
        solver.constrain(env, value, ValueRange(vlo, vhi))
        return list(got)
    ex, paths = solver_paths(
        hyps, run, "constrain", witnesses=[x, -x],
        bound=lambda e, rng: ValueRange(blo, bhi),
        refine=lambda env, s, vr: got.append((s, vr)))
    impl, cases, kept = [], [], []
    for pc, out in paths:
        if out:
            require(len(out) == 1 and out[0][0] is t_sym, "constrain refined %s", out)
            cases.append((pc, len(impl)))
            impl += ends(out[0][1])
        else:
            kept.append(pc)
    require(cases and kept, "constrain: narrowing on %d paths, none on %d", len(cases),
            len(kept))
    inv = iv_inside(vlo, vhi, val(t))

    def claim(*r):
        out = [z3.Implies(z3.And(*pc), inv == within(r, i, t)) for pc, i in cases]
        out += [z3.Implies(z3.And(*pc), z3.Implies(iv_inside(tlo, thi, t), inv))
                for pc in kept]
        return z3.And(*out)
    prove_code(claim, impl, hyps, P=ex.P,
               what="constrain(a*t + k, [lo, hi]) on symbolic a, k and ranges (%d paths)"
               % len(paths))
    # an int value (the replaced symbol's example, inside its range): nothing to keep
    del got[:]
    _, paths = solver_paths(vwf + [iv_inside(vlo, vhi, k)], lambda: solver.constrain(
        StepEnv({}), Ext(0, k), ValueRange(vlo, vhi)), "constrain of an int",
        refine=lambda env, s, vr: got.append((s, vr)))
    require(not got, "constrain narrowed a range for an int value: %s", got)


# ---------------------------------------------------------------------------- congruence
@proves("solve.congruence", over=every(
    "every guard c*Mod(s, k) + j == 0 (coefficient c, divisor k and constant j symbolic), "
    "every range of s (ends symbolic, finite or infinite), s's example any integer or "
    "none, along every path of solve_congruence"))
def solve_congruence():
    """``solve_congruence`` on a symbolic guard and range: on every path where it applies
    (``c == 1``, ``0 <= r < k`` with ``r = -j``), the replacement ``s -> value(q)`` it makes
    and the range it gives the new ``q`` keep the solution set: every ``s`` in its range
    with ``s % k == r`` is ``value(q)`` for a ``q`` in ``q``'s range, and every such ``q``
    gives one; ``q``'s example reproduces ``s``'s.  Precondition (learn's): the guard
    holds at a point of the range, the example where ``s`` has one."""
    prove_quotient_bounds()
    s_sym = E.Sym(976)
    c, k, j, h, sv, qv = z3.Ints("c k j h s q")
    lo, hi, wf, _, _ = interval("s")
    # the guard holds at a point of s's range: the example h (or, with no example, a
    # point the check admits); stated where c == 1 only (weaker, so the proof is
    # stronger, and linear in c: the code applies nowhere else)
    P0 = Py()
    qh = P0.floordiv(h, k)
    hyps = wf + [iv_inside(lo, hi, h), z3.Implies(c == 1, z3.And(
        k != 0, h - k * qh + j == 0))] + P0.side
    replaced: list = []

    def once(hint):
        replaced.clear()
        env = StepEnv({s_sym: ValueRange(lo, hi)}, {s_sym: info(hint)})
        atom = E.OpAtom("Mod", (s_sym.expr, Ext(0, k)))
        e = E.Expr({(atom,): Ext(0, c)}, Ext(0, j))
        if solver.solve_congruence(env, e):
            require(len(env.created) == 1 and len(replaced) == 1 and
                    replaced[0][0] is s_sym, "solve_congruence made %s, replaced %s",
                    env.created, replaced)
            return env.created[0], replaced[0][1]
        return None

    def run():
        # s with an example, then s without one (unbacked), on the same path: the
        # second must do what the first did, but for the quotient's example
        return once(Ext(0, h)), once(None)
    ex, paths = solver_paths(hyps, run, "solve_congruence", witnesses=[qh, -qh],
                             replace=lambda env, s, value: replaced.append((s, value)))
    P_ = ex.P
    impl, cases = [], []
    for pc, (hinted, bare) in paths:
        require((hinted is None) == (bare is None), "solve_congruence applied to s with an "
                "example and not without one (or the reverse) on the path %s", z3.And(*pc))
        if hinted is None:
            continue
        (q_sym, q_hint, q_vr), value = hinted
        (q2, q2_hint, q2_vr), value2 = bare
        enc = Enc(P_, {q_sym: qv})
        enc2 = Enc(P_, {q2: qv})
        cases.append((pc, len(impl)))
        impl += ends(q_vr) + [enc(value), enc(q_hint), z3.And(*enc.finite)]
        impl += ends(q2_vr) + [enc2(value2), z3.BoolVal(q2_hint is None)]
    require(cases, "solve_congruence applied on no path")
    r = -j
    guard = lambda x: P_.mod(x, k) == r                       # noqa: E731
    P_.prove(guard(k * qv + r), k > 0, 0 <= r, r < k)
    wit = P_.floordiv(sv, k)       # s == k*(s // k) + s % k: the q of a solution s
    for n, (pc, i) in enumerate(cases):
        def claim(*t):
            value = lambda x: z3.substitute(t[4], (qv, x))     # noqa: E731
            return z3.And(
                t[6],
                # every solution s in s's range is value(q) for a q in q's range
                z3.Implies(z3.And(iv_inside(lo, hi, sv), guard(sv)),
                           z3.And(within(t, 0, wit), value(wit) == sv)),
                # every q in q's range gives a solution in s's range: k*q + r, whose
                # residue is r (0 <= r < k on this path; the lemma above)
                z3.Implies(within(t, 0, qv),
                           z3.And(iv_inside(lo, hi, value(qv)), value(qv) == k * qv + r)),
                value(t[5]) == h,
                # without an example: the same range and value, no example for q
                *[u == w for u, w in zip(t[7:12], t[:5])], t[12])
        prove_code(claim, impl[i:i + 13], hyps, pc, P=P_,
                   what="solve_congruence on a symbolic guard and range (applying path "
                   "%d of %d)" % (n + 1, len(cases)))


# ---------------------------------------------------------------------------- unit
@proves("solve.unit_substitution", over=every(
    "every guard c1*s + c2*t + c3*s*t + k == 0 (coefficients and constant symbolic: a "
    "term is read through its coefficient and whether it is one symbol, the rest through "
    "whether it mentions the symbol), every example of s and t, both symbols input "
    "sizes or t data-dependent (learn_data_dependent), along every path of solve_unit"))
def solve_unit_substitution():
    """``solve_unit`` on a symbolic guard: on every path where it replaces, the
    replacement ``s -> value`` (captured) has ``value`` free of ``s`` and holds exactly
    where the guard does, for every value of the symbols; whichever candidate the
    examples make it pick."""
    _unit(False)
    _unit(True)


def _unit(data_dependent: bool) -> None:
    c1, c2, c3, k, hs, ht = z3.Ints("c1 c2 c3 k hs ht")
    ss, ts = E.Sym(979), E.Sym(980, data_dependent)
    zs = {ss: z3.Int("s"), ts: z3.Int("t")}
    rep: list = []

    from .symcoeff import SInt

    def run():
        rep.clear()
        env = StepEnv({}, {ss: info(SInt(hs)), ts: info(SInt(ht))})
        e = E.Expr({(ss,): SInt(c1), (ts,): SInt(c2), (ss, ts): SInt(c3)}, SInt(k))
        done = solver.solve_unit(env, e, data_dependent=data_dependent)
        require(done == bool(rep), "solve_unit returned %s after %s", done, rep)
        return list(rep)
    ex, paths = sint_paths([], run, "solve_unit",
                             replace=lambda env, s, value: rep.append((s, value)))
    P_ = ex.P
    impl, cases = [], []
    for pc, got in paths:
        if not got:
            continue
        (s, value), = got
        require(type(value) is not E.Expr or s not in value.free_symbols,
                "solve_unit replaced %s by %s", s, value)
        enc = Enc(P_, zs)
        cases.append((pc, len(impl), zs[s]))
        impl += [enc(value), z3.And(*enc.finite)]
    require(cases, "solve_unit replaced on no path")
    s, t = zs[ss], zs[ts]
    guard = c1 * s + c2 * t + c3 * s * t + k == 0
    prove_code(lambda *v: z3.And(*[z3.Implies(z3.And(*pc), z3.And(v[i + 1],
                                                                  guard == (x == v[i])))
                                    for pc, i, x in cases]),
               impl, P=P_, what="solve_unit on a symbolic guard%s (%d paths)"
               % (" on a data-dependent size" if data_dependent else "", len(paths)))


# ---------------------------------------------------------------------------- replace
class _ReplEnv(StepEnv):
    """An environment ``replace`` records into: its simplifier is the identity (the
    folds are rules of their own), its example values are read as the engine reads them
    (``ShapeEnv.hint_of``), and what it records is kept in ``log``."""

    def __init__(self, ranges, infos, learning=None) -> None:
        super().__init__(ranges, infos)
        self.log: list = []
        self._learning = learning

    def simplify(self, x):
        return x

    def hint_of(self, x):
        from symshape.reasoning.env import ShapeEnv
        return ShapeEnv.hint_of(self, x)

    def set_replacement(self, s, value) -> None:
        self.log.append(("replace", s, value))

    def learning(self):
        return self._learning


@proves("solve.replacement_range", over=every(
    "every replacement s -> a*t + k (a, k symbolic), every range of s (ends symbolic, "
    "finite or infinite), examples consistent with it, s an input size or a "
    "data-dependent size under a check, along every path of replace"))
def solve_replacement_range():
    """``replace(env, s, a*t + k)`` on symbolic values: on every path it records the
    replacement ``s -> value`` (the value given) and then keeps the value inside the
    range ``s`` had (``constrain``, or ``constrain_data_dependent`` for a data-dependent
    size under a check; both captured, proven by solve.constrain_linear) before
    refreshing the facts; so ``{s == v, s in [lo, hi]}`` and ``{v in [lo, hi]}`` have
    the same solutions."""
    _replacement(False)
    _replacement(True)


def _replacement(data_dependent: bool) -> None:
    a, k, hs, ht, sv, tv = z3.Ints("a k hs ht s t")
    ss, ts = E.Sym(981, data_dependent), E.Sym(982)
    lo, hi, wf, _, _ = interval("s")
    hyps = wf + [a * ht + k == hs]         # the example satisfies the replacement
    guard = SimpleNamespace(data_dependent=True) if data_dependent else None

    def run():
        env = _ReplEnv({ss: ValueRange(lo, hi), ts: ValueRange(RG.NEG_INT_OO, RG.INT_OO)},
                       {ss: info(Ext(0, hs)), ts: info(Ext(0, ht))}, guard)
        value = E.Expr({(ts,): Ext(0, a)}, Ext(0, k))

        def keep(how):
            return lambda env_, v, vr: env_.log.append((how, v, vr))
        with stubbed(constrain=keep("constrain"), constrain_data_dependent=keep("dd"),
                     refresh_facts=lambda env_: env_.log.append(("refresh",))):
            solver.replace(env, ss, value)
        return env.log
    ex, paths = solver_paths(hyps + [a != 0], run, "replace")
    P_ = ex.P
    enc = Enc(P_, {ts: tv})
    want = a * tv + k
    impl, cases = [], []
    for pc, log in paths:
        require([entry[0] for entry in log] == ["replace", "dd" if data_dependent
                                                 else "constrain", "refresh"]
                and log[0][1] is ss, "replace recorded %s", log)
        cases.append((pc, len(impl)))
        impl += [enc(log[0][2]), enc(log[1][1])] + ends(log[1][2])
    inside_old = iv_inside(lo, hi, sv)
    prove_code(lambda *t: z3.And(*enc.finite, *[z3.Implies(z3.And(*pc), z3.And(
        t[i] == want, t[i + 1] == want,
        # {s == v, s in old range} == {s == v, v in the range constrain keeps v in}
        z3.And(sv == t[i], inside_old) == z3.And(sv == t[i], within(t, i + 2, t[i + 1]))))
        for pc, i in cases]), impl, hyps, P=P_,
        what="replace(s, a*t + k) on symbolic values and ranges%s (%d paths)"
        % (" of a data-dependent size" if data_dependent else "", len(paths)))


# ---------------------------------------------------------------------------- dispatch
class _LearnEnv(StepEnv):
    """The environment ``learn`` runs on: ``subst_cond`` hands the guard back as the
    substitution left it (its rewrites are rules of their own)."""

    def subst_cond(self, c):
        return c


@proves("solve.dispatch", over=every(
    "every guard op(c1*s + c2*t + c3*Min(s, u) + k) (op ==, != or <=; coefficients and "
    "constant symbolic; != one-symbol in the normal form, coefficient +-1), an and / or "
    "of two guards (handed on unread), every range of s and t (ends symbolic, finite or infinite), every "
    "answer of the later steps (solve_eq, split_residues: applies or not), along every "
    "path of learn"))
def solve_dispatch():
    """``learn(env, g)`` on a symbolic guard: the steps it takes (captured: a range
    narrowed by ``refine``, an equation handed to ``solve_eq``, a condition to
    ``split_residues`` or ``add_fact``, a guard learnt again) admit together exactly the
    old points where ``g`` holds.  Each step's own contract (that it keeps what it is
    handed) is its own rule's proof; a step that declines (returns False) changes
    nothing, and both answers are explored."""
    from symshape.algebra.relations import EQ, LE, NE
    for op in (EQ, NE, LE):
        _dispatch(lambda g, h: g, op, op)
    _dispatch(lambda g, h: R.BoolOp("and", (g, h)), EQ, LE)
    _dispatch(lambda g, h: R.BoolOp("or", (g, h)), NE, LE)
    _dispatch(lambda g, h: True, EQ, LE)          # a guard the substitution decided


def _dispatch(build, op: str, op2: str) -> None:
    from .symexec import to_pair as pair
    s_, t_, u_ = E.Sym(984), E.Sym(985), E.Sym(986)
    c1, c2, c3, k = z3.Ints("c1 c2 c3 k")
    sv, tv, uv = z3.Ints("s t u")
    slo, shi, swf, _, _ = interval("s")
    tlo, thi, twf, _, _ = interval("t")
    # != reaches learn in the normal form: one symbol's coefficient is +-1
    unit = [z3.Implies(z3.And(c3 == 0, c2 == 0), c1 * c1 == 1),
            z3.Implies(z3.And(c3 == 0, c1 == 0), c2 * c2 == 1)] if op == R.NE else []
    # ... and (learn's precondition) a guard holds at the example, a point of the ranges
    # (an and / or is handed on whole or part by part: no range is computed from it)
    xs, xt, xu = z3.Ints("ex_s ex_t ex_u")
    at = c1 * xs + c2 * xt + c3 * zmin(xs, xu) + k
    example = [iv_inside(slo, shi, xs), iv_inside(tlo, thi, xt),
               {R.EQ: at == 0, R.NE: at != 0, R.LE: at <= 0}[op]]
    hyps = swf + twf + unit + (example if op == op2 else [])
    said = [z3.Bool("solve_eq_applies"), z3.Bool("split_applies")]
    done: list = []
    real_learn = solver.learn

    def step(kind, answer=None):
        def call(env, c):
            took = True if answer is None else now_branch(answer)
            if took:
                done.append((kind, c))
            return took
        return call

    def run():
        done.clear()
        env = _LearnEnv({s_: ValueRange(slo, shi), t_: ValueRange(tlo, thi),
                         u_: ValueRange(RG.NEG_INT_OO, RG.INT_OO)})
        if op != op2:      # an and / or: learn hands its parts on unread, any two do
            g, h = R.Rel(op, s_.expr), R.Rel(op2, t_.expr)
        else:
            mn = E.OpAtom("Min", (s_.expr, u_.expr))
            g = R.Rel(op, E.Expr({(s_,): Ext(0, c1), (t_,): Ext(0, c2), (mn,): Ext(0, c3)},
                                 Ext(0, k)))
            h = g
        real_learn(env, build(g, h))
        return list(done), build(g, h)
    ex, paths = solver_paths(
        hyps, run, "learn", learn=step("learn"), add_fact=step("fact"),
        solve_eq=lambda env, e: step("eq", said[0])(env, R.Rel(R.EQ, e)),
        split_residues=step("split", said[1]),
        refine=lambda env, s, vr: done.append(("refine", s, vr)))
    P_ = ex.P
    zs = {s_: sv, t_: tv, u_: uv}
    enc = Enc(P_, zs)
    old = z3.And(iv_inside(slo, shi, sv), iv_inside(tlo, thi, tv))
    impl, cases = [], []
    for pc, (steps, guard) in paths:
        terms = []
        for st in steps:
            if st[0] == "refine":
                lo_s, lo_v = pair(st[2].lower)
                hi_s, hi_v = pair(st[2].upper)
                terms.append(inside(lo_s, lo_v, hi_s, hi_v, zs[st[1]]))
            else:
                terms.append(enc_cond(enc, st[1]))
        cases.append((pc, len(impl), enc_cond(enc, guard)))
        impl.append(z3.And(*terms))
    prove_code(lambda *v: z3.And(*enc.finite, *[
        z3.Implies(z3.And(*pc), z3.Implies(old, v[i] == want)) for pc, i, want in cases]),
        impl, hyps, P=P_, what="learn(%s) on symbolic guards and ranges (%d paths)"
        % (op if op == op2 else "%s and / or %s" % (op, op2), len(paths)))


# ---------------------------------------------------------------------------- refresh
class _RefreshEnv:
    """The environment ``refresh_facts`` reads and records into: its ranges, facts and
    assumptions; ``subst_cond`` hands a fact back as the substitution left it (its
    rewrites are rules of their own); bounds are recomputed on every path (``memo``)."""

    def __init__(self, ranges, facts, assumed, learning=None) -> None:
        self.ranges = ranges
        self.facts, self.assumptions = list(facts), list(assumed)
        self.fact_guards: dict = {}
        self._learning = learning
        self.tightened = False

    def memo(self, table, key, compute, *args):
        return compute(*args)

    @contextmanager
    def rewriting_facts(self):
        old = self.facts, self.assumptions
        self.facts, self.assumptions = [], []
        yield old

    def subst_cond(self, c):
        return c

    def record_fact(self, c, guard=None) -> bool:
        self.facts.append(c)
        return True

    def record_assumption(self, c) -> None:
        self.assumptions.append(c)

    def fact_guard(self, c):
        return None

    def learning(self):
        return self._learning


@proves("solve.refresh_facts", over=every(
    "every fact and assumption ==, != or <= of an expression whose range is symbolic "
    "(finite or infinite ends: decide_ranges reads an expression only through its "
    "bound), and an or of two, as subst_cond hands them back, every range, along every "
    "path of refresh_facts"))
def solve_refresh_facts():
    """``refresh_facts`` after the ranges changed (they are symbolic here: every range):
    the facts and assumptions it records again admit, inside the ranges, exactly the
    points the old ones did (a fact the ranges imply is dropped, one they leave open is
    kept), and it tightens the ranges after.  Precondition: the facts hold at the
    example, a point of the ranges (else the guards contradict each other)."""
    from symshape.algebra.relations import EQ, LE, NE
    for op in (EQ, NE, LE):
        _refresh(lambda S, T: ([R.Rel(op, S)], [R.Rel(op, T)]), op)
    _refresh(lambda S, T: ([R.BoolOp("or", (R.Rel(LE, S), R.Rel(EQ, T)))], []), "or")


def _refresh(build, what: str) -> None:
    from .code import Symbols, encode_cond
    s_, t_ = E.Sym(987), E.Sym(988)
    tag = {R.EQ: "eq", R.NE: "ne", R.LE: "le"}.get(what, what)
    slo, shi, swf, sx, sin = interval("refresh_s_" + tag)
    tlo, thi, twf, tx, tin = interval("refresh_t_" + tag)
    facts, assumed = build(s_.expr, t_.expr)
    P0 = Py()
    zs = Symbols({s_: sx, t_: tx})
    old = [encode_cond(P0, f, zs) for f in facts + assumed]
    ex_s, ex_t = z3.Ints("ex_s ex_t")
    at_example = [z3.substitute(f, (sx, ex_s), (tx, ex_t)) for f in old]
    hyps = swf + twf + [iv_inside(slo, shi, ex_s), iv_inside(tlo, thi, ex_t)] + at_example

    def run():
        env = _RefreshEnv({s_: ValueRange(slo, shi), t_: ValueRange(tlo, thi)}, facts,
                          assumed)

        def tighten(env_):
            env_.tightened = True
        with stubbed(tighten=tighten):
            solver.refresh_facts(env)
        return env
    ex, paths = solver_paths(hyps, run, "refresh_facts")
    P_ = ex.P
    impl, cases = [], []
    for pc, env in paths:
        require(env.tightened, "refresh_facts did not tighten the ranges")
        cases.append((pc, len(impl)))
        impl.append(z3.And(*[encode_cond(P_, f, zs) for f in env.facts + env.assumptions]))
    inside_now = z3.And(*(sin + tin))
    prove_code(lambda *v: z3.And(*[z3.Implies(z3.And(*pc),
                                              z3.Implies(inside_now, v[i] == z3.And(*old)))
                                   for pc, i in cases]),
               impl, hyps, P=P_, what="refresh_facts of %s facts on symbolic ranges "
               "(%d paths)" % (what, len(paths)))
