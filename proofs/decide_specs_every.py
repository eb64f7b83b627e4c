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

``env.evaluate`` and ``env.check`` likewise: ``ShapeEnv.evaluate`` / ``check`` run on a stand-in
environment whose steps (``decide``, ``subst_cond``, the example's truth, ``add_guard``,
``commit_pending``, ``relations.negate``) answer as their specifications allow, each
condition opaque at two points, an arbitrary one and the example (which every state of
the knowledge admits: the environment learns only what holds there).
"""
from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import z3

from symshape.algebra import relations as R
from symshape.reasoning import decision

from . import every, proves
from .choices import Choices
from .code import prove_code
from .pyint import require


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
            self.empty = self.run.choices.pick() == 1
        return not self.empty

    def __contains__(self, c) -> bool:
        if not self or self.run.choices.pick() == 1:
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
        k = self.choices.pick(3)
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
        return self.choices.pick() == 0

    def fact_sums(self, env, c, related):
        """``decide.fact_sum``: an answer implied by the related facts and the ranges."""
        return self.decided(self.choices.answer(), z3.And(self.know.rg, meaning(related)), c)

    def witnessed(self, env, c, related) -> bool:
        """Any verdict (a yes only ever answers None)."""
        return self.choices.pick() == 0

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
                   "truth on the points K admits: the composition of its rewrites, each "
                   "proven on its own -- subst.subs_replace, the fold.* rules, "
                   "rel.strip_positive_factor, rel.eq_gcd / le_gcd_ceil -- not proven as a "
                   "whole), decide_ranges (decide.by_range), "
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


# ---------------------------------------------------------------------------- evaluate, check
class Point2Cond(Cond):
    """An opaque condition at two points: an arbitrary one (``h``, ``d``) and the example
    (``hx``, ``dx``); its free symbols, read only through whether one is data-dependent,
    as one opaque symbol whose ``unbacked`` is a choice (``any`` over them is one verdict)."""

    def __init__(self, name: str, choices: Choices) -> None:
        super().__init__(name)
        self.hx = z3.Bool(name + ".holds@example")
        self.dx = z3.Bool(name + ".defined@example")
        self.free_symbols = FreeSymbols(choices)

    def format(self, *args, **kwargs) -> str:
        """The text of a message (display only)."""
        return self.name


class FreeSymbols:
    """A condition's free symbols as the environment reads them: whether any is
    data-dependent (a choice, the same each time it is read)."""

    def __init__(self, choices: Choices) -> None:
        self.choices = choices
        self.verdict = None

    def __iter__(self):
        if self.verdict is None:
            self.verdict = self.choices.pick() == 1
        return iter([SimpleNamespace(unbacked=self.verdict)])


class EnvRun:
    """One run of ``ShapeEnv.evaluate`` / ``check`` on a stand-in environment under a plan
    of answers: the knowledge now at the arbitrary point (``k``) and at the example
    (``kx``), what the answers say, and the guards recorded."""

    def __init__(self, choices: Choices) -> None:
        self.choices = choices
        self.states = 0
        self.k, self.kx = z3.Bools("k0 k0@example")
        self.said: list = [self.kx]       # the example satisfies what the environment knows
        self.made = 0
        self.pending = choices.pick() == 1
        self.branch_depth = choices.pick()
        self.loop_guard = None
        self.guard_hook = self.observe
        self.checks: list = []
        self.hooked = 0

    def fresh(self, what: str) -> Point2Cond:
        """A condition a step returned."""
        self.made += 1
        return Point2Cond("%s%d" % (what, self.made), self.choices)

    def new_state(self):
        """The knowledge after a change: fresh Booleans at both points."""
        self.states += 1
        self.k, self.kx = z3.Bools("k%d k%d@example" % (self.states, self.states))
        return self.k, self.kx

    # ------------------------------------------------------------------ the specifications
    def observe(self, c) -> None:
        """``guard_hook``: an observer (it records the guard; the knowledge is unchanged)."""
        self.hooked += 1

    def commit_pending(self) -> None:
        """Pending specialisations made: new knowledge, which still admits the example (a
        size set to its example value)."""
        self.pending = False
        self.said.append(self.new_state()[1])

    def decide(self, c):
        """``decide.sound``: an answer implied by the knowledge, at every point (so at
        both of these)."""
        ans = self.choices.answer()
        if ans is not None:
            self.said += [z3.Implies(z3.And(k, d), h if ans else z3.Not(h))
                          for k, d, h in ((self.k, c.d, c.h), (self.kx, c.dx, c.hx))]
        return ans

    def subst_cond(self, c):
        """A condition with ``c``'s truth at every point the knowledge admits (a bool there
        is decide's own answer: decide returns what subst_cond gives when it is a bool, so
        after decide answered None it is a condition)."""
        out = self.fresh("subst")
        self.said += [z3.Implies(z3.And(k, d), z3.And(d2, h2 == h))
                      for k, d, h, d2, h2 in ((self.k, c.d, c.h, out.d, out.h),
                                              (self.kx, c.dx, c.hx, out.dx, out.hx))]
        return out

    def negate(self, c):
        """``rel.le_negate``: the opposite truth wherever ``c`` is defined."""
        out = self.fresh("not")
        self.said += [z3.Implies(d, z3.And(d2, h2 == z3.Not(h)))
                      for d, h, d2, h2 in ((c.d, c.h, out.d, out.h),
                                           (c.dx, c.hx, out.dx, out.hx))]
        return out

    def _hint_cond(self, c) -> bool:
        """``c``'s truth at the example."""
        ans = self.choices.pick() == 0
        self.said.append(c.hx == ans)
        return ans

    def add_guard(self, c, frame, kind="guard", reason=None, data_dependent=False) -> None:
        """``env.add_guard``: afterwards the points admitted are exactly those admitted
        before where the guard holds (a data-dependent guard likewise, checked at run
        time)."""
        k, kx = self.k, self.kx
        k1, kx1 = self.new_state()
        self.said += [k1 == z3.And(k, c.h), kx1 == z3.And(kx, c.hx)]

    def user_label(self, s) -> str:
        """A symbol's name in a message (display only)."""
        return str(s)

    def _data_dependent(self, c, frame):
        """The error raised on a data-dependent condition (no loop guard)."""
        from symshape.errors import GuardOnDataDependentError
        return GuardOnDataDependentError("data-dependent")


