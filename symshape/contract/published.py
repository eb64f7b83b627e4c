"""The contract as users read it: ``ep.range_constraints``, ``ep.input_shapes`` and
``ep.guards`` of an exported program, all from its one ``ConstraintSet``.

The ranges come from the one range service (``exact_ranges``); the sizes are sympy values
built without letting sympy rewrite them (``sympy_form.public``); the guards are the
residual guards in the inputs' terms (``guard_text``).  With validation on
(``SYMSHAPE_VALIDATE``), what is published is checked against the contract's one meaning
(``validate.validate_ranges``, ``validate.validate_published``) before it is returned.
"""
from __future__ import annotations

from typing import Any, Dict, List

from symshape.algebra.ranges import ValueRange
from symshape.contract.guard_text import guard_texts
from symshape.contract.sympy_form import public


def _validated(cs) -> List[dict]:
    """The contract's corner points (admitted inputs reaching each printed range end),
    once per constraint set, with the printed ranges proven; ``[]`` without validation."""
    from symshape.reasoning.validate import enabled
    if not enabled():
        return []
    got = cs.__dict__.get("_corner_points")
    if got is None:
        from symshape.contract.validate import validate_ranges
        got = cs.__dict__["_corner_points"] = validate_ranges(cs, cs.range_constraints())
    return got


def range_constraints(cs) -> Dict[Any, ValueRange]:
    """Each root symbol and each compound input-dim expression (as sympy) with its exact
    range; validated: every end attained, nothing outside admitted."""
    rng = cs.ranges                  # each symbol's sympy sign follows its range
    ranges = cs.range_constraints()
    values = {k: public(k, rng) for k in ranges}
    _check(cs, values)
    return {values[k]: v for k, v in ranges.items()}


def input_shapes(cs) -> Dict[str, tuple]:
    """Each array input's path -> its shape: ints and sympy expressions over the roots."""
    rng = cs.ranges
    values = {e: public(e, rng) for d in cs.inputs if d.is_array for e in d.dims}
    _check(cs, values)
    return {d.path: tuple(values[e] for e in d.dims) for d in cs.inputs if d.is_array}


def guards(cs) -> List[str]:
    """``ep.guards``: every part of the contract ranges and shapes cannot say, in the
    inputs' terms (``guard_text.guard_texts``)."""
    return guard_texts(cs)


def _check(cs, values) -> None:
    points = _validated(cs)
    from symshape.reasoning.validate import enabled
    if enabled():
        from symshape.contract.validate import validate_published
        validate_published(cs, values, points)
