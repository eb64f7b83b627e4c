"""The contract's one Z3 meaning (``symshape.contract.meaning.admitted``) and the views
validated against it (``symshape.contract.validate``): the meaning admits exactly the sizes
the constraint set describes (brute force), a printed range whose end is not attained or
that leaves an admitted input outside is an ``InternalError``, and so is a published sympy
value that does not evaluate to the engine's size on the contract's corner points."""
import itertools

import numpy as np
import pytest
import sympy
import z3

import symshape as ss
from symshape import Dim
from symshape.algebra import relations as R
from symshape.contract import exact_ranges, published
from symshape.contract.constraint_set import ConstraintSet, InputDesc
from symshape.contract.meaning import admitted
from symshape.contract.sympy_form import to_sympy
from symshape.contract.validate import validate_published, validate_ranges
from symshape.errors import InternalError
from symshape.algebra.expr import Sym, evaluate
from symshape.algebra.infinity import INT_OO, NEG_INT_OO
from symshape.algebra.ranges import ValueRange

s0, s1 = Sym(0), Sym(1)
n, m = s0.expr, s1.expr


def _cs(facts=(), r0=ValueRange(2, 10), r1=ValueRange(1, 6)):
    """x: (n,), y: (2*n + 1, m), z: (n + m,); ``facts`` over n and m."""
    return ConstraintSet([InputDesc("x", "x", dims=(n,), dtype=np.float64),
                          InputDesc("y", "y", dims=(2 * n + 1, m), dtype=np.float64),
                          InputDesc("z", "z", dims=(n + m,), dtype=np.float64)],
                         {s0: r0, s1: r1}, list(facts), {}, {})


def test_meaning_admits_exactly_the_sizes_of_the_constraint_set():
    cs = _cs([R.ne(n, 5), R.le(n + m, 12)])
    meaning = admitted(cs)
    names = ["x.shape[0]", "y.shape[0]", "y.shape[1]", "z.shape[0]"]
    formula = meaning.formula()
    for x, y0, y1, z in itertools.product(range(0, 13), range(3, 24, 2), range(0, 8),
                                          range(2, 15, 3)):
        sizes = dict(zip(names, (x, y0, y1, z)))
        want = (2 <= x <= 10 and 1 <= y1 <= 6 and x != 5 and x + y1 <= 12 and
                y0 == 2 * x + 1 and z == x + y1)
        solver = z3.Solver()
        solver.add(formula, *[meaning.size(k) == v for k, v in sizes.items()])
        assert (solver.check() == z3.sat) == want, sizes


def test_printed_ranges_are_proven_attained():
    cs = _cs([R.le(n + m, 8)])
    ranges = cs.range_constraints()
    assert ranges[n + m] == ValueRange(3, 8)
    points = validate_ranges(cs, ranges)
    # the witnesses are admitted inputs reaching the ends
    assert any(evaluate(n + m, p) == 3 for p in points)
    assert any(evaluate(n + m, p) == 8 for p in points)
    assert all(p[s0] + p[s1] <= 8 for p in points if s0 in p and s1 in p)


@pytest.mark.parametrize("wrong, message", [
    (ValueRange(3, 7), "admits inputs outside it"),            # narrower: 8 is admitted
    (ValueRange(3, 9), "no admitted input reaches 9"),          # wider: 9 is not reached
    (ValueRange(2, 8), "no admitted input reaches 2"),
    (ValueRange(3, INT_OO), "no admitted input reaches int_oo"),              # bounded above
])
def test_a_printed_range_that_is_not_exact_is_an_internal_error(wrong, message):
    cs = _cs([R.le(n + m, 8)])
    with pytest.raises(InternalError, match=message):
        validate_ranges(cs, {n + m: wrong})


def test_an_infinite_end_is_shown_unbounded():
    cs = _cs(r0=ValueRange(2, INT_OO), r1=ValueRange(NEG_INT_OO, 4))
    # n - m is at least 2 - 4 = -2 and unbounded above
    validate_ranges(cs, {n - m: ValueRange(-2, INT_OO)})
    with pytest.raises(InternalError, match="outside"):
        validate_ranges(cs, {n - m: ValueRange(-2, 10 ** 6)})
    validate_ranges(cs, {m: ValueRange(NEG_INT_OO, 4)})      # unbounded below
    with pytest.raises(InternalError, match="outside"):
        validate_ranges(cs, {m: ValueRange(-5, 4)})
    with pytest.raises(InternalError, match="no admitted input reaches -int_oo"):
        validate_ranges(_cs(), {m: ValueRange(NEG_INT_OO, 6)})


def test_a_published_value_that_evaluates_wrongly_is_an_internal_error():
    cs = _cs()
    e = (n % 5) * 2
    validate_published(cs, {e: to_sympy(e, cs.ranges)}, [])
    wrong = sympy.Mod(to_sympy(n, cs.ranges), 5) * 2 + 1
    with pytest.raises(InternalError, match="does not evaluate to it"):
        validate_published(cs, {e: wrong}, [])
    with pytest.raises(InternalError, match="published as"):
        validate_published(cs, {3: 4}, [])


def test_published_views_are_validated_on_every_export(monkeypatch):
    """``ep.range_constraints`` proves what it prints (validation is on in the tests): an
    exact-range service that widened a range is caught."""
    def f(x, y):
        k = x.shape[0]
        return y.reshape(k - 3, k - 3)
    ep = ss.export(f, (np.ones(6), np.ones(9)), dynamic_shapes={"x": (Dim.AUTO,),
                                                                  "y": (Dim.AUTO,)})
    assert list(ep.range_constraints.values())[1] == ValueRange(4, INT_OO)
    assert ep.constraints.__dict__["_corner_points"]            # the witnesses found
    ep2 = ss.export(f, (np.ones(6), np.ones(9)), dynamic_shapes={"x": (Dim.AUTO,),
                                                                   "y": (Dim.AUTO,)})
    real = exact_ranges.exact_range

    def wider(cs, e):
        got = real(cs, e)
        return ValueRange(got.lower - 1, got.upper)
    monkeypatch.setattr(exact_ranges, "exact_range", wider)
    with pytest.raises(InternalError, match="no admitted input reaches"):
        published.range_constraints(ep2.constraints)
