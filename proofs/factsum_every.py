"""``decide.fact_sum`` for every goal and every list of related facts: an induction on the
lists, each step the code's own on opaque items.

``decide_by_fact_sums(env, c, related)`` turns the facts into their ``<= 0`` forms with
``le_forms_of`` and asks ``sum_proves`` whether the forms show ``g <= 0`` for a few ``g``
built from the goal.  Both are, read from the code (``proofs/filters.py``), exactly a form
over a list, one item or pair at a time:

* ``le_forms_of(facts)`` is ``[x for f in facts for x in le_forms(f)]``: every form it
  gives is a form of one fact; ``le_forms`` is run on a fact of each kind the code tells
  apart (a relation ``f <= 0``, ``f == 0``, ``f != 0``, anything else), its expression a
  symbol standing for any expression (the code hands it only to ``E.neg``): each form is
  ``<= 0`` wherever its fact holds.  So, for every list, every form is ``<= 0`` wherever
  the facts hold.
* ``sum_proves(env, g, les)`` is ``any`` of ``bound(g - f).upper <= 0`` over the forms ``f``
  and of ``bound(g - f - h).upper <= 0`` over the pairs: true only when one of them is.  One
  of each, run on the code's ``E.sub`` over symbols (standing for any expressions), with
  ``bound()`` any sound range (its upper end ``<= 0`` only where the argument is ``<= 0`` at
  every point: ``range.bound``'s guarantee), shows ``g <= 0`` wherever the forms are.
* ``decide_by_fact_sums`` itself is run with those two by what they were just proven to
  give (``sum_proves`` any answer, True only where the facts imply ``g <= 0``; the forms a
  list that is empty, within the limit or over it), on a goal of each operator and an and
  / or, along every path: each answer is implied by the facts.
"""
from __future__ import annotations

import inspect
from types import SimpleNamespace

import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG
from symshape.algebra import relations as R
from symshape.reasoning import decision

from . import every, proves
from .choices import Choices
from .code import Symbols, encode, encode_cond, prove_code
from .filters import read_form
from .pyint import Py, require

#: the symbols standing for the goal's expression and two facts' (any expressions)
GOAL, F, H = E.Sym(980), E.Sym(981), E.Sym(982)

_LE_FORMS_OF = '''
def le_forms_of(facts: list) -> list:
    return [x for f in facts for x in STEP(f)]
'''

_SUM_PROVES = '''
def sum_proves(env, g, les) -> bool:
    rng = env.ranges.__getitem__
    rests = [E.sub(g, f) for f in les]
    return any(BOUND(r, rng).upper <= 0 for r in rests) or \\
        any(BOUND(E.sub(r, f), rng).upper <= 0
            for i, r in enumerate(rests) for f in les[i + 1:])
'''


def _forms(P_: Py, zs: Symbols) -> None:
    """``le_forms`` on a fact of each kind: each form ``<= 0`` wherever the fact holds."""
    step = read_form(decision.le_forms_of, _LE_FORMS_OF)["STEP"]
    require(inspect.unwrap(step) is inspect.unwrap(decision.le_forms),
            "le_forms_of maps %s, not le_forms", step)
    cases = []
    for op in (R.LE, R.EQ, R.NE, "or"):
        fact = R.BoolOp("or", (R.Rel(R.LE, F.expr), R.Rel(R.NE, H.expr))) if op == "or" \
            else R.Rel(op, F.expr)
        forms = step(fact)
        require(isinstance(forms, list), "le_forms gave %r", forms)
        cases += [(encode_cond(P_, fact, zs), encode(P_, x, zs)) for x in forms]
    require(cases, "le_forms gave no form")
    prove_code(lambda *vs: z3.And(*[z3.Implies(f, v <= 0) for (f, _), v in zip(cases, vs)]),
               [x for _, x in cases], P=P_, what="le_forms of each kind of fact")


