"""Python state as eager Python sees it: what a trace read, what it wrote, and undoing it.

Design (one mechanism for export and the JIT):

* **Recording stand-ins, never edits.**  While a trace runs, every container the program
  reaches as state (a ``dict`` or ``list`` held by ``self``, a global, a cell, another
  container, or passed as an argument) is replaced *in its parent slot* by a recording copy
  (``RecDict`` / ``RecList``: the same items, a subclass that logs reads and writes), so
  the user's container is never modified.  A plain object (user classes, dataclasses) keeps
  its identity: its ``__class__`` is swapped for a cached recording subclass (same layout,
  ``__class__`` still reads as the user's class) and its ``__dict__`` is snapshotted.
  Globals and closure cells cannot be intercepted (``STORE_GLOBAL``), so the names a
  function uses are snapshotted and diffed after the trace.  ``Recorder.restore`` puts
  every class, ``__dict__``, parent slot, global and cell back exactly (identity and
  values) in a ``finally``: after export returns or raises, nothing of the trace is left.
* **Reads** are logged with their typed access path (``capture/state/access.py``) and the value
  seen, once per path and only when the program did not write that path before: they
  become the guards (``==`` for Python scalars and strings, identity for callables,
  modules and classes, ``type`` for objects, lengths and keys for containers).
* **Writes** (attribute and item rebinds, deletions, ``append/extend/insert/pop/clear``,
  ``update/pop/setdefault/clear``, a global or cell rebound) are logged in program order;
  at the end their values are turned into replayable specs (``values``): a graph value
  (computed by the program), a state array or object as it was when the call began
  (identity), a Python constant, a new list/tuple/dict of specs, or arithmetic over
  scalars the program read (``self.t += 1``: a ``Tracked`` number, used in a second trace
  for scalar state the program both reads and writes).  What cannot be replayed (a new
  object of a user class, an unsupported container method) is a ``UserError`` naming the
  user line.

The result, ``StateProgram`` (capture/state/stateprog.py), is what generated code calls at run
time: ``begin`` checks the guards and reads the state arrays through their paths,
``replay`` performs the writes.
"""
from __future__ import annotations

import operator
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symint import SymInt
from symshape.userframe import is_internal, user_frame

from .access import AccessPath
from .guardkinds import is_plain
from .unrecorded import Unrecorded

# the recorder of the trace in progress (None outside one); recording stand-ins consult it
_ACTIVE: List["Recorder"] = []

SCALARS = (bool, int, float, complex, str, bytes, type(None))
_MISSING = object()


def active() -> Optional["Recorder"]:
    return _ACTIVE[-1] if _ACTIVE else None


# --------------------------------------------------------------------------- records
class Read:
    """The program read ``value`` at ``path`` (``kind``: ``value`` / ``len`` / ``keys`` /
    ``has``: for ``has``, ``value`` is ``(key, present)``)."""
    __slots__ = ("path", "kind", "value", "frame")

    def __init__(self, path: AccessPath, kind: str, value, frame) -> None:
        self.path, self.kind, self.value, self.frame = path, kind, value, frame


class Effect:
    """A write, in program order: ``op`` on the object at ``path`` with ``args`` (live
    values during the trace, replayable specs after ``Recorder.finish``)."""
    __slots__ = ("op", "path", "args", "frame")

    def __init__(self, op: str, path: AccessPath, args: tuple, frame) -> None:
        self.op, self.path, self.args, self.frame = op, path, args, frame

    def target(self) -> str:
        """The path written, as the user spells it (``self.x``, ``self.cache``)."""
        if self.op == "setattr" or self.op == "delattr":
            return str(self.path.attr(self.args[0]))
        if self.op in ("setitem", "delitem"):
            return str(self.path.item(self.args[0]))
        return str(self.path)


def _frame():
    return user_frame(3)


def _user_caller() -> bool:
    """Whether the caller of the recording method is the user's code (not symshape's)."""
    return not is_internal(sys._getframe(2).f_code.co_filename)


# --------------------------------------------------------------------------- stand-ins
def _list_layout(v) -> tuple:
    return ("len", list.__len__(v))


def _dict_layout(v) -> tuple:
    return ("keys", tuple(dict.keys(v)))


