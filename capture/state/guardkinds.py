"""Every kind of guard on Python state, one record each (as Dynamo has one method per guard
kind): what it tests, the line of straight-line code that tests the same
(codegen/state_guards.py), why it failed, and how it reads in ``print(ep)``, so the
generated check and its message never disagree.

A guard compares the value ``v`` found at a path with ``want``, recorded by the trace:

=========== ========================================= ======================================
kind        holds when                                recorded for
=========== ========================================= ======================================
eq          ``type(v) is type(want) and v == want``   scalars, strings, tuples of them
            (NaN equals NaN)
is          ``v is want``                             callables, modules, classes, opaque
                                                      objects (capture/state/opaque.py)
type        ``type(v) is want``                       other objects
len         ``len(v) == want`` for a list/tuple/set   a container's length
keys        ``tuple(v.keys()) == want`` (in order)    a dict's keys
has         ``(key in v) == present``                 ``in`` / ``get`` on a dict or set
hasattr     ``hasattr(v, name) == present``           ``hasattr``, ``getattr(o, n, d)``,
                                                      ``try: o.x except AttributeError``
attrs       ``tuple(vars(v)) == want``                ``vars(self)`` / ``self.__dict__``
same        ``v is <the object at another path>``     two paths to one array
view        ``v`` is that view of another path        state views (capture/state/stateviews.py)
fingerprint the attributes the reached code loads from class and module attributes read where
            a class or module it touched are          the recorder cannot see the read
            unchanged (names it also stores: not)     (``Model.lr``, ``config.SCALE``)
=========== ========================================= ======================================
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from .stateviews import is_view
from .opaque import is_opaque, label as opaque_label

_CONTAINERS = (list, tuple, set)


def same_value(a, b) -> bool:
    """``a == b`` as a guard means it: NaN equals NaN, a failing ``==`` is identity."""
    try:
        r = a == b
        return bool(r) or (a != a and b != b)
    except Exception:
        return a is b


def label(v) -> str:
    """How a message names an object a guard compares by identity."""
    if is_opaque(v):
        return opaque_label(v)
    return getattr(v, "__qualname__", None) or getattr(v, "__name__", None) or \
        "<%s object>" % type(v).__name__


def index_text(idx) -> str:
    """``[a:b, 2]``: a view's index as the user writes it."""
    def one(i):
        if isinstance(i, slice):
            return "%s:%s%s" % ("" if i.start in (None, 0) else i.start,
                                "" if i.stop is None else i.stop,
                                "" if i.step in (None, 1) else ":%d" % i.step)
        return str(i)
    return "[%s]" % ", ".join(one(i) for i in idx)


_ABSENT = object()


def fingerprint(obj, names: tuple) -> tuple:
    """The values of the attributes ``names`` of a class (inherited ones included), a
    module or an object with ``__slots__``, with their types: what a ``fingerprint`` guard
    compares (the object is read through the guard's path, so a rebound one counts)."""
    out = []
    for n in names:
        v = getattr(obj, n, _ABSENT)
        out.append((type(v), v) if v is not _ABSENT else None)
    return tuple(out)


def is_plain(v, depth: int = 0) -> bool:
    """A scalar, a string or a tuple of them (a value a guard compares with ``==``)."""
    if v is None or type(v) in (bool, int, float, complex, str, bytes):
        return True
    return isinstance(v, tuple) and depth < 3 and all(is_plain(x, depth + 1) for x in v)


class Kind:
    """One guard kind: ``holds``, ``code`` (a failure test in generated code), ``reason``
    (why it failed, in the user's terms) and ``describe`` (the guard as text)."""

    def __init__(self, name: str, holds: Callable, code: Callable, reason: Callable,
                 describe: Callable) -> None:
        self.name = name
        self.holds = holds          # (v, want, resolve) -> bool
        self.code = code            # (var, want, writer) -> failure expression
        self.reason = reason        # (path, v, want) -> str
        self.describe = describe    # (path, want) -> str


def _eq_code(v, want, w) -> str:
    if isinstance(want, float) and want != want:
        return "type(%s) is not float or %s == %s" % (v, v, v)
    return "type(%s) is not %s or %s != %s" % (v, w.const(type(want)), v, w.const(want))


def _len_of(v):
    return len(v) if isinstance(v, _CONTAINERS) else type(v).__name__


