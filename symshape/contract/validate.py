"""Every rendered view of the contract, validated against its one Z3 meaning
(``meaning.admitted``); ``SYMSHAPE_VALIDATE=1`` turns it on (always on in the tests).

* the check records (``validate_check``) and the Python *text* ``module()`` runs
  (``validate_check_text``, parsed back by ``parse_check.CheckText``) accept exactly the
  input sizes the meaning admits;
* the printed ranges (``validate_ranges``): each finite end of each range of
  ``range_constraints`` is reached by some admitted input, an infinite end is unbounded
  among admitted inputs, and no admitted input lies outside;
* the sympy values (``validate_published``): each published sympy value evaluates to the
  engine's own expression on the contract's corner points (``sympy_form.public`` checks it
  as it builds the value; this re-checks what was published).

A failure is an ``InternalError`` that prints the expressions involved.
"""
from __future__ import annotations

from typing import Iterable, List, Optional

from symshape.errors import InternalError
from symshape.algebra.infinity import is_inf
from symshape.rules import rule
from symshape.reasoning.z3bridge import RLIMIT, serialized, z3mod
from symshape.contract.meaning import CheckMeaning, admitted
from symshape.contract.parse_check import CheckText


@serialized
def validate_check(cs, writer, records: Optional[List] = None) -> None:
    """(b): the input check's records (``writer.checks`` unless given), the very records
    the Python renderer writes, against the constraint set."""
    meaning = admitted(cs)
    # accepted: what the check records mean, over the input sizes
    ex = CheckMeaning(meaning.size)
    ex.run(writer.checks if records is None else records)
    _same_set(meaning, ex, "generated input check")


def _same_set(meaning, ex, what: str) -> None:
    """The sizes ``ex`` (``accept``, ``side``, ``read``) accepts are exactly those the
    contract's meaning admits (its roots existential), and ``ex`` reads every input size."""
    z3 = z3mod()
    acc_f = z3.And(*ex.accept) if ex.accept else z3.BoolVal(True)
    acc_f = z3.And(acc_f, *ex.side) if ex.side else acc_f
    adm_f = meaning.formula()
    missing = set(meaning.sizes) - ex.read
    if missing:
        raise InternalError("translation validation: the %s never looks at %s"
                            % (what, sorted(missing)))
    # 1. accepted => admitted: the admitted side's roots are existential, so "the check
    #    accepts and no root values admit the sizes" must be unsat
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT * 5)
    solver.add(acc_f)
    goal_vars = meaning.roots()
    solver.add(z3.ForAll(goal_vars, z3.Not(adm_f)) if goal_vars else z3.Not(adm_f))
    if solver.check() == z3.sat:
        raise InternalError("translation validation: the %s accepts inputs the constraint "
                            "set rejects:\n  counterexample sizes: %s" % (what, solver.model()))
    # 2. admitted => accepted: the check's own quotients are functions of the sizes (pinned
    #    by their definitions, a zero divisor being a rejection), so no quantifier is needed
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT * 5)
    solver.add(adm_f, *ex.side)
    solver.add(z3.Not(z3.And(*ex.accept)) if ex.accept else z3.BoolVal(False))
    if solver.check() == z3.sat:
        raise InternalError("translation validation: the %s rejects inputs the constraint "
                            "set admits:\n  counterexample sizes: %s" % (what, solver.model()))


@serialized
@rule("check.text")
def validate_check_text(cs, lines: List[str], params: Optional[Iterable[str]] = None) -> None:
    """(b) on the *text*: the Python lines of the input check (what ``module()`` and the
    compiled forms run, after rendering) are parsed back (``CheckText``) and proven to
    accept exactly the sizes the constraint set admits; every name they read is defined
    (``params``: the function's parameters, by default the inputs' own names)."""
    params = {d.param for d in cs.inputs} if params is None else set(params)
    meaning = admitted(cs)
    ex = CheckText(meaning.size, params)
    ex.run(lines)
    _same_set(meaning, ex, "input check's Python text")


