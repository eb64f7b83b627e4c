"""Tests that kill the surviving mutants of ``symshape/reasoning/solver.py`` (the mutation gate,
``python -m proofs.mutation --only solver``; docs/mutation_report.md).  Ranges are compared
with brute force over the box of sizes."""
import itertools

import pytest

from symshape.algebra import relations as R
from symshape.reasoning.env import ShapeEnv
from symshape.errors import InternalError
from symshape.algebra.expr import Sym, evaluate, floordiv, mod
from symshape.algebra.infinity import int_oo
from symshape.algebra.ranges import ValueRange
from symshape.reasoning.solver import components, split_residues


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


def test_a_cyclic_replacement_is_an_internal_error_naming_the_symbol():
    # an invariant of the solver, checked where it would break (mutant: the message
    # built with `+`, a TypeError instead)
    env = ShapeEnv()
    x = env.create_symbol(5, "x", ValueRange(2, 20)).expr
    with pytest.raises(InternalError, match="cyclic replacement s0 -> s0 \\+ 1"):
        env.replace(x.as_symbol(), x + 1)


def test_an_empty_range_is_an_internal_error_naming_the_symbol():
    env = ShapeEnv()
    x = env.create_symbol(5, "x", ValueRange(2, 20)).expr
    with pytest.raises(InternalError, match="range of s0 became empty"):
        env.refine(x.as_symbol(), ValueRange(50, 60))


def test_residue_cases_are_tried_up_to_sixteen():
    # split_residues tries one case per residue of the divisors' lcm, at most 16 (a
    # cost limit: the answer is then left to the solver's other rules and a guard)
    # (mutant: 17 allowed)
    for k, tried in ((16, True), (17, False)):
        env = ShapeEnv()
        s = env.create_symbol(2 * k - 1, "s", ValueRange(2, 1000)).expr
        c = R.eq(floordiv(s + 1, k) * k, s + 1)               # s % k == k - 1
        assert split_residues(env, c) is tried
        assert bool(env.replacements) is tried                # s = k*q + k - 1


def _env_with_x():
    env = ShapeEnv()
    return env, env.create_symbol(9, "x", ValueRange(2, int_oo)).expr


def test_a_data_dependent_and_narrows_each_side_an_or_stays_a_fact():
    # learn_data_dependent splits an `and` into its sides (u in [3, 10]); an `or` says
    # nothing about either side alone (mutants: the and / or test changed)
    env, x = _env_with_x()
    u = env.create_unbacked("u", ValueRange(0, int_oo)).expr
    env.check(R.combine("and", [R.ge(u, 3), R.le(u, 10)]), None)
    assert env.ranges[u.as_symbol()] == ValueRange(3, 10) and env.facts == []
    v = env.create_unbacked("v", ValueRange(0, int_oo)).expr
    either = R.combine("or", [R.le(v, 3), R.ge(v, 10)])
    env.check(either, None)
    assert env.ranges[v.as_symbol()] == ValueRange(0, int_oo) and env.facts == [either]


def test_a_data_dependent_replacement_never_narrows_an_input_size():
    # w == x - 3 with w >= 0: x >= 3 holds only where the check ran, an assumption, and
    # x's range stays [2, oo) (mutant: the input-only test inverted, which learnt it)
    env, x = _env_with_x()
    w = env.create_unbacked("w", ValueRange(0, int_oo)).expr
    env.check(R.eq(w, x - 3), None)
    assert env.replacements == {w.as_symbol(): x - 3}
    assert env.ranges[x.as_symbol()] == ValueRange(2, int_oo)
    assert env.assumptions == [R.ge(x, 3)] and env.facts == []


def test_a_data_dependent_replacement_over_two_sizes_keeps_its_range_as_a_fact():
    # w3 -> w2 - x + 20 must stay >= 0: over a data-dependent size and an input size,
    # open on the ranges, so a fact (mutant: `decide_ranges(...) >= True`, None >= True)
    env, x = _env_with_x()
    w2 = env.create_unbacked("w2", ValueRange(0, 10)).expr
    w3 = env.create_unbacked("w3", ValueRange(0, int_oo)).expr
    env.check(R.eq(w2, w3 + x - 20), None)
    assert env.replacements == {w3.as_symbol(): w2 - x + 20}
    assert env.facts == [R.le(x, w2 + 20)]


