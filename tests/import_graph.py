"""The import graph of symshape's own modules, read from the syntax trees (nothing is
imported): every ``import`` of a symshape module anywhere in a file -- at the top or inside a
function -- is an edge.  ``tests/project/test_layers.py`` checks its layers and cycles;
``python tests/import_graph.py [ROOT]`` prints the measures of the issue "layers hold only at
import time" for the checkout at ROOT (default: this one): internal imports, how many of them
sit inside functions, the import cycles (sizes) and the largest function (``--largest N``:
the N largest)."""
from __future__ import annotations

import ast
import os
import sys
from typing import Dict, Iterator, List, NamedTuple, Set, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# source folder -> the package it installs as
PACKAGES = {"symshape": "symshape", "capture": "symshape.capture",
            "codegen": "symshape.codegen", "cli": "symshape.cli"}


class Import(NamedTuple):
    source: str         # the importing module
    target: str         # the imported symshape module
    line: int
    local: bool         # inside a function (runs when the function is called)


def modules(root: str = ROOT) -> Iterator[Tuple[str, str, bool]]:
    """(module name, file, is a package's ``__init__``) for every module of the tree."""
    for folder, pkg in PACKAGES.items():
        base = os.path.join(root, folder)
        for dirpath, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            for f in sorted(files):
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, f), base)[:-3]
                    parts = [p for p in rel.split(os.sep) if p != "__init__"]
                    yield ".".join([pkg] + parts), os.path.join(dirpath, f), f == "__init__.py"


def _tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as fh:
        return ast.parse(fh.read())


def _walk_scoped(tree: ast.AST) -> Iterator[Tuple[ast.AST, bool]]:
    """Every node with whether it sits inside a function body."""
    stack = [(tree, False)]
    while stack:
        node, local = stack.pop()
        yield node, local
        inner = local or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def file_imports(name: str, path: str, is_pkg: bool, names: Set[str]) -> List[Import]:
    """The imports of symshape modules in one file; ``from pkg import sub`` counts as an
    import of the module ``pkg.sub`` when there is one, else of ``pkg``."""
    package = name if is_pkg else name.rsplit(".", 1)[0]
    out = []
    for node, local in _walk_scoped(_tree(path)):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "symshape" or a.name.startswith("symshape."):
                    out.append(Import(name, a.name, node.lineno, local))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "symshape" or target.startswith("symshape."):
                for a in node.names:
                    sub = target + "." + a.name
                    out.append(Import(name, sub if sub in names else target, node.lineno,
                                      local))
    return sorted(out, key=lambda i: (i.source, i.line, i.target))


def all_imports(root: str = ROOT) -> List[Import]:
    mods = list(modules(root))
    names = {m for m, _, _ in mods}
    out = []
    for name, path, is_pkg in mods:
        out.extend(file_imports(name, path, is_pkg, names))
    return out


def cycles(imports: List[Import]) -> List[List[str]]:
    """The strongly connected components with more than one module (Tarjan), largest first."""
    graph: Dict[str, Set[str]] = {}
    for i in imports:
        if i.source != i.target:
            graph.setdefault(i.source, set()).add(i.target)
            graph.setdefault(i.target, set())
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on, stack, out = set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out, key=lambda c: (-len(c), c))


def largest_functions(root: str = ROOT, n: int = 1) -> List[Tuple[int, str]]:
    """(lines, "module:function") of the ``n`` longest functions."""
    out = []
    for name, path, _ in modules(root):
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((node.end_lineno - node.lineno + 1, "%s:%s" % (name, node.name)))
    return sorted(out, reverse=True)[:n]


def main(argv: List[str]) -> None:
    many = 1
    if "--largest" in argv:                 # --largest N: list the N longest functions
        i = argv.index("--largest")
        many = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    root = os.path.abspath(argv[0]) if argv else ROOT
    imports = all_imports(root)
    statements = {(i.source, i.line): i.local for i in imports}
    print("internal import statements: %d (%d inside functions); imported names: %d (%d)"
          % (len(statements), sum(statements.values()), len(imports),
             sum(i.local for i in imports)))
    cyc = cycles(imports)
    print("import cycles: %d%s" % (len(cyc), " (sizes %s)" % ", ".join(str(len(c)) for c in cyc)
                                   if cyc else ""))
    for c in cyc:
        print("  " + " ".join(c))
    size, where = largest_functions(root)[0]
    print("largest function: %d lines (%s)" % (size, where))
    if many > 1:
        for size, where in largest_functions(root, many):
            print("  %4d  %s" % (size, where))


if __name__ == "__main__":
    main(sys.argv[1:])