class _Recording:
    """What the recording stand-ins share: the recorder, if it records this object."""

    __slots__ = ()

    def _rec(self):
        r = active()
        return r if r is not None and r.owns(self) else None


def _refused(base: type, name: str):
    """A mutating method the exported program cannot replay: refused (naming the line)
    while a trace records this object, the base class's method otherwise."""
    def method(self, *a, **k):
        r = self._rec()
        if r is not None:
            r.refuse("%s.%s on %s" % (base.__name__, name, self._ss_path))
        return getattr(base, name)(self, *a, **k)
    method.__name__ = name
    return method


def _reading(base: type, name: str):
    """A method that reads the whole container (``index``, ``count``, ``copy``, ``+``,
    ``==``, ``|``, ``issubset``...): its items are read (and so guarded) first, then the
    base class's method runs."""
    def method(self, *a, **k):
        if self._rec() is not None:
            self._read_all()
        return getattr(base, name)(self, *a, **k)
    method.__name__ = name
    return method


_LIST_READS = ("index", "count", "copy", "__add__", "__radd__", "__mul__", "__rmul__",
               "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__reversed__")
_DICT_READS = ("copy", "__eq__", "__ne__", "__or__", "__ror__", "__reversed__")
_SET_READS = ("issubset", "issuperset", "isdisjoint", "union", "intersection",
              "difference", "symmetric_difference", "copy", "__or__", "__ror__", "__and__",
              "__rand__", "__sub__", "__rsub__", "__xor__", "__rxor__", "__eq__", "__ne__",
              "__lt__", "__le__", "__gt__", "__ge__")


class RecList(_Recording, list):
    """A list that logs the program's reads and writes (a stand-in during a trace)."""

    __slots__ = ("_ss_path", "_ss_added")

    def _added(self) -> int:
        """How many items at the end this trace appended (a pop() takes its own)."""
        try:
            return self._ss_added
        except AttributeError:
            return 0

    def __len__(self):
        r = self._rec()
        n = list.__len__(self)
        if r is not None:
            r.read(self._ss_path, "len", n)
        return n

    def __iter__(self):
        len(self)
        for i in range(list.__len__(self)):
            yield self[i]

    def __getitem__(self, i):
        r = self._rec()
        if r is not None and isinstance(i, slice):
            len(self)
            return [self[k] for k in range(*i.indices(list.__len__(self)))]
        v = list.__getitem__(self, i)
        if r is not None:
            n = list.__len__(self)
            if i < 0:
                r.read(self._ss_path, "len", n)
                i += n
            v = r.read(self._ss_path.item(i), "value", v)
        return v

    def __contains__(self, v):
        return any(x is v or x == v for x in self)

    def __setitem__(self, i, v):
        r = self._rec()
        if r is not None:
            if not isinstance(i, int):
                r.refuse("a slice assignment to the list %s" % self._ss_path)
            if i < 0:
                r.read(self._ss_path, "len", list.__len__(self))
                i += list.__len__(self)
            r.effect("setitem", self._ss_path, (i, v), layout=_list_layout(self))
        list.__setitem__(self, i, v)

    def __delitem__(self, i):
        r = self._rec()
        if r is not None:
            if not isinstance(i, int):
                r.refuse("deleting a slice of the list %s" % self._ss_path)
            if i < 0:
                r.read(self._ss_path, "len", list.__len__(self))
                i += list.__len__(self)
            r.effect("delitem", self._ss_path, (i,), layout=_list_layout(self))
        list.__delitem__(self, i)

    def append(self, v):
        self._op("append", v)
        list.append(self, v)
        self._ss_added = self._added() + 1

    def extend(self, vs):
        vs = list(vs)
        self._op("extend", vs)
        list.extend(self, vs)
        self._ss_added = self._added() + len(vs)

    def __iadd__(self, vs):
        self.extend(vs)
        return self

    def insert(self, i, v):
        r = self._rec()
        if r is not None and i < 0:
            r.read(self._ss_path, "len", list.__len__(self))
        self._op("insert", i, v)
        list.insert(self, i, v)

    def pop(self, i=-1):
        r = self._rec()
        if r is not None and i == -1 and self._added() > 0:
            self._ss_added -= 1          # an item this trace appended: no layout read
        elif r is not None:
            r.read(self._ss_path, "len", list.__len__(self))
        if r is not None:
            r.effect("pop", self._ss_path, (i,), layout=_list_layout(self))
        return list.pop(self, i)

    def clear(self):
        self._op("clear")
        list.clear(self)

    def reverse(self):
        self._op("reverse")
        list.reverse(self)

    def _op(self, name, *args):
        r = self._rec()
        if r is not None:
            r.effect(name, self._ss_path, args, layout=_list_layout(self))

    def _read_all(self):
        for _ in self:
            pass

    remove = _refused(list, "remove")
    sort = _refused(list, "sort")
    __imul__ = _refused(list, "__imul__")
    locals().update({_n: _reading(list, _n) for _n in _LIST_READS})
    __hash__ = None


