"""A reduction over an axis named twice is refused by the rule itself, as NumPy refuses it
(found by proofs/stats_axes_every.py: ``reduced_shape`` put the axes in a set and reduced
the axis once; only the eager run on the example inputs stood between it and an export)."""
import numpy as np
import pytest

import symshape as ss
from symshape.capture.ops import npcall
from symshape.capture.export import trace_program

A = ss.Dim.AUTO


@pytest.mark.parametrize("f", [np.nansum, np.nanmax, np.nanmean])
@pytest.mark.parametrize("axis", [(0, 0), (1, -1)])
def test_a_nan_reduction_refuses_an_axis_named_twice(f, axis):
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        f(np.ones((2, 3)), axis=axis)
    with pytest.raises(ss.UserError, match=r"names an axis twice .*name each axis once"):
        trace_program(lambda x: f(x, axis=axis), (np.ones((2, 3)),), None, {"x": (A, A)})


def test_reduced_shape_itself_refuses_the_repeat():
    class X:
        ndim, shape = 2, (4, 5)
    with pytest.raises(ss.UserError, match=r"np\.nansum: axis=\(1, -1\) names an axis twice"):
        npcall.reduced_shape(X(), (1, -1), False, "np.nansum", None)
    assert npcall.reduced_shape(X(), (1, -2), True, "np.nansum", None) == (1, 1)
    assert npcall.reduced_shape(X(), (-1,), False, "np.nansum", None) == (4,)


@pytest.mark.parametrize("f", [lambda x: np.sum(x, axis=1.0), lambda x: np.argmax(x, axis=1.5),
                               lambda x: np.expand_dims(x, 1.0), lambda x: np.diff(x, axis=0.0)])
def test_a_float_axis_is_refused_as_numpy_refuses_it(f):
    # norm_axis took it through int(), truncating (found with proofs/axisargs.py's reading
    # of norm_axis: NumPy takes an axis through operator.index)
    with pytest.raises(TypeError):
        f(np.ones((2, 3)))
    with pytest.raises(ss.UserError, match=r"axis must be an int, got 1\.0|got 1\.5|got 0\.0"):
        trace_program(f, (np.ones((2, 3)),), None, {"x": (A, A)})
