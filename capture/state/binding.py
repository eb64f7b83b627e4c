"""Model state: the arrays a traced function reaches from outside its arguments.

Real NumPy models keep weights and caches in globals, closure cells, parameter dicts and
object attributes.  NumPy never dispatches ``W[ids]`` or ``cache[:, a:b] = xk`` to the tracer
when a plain ``ndarray`` is the receiver, so for the duration of a trace every such array is
*temporarily* replaced, where the function finds it, by a traced proxy of a ``constant``
node that holds the array itself (no copy).  ``StateBinding.restore`` puts every original
reference back, in reverse order, and runs in a ``finally``: no user object stays modified,
also when tracing raises.

What is followed (the reach of the function, as Python resolves names at call time):

- the globals its code (and its nested code objects) names, and its closure cells;
- for a bound method or a callable object, the attributes of that object;
- through ``dict``, ``list`` and ``tuple`` values (a tuple is rebuilt, not mutated),
  plain objects and dataclasses (their ``__dict__``), and the user functions and methods
  reached on the way (their globals and closures, the methods of the classes of the objects
  visited), so helpers called by the function see state too.

Each array is named by its path as the user spells it: ``W``, ``self.tok_embedding``,
``self.layers[0].wq``, ``params['blocks'][1]['attn']['w']``; paths are typed records
(capture/state/access.py: ``array_paths``, and the live ``roots`` / ``holders`` they start from).

With a ``recorder`` (capture/state/objstate.py, what export uses) the walk also records Python
state: a dict, list or set it reaches is replaced in its parent slot by a recording copy
(the user's container is never modified), a plain object's class is swapped for a
recording subclass, and the globals and cells the code names are snapshotted; arguments
that are containers or user objects are walked the same way (``bind_argument``).
"""
from __future__ import annotations

import functools
import os
import re
import sys
import sysconfig
import types
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.userframe import is_internal

from . import modules
from .access import AccessPath, Root
from .objstate import AppendOnly
from .opaque import is_opaque
from .unrecorded import all_codes, is_container, is_file, is_memo_cache
from .weak import WEAK_CONTAINERS, RefStandIn, refusing_class

# a walk never visits more objects than this: a model with a huge Python structure is still
# traced, its deeper arrays becoming ordinary lifted constants when the tracer meets them
MAX_OBJECTS = 200_000

_STDLIB = tuple(os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()["stdlib"]})
# objects of these packages are never walked into (they hold no model state of the user's)
_LIBRARY_PACKAGES = frozenset({"numpy", "symshape", "sympy", "z3", "builtins", "typing",
                               "collections", "functools", "threading", "logging", "dask",
                               "cupy", "abc", "enum", "weakref", "_thread", "_io", "io"})
_PATH_CHARS = re.compile(r"[^0-9a-zA-Z]+")


def user_code(code: types.CodeType) -> bool:
    fn = code.co_filename
    return not is_internal(fn) and not os.path.abspath(fn).startswith(_STDLIB)


def is_user_code(code: types.CodeType) -> bool:
    """Whether ``code`` is the user's (not symshape's or the standard library's)."""
    return user_code(code)


def _code_names(code: types.CodeType) -> list:
    """Names the code (and its nested code) looks up, in order of first use."""
    names: dict = {}
    stack = [code]
    while stack:
        c = stack.pop(0)
        names.update(dict.fromkeys(c.co_names))
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return list(names)


def _library_object(v) -> bool:
    return _library_class(type(v))


