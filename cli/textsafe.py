"""Text from user code (exception messages, source lines) made safe for a terminal."""
from __future__ import annotations

import re

# C0 and C1 control characters and DEL; tab and (when kept) newline are fine on a terminal
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_NL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(text: str, keep_newlines: bool = False) -> str:
    """``text`` with control characters (ESC, carriage return, bell...) shown as ``\\x1b``
    escapes, so a user's message cannot move the cursor or recolour the report."""
    pat = _CONTROL if keep_newlines else _CONTROL_NL
    return pat.sub(lambda m: "\\x%02x" % ord(m.group()), text)
