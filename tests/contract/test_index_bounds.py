"""The contract never admits a shape on which eager NumPy raises: constant index lists carry
bounds like scalar indices, and reductions without identity need a non-empty extent.  The
fuzzer draws constant indices and checks every size against both the contract and eager."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim

A = Dim.AUTO


def lower_bound(ep, path="x", axis=0):
    s = ep.input_shapes[path][axis]
    for k, v in ep.range_constraints.items():
        if k == s:
            return v.lower
    raise AssertionError("no range for %s" % s)


def set_rows(y, v):
    y[[0, 4]] = v
    return y


@pytest.mark.parametrize("f,lo", [
    (lambda x: x[[0, 4]], 5),
    (lambda x: np.take(x, [0, 4], 0), 5),
    (lambda x: x.T[:, [1, 5]], 6),
    (lambda x: x[[-3, 1]], 3),
    (lambda x: x[np.array([[2], [3]])], 4),
    (lambda x: x[2:].max(), 3),
    (lambda x: x[2:].argmin(axis=0), 3),
])
def test_constant_indices_and_identity_free_reductions_bound_the_axis(f, lo):
    ep = ss.export(f, (np.ones((6, 6)),), dynamic_shapes={"x": (A, A)})
    assert lower_bound(ep) == lo
    with pytest.raises(ss.UserError):
        ep.module()(np.ones((lo - 1, 6)))
    np.testing.assert_array_equal(ep.module()(np.ones((lo, 6))), f(np.ones((lo, 6))))


def test_pad_reading_an_axis_needs_it_non_empty():
    # the guard is `Max(0, s0 - 3) >= 1`: enforced by the input check (its range in
    # range_constraints is not yet tightened to [4, int_oo])
    f = lambda x: np.pad(x[3:], 1, mode="edge")  # noqa: E731
    ep = ss.export(f, (np.ones((6, 6)),), dynamic_shapes={"x": (A, A)})
    lo = 4
    with pytest.raises(ss.UserError):
        ep.module()(np.ones((lo - 1, 6)))
    np.testing.assert_array_equal(ep.module()(np.ones((lo, 6))), f(np.ones((lo, 6))))


def test_index_put_with_constant_rows():
    ep = ss.export(set_rows, (np.ones(6), np.ones(2)), dynamic_shapes={"y": (A,), "v": None})
    assert lower_bound(ep, "y") == 5


def test_explicit_min_zero_is_a_violation_for_max():
    with pytest.raises(ss.ConstraintViolationError, match=r"n = Dim\('n', min=1\)"):
        ss.export(lambda x: x.max(), (np.ones(5),), dynamic_shapes={"x": (Dim("n", min=0),)})


@settings(deadline=None)
@given(st.lists(st.integers(-9, 9), min_size=1, max_size=4), st.sampled_from(["get", "take"]))
def test_random_constant_indices_against_the_contract(index, how):
    def f(x):
        return x[index] if how == "get" else np.take(x, index, axis=0)
    example = np.arange(10.0)
    ep = ss.export(f, (example,), dynamic_shapes={"x": (A,)})
    for n in range(2, 12):
        x = np.arange(float(n))
        try:
            want = f(x)
        except IndexError:
            with pytest.raises(ss.UserError):
                ep.module()(x)
            continue
        np.testing.assert_array_equal(ep.module()(x), want)
