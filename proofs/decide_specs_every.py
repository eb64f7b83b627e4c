"""Proofs of the decision procedure's own logic (``symshape/reasoning/decision.py``: ``decide``,
``_decide_now``, ``decide_facts``) for every condition and every environment, each step it
builds on replaced by its proven specification.

The code reads a condition only through its steps: ``subst_cond`` (the same truth on every
point the knowledge admits, or a bool it has on all of them), ``decide_ranges``
(``decide.by_range``), membership in the facts / assumptions (structural equality: the same
truth as the fact), ``relations.negate`` (``rel.le_negate``: the opposite truth where defined),
its free symbols handed to ``related_facts`` (``decide.related_facts``: facts and
assumptions of the environment, so implied by them), ``box_exact`` and
``witnessed_undecidable`` (which only ever lead to None), ``decide_by_fact_sums``
(``decide.fact_sum``: an answer implied by the related facts and the ranges) and
``z3bridge.implies`` (``z3bridge.implies``: an answer implied by its premises and the
ranges).  So a condition is an opaque value whose truth and definedness at a point are free
Booleans, the knowledge ``K`` (ranges, replacements, facts, assumptions) free Booleans too,
and each step returns every answer its specification allows (``Choices``), what that
answer says recorded as a statement about those Booleans at an arbitrary point (each
specification holds at every point, so at that one).  Along every path so made the
answer is proven right at that point: ``True`` only where ``K`` and the condition's
definedness imply it, ``False`` only where they imply its negation.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import List

import z3

from symshape.algebra import relations as R
from symshape.reasoning import decision

from . import every, proves
from .code import prove_code
from .pyint import require


class Choices:
    """Runs a function once per sequence of answers of its opaque steps (depth first,
    replaying the answers chosen so far): every combination, no solver call."""

    def __init__(self) -> None:
        self.plan: List[int] = []
        self.pos = 0
        self.pending: List[List[int]] = [[]]

    def choose(self, n: int = 2) -> int:
        """The next step's answer on this run, one of ``0 .. n-1``; a new step forks."""
        if self.pos == len(self.plan):
            self.pending += [self.plan + [i] for i in range(1, n)]
            self.plan.append(0)
        self.pos += 1
        return self.plan[self.pos - 1]

    def answer(self):
        """A three-valued answer: True, False or None."""
        return (True, False, None)[self.choose(3)]

    def runs(self, fn) -> list:
        """``fn()`` once per combination of answers."""
        out = []
        while self.pending:
            self.plan, self.pos = self.pending.pop(), 0
            out.append(fn())
        return out


class Cond:
    """An opaque condition: its truth ``h`` and its definedness ``d`` (every divisor
    non-zero) at the point are free Booleans; its free symbols an opaque value (the code
    only hands them on)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.h = z3.Bool(name + ".holds")
        self.d = z3.Bool(name + ".defined")
        self.free_symbols = object()

    def __repr__(self) -> str:
        return self.name


class Knowledge:
    """What the environment knows at the point, as free Booleans: every symbol in its range
    (``rg``), the replacements (``repl``), the facts (``facts``), the assumptions
    (``assumed``)."""

    def __init__(self, tag: str) -> None:
        self.rg, self.repl, self.facts, self.assumed = z3.Bools(
            " ".join("%s.%s" % (tag, n) for n in ("ranges", "replacements", "facts",
                                                   "assumptions")))

    def all(self):
        """``K``."""
        return z3.And(self.rg, self.repl, self.facts, self.assumed)


class Listed:
    """The facts (or the assumptions) of the environment, or the related facts: a list of
    any length read only through its emptiness and membership (structural equality: a
    member has the truth of one of them).  ``meaning``: all of them hold."""

    def __init__(self, meaning, run: "Run") -> None:
        self.meaning, self.run = meaning, run
        self.empty = None

    def __bool__(self) -> bool:
        if self.empty is None:
            self.empty = self.run.choices.choose() == 1
        return not self.empty

    def __contains__(self, c) -> bool:
        if not self or self.run.choices.choose() == 1:
            return False
        self.run.said.append(z3.Implies(self.meaning, c.h))
        return True


def meaning(listed):
    """What a list of premises the code hands on says (a real empty list: nothing)."""
    return listed.meaning if isinstance(listed, Listed) else z3.BoolVal(True)


class Run:
    """One run of ``decide`` under a plan of answers: the environment it reads, the
    statements the answers make (``said``) and the fresh conditions steps returned."""

    def __init__(self, choices: Choices, know: Knowledge) -> None:
        self.choices, self.know = choices, know
        self.said: list = []
        self.made = 0
        self.facts = Listed(know.facts, self)
        self.assumptions = Listed(know.assumed, self)
        self.ranges = object()            # handed on to implies only
        self.z3_queries = 0

    def memo(self, table, key, compute, *args):
        """``ShapeEnv.memo``: a cache of ``compute(*args)`` cleared whenever the knowledge
        changes (``ShapeEnv._bump``), so the computation itself."""
        return compute(*args)

    def fresh(self, what: str) -> Cond:
        """A condition a step returned."""
        self.made += 1
        return Cond("%s%d" % (what, self.made))

    def states(self, *fs) -> None:
        """Keep what an answer says."""
        self.said += fs

    # ------------------------------------------------------------------ the specifications
    def subst_cond(self, env, c):
        """Any bool the condition has on every point of ``K`` where it is defined, or a
        condition with its truth there (and defined wherever it is)."""
        k = self.choices.choose(3)
        if k < 2:
            self.states(z3.Implies(z3.And(self.know.all(), c.d), c.h == (k == 0)))
            return k == 0
        out = self.fresh("subst")
        self.states(z3.Implies(z3.And(self.know.all(), c.d), z3.And(out.d, out.h == c.h)))
        return out

    def decided(self, ans, premises, c):
        """State that ``ans`` (True / False / None) follows from ``premises`` for ``c``."""
        if ans is not None:
            self.states(z3.Implies(z3.And(premises, c.d), c.h if ans else z3.Not(c.h)))
        return ans

    def decide_ranges(self, env, c):
        """``decide.by_range``: an answer implied by the ranges."""
        return self.decided(self.choices.answer(), self.know.rg, c)

    def negate(self, c):
        """``rel.le_negate``: the opposite truth wherever ``c`` is defined."""
        out = self.fresh("not")
        self.states(z3.Implies(c.d, z3.And(out.d, out.h == z3.Not(c.h))))
        return out

    def related_facts(self, env, syms):
        """``decide.related_facts``: facts and assumptions of the environment."""
        rel = Listed(z3.Bool("related%d" % self.made), self)
        self.made += 1
        self.states(z3.Implies(z3.And(self.know.facts, self.know.assumed), rel.meaning))
        return rel

    def box_exact(self, c) -> bool:
        """Any verdict (a yes only ever answers None)."""
        return self.choices.choose() == 0

    def fact_sums(self, env, c, related):
        """``decide.fact_sum``: an answer implied by the related facts and the ranges."""
        return self.decided(self.choices.answer(), z3.And(self.know.rg, meaning(related)), c)

    def witnessed(self, env, c, related) -> bool:
        """Any verdict (a yes only ever answers None)."""
        return self.choices.choose() == 0

    def implies(self, premises, goal, ranges, budget=None):
        """``z3bridge.implies``: an answer implied by the premises and the ranges."""
        require(ranges is self.ranges, "implies was handed ranges not the environment's")
        return self.decided(self.choices.answer(), z3.And(self.know.rg, meaning(premises)),
                            goal)


class _Relations:
    """``relations`` as ``decision`` sees it in the proof: its negation the run's."""

    def __init__(self, run: Run) -> None:
        self.negate = run.negate

    def __getattr__(self, name):
        return getattr(R, name)


