"""The safety net under the recorder: changes to state that nothing recorded.

The recorder (capture/state/objstate.py) sees writes through attribute assignment on objects it
recorded and through the methods of the ``dict`` / ``list`` / ``set`` stand-ins.  Some
writes bypass it: an object with only ``__slots__`` (no ``__dict__`` to record), a direct
``self.__dict__["x"] = v`` or ``vars(self).update(...)``, class attributes
(``type(self).calls += 1``, ``Model.registry.append(x)``), library containers reached as
state (``collections.deque``, ``array.array``, ``bytearray``) and I/O on a file object.
An exported program could not replay any of them, and leaving them changed would break
"export leaves the user's objects alone".

So, once the walk is done (``start``), each such object the walk reached gets a cheap,
shallow snapshot (slot values and ``__dict__`` values by identity, class attributes by
identity plus the items of a mutable class-level container, a container's items or
bytes, a file's position: never a copy of a NumPy array), and after the trace ``check``
compares.  A difference the recorder did not record is put back (``restore``, also when
the trace raised) and raised (``unrecorded_change``) as a ``UserError`` naming the path as
the user spells it (``self.buf``, ``Model.calls``), what changed, the user line where a
static look at the code reached finds one, and what to do.  The JIT reads that line (the
`` at file:line`` of the message, and ``stack``) as a graph break: the statement runs
eagerly on every call instead of being dropped.
"""
from __future__ import annotations

import array
import collections
import dis
import enum
import functools
import io
import linecache
import types
from typing import List, Optional, Tuple

from symshape.errors import UserError
from symshape.userframe import UserFrame

from .opaque import label as opaque_label, position, rewinder

_MISSING = object()
# methods of a container or file that change it (a line calling one is a likely culprit)
_CALL_OPS = ("LOAD_METHOD", "LOAD_ATTR")
_NAME_OPS = ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF",
             "LOAD_FAST", "LOAD_CLOSURE")


def unrecorded_change(message: str, path: str,
                      stack: List[Tuple[types.CodeType, int]]) -> UserError:
    """The ``UserError`` for a change the recorder did not see: ``.path`` is the state as
    the user spells it, ``.stack`` the ``(code, line)`` of the user lines found to make
    it (the JIT splits a compiled function there: codegen/split.py ``break_line``)."""
    e = UserError(message)
    e.path = path
    e.stack = stack
    return e


class _Watch:
    """One object under watch: what it is, and its snapshots (a plain class with slots:
    a big model has thousands)."""
    __slots__ = ("obj", "path", "kind", "name", "snap", "orig", "recorded")

    def __init__(self, obj, path, kind: str, name: Optional[str], recorded=None) -> None:
        self.obj = obj
        self.path = path            # its str() is the path as the user spells it
        self.kind = kind            # slots / dict / class / container / file
        self.name = name            # the name a line would use (None: the path's last)
        self.snap = None            # when the trace began (what a change is compared with)
        self.orig = None            # before the walk put traced stand-ins in (restored)
        self.recorded = recorded    # dict: the path texts the recorder saw written


def _slot_names(cls: type) -> List[str]:
    out: List[str] = []
    for klass in cls.__mro__:
        s = vars(klass).get("__slots__", ())
        for n in ((s,) if isinstance(s, str) else s):
            if n not in ("__dict__", "__weakref__") and n not in out:
                out.append(n)
    return out


def is_container(v) -> bool:
    """A library container whose changes the recorder cannot see (a dict / list / set
    subclass, ``deque``, ``array.array``, ``bytearray``)."""
    return isinstance(v, (collections.deque, array.array, bytearray)) or \
        (isinstance(v, (dict, list, set)) and type(v) not in (dict, list, set))


def is_memo_cache(v) -> bool:
    """A function under ``functools.lru_cache`` / ``functools.cache``."""
    return callable(v) and hasattr(v, "cache_clear") and hasattr(v, "cache_info") and \
        hasattr(v, "__wrapped__")


def is_file(v) -> bool:
    return isinstance(v, io.IOBase)


