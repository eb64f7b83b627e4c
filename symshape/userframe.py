"""Finding the user's source line: the innermost frame outside symshape and NumPy."""
from __future__ import annotations

import io
import linecache
import os
import sys
import tokenize
from typing import List, NamedTuple, Optional

import numpy


def _engine_dirs() -> tuple:
    here = os.path.dirname(os.path.abspath(__file__))
    return tuple(d + os.sep for d in (here, os.path.dirname(os.path.abspath(numpy.__file__))))


# the folders of symshape's own code: the engine's here, the upper packages' (capture,
# codegen, the CLI) added by themselves on import -- they sit beside symshape/ in a source
# checkout and inside it once installed, and the engine does not need to know which
_SKIP = _engine_dirs()


def register_package(init_file: str) -> None:
    """Count the folder of the package whose ``__init__.py`` is ``init_file`` as symshape's
    own code, whose frames are never the user's line."""
    global _SKIP
    folder = os.path.dirname(os.path.abspath(init_file)) + os.sep
    if folder not in _SKIP:
        _SKIP = _SKIP + (folder,)


def internal_dirs() -> tuple:
    """The folders registered as symshape's own code (see ``register_package``)."""
    return _SKIP


_SKIP_FILES = ("<frozen", "<__array_function__")


class UserFrame(NamedTuple):
    filename: str
    lineno: int
    function: str

    @property
    def code(self) -> str:
        """The line's code as written, without its trailing comment and padding."""
        return without_comment(linecache.getline(self.filename, self.lineno)).strip()

    @property
    def location(self) -> str:
        return "%s:%d" % (self.filename, self.lineno)

    def describe(self) -> str:
        code = self.code
        base = "%s in %s" % (self.location, self.function)
        return "%s, code: %s" % (base, code) if code else base


def without_comment(line: str) -> str:
    """``line`` cut before its ``#`` comment (a ``#`` inside a string is kept); a line that
    does not tokenize on its own (inside a multi-line string) is returned as it is."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return line[:tok.start[1]]
    except (tokenize.TokenError, SyntaxError):
        pass     # an unclosed bracket continues on the next line: the comment came first
    return line


def is_internal(filename: str) -> bool:
    # symshape's own code is Python files: a code block of one of its documentation pages
    # (docs/*.md, run with the page's path by the docs build) is user code
    return (filename.startswith(_SKIP) and filename.endswith(".py")) or \
        filename.startswith(_SKIP_FILES)


def user_frame(depth: int = 1) -> Optional[UserFrame]:
    """The innermost frame of user code above the caller, or None."""
    f = sys._getframe(depth)
    while f is not None:
        fn = f.f_code.co_filename
        if not is_internal(fn):
            return UserFrame(fn, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return None


def user_site(depth: int = 1):
    """``(UserFrame, the frame's globals)`` of the innermost user frame above the caller, or
    ``(None, None)``: the line and the module namespace its code reads names from."""
    f = sys._getframe(depth)
    while f is not None:
        code = f.f_code
        if not is_internal(code.co_filename):
            return UserFrame(code.co_filename, f.f_lineno, code.co_name), f.f_globals
        f = f.f_back
    return None, None


def user_stack(depth: int = 1, limit: int = 30) -> List[UserFrame]:
    """All user frames, innermost first (for the extended guard log)."""
    out = []
    f = sys._getframe(depth)
    while f is not None and len(out) < limit:
        fn = f.f_code.co_filename
        if not is_internal(fn):
            out.append(UserFrame(fn, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    return out


def traceback_user_frame(tb) -> Optional[UserFrame]:
    """The innermost frame of user code in a traceback (where an exception raised by
    library code was reached from), or None."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not is_internal(code.co_filename):
            found = UserFrame(code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    return found
