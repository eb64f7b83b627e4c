"""The real-library tier: public NumPy libraries (the ``reallibs`` extra) exported and
compiled unmodified at their natural dynamic dimensions, results and object state compared
with eager at three sizes (``entries.py``: what runs; ``run_entry.py``: how).

An entry point that does not work yet is an xfail naming why (strict: it fails the tier once
it works, so the table gets updated).  One that can crash the interpreter runs in a
subprocess of its own; docs/real_libraries.md is the generated table
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

# entry points that do not work yet, and why (the closing rows of docs/real_libraries.md)
SEGFAULT = ("the tracer crashes the interpreter on C-extension objects the library's "
            "globals hold (Cython functions: the safe-by-default issue)")
WHY = {
    "StandardScaler().transform": SEGFAULT,
    "MinMaxScaler().transform": SEGFAULT,
    "Normalizer().transform": SEGFAULT,
    "PCA().transform": SEGFAULT,
    "LinearRegression().predict": SEGFAULT,
    "Ridge().predict": SEGFAULT,
    "LogisticRegression().predict_proba": SEGFAULT,
    "LogisticRegression().predict": SEGFAULT,
    "KMeans().predict": SEGFAULT,
    "GaussianMixture().predict_proba": SEGFAULT,
    "make_pipeline(StandardScaler(), PCA(), LogisticRegression()).predict_proba": SEGFAULT,
    "KalmanFilter().batch_filter": SEGFAULT,
    "KalmanFilter().rts_smoother": SEGFAULT,
    "KalmanFilter().predict(); .update(z)": SEGFAULT,
    "filterpy.kalman.update": SEGFAULT,
    "MerweScaledSigmaPoints(n).sigma_points":
        "scipy.linalg.cholesky is reached through an attribute (self.sqrt = cholesky), "
        "which the state reader hands over unrouted",
    "delta": "a Python loop over a dynamic count (for t in range(len(feat))) unrolls: loops "
             "as loop nodes are not built yet",
    "irr": "np.roots strips zeros by value: its output size depends on the data",
    "MiniSom().activate": "a bound method stored as an attribute "
                          "(self._activation_distance) is read as another object",
    "common.orientation.acc2q": "a branch on array values whose both sides go on "
                                "(if ax == 0 and ...): data-dependent control flow",
    "filters.Tilt().estimate": "isinstance(x, np.ndarray) is False for a traced array "
                               "(the safe-by-default issue)",
    "KalmanFilter().filter": "numpy.ma (masked arrays) is not traced",
    "KalmanFilter().smooth": "numpy.ma (masked arrays) is not traced",
}
# entries that may crash the interpreter: run in a subprocess
ISOLATE = {name for name, why in WHY.items() if why is SEGFAULT}


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
    if e.name in ISOLATE:
        from survey import run_one
        got = run_one(index)
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
