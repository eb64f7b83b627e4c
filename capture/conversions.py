"""``int`` in traced code: ``int(f)`` of a symbolic float built from sizes gives a symbolic
size (truncation toward zero, ``symshape.sizes.floatint``) instead of Python's ``TypeError``, and
``int(n)`` of a size is that size, still symbolic.

Python's ``int()`` must return a real ``int``, so the name ``int`` itself is routed in the
globals of the traced functions (as ``len`` and ``range`` are, ``capture.lenrange``).  The
stand-in is a subclass of ``int`` that behaves as ``int`` wherever code inspects the class:
``isinstance(v, int)`` and ``issubclass`` answer as for ``int``, NumPy reads it as the same
dtype (``np.zeros(n, dtype=int)``), and every other call is ``int(...)`` itself.
"""
from __future__ import annotations

import builtins

import numpy as np

from symshape.sizes.symfloat import SymFloat
from symshape.sizes.symint import SymInt

_int = builtins.int


def answering_as(target: type, also: tuple = ()) -> type:
    """A metaclass whose classes answer ``isinstance`` / ``issubclass`` checks, and print,
    as ``target`` does (a stand-in bound under a builtin's name while tracing); objects whose
    type is one of ``also`` are instances too."""
    class AnsweringAs(type):
        def __instancecheck__(cls, obj) -> bool:
            return isinstance(obj, target) or type(obj) in also

        def __subclasscheck__(cls, sub) -> bool:
            return issubclass(sub, target)

        def __repr__(cls) -> str:
            return repr(target)
    return AnsweringAs


# answers isinstance / issubclass checks as ``int`` does; a size is an int in eager code, so
# ``isinstance(n, int)`` checks of sizes pass
_IntClass = answering_as(_int, also=(SymInt,))


class sym_int(_int, metaclass=_IntClass):
    """``int`` while tracing: a symbolic float of sizes becomes a symbolic size."""

    dtype = np.dtype(_int)          # np.dtype(sym_int) is np.dtype(int)

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            if type(args[0]) is SymFloat:
                return args[0].to_int()
            if type(args[0]) is SymInt:
                # ``int(x.shape[0])`` is already an int: the size stays symbolic wherever it
                # is used as a size, index or count, and specialises where it becomes data
                # (str(), hash(), a NumPy call that needs a Python int)
                return args[0]
        return _int(*args, **kwargs)


sym_int.__name__ = sym_int.__qualname__ = "int"
