"""benchmarks/models.py for the tests, loaded under its own module name (``models`` is a
common name)."""
import importlib.util
import os

_path = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "models.py")
_spec = importlib.util.spec_from_file_location("_symshape_bench_models", _path)
M = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(M)
