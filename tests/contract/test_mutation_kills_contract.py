"""Tests that kill the surviving mutants of the contract's check writer (``guards._bind``:
how a root read off an axis with a negative coefficient is named; ``check_ir``: the range
of such an axis), and the bugs they pointed at: an input size ``10 - s1`` or ``-s1`` was
reported as ``outside the range [8, 2]`` / ``[-int_oo, 2]`` (the ends of the root's range
mapped through a negative coefficient without swapping) and named ``(x.shape[0] - 10)/-1``
(now ``(10 - x.shape[0])``, bracketed like every sum that names a root)."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim


def _sum_is_ten(x, y):
    ss.check(x.shape[0] + y.shape[0] == 10)
    return np.concatenate([x, y])


def _negated(x, k):
    ss.check(x.shape[0] + k == 0)
    return x * 2


@pytest.fixture(scope="module")
def sum_is_ten():
    # x (7) is the larger example: the solver keeps y's size s1 and x.shape[0] is 10 - s1,
    # so s1 is read off x.shape[0] with coefficient -1
    ep = ss.export(_sum_is_ten, (np.ones(7), np.ones(3)),
                   dynamic_shapes={"x": (Dim.AUTO,), "y": (Dim.AUTO,)})
    assert str(ep.input_shapes["x"][0]) == "10 - s1"
    return ep


@pytest.fixture(scope="module")
def negated():
    ep = ss.export(_negated, (np.ones(3), -3),
                   dynamic_shapes={"x": (Dim.AUTO,), "k": Dim.DYNAMIC})
    assert str(ep.input_shapes["x"][0]) == "-s1"
    return ep


def _message(fn, *args):
    with pytest.raises(ss.UserError) as e:
        fn(*args)
    return str(e.value)


@pytest.mark.parametrize("n", [1, 9, 12])
def test_an_axis_with_a_negative_coefficient_reports_its_own_range(sum_is_ten, n):
    m = _message(sum_is_ten.module(), np.ones(n), np.ones(1))
    assert m.startswith("x.shape[0] = %d is outside the range [2, 8]" % n)


def test_an_axis_minus_a_root_reports_its_own_range(negated):
    m = _message(negated.module(), np.ones(1), -1)
    assert m.startswith("x.shape[0] = 1 is outside the range [2, int_oo]")


def test_a_root_read_off_a_negative_coefficient_is_named_without_dividing_by_minus_one(
        sum_is_ten, negated):
    assert _message(sum_is_ten.module(), np.ones(7), np.ones(4)).startswith(
        "y.shape[0] must equal (10 - x.shape[0]) (= 3), got 4")
    assert _message(negated.module(), np.ones(4), -3).startswith(
        "k must equal (-x.shape[0]) (= -4), got -3")


@pytest.mark.parametrize("a, b", [(5, 5), (8, 2), (2, 8)])
def test_inside_the_range_the_negative_coefficient_contract_still_runs(sum_is_ten, a, b):
    out = sum_is_ten.module()(np.ones(a), np.ones(b))
    assert out.shape == (10,)
