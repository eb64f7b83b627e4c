"""The NumPy coverage survey (benchmarks/numpy_coverage.py) runs in CI: no public callable of
numpy, numpy.linalg or numpy.fft may crash the tracer with anything but a UserError or give
a result that differs from eager NumPy, at least 95% of the surveyed callables trace with
symbolic sizes, and none specialises where NumPy's output shape follows from the inputs'."""
from repo_paths import REPO
import importlib.util
import pathlib

_PATH = pathlib.Path(REPO) / "benchmarks" / "numpy_coverage.py"


def _survey_module():
    spec = importlib.util.spec_from_file_location("numpy_coverage", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_numpy_namespace_survey():
    mod = _survey_module()
    rows = mod.survey()
    crashes = [r for r in rows if r.status == "crash"]
    assert not crashes, "\n".join("%s.%s %s: %s" % (r.module, r.name, r.pattern, r.detail)
                                  for r in crashes)
    counts = mod.summary(rows)
    surveyed = sum(v for k, v in counts.items() if k != "not surveyed")
    assert surveyed > 350
    assert counts.get("symbolic", 0) / surveyed >= 0.95, counts
    # a specialisation only where NumPy's output structure depends on a size (unstack
    # returns x.shape[0] arrays); never where the output shape is a function of the inputs'
    specialised = {r.name for r in rows if r.status == "specialises"}
    assert specialised <= {"unstack"}, specialised
