"""``project.drop_implied`` for every list of facts: an induction on the list.

``drop_implied_facts`` is, read from the code (``proofs/filters.py``), exactly the filter
of the environment's facts by ``implied_fact``, one fact at a time, the facts kept handed
to ``keep_facts``.  So the rule holds for every list once the step holds for one fact: a
fact the predicate drops holds at every point of the ranges.  The step is the code's own
predicate run on one fact along every path, the fact opaque: it reads a fact only through
whether a symbol of it is data-dependent, its identity (the memo key) and the calls it
hands it to, each replaced by what that callee's proof guarantees and every answer so
allowed explored (``decide_ranges``: True only where the fact holds at every point of the
ranges, False only where it fails at every one, ``decide.by_range``; ``box_exact``: any
verdict, its yes only keeps the fact; ``implies``: as ``decide_ranges``, the soundness
``z3bridge.implies``' proof states).  The list step is Boolean algebra, proven for all
truth values: if the facts kept so far say what the facts before said, they still do
after one more fact, kept or (holding everywhere) dropped.
"""
from __future__ import annotations

import z3

from symshape.algebra import expr as E
from symshape.reasoning import solver as SE

from . import every, proves
from .code import prove_code
from .choices import Choices
from .filters import filter_pred
from .pyint import prove, require

#: the meaning of the opaque fact: its truth at a point of the ranges
PHI = z3.Bool("fact")


class _Fact:
    """Any fact (a relation or an and / or, of any expressions): one symbol, an input size
    or a data-dependent one, is all the code reads of it (whether any is unbacked, and the
    ranges of its symbols for the memo key); it is its own identity."""

    def __init__(self, unbacked: bool) -> None:
        self.free_symbols = frozenset({E.Sym(985, unbacked)})


class _NoList:
    """The list of facts while the predicate runs on one of them: reading it fails (the
    step must not depend on the other facts)."""

    def __getattr__(self, name):
        raise AssertionError("the predicate read the list of facts (%s)" % name)

    def __iter__(self):
        raise AssertionError("the predicate read the list of facts")

    def __len__(self):
        raise AssertionError("the predicate read the list of facts")


class _Env:
    """The environment the predicate reads: its facts, ranges (any: only the memo key
    reads them here), its memo (computed on every call: a remembered answer is one computed
    for the same fact and ranges)."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.ranges: dict = {}

    def memo(self, table, key, compute, *args):
        """``ShapeEnv.memo``, its key hashed as a dict would."""
        hash(key)
        return compute(*args)

    def keep_facts(self, facts) -> None:
        """The facts become ``facts``."""
        self.facts = list(facts)


def _paths(run) -> list:
    """``run(said)`` along every choice of the callees' answers: per path, what the answers
    said of the fact (a Z3 formula) and what ``run`` returned."""
    choices = Choices()
    saved = SE.decide_ranges, SE.box_exact, SE.implies

    def sound(said):
        def answer(*args, **kw):
            ans = True if choices.choose() else (False if choices.choose() else None)
            if ans is not None:
                said.append(PHI if ans else z3.Not(PHI))
            return ans
        return answer

    def once():
        said: list = []
        SE.decide_ranges, SE.implies = sound(said), sound(said)
        SE.box_exact = lambda f: choices.choose()
        try:
            got = run()
        finally:
            SE.decide_ranges, SE.box_exact, SE.implies = saved
        return z3.And(*said), got
    return choices.runs(once)


def _list_step() -> None:
    """The induction step on the list, for all truth values: the facts kept so far (``k``)
    say what those before said (``a``); one more fact ``f``, dropped (``d``) only where it
    holds: still so.  And the base: no fact, nothing kept."""
    k, a, f, d = z3.Bools("kept before f dropped")
    prove(z3.If(d, k, z3.And(k, f)) == z3.And(a, f), k == a, z3.Implies(d, f))


@proves("project.drop_implied", over=every(
    "every list of facts (any length, by induction on the filter drop_implied_facts is, "
    "read from the code: proofs/filters.py), each fact any condition -- a relation or an "
    "and / or of any expressions, over input sizes or a data-dependent size -- read only "
    "through its symbols and identity and handed to decide_ranges, box_exact and implies, "
    "each replaced by its soundness (decide_ranges / implies: True only where the fact holds "
    "at every point of the ranges, False only where it fails at every one -- the statements "
    "of decide.by_range and z3bridge.implies, each proven for every input; box_exact any "
    "verdict), every range, along every path of "
    "implied_fact and implied_by_ranges"))
def project_drop_implied():
    """The facts kept say exactly what the facts before said at every point of the
    ranges, for every list: the predicate drops a fact only where it holds at every point
    (the step, on the code), the code is the filter by that predicate (read), and the
    list step is proven above.  The whole function is also run on a one-fact list: what it
    keeps says what the fact said."""
    # the whole function on one fact first (a mutant of it fails here, with a
    # counterexample): what it keeps says what the fact said
    whole = [(said, z3.BoolVal(dropped)) for unbacked in (False, True)
             for said, dropped in _paths(_runner(unbacked))]
    _dropped_hold(whole, "drop_implied_facts on one fact")
    pred = filter_pred(SE.drop_implied_facts, "facts", "keep_facts")
    _list_step()
    step = []
    for unbacked in (False, True):
        fact = _Fact(unbacked)
        for said, got in _paths(lambda: pred(_Env(_NoList()), fact)):
            require(isinstance(got, bool), "the predicate answered %r", got)
            step.append((said, z3.BoolVal(got)))
    _dropped_hold(step, "%s on one fact, the list unread" % pred.__name__)


def _runner(unbacked: bool):
    """``drop_implied_facts`` on a one-fact list: True where it dropped the fact."""
    def run():
        fact = _Fact(unbacked)
        env = _Env([fact])
        SE.drop_implied_facts(env)
        require(all(f is fact for f in env.facts), "drop_implied_facts kept %s", env.facts)
        return not env.facts
    return run


def _dropped_hold(cases, what: str) -> None:
    """On every path, a fact dropped holds (at every point: what the answers said)."""
    require(any(z3.is_true(v) for _, v in cases), "%s: never dropped", what)

    def claim(*vs):
        return z3.And(*[z3.Implies(said, z3.Implies(v, PHI))
                        for (said, _), v in zip(cases, vs)])
    prove_code(claim, [v for _, v in cases], what="%s (%d paths)" % (what, len(cases)))
