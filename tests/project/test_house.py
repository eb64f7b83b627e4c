"""The house rules, checked on the code (issue: the house, round four): no file over 1,000
lines, no function over cyclomatic complexity 30, no private name imported from another
module, pyflakes clean.  What still breaks a rule is listed here by name, with the rule it
breaks, so the lists can only shrink: a new offender fails, and so does an entry that no
longer offends (take it off the list)."""
import ast
import os
import subprocess
import sys

import pytest

from import_graph import PACKAGES
from repo_paths import REPO

MAX_LINES = 1000
MAX_COMPLEXITY = 30

# files still over MAX_LINES
LONG_FILES: set = set()
# functions still over MAX_COMPLEXITY ("path:Class.method")
COMPLEX: set = set()
# (importing module path, imported private name) still crossing modules
PRIVATE_IMPORTS: set = set()
# (path, pyflakes message) still reported; most are imports made only for their side effect
PYFLAKES_KNOWN = set()


def _sources():
    for folder in PACKAGES:
        for here, dirs, files in os.walk(os.path.join(REPO, folder)):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(here, f)
                    yield os.path.relpath(path, REPO).replace(os.sep, "/"), path


_BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler,
             ast.Assert, ast.comprehension, ast.match_case)


def complexity(fn) -> int:
    """McCabe's number of a function: 1, plus one per branch (if / elif / ternary, loop,
    except, assert, comprehension and its ifs, match case) and per extra operand of
    and / or; nested functions and classes count on their own."""
    n = 1
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, _BRANCHES):
            n += 1 + (len(node.ifs) if isinstance(node, ast.comprehension) else 0)
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
        todo.extend(ast.iter_child_nodes(node))
    return n


def _functions(tree, prefix=""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, prefix + node.name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")


def test_complexity_counts_what_mccabe_counts():
    tree = ast.parse("def f(a, b):\n    if a and b:\n        return [x for x in a if x]\n"
                     "    for y in b:\n        try:\n            pass\n        except E:\n"
                     "            pass\n    return 1 if a else 2\n")
    assert complexity(tree.body[0]) == 1 + 1 + 1 + 2 + 1 + 1 + 1


def test_no_file_over_the_limit():
    over = {rel for rel, path in _sources()
            if sum(1 for _ in open(path, encoding="utf-8")) > MAX_LINES}
    assert over - LONG_FILES == set(), "files over %d lines" % MAX_LINES
    assert LONG_FILES - over == set(), "no longer too long: take them off LONG_FILES"


def test_no_function_over_the_complexity_limit():
    over = set()
    for rel, path in _sources():
        tree = ast.parse(open(path, encoding="utf-8").read())
        over |= {"%s:%s" % (rel, name) for name, fn in _functions(tree)
                 if complexity(fn) > MAX_COMPLEXITY}
    assert over - COMPLEX == set(), "functions over complexity %d" % MAX_COMPLEXITY
    assert COMPLEX - over == set(), "no longer too complex: take them off COMPLEX"


def _module_of(rel: str) -> str:
    return rel[:-3].replace("/", ".").replace(".__init__", "")


def test_no_private_name_imported_across_modules():
    found = set()
    for rel, path in _sources():
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.add((rel, a.name))
    assert found - PRIVATE_IMPORTS == set(), "private names imported from another module"
    assert PRIVATE_IMPORTS - found == set(), "no longer imported: take them off PRIVATE_IMPORTS"


def pyflakes_messages():
    """{(path, message)} pyflakes reports over the packages (line numbers left out)."""
    folders = [os.path.join(REPO, p) for p in PACKAGES]
    out = subprocess.run([sys.executable, "-m", "pyflakes"] + folders, capture_output=True,
                         text=True, timeout=600)
    found = set()
    for line in out.stdout.splitlines():
        path, _, rest = line.partition(":")
        rest = rest.split(":", 2)[-1].strip() if rest.count(":") >= 2 else rest
        found.add((os.path.relpath(path, REPO).replace(os.sep, "/"), rest))
    return found


def test_pyflakes_clean():
    pytest.importorskip("pyflakes")
    found = pyflakes_messages()
    assert found - PYFLAKES_KNOWN == set(), "pyflakes reports"
    assert PYFLAKES_KNOWN - found == set(), "no longer reported: take them off PYFLAKES_KNOWN"


def complexity_counts(limits=(MAX_COMPLEXITY, 20)) -> dict:
    """{limit: how many functions of the packages are over it} (the issue's measure):
    ``cd tests && python -c "import sys; sys.path[:0] = ['project']; import test_house;
    print(test_house.complexity_counts())"``."""
    scores = [complexity(fn) for _, path in _sources()
              for _, fn in _functions(ast.parse(open(path, encoding="utf-8").read()))]
    return {limit: sum(1 for c in scores if c > limit) for limit in limits}

