"""``try`` and ``with`` statements under the JIT: where eager semantics need Python.

Tracing runs a ``try`` body once, on proxies: NumPy raises nothing there, so an ``except``
would never run, a ``finally`` and a context manager's ``__enter__`` / ``__exit__`` would
run once, at trace time, and a broad ``except Exception`` could even swallow the tracer's
own graph break.  So each such statement of the compiled function is a graph break of its
own kind: the statement runs as Python on every call (its header, handlers and context
manager), while the code in its blocks runs as compiled segments (codegen/split.py).  A
compiled segment that raises at run time (``np.linalg.cholesky`` of a matrix that is not
positive definite) runs again eagerly (codegen/jit.py), so the exception, and the partial
effects before it, are eager's, and the ``except`` around it sees exactly what eager code
would.
"""
from __future__ import annotations

import ast
from typing import List

from symshape.userframe import UserFrame

from . import split as _split
from .breaks import BreakRecord

# why each kind of statement runs as Python (the reason ``explain`` and ``report`` show)
REASONS = {
    "try": "try statement (runs as Python on every call, so that its except / finally "
           "blocks see what the array work raises; the code in its blocks runs compiled)",
    "with": "with statement (its context manager enters and exits on every call, as Python; "
            "the code in its body runs compiled)",
}


def kind(stmt: ast.stmt) -> str:
    """``"with"`` or ``"try"``."""
    return "with" if isinstance(stmt, (ast.With, ast.AsyncWith)) else "try"


def protected_breaks(f, fdef: ast.FunctionDef) -> List[BreakRecord]:
    """A break record per ``try`` / ``with`` statement of ``fdef`` (the source of ``f``),
    at the statement's first line, in source order."""
    code = _split.code_of(f)
    if code is None:
        return []
    return [BreakRecord(UserFrame(code.co_filename, st.lineno, fdef.name), REASONS[kind(st)])
            for st in _split.protected(fdef)]
