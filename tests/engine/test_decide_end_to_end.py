"""The whole decision pipeline on a grammar of conditions, nothing replaced: ``decide``,
``evaluate`` and the solver's learning, each answer compared with every point of a box.

The proofs ``decide.sound``, ``env.evaluate``, ``env.check``, ``env.add_guard``
(``proofs/decide_specs_every.py``) and ``z3bridge.implies`` (``proofs/implies_every.py``) cover
the logic of each function for every input, its steps as their proven specifications;
these tests keep the steps' composition (substitution, interval arithmetic, facts, sums of
facts, the witness, Z3, the solver's learning) under the mutation gate (``proofs/mutation.py``
runs them on the decision, solver, env and z3bridge mutants)."""
import itertools

import pytest

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.algebra.expr import evaluate as value_at
from symshape.algebra.infinity import INT_OO
from symshape.algebra.ranges import ValueRange
from symshape.reasoning.decision import holds
from symshape.reasoning.env import ShapeEnv

COEFFS = (-1, 0, 1, 2)
CONSTS = (-3, 0, 2)
#: the box of points compared with: each symbol from its lower end, this many values
SPAN = 14


def grammar(x, y) -> list:
    """Every ``a*x + b*t + c <op> 0`` for ``t`` among ``y`` and the atoms over ``x``, ``y``."""
    terms = [y, E.floordiv(x, 2), E.mod(x, 3), E.smin(x, y), E.smax(x, y), x * y]
    out = []
    for t in terms:
        for a, b, c in itertools.product(COEFFS, COEFFS, CONSTS):
            if a == b == 0:
                continue
            for op in (R.LE, R.EQ, R.NE):
                r = R.make(op, a * x + b * t + c)
                if type(r) is not bool:
                    out.append(r)
    return list(dict.fromkeys(out))


#: (example, lower, upper) of x and y, and the guards learnt before (over x, y)
ENVS = {
    "box": ([(5, 2, INT_OO), (3, 0, 9)], []),
    "x >= y + 2": ([(6, 2, INT_OO), (3, 2, INT_OO)], [lambda x, y: R.ge(x, y + 2)]),
    "x + y <= 12, x % 2 == 0": ([(4, 2, INT_OO), (5, 1, INT_OO)],
                                [lambda x, y: R.le(x + y, 12),
                                 lambda x, y: R.eq(E.mod(x, 2), 0)]),
}


def fresh(name):
    """The environment ``name`` with its guards learnt, its symbols and the guards."""
    specs, guards = ENVS[name]
    env = ShapeEnv()
    syms = [env.create_symbol(h, "v%d" % i, ValueRange(lo, hi))
            for i, (h, lo, hi) in enumerate(specs)]
    xy = [s.expr for s in syms]
    conds = [g(*xy) for g in guards]
    for c in conds:
        env.add_guard(c, None)
    return env, syms, conds


def points(specs, syms, knowledge) -> list:
    """The points of the box (each symbol from its lower end, ``SPAN`` values, within its
    range) where every condition of ``knowledge`` holds."""
    axes = [range(lo, lo + SPAN) if hi is INT_OO else range(lo, min(hi, lo + SPAN - 1) + 1)
            for _, lo, hi in specs]
    out = []
    for vals in itertools.product(*axes):
        p = {s: v for s, v in zip(syms, vals)}
        if all(holds(k, p) for k in knowledge):
            out.append(p)
    return out


def right(c, ans, pts) -> bool:
    """``ans`` is ``c``'s truth at every point of ``pts`` where ``c`` is defined."""
    for p in pts:
        try:
            v = c.holds(value_at(c.expr, p))
        except ZeroDivisionError:
            continue
        if v != ans:
            return False
    return True


@pytest.mark.parametrize("name", sorted(ENVS))
def test_decide_is_right_at_every_point_of_the_box(name):
    env, syms, guards = fresh(name)
    x, y = (s.expr for s in syms)
    pts = points(ENVS[name][0], syms, guards)
    decided = 0
    for c in grammar(x, y)[::2]:
        ans = env.decide(c)
        if ans is None:
            continue
        decided += 1
        assert right(c, ans, pts), "decide(%s) = %s under %s" % (c, ans, name)
    assert decided >= 150, "decide settled only %d conditions under %s" % (decided, name)


@pytest.mark.parametrize("name", ["box", "x >= y + 2"])
def test_what_evaluate_learns_keeps_decide_right(name):
    specs = ENVS[name][0]
    env0, syms0, _ = fresh(name)
    x0, y0 = (s.expr for s in syms0)
    conds = grammar(x0, y0)
    recorded = 0
    for c in conds[::23]:
        env, syms, guards = fresh(name)
        example = {s: h for s, (h, _, _) in zip(syms, specs)}
        try:
            truth = c.holds(value_at(c.expr, example))
        except ZeroDivisionError:
            continue
        before = len(env.guards)
        assert env.evaluate(c, truth) is truth
        recorded += len(env.guards) > before
        assert env.decide(c) is truth, "evaluate(%s) = %s was not learnt" % (c, truth)
        taken = c if truth else R.negate(c)
        pts = points(specs, syms, guards + [taken])
        assert example in pts
        for c2 in conds[::9]:
            ans = env.decide(c2)
            assert ans is None or right(c2, ans, pts), \
                "after evaluate(%s) = %s: decide(%s) = %s under %s" % (c, truth, c2, ans, name)
    assert recorded > 0, "no condition of the grammar was left to a guard"
