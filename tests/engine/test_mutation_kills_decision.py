"""Tests that kill the surviving mutants of ``symshape/reasoning/decision.py`` (the mutation gate,
``python -m proofs.mutation --only decision``; docs/mutation_report.md).  Each test names
the step of ``decide`` it pins and compares with the truth found by hand or by brute force
over a box of points."""
import itertools

from symshape.algebra import relations as R
from symshape.reasoning.decision import decide_ranges, holds
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.expr import floordiv
from symshape.algebra.infinity import int_oo
from symshape.algebra.ranges import ValueRange


def make_env(*hints):
    """An environment with one size per hint, each in [2, oo)."""
    env = ShapeEnv()
    return env, [env.create_symbol(h, "x%d" % i, ValueRange(2, int_oo)).expr
                 for i, h in enumerate(hints)]


def test_a_not_equal_fact_is_no_upper_bound_in_a_sum_of_facts():
    # step 5 sums only <= and == facts: x != y says nothing about x <= y or y <= x
    # (mutant: `f.op <= R.LE` read the fact x - y != 0 as x - y <= 0)
    env, (x, y) = make_env(9, 3)
    assert env.evaluate(R.ne(x, y)) is True
    assert [f.format() for f in env.facts] == ["s0 != s1"]
    assert env.decide(R.le(x, y)) is None
    assert env.decide(R.le(y, x)) is None
    assert env.decide(R.lt(x, y)) is None


def test_a_move_outside_the_range_is_no_witness():
    # step 6 moves one symbol to a nearby point; x = 1 is outside [2, oo), where
    # x*y - x - y >= 0 fails, but on the range (x - 1)(y - 1) >= 1 holds: implied
    # (mutants: the range test dropped from the moves, the moves changed)
    env, (x, y) = make_env(2, 2)
    c = R.ge(x * y - x - y, 0)
    assert env.decide(c) is True
    assert all(a * b - a - b >= 0 for a, b in itertools.product(range(2, 30), repeat=2))


def test_an_and_is_implied_only_when_both_sides_are():
    # step 7 with an `and`: n >= 2 always, n <= 5 not: neither the and nor its negation
    # (mutant: the z3 encoding of `and` as `or` proved it)
    env, (n,) = make_env(2)
    c = R.combine("and", [R.ge(n * n - 2 * n, 0), R.le(n, 5)])
    assert env.decide(c) is None
    assert env.decide(R.combine("or", [R.ge(n * n - 2 * n, 0), R.le(n, 5)])) is True


def _decide_counting(env, c):
    """(decide's answer, the number of Z3 calls it made)."""
    before = env.z3_queries
    return env.decide(c), env.z3_queries - before


def test_a_unit_linear_equation_open_on_the_box_needs_no_solver():
    # step 4: x + y == 20 over [2, oo)^2 is attained (x = 2, y = 18) and missed: open,
    # and the box says so at once; the example point (2, 2) and its moves never reach 20,
    # so without step 4 the solver would be asked (mutant: `abs(k) == 2`)
    env, (x, y) = make_env(2, 2)
    assert _decide_counting(env, R.eq(x + y, 20)) == (None, 0)
    assert _decide_counting(env, R.ne(x + y, 20)) == (None, 0)


def test_the_move_to_one_above_the_lower_end_witnesses_an_open_question():
    # step 6: (x - 2)(x - 4) >= 0 fails only at x = 3; from the example x = 10 the moves
    # are 11, 9, 20, 2, 3: the last one flips it, so no solver call (mutant: lower + 2)
    env, (x,) = make_env(10)
    c = R.ge(x * x - 6 * x + 8, 0)
    assert _decide_counting(env, c) == (None, 0)
    assert [a for a in range(2, 50) if (a - 2) * (a - 4) < 0] == [3]


def test_a_recorded_point_outside_the_ranges_is_no_base_point():
    # step 6 without example values starts from the recorded point of the constraints;
    # one outside the ranges (here x = 1) is dropped: from (1, 5) the move x = 2 flips
    # x*y - x - y >= 0, but (1, 5) breaks K, so that is no witness; on [2, oo)^2 the
    # relation is implied (mutant: `is_inf(v) and v not in range` kept the point)
    env = ShapeEnv()
    x, y = (env.create_symbol(None, n, ValueRange(2, int_oo)).expr for n in "xy")
    env.example_point = {x.as_symbol(): 1, y.as_symbol(): 5}
    assert env.decide(R.ge(x * y - x - y, 0)) is True