class RecDict(_Recording, dict):
    """A dict that logs the program's reads and writes (a stand-in during a trace)."""

    __slots__ = ("_ss_path",)

    def _keys_read(self):
        r = self._rec()
        if r is not None:
            r.read(self._ss_path, "keys", tuple(dict.keys(self)))

    def __getitem__(self, k):
        v = dict.__getitem__(self, k)
        r = self._rec()
        if r is not None:
            v = r.read(self._ss_path.item(k), "value", v)
        return v

    def get(self, k, default=None):
        r = self._rec()
        present = dict.__contains__(self, k)
        if r is not None:
            r.read(self._ss_path, "has", (k, present))
        return self[k] if present else default

    def __contains__(self, k):
        present = dict.__contains__(self, k)
        r = self._rec()
        if r is not None:
            r.read(self._ss_path, "has", (k, present))
        return present

    def __len__(self):
        self._keys_read()
        return dict.__len__(self)

    def __iter__(self):
        self._keys_read()
        return iter(list(dict.keys(self)))

    def keys(self):
        self._keys_read()
        return list(dict.keys(self))

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def __setitem__(self, k, v):
        self._op("setitem", k, v)
        dict.__setitem__(self, k, v)

    def __delitem__(self, k):
        self._op("delitem", k)
        dict.__delitem__(self, k)

    def update(self, *a, **kw):
        items = dict(*a, **kw)
        self._op("update", items)
        dict.update(self, items)

    def pop(self, k, *default):
        r = self._rec()
        present = dict.__contains__(self, k)
        if r is not None:
            r.read(self._ss_path, "has", (k, present))
            if present:
                r.effect("pop", self._ss_path, (k,), on_dict=True,
                         layout=_dict_layout(self))
        return dict.pop(self, k, *default)

    def setdefault(self, k, default=None):
        if k in self:
            return self[k]
        self[k] = default
        return default

    def clear(self):
        self._op("clear")
        dict.clear(self)

    def _op(self, name, *args):
        r = self._rec()
        if r is not None:
            r.effect(name, self._ss_path, args, on_dict=True, layout=_dict_layout(self))

    def __ior__(self, other):
        self.update(other)            # ``self.stats |= {...}``: replayed as update
        return self

    def _read_all(self):
        self.items()

    popitem = _refused(dict, "popitem")
    locals().update({_n: _reading(dict, _n) for _n in _DICT_READS})
    __hash__ = None


class RecSet(_Recording, set):
    """A set that logs the program's reads and writes (a stand-in during a trace)."""

    __slots__ = ("_ss_path",)

    def __contains__(self, v):
        present = set.__contains__(self, v)
        r = self._rec()
        if r is not None:
            r.read(self._ss_path, "has", (v, present))
        return present

    def __len__(self):
        r = self._rec()
        if r is not None:
            r.read(self._ss_path, "len", set.__len__(self))
        return set.__len__(self)

    def __iter__(self):
        r = self._rec()
        if r is not None:
            # its items (the attribute read of the set itself is a read of another kind)
            r.read(self._ss_path, "items", set(set.__iter__(self)))
        return set.__iter__(self)

    def _op(self, name, *args):
        r = self._rec()
        if r is not None:
            r.effect(name, self._ss_path, args, layout=("len", set.__len__(self)))

    def add(self, v):
        self._op("add", v)
        set.add(self, v)

    def discard(self, v):
        self._op("discard", v)
        set.discard(self, v)

    def remove(self, v):
        self._op("remove", v)
        set.remove(self, v)

    def update(self, *vs):
        vs = [set(x) for x in vs]
        self._op("update", *vs)
        set.update(self, *vs)

    def clear(self):
        self._op("clear")
        set.clear(self)

    def _read_all(self):
        iter(self)

    locals().update({_n: _reading(set, _n) for _n in _SET_READS})
    __hash__ = None
    def __ior__(self, other):
        self.update(other)            # ``self.seen |= {...}``: replayed as update
        return self

    pop = _refused(set, "pop")
    __iand__ = _refused(set, "__iand__")
    __isub__ = _refused(set, "__isub__")
    __ixor__ = _refused(set, "__ixor__")
    difference_update = _refused(set, "difference_update")
    intersection_update = _refused(set, "intersection_update")
    symmetric_difference_update = _refused(set, "symmetric_difference_update")


