"""Logging under the ``symshape`` logger tree.

``SYMSHAPE_LOGS=+dynamic`` (read at import) or ``set_logs(dynamic=logging.DEBUG)`` prints one
``create_symbol`` line per symbol and one ``guard added`` line per guard.  Setting
``SYMSHAPE_GUARD_STACK="s0 == 5"``-style text (a guard as the log prints it) (or ``set_logs(guard_stack=...)``) prints
the full user stack for guards whose text contains it (and turns the log on at INFO when
``SYMSHAPE_LOGS`` did not).  An unknown name in ``SYMSHAPE_LOGS`` is reported on stderr.
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Optional

dynamic_log = logging.getLogger("symshape.dynamic")
_handler: Optional[logging.Handler] = None
guard_stack_filter: Optional[str] = os.environ.get("SYMSHAPE_GUARD_STACK") or None


def _ensure_handler() -> None:
    global _handler
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("[symshape.%(name_short)s] %(message)s"))
        _handler.addFilter(_ShortName())
        logging.getLogger("symshape").addHandler(_handler)


class _ShortName(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.name_short = record.name.rsplit(".", 1)[-1]
        return True


def set_logs(dynamic: Optional[int] = None, guard_stack: Optional[str] = None) -> None:
    """Set the level of the ``symshape.dynamic`` logger (records go to stderr), and the
    text of the guard whose full user stack should be logged."""
    global guard_stack_filter
    if dynamic is not None:
        _ensure_handler()
        dynamic_log.setLevel(dynamic)
        # the handler passes whatever the logger lets through
        _handler.setLevel(logging.DEBUG)
    if guard_stack is not None:
        guard_stack_filter = guard_stack or None


LOG_NAMES = ("dynamic",)


def _from_env() -> None:
    spec = os.environ.get("SYMSHAPE_LOGS", "")
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name = item.lstrip("+-")
        level = logging.DEBUG if item.startswith("+") else (
            logging.ERROR if item.startswith("-") else logging.INFO)
        if name == "dynamic":
            set_logs(dynamic=level)
        else:
            print("symshape: SYMSHAPE_LOGS: unknown log %r ignored; the logs are: %s "
                  "(e.g. SYMSHAPE_LOGS=+dynamic)" % (name, ", ".join(LOG_NAMES)),
                  file=sys.stderr)
    if guard_stack_filter and dynamic_log.getEffectiveLevel() > logging.INFO:
        # the guard's stack is printed with the guard log: asking for one turns it on
        set_logs(dynamic=logging.INFO)


_from_env()
