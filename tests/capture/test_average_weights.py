"""np.average with weights as NumPy takes them (found reading ``_average`` for every rank
and axis, proofs/stats_axes_every.py): weights along a tuple of axes, in the order given,
were refused (only an int axis and 1-D weights were taken), an axis out of range with 1-D
weights crashed with an IndexError, and an empty averaged extent, where the weights sum to
zero and NumPy raises, was admitted."""
import numpy as np
import pytest

import symshape as ss
from symshape.capture.export import trace_program

A = ss.Dim.AUTO


def _trace(f, x, w):
    return trace_program(f, (x, w), None, {"x": (A,) * x.ndim, "w": (A,) * w.ndim})


@pytest.mark.parametrize("axis, wshape", [((1,), (3,)), ((1, 0), (3, 2)), (1, (3,)),
                                          ((-1, 0), (3, 2))])
def test_weights_along_the_axes_in_the_order_given(axis, wshape):
    x, w = np.arange(6.0).reshape(2, 3) + 1, np.arange(np.prod(wshape)).reshape(wshape) + 1.0
    tr = _trace(lambda x, w: np.average(x, axis=axis, weights=w), x, w)
    np.testing.assert_allclose(tr.program.module()(x, w), np.average(x, axis=axis, weights=w))


def test_an_axis_out_of_range_with_weights_is_a_user_error():
    x, w = np.ones((2, 3)), np.ones(3)
    with pytest.raises(ss.UserError, match="axis 5 is out of bounds"):
        _trace(lambda x, w: np.average(x, axis=5, weights=w), x, w)


def test_weights_of_other_sizes_are_refused_in_the_users_terms():
    x, w = np.ones((2, 3)), np.ones(2)
    with pytest.raises(ValueError):
        np.average(x, axis=1, weights=w)
    with pytest.raises(ss.UserError, match=r"must have the array's sizes along axis=1"):
        _trace(lambda x, w: np.average(x, axis=1, weights=w), x, w)


def test_an_empty_averaged_extent_with_weights_is_refused():
    with pytest.raises(ZeroDivisionError):
        np.average(np.ones((2, 0)), axis=1, weights=np.ones(0))
    tr = trace_program(lambda x, w: np.average(x, axis=1, weights=w),
                       (np.ones((2, 3)), np.ones(3)), None,
                       {"x": (A, ss.Dim("n", min=0)), "w": (ss.Dim("m", min=0),)})
    assert any("guard `n >= 1`" in v for v in tr.report.violations), tr.report.violations
