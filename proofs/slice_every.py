"""Proofs of ``slice_length`` (``capture/ops/indexing.py``) for every axis size, every start
and stop (None or any integer) and every step of the rule's sign (or None for step > 0):
the code run on symbolic ints along every path (``proofs/intpaths.py``), its length proven
equal to ``len(range(n)[start:stop:step])`` as Python documents it.

Each bound is None or a symbolic integer (the code tests ``is None`` first, then reads an
integer only through comparisons and arithmetic), so the two choices per bound exhaust the
rule's domain.  The traced path (sizes as ``SymInt``) runs the same function on expressions
whose arithmetic the ``symint`` / ``expr`` rules prove; its one branch of its own, a
symbolic bound negative except where the axis is empty (``_negative``, positive steps
only), is proven on the traced ``x[:k]`` for symbolic ``n`` and ``k``.
"""
from __future__ import annotations

import numpy as np
import z3

from symshape.capture.ops import indexing as IX

from . import every, proves
from .code import prove_code
from .intpaths import prove_int_paths
from .pyint import prove
from .symcoeff import sym_ints, value

_DOMAIN = ("every axis size n >= 0, every start and stop (None or any integer) and every "
           "step %s, as Z3 integers along every path of slice_length%s")


def adjust(v, n, step_pos: bool, default):
    """CPython's ``PySlice_AdjustIndices`` for one bound, from the documented semantics:
    None is the end value for the step's sign; a negative index counts from the end
    (``+ n``) and, still negative, becomes 0 (step > 0) or -1 (step < 0); an index past
    the end becomes n (step > 0) or n - 1 (step < 0).  ``default``: the bound was None
    and this is its end value."""
    if default is not None:
        return default
    below = 0 if step_pos else -1
    past = n if step_pos else n - 1
    return z3.If(v < 0, z3.If(v + n < 0, below, v + n), z3.If(v >= n, past, v))


def range_len_ok(L, start, stop, step, step_pos: bool):
    """``L == len(range(start, stop, step))`` by the docs' definition of a range: its
    items are ``start + step*i`` for i >= 0 while below stop (step > 0) / above stop
    (step < 0).  L items: the last is inside, the next is not."""
    if step_pos:
        return z3.And(L >= 0, z3.Or(L == 0, start + (L - 1) * step < stop),
                      start + L * step >= stop)
    return z3.And(L >= 0, z3.Or(L == 0, start + (L - 1) * step > stop),
                  start + L * step <= stop)


def _ends(step_pos: bool, n):
    """The end values of a None start and stop for the step's sign."""
    return (0, n) if step_pos else (n - 1, -1)


def _every_slice(step_pos: bool) -> None:
    n, start, stop, step, L1, L2 = z3.Ints("n start stop step L1 L2")
    sign_ok = step > 0 if step_pos else step < 0
    # the characterisation of len(range(...)) names one length: unique
    prove(L1 == L2, sign_ok, range_len_ok(L1, start, stop, step, step_pos),
          range_len_ok(L2, start, stop, step, step_pos))
    sn, sa, sb, ss = sym_ints("n start stop step")
    first, last = _ends(step_pos, value(sn))
    steps = (ss, None) if step_pos else (ss,)       # a None step is 1
    for st in steps:
        zst = value(ss) if st is not None else z3.IntVal(1)
        hyps = [value(sn) >= 0, value(ss) > 0 if step_pos else value(ss) < 0]
        for a in (None, sa):
            for b in (None, sb):
                ref_a = adjust(value(sa), value(sn), step_pos, first if a is None else None)
                ref_b = adjust(value(sb), value(sn), step_pos, last if b is None else None)
                prove_int_paths(
                    lambda a=a, b=b, st=st: IX.slice_length(sn, a, b, st),
                    lambda L, ra=ref_a, rb=ref_b, z=zst: range_len_ok(L, ra, rb, z, step_pos),
                    hyps, IX, "slice_length(n, %s, %s, %s)" % (
                        "start" if a is not None else None,
                        "stop" if b is not None else None, "step" if st is not None else None))


def _traced_symbolic_bound() -> None:
    """``x[:k]`` traced with symbolic n and k: the SymInt path, with ``_negative``'s rule
    for a bound negative except on an empty axis (the one branch the traced path has of
    its own; it applies to positive steps only)."""
    from .op_rules import DYN, Contract
    import symshape as ss
    tr = Contract(lambda x, k: x[:k], (np.ones(9), 4), {"x": (ss.Dim.AUTO,), "k": DYN})
    n, k = tr.ins[0][0], tr.ins[1]
    ref_b = adjust(k, n, True, None)
    prove_code(lambda L: range_len_ok(L, z3.IntVal(0), ref_b, 1, True), [tr.outs[0][0]],
               tr.hyps, P=tr.P, what="x[:k] traced")


@proves("slice.length_step_pos",
        over=every(_DOMAIN % ("> 0 (or None)", "; traced x[:k] with n, k symbolic")))
def slice_length_step_pos():
    _every_slice(True)
    _traced_symbolic_bound()


@proves("slice.length_step_neg", over=every(_DOMAIN % ("< 0", "")))
def slice_length_step_neg():
    _every_slice(False)