def _library_class(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    if module.split(".")[0] not in _LIBRARY_PACKAGES:
        return False
    if module != "builtins":
        return True
    # a class made by code run with exec() in a namespace without __name__ says it is of
    # "builtins": it is the user's when a method of its own is user code (builtins' own
    # classes have no Python methods)
    return not any(isinstance(f, types.FunctionType) and user_code(f.__code__)
                   for f in vars(cls).values())


def _user_module(mod) -> bool:
    """A module of the user's (a ``.py`` file, not symshape's or the standard library's)."""
    f = getattr(mod, "__file__", None)
    return isinstance(f, str) and f.endswith(".py") and not is_internal(f) and \
        not os.path.abspath(f).startswith(_STDLIB)


def _project_module(mod) -> bool:
    """A module of the user's project (not of an installed package)."""
    f = os.path.abspath(mod.__file__)
    return "site-packages" not in f and "dist-packages" not in f


def _project_class(cls: type) -> bool:
    """A class of the user's project (not of an installed package or the standard
    library): its attributes are watched when the code reaches it (``Model.calls``)."""
    if _library_class(cls):
        return False
    f = getattr(sys.modules.get(cls.__module__ or ""), "__file__", None)
    if not isinstance(f, str):          # __main__ of an interactive session, exec()
        return True
    f = os.path.abspath(f)
    return not is_internal(f) and not f.startswith(_STDLIB) and \
        "site-packages" not in f and "dist-packages" not in f


def entry_function(f):
    """``(function, owner)`` of a callable: the plain function that runs and, for a bound
    method or a callable object, the object whose attributes are its ``self``."""
    fn = f
    while hasattr(fn, "__wrapped__") or isinstance(fn, functools.partial):
        fn = fn.func if isinstance(fn, functools.partial) else fn.__wrapped__
    owner = getattr(fn, "__self__", None)
    fn = getattr(fn, "__func__", fn)
    if isinstance(fn, types.FunctionType):
        return fn, owner
    # a callable object, possibly under wrappers (the JIT's break detection)
    call = getattr(type(fn), "__call__", None)
    call = getattr(call, "__func__", call)
    if isinstance(call, types.FunctionType):
        return call, fn
    return None, None


class StateBinding:
    """Swaps the arrays a function reaches for traced proxies; ``restore`` undoes it all.

    ``make_proxy(array, path)`` creates the proxy (the tracer's job); the binding only finds
    the arrays, names them, and keeps the undo list.
    """

    def __init__(self, make_proxy: Callable[[np.ndarray, str], Any],
                 stand_in: Optional[Callable[[Any, str], Any]] = None,
                 recorder=None) -> None:
        self._make_proxy = make_proxy
        # capture/state/objstate.py: records reads and writes of Python state (None: arrays only)
        self.recorder = recorder
        self.array_paths: Dict[int, AccessPath] = {}  # id(array) -> the path it is read by
        self.roots: Dict[Root, Any] = {}         # self: the object
        self.holders: Dict[Root, Any] = {}       # global: module dict; cell: the cell
        self.root_reads: List[tuple] = []        # (path of a global or cell, its value)
        # other objects the tracer sees through (a random generator): a replacement or None
        self._stand_in = stand_in
        self._undo: List[Callable[[], None]] = []
        self._seen: Dict[int, Any] = {}          # id -> replacement (keeps ids alive)
        self._keep: List[Any] = []               # originals, so ids stay unique while bound
        self._classes: set = set()
        self.proxies: Dict[int, Any] = {}        # id(array) -> proxy
        self.arrays: Dict[int, np.ndarray] = {}  # id(array) -> array
        self._budget = MAX_OBJECTS
        self.global_dicts: List[dict] = []       # module namespaces of the functions reached
        # what the traced code read by name: (kind, namespace or cell, name, object), so a
        # compiled program can check that each name still holds the object it baked in
        self.reads: List[tuple] = []
        self._read_keys: set = set()
        # classes and modules the trace may read attributes of where the recorder cannot
        # see it (``Model.lr``, ``config.SCALE``): (path, object), for a fingerprint guard
        self.fingerprinted: List[Tuple[AccessPath, Any]] = []
        self.stood_in: Dict[int, Any] = {}      # id(the tracer's stand-in) -> the object
        self._fingerprinted: set = set()

    @property
    def classes(self) -> List[type]:
        """The user classes whose methods the walk visited (their attributes are state a
        method may write: ``Model.calls += 1``)."""
        return list(self._classes)

    # ------------------------------------------------------------------ entry
    def bind(self, f) -> None:
        fn, owner = entry_function(f)
        if fn is None:
            return
        if owner is not None:
            root = Root("self", "self")
            self.roots[root] = owner
            self._object(owner, AccessPath(root))
        self._function(fn)

    def bind_argument(self, name: str, v):
        """The value the traced function gets for the argument ``name`` (an object or a
        container of the caller's: recorded like state, under the root ``name``)."""
        if self.recorder is None:
            return v
        root = Root("arg", name)
        self.roots[root] = v
        return self.visit(v, AccessPath(root))

    def restore(self) -> None:
        """Put every swapped reference back (reverse order; never raises half-way)."""
        errors = []
        while self._undo:
            undo = self._undo.pop()
            try:
                undo()
            except Exception as e:  # pragma: no cover - a user __setitem__ that raises
                errors.append(e)
        self._seen.clear()
        self._keep.clear()
        if errors:  # pragma: no cover
            raise errors[0]

    # ------------------------------------------------------------------ functions
    def _function(self, fn: types.FunctionType) -> None:
        if id(fn) in self._seen or not user_code(fn.__code__):
            return
        self._mark(fn, fn)
        if self.recorder is not None:
            self.recorder.unrecorded.watch_code(fn.__code__)
        g = fn.__globals__
        if not any(g is d for d in self.global_dicts):
            self.global_dicts.append(g)
        module = g.get("__name__") or ""
        rec = self.recorder
        for name in _code_names(fn.__code__):
            root = Root("global", name, module)
            if name in g:
                self._read("global", g, name, g[name])
                if root not in self.holders:
                    self.holders[root] = g
                    self.root_reads.append((AccessPath(root), g[name]))
                    if rec is not None:
                        rec.watch_global(g, name, AccessPath(root))
                self._swap_mapping(g, name, AccessPath(root))
            elif rec is not None and root not in self.holders and \
                    name in _stored_globals(fn.__code__):
                self.holders[root] = g          # created by ``global name; name = ...``
                rec.watch_global(g, name, AccessPath(root))
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    v = cell.cell_contents
                except ValueError:          # an unbound cell
                    continue
                self._read("cell", cell, name, v)
                root = Root("cell", name, fn.__qualname__)
                if root not in self.holders:
                    self.holders[root] = cell
                    self.root_reads.append((AccessPath(root), v))
                    if self.recorder is not None:
                        self.recorder.watch_cell(cell, AccessPath(root))
                new = self.visit(v, AccessPath(root))
                if new is not v:
                    self._undo.append(_setter(cell, "cell_contents", v))
                    cell.cell_contents = new

    def _namespace(self, mod) -> None:
        """Record the globals of a user module reached as a value (for routing only)."""
        g = getattr(mod, "__dict__", None)
        if isinstance(g, dict) and not any(g is d for d in self.global_dicts) and \
                _user_module(mod):
            self.global_dicts.append(g)

    def _read(self, kind: str, where, name: str, obj) -> None:
        key = (id(where), name)
        if key not in self._read_keys:
            self._read_keys.add(key)
            self.reads.append((kind, where, name, obj))

    def _class_methods(self, cls: type) -> None:
        for klass in cls.__mro__:
            if klass is object or klass in self._classes or _library_class(klass):
                continue
            self._classes.add(klass)
            if self.recorder is not None:
                self.recorder.unrecorded.watch_class(klass)
            for v in list(vars(klass).values()):
                v = getattr(v, "__func__", v)          # staticmethod / classmethod
                if is_memo_cache(v):
                    self._cached(v)
                elif isinstance(v, property):
                    for acc in (v.fget, v.fset):
                        if isinstance(acc, types.FunctionType):
                            self._function(acc)
                elif isinstance(v, types.FunctionType):
                    self._function(v)

    # ------------------------------------------------------------------ values
    def visit(self, v, path: AccessPath):
        """The value to see in place of ``v``: a proxy for an array, the same container
        (its items swapped in place) or a rebuilt tuple; ``v`` itself otherwise."""
        t = type(v)
        if t is np.ndarray or (isinstance(v, np.ndarray) and t.__module__.startswith("numpy")):
            return self._array(v, path)
        if v is None or t in (int, float, bool, str, bytes, complex) or \
                isinstance(v, (np.generic, np.dtype)):
            return self._scalar(v, path)
        if isinstance(v, (type, types.ModuleType)):
            self._code_namespace(v, path)
            return v
        key = id(v)
        if key in self._seen:
            got = self._seen[key]
            if self.recorder is not None:
                self.recorder.alias(got, path)     # one object at two paths
            return got
        if self._budget <= 0:
            return v
        self._budget -= 1
        if t is weakref.ref or (self.recorder is not None and isinstance(v, WEAK_CONTAINERS)):
            return self._weak(v, path)
        if self._stand_in is not None:
            new = self._stand_in(v, str(path))
            if new is not None:
                self._mark(v, new)
                self.stood_in[id(new)] = v      # guarded by the original's identity
                return new
        if self._code(v, path):
            return v
        if self.recorder is not None and t in (set, dict, list, AppendOnly):
            return self._recorded_container(v, path)
        if self.recorder is not None and (is_container(v) or is_file(v)):
            # a container of a library class, a file: undone, changes refused
            if is_file(v):
                self.recorder.unrecorded.watch_file(v, path)
            else:
                self.recorder.watch_foreign(v, path)
            if not isinstance(v, (dict, list)):
                self._mark(v, v)
                return v
        if isinstance(v, (dict, list, tuple)):
            return self._container(v, path)
        return self._other(v, path)

    def _scalar(self, v, path: AccessPath):
        """A Python scalar: a number held by a global or cell is read as the recorder
        says (a tracked number when the program also writes it)."""
        if self.recorder is not None and type(v) in (int, float, complex) and \
                path.root.kind in ("global", "cell") and not path.steps:
            return self.recorder.scalar_read(v, path)
        return v

    def _recorded_container(self, v, path: AccessPath):
        """A plain set, dict or list: a recording copy stands in for the user's container,
        which stays untouched (a set holds scalars only; a dict's or list's items are
        visited in the copy)."""
        new = self.recorder.container(v, path)
        self._mark(v, new)
        if type(v) is set:
            return new
        t = dict if type(v) is dict else list
        for k in (list(dict.keys(new)) if t is dict else range(list.__len__(new))):
            x = dict.__getitem__(new, k) if t is dict else list.__getitem__(new, k)
            y = self.visit(x, path.item(k))
            if y is not x:
                (dict.__setitem__ if t is dict else list.__setitem__)(new, k, y)
        return new

    def _container(self, v, path: AccessPath):
        """A dict or list not recorded (its items swapped in place, undone afterwards) or
        a tuple (rebuilt when an item stands in for another)."""
        self._mark(v, v)
        if isinstance(v, dict):
            for k in list(v.keys()):
                self._swap_mapping(v, k, path.item(k))
            return v
        if isinstance(v, list):
            for i in range(len(v)):
                x = v[i]
                new = self.visit(x, path.item(i))
                if new is not x:
                    self._undo.append(_list_setter(v, i, x))
                    list.__setitem__(v, i, new)
            return v
        items = [self.visit(x, path.item(i)) for i, x in enumerate(v)]
        if all(a is b for a, b in zip(items, v)):
            return v
        t = type(v)
        new = t._make(items) if hasattr(t, "_make") else \
            (tuple(items) if t is tuple else t(items))
        self._mark(v, new)
        return new

    def _weak(self, v, path: AccessPath):
        """A ``weakref.ref`` (what it refers to is state at ``path()``, capture/state/
        weak.py) or a weak container (every use refused while recorded)."""
        if type(v) is weakref.ref:
            target = v()
            if target is None:              # dead already: nothing to read through it
                self._mark(v, v)
                return v
            new = RefStandIn(target, self.visit(target, path.deref()))
            self._mark(v, new)
            return new
        self._mark(v, v)
        cls = type(v)
        sub = refusing_class(cls)
        if sub is not None and self.recorder is not None:
            try:
                object.__setattr__(v, "__class__", sub)
            except TypeError:                  # pragma: no cover
                return v
            self.recorder.paths[id(v)] = path
            self._undo.append(lambda: object.__setattr__(v, "__class__", cls))
        return v

    def _code_namespace(self, v, path: AccessPath) -> None:
        """A module or class the code reaches (``self.g.gpt2``, ``helpers.Block``): not
        state, but the names its module imported are routed while tracing; a user class's
        attributes are watched (a write to one cannot be replayed), and the attributes
        the code loads from it are fingerprinted (a read the recorder cannot see)."""
        if isinstance(v, type) and self.recorder is not None and _project_class(v):
            self.recorder.unrecorded.watch_class(v)
            self._fingerprint(path, v)
        elif isinstance(v, types.ModuleType) and self.recorder is not None and \
                _user_module(v):
            self._fingerprint(path, v)
            if _project_module(v):
                self._project_module(v, path)
        self._namespace(v if isinstance(v, types.ModuleType) else
                        sys.modules.get(getattr(v, "__module__", None) or ""))

    def _project_module(self, v, path: AccessPath) -> None:
        """A module of the user's project reached as a value (``import config``): its
        attributes are recorded like an object's (``config.calls += 1`` and ``config.SCALE
        = 2.0`` are writes replayed on every call, never frozen), and the functions the
        code calls through it are walked."""
        if modules.record(self.recorder, v, path, self._undo):
            self._module_functions(v)

    def _module_functions(self, mod) -> None:
        """The functions of a user module that the code reached so far loads from it
        (``config.bump()``): walked like the helpers it names, so their ``global`` writes
        (``global calls; calls += 1`` in ``config``) are recorded, not lost."""
        loads = set()
        for code in all_codes(self.recorder.unrecorded.codes):
            loads |= _loaded_attributes(code)
        d = vars(mod)
        for name in sorted(loads):
            fn = d.get(name)
            # only those that bind globals: walking the others would watch the names they
            # read in a namespace the tracer routes (other threads' traces too)
            if isinstance(fn, types.FunctionType) and _stored_globals(fn.__code__):
                self._function(fn)

    def _code(self, v, path: AccessPath) -> bool:
        """Walk into a function, ``functools.partial``, memoized function or bound method
        (True), or say it is none of those (False)."""
        if isinstance(v, types.FunctionType):
            self._function(v)
            return True
        # what a partial or a bound method holds is reached through it, at its own path
        # (``m.__self__``): never at the method's path, or the two would look like one object
        if isinstance(v, functools.partial):
            self._mark(v, v)
            self.visit(v.func, path.attr("func"))
        elif is_memo_cache(v):
            self._mark(v, v)
            self._cached(v)
        elif isinstance(v, types.MethodType):
            self._mark(v, v)
            self.visit(v.__self__, path.attr("__self__"))
            self._function(v.__func__)
        elif getattr(type(v), "_ss_compiled_function", False):
            # ``ss.compile(inner.step)`` called by the program: the trace inlines it, so
            # what it reaches is state of this program too (its writes replayed every call)
            self._mark(v, v)
            self.visit(v.__wrapped__, path.attr("__wrapped__"))
        else:
            return False
        return True

    def _other(self, v, path: AccessPath):
        """What is neither an array, a scalar, code nor a container: an opaque object
        (never subclassed, swapped, copied or walked into: guarded by identity, a change to
        it refused, capture/state/opaque.py), a plain object (recorded), or a
        ``__slots__`` object (watched, its attributes fingerprinted)."""
        if is_opaque(v):
            self._mark(v, v)
            if self.recorder is not None:
                self.recorder.unrecorded.watch_opaque(v, path)
            return v
        if hasattr(v, "__dict__") and not _library_object(v):
            return self._object(v, path)
        if self.recorder is not None and not hasattr(v, "__dict__") and \
                not _library_object(v) and hasattr(type(v), "__slots__"):
            self._mark(v, v)
            self.recorder.unrecorded.watch_slots(v, path)
            self._fingerprint(path, v)          # its reads are not recorded
            self._class_methods(type(v))
        return v

    def _object(self, obj, path: AccessPath):
        """Visit the attributes of ``obj``; returns what stands for it (``obj``, or a
        recording copy where its class cannot be swapped, a ``SimpleNamespace``)."""
        if id(obj) in self._seen:
            return self._seen[id(obj)]
        if not hasattr(obj, "__dict__") or is_opaque(obj):
            return self.visit(obj, path)        # a __slots__ object: watched
        new = obj
        if self.recorder is not None and isinstance(obj.__dict__, dict) and \
                not _library_object(obj):
            self._fingerprint(path.attr("__class__"), type(obj))
            new = self.recorder.plain_object(obj, path)
        self._mark(obj, new)
        d = new.__dict__
        if isinstance(d, dict):
            for k in list(d.keys()):
                if isinstance(k, str):
                    self._swap_mapping(d, k, path.attr(k))
        if not _library_object(obj):
            self._class_methods(type(obj))
        return new

    def _cached(self, v) -> None:
        """A function under ``functools.lru_cache`` / ``cache``: what it caches during the
        trace would be traced values, so the entries the trace adds are dropped after it
        (capture/state/unrecorded.py); its function is walked like any other."""
        if self.recorder is not None:
            self.recorder.unrecorded.watch_cache(v)
        inner = getattr(v, "__wrapped__", None)
        if isinstance(inner, types.FunctionType):
            self._function(inner)

    def _fingerprint(self, path: AccessPath, obj) -> None:
        if id(obj) not in self._fingerprinted:
            self._fingerprinted.add(id(obj))
            self.fingerprinted.append((path, obj))

    def _swap_mapping(self, d: dict, k, path: AccessPath) -> None:
        x = d[k]
        new = self.visit(x, path)
        if new is not x:
            self._undo.append(_dict_setter(d, k, x))
            dict.__setitem__(d, k, new)

    def _array(self, arr: np.ndarray, path: AccessPath):
        if arr.dtype.kind not in "biufc":
            return arr                         # object / string arrays are not state
        got = self.proxies.get(id(arr))
        if got is None:
            got = self.proxies[id(arr)] = self._make_proxy(arr, str(path))
            self.arrays[id(arr)] = arr
            self.array_paths[id(arr)] = path
        return got

    def _mark(self, v, replacement) -> None:
        self._seen[id(v)] = replacement
        self._keep.append(v)


@functools.lru_cache(maxsize=4096)
def _stored_globals(code: types.CodeType) -> frozenset:
    """Names the code binds with ``global name; name = ...`` (STORE_GLOBAL).

    Cached per code object: disassembling every function the program reaches was half of
    a warm export's time, and a code object's instructions never change (equal code
    objects, which share a cache entry, have equal instructions)."""
    import dis
    out = set()
    stack = [code]
    while stack:
        c = stack.pop()
        out.update(i.argval for i in dis.get_instructions(c) if i.opname == "STORE_GLOBAL")
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return frozenset(out)


@functools.lru_cache(maxsize=4096)
def _loaded_attributes(code: types.CodeType) -> frozenset:
    """The attribute names ``code`` loads (``config.bump`` loads ``bump``)."""
    import dis
    return frozenset(i.argval for i in dis.get_instructions(code)
                     if i.opname in ("LOAD_ATTR", "LOAD_METHOD"))


def path_identifier(path: str) -> str:
    """A readable Python identifier for a state path (``self.layers[0].wq`` ->
    ``self_layers_0_wq``)."""
    return _PATH_CHARS.sub("_", path).strip("_") or "state"


def _setter(obj, attr, value):
    return lambda: setattr(obj, attr, value)


def _dict_setter(d, k, value):
    return lambda: dict.__setitem__(d, k, value)


def _list_setter(lst, i, value):
    return lambda: list.__setitem__(lst, i, value)

