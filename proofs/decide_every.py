"""Proofs of steps of ``decide`` (``symshape/reasoning/decision.py``) with the code run along
every path on symbolic inputs, the steps it builds on opaque.

``decide.fact_sum``: ``decide_by_fact_sums`` reads the goal's and each fact's expression only
through ``E.sub`` / ``E.neg`` / ``E.add`` and ``bound()``, and each fact otherwise only
through its operator.  So the goal and the facts are relations over distinct symbols
(a symbol stands for any expression: the subtractions are the code's own, their meaning
the symbols' difference) and ``bound()`` is opaque: each call returns a range with
symbolic ends (finite or infinite) that holds the value of its argument -- all that
``range.bound``'s proof guarantees, nothing more (no exactness).  The function then runs
along every path (``symexec.Explorer``: each comparison of a range end branches), and on
each path its answer is proven implied by the facts and those range statements.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import List

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning import decision

from . import bounded, proves
from .code import Symbols, encode, encode_cond, prove_code
from .pyint import Py, require

#: the symbols standing for the goal's expression and each fact's
GOAL = E.Sym(980)
FACTS = (E.Sym(981), E.Sym(982))
#: what a fact may be, as the code reads it: its operator (an and / or is skipped)
_FACT_OPS = (R.LE, R.EQ, R.NE, "and")
_GOAL_OPS = (R.LE, R.EQ, R.NE)


class _Choices:
    """Runs a function once per sequence of outcomes of its opaque tests (depth first,
    replaying the outcomes chosen so far): every combination, with no solver call (the
    outcomes are independent: each is a fresh range's end)."""

    def __init__(self) -> None:
        self.plan: List[bool] = []
        self.pos = 0
        self.pending: List[List[bool]] = [[]]

    def choose(self) -> bool:
        """The outcome of the next test on this run; a new one forks."""
        if self.pos == len(self.plan):
            self.pending.append(self.plan + [False])
            self.plan.append(True)
        self.pos += 1
        return self.plan[self.pos - 1]

    def runs(self, fn) -> list:
        """``fn()`` once per combination of outcomes."""
        out = []
        while self.pending:
            self.plan, self.pos = self.pending.pop(), 0
            out.append(fn())
        return out


class _End:
    """The upper end of an opaque range: ``<= 0`` is a choice; when chosen true, the
    argument's value is ``<= 0`` at every point (the range holds it)."""

    def __init__(self, choices: _Choices, x, seen: list) -> None:
        self.choices, self.x, self.seen = choices, x, seen

    def __le__(self, other) -> bool:
        require(other == 0, "the code compared a bound's upper end with %s, not 0", other)
        yes = self.choices.choose()
        if yes:
            self.seen.append(self.x)
        return yes


class _OpaqueBound:
    """``bound()`` as any sound range of its argument: only the test of its upper end
    against 0 is read (``_End``); what a true outcome says is kept per run."""

    def __init__(self, choices: _Choices) -> None:
        self.choices = choices
        self.nonpositive: List = []

    def __call__(self, x, sym_range=None):
        return SimpleNamespace(upper=_End(self.choices, x, self.nonpositive))


def _fact(op, sym):
    """A fact of operator ``op`` over ``sym`` (``and``: a conjunction the code skips)."""
    if op == "and":
        return R.BoolOp("and", (R.Rel(R.LE, sym.expr), R.Rel(R.NE, sym.expr + 1)))
    return R.Rel(op, sym.expr)


def _fact_lists() -> list:
    """Every list of at most ``len(FACTS)`` facts, each of every operator the code tells
    apart (a finite domain, exhausted)."""
    one = [[_fact(op, FACTS[0])] for op in _FACT_OPS]
    return [[]] + one + [f + [_fact(op, FACTS[1])] for f in one for op in _FACT_OPS]


def _sums_on_paths(goal, facts, P_: Py, zs: Symbols) -> list:
    """``decide_by_fact_sums`` on ``goal`` and ``facts`` along every path of the opaque
    bound: per path (what the facts and that path's bound outcomes say, the goal, the
    answer)."""
    choices = _Choices()
    env = SimpleNamespace(ranges={})
    saved = decision.bound

    def run():
        opaque = _OpaqueBound(choices)
        decision.bound = opaque
        try:
            return decision.decide_by_fact_sums(env, goal, facts), opaque.nonpositive
        finally:
            decision.bound = saved
    know = z3.And(*[encode_cond(P_, f, zs) for f in facts])
    g = encode_cond(P_, goal, zs)
    read: dict = {}         # each expression's statement once (the paths share them)

    def said(x):
        if x not in read:
            read[x] = encode(P_, x, zs) <= 0
        return read[x]
    return [(z3.And(know, *[said(x) for x in nonpositive]), g, ans)
            for ans, nonpositive in choices.runs(run)]


@proves("decide.fact_sum",
        over=bounded("every goal e <op> 0 (op <=, ==, !=; an and / or: None) and every list "
                     "of up to 2 related facts, each f <= 0, f == 0, f != 0 or an and / or; "
                     "the expressions arbitrary (the code reads them only through E.sub / "
                     "E.neg / E.add and bound(), here any sound range with symbolic "
                     "ends: range.bound's proof), along every path; more than "
                     "FACT_SUM_LIMIT forms: None"))
def decide_fact_sum():
    """See the module docstring."""
    P_ = Py()
    zs = Symbols()
    cases = [case for facts in _fact_lists() for op in _GOAL_OPS
             for case in _sums_on_paths(R.Rel(op, GOAL.expr), facts, P_, zs)]
    answers = {ans for _, _, ans in cases}
    require({True, False, None} <= answers, "fact sums answered only %s", answers)

    def claim(*vs):      # on each path of each input: the answer implied by what it read
        return z3.And(*[z3.Implies(st, z3.If(v == 1, g, z3.Or(v != 0, z3.Not(g))))
                        for (st, g, _), v in zip(cases, vs)])
    prove_code(claim, [z3.IntVal(-1 if a is None else int(a)) for _, _, a in cases], P=P_,
               what="fact sums on %d paths" % len(cases))
    goal = R.Rel(R.LE, GOAL.expr)
    both = R.BoolOp("and", (goal, R.Rel(R.NE, GOAL.expr)))
    some = [_fact(R.LE, FACTS[0])]
    require(decision.decide_by_fact_sums(None, both, some) is None,
            "a conjunction was decided by fact sums")
    many = [R.Rel(R.LE, FACTS[0].expr - k) for k in range(decision.FACT_SUM_LIMIT + 1)]
    require(decision.decide_by_fact_sums(None, goal, many) is None,
            "more facts than the limit were summed")
