"""Running one real-library entry point: export it with its dynamic dimensions, run the
exported program and ``ss.compile``'s at every size, and compare results and the object
state the call leaves with eager Python's.  ``outcome(entry)`` says how far it got."""
from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import numpy as np

import symshape as ss


@dataclass(frozen=True)
class Outcome:
    """``status``: "works", "refused" (a UserError at export or run), "mismatch" (a value
    or state differs from eager), "error" (any other exception: a bug); ``detail``: the
    first line saying why."""
    status: str
    detail: str = ""


class Mismatch(AssertionError):
    pass


def _close(got, want, what: str) -> None:
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            raise Mismatch("%s: %r items, eager %r" % (what, type(got).__name__, len(want)))
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, "%s[%d]" % (what, i))
        return
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            raise Mismatch("%s: keys differ from eager" % what)
        for k in want:
            _close(got[k], want[k], "%s[%r]" % (what, k))
        return
    if isinstance(want, (np.ndarray, np.generic, float, int, complex, bool)):
        g, w = np.asarray(got), np.asarray(want)
        if g.shape != w.shape or g.dtype != w.dtype:
            raise Mismatch("%s: %s %s, eager %s %s" % (what, g.dtype, g.shape, w.dtype, w.shape))
        if g.dtype.kind in "fc":
            ok = np.allclose(g, w, rtol=1e-9, atol=1e-12, equal_nan=True)
        else:
            ok = np.array_equal(g, w)
        if not ok:
            raise Mismatch("%s: values differ from eager" % what)


def _state(obj):
    """The object's array and number attributes, copied (its other attributes are objects
    the program guards by identity: they stay as they are)."""
    if obj is None:
        return None
    return {k: copy.deepcopy(v) for k, v in vars(obj).items() if _comparable(v)}


def _restore(obj, snap) -> None:
    if obj is not None:
        vars(obj).update(copy.deepcopy(snap))


def _compare(run, f, entry, state) -> None:
    """``run`` and eager ``f`` called on the same arguments and object state, at every
    size of the entry."""
    for n in entry.sizes:
        _, args, _, _ = entry.make(n)
        snap = _state(state)
        got = run(*copy.deepcopy(args))
        got_state = _state(state)
        _restore(state, snap)
        want = f(*copy.deepcopy(args))
        _close(got, want, "result at size %d" % n)
        if state is not None:
            _close(got_state, _state(state), "state at size %d" % n)


def _comparable(v) -> bool:
    return isinstance(v, (np.ndarray, np.generic, float, int, bool, complex))


def check(entry) -> None:
    """Export, run and compile ``entry``; raises what stops it (``Mismatch`` for a wrong
    value)."""
    f, args, dyn, state = entry.make(entry.sizes[0])
    snap = _state(state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = ss.export(f, copy.deepcopy(args), dynamic_shapes=dyn)
        _restore(state, snap)
        _compare(ep.module(), f, entry, state)
        _restore(state, snap)
        _compare(ss.compile(f, dynamic=True), f, entry, state)
        _restore(state, snap)


def outcome(entry) -> Outcome:
    """How ``entry`` fares, as a record (never raises)."""
    try:
        if entry.context is None:
            check(entry)
        else:
            with entry.context():
                check(entry)
    except Mismatch as e:
        return Outcome("mismatch", str(e))
    except ss.UserError as e:
        return Outcome("refused", _first(e))
    except Exception as e:                      # noqa: BLE001 - a bug of the tracer
        return Outcome("error", "%s: %s" % (type(e).__name__, _first(e)))
    return Outcome("works")


def _first(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else type(e).__name__