def _sums(P_: Py, zs: Symbols) -> None:
    """``sum_proves`` read as ``any`` over the forms and the pairs; one of each, on the
    code's ``E.sub``: its upper end ``<= 0`` and the forms ``<= 0`` give ``g <= 0``."""
    got = read_form(decision.sum_proves, _SUM_PROVES)
    # (a rule function may be wrapped while coverage is traced: the function itself)
    require(inspect.unwrap(got["BOUND"]) is inspect.unwrap(RG.bound) and decision.E is E,
            "sum_proves bounds with %s", got["BOUND"])
    g, f, h = (encode(P_, s.expr, zs) for s in (GOAL, F, H))
    one = decision.E.sub(GOAL.expr, F.expr)
    two = decision.E.sub(one, H.expr)
    prove_code(lambda v1, v2: z3.And(z3.Implies(z3.And(v1 <= 0, f <= 0), g <= 0),
                                     z3.Implies(z3.And(v2 <= 0, f <= 0, h <= 0), g <= 0)),
               [encode(P_, one, zs), encode(P_, two, zs)], P=P_,
               what="sum_proves' one form and one pair")


class _Forms:
    """The forms of any list of facts, as ``decide_by_fact_sums`` reads them: only its
    length (none, within the limit or over it: a choice, made once per run) and what
    ``sum_proves`` says of it."""

    def __init__(self, choices: Choices) -> None:
        self.choices, self.n = choices, None

    def __len__(self) -> int:
        if self.n is None:
            self.n = 0 if self.choices.choose() else \
                (1 if self.choices.choose() else decision.FACT_SUM_LIMIT + 1)
        return self.n


def _answers(P_: Py, zs: Symbols) -> None:
    """``decide_by_fact_sums`` on a goal of each operator (and an and / or), its callees by
    their proven guarantees, along every path: each answer implied by the facts."""
    facts = z3.Bool("facts_hold")           # the related facts hold at this point
    cases = []
    for op in (R.LE, R.EQ, R.NE, "and"):
        goal = R.BoolOp("and", (R.Rel(R.LE, GOAL.expr), R.Rel(R.NE, GOAL.expr))) \
            if op == "and" else R.Rel(op, GOAL.expr)
        choices = Choices()

        def run():
            said: list = []

            def proves_(env, g, les):
                require(isinstance(les, _Forms), "sum_proves got %r", les)
                yes = choices.choose()
                if yes:      # the facts imply g <= 0 (proven above)
                    said.append(z3.Implies(facts, encode(P_, g, zs) <= 0))
                return yes
            saved = decision.le_forms_of, decision.sum_proves
            decision.le_forms_of = lambda related: _Forms(choices)
            decision.sum_proves = proves_
            try:
                ans = decision.decide_by_fact_sums(SimpleNamespace(ranges={}), goal, [])
            finally:
                decision.le_forms_of, decision.sum_proves = saved
            return z3.And(*said), ans
        c = encode_cond(P_, goal, zs)
        cases += [(said, c, ans) for said, ans in choices.runs(run)]
    answers = {ans for _, _, ans in cases}
    require({True, False, None} <= answers, "fact sums answered only %s", answers)

    def claim(*vs):      # on each path: True only where the facts imply c, False not c
        return z3.And(*[z3.Implies(st, z3.And(z3.Implies(v == 1, z3.Implies(facts, c)),
                                              z3.Implies(v == 0, z3.Implies(facts, z3.Not(c)))))
                        for (st, c, _), v in zip(cases, vs)])
    prove_code(claim, [z3.IntVal(-1 if a is None else int(a)) for _, _, a in cases], P=P_,
               what="decide_by_fact_sums on %d paths" % len(cases))


@proves("decide.fact_sum", over=every(
    "every goal (a relation e <op> 0 of each op <=, ==, != or an and / or) and every list "
    "of related facts (any length: le_forms_of and sum_proves read from the code as forms "
    "over the list, by induction), each fact any condition (f <= 0, f == 0, f != 0, an and "
    "/ or), the expressions arbitrary (read only through E.sub / E.neg / E.add and bound(), "
    "here any sound range: its upper end <= 0 only where the argument is <= 0 at every "
    "point, the soundness range.bound states), along every path"))
def decide_fact_sum():
    """See the module docstring: the answers first (a mutant of the function fails there,
    with a counterexample), then the two list forms and their steps."""
    P_ = Py()
    zs = Symbols()
    _answers(P_, zs)
    _forms(P_, zs)
    _sums(P_, zs)
