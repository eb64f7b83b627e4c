"""An axis argument is an integer, as NumPy's ``operator.index`` requires: a float or a
string axis is refused while tracing (NumPy raises TypeError), not truncated or parsed
(found by proofs/axes_every.py's norm_axis proof over every axis argument)."""
import numpy as np
import pytest

import symshape as ss
from symshape.errors import UserError

CALLS = {
    "np.diagonal axis1=1.5": lambda x: np.diagonal(x, 0, 1.5, 0),
    "np.swapaxes 1.0": lambda x: np.swapaxes(x, 1.0, 0),
    "np.take axis='1'": lambda x: np.take(x, np.array([0]), axis="1"),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_non_integer_axis_is_refused_as_numpy_refuses_it(name):
    f = CALLS[name]
    x = np.ones((3, 4))
    with pytest.raises(TypeError):
        f(x)
    with pytest.raises(UserError, match="must be an int"):
        ss.export(f, (x,), dynamic_shapes={"x": (ss.Dim("a"), ss.Dim("b"))})


def test_integer_axes_of_every_spelling_are_admitted():
    x = np.ones((3, 4, 5))
    for f in (lambda x: np.diagonal(x, 0, np.int64(2), True),
              lambda x: np.swapaxes(x, np.int32(-1), 0)):
        ep = ss.export(f, (x,), dynamic_shapes={"x": (ss.Dim("a"), ss.Dim("b"), ss.Dim("c"))})
        assert ep.module()(x).shape == f(x).shape


@pytest.mark.parametrize("src, dst", [((0, 1), (2, 2)), ((0, -3), (1, 2))])
def test_np_moveaxis_refuses_a_repeated_axis_as_numpy_does(src, dst):
    x = np.ones((3, 4, 5))
    with pytest.raises(ValueError, match="repeated axis"):
        np.moveaxis(x, src, dst)
    with pytest.raises(UserError, match="repeated axis"):
        ss.export(lambda x: np.moveaxis(x, src, dst), (x,),
                  dynamic_shapes={"x": (ss.Dim("a"), ss.Dim("b"), ss.Dim("c"))})
