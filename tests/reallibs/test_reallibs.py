"""The real-library tier: public NumPy libraries (the ``reallibs`` extra) exported and
compiled unmodified at their natural dynamic dimensions, results and object state compared
with eager at three sizes (``entries.py``: what runs; ``run_entry.py``: how).

An entry point that does not work yet is an xfail naming why (strict: it fails the tier once
it works, so the table gets updated).  One that crashes the interpreter today runs in a
subprocess of its own: its crash is an xfail, and once fixed it must work or fail for its
stated reason.  docs/real_libraries.md is the generated table
(``python tests/reallibs/survey.py --write``).
"""
import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from entries import entries  # noqa: E402
from run_entry import outcome  # noqa: E402

LIBRARIES = ("sklearn", "filterpy", "python_speech_features", "numpy_financial", "minisom",
             "ahrs", "pykalman")
MISSING = [lib for lib in LIBRARIES if importlib.util.find_spec(lib) is None]

# entry points that do not work yet, and why (the rows of docs/real_libraries.md that are
# not "works"): each is a strict xfail, so the tier fails once one starts working
WHY = {
    "MerweScaledSigmaPoints(n).sigma_points":
        "scipy.linalg.cholesky is reached through an attribute (self.sqrt = cholesky), "
        "which the state reader hands over unrouted",
    "delta": "a Python loop over a dynamic count (for t in range(len(feat))) unrolls: loops "
             "as loop nodes are not built yet",
    "irr": "np.roots strips zeros by value: its output size depends on the data",
    "common.orientation.acc2q": "a branch on array values whose both sides go on "
                                "(if np.linalg.norm(a) > 0 and ...): data-dependent control flow",
    "filters.Tilt().estimate": "isinstance(x, np.ndarray) is False for a traced array "
                               "(the safe-by-default issue)",
    "KalmanFilter().filter": "numpy.ma (masked arrays) is not traced",
    "KalmanFilter().smooth": "numpy.ma (masked arrays) is not traced",
}
# entry points the tracer crashes the interpreter on today (C-extension objects in the
# library's globals: the safe-by-default issue): each runs in a subprocess; a crash is an
# xfail, and once it no longer crashes the entry must work or fail for the reason given here
SEGFAULT = ("the tracer crashes the interpreter on C-extension objects the library's "
            "globals hold (Cython functions: the safe-by-default issue)")
CRASHING = {
    "StandardScaler().transform [assume_finite]": None,
    "MinMaxScaler().transform [assume_finite]": None,
    "Normalizer().transform [assume_finite]": None,
    "PCA().transform [assume_finite]": None,
    "LinearRegression().predict [assume_finite]": None,
    "Ridge().predict [assume_finite]": None,
    "LogisticRegression().predict_proba [assume_finite]": None,
    "LogisticRegression().predict [assume_finite]": None,
    "KMeans().predict [assume_finite]": "a Cython fused function (sklearn's _labels_inertia) "
                                        "called with traced arrays",
    "GaussianMixture().predict_proba [assume_finite]": None,
    "make_pipeline(StandardScaler(), PCA(), LogisticRegression()).predict_proba "
    "[assume_finite]": None,
    "StandardScaler().transform": "the finiteness check sums first and checks element by "
                                  "element only when the sum is not finite: a branch whose "
                                  "side that goes on does not decide whether the other raises",
    "KalmanFilter().batch_filter": "a Python loop over the measurements (for z in zs) "
                                   "unrolls: loops as loop nodes are not built yet",
    "KalmanFilter().rts_smoother": "a Python loop over a dynamic count (for k in "
                                   "range(n - 2, -1, -1)) unrolls",
    "KalmanFilter().predict(); .update(z)": None,
    "filterpy.kalman.update": None,
}


def _params():
    out = []
    for i, e in enumerate(entries()):
        marks = []
        if e.library in MISSING:
            marks.append(pytest.mark.skip(reason="%s is not installed (the reallibs extra)"
                                          % e.library))
        elif e.name in WHY:
            marks.append(pytest.mark.xfail(reason=WHY[e.name], strict=True))
        out.append(pytest.param(i, id="%s: %s" % (e.library, e.name), marks=marks))
    return out


@pytest.mark.parametrize("index", _params())
def test_entry_point_exports_and_matches_eager(index):
    e = entries()[index]
    if e.name in CRASHING:
        from survey import run_one
        got = run_one(index)
        if got["status"] == "crash":
            pytest.xfail(SEGFAULT)
        if CRASHING[e.name] is not None and got["status"] != "works":
            pytest.xfail(CRASHING[e.name])
        status, detail = got["status"], got["detail"]
    else:
        got = outcome(e)
        status, detail = got.status, got.detail
    assert status == "works", "%s: %s" % (status, detail)


def test_tier_is_wide_enough():
    """At least 25 entry points from at least 6 libraries."""
    es = entries()
    assert len(es) >= 25 and len({e.library for e in es}) >= 6


def test_symshape_check_exports_library_functions(capsys):
    """``symshape check examples/reallibs``: library functions declared in a pyproject are
    exported as installed, with the bound ``symshape check`` suggested applied."""
    for lib in ("python_speech_features", "numpy_financial"):
        pytest.importorskip(lib)
    from symshape.cli import main
    path = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "reallibs")
    assert main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "3 exports: 3 ok" in out and "samples = signal.shape[0] in [401, inf]" in out
