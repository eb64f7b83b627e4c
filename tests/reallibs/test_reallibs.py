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

from entries import CRASHING, SEGFAULT, WHY, entries  # noqa: E402
from run_entry import outcome  # noqa: E402

LIBRARIES = ("sklearn", "filterpy", "python_speech_features", "numpy_financial", "minisom",
             "ahrs", "pykalman")
MISSING = [lib for lib in LIBRARIES if importlib.util.find_spec(lib) is None]

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
    assert "3 exports: 3 ok" in out and "samples = signal.shape[0] in [401, int_oo]" in out
