"""``solve.residue_split`` for every guard and every lcm of its divisors the code splits: an
induction on the residues, each case the code's own on a symbolic lcm and residue.

``split_residues(env, c)`` on a guard over one input size ``s`` whose constant divisors have
an lcm ``K`` (2..16: it refuses any other) is, read from the code (``proofs/filters.py``):
the verdicts of ``residue_verdicts`` (a loop over ``r = 0 .. K-1`` of ``residue_case``,
stopping with None at the first undecided case), the residues that hold and those a value
of ``s`` has (two comprehensions over the verdicts), handed to ``residue_outcome``.  So:

* ``residue_case`` is run on a symbolic ``K >= 2`` and ``0 <= r < K`` and a symbolic range of
  ``s`` (ends finite or infinite) along every path, the case's ``decide`` any sound answer
  about the case it is handed (the code's own ``q``-range and value ``K*q + r``; ``c``'s
  meaning any predicate ``F``): a verdict True means ``F`` holds at every ``s`` of the range
  with residue ``r``, False that it holds at none, ``ABSENT`` that the range has no such
  ``s``.  That is every residue of every ``K``, not a list of them.
* ``residue_outcome`` is run on a symbolic ``K`` with the two lists as the comprehensions
  make them (any length: read only through their lengths and the first residue that
  holds), the verdicts any the step above allows: what it learns (``s % K == r``) holds
  exactly where ``F`` does in the range, and a True without learning means ``F`` holds
  everywhere there.
"""
from __future__ import annotations

import inspect

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.algebra.ranges import ValueRange
from symshape.reasoning import solver

from . import every, proves
from .code import prove_code
from .filters import read_form
from .pyint import require
from .solve_explore import (Enc, enc_cond, ends, now_branch, opaque_mod,
                            prove_quotient_bounds, quotient_bounds, solver_paths, within)
from .symexec import Ext, interval

#: the verdicts as Z3 integers (a case's answer: None, True, False, or no value)
_NONE, _TRUE, _FALSE, _ABSENT = 0, 1, 2, 3

_VERDICTS = '''
def residue_verdicts(env, c, s: Sym, k: int):
    verdicts = []
    for r in range(k):
        d = CASE(env, c, s, k, r)
        if d is None:
            return None
        verdicts.append(d)
    return verdicts
'''

_SPLIT = '''
def split_residues(env, c) -> bool:
    syms = c.free_symbols
    if len(syms) != 1:
        return False
    (s,) = syms
    if s.unbacked:
        return False
    k_all = 1
    for k in constant_divisors(c.expr, s):
        k_all = k_all * k // math.gcd(k_all, k)
    if k_all == 1 or k_all > 16:
        return False
    verdicts = VERDICTS(env, c, s, k_all)
    if verdicts is None:
        return False
    holds = [r for r, d in enumerate(verdicts) if d is True]
    present = [r for r, d in enumerate(verdicts) if d is not ABSENT]
    return OUTCOME(env, s, k_all, holds, present)
'''


def _same_function(got, want) -> bool:
    """``got`` is ``want`` (a rule function may be wrapped while coverage is traced)."""
    return inspect.unwrap(got) is inspect.unwrap(want)


class _CaseEnv:
    """A case's environment (``type(env)()``): its ``decide`` any answer (``d``: None,
    True, False), what it was handed and the quotient's range kept in ``seen``."""

    seen: list = []

    def __init__(self) -> None:
        self.ranges: dict = {}

    def create_symbol(self, hint, source, vr, kind="auto", dim=None, frame=None):
        q = E.Sym(995)
        _CaseEnv.seen.append(("q", q, vr))
        return q

    def decide(self, case):
        _CaseEnv.seen.append(("case", case))
        d = z3.Int("case_d")
        if now_branch(d == _NONE):
            return None
        return now_branch(d == _TRUE)


