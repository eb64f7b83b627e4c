"""ss.compile guards on what the compiled code read by name: rebinding a global or a
closure variable recompiles with a reason naming it; an in-place change is seen at once."""
import numpy as np

import symshape as ss

W = np.ones((3, 2))
SCALE = 2.0


def uses_globals(x):
    return x @ W * SCALE


def test_rebinding_a_global_recompiles_and_names_it():
    global W, SCALE
    saved = W, SCALE
    try:
        cf = ss.compile(uses_globals)
        x = np.ones((4, 3))
        np.testing.assert_array_equal(cf(x), uses_globals(x))
        W = np.full((3, 2), 3.0)
        np.testing.assert_array_equal(cf(x), uses_globals(x))
        SCALE = 5
        np.testing.assert_array_equal(cf(x), uses_globals(x))
        # a state array is read through its name on every call: rebinding W to an array of
        # the same shape and dtype needs no recompile (docs/compile.md, guards); the scalar
        # SCALE is guarded by value
        assert cf.recompile_reasons == ["SCALE changed: 2.0 -> 5"]
        W[:] = -1                       # in place: the same object, read by reference
        np.testing.assert_array_equal(cf(x), uses_globals(x))
        assert len(cf.variants) == 2
    finally:
        W, SCALE = saved


def test_rebinding_a_closure_variable_recompiles():
    scale = 3.0
    table = np.arange(10.0)

    def f(ids):
        return table[ids] * scale

    cf = ss.compile(f)
    ids = np.array([1, 2, 3])
    np.testing.assert_array_equal(cf(ids), f(ids))
    scale = 4.0                          # noqa: F841 (read through the closure)
    np.testing.assert_array_equal(cf(ids), f(ids))
    # a Python scalar read through a closure is guarded by value (docs/compile.md, guards)
    assert cf.recompile_reasons == ["scale changed: 3.0 -> 4.0"]