class _EnvRelations:
    """``relations`` as ``env`` sees it in the proof: its negation the run's."""

    def __init__(self, run: EnvRun) -> None:
        self.negate = run.negate

    def __getattr__(self, name):
        return getattr(R, name)


#: the user's frame of a guard (display only)
FRAME = SimpleNamespace(code="", location="the proof")


@contextmanager
def env_specified(run: EnvRun):
    """``env``'s ``relations.negate`` the run's while the block runs."""
    from symshape.reasoning import env as ENV
    saved = ENV.R
    ENV.R = _EnvRelations(run)
    try:
        yield
    finally:
        ENV.R = saved


def truth(c):
    """(truth, definedness, truth at the example) of a condition or a bool."""
    if type(c) is bool:
        return z3.BoolVal(c), z3.BoolVal(True), z3.BoolVal(c)
    return c.h, c.d, c.hx


def env_paths(method) -> list:
    """``method`` (``ShapeEnv.evaluate`` / ``check``) run on every condition (True, False or
    an opaque one) with every hint (none, or the condition's truth at the example) under
    every plan of answers.  Per path: (what holds: the preconditions and the answers'
    statements, the condition, the knowledge afterwards at the point, the outcome: the
    bool returned, None, or the exception raised; the hint)."""
    from symshape.errors import GuardOnDataDependentError, UserError
    choices = Choices()

    def run():
        r = EnvRun(choices)
        c = (True, False, r.fresh("c"))[choices.pick(3)]
        hint = (None, True, False)[choices.pick(3)]
        hx = truth(c)[2]
        pre = [] if type(c) is bool else [c.dx]     # a traced condition: defined there
        pre += [] if hint is None else [hx == hint]
        with env_specified(r):
            try:
                out = method(r, c, hint, frame=FRAME)
            except (GuardOnDataDependentError, UserError) as e:
                out = e
        return z3.And(*pre, *r.said), c, r.k, out, hint
    return choices.runs(run)