@contextmanager
def specified(run: Run):
    """``decision``'s steps replaced by the run's specifications while the block runs."""
    names = dict(subst_cond=run.subst_cond, decide_ranges=run.decide_ranges,
                 related_facts=run.related_facts, box_exact=run.box_exact,
                 decide_by_fact_sums=run.fact_sums, witnessed_undecidable=run.witnessed,
                 implies=run.implies, R=_Relations(run))
    saved = {n: getattr(decision, n) for n in names}
    for n, f in names.items():
        setattr(decision, n, f)
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(decision, n, f)


def right(ans, know: Knowledge, c: Cond):
    """``ans`` (a Z3 integer: 1 True, 0 False, -1 None) is right for ``c`` at the point."""
    return z3.If(ans == 1, z3.Implies(z3.And(know.all(), c.d), c.h),
                 z3.Or(ans != 0, z3.Implies(z3.And(know.all(), c.d), z3.Not(c.h))))


def code_answer(ans):
    """The code's answer as a Z3 integer (None is -1)."""
    return z3.IntVal(-1 if ans is None else int(ans))


@proves("decide.sound",
        over=every("every condition (==, !=, <= of any expression, and / or of any) and every "
                   "environment (ranges, replacements, facts and assumptions of any number, "
                   "each possibly empty), read as the code reads them, along every path of "
                   "decide, _decide_now and decide_facts; each step as its proven "
                   "specification, every answer it allows explored: subst_cond (the same "
                   "truth on the points K admits), decide_ranges (decide.by_range), "
                   "relations.negate (rel.le_negate), related_facts (decide.related_facts: "
                   "facts and assumptions), box_exact and witnessed_undecidable (any "
                   "verdict), decide_by_fact_sums (decide.fact_sum), z3bridge.implies "
                   "(z3bridge.implies); membership in the facts / assumptions by structural "
                   "equality; the memo a cache cleared whenever the knowledge changes"))
def decide_sound():
    """See the module docstring: on every path, True only where ``K`` implies the
    condition, False only where it implies its negation (where the condition is
    defined)."""
    c, know = Cond("c"), Knowledge("K")
    choices = Choices()

    def run():
        r = Run(choices, know)
        with specified(r):
            ans = decision.decide(r, c)
        return z3.And(*r.said), ans
    cases = choices.runs(run)
    answers = {ans for _, ans in cases}
    require({True, False, None} <= answers, "decide answered only %s", answers)

    def claim(*vs):
        return z3.And(*[z3.Implies(said, right(v, know, c)) for (said, _), v in zip(cases, vs)])
    prove_code(claim, [code_answer(ans) for _, ans in cases],
               what="decide on %d paths" % len(cases))