class AppendOnly(list):
    """Stands, in a trace, for a list argument the program only appends to (the JIT's
    ``history.append(loss)``): any list is accepted for it, whatever its length or items,
    and the appends are replayed on the caller's list."""

    __slots__ = ()
    _ss_any_of_its_class = True     # symshape/specs/matching.py: an input leaf, checked by class


_REC_CLASSES: Dict[type, type] = {}


def _data_descriptor(cls: type, name: str) -> bool:
    """Whether ``cls.name`` is a property or another descriptor with ``__set__`` (an
    assignment runs its code instead of storing in ``__dict__``)."""
    for klass in cls.__mro__:
        d = vars(klass)
        if name in d:
            return hasattr(type(d[name]), "__set__") and \
                not isinstance(d[name], types.MemberDescriptorType)
    return False


def recording_class(cls: type) -> Optional[type]:
    """A subclass of ``cls`` that logs attribute reads and writes of its instances while a
    trace records them (``__class__`` still reads as ``cls``); None if ``cls`` cannot be
    subclassed that way."""
    got = _REC_CLASSES.get(cls)
    if got is not None or cls in _REC_CLASSES:
        return got
    has_getattr = hasattr(cls, "__getattr__")
    is_module = issubclass(cls, types.ModuleType)

    def __getattribute__(self, name):
        if name == "__class__":
            return cls
        r = active()
        try:
            v = super(rec, self).__getattribute__(name)
        except AttributeError:
            # absence is state too: ``hasattr``, ``getattr(o, n, d)``, ``try: o.x`` decide
            # a lazy initialization (a class with __getattr__ answers for itself)
            if r is not None and not name.startswith("__") and not has_getattr:
                path = r.path_of(self)
                if path is not None:
                    r.read(path, "hasattr", (name, False))
            raise
        if r is not None:
            path = r.path_of(self)
            if path is None:
                return v
            if name == "__dict__":
                # ``vars(self)`` / ``self.__dict__`` in the user's code: the attribute names
                # it may iterate or test (``"W" in self.__dict__``)
                if _user_caller():
                    r.read(path, "attrs", r.initial_attrs(self, v))
                return v
            if name.startswith("__") or is_module and not _user_caller():
                # (a module's attributes: only what the user's code reads is state; the
                # tracer routes names in it while tracing, other threads too)
                return v
            d = object.__getattribute__(self, "__dict__")
            if name in d:
                v = r.read(path.attr(name), "value", v)
            elif is_plain(v):
                # a class attribute read through the instance (a hyperparameter on the
                # class, a class default): guarded by value like an instance attribute
                v = r.read(path.attr(name), "value", v)
        return v

    def __setattr__(self, name, v):
        r = active()
        if r is not None and not _data_descriptor(cls, name):
            # (a property's setter records what it writes itself: replaying the
            # assignment too would run the setter twice)
            path = r.path_of(self)
            if path is not None:
                r.effect("setattr", path, (name, v))
        super(rec, self).__setattr__(name, v)

    def __delattr__(self, name):
        r = active()
        if r is not None:
            path = r.path_of(self)
            if path is not None:
                r.effect("delattr", path, (name,))
        super(rec, self).__delattr__(name)

    try:
        rec = type(cls.__name__, (cls,), {
            "__slots__": (), "__getattribute__": __getattribute__,
            "__setattr__": __setattr__, "__delattr__": __delattr__,
            "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "_ss_recording": True})
    except Exception:          # a final class (bool), or one whose metaclass refuses
        rec = None
    _REC_CLASSES[cls] = rec
    return rec


# --------------------------------------------------------------------------- tracked scalars
_BINOPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow,
}


class Tracked:
    """A Python number read from state that the program also writes (``self.t``): the
    arithmetic on it is recorded (``expr``: a spec over the values read when the call
    began), so the write is replayed with the run-time value.  Any other use (a branch, a
    size, an array operand, formatting) *materializes* it: the plain number, with an
    ``==`` guard on every read it came from."""

    __slots__ = ("value", "expr", "sources")

    def __init__(self, value, expr, sources) -> None:
        self.value = value
        self.expr = expr                 # ("read", path) | ("op", name, a, b) | ("neg", a)
        self.sources = sources           # the paths read

    def materialize(self):
        r = active()
        if r is not None:
            for p in self.sources:
                r.guard_tracked(p)
        return self.value

    # arithmetic keeps tracking
    def _bin(self, other, name, flip=False):
        if isinstance(other, Tracked):
            oe, ov, os_ = other.expr, other.value, other.sources
        elif type(other) in (int, float, bool, complex):
            oe, ov, os_ = ("const", other), other, ()
        elif type(other) is SymInt:
            # a size (``self.count += x.shape[0]``): its run-time value, not this trace's
            oe, ov, os_ = ("size", other), other, ()
        else:
            return NotImplemented
        a, b = (("const", self.value) if False else self.expr, oe)
        av, bv = self.value, ov
        if flip:
            a, b, av, bv = b, a, bv, av
        return Tracked(_BINOPS[name](av, bv), ("op", name, a, b), self.sources + tuple(os_))

    def __neg__(self):
        return Tracked(-self.value, ("neg", self.expr), self.sources)

    def __pos__(self):
        return self

    # every other use materializes
    def __bool__(self):
        return bool(self.materialize())

    def __int__(self):
        return int(self.materialize())

    def __float__(self):
        return float(self.materialize())

    def __complex__(self):
        return complex(self.materialize())

    def __index__(self):
        return operator.index(self.materialize())

    def __hash__(self):
        return hash(self.materialize())

    def __eq__(self, o):
        return self.materialize() == (o.materialize() if isinstance(o, Tracked) else o)

    def __ne__(self, o):
        return not self == o

    def __lt__(self, o):
        return self.materialize() < _plain(o)

    def __le__(self, o):
        return self.materialize() <= _plain(o)

    def __gt__(self, o):
        return self.materialize() > _plain(o)

    def __ge__(self, o):
        return self.materialize() >= _plain(o)

    def __format__(self, spec):
        return format(self.materialize(), spec)

    def __repr__(self):
        return repr(self.materialize())

    __str__ = __repr__

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.materialize(), dtype=dtype)

    def __round__(self, n=None):
        return round(self.materialize(), n)

    def __abs__(self):
        return abs(self.materialize())


