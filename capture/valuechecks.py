"""A branch on array values whose other side raises is a run-time check.

``if not np.isfinite(X).all(): raise ValueError(msg)``, ``if np.any(p < 0): raise ...`` and
``assert (x >= 0).all(), msg`` are validation, not control flow: the program goes on along
the side that does not raise, and the condition stays in the program as a check that raises
the same exception (type and arguments) when it runs on data that fails it.

Which side raises is read from the bytecode of the user's frame at the instruction that asks
for the truth value: a conditional jump one of whose two paths reaches ``raise`` through
loads, calls and string formatting only (the exception being built).  The exception itself
is evaluated, in the frame's names, from the ``raise`` (or ``assert``) statement of the
source at that instruction's position.  Anything else (a branch whose both sides go on, a
chain of ``and`` that needs several values, code without source) is not a check: the tracer
raises its usual data-dependent error.
"""
from __future__ import annotations

import ast
import dis
import linecache
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from symshape.runtime import raise_text

# conditional jumps by name (Python 3.10 to 3.13): the truth value that takes the jump
_JUMPS: Dict[str, bool] = {}
for _name in ("POP_JUMP_IF_%s", "POP_JUMP_FORWARD_IF_%s", "POP_JUMP_BACKWARD_IF_%s",
              "JUMP_IF_%s_OR_POP"):
    _JUMPS[_name % "TRUE"] = True
    _JUMPS[_name % "FALSE"] = False

# instructions that only build the exception on the way to ``raise``
_BUILDING = frozenset((
    "LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST",
    "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_CONST", "LOAD_ATTR", "LOAD_METHOD",
    "LOAD_ASSERTION_ERROR", "PUSH_NULL", "PRECALL", "CALL", "CALL_KW", "CALL_FUNCTION",
    "CALL_FUNCTION_KW", "CALL_METHOD", "KW_NAMES", "FORMAT_VALUE", "FORMAT_SIMPLE",
    "FORMAT_WITH_SPEC", "CONVERT_VALUE", "BUILD_STRING", "BUILD_TUPLE", "BINARY_OP",
    "BINARY_MODULO", "BINARY_ADD", "NOP", "CACHE", "RESUME", "EXTENDED_ARG", "COPY_FREE_VARS",
    "LOAD_SMALL_INT"))


@dataclass(frozen=True)
class RaisingBranch:
    """The truth value that takes the side which goes on (``safe``), the exception the
    other side raises, and its text as a run-time check (``raise ValueError('...')``)."""
    safe: bool
    exc: BaseException
    text: str


def _instructions(code) -> Tuple[List[dis.Instruction], Dict[int, int]]:
    ins = list(dis.get_instructions(code))
    return ins, {i.offset: k for k, i in enumerate(ins)}


def _raise_at(ins: List[dis.Instruction], k: int) -> Optional[dis.Instruction]:
    """The ``raise`` instruction the path starting at index ``k`` reaches while only
    building the exception, else None."""
    while k < len(ins):
        i = ins[k]
        if i.opname == "RAISE_VARARGS":
            return i if i.arg else None
        if i.opname not in _BUILDING:
            return None
        k += 1
    return None


_TREES: Dict[Tuple[str, int], Optional[ast.AST]] = {}


def _tree(filename: str) -> Optional[ast.AST]:
    lines = linecache.getlines(filename)
    key = (filename, len(lines))
    if key not in _TREES:
        try:
            _TREES[key] = ast.parse("".join(lines)) if lines else None
        except SyntaxError:
            _TREES[key] = None
    return _TREES[key]


def _statement(filename: str, raise_ins: dis.Instruction, line: Optional[int]):
    """The ``raise`` / ``assert`` statement the instruction belongs to."""
    tree = _tree(filename)
    if tree is None:
        return None
    pos = getattr(raise_ins, "positions", None)
    lineno = pos.lineno if pos is not None and pos.lineno is not None else line
    col = pos.col_offset if pos is not None else None
    for n in ast.walk(tree):
        if isinstance(n, (ast.Raise, ast.Assert)) and n.lineno == lineno and \
                (col is None or n.col_offset == col):
            return n
    return None


def _exception(frame, stmt) -> Optional[BaseException]:
    """The exception ``stmt`` raises, evaluated in the frame's names."""
    if isinstance(stmt, ast.Raise):
        if stmt.exc is None or stmt.cause is not None:
            return None
        expr = stmt.exc
    else:
        expr = stmt.msg
    try:
        value = None if expr is None else eval(
            compile(ast.fix_missing_locations(ast.Expression(expr)), frame.f_code.co_filename,
                    "eval"), frame.f_globals, dict(frame.f_locals))
    except Exception:
        return None
    if isinstance(stmt, ast.Assert):
        return AssertionError() if value is None else AssertionError(value)
    if isinstance(value, type) and issubclass(value, BaseException):
        try:
            value = value()
        except Exception:
            return None
    return value if isinstance(value, BaseException) else None


def raising_branch(frame) -> Optional[RaisingBranch]:
    """The check that a truth value asked for at ``frame``'s current instruction stands
    for, when one side of the branch raises; None otherwise."""
    code = frame.f_code
    ins, at = _instructions(code)
    k = at.get(frame.f_lasti)
    if k is None:
        return None
    flip = False
    while k < len(ins) and ins[k].opname in ("TO_BOOL", "CACHE", "NOP"):
        k += 1                                 # 3.13 asks for the truth value before jumping
    if k < len(ins) and ins[k].opname == "UNARY_NOT":
        flip, k = True, k + 1
    if k >= len(ins) or ins[k].opname not in _JUMPS:
        return None
    jump = ins[k]
    on = _JUMPS[jump.opname]
    target = at.get(jump.argval)
    taken = _raise_at(ins, target) if target is not None else None
    falls = _raise_at(ins, k + 1)
    if (taken is None) == (falls is None):
        return None
    raise_ins, safe = (taken, not on) if taken is not None else (falls, on)
    stmt = _statement(code.co_filename, raise_ins, frame.f_lineno)
    exc = _exception(frame, stmt) if stmt is not None else None
    text = raise_text(exc) if exc is not None else None
    if text is None:
        return None
    return RaisingBranch(safe != flip, exc, text)
