"""Traced values left where the user's code can see them, found and put right.

A ``TracedArray`` belongs to one trace; one left in a user object (a closure stored on
``self`` for a backward pass, a returned dataclass, a dict entry rebound before a graph
break) breaks the next eager call or makes the next compiled call fail.  ``traced_in``
walks what is reachable from a value (containers, object attributes and slots, function
closures and defaults, ``functools.partial``, bound methods) and yields the path of each
traced value; ``materialize_in`` replaces each in place with its concrete array (for the
JIT's runs through graph breaks, where the values exist); ``holds_traced`` answers whether
a value the program stores in state holds one (an exported program cannot rebuild it, so
export refuses it).
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable, Iterator, List, Optional, Tuple

import numpy as np

# how far a walk goes: deep enough for model objects, bounded for huge structures
MAX_DEPTH = 12
MAX_OBJECTS = 100_000
_ATOMS = (int, float, complex, bool, str, bytes, type(None), np.ndarray, np.generic,
          np.dtype, type, types.ModuleType, types.BuiltinFunctionType)


def _is_traced(v) -> bool:
    return getattr(type(v), "_ss_shows_ndarray", False)


def _children(v) -> Iterator[Tuple[str, Any, Callable[[Any], None]]]:
    """``(path suffix, child, setter)`` for each value ``v`` holds (setter None: the
    holder cannot be changed in place, a tuple)."""
    if isinstance(v, dict):
        for k in list(v.keys()):
            yield "[%r]" % (k,), dict.__getitem__(v, k), \
                (lambda x, k=k: dict.__setitem__(v, k, x))
    elif isinstance(v, list):
        for i in range(list.__len__(v)):
            yield "[%d]" % i, list.__getitem__(v, i), \
                (lambda x, i=i: list.__setitem__(v, i, x))
    elif isinstance(v, (tuple, set, frozenset)):
        for i, x in enumerate(v):
            yield "[%d]" % i, x, None
    elif isinstance(v, types.FunctionType):
        for name, cell in zip(v.__code__.co_freevars, v.__closure__ or ()):
            try:
                x = cell.cell_contents
            except ValueError:
                continue
            yield ".<closure %s>" % name, x, (lambda y, c=cell: setattr(c, "cell_contents", y))
        for i, x in enumerate(v.__defaults__ or ()):
            yield ".<default %d>" % i, x, None
    elif isinstance(v, functools.partial):
        yield ".func", v.func, None
        for i, x in enumerate(v.args):
            yield ".args[%d]" % i, x, None
        for k, x in v.keywords.items():
            yield ".keywords[%r]" % k, x, (lambda y, k=k: v.keywords.__setitem__(k, y))
    elif isinstance(v, types.MethodType):
        yield ".__self__", v.__self__, None
    else:
        d = getattr(v, "__dict__", None)
        if isinstance(d, dict):
            for k in list(d.keys()):
                yield ".%s" % k, d[k], (lambda x, k=k: d.__setitem__(k, x))
        for klass in type(v).__mro__:
            slots = vars(klass).get("__slots__", ())
            for n in ((slots,) if isinstance(slots, str) else slots):
                if n not in ("__dict__", "__weakref__") and isinstance(n, str):
                    try:
                        x = object.__getattribute__(v, n)
                    except AttributeError:
                        continue
                    yield ".%s" % n, x, (lambda y, n=n: object.__setattr__(v, n, y))


def traced_in(v, path: str = "") -> Iterator[Tuple[str, Any, Optional[Callable]]]:
    """``(path, traced value, setter)`` for each traced value reachable from ``v``."""
    seen: set = set()
    stack: List[Tuple[str, Any, Optional[Callable], int]] = [(path, v, None, 0)]
    while stack and len(seen) < MAX_OBJECTS:
        p, x, setter, depth = stack.pop()
        if _is_traced(x):
            yield p, x, setter
            continue
        if isinstance(x, _ATOMS) or id(x) in seen or depth > MAX_DEPTH:
            continue
        seen.add(id(x))
        try:
            kids = list(_children(x))
        except Exception:      # pragma: no cover - an object refusing introspection
            continue
        for suffix, child, set_child in kids:
            stack.append((p + suffix, child, set_child, depth + 1))


def holds_traced(v) -> Optional[str]:
    """The path (below ``v``) of a traced value ``v`` holds, or None."""
    for p, _, _ in traced_in(v):
        return p
    return None


def materialize_in(v, concrete: Callable[[Any], np.ndarray], path: str = "") -> List[str]:
    """Replace every traced value reachable from ``v`` in place by ``concrete(value)``;
    returns the paths it could not replace (held by a tuple or a default)."""
    left = []
    for p, x, setter in list(traced_in(v, path)):
        if setter is None:
            left.append(p)
        else:
            setter(concrete(x))
    return left


def reach_values(f) -> List[Tuple[str, Any]]:
    """What ``f`` reaches outside its arguments, shallowly: its object (a bound method or a
    callable object), its closure cells and the containers and objects its code names as
    globals (where a traced value could be stored)."""
    from .binding import entry_function
    fn, owner = entry_function(f)
    out: List[Tuple[str, Any]] = []
    if owner is not None:
        out.append(("self", owner))
    if fn is None:
        return out
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out.append((name, cell.cell_contents))
        except ValueError:
            continue
    g = fn.__globals__
    codes, names = [fn.__code__], []
    while codes:
        c = codes.pop()
        names.extend(c.co_names)
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    for name in dict.fromkeys(names):
        v = g.get(name)
        if v is not None and not isinstance(v, _ATOMS + (types.FunctionType,)):
            out.append((name, v))
    return out
