"""Every combination of the outcomes of a function's opaque tests, with no solver call.

A proof that replaces a callee by what the callee's own proof guarantees lets each of its
answers be any the guarantee allows: each is a choice here, and ``Choices.runs`` runs the
function once per sequence of choices (depth first, replaying those made so far).  The
outcomes are independent (each is a fresh range's end, a fresh verdict), so every
combination is a real case.
"""
from __future__ import annotations

from typing import List


class Choices:
    """Runs a function once per sequence of outcomes of its opaque tests."""

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
