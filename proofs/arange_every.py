"""The proof of ``np.arange``'s length (``capture/ops/creation.py:_arange``) for every start,
stop and step: the handler run on symbolic ints along every path (``proofs/intpaths.py``),
its length proven equal to NumPy's documented ``max(0, ceil((stop - start) / step))``, and
a zero step proven to be the one input it refuses.

Each of stop and step is None or a symbolic integer (the code tests ``is None`` first, then
reads each argument only through comparisons and arithmetic), so the two choices per
argument exhaust the rule's domain for int arguments.  A traced size (``SymInt``) runs the
same function on expressions (``symint`` / ``expr`` rules) and a symbolic step is
specialised to an int first; the traced ``np.arange(k)``, ``np.arange(a, b, s)`` and
``np.arange(n - 2)`` with symbolic sizes prove that path's output too.
"""
from __future__ import annotations

import numpy as np
import z3

from symshape.capture.ops import creation as CR
from symshape.capture.tracer import FUNCTIONS
from symshape.errors import UserError

from . import every, proves
from . import numpy_shapes as N
from .intpaths import prove_int_paths
from .pyint import Py
from .symcoeff import sym_ints, value


class _Env:
    """The tracer environment ``_arange`` asks to settle pending guards (nothing pending)."""

    def cancel_pending(self, exprs) -> None:
        """No pending guard to cancel."""

    def commit_pending(self) -> None:
        """No pending guard to commit."""


class _Tracer:
    """A tracer stand-in: ``emit`` hands back the output shape the handler computed."""

    env = _Env()

    def emit(self, op, args, attrs, shape, dtype):
        """The emitted op's shape (the handler's length claim)."""
        return shape


def _length(P: Py, start, stop, step):
    """NumPy's documented length of ``np.arange(start, stop, step)`` (``numpy_shapes``)."""
    (shape,), _ = N.arange(P, start, stop, step)
    return shape[0]


def _every_int_argument() -> None:
    sa, sb, ss = sym_ints("start stop step")
    t, handler = _Tracer(), FUNCTIONS[np.arange]      # creation._arange
    for b in (None, sb):
        for st in (None, ss):
            def run(b=b, st=st):
                try:
                    return handler(t, sa, b, st)[0]
                except UserError as e:          # a zero step: refused
                    return e
            # np.arange(x) is np.arange(0, x); a None step is 1
            start, stop = (value(sa), value(sb)) if b is not None else (z3.IntVal(0),
                                                                        value(sa))
            step = value(ss) if st is not None else z3.IntVal(1)
            P = Py()
            want = _length(P, start, stop, step)
            prove_int_paths(run, lambda L, want=want: L == want, P.side, CR,
                            "np.arange(start, %s, %s)" % ("stop" if b is not None else None,
                                                           "step" if st is not None else None),
                            raises=lambda e, step=step: step == 0)


def _traced() -> None:
    """The SymInt path: symbolic start / stop (and a step specialised by the trace)."""
    from .op_rules import DYN, Contract
    r, A = np.ones, __import__("symshape").Dim.AUTO
    Contract(lambda x, k: np.arange(k) + x[:1].sum(), (r(5), 7), {"x": (A,), "k": DYN}
             ).prove(lambda P, ins: N.arange(P, 0, ins[1], 1), "np.arange(k)")
    Contract(lambda x, a, b: np.arange(a, b, -3) + x[:1].sum(), (r(5), 11, 2),
             {"x": (A,), "a": DYN, "b": DYN}
             ).prove(lambda P, ins: N.arange(P, ins[1], ins[2], -3), "np.arange(a, b, -3)")
    Contract(lambda x: np.arange(x.shape[0] - 2), (r(6),), {"x": (A,)}
             ).prove(lambda P, ins: N.arange(P, 0, ins[0][0] - 2, 1), "np.arange(n - 2)")


@proves("arange.length",
        over=every("every start, stop (None or any integer) and step (None or any integer; "
                   "0 refused), as Z3 integers along every path of the handler; traced "
                   "np.arange(k), np.arange(a, b, -3), np.arange(n - 2) with symbolic sizes"))
def arange_length():
    _every_int_argument()
    _traced()
