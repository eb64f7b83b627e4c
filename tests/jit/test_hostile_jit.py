"""Hostile checks on ss.compile: calls that change what a parameter holds (an int, then
another int, then an array) still give eager NumPy's results."""
import numpy as np
import pytest

import symshape as ss


def layer(params, x, k=2):
    return params["w"] @ params["b"][0] + x * k


PARAMS = {"w": np.ones((3, 4)), "b": [np.arange(20.0).reshape(4, 5)]}


@pytest.mark.parametrize("order", [[2, 3, "array"], ["array", 2, 3], [2, "array", 4, "array"]])
def test_a_parameter_that_is_an_int_then_an_array(order):
    jit = ss.compile(layer)
    for i, k in enumerate(order):
        k = np.full(5, 1.5 + i) if k == "array" else k
        x = np.linspace(0, 1, 5)
        out = jit(PARAMS, x, k)
        ref = layer(PARAMS, x, k)
        assert out.dtype == ref.dtype
        np.testing.assert_allclose(out, ref)
