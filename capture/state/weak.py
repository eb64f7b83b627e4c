"""Weak references in a program's state: what the trace sees in their place.

* A ``weakref.ref`` the walk reaches (``self.parent_ref``) stands in as ``RefStandIn``, a
  ``weakref.ref`` to the same object whose call returns what the walk made of that object
  (a recording object, a traced array): what the program reads through ``self.parent_ref()``
  is state at the path ``self.parent_ref()``, read through the reference on every call and
  guarded like any other read, and its writes are replayed there.  A reference that died
  before the trace is left as it is.
* ``WeakValueDictionary``, ``WeakKeyDictionary`` and ``WeakSet`` hold their items weakly: an
  item can vanish between calls with nothing a guard could compare, so any use of one
  held as state is refused naming the line (under ``ss.compile``, that line runs eagerly).
  Their class is swapped for a refusing subclass while the trace records, and put back.
"""
from __future__ import annotations

import sys
import weakref
from typing import Dict, Optional

from symshape.errors import UserError, where
from symshape.userframe import is_internal, user_frame

from .objstate import active


class RefStandIn(weakref.ref):
    """A ``weakref.ref`` to the user's object whose call gives ``target`` (what the trace
    sees for that object)."""

    __slots__ = ("_ss_target",)

    def __new__(cls, ob, target):
        self = weakref.ref.__new__(cls, ob)
        self._ss_target = target
        return self

    def __init__(self, ob, target) -> None:
        weakref.ref.__init__(self, ob)

    def __call__(self):
        return self._ss_target


#: the weak containers of the standard library (subclasses refuse every use while recorded)
WEAK_CONTAINERS = (weakref.WeakValueDictionary, weakref.WeakKeyDictionary, weakref.WeakSet)

_USES = ("__getitem__", "__setitem__", "__delitem__", "__contains__", "__iter__", "__len__",
         "get", "pop", "popitem", "setdefault", "update", "keys", "values", "items", "copy",
         "__copy__", "__deepcopy__", "valuerefs", "itervaluerefs", "keyrefs", "add",
         "discard", "remove", "clear", "__or__", "__ior__", "__ror__", "__eq__", "__ne__",
         "union", "difference", "intersection", "issubset", "issuperset", "isdisjoint",
         "symmetric_difference", "difference_update", "intersection_update",
         "symmetric_difference_update", "__sub__", "__isub__", "__and__", "__iand__",
         "__xor__", "__ixor__", "__le__", "__lt__", "__ge__", "__gt__")

_REFUSING: Dict[type, type] = {}


def refusing_class(cls: type) -> Optional[type]:
    """The subclass of the weak container class ``cls`` whose every use by the user's code
    refuses while a trace records the object (the base class's method otherwise)."""
    got = _REFUSING.get(cls)
    if got is not None:
        return got

    def use(name: str):
        base = getattr(cls, name)

        def method(self, *a, **k):
            r = active()
            if r is not None and r.owns(self) and \
                    not is_internal(sys._getframe(1).f_code.co_filename):
                refuse_weak(cls, r.path_of(self))
            return base(self, *a, **k)
        method.__name__ = name
        return method

    ns = {n: use(n) for n in _USES if hasattr(cls, n)}
    ns["__slots__"] = ()
    try:
        sub = type(cls.__name__, (cls,), ns)
    except TypeError:                     # pragma: no cover - a class that cannot be extended
        sub = None
    _REFUSING[cls] = sub
    return sub


def refuse_weak(cls: type, path) -> None:
    """The ``UserError`` for a use of the weak container ``path`` (of class ``cls``)."""
    raise UserError(
        "the program uses %s, a %s%s: its items are held weakly and can vanish between "
        "calls with nothing an exported program could check, so a read through it could "
        "silently give a stale result; hold the objects in a plain dict / list / set (or "
        "pass them as arguments), or keep this out of the exported function"
        % (path, cls.__name__, where(user_frame())))
