"""The fast tier's marker (tests/tiers.py): every entry names a file or a test that exists, so
a renamed test cannot silently move into the fast tier, and the marker is registered."""
import ast
import os

from repo_paths import TESTS
from tiers import SLOW_FILES, SLOW_TESTS, slow_reason


def _test_names(path):
    tree = ast.parse(open(path, encoding="utf-8").read())
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test")}


def test_every_slow_file_exists():
    missing = [f for f in SLOW_FILES if not os.path.isfile(os.path.join(TESTS, f))]
    assert not missing, missing


def test_every_slow_test_exists():
    missing = []
    for key in SLOW_TESTS:
        rel, name = key.split("::")
        path = os.path.join(TESTS, rel)
        if not os.path.isfile(path) or name not in _test_names(path):
            missing.append(key)
    assert not missing, missing


def test_every_entry_says_why():
    assert all(isinstance(v, str) and v for v in list(SLOW_FILES.values()) + list(SLOW_TESTS.values()))
    assert slow_reason("proofs/test_proofs.py", "test_anything") == "every rule's Z3 proof"
    assert slow_reason("engine/test_expr.py", "test_anything") is None


def test_the_marker_is_registered(pytestconfig):
    assert any(m.startswith("slow:") for m in pytestconfig.getini("markers"))
