"""Routing the names traced code looks up: NumPy's creation functions, ``len`` and ``range``.

``np.zeros((n, 3))`` never dispatches to ``__array_function__``: no argument is an array, and
NumPy converts every size with ``operator.index`` first, which would specialise ``n``.
``len(x)`` must return an ``int`` from ``__len__`` and ``range(n)`` converts ``n`` the same
way.  So while a trace runs, those names are bound to *routers*: a call whose arguments hold a
``SymInt`` (or a traced array) goes to the tracer's handler (found through the size's
environment, so concurrent traces never mix), every other call to the original unchanged.

Where the routers are bound decides which code sees them, and the trace may enter any
function however it was reached (a module attribute ``self.g.gpt2(...)``, a method, a
decorator, ``functools.partial``, a function of another module).  The design:

- **Process-wide slots, shared by every trace.**  Code reaches NumPy's functions through the
  ``numpy`` module object (``np.zeros``: one attribute of one dict, whatever module the code
  lives in), and ``len`` / ``range`` through ``builtins`` (every module whose globals do not
  define them).  Routing those slots routes every function the trace can enter.  NumPy's own
  Python code (traced when a function has no handler) reads its helpers from its submodules'
  globals: those slots are found by one scan, cached until the set of loaded NumPy modules
  changes, so an export costs a few dozen dictionary writes, not a walk of every namespace.
  The slots are bound when the first trace of the process starts and put back when the last
  one ends (a count under a lock, restored in a ``finally``: also on errors and across
  threads).  Outside a trace nothing is routed; during one, code of other threads that calls
  a router gets the original's result (the routers act only on symbolic arguments, and
  ``len`` / ``range`` only for the user's code, never for symshape's or NumPy's own).
- **Names the user's modules imported** (``from numpy import zeros``) live in those modules'
  globals.  A trace routes them in the module of every function, class and module it reaches
  before running (``capture.state.binding``), and in the module of every user frame that records an
  op while it runs; each such slot is counted per trace so two concurrent traces of one
  module never undo each other's routing.

A routed slot that the program rebinds during the trace (``global zeros; zeros = ...``) is
left as the program wrote it.
"""
from __future__ import annotations

import builtins
import contextlib
import linecache
import operator
import sys
import threading
from typing import Callable, Dict, Iterable, List, Tuple

import numpy as np

from symshape.sizes.symfloat import SymFloat
from symshape.sizes.symint import SymInt
from . import randomness, scipy_ops

from .conversions import sym_int
from .lenrange import BUILTIN_ROUTERS, OPERATOR_ROUTERS, called_by_user
from .loops import LOOP_BUILTINS, LoopList
from .ndarray_class import sym_type
from .tracer import FUNCTIONS, SIZE_FUNCTIONS, TracedArray

_SYMBOLIC = (SymInt, SymFloat)

# the NumPy functions that take sizes and no array (their handlers live in capture/ops)
ROUTED_NAMES = ("zeros", "ones", "empty", "full", "arange", "eye", "identity", "tri",
                "linspace", "array", "asarray", "asanyarray")

# one routed name: (namespace, name, original, router)
Slot = Tuple[dict, str, object, object]

# a name the namespace does not define (the slot's original): binding adds it, unbinding
# removes it
_ABSENT = object()
# names bound in the globals of the user modules a trace reaches, where the module does not
# define them itself: ``int`` is a class the whole process compares types against, so it is
# never routed in ``builtins`` (``len`` and ``range`` are)
# (``type``: ``type(x) is np.ndarray`` for a traced array, capture/ndarray_class.py)
USER_OVERRIDES = {"int": sym_int, "type": sym_type}
# names a user module may have bound to the builtins themselves (``from builtins import
# range, int``, Python 2 compatibility code) or to ``operator.index``: routed there like the
# builtins they are
_SHADOWED = {**{k: (builtins.__dict__[k], r) for k, r in BUILTIN_ROUTERS.items()},
             "int": (builtins.int, sym_int),
             **{k: (getattr(operator, k), r) for k, r in OPERATOR_ROUTERS.items()}}


def _env_of(a):
    if type(a) in _SYMBOLIC:
        return a.env
    if type(a) is TracedArray:
        # NumPy's own Python code, traced as a fallback, converts its arguments with
        # asarray / asanyarray / array: a traced array must stay traced there
        return a.tracer.env
    return None


def _env_in(a, depth: int):
    env = _env_of(a)
    if env is None and depth and (type(a) is tuple or type(a) is list):
        for b in a:
            env = _env_in(b, depth - 1)
            if env is not None:
                break
    return env


def _symbolic_env(args, kwargs):
    """The environment of the first size or traced array among the arguments, looked for
    in lists and tuples too (``np.array([[q0 * q1, ...], ...])``: nested three deep)."""
    for a in args:
        env = _env_in(a, 3)
        if env is not None:
            return env
    if kwargs:
        return _symbolic_env(tuple(kwargs.values()), None)
    return None


