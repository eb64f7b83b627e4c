"""Library functions run as written when the program runs (capture/library_ops.py).

scikit-learn's default finiteness check (``check_array`` -> ``_assert_all_finite``: sum
first, element by element only when the sum is not finite) is one op of the program that
runs scikit-learn's own check when the program runs: inputs holding NaN or infinity raise
eager's ``ValueError`` with eager's message, an overflowing sum of finite values passes, and
``sklearn.config_context(assume_finite=True)`` at run time skips it, as eagerly.  k-means'
label assignment (Cython) is one op giving scikit-learn's own labels (issue 40)."""
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import same

sklearn = pytest.importorskip("sklearn")
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

# the overflowing sum of finite values warns, eagerly as in the program
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

X = np.random.default_rng(0).standard_normal((40, 4))
ROWS = {"X": {0: Dim.AUTO}}


def _fitted():
    return (StandardScaler().fit(X),
            LinearRegression().fit(X, X @ np.arange(1.0, 5.0)))


def _export(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ss.export(f, (X[:9],), dynamic_shapes=ROWS)


def _error(run, x):
    try:
        run(x)
    except ValueError as e:
        return str(e)
    return None


def _with(x, row, col, v):
    x = x.copy()
    x[row, col] = v
    return x


@pytest.mark.parametrize("which", ["scaler", "regression"])
def test_the_default_check_runs_as_written(which):
    model = dict(zip(("scaler", "regression"), _fitted()))[which]
    f = model.transform if which == "scaler" else model.predict
    ep = _export(f)
    assert any(n.op == "sklearn::assert_all_finite" for n in ep.graph.nodes)
    runners = [ep.module(), ep.compile(backend="numpy")]
    for run in runners:
        for n in (9, 13, 20):
            same(run(X[:n]), f(X[:n]))
        bad = [_with(X[:7], 3, 1, np.inf), _with(X[:5], 0, 2, -np.inf),
               _with(X[:6], 5, 0, np.nan)]
        for x in bad:
            want = _error(f, x)
            assert _error(run, x) == want
        # an overflowing sum of finite values: eager goes on after its element-wise check
        big = np.full((4, 4), 1e308)
        same(run(big), f(big))
    # scikit-learn's NaN rule differs by estimator (StandardScaler allows NaN)
    assert (_error(f, bad[2]) is None) == (which == "scaler")


def test_assume_finite_at_run_time_skips_it_as_eagerly():
    scaler, _ = _fitted()
    ep = _export(scaler.transform)
    x = _with(X[:6], 2, 2, np.inf)
    with sklearn.config_context(assume_finite=True):
        same(ep.module()(x), scaler.transform(x))
    assert _error(ep.module(), x) == _error(scaler.transform, x) is not None


def test_ss_compile_refuses_infinity_as_eager():
    _, reg = _fitted()
    run = ss.compile(reg.predict, dynamic=True)
    for n in (9, 13):
        same(run(X[:n]), reg.predict(X[:n]))
    x = _with(X[:9], 1, 1, np.inf)
    assert _error(run, x) == _error(reg.predict, x) is not None


def test_kmeans_labels_are_sklearns_own():
    km = KMeans(n_clusters=3, n_init=2, random_state=0).fit(X)
    ep = _export(km.predict)
    assert any(n.op == "sklearn::kmeans_labels_inertia" for n in ep.graph.nodes)
    score = _export(km.score)
    run = ss.compile(km.predict, dynamic=True)
    for n in (9, 13, 31):
        x = np.random.default_rng(n).standard_normal((n, 4))
        same(ep.module()(x), km.predict(x))
        same(run(x), km.predict(x))
        assert ep.module()(x).dtype == np.int32
        np.testing.assert_allclose(score.module()(x), km.score(x), rtol=1e-12)
