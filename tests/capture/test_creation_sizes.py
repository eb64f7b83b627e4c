"""Creation sizes must be non-negative (issue 30): ``np.ones((n - 4, 2))``, ``np.full``,
``np.eye``, ``np.linspace``, ``*_like(shape=)`` and ``np.pad`` widths computed from sizes
add the guard eager NumPy's ValueError implies (``n >= 4``), or a violation with a fix for a
spec that allows less, and equal eager NumPy on every admitted size."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim

A = Dim.AUTO

CASES = {
    "zeros": lambda x, k: np.zeros((x.shape[0] - k, 2)),
    "ones": lambda x, k: np.ones((x.shape[0] - k, 2)),
    "empty": lambda x, k: np.empty((2, x.shape[0] - k)).shape,
    "full": lambda x, k: np.full((x.shape[0] - k,), 2.5),
    "eye": lambda x, k: np.eye(x.shape[0] - k),
    "eye_m": lambda x, k: np.eye(3, x.shape[0] - k),
    "identity": lambda x, k: np.identity(x.shape[0] - k),
    "linspace": lambda x, k: np.linspace(0, 1, x.shape[0] - k),
    "zeros_like": lambda x, k: np.zeros_like(x, shape=(x.shape[0] - k,)),
    "full_like": lambda x, k: np.full_like(x, 3.0, shape=(x.shape[0] - k, 1)),
    "pad": lambda x, k: np.pad(x, ((x.shape[0] - k, 1), (0, 0))),
}


def _eager_ok(f, x, k):
    try:
        f(x, k)
        return True
    except ValueError:
        return False


@settings(max_examples=30)
@given(name=st.sampled_from(sorted(CASES)), k=st.integers(0, 6))
def test_contract_admits_exactly_what_eager_accepts(name, k):
    f = CASES[name]
    example = np.ones((k + 3, 2))
    ep = ss.export(lambda x: f(x, k), (example,), dynamic_shapes={"x": (A, None)})
    for n in range(2, k + 6):
        x = np.arange(2.0 * n).reshape(n, 2)
        if _eager_ok(f, x, k):
            got, want = ep.module()(x), f(x, k)
            if isinstance(want, tuple):
                assert got == want
            else:
                assert got.dtype == want.dtype and got.shape == want.shape
                if name != "empty":
                    np.testing.assert_array_equal(got, want)
        else:
            with pytest.raises(ss.UserError):
                ep.module()(x)


@pytest.mark.parametrize("name", ["ones", "full", "eye", "linspace"])
def test_named_dim_allowing_less_is_a_violation_with_a_fix(name):
    f = CASES[name]
    n = Dim("n", min=2)
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(lambda x: f(x, 4), (np.ones((7, 2)),), dynamic_shapes={"x": (n, None)})
    assert "n = Dim('n', min=4)" in str(e.value)
    assert "s0" not in str(e.value)


def test_tri_of_a_negative_size_is_empty_as_in_numpy():
    def f(x):
        return np.tri(x.shape[0] - 4)
    ep = ss.export(f, (np.ones((7, 2)),), dynamic_shapes={"x": (A, None)})
    for n in (2, 4, 9):
        x = np.ones((n, 2))
        np.testing.assert_array_equal(ep.module()(x), f(x))


def test_random_draw_sizes_must_be_non_negative():
    def f(x):
        return np.random.normal(size=(x.shape[0] - 4, 2))
    ep = ss.export(f, (np.ones((7, 2)),), dynamic_shapes={"x": (A, None)})
    assert ep.module()(np.ones((4, 2))).shape == (0, 2)
    with pytest.raises(ss.UserError):
        ep.module()(np.ones((3, 2)))