for _name in _BINOPS:
    setattr(Tracked, "__%s__" % _name,
            (lambda n: lambda self, o: self._bin(o, n))(_name))
    setattr(Tracked, "__r%s__" % _name,
            (lambda n: lambda self, o: self._bin(o, n, flip=True))(_name))
del _name


def _plain(v):
    return v.materialize() if isinstance(v, Tracked) else v


def evaluate_expr(e, read: Callable[[AccessPath], Any], slots: tuple = ()):
    """The value of a tracked expression with each read taken from ``read(path)`` and
    each size from ``slots`` (the program's run-time values)."""
    kind = e[0]
    if kind == "read":
        return read(e[1])
    if kind == "const":
        return e[1]
    if kind == "slot":
        return int(slots[e[1]])
    if kind == "neg":
        return -evaluate_expr(e[1], read, slots)
    return _BINOPS[e[1]](evaluate_expr(e[2], read, slots), evaluate_expr(e[3], read, slots))


def expr_reads(e) -> List[AccessPath]:
    if e[0] == "read":
        return [e[1]]
    if e[0] in ("const", "slot", "size"):
        return []
    if e[0] == "neg":
        return expr_reads(e[1])
    return expr_reads(e[2]) + expr_reads(e[3])


def materialize(v):
    """``v`` with a tracked number made plain (guarded): for code outside the recorder's
    reach (an array operand)."""
    return v.materialize() if isinstance(v, Tracked) else v


