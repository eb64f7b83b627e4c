"""Linear algebra and signal functions with symbolic sizes (issue 30): eig / eigvals
(the example's dtype), lstsq, matrix_rank, cond, tensorsolve, tensorinv, multi_dot, vecdot, kron,
vdot, diagflat, diag_indices_from, vander, named-tuple fields; window functions and
fftfreq / rfftfreq of a symbolic n, fftshift, correlate, ediff1d, trim_zeros, the poly*
family, geomspace / logspace and i0; equal to eager NumPy on several sizes."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from eager_compare import same
from symshape import Dim

A = Dim.AUTO


def _data(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape)
    if len(shape) == 2 and shape[0] == shape[1]:
        x = x + 4 * np.eye(shape[0])
    return x


def check(f, shapes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = ss.export(f, (_data(shapes[0], 0),), dynamic_shapes={"x": (A,) * len(shapes[0])})
        assert all(not isinstance(s, int) for s in ep.graph.inputs[0].shape)
        for i, shape in enumerate(shapes):
            x = _data(shape, i + 1)
            same(ep.module()(x), f(x))
    return ep


SQUARE = [(4, 4), (6, 6), (3, 3), (9, 9)]
TALL = [(6, 3), (9, 4), (5, 5), (12, 2)]


# sizes whose matrices (_data) have complex eigenvalues, as the example's do
COMPLEX_EIG = [(4, 4), (6, 6), (9, 9)]


def test_eig_takes_the_examples_dtype_and_equals_eager():
    # the example's eigenvalues are complex: complex results, as eager NumPy's
    # (tests/capture/test_eig_dtype.py: real ones, and inputs of the other kind)
    ep = check(lambda x: np.linalg.eig(x), COMPLEX_EIG)
    assert all(o.dtype == np.complex128 for o in ep.graph.nodes if o.op == "getitem")
    check(lambda x: np.linalg.eigvals(x), COMPLEX_EIG)
    check(lambda x: np.linalg.eigvals(x.astype(np.float32)), COMPLEX_EIG)


def test_named_tuple_fields():
    def f(x):
        return (np.linalg.eig(x).eigenvalues, np.linalg.eigh(x).eigenvectors,
                np.linalg.svd(x).S, np.linalg.svd(x, full_matrices=False).Vh,
                np.linalg.qr(x).R, np.linalg.slogdet(x).logabsdet, np.linalg.slogdet(x).sign)
    check(f, COMPLEX_EIG)
    # returned as a whole, NumPy's named tuple keeps its type (tests/capture/test_named_results.py)
    check(lambda x: np.linalg.eigh(x), SQUARE)


@pytest.mark.parametrize("rhs", ["vector", "matrix"])
def test_lstsq(rhs):
    def f(x):
        b = x[:, 0] + 1 if rhs == "vector" else x[:, :2] + 1
        return np.linalg.lstsq(x, b)
    check(f, TALL)


def test_rank_cond_tensor():
    check(lambda x: np.linalg.matrix_rank(x), TALL)
    check(lambda x: np.linalg.cond(x), SQUARE)
    check(lambda x: np.linalg.tensorsolve(x, x[0]), SQUARE)
    check(lambda x: np.linalg.tensorinv(x.reshape(x.shape[0], 1, x.shape[1]), ind=1), SQUARE)


def test_products():
    check(lambda x: np.linalg.multi_dot([x, x.T, x]), TALL)
    check(lambda x: np.linalg.multi_dot([x[:, 0], x, x.T, x[:, 1]]), TALL)
    check(lambda x: np.linalg.vecdot(x, x), TALL)
    check(lambda x: np.linalg.vecdot(x, x[0], axis=-1), TALL)
    check(lambda x: np.kron(x, x[:2]), TALL)
    check(lambda x: np.kron(x[0], np.eye(2)), TALL)
    check(lambda x: np.vdot(x, x + 1j), TALL)


def test_dot_of_a_0d_array_is_a_product():
    """np.dot with a 0-d operand multiplies (NumPy's rule); it was refused as matmul
    refuses 0-d operands (found by the linalg.dot proof)."""
    check(lambda x: np.dot(x.sum(), x), TALL)
    check(lambda x: np.dot(x, np.asarray(x[0, 0])), TALL)


@pytest.mark.parametrize("axes", [([0, 0], [0, 1]), ([1, -1], [0, 1]), 3])
def test_tensordot_refuses_an_axis_named_twice(axes):
    """NumPy refuses np.tensordot over an axis named twice (or axes=k beyond the first
    operand's rank, which names its axes again); the engine exported them (found by the
    linalg.tensordot proof)."""
    x = _data((3, 3), 0)
    with pytest.raises((ValueError, IndexError)):
        np.tensordot(x, x[None], axes=axes)
    with pytest.raises(ss.UserError, match="duplicate axes are not allowed"):
        ss.export(lambda x: np.tensordot(x, x[None], axes=axes), (x,),
                  dynamic_shapes={"x": (A, A)})


@settings(max_examples=15)
@given(k=st.integers(-3, 3), n=st.sampled_from([None, 1, 4]), increasing=st.booleans())
def test_diag_family(k, n, increasing):
    check(lambda x: np.diagflat(x[:, 0], k=k), TALL)
    check(lambda x: np.vander(x[:, 0], n, increasing=increasing), TALL)


def test_diag_indices_from_and_diag_of_a_vector():
    check(lambda x: x[np.diag_indices_from(x)], SQUARE)
    check(lambda x: np.diag(np.sqrt(np.abs(x[:, 0]))), TALL)


@settings(max_examples=20)
@given(name=st.sampled_from(["hanning", "hamming", "blackman", "bartlett"]),
       k=st.integers(-3, 3))
def test_windows_of_a_symbolic_length(name, k):
    # looked up by name when called, as user code does (the trace routes np.hanning & co.)
    check(lambda x: getattr(np, name)(x.shape[0] + k), TALL)
    check(lambda x: np.kaiser(x.shape[1] + k, 3.5), TALL)


@settings(max_examples=10)
@given(d=st.sampled_from([1.0, 0.5, 2]))
def test_fftfreq_of_a_symbolic_n(d):
    check(lambda x: (np.fft.fftfreq(x.shape[0], d), np.fft.rfftfreq(x.shape[0], d=d)), TALL)


def test_fftshift_does_not_specialise():
    check(lambda x: (np.fft.fftshift(x), np.fft.ifftshift(x), np.fft.fftshift(x, axes=1)),
          TALL)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_correlate(mode):
    check(lambda x: np.correlate(x[:, 0], x[:3, 1], mode), TALL)
    check(lambda x: np.correlate(x[:2, 0], x[:, 1], mode), TALL)


def test_ediff1d_trim_zeros():
    check(lambda x: np.ediff1d(x), TALL)
    check(lambda x: np.ediff1d(x, to_begin=[1, 2], to_end=x[0]), TALL)
    ep = check(lambda x: np.trim_zeros(np.maximum(x[:, 0], 0)), TALL)
    check(lambda x: np.trim_zeros(np.maximum(x[:, 0], 0), "b"), TALL)


def test_poly_family():
    check(lambda x: (np.polyadd(x[:, 0], x[:2, 1]), np.polysub(x[:, 0], x[:, 1]),
                     np.polymul(x[:, 0], x[:2, 1]), np.polyder(x[:, 0], 2),
                     np.polyint(x[:, 0]), np.polyval(x[:, 0], x), np.poly(x[:, 0]),
                     np.polyfit(x[:, 0], x[:, 1], 2)), TALL)
    check(lambda x: np.polydiv(x[:, 0], x[:2, 1]), TALL)
    check(lambda x: np.poly(x), SQUARE)
    check(lambda x: np.polyval([1.0, 2.0, 3.0], x), TALL)


def test_roots_is_refused_with_its_reason():
    with pytest.raises(ss.UserError, match="np.roots cannot be traced.*depend on the values"):
        ss.export(lambda x: np.roots(x), (np.ones(4),), dynamic_shapes={"x": (A,)})


def test_spaced_and_i0():
    check(lambda x: (np.geomspace(1, 10, x.shape[0]), np.logspace(0, 2, x.shape[0] - 1),
                     np.logspace(0, 1, x.shape[1], base=2.0, endpoint=False)), TALL)
    check(lambda x: np.geomspace(1.0 + np.abs(x[0]), 10.0, 4), TALL)
    check(lambda x: np.i0(x), TALL)


def test_windows_need_no_array():
    def f(x):
        n = x.shape[0]
        return x * np.hanning(n)[:, None]
    ep = check(f, TALL)
    assert "specializ" not in str(ep)


def test_flat_reads_and_writes():
    def f(x):
        y = x.copy()
        y.flat[::3] = -1.0
        w = x.copy()
        w[1:].flat[2] = 7.0             # through a view: the base changes, as in NumPy
        return y, x.flat[1:4], w, x.flat[x.shape[1]], [v for v in x[:2, :1].flat]
    ep = ss.export(f, (_data((4, 3), 0),), dynamic_shapes={"x": (A, A)})
    for shape in [(4, 3), (6, 5), (3, 3)]:
        x = _data(shape, 1)
        got, want = ep.module()(x), f(x)
        for g, w in zip(got[:4], want[:4]):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.asarray(got[4]), np.asarray(want[4]))


def test_what_cannot_be_traced_names_the_function():
    def make():
        hann = np.hanning                   # captured before the trace: not routed
        return lambda x: hann(x.shape[0]) * 2
    with pytest.raises(ss.GuardOnDataDependentError, match=r"inside NumPy's own code of "
                                                           r"np\.hanning"):
        ss.export(make(), (np.ones(5),), dynamic_shapes={"x": (A,)})
    with pytest.raises(ss.GuardOnDataDependentError,
                       match=r"np\.allclose cannot be traced.*NumPy's own implementation"):
        ss.export(lambda x: np.allclose(x, x), (np.ones(5),), dynamic_shapes={"x": (A,)})
