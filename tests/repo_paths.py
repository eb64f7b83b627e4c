"""Where things are, for test files at any depth of tests/: the repository root and the
tests folder (its shared fixtures: corpus/, routed/, cli_fixtures/, serialize_fixtures/,
annotated_zoo/, and the helper modules runners.py, eager_compare.py, _bench.py)."""
import os

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
