"""The parts of a program's contract that ranges and shapes cannot say, in user terms.

``range_constraints`` gives each root symbol its exact range and ``input_shapes`` the
relations and multiples that shapes spell (``(s0, 4*s1)``); what is left (``x.shape[0] +
y.shape[0] <= 100``, ``x.shape[0] % 3 == 0`` on an axis not written as a multiple) is a
residual guard.  ``guard_texts`` prints each one over the input axes that bind its symbols,
exactly as the input check evaluates it.
"""
from __future__ import annotations

from typing import List

from . import relations as R
from .expr import Expr
from .guards import CheckWriter
from .infinity import is_inf
from .projection import implied
from .rules import rule


def guard_texts(cs) -> List[str]:
    """One line per residual guard of the constraint set ``cs``, in the inputs' terms,
    leaving out each guard that the printed ranges already imply (``shown_facts``)."""
    if not cs.facts:
        return []
    writer = CheckWriter(cs)
    writer.emit()                     # binds every root to the axis that reads it
    return [f.format(writer.user_name, py=True) for f in shown_facts(cs)]


@rule("contract.shown_guards")
def shown_facts(cs) -> list:
    """The residual guards the printed contract must list: each guard that follows from
    the root ranges, the exact ranges of the compound input dims (``z.shape[0] = s0 + s1``
    in ``[4, 20]``, part of ``range_constraints``) and the other guards still listed is
    dropped, proved by the solver (a guard it cannot settle in time stays).  The input
    check still enforces every guard: only the text leaves out what the ranges say."""
    cached = cs.__dict__.get("_shown_facts")
    if cached is not None:
        return cached
    said = []                         # what range_constraints prints about compound dims
    for e, vr in cs.range_constraints().items():
        if type(e) is Expr and e.as_symbol() is None:
            said += [R.ge(e, vr.lower)] if not is_inf(vr.lower) else []
            said += [R.le(e, vr.upper)] if not is_inf(vr.upper) else []
    said = [c for c in said if not isinstance(c, bool)]
    kept = list(cs.facts)
    for f in list(kept):
        rest = [g for g in kept if g is not f]
        if implied(f, rest + said, cs.ranges):
            kept = rest
    cs.__dict__["_shown_facts"] = kept
    return kept
