"""Proof of ``z3bridge.implies`` (``symshape/reasoning/z3bridge.py``) for every list of
premises, every goal and every table of ranges.

``implies`` reads a condition only through ``Encoder.cond``, whose translation is proven on
its own (``z3bridge.minmax_encoding``: the comparison kinds, ``and`` / ``or`` and the Min / Max
terms; ``z3bridge.divmod_encoding``: each ``//`` / ``%`` atom's quotient, with its side
conditions, exists and is Python's for every non-zero divisor).  So here a condition is
opaque: its encoding ``E`` and the side conditions ``S`` it adds are free Booleans standing
for their values at a point with the quotients at their Python values: wherever the
condition is defined (every divisor non-zero) ``S`` holds and ``E`` is its truth; the
encoder registers the condition's symbols (the real ``Encoder.sym``) and the real
``Encoder.range`` translates each range, its ends symbolic, finite or infinite.  The solver is a recorder answering
every verdict (unsat, sat, unknown) and the time budget every outcome (``proofs/choices.py``).  Along every path: where ``implies`` answers True (False), the query whose
refutation it read holds at every point where the premises and the ranges hold, the
goal is defined and fails (holds) -- so an unsatisfiable query means the answer is right.
"""
from __future__ import annotations

from types import SimpleNamespace

import z3

from symshape.algebra import expr as E
from symshape.algebra.infinity import INT_OO, NEG_INT_OO
from symshape.reasoning import z3bridge as ZB

from . import every, proves
from .alike import read_alike
from .code import prove_code
from .choices import Choices
from .pyint import require

#: the symbols of the conditions: one with a range in the table, one without (the code
#: reads each symbol alike: ``s in ranges``)
IX, IY = E.Sym(972), E.Sym(973)