@pytest.mark.parametrize("value", [3, 12])
def test_a_replacement_that_breaks_the_example_is_an_internal_error(value):
    # x's example is 9: x -> 3 and x -> 12 both break it (mutant: only a larger value
    # was caught)
    env, x = _env_with_x()
    with pytest.raises(InternalError, match="breaks the example value 9"):
        env.replace(x.as_symbol(), value)


def test_a_remainder_of_a_product_stays_a_fact():
    # Mod(x*y, 3) == 0: x*y is no symbol to write as 3*q (mutant: `s is None and ...`,
    # which went on with no symbol)
    env, x = _env_with_x()
    y = env.create_symbol(3, "y", ValueRange(2, int_oo)).expr
    assert env.evaluate(R.eq(mod(x * y, 3), 0)) is True
    assert env.replacements == {} and env.facts == [R.eq(mod(x * y, 3), 0)]


def test_a_replacement_by_a_sum_keeps_the_old_range_as_a_fact():
    # x -> y + z - 5 (or the same solved for y or z) must stay >= 2: a fact over two
    # sizes (mutant: `len(lin) >= 1`, which unpacked two symbols as one)
    env, x = _env_with_x()
    y, z = (env.create_symbol(7, n, ValueRange(2, int_oo)).expr for n in "yz")
    assert env.evaluate(R.eq(x, y + z - 5)) is True
    assert len(env.replacements) == 1 and len(env.facts) == 1
    (f,) = env.facts
    assert len(f.free_symbols) == 2 and f.op == R.LE
    points = [(a, b, c) for a, b, c in itertools.product(range(2, 12), repeat=3)
              if a == b + c - 5]
    (s, v), = env.replacements.items()
    for p in points:
        vals = dict(zip((x.as_symbol(), y.as_symbol(), z.as_symbol()), p))
        assert f.holds(evaluate(f.expr, vals)) and evaluate(v, vals) == vals[s]


def test_a_data_dependent_replacement_by_one_size_narrows_that_size():
    # w3 -> w2 - 5 with w3 >= 0: w2 in [5, 10], a range, not a fact (mutant: the one-symbol
    # test inverted)
    env, x = _env_with_x()
    w2 = env.create_unbacked("w2", ValueRange(0, 10)).expr
    w3 = env.create_unbacked("w3", ValueRange(0, int_oo)).expr
    env.check(R.eq(w3, w2 - 5), None)
    assert env.replacements == {w3.as_symbol(): w2 - 5}
    assert env.ranges[w2.as_symbol()] == ValueRange(5, 10) and env.facts == []


def test_residue_cases_cover_only_the_sizes_in_range():
    # s in [2, 15]: s % 16 + s // 16 == 3 holds at s = 3 alone; the case s = 16*q + 3 has
    # q in [0, 0], where it is decided (mutant: q's upper end multiplied, not divided,
    # which left the case open)
    env = ShapeEnv()
    s = env.create_symbol(3, "s", ValueRange(2, 15)).expr
    assert [v for v in range(2, 16) if v % 16 + v // 16 == 3] == [3]
    assert split_residues(env, R.eq(mod(s, 16) + floordiv(s, 16), 3)) is True
    assert env.replacements == {s.as_symbol(): 3}


def _admits(env, vals) -> bool:
    """The point ``vals`` (symbol -> int) is inside every range, replacement and fact."""
    if any(v not in env.ranges[s] for s, v in vals.items() if s in env.ranges):
        return False
    if any(evaluate(e, vals) != vals[s] for s, e in env.replacements.items()):
        return False
    return all(f.holds(evaluate(f.expr, vals)) for f in env.facts)


def test_factor_pairs_need_the_same_other_factors_on_both_sides():
    # x*y == 2*z*(x//2) is not "x % 2 == 0": the factors besides the pair (y and z) differ,
    # so it is no factor-pair equation (mutant: the sorted keys compared with `<`, which
    # took [y] against [z] for a match whenever y's key sorted after z's)
    env = ShapeEnv()
    z = env.create_symbol(3, "z", ValueRange(2, int_oo)).expr      # z's key sorts first
    x = env.create_symbol(4, "x", ValueRange(2, int_oo)).expr
    y = env.create_symbol(3, "y", ValueRange(2, int_oo)).expr
    assert env.evaluate(R.eq(x * y - 2 * z * floordiv(x, 2), 0)) is True
    syms = (z.as_symbol(), x.as_symbol(), y.as_symbol())
    for p in itertools.product(range(2, 9), repeat=3):
        vals = dict(zip(syms, p))
        c, a, b = p
        if _admits(env, vals):
            assert a * b == 2 * c * (a // 2), p
