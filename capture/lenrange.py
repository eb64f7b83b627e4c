"""``len`` and ``range`` over sizes while a trace runs: ``len(x)`` keeps a traced array's first
size symbolic, ``range(n)`` used as an index stays symbolic (iterating it unrolls the loop for
this size, with a warning).  Apart from ``capture.namespace`` (which binds them in
``builtins`` while a trace runs) so the op modules can read ``SymRange`` without importing the
namespace router, which imports them back through ``randomness``.

Bound in ``builtins``, the routers see every caller of the process: they act only for the
user's code (symshape's, NumPy's and the standard library's code keep Python's ``len`` and ``range``, as they
always had) and only when a size is involved; every other call is the builtin's.
"""
from __future__ import annotations

import operator
import sys

import numpy as np

from symshape.algebra import relations as R
from symshape.sizes.symint import SymInt, describe
from symshape.userframe import user_frame

from .loop_convert import maybe_found
from .state.advance import guarded_next
from .state.binding import user_code
from .tracer import FUNCTIONS, TracedArray

_builtin_len = len
_builtin_range = range
_operator_index = operator.index


def called_by_user(depth: int = 1) -> bool:
    """The code ``depth`` frames above the caller is the user's (not symshape's, NumPy's or
    the stdlib's)."""
    return user_code(sys._getframe(depth + 1).f_code)


def _user_caller() -> bool:
    """The router's caller is the user's code (not symshape's, NumPy's or the stdlib's)."""
    return user_code(sys._getframe(2).f_code)


#: the list types capture/loops.py makes (the rows a loop over a dynamic count appended,
#: ``[F] * n``), which know their symbolic length (``symbolic_len``: None once they are
#: plain lists again); registered by loops.py, which imports this module
SYMBOLIC_LISTS: set = set()


def sym_len(obj):
    """``len`` that keeps a traced array's first size symbolic (``np.zeros(len(x))``)."""
    # (every len() of the process goes through here while a trace runs: one set lookup)
    if type(obj) in SYMBOLIC_LISTS:
        n = obj.symbolic_len()
        if n is not None:
            return n
    if type(obj) is TracedArray:
        shape = obj.shape
        if shape and type(shape[0]) is SymInt and _user_caller():
            return shape[0]
    return _builtin_len(obj)


class SymRange:
    """``range`` over sizes: an index (``wpe[range(len(ids))]``) stays symbolic; iterating
    unrolls the loop and specialises the size, with a warning saying what keeps it symbolic."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step) -> None:
        self.start, self.stop, self.step = start, stop, step

    def _concrete(self, why=None) -> range:
        frame = user_frame(3)
        vals = []
        for v in (self.start, self.stop, self.step):
            if type(v) is SymInt:
                v = v.env.specialize(v.expr, "iterating over range(%s)" % v.describe(), frame, advice=(
                    "a Python loop over a dynamic size unrolls it for this size only%s; use "
                    "ss.map(f, xs) or ss.while_loop(cond, body, init) to keep it dynamic, or "
                    "vectorize the loop" % (
                        " (symshape keeps a for loop over a dynamic count as a loop, but not "
                        "this one: %s)" % why if why else "")))
            vals.append(v)
        return _builtin_range(*vals)

    def __iter__(self):
        # a generator: the loop that iterates it (the frame calling next) is found on the
        # first item, where a for statement over a symbolic count is converted into a loop
        # node (capture/loops.py) instead of unrolled
        why = None
        if any(type(v) is SymInt for v in (self.start, self.stop, self.step)):
            why = maybe_found(2)
        yield from self._concrete(why)

    def __reversed__(self):
        # lazy, as __iter__ (``for t in reversed(range(n))`` is converted by its helper)
        why = None
        if any(type(v) is SymInt for v in (self.start, self.stop, self.step)):
            why = maybe_found(2)
        yield from reversed(self._concrete(why))

    def __len__(self):
        return _builtin_len(self._concrete())

    def __getitem__(self, i):
        return self._concrete()[i]

    def __contains__(self, v):
        return v in self._concrete()

    def arange(self, tracer):
        """The traced ``np.arange`` this range stands for (used as an index)."""
        return FUNCTIONS[np.arange](tracer, self.start, self.stop, self.step)

    def __repr__(self) -> str:
        return "range(%s)" % ", ".join(describe(v) for v in (self.start, self.stop, self.step))


def _symbolic_range(args):
    if _builtin_len(args) == 1:
        return SymRange(0, args[0], 1)
    if _builtin_len(args) == 2:
        return SymRange(args[0], args[1], 1)
    return SymRange(*args)


class _RangeType(type):
    """The routed ``range`` is a class whose instances are exactly Python's ranges, so
    ``isinstance(r, range)`` and ``issubclass`` keep working in every module while it is
    bound (a plain function there would make them raise)."""

    def __call__(cls, *args):
        for a in args:
            if type(a) is SymInt:
                if _user_caller():
                    return _symbolic_range(args)
                break
        return _builtin_range(*args)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _builtin_range)

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, _builtin_range)


class sym_range(metaclass=_RangeType):
    """``range`` that stays symbolic over sizes (see ``SymRange``); Python's own otherwise."""
    __slots__ = ()


sym_range.__name__ = sym_range.__qualname__ = "range"
sym_range.__doc__ = _builtin_range.__doc__

def sym_index(obj):
    """``operator.index`` that keeps a size symbolic for the user's code (a slice bound, a
    count or a NumPy argument computed with ``operator.index(n)``)."""
    if type(obj) is SymInt and _user_caller():
        return obj
    return _operator_index(obj)


_builtin_sum = sum
_NO_START = object()


def sym_sum(iterable, /, start=_NO_START):
    """``sum`` of a traced array over its first axis without unrolling it (which would pin
    that size): Python adds the rows one after another from 0, as ``np.cumsum`` does, so its
    last row is the same number, bit for bit (``pdf / sum(pdf)``)."""
    rows = iterable.stacked_rows() if type(iterable) in SYMBOLIC_LISTS else None
    if rows is not None:        # sum(outs) of a list a loop over a dynamic count built
        iterable = rows
    if type(iterable) is TracedArray and start is _NO_START and iterable.ndim >= 1 \
            and (rows is not None or _user_caller()):
        x = iterable
        n = x.shape[0]
        if type(n) is not SymInt or n.env.evaluate(R.ge(n.expr, 1), None, user_frame(2)):
            # 0 + a bool is an int; 0 + any other number keeps its NumPy type
            dt = np.dtype(np.int64) if x.dtype.kind == "b" else x.dtype
            if n != 0:
                return np.cumsum(x, axis=0, dtype=dt)[-1]
    if start is _NO_START:
        return _builtin_sum(iterable)
    return _builtin_sum(iterable, start)


# the builtins routed while a trace runs (bound in ``builtins`` by capture.namespace), so the
# traced code's len/range see sizes wherever it lives
# (``next``: refused on an iterator held as state, capture/state/advance.py)
BUILTIN_ROUTERS = {"len": sym_len, "range": sym_range, "sum": sym_sum, "next": guarded_next}
# ``operator.index`` routed in the ``operator`` module while a trace runs (the user's code
# reaches it as ``operator.index``, or by the name it imported)
OPERATOR_ROUTERS = {"index": sym_index}
