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
from typing import List, Optional

from symshape.userframe import UserFrame

from . import split as _split
from .breaks import HELPER_WITH, BreakRecord, GraphBreak

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




def check_helper_with(nodes, root, f) -> None:
    """Raise a graph break where traced work ran inside a ``with`` of a function that
    ``root`` (the function the user compiled) calls: tracing entered that context once,
    compiled code would run outside it.  The break names the statement of ``f`` (``root``
    or one of its segments) that called it: the first of ``f``'s own lines traced after
    that work: the call of the function by name between ``f``'s traced lines around it,
    else the next of them (tracing records no call stack; a wrong guess makes a later
    statement eager, and the segment holding the call finds it again)."""
    root_code, code = _split.code_of(root), _split.code_of(f)
    if root_code is None or code is None:
        return
    own = _split.code_lines(root_code)
    mine = lambda fr: fr is not None and fr.filename == root_code.co_filename and \
        fr.lineno in own                                               # noqa: E731
    for i, n in enumerate(nodes):
        fr = n.frame
        if fr is None or mine(fr) or _split.in_with(fr.filename, fr.lineno) is None:
            continue
        brk = GraphBreak(HELPER_WITH % (fr.function or "a function it calls"),
                         UserFrame(fr.filename, _split.in_with(fr.filename, fr.lineno),
                                   fr.function))
        before = next((m.frame.lineno for m in reversed(nodes[:i]) if mine(m.frame)), None)
        after = next((m.frame.lineno for m in nodes[i + 1:] if mine(m.frame)), None)
        line = _call_line(root, fr.function, before, after) or after
        brk.stack = [] if line is None else [(code, line)]
        raise brk


def _call_line(root, name: str, lo: Optional[int], hi: Optional[int]) -> Optional[int]:
    """The first line of ``root`` between ``lo`` and ``hi`` (traced work of ``root`` on
    either side) calling a function named ``name``: where the work between them ran."""
    fdef = _split.function_ast(root)
    if fdef is None or not name:
        return None
    lo = fdef.lineno if lo is None else lo
    hi = (fdef.end_lineno or lo) if hi is None else hi
    lines = [n.lineno for n in ast.walk(fdef) if isinstance(n, ast.Call) and
             lo <= n.lineno <= hi and name in (getattr(n.func, "id", None),
                                               getattr(n.func, "attr", None))]
    return min(lines, default=None)