def outcome(out):
    """The outcome as a Z3 integer: 1 True (or a check passed), 0 False, -2 raised."""
    if isinstance(out, Exception):
        return z3.IntVal(-2)
    return z3.IntVal(1 if out in (True, None) else 0)


@proves("env.evaluate",
        over=every("every condition (True, False, or ==, !=, <= of any expression, and / or "
                   "of any) and every hint (none, or the condition's truth at the example), "
                   "every environment (pending specialisations or not, inside a branch or "
                   "not, a guard hook observing), the condition's symbols data-dependent or "
                   "not (no loop guard installed: a condition a loop guard answers is "
                   "capture/loops.py's), along every path of ShapeEnv.evaluate; each step as "
                   "its proven specification, every answer explored: decide (decide.sound), "
                   "subst_cond (the same truth on the points admitted: as in decide.sound), "
                   "relations.negate "
                   "(rel.le_negate), the example's truth (_hint_cond: the condition evaluated "
                   "at the examples), add_guard "
                   "(env.add_guard: the points admitted afterwards are those before where the "
                   "guard holds), commit_pending (knowledge that still admits the example: "
                   "each pending size set to its example value)"))
def env_evaluate():
    """On every path: the bool ``evaluate`` returns is the condition's truth at every point
    the environment admits afterwards (where the condition is defined) and at the example
    (which the environment always admits); a data-dependent condition outside a loop guard
    raises."""
    from symshape.reasoning.env import ShapeEnv
    cases = env_paths(ShapeEnv.evaluate)
    outs = {str(outcome(out)) for _, _, _, out, _ in cases}
    require(outs == {"1", "0", "-2"}, "evaluate's outcomes were only %s", outs)

    def claim(*vs):
        return z3.And(*[z3.Implies(said, z3.Or(v == -2, z3.And(
            z3.Implies(z3.And(k, truth(c)[1]), truth(c)[0] == (v == 1)),
            truth(c)[2] == (v == 1)))) for (said, c, k, _, hint), v in zip(cases, vs)])
    prove_code(claim, [outcome(out) for _, _, _, out, _ in cases],
               what="evaluate on %d paths" % len(cases))


@proves("env.check",
        over=every("every condition (True, False, or ==, !=, <= of any expression, and / or "
                   "of any) and every hint (none, or the condition's truth at the example), "
                   "its symbols data-dependent or not, along every path of ShapeEnv.check; "
                   "each step as its proven specification, every answer explored: decide "
                   "(decide.sound), subst_cond (the same truth on the points admitted: as in "
                   "decide.sound), "
                   "add_guard (env.add_guard: the points admitted afterwards are those "
                   "before where the guard holds)"))
def env_check():
    """On every path: when ``check`` returns, every point the environment admits afterwards
    satisfies the condition (where it is defined); it raises only on a condition false at
    the example, and always on one whose hint says so."""
    from symshape.reasoning.env import ShapeEnv
    cases = env_paths(ShapeEnv.check)
    outs = {str(outcome(out)) for _, _, _, out, _ in cases}
    require(outs == {"1", "-2"}, "check's outcomes were only %s", outs)

    def claim(*vs):
        return z3.And(*[z3.Implies(said, z3.And(
            z3.Implies(v == 1, z3.Implies(z3.And(k, truth(c)[1]), truth(c)[0])),
            z3.Implies(v == -2, z3.Not(truth(c)[2])),
            (v == -2) if hint is False else z3.BoolVal(True)))
            for (said, c, k, _, hint), v in zip(cases, vs)])
    prove_code(claim, [outcome(out) for _, _, _, out, _ in cases],
               what="check on %d paths" % len(cases))


