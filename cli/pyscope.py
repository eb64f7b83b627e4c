"""Which binding of a name a piece of Python source uses: scopes and bindings of a module's
syntax tree, for ``--fix`` to edit the Dim an export's spec really refers to.

Python's rules, as far as a spec needs them: a decorator (and a default value, a base class)
runs in the scope around the ``def``; a class body sees its own names and the module's but
functions inside it do not see the class's; a comprehension has its own scope.  A name
resolves to the last binding before the line that uses it, in the innermost scope that binds
it.  Bindings other than plain assignments (``for``, ``import``, ``def``, ``with ... as``)
are *opaque*: the name is bound, but not to anything the fixer can edit.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
          ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class Binding:
    """``name`` bound by ``stmt`` in ``scope``: ``value`` is the assigned expression for
    ``name = value`` / ``name: T = value``, ``tuple_index`` its position for
    ``a, b = value``; both None for opaque bindings."""

    def __init__(self, name: str, stmt: ast.AST, scope: ast.AST, value=None,
                 tuple_index: Optional[int] = None) -> None:
        self.name, self.stmt, self.scope = name, stmt, scope
        self.value, self.tuple_index = value, tuple_index

    @property
    def line(self) -> int:
        return getattr(self.stmt, "lineno", 0)


class Scopes:
    """Scope and binding tables of one module."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.scope_of: Dict[ast.AST, ast.AST] = {}
        self.parent: Dict[ast.AST, ast.AST] = {}
        self.bindings: Dict[Tuple[ast.AST, str], List[Binding]] = {}
        self._visit(tree, tree)
        for node in ast.walk(tree):
            for ch in ast.iter_child_nodes(node):
                self.parent[ch] = node
        self._collect()

    # ------------------------------------------------------------------ scopes
    def _visit(self, node: ast.AST, scope: ast.AST) -> None:
        self.scope_of[node] = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            outer = list(getattr(node, "decorator_list", [])) + list(node.args.defaults) + \
                [d for d in node.args.kw_defaults if d is not None]
            for ch in outer:
                self._visit(ch, scope)
            body = node.body if isinstance(node.body, list) else [node.body]
            for ch in body:
                self._visit(ch, node)
            return
        if isinstance(node, ast.ClassDef):
            for ch in list(node.decorator_list) + list(node.bases) + \
                    [k.value for k in node.keywords]:
                self._visit(ch, scope)
            for ch in node.body:
                self._visit(ch, node)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            first = node.generators[0].iter
            self._visit(first, scope)
            for ch in ast.walk(node):
                if ch is not node and ch is not first and ch not in self.scope_of:
                    self.scope_of[ch] = node
            for ch in ast.walk(first):
                self.scope_of.setdefault(ch, scope)
            return
        for ch in ast.iter_child_nodes(node):
            self._visit(ch, scope)

    def chain(self, node: ast.AST) -> List[ast.AST]:
        """The scopes a name used at ``node`` is looked up in, innermost first."""
        s = self.scope_of.get(node, self.tree)
        out = [s]
        p = s
        while p is not self.tree:
            p = self.scope_of.get(p, self.tree)
            if not isinstance(p, ast.ClassDef):
                out.append(p)
        return out

    # ------------------------------------------------------------------ bindings
    def _add(self, b: Binding) -> None:
        self.bindings.setdefault((b.scope, b.name), []).append(b)

    def _collect(self) -> None:
        for node in ast.walk(self.tree):
            scope = self.scope_of.get(node, self.tree)
            if isinstance(node, ast.Assign):
                for tgt in node.targets:
                    self._target(tgt, node, scope, node.value if len(node.targets) == 1
                                 else None)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                self._add(Binding(node.target.id, node, scope, node.value))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    name = a.asname or a.name.split(".")[0]
                    self._add(Binding(name, node, scope))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._add(Binding(node.name, node, scope))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                par = self.parent.get(node)
                if not isinstance(par, (ast.Assign, ast.AnnAssign, ast.Tuple, ast.List)):
                    self._add(Binding(node.id, self._stmt(node), scope))
            elif isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Store):
                par = self.parent.get(node)
                if not isinstance(par, ast.Assign):
                    for n in ast.walk(node):
                        if isinstance(n, ast.Name):
                            self._add(Binding(n.id, self._stmt(node), scope))

    def _target(self, tgt, stmt, scope, value) -> None:
        if isinstance(tgt, ast.Name):
            self._add(Binding(tgt.id, stmt, scope, value))
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            plain = all(isinstance(e, ast.Name) for e in tgt.elts)
            for i, e in enumerate(tgt.elts):
                if isinstance(e, ast.Name):
                    self._add(Binding(e.id, stmt, scope, value if plain else None,
                                      i if plain else None))
                else:
                    for n in ast.walk(e):
                        if isinstance(n, ast.Name):
                            self._add(Binding(n.id, stmt, scope))

    def _stmt(self, node: ast.AST) -> ast.AST:
        while node in self.parent and not isinstance(node, ast.stmt):
            node = self.parent[node]
        return node

    def lookup(self, name: str, at: ast.AST, line: Optional[int] = None) -> Optional[Binding]:
        """The binding of ``name`` that code at node ``at`` (running at ``line``) sees."""
        line = line if line is not None else getattr(at, "lineno", 0)
        for s in self.chain(at):
            binds = self.bindings.get((s, name))
            if not binds:
                continue
            before = [b for b in binds if b.line < line or (
                b.line == line and getattr(b.stmt, "end_col_offset", 0) <=
                getattr(at, "col_offset", 0))]
            if before:
                return before[-1]
            if not isinstance(s, ast.ClassDef) and s is not self.tree:
                return None     # a local used before assignment
        return None

    def body_of(self, stmt: ast.AST) -> Optional[List[ast.stmt]]:
        """The statement list that holds ``stmt`` directly."""
        par = self.parent.get(stmt)
        if par is None:
            return None
        for field in ("body", "orelse", "finalbody", "handlers"):
            seq = getattr(par, field, None)
            if isinstance(seq, list) and stmt in seq:
                return seq
        return None
