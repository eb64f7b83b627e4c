"""NumPy's named-tuple result types (``SVDResult``, ``SlogdetResult``, ``UniqueAllResult``...).

A program that returns ``np.linalg.svd(x)`` returns one of these; the output structure keeps
the type by its class name (``"SVDResult"``) so that a saved program names it as text and
loading resolves the name only among the types listed here (never an import by name).
"""
from __future__ import annotations

import functools
from typing import Callable, Dict, Optional

import numpy as np


def _eye():
    return np.eye(2)


# the NumPy calls whose results have the types kept: asking NumPy itself finds them wherever
# a NumPy version defines them (their modules are private and have moved between versions)
_MAKERS: Dict[str, Callable[[], object]] = {
    "SVDResult": lambda: np.linalg.svd(_eye()),
    "SlogdetResult": lambda: np.linalg.slogdet(_eye()),
    "EighResult": lambda: np.linalg.eigh(_eye()),
    "EigResult": lambda: np.linalg.eig(_eye()),
    "QRResult": lambda: np.linalg.qr(_eye()),
    "UniqueAllResult": lambda: np.unique_all(np.arange(2)),
    "UniqueCountsResult": lambda: np.unique_counts(np.arange(2)),
    "UniqueInverseResult": lambda: np.unique_inverse(np.arange(2)),
}


@functools.lru_cache(maxsize=None)
def by_name() -> Dict[str, type]:
    """The named-tuple result types of this NumPy, by class name."""
    out: Dict[str, type] = {}
    for name, make in _MAKERS.items():
        try:
            t = type(make())
        except AttributeError:          # a NumPy without this function (unique_all < 2.0)
            continue
        if t is not tuple and issubclass(t, tuple) and hasattr(t, "_fields"):
            out[name] = t
    return out


def name_of(t: type) -> Optional[str]:
    """The safe name of ``t`` when it is one of NumPy's named-tuple result types, else None."""
    for name, known in by_name().items():
        if known is t:
            return name
    return None


def resolve(name) -> Optional[type]:
    """The NumPy result type called ``name``, or None when ``name`` names none of them."""
    return by_name().get(name) if isinstance(name, str) else None


# The user's own named tuples that programs of this process return, by a key made of the
# class's module and qualified name (``model.Out``): an exported or compiled program returns
# the same type eager code does.  A saved program names only NumPy's types (loading never
# imports what a file names), so there they come back as plain tuples of the same items.
_USER: Dict[str, type] = {}
_USER_KEY: Dict[type, str] = {}      # the same, class -> key


def is_named_tuple(t: type) -> bool:
    """Whether ``t`` is a named-tuple class (``collections.namedtuple``, ``typing.NamedTuple``)."""
    return t is not tuple and issubclass(t, tuple) and hasattr(t, "_fields")


def remember(t: type) -> str:
    """The key of the user's named-tuple type ``t``, made once per class (two classes of
    one qualified name get distinct keys)."""
    if t in _USER_KEY:
        return _USER_KEY[t]
    base = key = "%s.%s" % (getattr(t, "__module__", "?"), getattr(t, "__qualname__", t.__name__))
    n = 1
    while key in _USER or key in by_name():
        n += 1
        key = "%s#%d" % (base, n)
    _USER[key], _USER_KEY[t] = t, key
    return key


def type_of(name: str) -> type:
    """The named-tuple type a structure names: NumPy's result type, or the user's type a
    program of this process returned."""
    t = resolve(name)
    return t if t is not None else _USER[name]


def is_users(name) -> bool:
    """Whether ``name`` is the key of a user's type (which a saved file cannot name)."""
    return isinstance(name, str) and resolve(name) is None and name in _USER
