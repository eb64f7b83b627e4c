"""What the user's code sees of a traced array's class: ``np.ndarray``.

Library helpers branch on the class (``if isinstance(x, np.ndarray) and x.ndim == 1: x =
x[None]``; parameter collection ``[v for v in vars(self).values() if isinstance(v,
np.ndarray)]``).  A traced array stands for an ndarray, so the user's code must take the
branch eager NumPy takes:

- ``isinstance(x, np.ndarray)``: Python's ``isinstance`` falls back to ``x.__class__`` when
  the type itself is no subclass; ``TracedArray.__class__`` answers ``np.ndarray`` when the
  caller is the user's code (``shows_ndarray``), its real class for symshape's, NumPy's and
  the standard library's code, whose checks mean "a real buffer".
- ``type(x) is np.ndarray``: the name ``type`` is routed in the globals of the user modules
  a trace reaches (as ``int`` is, capture/namespace.py) to ``sym_type``, which answers
  ``np.ndarray`` for a traced array and is Python's ``type`` otherwise (and for
  ``isinstance`` / ``issubclass`` checks against it); ``type(3)`` is the routed ``int`` of
  the same modules, so ``type(3) is int`` holds there as in eager Python, and the class of a
  recording stand-in is the user's (``type(self) is Model``, ``type(self.cache) is dict``).
"""
from __future__ import annotations

import builtins
import functools
import os
import sys
import types

import numpy as np

from .conversions import answering_as, sym_int
from .state.binding import is_user_code
from .state.objstate import RecDict, RecList, RecSet

_type = builtins.type
_int = builtins.int
_RECORDING = {RecList: list, RecDict: dict, RecSet: set}
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep


# libraries that pick an array namespace from the class (``array_namespace(x)``): they must
# see the traced class, whose ``__array_namespace__`` is symshape's
_NAMESPACE_DISPATCHERS = ("array_api_compat", "array_api_strict")


def _dispatcher_dirs() -> tuple:
    out = []
    for name in _NAMESPACE_DISPATCHERS:
        f = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(f, str):
            out.append(os.path.dirname(os.path.abspath(f)) + os.sep)
    return tuple(out)


@functools.lru_cache(maxsize=8192)
def shows_ndarray(code: types.CodeType) -> bool:
    """Whether code sees a traced array as an ``np.ndarray`` (the user's code, not
    symshape's, NumPy's, the standard library's or an array-API dispatcher's)."""
    if not is_user_code(code):
        return False
    f = os.path.abspath(code.co_filename)
    return not f.startswith(_NUMPY_DIR) and not f.startswith(_dispatcher_dirs() or ("\0",))


class _TypeClass(answering_as(_type)):
    """``sym_type(x)`` is ``type(x)``, but ``np.ndarray`` for a traced array; checks
    against ``sym_type`` answer as against ``type``."""

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            t = _type(args[0])
            if getattr(t, "_ss_shows_ndarray", False):
                return np.ndarray if shows_ndarray(sys._getframe(1).f_code) else t
            if getattr(t, "_ss_recording", False) or t in _RECORDING:
                # a recording stand-in of a user object or container (capture/state/
                # objstate.py): ``type(self) is Model`` as in eager Python
                return _RECORDING.get(t) or t.__mro__[1]
            # ``int`` is routed in the same modules (capture/conversions.py): ``type(3) is
            # int`` and ``type(v) in (int, float)`` must hold there as in eager Python
            return sym_int if t is _int else t
        return _type(*args, **kwargs)


class sym_type(metaclass=_TypeClass):
    """``type`` in the user's traced modules (see the module's doc)."""

    __slots__ = ()


sym_type.__name__ = sym_type.__qualname__ = "type"
