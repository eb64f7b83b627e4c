"""The library surface real code calls on arrays: lists of traced scalars and arrays into
NumPy functions, ``sum`` over a traced array, ``ndarray.flags`` / ``strides``,
``np.may_share_memory``, ``copy.copy`` / ``copy.deepcopy`` and ``np.unravel_index``."""
import copy

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import exports_as_eager


def _x(n):
    return (np.arange(n * 3, dtype=np.float64).reshape(n, 3) / 5.0 - 1.0,)


def _dynamic(f, sizes=(4, 6, 9)):
    return exports_as_eager(f, _x, sizes, {"x": {0: Dim.AUTO}})


def weight_penalty(x):
    weights = [x, x[:, :2] * 2, x.T]
    return np.sum([np.sum(W ** 2) for W in weights])


def mean_of_scalars(x):
    return np.mean([x.max(), x.min(), 0.5])


def nested_array(x):
    q0, q1 = x[0, 0], x[0, 1]
    return np.array([[1.0 - 2.0 * q1 * q1, 2.0 * q0 * q1], [q0, 1]])


def stack_list(x):
    return np.stack([x[:, 0], x[:, 1] * 2, np.zeros(x.shape[0])])


def sizes_in_list(x):
    return np.array([x.shape[0], x.shape[1], 2]) * x.sum()


def python_sum(x):
    pdf = np.exp(-x[:, 0] ** 2)
    return pdf / sum(pdf), sum(x), sum(x > 0)


def flags_and_strides(x):
    y = x * 2
    f = y.flags
    c = 1.0 if f["C_CONTIGUOUS"] and f.c_contiguous and not y.T.flags.c_contiguous else 0.0
    s0, s1 = y.strides
    # forc / fnc: NumPy's either-contiguous and Fortran-not-C flags
    return (y * c + s1 + y.T.flags.fortran + 2 * y.T.flags.fnc + 4 * y.flags.forc,
            np.zeros(s0 // y.itemsize))


def memory_questions(x):
    y = x + 1
    v = y[1:]
    a = np.may_share_memory(y, v)
    b = np.may_share_memory(x, y)
    c = np.shares_memory(y, y.reshape(-1))
    return y * (a + 2 * b + 4 * c)


def copies(x):
    a = copy.copy(x)
    b = copy.deepcopy({"w": x})["w"]
    a[0] = 0.0
    return a + b


def unravel(x):
    flat = np.argmin(x.reshape(x.shape[0], -1) ** 2, axis=1) + 3
    i, j = np.unravel_index(flat, (x.shape[0], 3))
    k, m = np.unravel_index(flat, (x.shape[0], 3), order="F")
    return i, j, k, m


@pytest.mark.parametrize("f", [weight_penalty, mean_of_scalars, nested_array, stack_list,
                               sizes_in_list, python_sum, flags_and_strides, memory_questions,
                               copies, unravel])
def test_surface_as_eager(f):
    _dynamic(f)


def test_unravel_index_out_of_bounds_raises_at_run_time():
    def f(x):
        return np.unravel_index(np.argmax(x, axis=1) + x.shape[0] * 3, (x.shape[0], 3))

    ep = ss.export(f, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})
    with pytest.raises(ValueError):
        f(*_x(5))
    with pytest.raises(ValueError, match="out of bounds"):
        ep.module()(*_x(5))


def test_flags_of_a_slice_view_is_refused():
    def f(x):
        return x * x[:, 1:].flags.c_contiguous

    with pytest.raises(ss.UserError, match="flags of a view"):
        ss.export(f, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})


def test_masked_arrays_are_refused_by_name():
    def f(x):
        return np.ma.atleast_2d(x) * 2

    with pytest.raises(ss.UserError, match=r"numpy\.ma \(masked arrays\) cannot be traced "
                                           r"at .*test_library_surface\.py:%d"
                       % (f.__code__.co_firstlineno + 1)) as e:
        ss.export(f, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})
    assert "TracedArray" not in str(e.value) and "np.ma.filled" in str(e.value)


def test_a_traced_value_stored_into_a_plain_array_is_a_user_error():
    # NumPy's own error is "setting an array element with a sequence" (ahrs' am2q)
    def f(x):
        q = np.array([1.0, 0.0])
        q[0] = x.sum()
        return q

    with pytest.raises(ss.UserError, match=r"written into a plain NumPy array at "
                                           r".*test_library_surface\.py:%d.*np\.zeros"
                       % (f.__code__.co_firstlineno + 2)):
        ss.export(f, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})

    def g(x):
        raise ValueError("the user's own error")

    with pytest.raises(ValueError, match="the user's own error"):
        ss.export(g, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})


def test_compiled_code_rejecting_a_traced_array_is_a_user_error():
    # compiled code raising a TypeError that does not name the traced array (as Cython's
    # "No matching signature found" does)
    def f(x):
        return x * isinstance(1, x)

    with pytest.raises(ss.UserError, match="cannot take one.*isinstance"):
        ss.export(f, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})


def test_a_type_error_the_program_raises_stays_its_own():
    def f(x):
        if x.ndim != 3:
            raise TypeError("x must be 3-D")
        return x

    with pytest.raises(TypeError, match="x must be 3-D"):
        ss.export(f, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})
