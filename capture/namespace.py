"""Creation functions called with symbolic sizes reach the tracer, with or without ``like=``.

``np.zeros((n, 3))`` never dispatches to ``__array_function__``: no argument is an array, and
NumPy converts every size with ``operator.index`` first, which would specialise ``n``.  While
a trace runs, the creation functions below are replaced, wherever the traced code can look
them up (the ``numpy`` modules and the globals of the user functions the trace reaches,
``from numpy import zeros`` included), by a router: a call whose arguments hold a ``SymInt``
goes to the tracer's handler of that function (found through the size's environment, so
concurrent traces never mix), every other call to NumPy itself.  The originals are put back
when the last trace in the process ends.
"""
from __future__ import annotations

import contextlib
import sys
import threading
from typing import Callable, Dict, List, Tuple

import numpy as np

from symshape.symfloat import SymFloat
from symshape.symint import SymInt
from . import randomness

_SYMBOLIC = (SymInt, SymFloat)

from .lenrange import BUILTIN_OVERRIDES
from .tracer import FUNCTIONS, SIZE_FUNCTIONS, TracedArray

# the NumPy functions that take sizes and no array (their handlers live in capture/ops)
ROUTED_NAMES = ("zeros", "ones", "empty", "full", "arange", "eye", "identity", "tri",
                "linspace", "array", "asarray", "asanyarray")

_lock = threading.Lock()
_depth = 0
_undo: List[Callable[[], None]] = []


def _env_of(a):
    if type(a) in _SYMBOLIC:
        return a.env
    if type(a) is TracedArray:
        # NumPy's own Python code, traced as a fallback, converts its arguments with
        # asarray / asanyarray / array: a traced array must stay traced there
        return a.tracer.env
    return None


def _symbolic_env(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        env = _env_of(a)
        if env is not None:
            return env
        if isinstance(a, (tuple, list)):
            for b in a:
                env = _env_of(b)
                if env is not None:
                    return env
    return None


def _router(orig: Callable) -> Callable:
    def routed(*args, **kwargs):
        env = _symbolic_env(args, kwargs)
        tracer = env.tracer if env is not None else None
        handler = FUNCTIONS.get(orig)
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
    """id(original NumPy function) -> (original, router); built once."""
    if not _ROUTERS:
        for orig in [getattr(np, name) for name in ROUTED_NAMES] + SIZE_FUNCTIONS:
            router = _router(orig)
            _ROUTERS[id(orig)] = (orig, router)
            # code that looks a handler up by the name it sees (FUNCTIONS[np.arange])
            # during a trace finds the router: give it the same handler
            if orig in FUNCTIONS:
                FUNCTIONS[router] = FUNCTIONS[orig]
    return _ROUTERS


def _patch_namespace(ns: dict, routers) -> None:
    for k, v in list(ns.items()):
        got = routers.get(id(v))
        if got is not None and got[0] is v:
            ns[k] = got[1]
            _undo.append(lambda ns=ns, k=k, v=v: ns.__setitem__(k, v))


@contextlib.contextmanager
def sizes_routed(user_globals=()):
    """Route the creation functions to the tracer for the duration of the block."""
    global _depth
    sizes = _routers()
    draws = randomness.routers()                   # np.random.* record draws
    watched = randomness.watched()                 # time.time() & co. warn
    routers = dict(sizes)
    routers.update(draws)
    routers.update(watched)
    with _lock:
        if _depth == 0:
            for name, mod in list(sys.modules.items()):
                # never numpy.random's compiled modules: they allocate their results with
                # np.empty(size) and would receive a traced array
                if mod is not None and (name == "numpy" or name.startswith("numpy.")) and \
                        not name.startswith("numpy.random"):
                    d = getattr(mod, "__dict__", None)
                    if isinstance(d, dict):
                        _patch_namespace(d, sizes)
            # only the public namespace: NumPy's compiled random modules look their own
            # globals up (default_rng checks isinstance against RandomState)
            _patch_namespace(np.random.__dict__, draws)
            for d in randomness.impure_modules():
                _patch_namespace(d, watched)
        _depth += 1
        mark = len(_undo)
        for g in user_globals:
            _patch_namespace(g, routers)
            for name, fn in BUILTIN_OVERRIDES.items():
                if name not in g:
                    g[name] = fn
                    _undo.append(lambda g=g, name=name: g.pop(name, None))
        own = _undo[mark:]
        del _undo[mark:]
    try:
        yield
    finally:
        with _lock:
            for undo in reversed(own):
                undo()
            _depth -= 1
            if _depth == 0:
                while _undo:
                    _undo.pop()()
