"""No dead code (issue: the house, round four): every module-level function and class, and
every method, of symshape/, capture/, codegen/ and cli/ is referred to somewhere in the
repository.  A reference is a name (``f``), an attribute (``x.f``), an imported name, or an
identifier inside a string that is not a docstring, in any ``.py`` file of the repository
(tests, docs, benchmarks, examples and proofs included), or an identifier in a Markdown,
TOML or text file (the docs, the entry points).  Strings count because the code reaches
functions through them: the rule table's ``"module:function"``, the generated programs'
``"_rt.map_stack(%s, ...)"`` and ``"_ss_self._miss(...)"``, ``getattr(obj, name)``.

What nothing refers to is dead, except:

- dunder methods (``__repr__``: Python calls them);
- methods whose name a dispatcher builds (``DISPATCHED``: ``ast.NodeVisitor`` calls
  ``visit_`` + the node's class name);
- functions with a decorator other than ``property`` / ``staticmethod`` / ``classmethod``
  and the like (``@implements(np.sum)``, ``@rule(...)``: the decorator registers them).

What is still unreferenced is listed in ``DEAD`` ("path:Class.method") so the list can only
shrink: a new unreferenced definition fails, and so does an entry that is referred to again
or was removed (take it off the list).  A name counts wherever it is used, whatever it is
used on: two definitions of one name live or die together (the scan reads no types)."""
import ast
import os
import re
from collections import Counter

from import_graph import PACKAGES
from repo_paths import REPO

# name patterns of methods that a dispatcher calls by a name it builds, with the reason
DISPATCHED = {
    r"^visit_": "ast.NodeVisitor / NodeTransformer call visit_<node class name>",
    r"^generic_visit$": "ast.NodeVisitor's fallback",
}
# methods a base class outside the repository calls (found only by their own super() call)
OVERRIDES = {
    "cli/check_worker.py:_OverlayLoader.get_data": "importlib's SourceFileLoader calls it",
    "cli/check_worker.py:_OverlayLoader.get_code": "importlib's SourceFileLoader calls it",
}
# decorators that do not register the function (the function is still reached by its name)
PLAIN_DECORATORS = {"property", "staticmethod", "classmethod", "cached_property", "setter",
                    "getter", "deleter", "abstractmethod", "wraps", "contextmanager"}

# definitions nothing refers to yet ("path:Class.method")
DEAD: set = set()

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SKIP_DIRS = {"__pycache__", "node_modules", "build", "dist"}


def _files(exts):
    for here, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                   and not d.endswith(".egg-info")]
        for f in files:
            if f.endswith(exts):
                yield os.path.join(here, f)


def _docstrings(tree) -> set:
    """The ids of the string nodes that are docstrings (they describe, they do not use)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                     ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def _names_in(tree, docs: set):
    """The names a syntax tree refers to (see the module docstring)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.alias):
            yield node.name.rsplit(".", 1)[-1]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docs:
            yield from _IDENT.findall(node.value)


def references() -> Counter:
    """How often the repository refers to each name (see the module docstring)."""
    names: Counter = Counter()
    for path in _files((".py",)):
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue                  # DEAD's own strings name the dead
        try:
            tree = ast.parse(open(path, encoding="utf-8").read())
        except (SyntaxError, UnicodeDecodeError):
            continue
        names.update(_names_in(tree, _docstrings(tree)))
    for path in _files((".md", ".toml", ".cfg", ".txt", ".rst")):
        names.update(_IDENT.findall(open(path, encoding="utf-8", errors="replace").read()))
    return names


def _registered(fn) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name not in PLAIN_DECORATORS:
            return True
    return False


def _excepted(name: str, fn, method: bool) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return True
    if method and any(re.search(p, name) for p in DISPATCHED):
        return True
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and _registered(fn)


def definitions():
    """(key "path:Class.method", its name) of every module-level function and class and
    every method (of classes at any depth outside functions) in the packages."""
    for folder in PACKAGES:
        for here, dirs, files in os.walk(os.path.join(REPO, folder)):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            for f in files:
                if not f.endswith(".py"):
                    continue
                path = os.path.join(here, f)
                rel = os.path.relpath(path, REPO).replace(os.sep, "/")
                tree = ast.parse(open(path, encoding="utf-8").read())
                docs = _docstrings(tree)
                for key, node in _defs(tree, rel + ":", False):
                    # a use inside its own body (a recursive call) does not keep it alive
                    yield key, node.name, sum(1 for n in _names_in(node, docs)
                                              if n == node.name)


def _defs(tree, prefix: str, in_class: bool):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not _excepted(node.name, node, in_class):
                yield prefix + node.name, node
        elif isinstance(node, ast.ClassDef):
            yield prefix + node.name, node
            yield from _defs(node, prefix + node.name + ".", True)


def dead() -> set:
    refs = references()
    return {key for key, name, own in definitions() if refs[name] <= own} - set(OVERRIDES)


def test_the_scan_checks_functions_classes_and_methods():
    tree = ast.parse("def used():\n    pass\n\n\ndef unused():\n    used()\n\n\n"
                     "class C:\n    def __repr__(self):\n        return ''\n\n"
                     "    def visit_Name(self, node):\n        pass\n\n"
                     "    @property\n    def p(self):\n        return 1\n\n"
                     "    @register\n    def r(self):\n        pass\n")
    found = {k for k, _ in _defs(tree, "m:", False)}
    assert found == {"m:used", "m:unused", "m:C", "m:C.p"}


def test_a_recursive_call_does_not_keep_a_function_alive():
    tree = ast.parse('def walk(x):\n    "walk, recursively"\n    return walk(x[0])\n')
    docs = _docstrings(tree)
    (_, fn), = _defs(tree, "m:", False)
    assert list(_names_in(tree, docs)).count("walk") == 1      # the docstring does not count
    assert sum(1 for n in _names_in(fn, docs) if n == "walk") == 1


def test_no_dead_code():
    found = dead()
    assert found - DEAD == set(), "definitions nothing in the repository refers to"
    assert DEAD - found == set(), "referred to again or removed: take them off DEAD"
