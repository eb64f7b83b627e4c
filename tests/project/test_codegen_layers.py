"""The code generators' layering and sizes: the shared loop-nest code (``codegen/loopnest``)
depends on no target, the CUDA and numba targets do not import each other, and no class
or file of ``codegen/`` grows past what one reader can hold (500 and 1,000 lines)."""
import ast
import os

from import_graph import ROOT, all_imports

CODEGEN = os.path.join(ROOT, "codegen")
TARGETS = {"cuda": "symshape.codegen.cuda", "numba": "symshape.codegen.numba_backend"}
LOOPNEST = "symshape.codegen.loopnest"
MAX_CLASS = 500
MAX_FILE = 1000


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _codegen_files():
    for dirpath, dirs, files in os.walk(CODEGEN):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(dirpath, f)


def test_targets_do_not_import_each_other():
    imports = all_imports()
    found = sorted({(i.source, i.target, i.line) for i in imports for a, b in
                    (("cuda", "numba"), ("numba", "cuda"))
                    if _within(i.source, TARGETS[a]) and _within(i.target, TARGETS[b])})
    assert not found, "a code-generation target imports the other one: %s" % found


def test_loopnest_imports_no_target():
    found = sorted({(i.source, i.target, i.line) for i in all_imports()
                    if _within(i.source, LOOPNEST) and
                    any(_within(i.target, t) for t in TARGETS.values())})
    assert not found, "the shared loop-nest code imports a target: %s" % found


def test_both_targets_build_on_loopnest():
    # the thin targets: each one's kernel writer imports the shared planner and emitter
    for pkg in TARGETS.values():
        used = {i.target for i in all_imports() if i.source == pkg + ".kernels"}
        assert {LOOPNEST + ".plan", LOOPNEST + ".values"} <= used, (pkg, sorted(used))


def test_no_class_over_500_lines():
    big = []
    for path in _codegen_files():
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS:
                    big.append((os.path.relpath(path, ROOT), node.name, size))
    assert not big, "classes over %d lines: %s" % (MAX_CLASS, big)


def test_no_file_over_1000_lines():
    big = []
    for path in _codegen_files():
        with open(path) as f:
            n = sum(1 for _ in f)
        if n > MAX_FILE:
            big.append((os.path.relpath(path, ROOT), n))
    assert not big, "files over %d lines: %s" % (MAX_FILE, big)