def _items(v):
    """A shallow snapshot of a container: its items by reference (bytes for byte data)."""
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, array.array):
        return v.tobytes()
    if isinstance(v, dict):
        return list(v.items())
    return list(v)


def _same_items(a, b) -> bool:
    if isinstance(a, bytes):
        return a == b
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, tuple) and isinstance(y, tuple):       # dict items
            if x[0] != y[0] or x[1] is not y[1]:
                return False
        elif x is not y:
            return False
    return True


def restore_items(v, snap) -> None:
    """Put a container's items back (through its own methods: an ``OrderedDict`` keeps
    its order bookkeeping, a ``Counter`` its counts)."""
    if isinstance(v, bytearray):
        v[:] = snap
    elif isinstance(v, array.array):
        del v[:]
        v.frombytes(snap)
    elif isinstance(v, dict):
        v.clear()
        for k, x in snap:
            v[k] = x
    elif isinstance(v, collections.deque):
        v.clear()
        v.extend(snap)
    elif isinstance(v, set):
        v.clear()
        v.update(snap)
    else:
        v[:] = snap


def _short(v) -> str:
    if v is _MISSING:
        return "unset"
    if v is None or isinstance(v, (bool, int, float, complex)) or \
            (isinstance(v, (str, bytes)) and len(v) <= 30):
        return repr(v)
    return "a %s" % type(v).__name__