class OpaqueCond:
    """A condition as ``implies`` reads it: its truth and definedness at the point, the
    value of its encoding and of its side conditions there (quotients at Python's
    values)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.h, self.d, self.enc, self.side = z3.Bools(
            " ".join("%s.%s" % (name, n) for n in ("holds", "defined", "enc", "side")))

    def spec(self):
        """What the encoding proofs say of its encoding at the point: where the condition
        is defined, its side conditions hold and its encoding is its truth."""
        return z3.Implies(self.d, z3.And(self.side, self.enc == self.h))


class Recorder:
    """A solver standing in for Z3's: it keeps what the code asserts and answers every
    verdict."""

    def __init__(self, choices: Choices) -> None:
        self.choices, self.assertions, self.verdict = choices, [], None

    def set(self, *args, **kwargs) -> None:
        """Limits: irrelevant to a chosen verdict."""

    def add(self, *fs) -> None:
        """Record the assertions."""
        self.assertions += fs

    def check(self):
        """Any verdict."""
        self.verdict = (z3.unsat, z3.sat, z3.unknown)[self.choices.pick(3)]
        return self.verdict


class Shim:
    """The ``z3`` module as ``implies`` sees it: Z3 itself, its solvers recorders."""

    def __init__(self, choices: Choices) -> None:
        self.choices, self.solvers = choices, []

    def __getattr__(self, name):
        return getattr(z3, name)

    def Solver(self):      # noqa: N802 (z3's name)
        """A recording solver."""
        s = Recorder(self.choices)
        self.solvers.append(s)
        return s


class Budget:
    """The time budget: time left or not, each reading a choice."""

    def __init__(self, choices: Choices) -> None:
        self.choices = choices

    def remaining_ms(self) -> int:
        """Some time left (1 s) or none."""
        return (1000, 0)[self.choices.pick()]

    @property
    def spent(self) -> bool:
        """Spent or not (only a log line depends on it)."""
        return self.choices.pick() == 1


class OpaqueEncoder(ZB.Encoder):
    """``Encoder`` with ``cond`` opaque for an opaque condition (a bool is the real
    ``cond_term``'s): it registers the condition's symbols, adds its side conditions and
    returns its encoding."""

    def cond(self, c):
        if type(c) is bool:
            return super().cond(c)
        for s in (IX, IY):
            self.sym(s)
        self.side.append(c.side)
        return c.enc


def range_cases(tag: str) -> list:
    """Every end case of a range: each end finite (a symbolic integer) or infinite; the
    (range, its meaning for a member v, well-formedness) triples."""
    lo, hi = z3.Ints("%s.lo %s.hi" % (tag, tag))
    out = []
    for low in (lo, NEG_INT_OO):
        for high in (hi, INT_OO):
            fin = [low is lo, high is hi]
            out.append((SimpleNamespace(lower=low, upper=high),
                        lambda v, low=low, high=high, fin=fin: z3.And(
                            *([v >= low] if fin[0] else []), *([v <= high] if fin[1] else [])),
                        [lo <= hi] if all(fin) else []))
    return out


def implies_paths(premises: list, goal, rx) -> list:
    """``implies`` on ``premises`` and ``goal`` (opaque conditions or bools), ``IX``'s
    range ``rx`` (``range_cases``; ``IY`` has none), along every path of verdicts and
    budget outcomes.  Per path: (its answer, the query it read a refutation of, what
    holds at a point where that answer would be wrong)."""
    choices = Choices()
    x = z3.Int(IX.name)

    def truth(c):
        return (z3.BoolVal(c), z3.BoolVal(True)) if type(c) is bool else (c.h, c.d)

    def run():
        shim = Shim(choices)
        saved = ZB._z3, ZB.Encoder
        ZB._z3, ZB.Encoder = shim, OpaqueEncoder
        try:
            ans = ZB.implies(premises, goal, {IX: rx[0]}, Budget(choices))
        finally:
            ZB._z3, ZB.Encoder = saved
        read = [s for s in shim.solvers if s.verdict == z3.unsat]
        require(len(read) == (ans is not None), "implies answered %s reading %d refutations",
                ans, len(read))
        if ans is None:
            return ans, None, None
        know = [rx[1](x)] + rx[2] + [c.spec() for c in premises + [goal] if type(c) is not bool]
        know += [z3.And(*truth(p)) for p in premises]
        h, d = truth(goal)
        know += [d, z3.Not(h) if ans else h]
        return ans, z3.And(*read[0].assertions), z3.And(*know)
    return choices.runs(run)


@proves("z3bridge.implies",
        over=every("every list of premises and every goal (each a bool or any condition: read "
                   "only through Encoder.cond, its encoding and side conditions as the "
                   "encoding proofs give them, z3bridge.minmax_encoding and "
                   "z3bridge.divmod_encoding), their symbols with a range in the table or "
                   "without (the code reads each symbol alike), every range (each end "
                   "symbolic, finite or infinite, through the real Encoder.range), every "
                   "solver verdict and every budget outcome, along every path; two premises "
                   "stand for any number: the code encodes each alike (one comprehension, read from the code) and "
                   "the query is the conjunction of what it encoded"))
def z3bridge_implies():
    """Wherever ``implies`` answers, the query whose refutation it read holds at every point
    where the answer would be wrong (``implies_paths``), for no, one and two premises,
    each goal kind and every end case of the range; and two premises stand for any number
    (``proofs/alike.py``: read from the code)."""
    read_alike(ZB.implies)
    p1, p2, g = OpaqueCond("p1"), OpaqueCond("p2"), OpaqueCond("g")
    cases = []
    for rx in range_cases("x"):
        cases += implies_paths([p1, p2], g, rx)
    full = range_cases("x")[0]
    for premises in ([], [p1]):
        for goal in (g, True, False):
            cases += implies_paths(premises, goal, full)
    answers = {ans for ans, _, _ in cases}
    require({True, False, None} <= answers, "implies answered only %s", answers)
    decided = [(q, know) for ans, q, know in cases if ans is not None]

    def claim(*qs):
        return z3.And(*[z3.Implies(know, q) for (_, know), q in zip(decided, qs)])
    prove_code(claim, [q for q, _ in decided],
               what="the queries behind implies' answers on %d paths" % len(decided))