def test_an_equation_is_not_decided_by_an_upper_bound_alone():
    # steps 2 and 5 for `==`: a <= b (a fact) or x <= 10 (a range) bounds one side only
    # (mutant: `c.op >= R.LE` sent `==` down the `<=` branch)
    env, (a, b) = make_env(3, 9)
    assert env.evaluate(R.le(a, b)) is True
    assert [f.format() for f in env.facts] == ["s0 <= s1"]
    assert env.decide(R.eq(a, b)) is None
    assert env.decide(R.ne(a, b)) is None
    env = ShapeEnv()
    x = env.create_symbol(5, "x", ValueRange(2, 10)).expr
    assert env.decide(R.eq(x, 10)) is None
    assert env.decide(R.ne(x, 10)) is None


def test_the_move_one_above_the_example_witnesses_an_open_question():
    # step 6: (x - 10)(x - 12) >= 0 fails only at x = 11, the move h + 1 from x = 10
    # (mutant: h + 0, which the `v == h` test skips)
    env, (x,) = make_env(10)
    assert _decide_counting(env, R.ge(x * x - 22 * x + 120, 0)) == (None, 0)


def test_a_fact_decides_itself_and_its_negation_syntactically():
    # step 3: x != y is a fact (x = 9, y = 3): no solver call, for it or its negation;
    # step 5 cannot show a `!=` (mutant: `c in facts and c in assumptions`)
    env, (x, y) = make_env(9, 3)
    assert env.evaluate(R.ne(x, y)) is True
    assert _decide_counting(env, R.ne(x, y)) == (True, 0)
    assert _decide_counting(env, R.eq(x, y)) == (False, 0)


def test_an_equation_is_open_when_the_facts_bound_it_from_either_side():
    # step 5 on `==`: b <= a shows a - b >= 0, not a - b >= 1 (mutant: `0 - e` for `1 - e`)
    for hints, fact in (((9, 3), R.ge), ((3, 9), R.le)):
        env, (a, b) = make_env(*hints)
        assert env.evaluate(fact(a, b)) is True
        assert env.decide(R.eq(a, b)) is None
        assert env.decide(R.ne(a, b)) is None


def test_the_ranges_decide_an_expression_pinned_to_zero():
    # step 2 on its own (decide folds x // 20 first): [0, 0] decides == and != (mutant:
    # `False if b.lower == 0 == b.upper`)
    env = ShapeEnv()
    x = env.create_symbol(5, "x", ValueRange(2, 10)).expr
    q = floordiv(x, 20)
    assert decide_ranges(env, R.Rel(R.EQ, q)) is True
    assert decide_ranges(env, R.Rel(R.NE, q)) is False
    assert decide_ranges(env, R.Rel(R.LE, q)) is True


def test_a_base_point_that_divides_by_zero_is_no_witness():
    # without examples the base point is the lower corner (2, 0), where x // y fails: no
    # witness there, so Z3 decides (y != 0 wherever x // y is defined) (mutant: a
    # ZeroDivisionError at the base point taken as a witness)
    env = ShapeEnv()
    x = env.create_symbol(None, "x", ValueRange(2, int_oo)).expr
    y = env.create_symbol(None, "y", ValueRange(0, int_oo)).expr
    assert env.decide(R.le(floordiv(x, y), x)) is True


def test_holds_reads_and_as_all_and_or_as_any():
    # the point test of steps 6 (mutant: `c.op is not "and"` swapped them)
    env, (x,) = make_env(4)
    inside = [R.ge(x, 2), R.le(x, 3)]
    point = {x.as_symbol(): 5}
    assert holds(R.combine("and", inside), point) is False
    assert holds(R.combine("or", inside), point) is True
    assert holds(R.combine("and", inside), {x.as_symbol(): 3}) is True


def test_a_fact_two_apart_settles_an_equation_without_a_solver():
    # step 5 on `==`: a + 2 <= b shows a - b <= -1, so a == b is False and a != b True,
    # either side of the `or` being enough (mutant: `and`, which left it to Z3)
    env, (a, b) = make_env(3, 9)
    assert env.evaluate(R.le(a + 2, b)) is True
    assert _decide_counting(env, R.eq(a, b)) == (False, 0)
    assert _decide_counting(env, R.ne(b, a)) == (True, 0)
