"""``next()`` on an iterator held as state, refused before it advances it.

A generator or ``itertools`` object the program reaches as state is opaque
(capture/state/opaque.py): an exported program cannot replay a step of it, and a step taken
by the trace cannot be undone.  While a trace runs, ``next`` is bound in ``builtins`` to
``guarded_next`` (capture/namespace.py binds it with ``len`` and ``range``): called by the
user's code on such an iterator, it raises the ``UserError`` of an unrecorded change before
the iterator moves, naming the line; the JIT reads that line as a graph break, so the
statement runs eagerly on every call.  Every other call is Python's ``next``.
"""
from __future__ import annotations

import sys

from symshape.userframe import UserFrame

from .binding import is_user_code
from .objstate import active

_builtin_next = next


def guarded_next(it, *default):
    """Python's ``next``, refused (before it advances ``it``) for an iterator held as the
    state of the trace in progress."""
    r = active()
    if r is not None:
        caller = sys._getframe(1)
        code = caller.f_code
        if is_user_code(code):
            w = r.unrecorded.watched(it, "opaque")
            if w is not None:
                raise r.unrecorded.advance_error(
                    w, UserFrame(code.co_filename, caller.f_lineno, code.co_name), code)
    return _builtin_next(it, *default)


guarded_next.__name__ = guarded_next.__qualname__ = "next"
guarded_next.__doc__ = _builtin_next.__doc__
