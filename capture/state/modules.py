"""Modules of the user's project reached as values (``import config``), recorded like
objects: ``config.calls += 1`` and ``config.SCALE = 2.0`` are writes replayed on every call,
and what the user's code reads from the module is guarded with its line.

A module is shared by every thread (and the tracer routes names in its namespace while
tracing), so it is never snapshotted and put back as a whole, as a plain object is: its
class is swapped for ``RecordingModule`` while any trace records it (counted, so
overlapping traces in threads keep it swapped until the last one ends), and each trace puts
back only the attributes it wrote itself, in reverse order.
"""
from __future__ import annotations

import threading
import types
from typing import Dict, List

from .access import AccessPath
from .objstate import active, recording_class

_MISSING = object()
_LOCK = threading.Lock()
_SWAPPED: Dict[int, List] = {}          # id(module) -> [traces recording it, the module]
_BASE = recording_class(types.ModuleType)


def _note(mod, name: str) -> None:
    """The value ``name`` had before this trace first wrote it (put back afterwards)."""
    r = active()
    if r is None or not r.owns(mod):
        return
    undo = r.__dict__.setdefault("module_undo", {})
    key = (id(mod), name)
    if key not in undo:
        undo[key] = (mod, name, vars(mod).get(name, _MISSING))


class RecordingModule(_BASE):
    """A module whose attribute writes are recorded (``_BASE``) and undone after the
    trace, one by one."""

    __slots__ = ()

    def __setattr__(self, name, v):
        _note(self, name)
        _BASE.__setattr__(self, name, v)

    def __delattr__(self, name):
        _note(self, name)
        _BASE.__delattr__(self, name)


def record(recorder, mod, path: AccessPath, undo: list) -> bool:
    """Record ``mod`` at ``path`` for this trace (``undo``: where to put what ends it);
    False when its class is not a plain module's (left alone)."""
    if type(mod) not in (types.ModuleType, RecordingModule):
        return False
    with _LOCK:
        got = _SWAPPED.get(id(mod))
        if got is None:
            object.__setattr__(mod, "__class__", RecordingModule)
            got = _SWAPPED[id(mod)] = [0, mod]
        got[0] += 1
    recorder.paths[id(mod)] = path
    undo.append(lambda: _release(recorder, mod))
    return True


def _release(recorder, mod) -> None:
    """This trace is done with ``mod``: its writes put back, the class too when no other
    trace records it."""
    writes = recorder.__dict__.get("module_undo", {})
    for key in reversed(list(writes)):
        m, name, old = writes[key]
        if m is not mod:
            continue
        d = vars(mod)
        if old is _MISSING:
            d.pop(name, None)
        else:
            d[name] = old
        del writes[key]
    with _LOCK:
        got = _SWAPPED.get(id(mod))
        if got is not None:
            got[0] -= 1
            if got[0] == 0:
                del _SWAPPED[id(mod)]
                object.__setattr__(mod, "__class__", types.ModuleType)