#: an infinite end is shown by an admitted input this far beyond an attained value (the
#: distance beyond which ``projection.project`` reports an end as infinite)
FAR = 1 << 40


def _solver(*parts):
    z3 = z3mod()
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT * 5)
    solver.add(*parts)
    return solver


def _point(meaning, model) -> dict:
    """The root values of an admitted input (a Z3 model of the meaning)."""
    z3 = z3mod()
    out = {}
    for s, v in meaning.enc.vars.items():
        val = model.eval(v, model_completion=True)
        if z3.is_int_value(val):
            out[s] = val.as_long()
    return out


@serialized
def validate_ranges(cs, ranges) -> List[dict]:
    """The printed ranges (``ranges``: expression -> ``ValueRange``, as
    ``range_constraints`` publishes them) against the contract's one meaning: no admitted
    input lies outside a range, each finite end is the value of some admitted input, and
    an infinite end is exceeded by an admitted input ``FAR`` beyond an attained value.
    Returns the admitted points found (root -> value): the contract's corner points.  A
    question the solver does not settle within its resource limit is left unproven
    (never a failure); a disproven one is an ``InternalError``."""
    z3 = z3mod()
    points: List[dict] = []
    for e, vr in ranges.items():
        meaning = admitted(cs)
        t = meaning.term(e)
        adm = meaning.formula()

        def reach(goal, what: str):
            """The value of ``e`` at an admitted input where ``goal`` holds (kept as a
            corner point); None when unsettled; proven absent is an InternalError."""
            solver = _solver(adm, goal)
            got = solver.check()
            if got == z3.unsat:
                raise InternalError("contract validation: range_constraints prints %s for "
                                    "%s, but no admitted input %s" % (vr, e, what))
            if got != z3.sat:
                return None
            points.append(_point(meaning, solver.model()))
            return solver.model().eval(t, model_completion=True).as_long()

        outside = ([t < vr.lower] if not is_inf(vr.lower) else []) + \
            ([t > vr.upper] if not is_inf(vr.upper) else [])
        if outside and _solver(adm, z3.Or(*outside)).check() == z3.sat:
            raise InternalError("contract validation: range_constraints prints %s for %s, "
                                "but the contract admits inputs outside it" % (vr, e))
        seen = None                        # a value of e some admitted input attains
        for end in (vr.lower, vr.upper):
            if not is_inf(end):
                got = reach(t == end, "reaches %s" % end)
                seen = got if got is not None else seen
        for end in (vr.lower, vr.upper):
            if not is_inf(end):
                continue
            if seen is None:
                seen = reach(z3.BoolVal(True), "exists")
            if seen is None:
                break
            reach(t <= seen - FAR if end < 0 else t >= seen + FAR, "reaches %s" % end)
    return points


def validate_published(cs, values, points: Iterable[dict]) -> None:
    """Each published sympy value (``values``: the engine's expression -> the sympy value
    users read) evaluates to the engine's expression on the contract's corner points:
    ``points`` (admitted inputs, ``validate_ranges``) and the corner points of the roots'
    ranges (``sympy_form.corner_points``)."""
    from symshape.contract.sympy_form import agrees, corner_points
    points = list(points)
    for x, got in values.items():
        if type(x) is int:
            if got != x:
                raise InternalError("contract validation: the size %s is published as %s"
                                    % (x, got))
            continue
        syms = sorted(x.free_symbols, key=lambda s: s.key)
        pts = corner_points(syms, cs.ranges) + \
            [tuple(p[s] for s in syms) for p in points if all(s in p for s in syms)]
        if not agrees(x, got, syms, pts, cs.ranges):
            raise InternalError("contract validation: the published value %s of the size "
                                "%s does not evaluate to it on the contract's corner "
                                "points" % (got, x))