# the creation functions whose arrays the program owns: called by the user's code during a
# trace, even with static sizes, they make a traced value (as torch.export's factory calls
# do), so the program can fill them with traced values (``out = np.zeros((3, 4)); out[0] = x``)
PROGRAM_ARRAYS = ("zeros", "ones", "empty", "full", "eye", "identity")


def _numeric(dtype) -> bool:
    try:
        return np.dtype(float if dtype is None else dtype).kind in "biufc"
    except TypeError:
        return False


def _call_names(frame, name: str) -> bool:
    """The call ``frame`` is making names ``name`` in its source (``np.zeros((3, 4))``):
    compiled code that allocates with NumPy (a bit generator's ``__init__``) runs without a
    frame of its own, so its calls look like the user's call that reached it."""
    code = frame.f_code
    try:
        pos = list(code.co_positions())[frame.f_lasti // 2]
    except (AttributeError, IndexError):
        pos = (frame.f_lineno, frame.f_lineno, None, None)
    first, last, col, end = pos
    if first is None:
        return False
    lines = [linecache.getline(code.co_filename, i) for i in range(first, (last or first) + 1)]
    if col is not None and end is not None and lines:
        lines[-1] = lines[-1][:end]
        lines[0] = lines[0][col:]
    return name in "".join(lines)


def _program_array(orig, args, kwargs):
    """The tracer that makes a static creation call of the user's code a traced value, or
    None (no trace in this thread, a caller that is NumPy's or symshape's, a dtype that is
    not numeric, an array NumPy must make itself)."""
    if kwargs.get("like") is not None or not called_by_user(2) or \
            not _call_names(sys._getframe(2), orig.__name__):
        return None
    tracer = randomness.active_tracer()
    if tracer is None or not _numeric(kwargs.get("dtype")):
        return None
    if orig is np.full:
        fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        if isinstance(fill, np.ndarray) and fill.ndim or not _numeric(np.asarray(fill).dtype):
            return None
    return tracer


def _router(orig: Callable) -> Callable:
    owned = getattr(orig, "__name__", "") in PROGRAM_ARRAYS and orig is getattr(
        np, orig.__name__, None)

    def routed(*args, **kwargs):
        if args and type(args[0]) is LoopList:      # np.array(outs) after a loop
            return args[0].numpy_call(orig, args, kwargs)
        env = _symbolic_env(args, kwargs)
        tracer = env.tracer if env is not None else None
        handler = FUNCTIONS.get(orig)
        if tracer is None and owned and handler is not None:
            tracer = _program_array(orig, args, kwargs)
        if tracer is None or handler is None:
            return orig(*args, **kwargs)
        if not getattr(handler, "takes_sizes", False):
            tracer.env.commit_pending()         # as __array_function__ does before a handler
        return handler(tracer, *args, **kwargs)
    routed.__name__ = getattr(orig, "__name__", "routed")
    routed.__qualname__ = routed.__name__
    routed.__doc__ = getattr(orig, "__doc__", None)
    routed.symshape_routes = orig
    return routed


_ROUTERS: Dict[int, Tuple[Callable, Callable]] = {}


def _routers() -> Dict[int, Tuple[Callable, Callable]]:
    """id(original NumPy or SciPy function) -> (original, router); NumPy's built once,
    SciPy's added as its modules are loaded (``capture.scipy_ops``)."""
    fresh = [getattr(np, name) for name in ROUTED_NAMES] + SIZE_FUNCTIONS if not _ROUTERS \
        else []
    fresh += [f for f in scipy_ops.register_loaded() if id(f) not in _ROUTERS]
    for orig in fresh:
        router = _router(orig)
        _ROUTERS[id(orig)] = (orig, router)
        # code that looks a handler up by the name it sees (FUNCTIONS[np.arange])
        # during a trace finds the router: give it the same handler
        if orig in FUNCTIONS:
            FUNCTIONS[router] = FUNCTIONS[orig]
    return _ROUTERS


_USER_ROUTERS: Dict[int, Tuple[Callable, Callable]] = {}
_USER_BUILT = [0]            # the number of routers _USER_ROUTERS was built from


def _user_routers() -> Dict[int, Tuple[Callable, Callable]]:
    """What a user module may have imported by name (creation functions, SciPy's functions,
    random draws and the watched impure functions), by the id of the original and of the
    router: a slot that a concurrent trace routed already is found too, and counted instead
    of bound again."""
    if _USER_BUILT[0] != len(_routers()):
        _USER_BUILT[0] = len(_routers())
        for table in (_routers(), randomness.routers(), randomness.watched()):
            for orig, router in table.values():
                _USER_ROUTERS[id(orig)] = _USER_ROUTERS[id(router)] = (orig, router)
    return _USER_ROUTERS


def _slots_in(ns: dict, routers) -> List[Slot]:
    out = []
    for k, v in list(ns.items()):
        got = routers.get(id(v))
        if got is not None and (got[0] is v or got[1] is v):
            out.append((ns, k, got[0], got[1]))
    return out


# --------------------------------------------------------------------------- process slots
_cache_key: list = [None, None]          # [len(sys.modules), names of loaded numpy modules]
_cache_slots: List[Slot] = []


def _numpy_modules() -> Tuple[str, ...]:
    # never numpy.random's compiled modules: they allocate their results with np.empty(size)
    # and would receive a traced array
    return tuple(name for name, mod in list(sys.modules.items())
                 if mod is not None and (name == "numpy" or name.startswith("numpy."))
                 and not name.startswith("numpy.random"))


def process_slots() -> List[Slot]:
    """Every process-wide slot to route: NumPy's namespaces, ``numpy.random``'s public
    functions, the watched impure functions and the builtins.  Scanned again only when the
    set of loaded NumPy modules changed (checked by the size of ``sys.modules`` first)."""
    n = len(sys.modules)
    if _cache_key[0] == n:
        return _cache_slots
    names = _numpy_modules() + scipy_ops.loaded_modules()
    if names != _cache_key[1]:
        sizes = _routers()
        slots: List[Slot] = []
        for name in names:
            d = getattr(sys.modules.get(name), "__dict__", None)
            if isinstance(d, dict):
                slots.extend(_slots_in(d, sizes))
        # only the public namespace: NumPy's compiled random modules look their own
        # globals up (default_rng checks isinstance against RandomState)
        slots.extend(_slots_in(np.random.__dict__, randomness.routers()))
        for d in randomness.impure_modules():
            slots.extend(_slots_in(d, randomness.watched()))
        b = builtins.__dict__
        slots.extend((b, k, b[k], router) for k, router in BUILTIN_ROUTERS.items())
        # the names the code rewritten for loops over a symbolic count calls
        slots.extend((b, k, b.get(k, _ABSENT), v) for k, v in LOOP_BUILTINS.items())
        o = operator.__dict__
        slots.extend((o, k, o[k], router) for k, router in OPERATOR_ROUTERS.items())
        _cache_slots[:] = slots
        _cache_key[1] = names
    _cache_key[0] = n
    return _cache_slots


def _bind(slots: Iterable[Slot]) -> List[Slot]:
    done = []
    for slot in slots:
        ns, k, orig, router = slot
        if ns.get(k, _ABSENT) is orig:
            ns[k] = router
            done.append(slot)
    return done


def _unbind(slots: List[Slot]) -> None:
    for ns, k, orig, router in reversed(slots):
        if ns.get(k) is router:          # never undo what the program itself wrote there
            if orig is _ABSENT:
                del ns[k]
            else:
                ns[k] = orig


_lock = threading.Lock()
_depth = 0
_process_bound: List[Slot] = []
# user slots bound by running traces: (id(namespace), name) -> [count, slot]
_user_bound: Dict[Tuple[int, str], list] = {}


class Routes:
    """The routing of one trace: the user namespaces it reached, bound until ``close``."""

    def __init__(self) -> None:
        self._seen: set = set()          # id() of the namespaces already routed
        self._keep: List[dict] = []      # ... kept alive so their ids stay unique
        self._held: List[Tuple[int, str]] = []

    def add_globals(self, ns: dict) -> None:
        """Route the names ``ns`` (a user module's globals) imported from NumPy."""
        key = id(ns)
        if key in self._seen:
            return
        self._seen.add(key)
        self._keep.append(ns)
        slots = _slots_in(ns, _user_routers())
        slots += [(ns, k, _ABSENT, router) for k, router in USER_OVERRIDES.items()
                  if ns.get(k, _ABSENT) is _ABSENT or ns.get(k) is router]
        slots += [(ns, k, orig, router) for k, (orig, router) in _SHADOWED.items()
                  if ns.get(k, _ABSENT) is orig or (k not in USER_OVERRIDES
                                                    and ns.get(k) is router)]
        if not slots:
            return
        with _lock:
            for slot in slots:
                ns, k, orig, router = slot
                hold = (id(ns), k)
                got = _user_bound.get(hold)
                if got is not None:
                    got[0] += 1
                elif _bind((slot,)):
                    _user_bound[hold] = [1, slot]
                else:
                    continue
                self._held.append(hold)

    def close(self) -> None:
        with _lock:
            while self._held:
                hold = self._held.pop()
                got = _user_bound[hold]
                got[0] -= 1
                if got[0] == 0:
                    del _user_bound[hold]
                    _unbind([got[1]])
        self._keep.clear()


@contextlib.contextmanager
def sizes_routed(user_globals: Iterable[dict] = (), tracer=None):
    """Route creation functions, ``len``, ``range`` and random draws to the tracer for the
    duration of the block: process-wide slots (counted across threads) and the names the
    reached user modules imported; with ``tracer``, also the modules of the user frames that
    record ops while the block runs (``tracer.enter_globals``)."""
    global _depth
    routes = Routes()
    with _lock:
        if _depth == 0:
            _process_bound[:] = _bind(process_slots())
        _depth += 1
    try:
        for g in user_globals:
            routes.add_globals(g)
        if tracer is not None:
            tracer.enter_globals = routes.add_globals
        yield routes
    finally:
        if tracer is not None:
            tracer.enter_globals = None
        routes.close()
        with _lock:
            _depth -= 1
            if _depth == 0:
                _unbind(_process_bound)
                _process_bound.clear()
