"""Dependencies point one way: engine (symshape/) <- capture/ <- codegen/ <- the face (the
public ``symshape`` module, the CLI).  Imports anywhere in a module count, also inside
functions.  The upward imports that exist today are listed as debts: this test fails when a
new one appears (and when a listed one is gone, so the list only shrinks)."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = {"symshape": "symshape", "capture": "symshape.capture",
            "codegen": "symshape.codegen", "cli": "symshape.cli"}
# modules of the symshape/ folder that are the face, not the engine
FACE = {"symshape", "symshape.__main__", "symshape.numpy"}
LAYER = {"engine": 0, "capture": 1, "codegen": 2, "face": 3}


def _modules():
    for folder, pkg in PACKAGES.items():
        base = os.path.join(ROOT, folder)
        for dirpath, _, files in os.walk(base):
            for f in files:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, f), base)[:-3]
                    parts = [p for p in rel.split(os.sep) if p != "__init__"]
                    name = ".".join([pkg] + parts)
                    yield name, os.path.join(dirpath, f), f == "__init__.py"


_NAMES = {name for name, _, _ in _modules()}


def layer(mod: str) -> str:
    if mod in FACE or mod.startswith("symshape.cli"):
        return "face"
    if mod.startswith("symshape.codegen"):
        return "codegen"
    if mod.startswith("symshape.capture"):
        return "capture"
    return "engine"


def _imports(name: str, path: str, is_pkg: bool):
    tree = ast.parse(open(path, encoding="utf-8").read())
    package = name if is_pkg else name.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("symshape"):
                    yield a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("symshape"):
                # ``from symshape import pytree`` / ``from . import split`` import a module
                for a in node.names:
                    sub = target + "." + a.name
                    yield sub if sub in _NAMES else target


def upward_imports():
    out = set()
    for name, path, is_pkg in _modules():
        for target in _imports(name, path, is_pkg):
            if LAYER[layer(target)] > LAYER[layer(name)]:
                out.add((name, target))
    return out


# Debts of today (issue: "layers hold only at import time"); remove an entry when you pay it.
KNOWN = {
    ("symshape.capture.program", "symshape.codegen"),   # ep.compile() reaches the backends
    ("symshape.codegen.artifact", "symshape"),           # the standalone artifact's runtime
}


def test_no_new_upward_import():
    found = upward_imports()
    new = sorted(found - KNOWN)
    paid = sorted(KNOWN - found)
    assert not new, "new upward imports (engine <- capture <- codegen <- face): %s" % new
    assert not paid, "these debts are paid: remove them from KNOWN: %s" % paid