# --------------------------------------------------------------------------- recorder
class Recorder:
    """Logs one trace's reads and writes of Python state and undoes every change.

    ``tracked``: paths (text) of scalar state the program both reads and writes, read as
    ``Tracked`` numbers (known from an earlier trace of the same program)."""

    def __init__(self, tracked: frozenset = frozenset()) -> None:
        self.paths: Dict[int, AccessPath] = {}      # id(live stand-in or object) -> path
        self._stand_ins: Dict[int, Any] = {}        # id(user container) -> its stand-in
        self._keep: List[Any] = []
        self.reads: List[Read] = []
        self._read_keys: set = set()
        self.effects: List[Effect] = []
        self.written: set = set()                   # path texts written so far
        # id(recorded object) -> its attribute names when the trace began
        self._attr_names: Dict[int, tuple] = {}
        self.reshaped: set = set()                  # dicts whose keys the trace changed
        # container path text -> (path, "len" / "keys", value) before the trace changed it
        self.initial_layout: Dict[str, Tuple[AccessPath, str, Any]] = {}
        self.tracked = tracked
        self.tracked_guarded: set = set()           # tracked path texts that materialized
        self._undo: List[Callable[[], None]] = []
        self._globals: List[Tuple[dict, str, Any, bool, AccessPath]] = []
        self._cells: List[Tuple[Any, Any, AccessPath]] = []
        self._placed: Dict[int, Any] = {}          # what each watched slot held when the trace began
        self.tracked_reads: Dict[str, Tuple[AccessPath, Any]] = {}
        self.refusals: List[str] = []
        self.aliases: List[Tuple[AccessPath, AccessPath]] = []   # (path, first path)
        self.cond_depth = 0             # inside the branches of an ss.cond being traced
        # (the size a run-time check tests, its text, how many writes came before it)
        self.check_points: List[Tuple[Any, str, int]] = []
        # what the recorder cannot see (slots, __dict__ writes, class attributes, library
        # containers, files): snapshotted, compared after the trace, put back
        self.unrecorded = Unrecorded()

    # ------------------------------------------------------------------ during the walk
    def owns(self, obj) -> bool:
        return id(obj) in self.paths

    def path_of(self, obj) -> Optional[AccessPath]:
        return self.paths.get(id(obj))

    def check_point(self, size, text: str) -> None:
        """A run-time check on ``size`` (its raise ``text``) comes here in program order:
        when it fails, the writes recorded so far are replayed before it raises."""
        self.check_points.append((size, text, len(self.effects)))

    def container(self, v, path: AccessPath):
        """The recording stand-in for the user's dict or list ``v`` (a copy; ``v`` itself
        is never modified), or ``v`` for other containers."""
        t = type(v)
        if t is AppendOnly:
            t = list
        if t is not dict and t is not list and t is not set:
            return v
        got = self._stand_ins.get(id(v))
        if got is not None:
            return got
        new = RecDict(v) if t is dict else RecList(v) if t is list else RecSet(v)
        new._ss_path = path
        self._stand_ins[id(v)] = new
        self._keep.append(v)
        self.paths[id(new)] = path
        self.originals[id(new)] = v
        return new

    @property
    def originals(self) -> Dict[int, Any]:
        d = self.__dict__.get("_originals")
        if d is None:
            d = self.__dict__["_originals"] = {}
        return d

    def plain_object(self, obj, path: AccessPath):
        """Record ``obj`` (an object with a ``__dict__``): snapshot its attributes and swap
        its class for the recording subclass, both undone by ``restore``; where the class
        cannot be swapped (``types.SimpleNamespace``), a recording copy stands in for it in
        its parent slot and ``obj`` stays untouched.  Returns what stands for ``obj``."""
        if id(obj) in self.paths:
            return obj
        cls = type(obj)
        rec = recording_class(cls) if not getattr(cls, "_ss_recording", False) else None
        if rec is not None:
            d = obj.__dict__
            snap = dict(d)
            self._attr_names[id(obj)] = tuple(snap)
            try:
                object.__setattr__(obj, "__class__", rec)   # frozen dataclasses too
            except TypeError:
                pass
            else:
                self.paths[id(obj)] = path
                self._keep.append(obj)
                self._undo.append(lambda: (d.clear(), d.update(snap)))
                self._undo.append(lambda: object.__setattr__(obj, "__class__", cls))
                self._watch_dict(obj, path)
                return obj
            try:
                new = rec.__new__(rec)
                object.__getattribute__(new, "__dict__").update(obj.__dict__)
            except Exception:
                new = None
            if new is not None:
                self._attr_names[id(new)] = tuple(obj.__dict__)
                self.paths[id(new)] = path
                self._stand_ins[id(obj)] = new
                self._keep.append(obj)
                self._watch_dict(new, path)
                return new
        # neither: the attributes are still snapshotted (writes undone, and refused: not
        # recorded)
        self._keep.append(obj)
        d = obj.__dict__
        snap = dict(d)
        self._undo.append(lambda: (d.clear(), d.update(snap)))
        self.unrecorded.watch_dict(obj, path, None)
        return obj

    def initial_attrs(self, obj, d) -> tuple:
        """The attribute names ``obj`` had when the trace began (what a read of
        ``vars(obj)`` is guarded on: the trace's own writes are replayed)."""
        got = self._attr_names.get(id(obj))
        return got if got is not None else tuple(d)

    def _watch_dict(self, obj, path: AccessPath) -> None:
        # a key that changes without a recorded attribute write was written through
        # ``__dict__`` / ``vars()``
        self.unrecorded.watch_dict(obj, path, self.written)

    def watch_global(self, g: dict, name: str, path: AccessPath) -> None:
        """Snapshot the global ``name`` of the module dict ``g`` (restored, and diffed to
        find ``global name; name = ...``)."""
        present = name in g
        self._globals.append((g, name, g.get(name), present, path))

    def watch_foreign(self, v, path: AccessPath) -> None:
        """A dict or list of a subclass (``OrderedDict``, ``defaultdict``, ``Counter``):
        its contents are restored after the trace, and a change the program made is
        refused (it is not recorded, so it could not be replayed)."""
        self._keep.append(v)
        self.unrecorded.watch_container(v, path)

    def watch_cell(self, cell, path: AccessPath) -> None:
        try:
            v = cell.cell_contents
        except ValueError:
            return
        self._cells.append((cell, v, path))

    def scalar_read(self, v, path: AccessPath):
        """What the program sees for the scalar ``v`` at ``path``: a ``Tracked`` number
        for scalar state it also writes, else ``v``."""
        if str(path) in self.tracked and type(v) in (int, float, complex):
            self.tracked_reads.setdefault(str(path), (path, v))
            return Tracked(v, ("read", path), (path,))
        return v

    def start(self) -> None:
        """The walk is done: remember what each watched global and cell holds now (the
        stand-ins), so only the program's own rebinds count as writes."""
        for i, (g, name, _, _, _) in enumerate(self._globals):
            self._placed[i] = g.get(name, _MISSING)
        for i, (cell, _, _) in enumerate(self._cells):
            self._placed[-1 - i] = cell.cell_contents
        self.unrecorded.start()

    # ------------------------------------------------------------------ during the trace
    def read(self, path: AccessPath, kind: str, value):
        """Log a read (the first of each path, unless this trace wrote it before) and
        return what the program sees: ``value``, or a ``Tracked`` number."""
        text = str(path)
        if kind == "hasattr" and str(path.attr(value[0])) in self.written:
            return value            # what this trace set (or deleted) itself
        if any(text == w or text.startswith(w + ".") or text.startswith(w + "[")
               for w in self.written) or kind != "value" and text in self.reshaped:
            # reading what this trace wrote; a length or the keys still derive from the
            # container's layout when the call began (append, then len): guard that
            mine = kind == "has" and str(path.item(value[0])) in self.written
            first = self.initial_layout.pop(text, None) if kind != "value" and not mine \
                else None
            if first is not None:
                self.reads.append(Read(first[0], first[1], first[2], _frame()))
            return value
        if kind == "value":
            value = self.scalar_read(value, path)
        key = (text, kind, value[0] if kind in ("has", "hasattr") else None)
        if key in self._read_keys:
            return value
        self._read_keys.add(key)
        if not (kind == "value" and isinstance(value, Tracked)):
            self.reads.append(Read(path, kind, value, _frame()))   # Tracked: if it materializes
        return value

    def guard_tracked(self, path: AccessPath) -> None:
        self.tracked_guarded.add(str(path))

    def effect(self, op: str, path: AccessPath, args: tuple, on_dict: bool = False,
               layout=None) -> None:
        """Log a write (``layout``: the container's length or keys before it, for a read
        of its layout later in the trace)."""
        if self.cond_depth:
            frame = _frame()
            raise UserError("ss.cond: a branch writes Python state (%s on %s)%s; the exported "
                            "program chooses the branch at run time and cannot replay a "
                            "write made in one (it would happen whichever branch runs); "
                            "return the values from both branches and write after the cond"
                            % (op, Effect(op, path, args, frame).target(), where(frame)))
        e = Effect(op, path, args, _frame())
        text = str(path)
        if layout is not None and text not in self.written and text not in self.reshaped \
                and text not in self.initial_layout:
            self.initial_layout[text] = (path, ) + layout
        self.effects.append(e)
        if on_dict and op != "clear":
            # a dict's other keys keep their values: only the keys written are ours now
            keys = args[0].keys() if op == "update" else args[:1]
            self.written.update(str(path.item(k)) for k in keys)
            self.reshaped.add(str(path))
        elif op in ("setattr", "delattr"):
            self.written.add(e.target())
        else:
            # a list's items shift, a cleared container is new: all of it is ours now
            self.written.add(str(path))

    def refuse(self, what: str) -> None:
        frame = _frame()
        self.refusals.append("%s%s cannot be replayed by an exported program" % (
            what, where(frame)))
        raise UserError(self.refusals[-1] + "; use methods that are replayed (list: append, "
                        "extend, insert, pop, clear, reverse, item stores; dict: item stores, "
                        "update, pop, setdefault, clear; set: add, discard, remove, update, "
                        "clear), or keep this out of the exported function")

    # ------------------------------------------------------------------ after the trace
    def global_effects(self) -> None:
        """Rebinds of globals and closure cells (diffed: Python gives no hook); a change
        the recorder did not see (capture/state/unrecorded.py) is refused."""
        self.unrecorded.check()
        for i, (g, name, before, present, path) in enumerate(self._globals):
            now = g.get(name, _MISSING)
            if now is not self._placed.get(i, _MISSING):
                self.effects.append(Effect("setroot" if now is not _MISSING else "delroot",
                                           path, (now,) if now is not _MISSING else (), None))
        for i, (cell, before, path) in enumerate(self._cells):
            try:
                now = cell.cell_contents
            except ValueError:
                continue
            if now is not self._placed.get(-1 - i):
                self.effects.append(Effect("setroot", path, (now,), None))

    def alias(self, obj, path: AccessPath) -> None:
        """``obj`` (a recorded container or object) was reached again at ``path``: a write
        through either path goes to the one object, so the two must still be one object
        when the program runs (``self.sink = self.records``, then ``m.sink = []``)."""
        first = self.paths.get(id(obj))
        if first is not None and first != path:
            self.aliases.append((path, first))

    def stand_in_for(self, v):
        return self._stand_ins.get(id(v))

    def restore(self) -> None:
        """Undo everything (reverse order); globals and cells get their values back."""
        errors = []
        try:
            self.unrecorded.restore()
        except Exception as e:  # pragma: no cover
            errors.append(e)
        while self._undo:
            try:
                self._undo.pop()()
            except Exception as e:  # pragma: no cover - a user class refusing its dict
                errors.append(e)
        for g, name, before, present, _ in self._globals:
            if present:
                g[name] = before
            else:
                g.pop(name, None)
        for cell, before, _ in self._cells:
            cell.cell_contents = before
        if errors:  # pragma: no cover
            raise errors[0]

    def __enter__(self):
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        _ACTIVE.remove(self)


def plain_value(v, memo=None):
    """``v`` with recording stand-ins replaced by plain lists and dicts (what a function's
    outputs must be made of)."""
    t = type(v)
    if t is RecList:
        return [plain_value(x) for x in list.__iter__(v)]
    if t is RecDict:
        return {k: plain_value(x) for k, x in dict.items(v)}
    if t is RecSet:
        return set(set.__iter__(v))
    if t is list or t is tuple:
        return t(plain_value(x) for x in v)
    if t is dict:
        return {k: plain_value(x) for k, x in v.items()}
    if t is Tracked:
        return v.materialize()
    return v
