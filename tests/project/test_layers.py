"""Dependencies point one way: engine (symshape/) <- capture/ <- codegen/ <- the face (the
public ``symshape`` module, ``symshape.numpy`` and the CLI, cli/).  Imports anywhere in a
module count, also inside functions (tests/import_graph.py reads them from the syntax trees).
There is no import cycle, and the IR's types are recognised with ``isinstance``, never by
their class names."""
import os
import re

from import_graph import ROOT, PACKAGES, all_imports, cycles, modules

# modules of the symshape/ folder that are the face, not the engine
FACE = {"symshape", "symshape.__main__", "symshape.numpy"}
LAYER = {"engine": 0, "capture": 1, "codegen": 2, "face": 3}


def layer(mod: str) -> str:
    if mod in FACE or mod.startswith("symshape.cli"):
        return "face"
    if mod.startswith("symshape.codegen"):
        return "codegen"
    if mod.startswith("symshape.capture"):
        return "capture"
    return "engine"


def upward_imports():
    return sorted({(i.source, i.target, i.line) for i in all_imports()
                   if LAYER[layer(i.target)] > LAYER[layer(i.source)]})


def test_no_upward_import():
    found = upward_imports()
    assert not found, "upward imports (engine <- capture <- codegen <- face): %s" % found


def test_no_import_cycle():
    found = cycles(all_imports())
    assert not found, "import cycles (imports inside functions count): %s" % found


def test_the_graph_sees_every_kind_of_import(tmp_path):
    # the reader itself: top-level, function-level and relative imports are all edges
    pkg = tmp_path / "symshape"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from symshape.a import x\n    import symshape.c\n")
    (pkg / "c.py").write_text("")
    for folder in PACKAGES:
        (tmp_path / folder).mkdir(exist_ok=True)
    got = {(i.source, i.target, i.local) for i in all_imports(str(tmp_path))}
    assert got == {("symshape.a", "symshape.b", False), ("symshape.b", "symshape.a", True),
                   ("symshape.b", "symshape.c", True)}
    assert cycles(all_imports(str(tmp_path))) == [["symshape.a", "symshape.b"]]


# ``type(v).__name__ == "Subgraph"``: a class recognised by its name
_BY_NAME = re.compile(r"""__name__\s*(==|!=|in)\s*[("'\[]""")


def test_no_class_name_comparisons():
    found = []
    for _, path, _ in modules():
        with open(path, encoding="utf-8") as fh:
            for k, line in enumerate(fh, 1):
                if _BY_NAME.search(line) and '"__main__"' not in line:
                    found.append("%s:%d: %s" % (os.path.relpath(path, ROOT), k, line.strip()))
    assert not found, "recognise types with isinstance:\n" + "\n".join(found)


_FRESH_IMPORTS = r"""
import importlib, json, sys
sys.path.insert(0, %r)
import import_graph
import numpy, sympy, z3  # noqa: F401  (stay loaded: only symshape's own modules are re-imported)
bad = []
for name, _, _ in import_graph.modules():
    for m in [m for m in sys.modules if m == "symshape" or m.startswith("symshape.")]:
        del sys.modules[m]
    try:
        importlib.import_module(name)
    except Exception as e:
        bad.append("%%s: %%r" %% (name, e))
print(json.dumps(bad))
"""


def test_every_module_imports_first_in_a_fresh_interpreter():
    # the graph above does not see the implicit import of a parent package's __init__, so
    # a loop through one (namespace -> randomness -> ops/__init__ -> indexing -> namespace)
    # shows only when that module is the first one imported: import each one first
    import json
    import subprocess
    import sys
    from repo_paths import TESTS as here
    out = subprocess.run([sys.executable, "-c", _FRESH_IMPORTS % here], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
