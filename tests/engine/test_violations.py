"""ConstraintViolationError: every kind of violation, in the user's names, with fixes that
round-trip (applying them all makes export succeed)."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim


def violation(f, args, spec):
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(f, args, dynamic_shapes=spec)
    err = e.value
    fixed = spec
    for fix in err.suggested_fixes:
        fixed = fix.apply(fixed)
    ss.export(f, args, dynamic_shapes=fixed)          # the fixes round-trip
    text = str(err)
    assert "s0" not in text and "IntInfinity" not in text and " oo" not in text
    return err, [str(x) for x in err.suggested_fixes], fixed


def test_multivariate_guard_is_reported():
    nx, ny = ss.dims("nx", "ny")

    def f(x, y):
        if x.shape[0] + y.shape[0] > 10:
            return np.concatenate([x, y])
        return x

    err, fixes, _ = violation(f, (np.ones(6), np.ones(7)), {"x": (nx,), "y": (ny,)})
    # no Dim states the relation, but ranges around the example imply it
    assert "`nx + ny >= 11`" in str(err) and "no Dim states" in str(err)
    assert fixes == ["nx = Dim('nx', min=4)", "ny = Dim('ny', min=7)"]


def test_hole_in_the_middle_gets_no_invented_bound():
    def g(x):
        return x * 2 if x.shape[0] != 16 else x

    err, fixes, _ = violation(g, (np.ones(8),), {"x": (Dim("d"),)})
    assert "d must not be 16" in str(err) and "minus {16}" in str(err)
    assert not any("min=" in f or "max=" in f for f in fixes)


def test_hole_at_the_edge_moves_the_bound():
    def g(x):
        return x * 2 if x.shape[0] != 2 else x

    err, fixes, _ = violation(g, (np.ones(8),), {"x": (Dim("d"),)})
    assert fixes == ["d = Dim('d', min=3)"]


def test_static_conflict_is_named():
    err, fixes, fixed = violation(lambda x, y: x + y, (np.ones(4), np.ones(4)),
                                  {"x": (Dim.STATIC,), "y": (Dim("dy"),)})
    assert "it must equal x.shape[0], which is marked static" in str(err)
    assert fixes == ["dy = 4"] and fixed["y"] == (4,)


def test_offset_relation_fix():
    dx, dy = ss.dims("dx", "dy")
    err, fixes, _ = violation(lambda x, y: x[1:] + y, (np.ones(5), np.ones(4)),
                              {"x": (dx,), "y": (dy,)})
    assert fixes == ["dx = dy + 1"]


def test_nonlinear_relation_says_no_dim_can_express_it():
    dx, dy, dz = ss.dims("dx", "dy", "dz")
    err, fixes, _ = violation(lambda x, z: x.reshape(-1) + z, (np.ones((2, 3)), np.ones(6)),
                              {"x": (dx, dy), "z": (dz,)})
    assert "dz must equal dx*dy" in str(err) and "no Dim or derived Dim" in str(err)
    assert fixes == ["dz = Dim.AUTO"]


def test_divisibility_on_named_dim_with_bounds():
    dx = Dim("dx", min=4, max=64)
    err, fixes, _ = violation(lambda x: x.reshape(4, -1), (np.ones(16),), {"x": (dx,)})
    assert fixes == ["_dx = Dim('_dx', min=1, max=16)", "dx = 4*_dx"]


def test_fix_objects_apply_to_tuple_specs_and_nested():
    d0, d1 = ss.dims("d0", "d1")
    err, fixes, fixed = violation(lambda a, b: a[0] + b, ((np.ones(3),), np.ones(3)),
                                  (((d0,),), (d1,)))
    assert fixes == ["d1 = d0"]
    assert fixed[1][0] is fixed[0][0][0]


def test_dynamic_marker_fix_names_the_entry_in_tuple_form():
    W = np.ones((5, 3))
    err, fixes, fixed = violation(lambda w: w @ W, (np.ones((6, 5)),),
                                  ((Dim.AUTO, Dim.DYNAMIC),))
    assert fixes == ["dynamic_shapes[0][1] = Dim.STATIC"]


def test_example_size_one_for_dynamic_is_a_user_error():
    with pytest.raises(ss.UserError, match="marked Dim.DYNAMIC, but its example size is 1"):
        ss.export(lambda x: x * 2, (np.ones(1),), dynamic_shapes={"x": (Dim.DYNAMIC,)})


def test_min_zero_is_honoured():
    ep = ss.export(lambda x: x[1:] * 2, (np.ones(4),), dynamic_shapes={"x": (Dim("n", min=0),)})
    assert {str(k): str(v) for k, v in ep.range_constraints.items()} == {"s0": "VR[0, int_oo]"}
    assert ep.module()(np.ones(0)).shape == (0,)


def test_divisibility_on_a_middle_axis_with_a_symbolic_batch():
    b, L = Dim("b"), Dim("L")
    for f in (lambda x: x.reshape(x.shape[0], -1, 4, 3),
              lambda x: x.reshape(x.shape[0], x.shape[1] // 4, 4, 3)):
        err, fixes, _ = violation(f, (np.ones((2, 16, 3)),), {"x": (b, L, None)})
        assert "guard `L % 4 == 0`" in str(err)
        assert fixes == ["_L = Dim('_L', min=1)", "L = 4*_L"]


def test_constant_indexed_by_a_size_through_asarray_like():
    POS = np.arange(100.0)

    def g(x):
        return x + np.asarray(POS, like=x)[:x.shape[0]]

    ep = ss.export(g, (np.ones(5),), dynamic_shapes={"x": (Dim.AUTO,)})
    assert str(ep.input_shapes["x"][0]) == "s0"
    np.testing.assert_array_equal(ep.module()(np.ones(9)), g(np.ones(9)))
