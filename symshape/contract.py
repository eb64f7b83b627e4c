"""The parts of a program's contract that ranges and shapes cannot say, in user terms.

``range_constraints`` gives each root symbol its exact range and ``input_shapes`` the
relations and multiples that shapes spell (``(s0, 4*s1)``); what is left (``x.shape[0] +
y.shape[0] <= 100``, ``x.shape[0] % 3 == 0`` on an axis not written as a multiple) is a
residual guard.  ``guard_texts`` prints each one over the input axes that bind its symbols,
exactly as the input check evaluates it.
"""
from __future__ import annotations

from typing import List
from .guards import CheckWriter


def guard_texts(cs) -> List[str]:
    """One line per residual guard of the constraint set ``cs``, in the inputs' terms."""
    if not cs.facts:
        return []
    writer = CheckWriter(cs)
    writer.emit()                     # binds every root to the axis that reads it
    return [f.format(writer.user_name, py=True) for f in cs.facts]
