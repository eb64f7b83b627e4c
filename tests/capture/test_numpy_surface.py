"""NumPy functions real code calls, traced with symbolic sizes: dedicated handlers for the
compiled routines (linalg, fft, searchsorted, interp, convolve, diagonal, copyto...) and
NumPy's own Python implementations traced through for the rest (isclose, cov, meshgrid,
kron-free helpers...).  Each is compared with eager NumPy on several shapes."""
import numpy as np
import pytest

import symshape as ss

A = ss.Dim.AUTO
RNG = np.random.default_rng(7)


def spd(x):
    """A symmetric positive definite matrix from the first rows of x."""
    m = x[:3, :3]
    return m @ m.T + 3 * np.eye(3)


CASES = {
    "isclose": lambda x: np.isclose(x, x * 1.0000001),
    "nan_to_num": lambda x: np.nan_to_num(x / (x - x), nan=0.5),
    "broadcast_arrays": lambda x: np.broadcast_arrays(x, x[:1])[1] + 1,
    # scalars and plain arrays among the arguments (numpy-financial's ipmt)
    "broadcast_arrays_scalars": lambda x: sum(np.broadcast_arrays(0.5, x, 2, np.ones(1))),
    "column_stack": lambda x: np.column_stack([x, x]),
    "trace": lambda x: np.trace(x),
    "trace_offset": lambda x: x.trace(offset=1),
    "diagonal": lambda x: np.diagonal(x, -1),
    "inner": lambda x: np.inner(x, x),
    "searchsorted": lambda x: np.searchsorted(np.sort(x[:, 0]), x[:, 1], side="right"),
    "meshgrid": lambda x: np.meshgrid(x[:, 0], x[0])[0] * 2,
    "meshgrid_ij": lambda x: np.meshgrid(x[:, 0], x[0], indexing="ij")[1],
    "ufunc_outer": lambda x: np.multiply.outer(x[:, 0], x[0]),
    "ufunc_reduce_fold": lambda x: np.arctan2.reduce(x[:, :2], axis=1),
    "einsum_ellipsis": lambda x: np.einsum("...ij,...jk->...ik", x[None], x.T[None]),
    "einsum_implicit": lambda x: np.einsum("i...->...", x),
    "dot_nd": lambda x: np.dot(x[None], x.T),
    "convolve_full": lambda x: np.convolve(x[:, 0], np.ones(3)),
    "convolve_valid": lambda x: np.convolve(x[:, 0], np.array([1.0, -1.0]), mode="valid"),
    "inv": lambda x: np.linalg.inv(spd(x)) @ x[:3],
    "solve": lambda x: np.linalg.solve(spd(x), x[:3]),
    "solve_vec": lambda x: np.linalg.solve(spd(x), x[:3, 0]),
    "det": lambda x: np.linalg.det(spd(x)) * x,
    "slogdet": lambda x: np.linalg.slogdet(spd(x))[1] + x,
    "cholesky": lambda x: np.linalg.cholesky(spd(x)),
    "eigh": lambda x: np.linalg.eigh(spd(x))[0],
    "eigvalsh": lambda x: np.linalg.eigvalsh(spd(x)),
    "svd": lambda x: np.linalg.svd(x, full_matrices=False)[1],
    "svdvals": lambda x: np.linalg.svd(x, compute_uv=False),
    "qr": lambda x: np.abs(np.linalg.qr(x)[1]),
    "pinv": lambda x: np.linalg.pinv(x),
    "rfft": lambda x: np.abs(np.fft.rfft(x, axis=0)),
    "fft_irfft": lambda x: np.fft.irfft(np.fft.rfft(x, axis=1), n=x.shape[1], axis=1),
    "fft_n": lambda x: np.fft.fft(x, n=8).real,
    "shape": lambda x: np.zeros(np.shape(x)) + x,
    "median": lambda x: np.median(x, axis=0),
    "median_all": lambda x: np.median(x),
    "median_keep": lambda x: np.median(x, axis=1, keepdims=True),
    "interp": lambda x: np.interp(x, [0.0, 1.0], [1.0, 2.0]),
    "polyval": lambda x: np.polyval([1.0, 2.0, 3.0], x),
    "rot90": lambda x: np.rot90(x),
    "average": lambda x: np.average(x, axis=1, weights=np.linspace(1.0, 2.0, 4)),
    "ptp": lambda x: np.ptp(x, axis=0),
    "real_imag": lambda x: x.real + x.imag + np.real(x),
    "conj": lambda x: x.conj() * 2,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_traces_with_symbolic_sizes(name):
    f = CASES[name]
    x = RNG.standard_normal((5, 4))
    spec = {"x": (A, None)} if name in ("average",) else {"x": (A, A)}
    ep = ss.export(f, (x,), dynamic_shapes=spec)
    assert ep.range_constraints, "every size was specialised"
    compiled = ep.compile()
    for shape in ((5, 4), (7, 4), (9, 4) if name == "average" else (6, 9)):
        v = RNG.standard_normal(shape)
        want = f(v)
        got = ep.module()(v)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(compiled(v), want, rtol=1e-12, atol=1e-12)


def test_median_of_nan_is_nan():
    f = CASES["median"]
    ep = ss.export(f, (RNG.standard_normal((5, 4)),), dynamic_shapes={"x": (A, A)})
    v = RNG.standard_normal((6, 3))
    v[2, 1] = np.nan
    np.testing.assert_array_equal(ep.module()(v), f(v))


def test_square_matrices_are_a_guard():
    ep = ss.export(lambda x: np.linalg.inv(x), (spd(RNG.standard_normal((5, 4))),),
                   dynamic_shapes={"x": (A, A)})
    assert len(ep.range_constraints) == 1          # one size: the two axes are equal
    with pytest.raises(ss.UserError):
        ep.module()(np.ones((3, 4)))


def test_an_untraceable_function_says_why():
    with pytest.raises(ss.UserError,
                       match=r"numpy\.piecewise is not supported.*own implementation"):
        ss.export(lambda x: np.piecewise(x, [x > 0], [1.0, 0.0]), (np.ones(3),))


def test_a_failed_fallback_leaves_nothing_behind():
    def f(x):
        try:
            np.piecewise(x, [x > 0], [1.0, 0.0])
        except ss.UserError:
            pass
        return x + 1
    ep = ss.export(f, (np.ones(3),), dynamic_shapes={"x": (A,)})
    assert [n.op for n in ep.graph.nodes if n.op not in ("input", "constant")] == ["add"]


def test_repeat_with_an_array_of_counts_is_data_dependent():
    def f(x, counts):
        return np.repeat(x, counts) * 2

    ep = ss.export(f, (np.arange(5.0), np.array([1, 2, 0, 1, 3])),
                   dynamic_shapes={"x": (A,), "counts": (A,)})
    for n in (5, 7, 2):
        x, c = np.arange(float(n)), np.arange(n) % 3
        np.testing.assert_array_equal(ep.module()(x, c), f(x, c))
        np.testing.assert_array_equal(ep.compile()(x, c), f(x, c))
    with pytest.raises(ss.UserError):
        ep.module()(np.arange(4.0), np.arange(3))       # one count per element


@pytest.mark.parametrize("flags", [{}, {"return_counts": True}, {"return_inverse": True,
                                                                   "return_index": True}])
def test_unique_rows(flags):
    def f(x):
        return np.unique(np.round(x), axis=0, **flags)

    ep = ss.export(f, (RNG.standard_normal((5, 2)),), dynamic_shapes={"x": (A, A)})
    for shape in ((9, 3), (4, 2)):
        v = RNG.standard_normal(shape)
        got, want = ep.module()(v), f(v)
        for g, w in zip(got if flags else [got], want if flags else [want]):
            np.testing.assert_array_equal(g, w)


def test_reductions_write_into_out():
    def f(x):
        out = np.zeros(x.shape[1], like=x)
        got = np.sum(x, axis=0, out=out)
        assert got is out
        np.mean(x, axis=1, out=x[:, 0])
        return out, x

    ep = ss.export(f, (RNG.standard_normal((4, 3)),), dynamic_shapes={"x": (A, A)})
    v = RNG.standard_normal((6, 5))
    for run in (ep.module(), ep.compile()):
        got, want = run(v.copy()), f(v.copy())
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_ufunc_at_accumulates_repeated_indices():
    def f(x, idx):
        counts = np.zeros(x.shape[0], like=x)
        np.add.at(counts, idx, 1.0)
        np.maximum.at(x, [0, 0, 1], x[:3] * 2)
        return counts, x

    ep = ss.export(f, (np.ones(5), np.array([0, 1, 1, 3])),
                   dynamic_shapes={"x": (A,), "idx": (A,)})
    v, i = np.arange(6.0), np.array([5, 5, 2, 0, 0])
    for run in (ep.module(), ep.compile()):
        got, want = run(v.copy(), i), f(v.copy(), i)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def _message(f, args, spec):
    with pytest.raises(ss.UserError) as e:
        ss.export(f, args, dynamic_shapes=spec)
    return str(e.value)


def test_inner_is_named_inner():
    text = _message(lambda x, y: np.inner(x, y), (np.ones((4, 5)), np.ones((2, 3))),
                    {"x": (A, A), "y": (A, A)})
    assert text.startswith("np.inner:") and "tensordot" not in text, text
    assert "x.shape[1] vs y.shape[1]" in text


def test_dot_nd_is_named_dot():
    text = _message(lambda x, y: np.dot(x, y), (np.ones((2, 4, 5)), np.ones((2, 3, 6))),
                    {"x": (A, A, A), "y": (A, A, A)})
    assert text.startswith("np.dot:") and "tensordot" not in text, text


def test_tensordot_still_named_tensordot():
    text = _message(lambda x, y: np.tensordot(x, y, axes=1), (np.ones((4, 5)), np.ones((3, 2))),
                    {"x": (A, A), "y": (A, A)})
    assert text.startswith("np.tensordot:"), text


def test_broadcast_arrays_admits_equal_sizes_the_example_kept_apart():
    """np.broadcast_arrays keeps an array already of the broadcast shape as it is; deciding
    that compared (n,) with (m, n) size by size, which recorded m != n from the example and
    refused square inputs that NumPy broadcasts (found by the broadcast.shapes proof)."""
    f = lambda x, z: np.broadcast_arrays(x, z)[1] + 1        # noqa: E731
    ep = ss.export(f, (np.ones((3, 4)), np.ones(4)),
                   dynamic_shapes={"x": (A, A), "z": (A,)})
    x, z = RNG.standard_normal((4, 4)), RNG.standard_normal(4)
    np.testing.assert_allclose(ep.module()(x, z), f(x, z))