def _cases(K, r, F) -> list:
    """``residue_case`` on a symbolic ``K``, ``r`` and range along every path: proven, per
    path, that the verdict says of ``F`` what it must at every ``s`` of the range.  Returns
    the symbol, its range's ends and well-formedness, and its value and membership (Z3)."""
    prove_quotient_bounds()
    s_ = E.Sym(994)
    lo, hi, wf, sv, member = interval("res_s")
    d = z3.Int("case_d")
    hyps = wf + [K >= 2, 0 <= r, r < K, z3.And(_NONE <= d, d <= _FALSE)]

    def run():
        del _CaseEnv.seen[:]
        env = _CaseEnv()
        env.ranges = {s_: ValueRange(lo, hi)}
        got = solver.residue_case(env, "the guard", s_, Ext(0, K), Ext(0, r))
        return got, list(_CaseEnv.seen)
    ex, paths = solver_paths(hyps, run, "residue_case",
                             subst_cond_value=lambda c, s, value: ("case", value))
    P_ = ex.P
    qv = P_.floordiv(sv, K)              # the q of s: s == K*q + s % K
    at_r = z3.And(*member, P_.mod(sv, K) == r)
    impl, cases, sound = [], [], []
    for pc, (got, seen) in paths:
        code = {None: _NONE, True: _TRUE, False: _FALSE, solver.ABSENT: _ABSENT}[got]
        cases.append((pc, len(impl)))
        impl.append(z3.IntVal(code))
        if got is not solver.ABSENT:
            # decide is sound about the case it was handed: at the q of s, inside q's
            # range, its True / False is F's value at the case's value K*q + r
            (_, q, q_vr), (_, (_, value)) = seen
            enc = Enc(P_, {q: qv})
            t = ends(q_vr)
            at = F(enc(value))
            sound.append(z3.Implies(z3.And(*pc, within(t, 0, qv)), z3.And(
                z3.Implies(d == _TRUE, at), z3.Implies(d == _FALSE, z3.Not(at)),
                *enc.finite)))
    require(cases, "residue_case ran on no path")

    def meaning(v):
        return z3.And(z3.Implies(v == _ABSENT, z3.Not(at_r)),
                      z3.Implies(z3.And(v == _TRUE, at_r), F(sv)),
                      z3.Implies(z3.And(v == _FALSE, at_r), z3.Not(F(sv))))
    prove_code(lambda *vs: z3.And(*[z3.Implies(z3.And(*pc), meaning(vs[i]))
                                    for pc, i in cases]),
               impl, hyps, sound, quotient_bounds(P_, [qv, -qv]), P=P_,
               what="residue_case on a symbolic lcm, residue and range (%d paths)"
               % len(paths))
    return s_, lo, hi, wf, sv, member


class _Residues:
    """A list of residues as ``residue_outcome`` reads it: its length (a choice among
    none, one and more, made once per run; ``same`` for the second list: as long as the
    first, or longer) and its first item, a symbolic residue."""

    def __init__(self, first, n=None) -> None:
        self.first, self.n, self.made = first, n, n is not None

    def __len__(self) -> int:
        if not self.made:
            self.made = True
            self.n = 0 if now_branch(z3.Bool("holds_empty")) else \
                (1 if now_branch(z3.Bool("holds_one")) else 2)
        return self.n

    def __getitem__(self, i):
        require(i == 0 and len(self) > 0, "residue_outcome read item %r", i)
        return self.first


class _Present(_Residues):
    def __init__(self, holds: _Residues) -> None:
        super().__init__(None)
        self.holds = holds

    def __len__(self) -> int:
        if not self.made:
            self.made = True
            self.n = len(self.holds) + (0 if now_branch(z3.Bool("all_hold")) else 1)
        return self.n


@proves("solve.residue_split", over=every(
    "every one-symbol guard over an input size whose constant divisors have an lcm K the "
    "code splits (every K of 2..16, symbolic; any other refused), its meaning any "
    "predicate F of s, every answer decide may give soundly on each case, every range of "
    "s (ends symbolic, finite or infinite): residue_case run on a symbolic K and residue "
    "along every path, residue_verdicts and split_residues read from the code as the loop "
    "over the residues and two comprehensions over its verdicts (proofs/filters.py), "
    "residue_outcome run on those lists as they make them"))
def solve_residue_split():
    """See the module docstring: the case (every residue), the loop and the lists (read),
    the outcome (run); then the ways out before any case is decided."""
    K, r, r0 = z3.Ints("res_K res_r res_r0")
    F = z3.Function("res_F", z3.IntSort(), z3.BoolSort())
    s_, lo, hi, wf, sv, member = _cases(K, r, F)
    got = read_form(solver.split_residues, _SPLIT)
    require(_same_function(got["VERDICTS"], solver.residue_verdicts) and
            _same_function(got["OUTCOME"], solver.residue_outcome) and
            got["ABSENT"] is solver.ABSENT, "split_residues calls %s", got)
    case = read_form(solver.residue_verdicts, _VERDICTS)["CASE"]
    require(_same_function(case, solver.residue_case), "residue_verdicts decides by %s", case)
    _outcome(K, r0, F, s_, lo, hi, wf, sv, member)
    _ways_out()