class Unrecorded:
    """Snapshots of the state the recorder cannot see; ``check`` after the trace,
    ``restore`` always."""

    def __init__(self) -> None:
        self._watches: List[_Watch] = []
        self._ids: set = set()
        self.codes: List[types.CodeType] = []     # user code the walk reached

    # ------------------------------------------------------------------ during the walk
    def _add(self, obj, path, kind: str, name: Optional[str] = None, recorded=None) -> None:
        if id(obj) in self._ids:
            return
        self._ids.add(id(obj))
        w = _Watch(obj, path, kind, name, recorded)
        if kind == "container" and isinstance(obj, (dict, list)):
            w.orig = self._snapshot(w)     # the walk swaps arrays in it for traced ones
        self._watches.append(w)

    def watch_slots(self, obj, path) -> None:
        """An object with ``__slots__`` and no ``__dict__``: its slot values (``path``:
        an AccessPath or text; spelled out only for a message)."""
        if _slot_names(type(obj)):
            self._add(obj, path, "slots")

    def watch_dict(self, obj, path, written: Optional[set]) -> None:
        """A recorded object's ``__dict__``: a key that changes while ``written`` (the
        recorder's live set of path texts written) lacks its path was written around the
        recorder (``None``: nothing of it is recorded)."""
        self._add(obj, path, "dict", "__dict__", written)

    def watch_class(self, cls: type, name: Optional[str] = None) -> None:
        """A user class (or its recording subclass): its attributes (not an ``Enum``
        class's: they are its members and enum's caches, ``Flags(3)`` adds one)."""
        if isinstance(cls, enum.EnumMeta):
            return
        self._add(cls, name or cls.__name__, "class", cls.__name__)

    def watch_container(self, v, path) -> None:
        """A library container (``is_container``): its items."""
        self._add(v, path, "container")

    def watch_file(self, v, path) -> None:
        """A seekable file object: its position."""
        try:
            if not v.seekable():
                return
        except Exception:
            return
        self._add(v, path, "file")

    def watch_opaque(self, v, path) -> None:
        """An object the recorder does not model (capture/state/opaque.py): where it stands
        if it is an iterator, and its ``__dict__`` if it has one."""
        self._add(v, path, "opaque")

    def watch_cache(self, v) -> None:
        """A memoizing function (``is_memo_cache``): entries the trace adds hold traced
        values, so they are dropped afterwards (its whole cache: ``lru_cache`` cannot
        drop one entry; eager calls fill it again with the same values)."""
        self._add(v, getattr(v, "__qualname__", "a cached function"), "cache")

    def watched(self, obj, kind: str) -> Optional[_Watch]:
        """The watch of ``obj`` if it is watched as ``kind``."""
        if id(obj) not in self._ids:
            return None
        for w in self._watches:
            if w.obj is obj and w.kind == kind:
                return w
        return None

    def advance_error(self, w: _Watch, frame: UserFrame, code: types.CodeType,
                      how: str = "next()") -> UserError:
        """The error for ``next()`` (or ``how``) on the opaque iterator of ``w`` at the user
        line ``frame`` (raised before it moves)."""
        msg = ("the program advances %s at %s with %s at %s:%d. An exported program "
               "cannot replay a step of an iterator held as state (symshape does not model a "
               "%s: it is used as it is, by identity). Fix: pass the value it yields as an "
               "argument, or use ss.compile, which runs that line eagerly on every call." % (
                   opaque_label(w.obj), w.path, how, frame.filename, frame.lineno,
                   _type_name(w.obj)))
        return unrecorded_change(msg, str(w.path), [(code, frame.lineno)])

    def watch_code(self, code: types.CodeType) -> None:
        self.codes.append(code)

    # ------------------------------------------------------------------ snapshots
    def start(self) -> None:
        """The walk is done: snapshot every watched object as the trace will find it, and
        refuse, before it runs, a loop over a generator held as state."""
        for w in self._watches:
            w.snap = self._snapshot(w)
            if w.orig is None and w.kind != "dict":     # the recorder restores a __dict__
                w.orig = w.snap
        self._refuse_loops_over_generators()

    def _refuse_loops_over_generators(self) -> None:
        """A ``for`` statement over a generator held as state (``for lr in self.schedule``)
        would take an item the trace cannot give back (a frame cannot run backwards; a C
        iterator is put back after the trace instead): found in the user code the walk
        reached, by the name the line loads right before it iterates, and refused as
        ``next()`` is, before anything moves (under ss.compile: that line runs eagerly)."""
        gens = {}
        for w in self._watches:
            if w.kind == "opaque" and isinstance(w.obj, types.GeneratorType):
                gens.setdefault(_last_name(w.path), w)
        if not gens:
            return
        for code in all_codes(self.codes):
            ins = list(dis.get_instructions(code))
            for i, x in enumerate(ins[:-1]):
                w = gens.get(x.argval) if x.opname in _NAME_OPS else None
                if w is not None and ins[i + 1].opname == "GET_ITER":
                    line = _line_of(ins, i) or code.co_firstlineno
                    raise self.advance_error(w, UserFrame(code.co_filename, line,
                                                          code.co_name), code, how="a for loop")

    def _snapshot(self, w: _Watch):
        o = w.obj
        if w.kind == "slots":
            return {n: getattr(o, n, _MISSING) for n in _slot_names(type(o))}
        if w.kind == "dict":
            return dict(object.__getattribute__(o, "__dict__"))
        if w.kind == "class":
            attrs = dict(vars(o))
            inner = {k: _items(v) for k, v in attrs.items()
                     if type(v) in (list, dict, set) or is_container(v)}
            return attrs, inner
        if w.kind == "container":
            return _items(o)
        if w.kind == "opaque":
            d = getattr(o, "__dict__", None)
            return position(o), dict(d) if type(d) is dict else None, rewinder(o)
        if w.kind == "cache":
            return o.cache_info().currsize
        pos = o.tell()
        end = o.seek(0, io.SEEK_END)
        o.seek(pos)
        return pos, end

    # ------------------------------------------------------------------ after the trace
    def check(self) -> None:
        """Raise ``unrecorded_change`` for the first change nothing recorded (the objects
        are put back by ``restore``, which runs in the caller's ``finally``)."""
        for w in self._watches:
            if w.snap is None or w.kind == "cache":
                continue
            what = self._changes(w)
            if what and w.kind == "file" and self._printed_only(_last_name(w.path)):
                w.orig = None       # print's output: it ran once, at trace time, and stays
                continue
            if what:
                raise self._error(w, what)

    def _printed_only(self, name: str) -> bool:
        """Whether every user line that names the file ``name`` is a ``print`` call
        (``print(..., file=buf)``): output the contract lets run once, at trace time."""
        lines = set()
        for code in all_codes(self.codes):
            ins = list(dis.get_instructions(code))
            for i, x in enumerate(ins):
                if x.opname in _NAME_OPS and x.argval == name:
                    lines.add((code.co_filename, _line_of(ins, i)))
        return bool(lines) and all(
            ln is not None and "print(" in linecache.getline(fn, ln) for fn, ln in lines)

    def _changes(self, w: _Watch) -> List[Tuple[str, str, str]]:
        """``(path, what changed, name a line would use)`` for each unrecorded change."""
        o, out = w.obj, []
        if w.kind in ("slots", "dict"):
            now = {n: getattr(o, n, _MISSING) for n in w.snap} if w.kind == "slots" else \
                object.__getattribute__(o, "__dict__")
            for k in list(w.snap) + [k for k in now if k not in w.snap]:
                a, b = w.snap.get(k, _MISSING), now.get(k, _MISSING)
                if a is not b and (w.recorded is None or
                                   "%s.%s" % (w.path, k) not in w.recorded) and \
                        not (w.kind == "dict" and _cache_of(type(o), k)):
                    out.append(("%s.%s" % (w.path, k), "%s -> %s" % (_short(a), _short(b)),
                                "__dict__" if w.kind == "dict" else k))
        elif w.kind == "class":
            attrs, inner = w.snap
            now = vars(o)
            for k in list(attrs) + [k for k in now if k not in attrs]:
                a, b = attrs.get(k, _MISSING), now.get(k, _MISSING)
                path = "%s.%s" % (w.path, k)
                if a is not b:
                    # a new attribute of a subclass (``type(self).n += 1`` sets it on the
                    # class of ``self``) shadows the one it inherited: show that one
                    a = _inherited(o, k) if a is _MISSING else a
                    b = _inherited(o, k) if b is _MISSING else b
                    out.append((path, "%s -> %s" % (_short(a), _short(b)), k))
                elif k in inner and not _same_items(inner[k], _items(b)):
                    out.append((path, _items_change(inner[k], b), k))
        elif w.kind == "container":
            if not _same_items(w.snap, _items(o)):
                out.append((str(w.path), _items_change(w.snap, o), _last_name(w.path)))
        elif w.kind == "opaque":
            pos, d, _ = w.snap
            if pos != position(o):
                out.append((str(w.path), "it advanced", _last_name(w.path)))
            now = getattr(o, "__dict__", None)
            if d is not None and type(now) is dict and not _same_items(list(d.items()),
                                                                       list(now.items())):
                out.append((str(w.path), "its attributes changed", _last_name(w.path)))
        else:
            pos, _ = w.snap
            now = o.tell()
            if now != pos:
                out.append((str(w.path), "its position moved from %d to %d: something was "
                            "written or read" % (pos, now), _last_name(w.path)))
        return out

    def _error(self, w: _Watch, changes) -> UserError:
        path, what, name = changes[0]
        lines = self.lines_using(name, w.kind)
        noun = {"slots": "the attribute", "dict": "the attribute", "class": "the class attribute",
                "container": "the %s" % _type_name(w.obj),
                "file": "the %s file" % type(w.obj).__name__,
               "opaque": "%s" % opaque_label(w.obj)}[w.kind]
        why = {"slots": "a %s object has __slots__ and no __dict__: writes to its attributes "
                        "are not recorded" % type(w.obj).__name__,
               "dict": "it was written through %s.__dict__ or vars(%s), which bypasses "
                       "attribute assignment (what is recorded)" % (w.path, w.path),
               "class": "writes to class attributes are not recorded",
               "container": "only dict, list and set are recorded",
               "file": "I/O is not part of an exported program",
               "opaque": "symshape does not model a %s: it is used as it is, by identity, "
                         "and a change to it cannot be replayed" % _type_name(w.obj)}[w.kind]
        fix = {"slots": "give the class a __dict__ (drop __slots__) so the write is "
                        "recorded, or move the write out of the exported function",
               "dict": "assign it as an attribute (%s = ...), which is recorded" % path,
               "class": "keep the value on the object (self.%s) or in a list / dict the "
                        "program writes through, or move the write out of the exported "
                        "function" % path.rsplit(".", 1)[-1],
               "container": "make it a list or dict the program writes through "
                            "(append / extend / pop / item stores are replayed), or move the "
                            "change out of the exported function",
               "file": "move the I/O out of the exported function (print and logging are "
                       "fine: they run once, at trace time)",
               "opaque": "move the change out of the exported function (pass what it yields "
                         "as an argument), or use ss.compile, which runs that line eagerly"
               }[w.kind]
        if lines:
            at = " at " + " and ".join("%s:%d: %s" % (f.filename, f.lineno, f.code)
                                       if f.code else "%s:%d" % (f.filename, f.lineno)
                                       for f in lines)
        else:
            at = " (symshape cannot tell which line: it found the change by comparing the " \
                 "object before and after the trace)"
        more = "" if len(changes) == 1 else "; and %d more change%s of it" % (
            len(changes) - 1, "" if len(changes) == 2 else "s")
        undone = "symshape put %s back as it was" % w.path
        if w.kind == "opaque" and what == "it advanced" and not _rewind(w):
            undone = "an iterator cannot be put back: %s has advanced by the trace" % w.path
        msg = ("the program changes %s at %s (%s%s)%s. An exported program cannot replay "
               "that (%s), so it would be silently lost. Fix: %s. (%s.)" % (
                   noun, path, what, more, at, why, fix, undone))
        stack = [(c, f.lineno) for f, c in zip(lines, self._line_codes)]
        return unrecorded_change(msg, path, stack + self._callers(stack))

    def _callers(self, stack) -> List[Tuple[types.CodeType, int]]:
        """The lines that call the functions holding ``stack``'s lines, up to a few calls
        out (by name: ``self._log(y)`` calls ``_log``): a compiled function whose helper
        makes the change breaks at the call (the whole call then runs eagerly)."""
        out: List[Tuple[types.CodeType, int]] = []
        names = {c.co_name for c, _ in stack}
        codes = all_codes(self.codes)
        for _ in range(3):
            found = set()
            for code in codes:
                ins = list(dis.get_instructions(code))
                for i, x in enumerate(ins):
                    if x.opname in _NAME_OPS and x.argval in names and \
                            x.argval != code.co_name:
                        line = _line_of(ins, i)
                        if line is not None and (code, line) not in out:
                            out.append((code, line))
                            found.add(code.co_name)
            names = found - names
            if not names:
                break
        return out

    def lines_using(self, name: str, kind: str) -> List[UserFrame]:
        """The user lines (in the code the walk reached) that store the attribute
        ``name`` or call a method on something named ``name``: where the change was
        likely made (a static look; empty when none is found)."""
        found: List[UserFrame] = []
        self._line_codes: List[types.CodeType] = []
        seen = set()
        for code in all_codes(self.codes):
            if code.co_name in ("__init__", "__new__"):
                continue        # a constructor sets attributes too; a traced call rarely runs it
            ins = list(dis.get_instructions(code))
            for i, x in enumerate(ins):
                hit = False
                if x.argval == name and x.opname in ("STORE_ATTR", "DELETE_ATTR"):
                    hit = kind != "file"
                elif kind == "opaque" and x.argval == name and x.opname in _NAME_OPS:
                    # any use: the object itself does the change (``for v in self.it``);
                    # tested before the method-call case, which takes every other load
                    hit = True
                elif x.argval == name and x.opname in _NAME_OPS and i + 1 < len(ins):
                    # a method called on it, or an item stored into it
                    hit = ins[i + 1].opname in _CALL_OPS or any(
                        y.opname in ("STORE_SUBSCR", "DELETE_SUBSCR") for y in ins[i + 1:i + 4])
                elif name == "__dict__" and x.opname == "LOAD_GLOBAL" and x.argval == "vars":
                    hit = True
                line = _line_of(ins, i)
                if hit and line is not None and (code, line) not in seen:
                    seen.add((code, line))
                    found.append(UserFrame(code.co_filename, line, code.co_name))
                    self._line_codes.append(code)
        return found

    def restore(self) -> None:
        """Put back everything a watched object changed (reverse order, never half-way)."""
        errors = []
        for w in reversed(self._watches):
            if w.orig is None:          # a __dict__: the recorder restores it
                continue
            try:
                _restore(w)
            except Exception as e:  # pragma: no cover - an object refusing its own write
                errors.append(e)
        if errors:  # pragma: no cover
            raise errors[0]


