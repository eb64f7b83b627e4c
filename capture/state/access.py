"""Access paths: how a program reaches a piece of Python state (``self.layers[3].norm.eps``).

A path is a root (``self``, a global of one module, a closure cell, an argument) and a
chain of steps (attribute, item, or the call of a ``weakref.ref``: ``self.parent_ref()``).  The same typed record names the state in messages
(``str(path)`` is the spelling of the user's code), reads and writes it at run time
(``get`` / ``set`` / ``delete`` against a ``Scope`` that holds the live roots), and is
saved with a program (``to_json`` / ``from_json``: the root's kind and name, the steps),
so a loaded program binds the same paths in a store of its own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from symshape.errors import UserError

#: root kinds: the object of a bound method, a module global, a closure variable, an argument
ROOT_KINDS = ("self", "global", "cell", "arg")


@dataclass(frozen=True)
class Root:
    """Where a path starts: ``kind`` (one of ``ROOT_KINDS``), the user's name for it, and
    ``scope`` (the module of a global, the function of a closure cell: two modules may
    both have a global ``W``)."""
    kind: str
    name: str
    scope: str = ""


@dataclass(frozen=True)
class Step:
    """One step of a path: ``kind`` ``"attr"`` (``.key``), ``"item"`` (``[key]``) or
    ``"call"`` (``()``: the object a ``weakref.ref`` refers to; ``key`` None)."""
    kind: str
    key: Any


@dataclass(frozen=True)
class AccessPath:
    """A root and the steps from it; ``str()`` spells it as the user's code does."""
    root: Root
    steps: Tuple[Step, ...] = ()

    def attr(self, name: str) -> "AccessPath":
        return AccessPath(self.root, self.steps + (Step("attr", name),))

    def item(self, key) -> "AccessPath":
        return AccessPath(self.root, self.steps + (Step("item", key),))

    def deref(self) -> "AccessPath":
        """The object the weak reference at this path refers to (``self.ref()``)."""
        return AccessPath(self.root, self.steps + (Step("call", None),))

    @property
    def parent(self) -> "AccessPath":
        return AccessPath(self.root, self.steps[:-1])

    @property
    def last(self) -> Step:
        return self.steps[-1]

    def __str__(self) -> str:
        out = self.root.name
        for s in self.steps:
            out += ".%s" % s.key if s.kind == "attr" else "()" if s.kind == "call" else \
                "[%r]" % (s.key,)
        return out

    # ------------------------------------------------------------------ run time
    def get(self, scope: "Scope"):
        """The object at this path now."""
        v = scope.root(self.root)
        for i, s in enumerate(self.steps):
            v = getattr(v, s.key) if s.kind == "attr" else v() if s.kind == "call" else \
                v[s.key]
            if v is None and s.kind == "call":
                # the object died: what the program read through it is gone
                raise AttributeError("the object %s refers to is gone"
                                     % AccessPath(self.root, self.steps[:i]))
        return v

    def set(self, scope: "Scope", value) -> None:
        """Bind ``value`` at this path (``obj.k = v``, ``c[k] = v``, ``global k = v``)."""
        if not self.steps:
            scope.set_root(self.root, value)
            return
        holder = self.parent.get(scope)
        s = self.last
        if s.kind == "attr":
            setattr(holder, s.key, value)
        else:
            holder[s.key] = value

    def delete(self, scope: "Scope") -> None:
        holder = self.parent.get(scope)
        s = self.last
        if s.kind == "attr":
            delattr(holder, s.key)
        else:
            del holder[s.key]

    # ------------------------------------------------------------------ saving
    def to_json(self) -> dict:
        return {"root": [self.root.kind, self.root.name, self.root.scope],
                "steps": [[s.kind, _key_json(s.key)] for s in self.steps]}

    @staticmethod
    def from_json(v) -> "AccessPath":
        try:
            kind, name, scope = v["root"]
            if kind not in ROOT_KINDS or not isinstance(name, str) or \
                    not isinstance(scope, str):
                raise ValueError(kind)
            steps = tuple(Step(k, _key_value(x)) for k, x in v["steps"])
            if any(s.kind not in ("attr", "item", "call") for s in steps):
                raise ValueError("step")
        except (KeyError, TypeError, ValueError) as e:
            raise UserError("saved program: malformed state path %r (%s)" % (v, e)) from None
        return AccessPath(Root(kind, name, scope), steps)


def _key_json(k):
    if isinstance(k, (str, bool)) or k is None:
        return k
    if isinstance(k, int):
        return {"int": k}
    if isinstance(k, tuple):
        return {"tuple": [_key_json(x) for x in k]}
    raise UserError("a state path uses the key %r, which a saved program cannot spell; use "
                    "str or int keys" % (k,))


def _key_value(v):
    if isinstance(v, dict) and "int" in v:
        return int(v["int"])
    if isinstance(v, dict) and "tuple" in v:
        return tuple(_key_value(x) for x in v["tuple"])
    return v


class Scope:
    """The live roots paths start from: the object of a bound method, module namespaces
    (a global root is read and bound in its module's dict), closure cells, and the
    arguments of the current call (``with_args``)."""

    def __init__(self, roots: Dict[Root, Any], holders: Dict[Root, Any] = None) -> None:
        self._roots = dict(roots)        # self / arg roots: the object itself
        self._holders = dict(holders or {})  # global roots: the module dict; cell roots: cell

    def with_args(self, args: Dict[str, Any]) -> "Scope":
        s = Scope(self._roots, self._holders)
        for name, v in args.items():
            s._roots[Root("arg", name)] = v
        return s

    def root(self, r: Root):
        if r.kind == "global":
            d = self._holders[r]
            if r.name not in d:
                raise UserError("the global %r that the program reads is gone" % r.name)
            return d[r.name]
        if r.kind == "cell":
            return self._holders[r].cell_contents
        return self._roots[r]

    def set_root(self, r: Root, value) -> None:
        if r.kind == "global":
            self._holders[r][r.name] = value
        elif r.kind == "cell":
            self._holders[r].cell_contents = value
        else:
            self._roots[r] = value

    def all_roots(self) -> List[Root]:
        """Every root this scope binds (objects, module globals, cells, arguments)."""
        return list(self._roots) + list(self._holders)

    def has(self, r: Root) -> bool:
        return r in self._roots or r in self._holders

    def holder(self, r: Root):
        return self._holders.get(r)
