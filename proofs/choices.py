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
    """Runs a function once per sequence of outcomes of its opaque tests (depth first,
    replaying the outcomes chosen so far): every combination, no solver call."""

    def __init__(self) -> None:
        self.plan: List[int] = []
        self.pos = 0
        self.pending: List[List[int]] = [[]]

    def pick(self, n: int = 2) -> int:
        """The next test's outcome on this run, one of ``0 .. n-1``; a new test forks."""
        if self.pos == len(self.plan):
            self.pending += [self.plan + [i] for i in range(1, n)]
            self.plan.append(0)
        self.pos += 1
        return self.plan[self.pos - 1]

    def choose(self) -> bool:
        """A two-way outcome: True, then False."""
        return self.pick() == 0

    def answer(self):
        """A three-valued answer: True, False or None."""
        return (True, False, None)[self.pick(3)]

    def runs(self, fn) -> list:
        """``fn()`` once per combination of outcomes."""
        out = []
        while self.pending:
            self.plan, self.pos = self.pending.pop(), 0
            out.append(fn())
        return out