# ---------------------------------------------------------------------------- add_guard
class GuardRun:
    """A stand-in environment for ``ShapeEnv.add_guard``: its recorded guards, the guard
    being learnt, the knowledge at the point before (``k0``) and after (``k``); the
    solver's ``learn`` as its specification (``solve.dispatch``: afterwards the points
    admitted are exactly those before where the guard holds), raising or not (a guard
    contradicting the knowledge raises)."""

    def __init__(self, choices: Choices, outer) -> None:
        self.choices = choices
        self.guards: list = []
        self._learning = outer
        self.k0 = self.k = z3.Bool("k0")
        self.learnt: list = []

    def learn(self, env, c) -> None:
        """``solve.dispatch``: the knowledge becomes the old one where ``c`` holds."""
        require(env is self, "learn was handed another environment")
        self.learnt.append(("learn", c, env._learning))
        if self.choices.pick() == 1:
            from symshape.errors import InternalError
            raise InternalError("a guard contradicts earlier guards")
        self.k = z3.Bool("k1")
        self.said = self.k == z3.And(self.k0, c.h)

    def learn_data_dependent(self, env, c) -> None:
        """Handed a data-dependent guard (its learning is not claimed here)."""
        require(env is self, "learn_data_dependent was handed another environment")
        self.learnt.append(("data-dependent", c, env._learning))


@contextmanager
def solver_specified(run: GuardRun):
    """``solver.learn`` / ``learn_data_dependent`` the run's while the block runs."""
    from symshape.reasoning import solver as SE
    saved = SE.learn, SE.learn_data_dependent
    SE.learn, SE.learn_data_dependent = run.learn, run.learn_data_dependent
    try:
        yield
    finally:
        SE.learn, SE.learn_data_dependent = saved


@proves("env.add_guard",
        over=every("every guard (==, !=, <= of any expression, and / or of any: read only "
                   "through its text, its identity and the solver), every environment (a "
                   "guard being learnt already or not), a guard on input sizes or on "
                   "data-dependent ones, learning raising or not, along every path of "
                   "ShapeEnv.add_guard; solver.learn as its specification (solve.dispatch: "
                   "afterwards the points admitted are exactly those before where the "
                   "guard holds); a data-dependent guard is handed to learn_data_dependent "
                   "(what it learns is not claimed: no proof of it)"))
def env_add_guard():
    """On every path: the guard is recorded once (its condition and whether it is
    data-dependent), learnt by the solver step its kind calls for with itself as the
    guard being learnt, the guard being learnt before restored afterwards (also when
    learning raises), and the points admitted afterwards exactly those admitted before
    where the guard holds."""
    from symshape.errors import InternalError
    from symshape.reasoning.env import Guard, ShapeEnv
    choices = Choices()
    c = Cond("g")

    def run():
        outer = (None, Guard(Cond("earlier"), None, "guard"))[choices.pick()]
        dd = choices.pick() == 1
        r = GuardRun(choices, outer)
        r.said = z3.BoolVal(True)
        with solver_specified(r):
            try:
                ShapeEnv.add_guard(r, c, FRAME, "guard", data_dependent=dd)
                raised = False
            except InternalError:
                raised = True
        require(len(r.guards) == 1 and r.guards[0].cond is c and
                r.guards[0].data_dependent == dd, "add_guard recorded %s", r.guards)
        require(r.learnt == [("data-dependent" if dd else "learn", c, r.guards[0])],
                "add_guard had %s learnt", r.learnt)
        require(r._learning is outer, "add_guard left %s as the guard being learnt",
                r._learning)
        return r, dd, raised
    cases = [case for case in choices.runs(run) if not case[1] and not case[2]]
    require(len(cases) == 2, "add_guard learnt only %d guards on input sizes", len(cases))

    def claim(*ks):
        return z3.And(*[z3.Implies(r.said, k == z3.And(r.k0, c.h))
                        for (r, _, _), k in zip(cases, ks)])
    prove_code(claim, [r.k for r, _, _ in cases],
               what="add_guard on %d paths" % len(cases))
