"""``ss.check``: assert a condition on sizes; while tracing it becomes a guard."""
from __future__ import annotations

from typing import Optional

import numpy as np

from symshape.algebra import relations as R
from symshape.errors import UserError, where
from symshape.algebra.expr import Sym, subs
from symshape.sizes.symint import SymBool
from symshape.userframe import user_frame


def check(cond, message: Optional[str] = None) -> None:
    """Assert ``cond`` (a comparison of sizes).  While tracing, it becomes a guard that the
    exported program checks on its inputs; it never silently specialises."""
    if isinstance(cond, SymBool):
        cond.env.check(cond.cond, cond.hint, message, user_frame(2))
        return
    if isinstance(cond, (bool, np.bool_)):
        if not cond:
            raise UserError("ss.check failed%s%s" % (where(user_frame(2)),
                                                     (": " + message) if message else ""))
        return
    if hasattr(cond, "shape") and hasattr(cond, "dtype"):     # an array, traced or not
        raise UserError("ss.check takes a condition on sizes; this one depends on array "
                        "values%s. Use ss.cond to branch on values." % where(user_frame(2)))
    raise UserError("ss.check expects a comparison of sizes (a bool), got %s%s"
                    % (type(cond).__name__, where(user_frame(2))))


def runtime_condition(env, c):
    """The condition of an ``ss.check`` on data-dependent sizes, as compiled code checks it.

    The solver may have turned the check into a replacement (``u0 -> s0 - 3``), after which
    the replaced condition reads ``True``; the program must still compare the size it
    computes at run time.  So only the replacements of input-bound symbols are applied; a
    data-dependent size the program binds (``u0 = index.shape[0]``) stays itself (the
    solver never introduces a quotient for one: a congruence on it stays a fact).  Returns
    ``True`` only when the condition holds for every size, never because a replacement
    made it so."""
    if type(c) is bool:
        return c
    mapping = {s: v for s, v in env.replacements.items() if not s.unbacked}

    def go(cond):
        if isinstance(cond, R.BoolOp):
            return R.combine(cond.op, [go(a) for a in cond.args])
        return R.make(cond.op, subs(cond.expr, mapping))

    for _ in range(4):             # mapped values may mention mapped symbols (few levels)
        c = go(c)
        if type(c) is bool or not any(isinstance(s, Sym) and s in mapping
                                      for s in c.free_symbols):
            break
    return c
