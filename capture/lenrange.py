"""``len`` and ``range`` over sizes while a trace runs: ``len(x)`` keeps a traced array's first
size symbolic, ``range(n)`` used as an index stays symbolic (iterating it unrolls the loop for
this size, with a warning).  Apart from ``capture.namespace`` (which installs them in the
traced code's globals) so the op modules can read ``SymRange`` without importing the
namespace router, which imports them back through ``randomness``."""
from __future__ import annotations

import numpy as np

from symshape.symint import SymInt, describe
from symshape.userframe import user_frame

from .conversions import sym_int
from .tracer import FUNCTIONS, TracedArray

_builtin_len = len
_builtin_range = range


def sym_len(obj):
    """``len`` that keeps a traced array's first size symbolic (``np.zeros(len(x))``)."""
    shape = getattr(obj, "shape", None)
    if shape and type(shape[0]) is SymInt and isinstance(obj, TracedArray):
        return shape[0]
    return _builtin_len(obj)


class SymRange:
    """``range`` over sizes: an index (``wpe[range(len(ids))]``) stays symbolic; iterating
    unrolls the loop and specialises the size, with a warning saying what keeps it symbolic."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step) -> None:
        self.start, self.stop, self.step = start, stop, step

    def _concrete(self) -> range:
        frame = user_frame(3)
        vals = []
        for v in (self.start, self.stop, self.step):
            if type(v) is SymInt:
                v = v.env.specialize(v.expr, "iterating over range(%s)" % v.describe(), frame, advice=(
                    "a Python loop over a dynamic size unrolls it for this size only; use "
                    "ss.map(f, xs) or ss.while_loop(cond, body, init) to keep it dynamic, or "
                    "vectorize the loop"))
            vals.append(v)
        return _builtin_range(*vals)

    def __iter__(self):
        return iter(self._concrete())

    def __reversed__(self):
        return reversed(self._concrete())

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


def sym_range(*args):
    """``range`` that stays symbolic over sizes (see ``SymRange``)."""
    if not any(type(a) is SymInt for a in args):
        return _builtin_range(*args)
    if len(args) == 1:
        return SymRange(0, args[0], 1)
    if len(args) == 2:
        return SymRange(args[0], args[1], 1)
    return SymRange(*args)


# names injected into the user's module globals during a trace (only where the module does
# not define them itself), so that the traced code's len/range see sizes
BUILTIN_OVERRIDES = {"len": sym_len, "range": sym_range, "int": sym_int}
