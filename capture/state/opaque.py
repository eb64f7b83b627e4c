"""Objects the state machinery does not model: opaque, guarded by identity, never touched.

The recorder models plain Python objects by swapping their class for a recording subclass
(capture/state/objstate.py).  That is only sound for a class that Python code made: an
object of a C extension type (a Cython function of SciPy or scikit-learn, a ufunc-like
callable, a ``functools`` / ``itertools`` object), a generator or an ``Enum`` member has a
layout, a metaclass or an internal state that a subclass or a copy would break (the
interpreter can crash, ``enum`` raises).  Such an object is *opaque*: the walk never
subclasses, swaps or copies it and never walks into it; a read of it is guarded by
identity (the same object on every call); and a use that would change it (``next`` on a
generator or iterator held as state) is refused at export with a ``UserError`` naming the
line and the object (under ``ss.compile``, a graph break that runs the line eagerly).  An
iterator advanced in a way the tracer cannot see (``for v in self.gen``) is found by
comparing its position before and after the trace.
"""
from __future__ import annotations

import enum
import functools
import types
import typing
from typing import Callable, Optional

# object layouts Python code makes: a class statement's class (a heap type) holds only
# functions, its __slots__ members and the __dict__ / __weakref__ descriptors
_HEAPTYPE = 1 << 9
_C_LEVEL = (types.MethodDescriptorType, types.WrapperDescriptorType,
            types.ClassMethodDescriptorType, types.BuiltinFunctionType)
# C types the recorder models all the same (a recording copy stands in for them)
_MODELLED_C_TYPES = (types.SimpleNamespace,)
# iterators whose every step changes them: generators and the like
_ITERATORS = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
# bases that add no layout of their own (``typing.Generic`` is a C class from 3.12)
_NEUTRAL_BASES = (object, typing.Generic)


def _slots(cls: type) -> tuple:
    s = vars(cls).get("__slots__", ())
    return (s,) if isinstance(s, str) else tuple(s)


@functools.lru_cache(maxsize=4096)
def python_made(cls: type) -> bool:
    """Whether every class in ``cls``'s MRO (but ``object``) is a class Python code made,
    so a recording subclass of it has the same layout and behaviour."""
    for klass in cls.__mro__:
        if klass in _NEUTRAL_BASES:
            continue
        if not klass.__flags__ & _HEAPTYPE:
            return False
        slots = _slots(klass)
        for name, v in vars(klass).items():
            if isinstance(v, _C_LEVEL):
                return False
            if isinstance(v, types.GetSetDescriptorType) and \
                    name not in ("__dict__", "__weakref__"):
                return False
            if isinstance(v, types.MemberDescriptorType) and name not in slots:
                return False
    return True


def is_opaque(v) -> bool:
    """Whether ``v`` is an object the recorder must leave alone (see the module's doc):
    an ``Enum`` member, a generator, an iterator, or an object of a class Python code did
    not make (containers, arrays, scalars, functions, classes and modules are handled
    before this is asked)."""
    t = type(v)
    if isinstance(v, enum.Enum) or isinstance(v, _ITERATORS):
        return True
    if t in _MODELLED_C_TYPES or isinstance(v, (type, types.ModuleType, types.FunctionType,
                                                 types.MethodType)):
        return False
    return not python_made(t)


def is_iterator(v) -> bool:
    """An object ``next()`` advances (a generator, an ``itertools`` object, a file's or a
    container's iterator)."""
    return hasattr(type(v), "__next__")


def position(v) -> Optional[tuple]:
    """Where an iterator stands, to compare before and after a trace (None: it cannot
    tell).  A generator: its frame's last instruction (None when finished); a C iterator
    that pickles its state (``itertools.count``): that state."""
    if isinstance(v, _ITERATORS):
        frame = getattr(v, "gi_frame", None) or getattr(v, "cr_frame", None) or \
            getattr(v, "ag_frame", None)
        return ("frame", frame.f_lasti if frame is not None else None)
    if not is_iterator(v):
        return None
    try:
        state = v.__reduce__()
    except Exception:
        return None
    try:
        return ("reduce", repr(state[1:]))
    except Exception:  # pragma: no cover - a repr that fails
        return None


def rewinder(v) -> Optional[Callable[[], None]]:
    """A function that puts a C iterator back where it stands now, through its own pickle
    state (``list_iterator``, ``range_iterator``, ``itertools.count``: ``__reduce__``'s
    state given back to ``__setstate__``); None where it cannot (a generator: a frame
    cannot run backwards).  Whether it worked is for the caller to check with
    ``position``: an iterator run to its end drops what it iterated."""
    if isinstance(v, _ITERATORS) or not is_iterator(v):
        return None
    setstate = getattr(v, "__setstate__", None)
    try:
        state = v.__reduce__()
    except Exception:
        return None
    if setstate is None or type(state) is not tuple or len(state) < 3 or state[2] is None:
        return None
    where = state[2]
    return lambda: setstate(where)


def label(v) -> str:
    """How a message names an opaque object (``Mode.A``, ``scipy.special.expit``, ``a
    generator``)."""
    if isinstance(v, enum.Enum):
        return "%s.%s" % (type(v).__name__, v.name)
    if isinstance(v, _ITERATORS):
        return "the generator %s" % getattr(v, "__qualname__", "?")
    name = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
    if isinstance(name, str):
        mod = getattr(v, "__module__", None)
        return "%s.%s" % (mod, name) if isinstance(mod, str) and mod else name
    return "a %s object" % type(v).__name__