def _outcome(K, r0, F, s_, lo, hi, wf, sv, member) -> None:
    """``residue_outcome`` on a symbolic ``K`` and the two lists: on every path, what it
    does is right for every ``s`` of the range."""
    V = z3.Function("res_V", z3.IntSort(), z3.IntSort())      # the verdict of residue r
    learnt: list = []

    def run():
        learnt.clear()
        holds = _Residues(Ext(0, r0))
        present = _Present(holds)
        env = type("Env", (), {"ranges": {s_: ValueRange(lo, hi)}})()
        done = solver.residue_outcome(env, s_, Ext(0, K), holds, present)
        return done, list(learnt), holds.n, present.n
    ex, paths = solver_paths(wf + [K >= 2], run, "residue_outcome", mod=opaque_mod,
                             learn=lambda env, c: learnt.append(c))
    P_ = ex.P
    rs = P_.mod(sv, K)                     # the residue of s
    at = z3.And(*member)
    # the verdicts as the loop made them (no None) and what residue_case's proof says of
    # them at s's residue and at r0, each an instance of its claim
    def said(r):
        v = V(r)
        return z3.And(_TRUE <= v, v <= _ABSENT,
                      z3.Implies(v == _ABSENT, z3.Not(z3.And(at, rs == r))),
                      z3.Implies(z3.And(v == _TRUE, at, rs == r), F(sv)),
                      z3.Implies(z3.And(v == _FALSE, at, rs == r), z3.Not(F(sv))))
    hyps = wf + [K >= 2, said(rs), z3.Implies(z3.And(0 <= r0, r0 < K), said(r0))]
    zs = {s_: sv}
    impl, cases = [], []
    for pc, (done, got, n_holds, n_present) in paths:
        # the lists as the comprehensions make them: holds, the residues whose verdict is
        # True (in order: r0 first); present, those not ABSENT (holds among them, so as
        # long only when they are the same residues)
        lists = []
        if n_holds == 0:
            lists.append(V(rs) != _TRUE)
        if n_holds is not None and n_holds >= 1:
            lists += [V(r0) == _TRUE, 0 <= r0, r0 < K]
        if n_holds == 1:
            lists.append(z3.Implies(V(rs) == _TRUE, rs == r0))
        if n_present is not None and n_present == n_holds:
            lists.append(z3.Implies(V(rs) != _ABSENT, V(rs) == _TRUE))
        enc = Enc(P_, zs)
        cases.append((pc, z3.And(*lists), len(impl), bool(got)))
        impl += [z3.BoolVal(done), enc_cond(enc, got[0]) if got else z3.BoolVal(True),
                 z3.And(*enc.finite)]
        require(len(got) <= 1 and (done or not got), "residue_outcome learnt %s, said %s",
                got, done)

    def claim(*v):
        out = []
        for pc, lists, i, learns in cases:
            right = z3.Implies(at, v[i + 1] == F(sv)) if learns else \
                z3.Implies(v[i], z3.Implies(at, F(sv)))
            out.append(z3.Implies(z3.And(*pc, lists), z3.And(v[i + 2], right)))
        return z3.And(*out)
    prove_code(claim, impl, hyps, P=P_,
               what="residue_outcome on a symbolic lcm (%d paths)" % len(paths))


def _ways_out() -> None:
    """The ways out before any case is decided: two symbols, a data-dependent size, no
    constant divisor, an lcm above 16; then two guards end to end."""
    s_, t_, u_ = E.Sym(994), E.Sym(995), E.Sym(996, True)
    env = type("Env", (), {"ranges": {s_: ValueRange(0, 40), u_: ValueRange(0, 40)}})()
    require(solver.split_residues(env, R.Rel(R.EQ, E.mod(s_.expr + t_.expr, 2))) is False,
            "split_residues took a guard of two symbols")
    require(solver.split_residues(env, R.Rel(R.EQ, E.mod(u_.expr, 2))) is False,
            "split_residues took a data-dependent size")
    require(solver.split_residues(env, R.Rel(R.LE, s_.expr - 3)) is False,
            "split_residues took a guard without a divisor")
    require(solver.split_residues(env, R.Rel(R.EQ, E.mod(s_.expr, 17))) is False,
            "split_residues split an lcm above 16")
    # and through a real environment, end to end: an even size is learnt as s % 2 == 0 (a
    # congruence: a replacement); a case the engine cannot decide leaves the guard alone
    from symshape.reasoning.env import ShapeEnv
    env = ShapeEnv()
    m = env.create_symbol(8, "m", ValueRange(0, 40))
    require(solver.split_residues(env, R.eq(E.mod(3 * m.expr, 2 * E.floordiv(m.expr, 2)),
                                            0)) is True and m in env.replacements,
            "Mod(3*m, 2*(m//2)) == 0 should give m % 2 == 0, got %s", env.replacements)
    env = ShapeEnv()
    m = env.create_symbol(8, "m", ValueRange(0, 40))
    require(solver.split_residues(env, R.le(E.floordiv(m.expr, 2) + m.expr, 10)) is False
            and not env.replacements, "m//2 + m <= 10 was split: %s", env.replacements)