KINDS: Dict[str, Kind] = {k.name: k for k in [
    Kind("eq",
         lambda v, want, res: type(v) is type(want) and same_value(v, want),
         _eq_code,
         lambda p, v, want: "%s changed: %r -> %r" % (p, want, v),
         lambda p, want: "%s == %r" % (p, want)),
    Kind("is",
         lambda v, want, res: v is want,
         lambda v, want, w: "%s is not %s" % (v, w.const(want)),
         lambda p, v, want: "%s is another object than the one traced (%s)" % (p, label(want)),
         lambda p, want: "%s is %s" % (p, label(want))),
    Kind("type",
         lambda v, want, res: type(v) is want,
         lambda v, want, w: "type(%s) is not %s" % (v, w.const(want)),
         lambda p, v, want: "%s is a %s, the program was traced with a %s" % (
             p, type(v).__name__, want.__name__),
         lambda p, want: "type(%s) is %s" % (p, want.__name__)),
    Kind("len",
         lambda v, want, res: isinstance(v, _CONTAINERS) and len(v) == want,
         lambda v, want, w: "type(%s) not in (list, tuple, set) or len(%s) != %d" % (
             v, v, want),
         lambda p, v, want: "len(%s) == %d (got %s)" % (p, want, _len_of(v)),
         lambda p, want: "len(%s) == %d" % (p, want)),
    Kind("keys",
         lambda v, want, res: isinstance(v, dict) and tuple(v.keys()) == want,
         lambda v, want, w: "type(%s) is not dict or tuple(%s) != %s" % (v, v, w.const(want)),
         lambda p, v, want: "%s has keys %s (got %s)" % (
             p, list(want), list(v.keys()) if isinstance(v, dict) else type(v).__name__),
         lambda p, want: "%s.keys() == %s" % (p, list(want))),
    Kind("has",
         lambda v, want, res: isinstance(v, (dict, set)) and (want[0] in v) == want[1],
         lambda v, want, w: "(%s in %s) is not %s" % (w.const(want[0]), v, want[1]),
         lambda p, v, want: "%r %s %s" % (want[0], "in" if want[1] else "not in", p),
         lambda p, want: "(%r in %s) == %s" % (want[0], p, want[1])),
    Kind("hasattr",
         lambda v, want, res: hasattr(v, want[0]) == want[1],
         lambda v, want, w: "hasattr(%s, %r) is not %s" % (v, want[0], want[1]),
         lambda p, v, want: "%s.%s %s" % (p, want[0], "is gone" if want[1] else
                                          "exists now (the program was traced without it)"),
         lambda p, want: "hasattr(%s, %r) == %s" % (p, want[0], want[1])),
    Kind("attrs",
         lambda v, want, res: tuple(getattr(v, "__dict__", ())) == want,
         lambda v, want, w: "tuple(%s.__dict__) != %s" % (v, w.const(want)),
         lambda p, v, want: "the attributes of %s are %s (the program read vars(%s) with %s)" % (
             p, list(getattr(v, "__dict__", ())), p, list(want)),
         lambda p, want: "list(vars(%s)) == %s" % (p, list(want))),
    Kind("same",
         lambda v, want, res: v is res(want),
         lambda v, want, w: "%s is not %s" % (v, w.path(want)),
         lambda p, v, want: "%s is no longer the same object as %s" % (p, want),
         lambda p, want: "%s is %s" % (p, want)),
    Kind("view",
         lambda v, want, res: is_view(v, res(want[0]), want[1]),
         lambda v, want, w: "not %s(%s, %s, %s)" % (w.const(is_view), v, w.path(want[0]),
                                                   w.const(want[1])),
         lambda p, v, want: "%s is no longer the view %s%s" % (p, want[0],
                                                              index_text(want[1])),
         lambda p, want: "%s is the view %s%s" % (p, want[0], index_text(want[1]))),
    Kind("fingerprint",
         lambda v, want, res: fingerprint(v, want[0]) == want[1],
         lambda v, want, w: _fingerprint_code(v, want, w),
         lambda p, v, want: "an attribute of %s changed: %s (the program may read it where "
                            "symshape cannot see the read)" % (p, _changed(v, want)),
         lambda p, want: "%s unchanged (%s)" % (p, ", ".join(want[0]))),
]}


def _fingerprint_code(v: str, want, w) -> str:
    """A fingerprint guard inlined: one ``type``-and-``==`` test per attribute name, as
    cheap as the ``eq`` guards (a missing one: ``hasattr``)."""
    tests = []
    for n, got in zip(*want):
        a = "getattr(%s, %r, None)" % (v, n)
        if got is None:
            tests.append("hasattr(%s, %r)" % (v, n))
        elif isinstance(got[1], float) and got[1] != got[1]:
            tests.append("type(%s) is not float or %s == %s" % (a, a, a))
        else:
            tests.append("type(%s) is not %s or %s != %s" % (a, w.const(got[0]), a,
                                                            w.const(got[1])))
    return " or ".join("(%s)" % t for t in tests) or "False"


def _changed(obj, want) -> str:
    names, before = want
    now = fingerprint(obj, names)
    for n, a, b in zip(names, before, now):
        if a != b:
            return "%s: %s -> %s" % (n, "unset" if a is None else repr(a[1]),
                                     "unset" if b is None else repr(b[1]))
    return "its attributes"


def failed(kind: str, path: str, v, want, resolve) -> Optional[str]:
    """None if the guard holds for ``v``, else why not."""
    k = KINDS[kind]
    return None if k.holds(v, want, resolve) else k.reason(path, v, want)


def describe(kind: str, path: str, want) -> str:
    return KINDS[kind].describe(path, want)


def failure_code(kind: str, var: str, want, writer: Any) -> str:
    """The expression, over the local ``var``, that is true when the guard fails."""
    return KINDS[kind].code(var, want, writer)
