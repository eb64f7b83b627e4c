"""A size meeting a narrow integer array overflows as in eager NumPy (issue 30):
``x.astype(np.int8) * n`` raises OverflowError eagerly for n > 127, so the contract admits
only sizes that fit (a guard every backend checks), never a silent wrap-around."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim

A = Dim.AUTO


@settings(max_examples=20)
@given(dtype=st.sampled_from([np.int8, np.uint8, np.int16, np.uint16]),
       offset=st.integers(-5, 5), op=st.sampled_from(["mul", "add", "sub"]))
def test_contract_admits_exactly_what_eager_accepts(dtype, offset, op):
    def f(x):
        n = x.shape[0] + offset
        y = x.astype(dtype)
        return y * n if op == "mul" else (y + n if op == "add" else y - n)
    example = np.ones((10, 2))
    try:
        f(example)
    except OverflowError:
        with pytest.raises(ss.UserError, match="out of bounds"):
            ss.export(f, (example,), dynamic_shapes={"x": (A, None)})
        return
    ep = ss.export(f, (example,), dynamic_shapes={"x": (A, None)})
    info = np.iinfo(dtype)
    for n in sorted({2, 3, 9, info.max - offset, info.max - offset + 1, 300, 70000}):
        if n < 2:
            continue
        x = np.ones((n, 2))
        try:
            want = f(x)
        except OverflowError:
            with pytest.raises(ss.UserError):
                ep.module()(x)
            continue
        got = ep.module()(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_named_dim_beyond_the_dtype_is_a_violation_with_a_fix():
    def f(x):
        return x.astype(np.int8) * x.shape[0]
    with pytest.raises(ss.ConstraintViolationError, match=r"n = Dim\('n', max=127\)"):
        ss.export(f, (np.ones((5, 2)),), dynamic_shapes={"x": (Dim("n", max=1000), None)})


def test_wide_integers_add_no_bound():
    ep = ss.export(lambda x: x.astype(np.int64) * x.shape[0], (np.ones((5, 2)),),
                   dynamic_shapes={"x": (A, None)})
    assert "int_oo" in str(ep.range_constraints)
