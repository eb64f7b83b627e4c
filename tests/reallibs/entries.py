"""The real-library entry points: public NumPy code nobody here wrote, exported and compiled
unmodified with its natural dynamic dimensions.

Each ``Entry`` names the library's callable and builds, for a size ``n``, the call's
arguments (``make(n) -> (f, args, dynamic_shapes, state)``): ``f`` is the library's own
function or bound method (never a rewrite), ``state`` the object whose attributes the call
may change (compared with eager after the call), or None.  The data are made here, small and
seeded; fitted estimators are fitted here on that data (fitting is not the entry point).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import numpy as np
from symshape import Dim

F = 4           # the static feature count of the fitted models


@dataclass(frozen=True)
class Entry:
    """One entry point: ``library`` (its import name), ``name`` (as the user calls it),
    ``make(n)`` and the sizes it runs at; ``context``: a context manager factory the whole
    run (export, program, eager) happens in (a library's documented configuration)."""
    library: str
    name: str
    make: Callable[[int], Tuple[Callable, tuple, object, Optional[object]]]
    sizes: Tuple[int, ...] = (9, 13, 20)
    context: Optional[Callable[[], object]] = None


def _rng(n, salt=0):
    return np.random.default_rng(1000 * salt + n)


def _X(n, salt=0):
    return _rng(n, salt).standard_normal((n, F))


def _rows(name="X"):
    return {name: {0: Dim.AUTO}}


# --------------------------------------------------------------------------- scikit-learn
def _model(spec):
    """A scikit-learn estimator from ``(module, class, kwargs)``, or a pipeline of them."""
    import importlib
    if isinstance(spec, list):
        from sklearn.pipeline import make_pipeline
        return make_pipeline(*[_model(s) for s in spec])
    module, name, kw = spec
    return getattr(importlib.import_module(module), name)(**kw)


def _sk(spec, method, classify=False):
    """``make(n)`` for ``method`` of the estimator ``spec`` fitted once, on first use."""
    fitted = []

    def make(n):
        if not fitted:
            rng = np.random.default_rng(0)
            X = rng.standard_normal((40, F))
            y = (X[:, 0] + X[:, 1] > 0).astype(int) if classify else X @ np.arange(1.0, F + 1)
            fitted.append(_model(spec).fit(X, y))
        model = fitted[0]
        return getattr(model, method), (_X(n, 1),), _rows(), model
    return make


def assume_finite():
    """scikit-learn's documented switch for inputs known to be finite (its finiteness check
    is skipped, in the program as eagerly)."""
    import sklearn
    return sklearn.config_context(assume_finite=True)


def _sk_rows():
    """(name, make) of each scikit-learn entry point (nothing imported or fitted yet)."""
    pre, lin = "sklearn.preprocessing", "sklearn.linear_model"
    scaler, pca = (pre, "StandardScaler", {}), ("sklearn.decomposition", "PCA",
                                               {"n_components": 2})
    logreg = (lin, "LogisticRegression", {})
    pipe = [scaler, ("sklearn.decomposition", "PCA", {"n_components": 3}), logreg]
    kmeans = ("sklearn.cluster", "KMeans", {"n_clusters": 3, "n_init": 2, "random_state": 0})
    rows = [
        ("StandardScaler().transform", _sk(scaler, "transform")),
        ("MinMaxScaler().transform", _sk((pre, "MinMaxScaler", {}), "transform")),
        ("Normalizer().transform", _sk((pre, "Normalizer", {}), "transform")),
        ("PCA().transform", _sk(pca, "transform")),
        ("LinearRegression().predict", _sk((lin, "LinearRegression", {}), "predict")),
        ("Ridge().predict", _sk((lin, "Ridge", {}), "predict")),
        ("LogisticRegression().predict_proba", _sk(logreg, "predict_proba", True)),
        ("LogisticRegression().predict", _sk(logreg, "predict", True)),
        ("KMeans().predict", _sk(kmeans, "predict")),
        ("GaussianMixture().predict_proba",
         _sk(("sklearn.mixture", "GaussianMixture", {"n_components": 2, "random_state": 0}),
             "predict_proba")),
        ("make_pipeline(StandardScaler(), PCA(), LogisticRegression()).predict_proba",
         _sk(pipe, "predict_proba", True)),
        ("RobustScaler().transform", _sk((pre, "RobustScaler", {}), "transform")),
        ("MaxAbsScaler().transform", _sk((pre, "MaxAbsScaler", {}), "transform")),
        ("PolynomialFeatures(2).transform", _sk((pre, "PolynomialFeatures", {"degree": 2}),
                                                "transform")),
        ("TruncatedSVD(2).transform", _sk(("sklearn.decomposition", "TruncatedSVD",
                                           {"n_components": 2, "random_state": 0}),
                                          "transform")),
        ("PCA().inverse_transform(PCA().transform)", _pca_round_trip),
        ("Lasso().predict", _sk((lin, "Lasso", {"alpha": 0.1}), "predict")),
        ("BayesianRidge().predict", _sk((lin, "BayesianRidge", {}), "predict")),
        ("LogisticRegression().decision_function", _sk(logreg, "decision_function", True)),
        ("LinearDiscriminantAnalysis().predict_proba",
         _sk(("sklearn.discriminant_analysis", "LinearDiscriminantAnalysis", {}),
             "predict_proba", True)),
        ("GaussianNB().predict_proba", _sk(("sklearn.naive_bayes", "GaussianNB", {}),
                                           "predict_proba", True)),
        ("KMeans().score", _sk(kmeans, "score")),
        ("KMeans().transform", _sk(kmeans, "transform")),
        ("GaussianMixture().score_samples",
         _sk(("sklearn.mixture", "GaussianMixture", {"n_components": 2, "random_state": 0}),
             "score_samples")),
    ]
    return rows


def _sk_entries():
    sk, scaler = "sklearn", ("sklearn.preprocessing", "StandardScaler", {})
    return [Entry(sk, name, make) for name, make in _sk_rows()] + [
        Entry(sk, "StandardScaler().transform [assume_finite]", _sk(scaler, "transform"),
              context=assume_finite)]


_PCA2 = _sk(("sklearn.decomposition", "PCA", {"n_components": 2}), "transform")


def _pca_round_trip(n):
    _, args, dyn, model = _PCA2(n)

    def round_trip(X):
        return model.inverse_transform(model.transform(X))
    return round_trip, args, dyn, model


# --------------------------------------------------------------------------- filterpy
def _kf(dim_z=1):
    from filterpy.kalman import KalmanFilter
    kf = KalmanFilter(dim_x=2, dim_z=dim_z)
    kf.x = np.array([[0.0], [1.0]])
    kf.F = np.array([[1.0, 1.0], [0.0, 1.0]])
    kf.H = np.array([[1.0, 0.0]])
    kf.P *= 10.0
    kf.R = np.array([[5.0]])
    kf.Q = np.eye(2) * 0.01
    return kf


def _zs(n):
    return (np.arange(n, dtype=float) + _rng(n, 2).standard_normal(n)).reshape(n, 1)


def _batch_filter(n):
    kf = _kf()
    return kf.batch_filter, (_zs(n),), {"zs": {0: Dim.AUTO}}, kf


def _rts(n):
    kf = _kf()
    Xs, Ps, _, _ = kf.batch_filter(_zs(n))
    return kf.rts_smoother, (Xs, Ps), {"Xs": {0: Dim("T")}, "Ps": {0: Dim("T")}}, kf


def _step(n):
    kf = _kf()

    def step(z):          # the user's loop body: the library's predict and update
        kf.predict()
        kf.update(z)
        return kf.x
    return step, (np.array([[float(n)]]),), None, kf


def _fp_predict(n):
    from filterpy.kalman import predict
    x, P = _rng(n, 3).standard_normal(n), np.eye(n) * 2.0
    F_ = np.eye(n) + np.eye(n, k=1)
    return predict, (x, P, F_, np.eye(n) * 0.1), {
        "x": {0: Dim("n")}, "P": {0: Dim("n"), 1: Dim("n")}, "F": {0: Dim("n"), 1: Dim("n")},
        "Q": {0: Dim("n"), 1: Dim("n")}}, None


def _fp_update(n):
    from filterpy.kalman import update
    x, P = _rng(n, 4).standard_normal(n), np.eye(n) * 2.0
    z, R, H = np.ones(2), np.eye(2), np.eye(2, n)
    return update, (x, P, z, R, H), {
        "x": {0: Dim("n")}, "P": {0: Dim("n"), 1: Dim("n")}, "z": None, "R": None,
        "H": {1: Dim("n")}}, None


def _sigma_points(n):
    from filterpy.kalman import MerweScaledSigmaPoints
    # the state dimension is fixed when the object is made (``self.n``, checked against
    # ``np.size(x)``): the sizes are static, the values change with n
    pts = _MERWE.setdefault("pts", MerweScaledSigmaPoints(n=3, alpha=0.1, beta=2.0, kappa=0.0))
    a = _rng(n, 6).standard_normal((3, 3))
    return pts.sigma_points, (_rng(n, 7).standard_normal(3), a @ a.T + 3.0 * np.eye(3)), \
        None, None


_MERWE: dict = {}


def _filter_step(make_filter):
    """The user's loop body over one of filterpy's nonlinear filters: predict, then update
    with the measurement (the filter's state compared with eager after each call)."""
    def make(n):
        flt, update = make_filter()

        def step(z):
            flt.predict()
            update(flt, z)
            return flt.x
        return step, (np.array([float(n)]),), None, flt
    return make


def _ukf():
    from filterpy.kalman import MerweScaledSigmaPoints, UnscentedKalmanFilter

    def fx(x, dt):
        return np.array([x[0] + dt * x[1], x[1]])

    def hx(x):
        return x[:1]
    pts = MerweScaledSigmaPoints(2, alpha=0.1, beta=2.0, kappa=1.0)
    ukf = UnscentedKalmanFilter(dim_x=2, dim_z=1, dt=1.0, fx=fx, hx=hx, points=pts)
    ukf.x = np.array([0.0, 1.0])
    ukf.P *= 10.0
    ukf.R *= 5.0
    ukf.Q = np.eye(2) * 0.01
    return ukf, lambda f, z: f.update(z)


def _ekf():
    from filterpy.kalman import ExtendedKalmanFilter

    def HJ(x):                  # the range to a point one unit off the track, linearized
        return np.array([[x[0, 0] / np.sqrt(x[0, 0] ** 2 + 1.0), 0.0]])

    def hx(x):
        return np.array([[np.sqrt(x[0, 0] ** 2 + 1.0)]])
    ekf = ExtendedKalmanFilter(dim_x=2, dim_z=1)
    ekf.x = np.array([[1.0], [0.5]])
    ekf.F = np.array([[1.0, 1.0], [0.0, 1.0]])
    ekf.P *= 10.0
    ekf.R *= 5.0
    return ekf, lambda f, z: f.update(z.reshape(1, 1), HJ, hx)


def _gaussian(n):
    from filterpy.stats import gaussian
    return gaussian, (np.linspace(-3, 3, n), 0.5, 2.0), {"x": {0: Dim.AUTO}}, None


def _fp_entries():
    fp = "filterpy"
    return [
        Entry(fp, "KalmanFilter().batch_filter", _batch_filter),
        Entry(fp, "KalmanFilter().rts_smoother", _rts),
        Entry(fp, "KalmanFilter().predict(); .update(z)", _step, sizes=(1, 2, 3)),
        Entry(fp, "filterpy.kalman.predict", _fp_predict, sizes=(3, 4, 6)),
        Entry(fp, "filterpy.kalman.update", _fp_update, sizes=(3, 4, 6)),
        Entry(fp, "MerweScaledSigmaPoints(3).sigma_points", _sigma_points),
        Entry(fp, "filterpy.stats.gaussian", _gaussian),
        Entry(fp, "UnscentedKalmanFilter().predict(); .update(z)", _filter_step(_ukf),
              sizes=(1, 2, 3)),
        Entry(fp, "ExtendedKalmanFilter().predict(); .update(z, HJ, hx)", _filter_step(_ekf),
              sizes=(1, 2, 3)),
    ]


# --------------------------------------------------------------------------- speech features
def _signal(n):
    return np.sin(np.arange(n * 160) * 0.05) + 0.1 * _rng(n, 5).standard_normal(n * 160)


def _psf(name):
    def make(n):
        import python_speech_features as psf
        return getattr(psf, name), (_signal(n),), {"signal": {0: Dim.AUTO}}, None
    return make


def _framesig(n):
    from python_speech_features.sigproc import framesig
    return framesig, (_signal(n), 400, 160), {"sig": {0: Dim.AUTO}}, None


def _preemphasis(n):
    from python_speech_features.sigproc import preemphasis
    return preemphasis, (_signal(n),), {"signal": {0: Dim.AUTO}}, None


def _delta(n):
    from python_speech_features import delta
    return delta, (_rng(n, 6).standard_normal((n, 13)), 2), {"feat": {0: Dim.AUTO}}, None


def _frames(n):
    return _rng(n, 20).standard_normal((n, 400))


def _spec(name):
    def make(n):
        from python_speech_features import sigproc
        return getattr(sigproc, name), (_frames(n), 512), {"frames": {0: Dim.AUTO}}, None
    return make


def _lifter(n):
    from python_speech_features.base import lifter
    return lifter, (_rng(n, 21).standard_normal((n, 13)), 22), {"cepstra": {0: Dim.AUTO}}, \
        None


def _psf_entries():
    p = "python_speech_features"
    return [Entry(p, "mfcc", _psf("mfcc"), sizes=(20, 30, 47)),
            Entry(p, "fbank", _psf("fbank"), sizes=(20, 30, 47)),
            Entry(p, "logfbank", _psf("logfbank"), sizes=(20, 30, 47)),
            Entry(p, "ssc", _psf("ssc"), sizes=(20, 30, 47)),
            Entry(p, "delta", _delta),
            Entry(p, "sigproc.framesig", _framesig, sizes=(20, 30, 47)),
            Entry(p, "sigproc.preemphasis", _preemphasis),
            Entry(p, "sigproc.powspec", _spec("powspec")),
            Entry(p, "sigproc.logpowspec", _spec("logpowspec")),
            Entry(p, "lifter", _lifter)]


# --------------------------------------------------------------------------- numpy-financial
def _npf(name, make_args, spec):
    def make(n):
        import numpy_financial as npf
        return getattr(npf, name), make_args(n), spec, None
    return make


def _cash(n):
    return np.concatenate([[-100.0], 10.0 + _rng(n, 7).random(n - 1) * 5])


def _npf_entries():
    p = "numpy_financial"
    return [
        Entry(p, "npv", _npf("npv", lambda n: (0.05, _cash(n)), {"rate": None,
                                                               "values": {0: Dim.AUTO}})),
        Entry(p, "irr", _npf("irr", lambda n: (_cash(n),), {"values": {0: Dim.AUTO}})),
        Entry(p, "pmt", _npf("pmt", lambda n: (np.full(n, 0.01), 12, np.linspace(100, 200, n)),
                             {"rate": {0: Dim("n")}, "nper": None, "pv": {0: Dim("n")}})),
        Entry(p, "fv", _npf("fv", lambda n: (0.02, np.arange(1.0, n + 1), -10.0, -100.0),
                            {"rate": None, "nper": {0: Dim.AUTO}, "pmt": None, "pv": None})),
        Entry(p, "pv", _npf("pv", lambda n: (np.full(n, 0.01), 12, np.linspace(10, 20, n)),
                            {"rate": {0: Dim("n")}, "nper": None, "pmt": {0: Dim("n")}})),
        Entry(p, "nper", _npf("nper", lambda n: (0.01, np.linspace(-10, -20, n), 100.0),
                              {"rate": None, "pmt": {0: Dim.AUTO}, "pv": None})),
        Entry(p, "ipmt", _npf("ipmt", lambda n: (0.01, np.arange(1, n + 1), 24, 1000.0),
                              {"rate": None, "per": {0: Dim.AUTO}, "nper": None, "pv": None})),
    ]


# --------------------------------------------------------------------------- MiniSom
def _som():
    from minisom import MiniSom
    som = MiniSom(3, 3, F, sigma=1.0, learning_rate=0.5, random_seed=0)
    som.random_weights_init(np.random.default_rng(0).standard_normal((30, F)))
    return som


def _som_call(method):
    def make(n):
        som = _som()
        return getattr(som, method), (_X(n, 8),), {"data": {0: Dim.AUTO}}, som
    return make


def _som_activate(n):
    som = _som()
    return som.activate, (_X(n, 9)[0],), None, som


def _som_entries():
    p = "minisom"
    return [Entry(p, "MiniSom().quantization", _som_call("quantization")),
            Entry(p, "MiniSom().quantization_error", _som_call("quantization_error")),
            Entry(p, "MiniSom().activate", _som_activate, sizes=(1, 2, 3))]


# --------------------------------------------------------------------------- ahrs
def _acc(n):
    a = _rng(n, 10).standard_normal((n, 3)) * 0.1
    a[:, 2] += 9.81
    return a


def _ahrs_entries():
    def acc2q(n):
        from ahrs.common.orientation import acc2q
        return acc2q, (_acc(n)[0],), None, None

    def tilt(n):
        from ahrs.filters import Tilt

        def estimate(acc):
            return Tilt().estimate(acc)
        return estimate, (_acc(n)[0],), None, None

    def q2R(n):
        from ahrs.common.orientation import q2R
        q = _rng(n, 11).standard_normal(4)
        return q2R, (q / np.linalg.norm(q),), None, None
    p = "ahrs"
    def q_prod(n):
        from ahrs.common.orientation import q_prod
        return q_prod, (_rng(n, 14).standard_normal(4), _rng(n, 15).standard_normal(4)), \
            None, None

    def ecompass(n):
        from ahrs.common.orientation import ecompass
        mag = _rng(n, 16).standard_normal(3) + [20.0, 0.0, -40.0]
        return ecompass, (_acc(n)[0], mag), None, None
    def am2q(n):
        from ahrs.common.orientation import am2q
        mag = _rng(n, 16).standard_normal(3) + [20.0, 0.0, -40.0]
        return am2q, (_acc(n)[0], mag), None, None

    def imu(name):
        def make(n):
            import ahrs.filters
            flt = getattr(ahrs.filters, name)(frequency=100.0)
            gyr = _rng(n, 17).standard_normal(3) * 0.01
            return flt.updateIMU, (np.array([1.0, 0.0, 0.0, 0.0]), gyr, _acc(n)[0]), None, flt
        return make
    return [Entry(p, "common.orientation.acc2q", acc2q, sizes=(1, 2, 3)),
            Entry(p, "common.orientation.am2q", am2q, sizes=(1, 2, 3)),
            Entry(p, "filters.Madgwick().updateIMU", imu("Madgwick"), sizes=(1, 2, 3)),
            Entry(p, "filters.Mahony().updateIMU", imu("Mahony"), sizes=(1, 2, 3)),
            Entry(p, "common.orientation.q_prod", q_prod, sizes=(1, 2, 3)),
            Entry(p, "common.orientation.ecompass", ecompass, sizes=(1, 2, 3)),
            Entry(p, "filters.Tilt().estimate", tilt, sizes=(1, 2, 3)),
            Entry(p, "common.orientation.q2R", q2R, sizes=(1, 2, 3))]


# --------------------------------------------------------------------------- pykalman
def _pykalman(method):
    def make(n):
        from pykalman import KalmanFilter
        kf = KalmanFilter(transition_matrices=[[1.0, 1.0], [0.0, 1.0]],
                          observation_matrices=[[1.0, 0.0]], transition_covariance=np.eye(2) * .01,
                          observation_covariance=[[2.0]], initial_state_mean=[0.0, 1.0],
                          initial_state_covariance=np.eye(2))
        return getattr(kf, method), (_zs(n),), {"X": {0: Dim.AUTO}}, kf
    return make


def _pyk_entries():
    p = "pykalman"
    return [Entry(p, "KalmanFilter().filter", _pykalman("filter")),
            Entry(p, "KalmanFilter().smooth", _pykalman("smooth"))]


# entry points that do not work yet, and why (the rows of docs/real_libraries.md that are
# not "works"): each is a strict xfail, so the tier fails once one starts working
WHY = {
    "irr": "np.roots strips zeros by value: its output size depends on the data",
    "common.orientation.acc2q": "a branch on array values whose both sides go on "
                                "(if np.linalg.norm(a) > 0 and ...): data-dependent control flow",
    "common.orientation.am2q": "ahrs writes the traced values into np.array([1.0, 0.0, "
                               "0.0, 0.0]), a plain array (not a value of the program)",
    "filters.Madgwick().updateIMU": "ahrs' Quaternion is an ndarray subclass made with "
                                    "ndarray.__new__ over the data's buffer",
    "filters.Mahony().updateIMU": "ahrs' Quaternion is an ndarray subclass made with "
                                  "ndarray.__new__ over the data's buffer",
    "KalmanFilter().filter": "pykalman makes its measurements a masked array "
                             "(np.ma.atleast_2d), for missing measurements",
    "KalmanFilter().smooth": "pykalman makes its measurements a masked array "
                             "(np.ma.atleast_2d), for missing measurements",
}
# entry points whose libraries' globals hold C-extension objects (Cython functions), on which
# the tracer once crashed the interpreter; they are opaque now, and each still runs in a
# subprocess so that a regression can never take the suite down: a crash fails (as xfail), and
# the entry must work (None) or fail for the reason given here
SEGFAULT = ("the tracer crashed the interpreter on C-extension objects the library's "
            "globals hold (Cython functions)")
CRASHING = {
    # every scikit-learn entry (the library's globals hold Cython functions)
    **{name: None for name, _ in _sk_rows()},
    "StandardScaler().transform [assume_finite]": None,
    "KalmanFilter().batch_filter": None,
    "KalmanFilter().rts_smoother": None,
    "KalmanFilter().predict(); .update(z)": None,
    "filterpy.kalman.update": None,
}


_ALL: list = []


def entries():
    """Every entry point, by library (built once; nothing is imported or fitted until an
    entry's ``make`` runs)."""
    if not _ALL:
        _ALL.extend(_sk_entries() + _fp_entries() + _psf_entries() + _npf_entries()
                    + _som_entries() + _ahrs_entries() + _pyk_entries())
    return _ALL
