"""Test-suite settings: translation validation on for every export; Hypothesis profiles."""
import os
import sys

# the suite is in layer folders (engine/, capture/, codegen/, ...); its shared helpers
# (runners, eager_compare, _bench, import_graph) stay at the top and import by plain name
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["SYMSHAPE_VALIDATE"] = "1"
# `symshape check --format github` appends a job summary to the file this names; the suite
# runs inside GitHub Actions too, where it is set: tests that want it set it themselves
os.environ.pop("GITHUB_STEP_SUMMARY", None)

from hypothesis import settings  # noqa: E402

# ci: the default, minutes for the whole suite; thorough: for local runs
settings.register_profile("ci", deadline=None, print_blob=True)
settings.register_profile("thorough", deadline=None, max_examples=5000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: left out of the fast tier (pytest -m \"not slow\"); "
                            "tests/tiers.py says why each is slow")


def pytest_collection_modifyitems(config, items):
    import pytest
    from tiers import slow_reason
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        rel = os.path.relpath(str(item.path), here).replace(os.sep, "/")
        if slow_reason(rel, item.originalname or item.name):
            item.add_marker(pytest.mark.slow)
