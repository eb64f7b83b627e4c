"""``ss.check``: assert a condition on sizes; while tracing it becomes a guard."""
from __future__ import annotations

from typing import Optional

from .errors import UserError, where
from .symint import SymBool
from .userframe import user_frame


def check(cond, message: Optional[str] = None) -> None:
    """Assert ``cond`` (a comparison of sizes).  While tracing, it becomes a guard that the
    exported program checks on its inputs; it never silently specialises."""
    if isinstance(cond, SymBool):
        cond.env.check(cond.cond, cond.hint, message, user_frame(2))
        return
    if isinstance(cond, bool) or type(cond).__name__ == "bool_":
        if not cond:
            raise UserError("ss.check failed%s%s" % (where(user_frame(2)),
                                                     (": " + message) if message else ""))
        return
    if type(cond).__name__ == "TracedArray":
        raise UserError("ss.check takes a condition on sizes; this one depends on array "
                        "values%s. Use ss.cond to branch on values." % where(user_frame(2)))
    raise UserError("ss.check expects a comparison of sizes (a bool), got %s%s"
                    % (type(cond).__name__, where(user_frame(2))))
