"""Decided comparisons on ``symbolic_shape`` sizes settle without a solver call when a sum
of constraints or a point of the constraints shows the answer (counted, never timed)."""
import pytest

import symshape as ss


def _queries(syms):
    return syms[0].env.z3_queries


@pytest.mark.parametrize("names, constraints, query, answer", [
    ("a, b", ("a >= b + 2", "b <= 64"), lambda a, b: a >= b, True),
    ("a, b", ("a >= b + 2", "b <= 64"), lambda a, b: a < b, False),
    ("a, b, c", ("a <= b", "b <= c"), lambda a, b, c: a <= c, True),
    ("a, b, c", ("a <= b", "b <= c"), lambda a, b, c: a > c, False),
    ("a, b, c", ("c == a + b",), lambda a, b, c: c >= a + 1, True),
    ("t, m", ("t + 1 <= m",), lambda t, m: t < m, True),
])
def test_a_comparison_implied_by_a_sum_of_constraints_needs_no_solver(names, constraints,
                                                                     query, answer):
    syms = ss.symbolic_shape(names, constraints=constraints)
    before = _queries(syms)
    assert bool(query(*syms)) is answer
    assert _queries(syms) == before


@pytest.mark.parametrize("names, constraints, query", [
    ("a, b", ("a >= b + 2", "b <= 64"), lambda a, b: a >= 5),
    ("a, b, c", ("a <= b", "b <= c"), lambda a, b, c: a + 1 <= c),
    ("n, m", ("n * m <= 64",), lambda n, m: n >= m),
])
def test_an_open_comparison_is_reported_without_a_solver_call(names, constraints, query):
    syms = ss.symbolic_shape(names, constraints=constraints)
    before = _queries(syms)
    with pytest.raises(ss.UserError, match="cannot decide"):
        bool(query(*syms))
    assert _queries(syms) == before


def test_shape_sizes_compare_like_the_symbols_they_are():
    # sizes of ss.symbolic_shape-shaped arrays: x.shape[0] + 1 <= y.shape[0]
    n, m = ss.symbolic_shape("n, m", constraints=("n + 1 <= m", "m <= 100"))
    x_shape, y_shape = (n, 4), (m, 4)
    assert x_shape[0] + 1 <= y_shape[0]
    assert not (x_shape[0] >= y_shape[0])
    assert x_shape[0] <= 99
    with pytest.raises(ss.UserError, match="cannot decide"):
        bool(x_shape[0] <= 50)
