"""Nested inputs and outputs: flatten lists / tuples / dicts to leaves with readable paths.

Paths read like Python: ``x``, ``batch[0]``, ``feats['a']``.  ``treespec`` describes the
container structure so that leaves can be put back in place (``unflatten``).
"""
from __future__ import annotations

from typing import Any, Callable, List, Tuple
from symshape import named_results
from symshape.errors import UserError

LEAF = ("leaf",)

# deeper nesting is refused with a UserError (a Python recursion limit is not a message)
MAX_DEPTH = 100


def key_str(k) -> str:
    return "[%r]" % (k,)


def flatten(value: Any, path: str = "", is_leaf: Callable[[Any], bool] = None,
            named: bool = False) -> Tuple[List[Tuple[str, Any]], tuple]:
    """``([(path, leaf), ...], treespec)``; containers are list, tuple and dict, and with
    ``named`` also named tuples: NumPy's results (``SVDResult``...) and the user's own, kept
    as ``("namedtuple", "SVDResult", children)`` so that ``unflatten`` rebuilds the type."""
    leaves: List[Tuple[str, Any]] = []

    def go(v, p, depth):
        if is_leaf is not None and is_leaf(v):
            leaves.append((p, v))
            return LEAF
        t = type(v)
        if named and t is not tuple and isinstance(v, tuple):
            name = named_results.name_of(t)
            if name is None and named_results.is_named_tuple(t):
                name = named_results.remember(t)         # the user's own named tuple
            if name is not None:
                return ("namedtuple", name, tuple(go(x, p + "." + f, depth + 1)
                                                   for x, f in zip(v, t._fields)))
        if (t is list or t is tuple or t is dict) and depth >= MAX_DEPTH:
            shown = p if len(p) <= 40 else p[:40] + "..."
            raise UserError("%s: lists / tuples / dicts nested more than %d deep are not "
                            "supported; flatten the structure or stack the arrays"
                            % (shown or "input", MAX_DEPTH))
        if t is list or t is tuple:
            return (t.__name__, tuple(go(x, p + "[%d]" % i, depth + 1)
                                      for i, x in enumerate(v)))
        if t is dict:
            keys = list(v)
            return ("dict", tuple(keys), tuple(go(v[k], p + key_str(k), depth + 1)
                                               for k in keys))
        leaves.append((p, v))
        return LEAF

    spec = go(value, path, 0)
    return leaves, spec


def unflatten(leaves: List[Any], spec: tuple) -> Any:
    it = iter(leaves)

    def go(s):
        if s == LEAF:
            return next(it)
        if s[0] == "dict":
            return {k: go(c) for k, c in zip(s[1], s[2])}
        if s[0] == "namedtuple":
            return named_results.type_of(s[1])(*[go(c) for c in s[2]])
        items = [go(c) for c in s[1]]
        return items if s[0] == "list" else tuple(items)

    return go(spec)


def children(spec: tuple) -> tuple:
    """The child specs of a container ``spec`` (empty for a leaf)."""
    if spec == LEAF:
        return ()
    return spec[2] if spec[0] in ("dict", "namedtuple") else spec[1]


def count_leaves(spec: tuple) -> int:
    """How many leaves ``spec`` holds."""
    return 1 if spec == LEAF else sum(count_leaves(c) for c in children(spec))