def _cache_of(cls: type, k: str) -> bool:
    """Whether ``k`` is a ``functools.cached_property`` of ``cls``: the value it stores in
    ``__dict__`` is a cache (recomputed when absent), so not storing it is no loss (and it
    is undone with the rest of ``__dict__``)."""
    return isinstance(getattr(cls, k, None), functools.cached_property)


def _inherited(cls: type, k: str):
    for klass in cls.__mro__[1:]:
        if k in vars(klass):
            return vars(klass)[k]
    return _MISSING


def _items_change(before, v) -> str:
    after = _items(v)
    size = v.itemsize if isinstance(v, array.array) else 1
    if len(after) != len(before):
        return "its length went from %d to %d" % (len(before) // size, len(after) // size)
    return "its items changed"


def _type_name(v) -> str:
    return "array.array" if type(v) is array.array else type(v).__name__


def _restore(w: _Watch) -> None:
    o = w.obj
    if w.kind == "slots":
        for n, v in w.orig.items():
            if getattr(o, n, _MISSING) is v:
                continue
            if v is _MISSING:
                object.__delattr__(o, n)
            else:
                object.__setattr__(o, n, v)
    elif w.kind == "class":
        attrs, inner = w.orig
        for k in [k for k in vars(o) if k not in attrs]:
            delattr(o, k)
        for k, v in attrs.items():
            if vars(o).get(k, _MISSING) is not v:
                setattr(o, k, v)
            if k in inner and not _same_items(inner[k], _items(v)):
                restore_items(v, inner[k])
    elif w.kind == "container":
        if not _same_items(w.orig, _items(o)):
            restore_items(o, w.orig)
    elif w.kind == "cache":
        if o.cache_info().currsize != w.orig:
            o.cache_clear()
    elif w.kind == "opaque":
        _rewind(w)
        d, now = w.orig[1], getattr(o, "__dict__", None)
        if d is not None and type(now) is dict and not _same_items(list(d.items()),
                                                                   list(now.items())):
            now.clear()
            now.update(d)
    elif w.kind == "file":
        pos, end = w.orig
        if o.tell() != pos:
            o.seek(pos)
            if pos >= end and o.writable():
                # what was appended goes (from a position past the end, too: the file
                # gets its length back); what was there stays
                o.truncate(end)


def _rewind(w: _Watch) -> bool:
    """Put the opaque iterator of ``w`` back where the trace found it, if it moved and can
    be put back (a C iterator, through its pickle state; never a generator).  Whether it
    now stands there: so an export that refuses it, or ``ss.compile`` running that line
    eagerly after the trace, finds it as the user left it."""
    pos, _, rewind = w.orig
    if position(w.obj) == pos:
        return True
    if rewind is None or pos is None:
        return False
    try:
        rewind()
    except Exception:
        return False
    return position(w.obj) == pos


def _last_name(path) -> str:
    """The attribute or global name a line would use for ``path`` (``self.buf`` ->
    ``buf``, ``params['q']`` -> ``params``)."""
    head = str(path).split("[", 1)[0]
    return head.rsplit(".", 1)[-1]


def all_codes(codes):
    """The code objects and every code nested in them (each once)."""
    seen, out, stack = set(), [], list(codes)
    while stack:
        c = stack.pop(0)
        if id(c) in seen:
            continue
        seen.add(id(c))
        out.append(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _line_of(ins, i: int) -> Optional[int]:
    for x in reversed(ins[:i + 1]):
        if x.positions is not None and x.positions.lineno is not None:
            return x.positions.lineno
        if x.starts_line is not None:
            return x.starts_line
    return None
