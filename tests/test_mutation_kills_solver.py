"""Tests that kill the surviving mutants of ``symshape/solver.py`` (the mutation gate,
``python -m proofs.mutation --only solver``; docs/mutation_report.md).  Ranges are compared
with brute force over the box of sizes."""
import itertools

from symshape import relations as R
from symshape.env import ShapeEnv
from symshape.expr import Sym
from symshape.ranges import ValueRange
from symshape.solver import components


def test_a_two_variable_equation_keeps_each_size_inside_its_range():
    # 2x - 3y == 1 with x in [2, 20], y in [2, 100]: x = 3k + 2, y = 2k + 1; the
    # quotient's range must keep x <= 20 (mutant: (upper + rx) // m let x reach 23)
    env = ShapeEnv()
    x = env.create_symbol(5, "x", ValueRange(2, 20)).expr
    y = env.create_symbol(3, "y", ValueRange(2, 100)).expr
    assert env.evaluate(R.eq(2 * x - 3 * y, 1)) is True
    points = [(a, b) for a, b in itertools.product(range(2, 21), range(2, 101))
              if 2 * a - 3 * b == 1]
    assert env.bound(x) == ValueRange(min(a for a, _ in points), max(a for a, _ in points))
    assert env.bound(y) == ValueRange(min(b for _, b in points), max(b for _, b in points))


def test_facts_sharing_a_symbol_through_a_chain_are_one_component():
    # components is a union-find over the facts' symbols: a-b, b-c and c-d chain into one
    # group whatever the order the unions meet them in; e-f is its own (mutants: no union
    # for distinct roots, a `find` that stops at a larger parent)
    a, b, c, d, e, f = (Sym(i).expr for i in range(6))
    chain = [R.le(c, d), R.le(a, b), R.le(e, f), R.le(b + d, 9 * c), R.le(d, a + 1)]
    groups = components(chain)
    assert sorted(map(len, groups)) == [1, 4]
    assert [R.le(e, f)] in groups
    for perm in itertools.permutations(chain):
        got = components(list(perm))
        assert sorted(map(len, got)) == [1, 4]
        assert all(list(g) == [h for h in perm if h in g] for g in got)   # facts' order
