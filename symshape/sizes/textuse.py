"""Where the text of a size goes: to debug output, or into the program's data.

While tracing, ``str()``, ``repr()``, ``format()`` and f-strings of a size (``SymInt``,
``SymFloat``) normally specialise it (a guard + a warning naming the line): text built from
a size is a value the program may depend on (a dict key, a comparison, a parsed number), and
the symbol's name must never become data.  But a program that only *shows* its shapes
(``print(f"tracing {x.shape}")``, ``logging.debug("%s", x.shape)``, ``warnings.warn(...)``,
the message of an ``assert`` or of a raised exception) does not depend on them, and pinning
the size there would make such a program impossible to export with a dynamic spec.

The decision is made where the text is made, from the code that makes it (nothing is
guessed at run time from the string afterwards, so a string can never become data unseen):

- the conversion runs in the ``logging`` package (a record's message formatted lazily, as
  ``logging.debug("%s", x.shape)`` does) or in ``warnings``: **output**;
- the conversion runs in the user's code: the instruction that runs it (``FORMAT_VALUE`` of
  an f-string, ``CALL`` of ``str``/``print``, ``BINARY_OP %``) is mapped, through its source
  position, to the expression in the file's syntax tree, and the expression's parents are
  followed through what only builds text (f-strings, ``str()``, ``repr()``, ``format()``,
  ``"...".format()``, ``+`` and ``%`` of strings, tuples) to where the text ends up.  It is
  **output** only if that is an argument of ``print`` (to the standard streams), a
  ``logging`` function or a ``Logger`` method, ``warnings.warn``, ``sys.stdout.write`` /
  ``sys.stderr.write``, the constructor of the exception of a ``raise`` statement, or the
  message of an ``assert``.  The callee is resolved without running any code (names and
  ``inspect.getattr_static``), so a user function that happens to be called ``print`` or
  ``info`` is not mistaken for output.
- anything else (an assignment, a dict key, a comparison, a return, a string passed to other
  code, source unavailable): **data**, and the size specialises as before.

Output shows the size in the user's terms (``x.shape[0]``, a ``Dim``'s name, ``2*seq``);
with a format spec (``f"{n:>4}"``) or ``%d`` it shows the example value.  No guard is made.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import logging
import os
import sys
import warnings
from typing import Dict, List, Optional, Tuple

from symshape.userframe import is_internal

_LOGGING_DIR = os.path.dirname(os.path.abspath(logging.__file__)) + os.sep
_WARNINGS_FILE = os.path.abspath(warnings.__file__)
_OUTPUT_MODULE_FILES = (_LOGGING_DIR, _WARNINGS_FILE)

LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception",
                         "log", "fatal"})
_OUTPUT_FUNCTIONS = frozenset(
    [builtins.print, warnings.warn, warnings.warn_explicit] +
    [getattr(logging, n) for n in LOG_METHODS if callable(getattr(logging, n, None))])
# calls that only turn their arguments into text
_TEXT_BUILDERS = frozenset({builtins.str, builtins.repr, builtins.format, builtins.ascii})
_STREAM_METHODS = frozenset({"write", "writelines"})

_BINARY_OP = None
try:                                        # Python 3.11+: BINARY_OP with an oparg
    import dis
    _BINARY_OP = dis.opmap.get("BINARY_OP")
except Exception:  # pragma: no cover
    pass


def goes_to_output(depth: int) -> bool:
    """Whether the text being made by the conversion whose Python caller is the frame
    ``depth`` levels up only reaches debug output (see the module docstring)."""
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:  # pragma: no cover
        return False
    filename = frame.f_code.co_filename
    if filename.startswith(_OUTPUT_MODULE_FILES):
        return True
    if is_internal(filename):
        return False
    try:
        return _output_site(frame)
    except Exception:                       # never let the analysis break the program
        return False


def is_percent_format(depth: int) -> bool:
    """The caller's current instruction is ``%`` (``"%d" % n`` converts with __index__)."""
    frame = sys._getframe(depth + 1)
    if frame.f_code.co_filename.startswith(_OUTPUT_MODULE_FILES):
        return True
    code = frame.f_code.co_code
    i = frame.f_lasti
    return _BINARY_OP is not None and 0 <= i < len(code) and code[i] == _BINARY_OP


# --------------------------------------------------------------------------- syntax
_TREES: Dict[tuple, Tuple[list, dict, dict]] = {}


def _index(code):
    """(positions -> innermost node, id(node) -> parent) of the source of ``code``, cached
    while linecache holds the same lines: the whole file, or, where the file is not Python
    as a whole (a code block of a Markdown page, a notebook cell's cache entry), the
    statement block that starts at the code's first line."""
    filename = code.co_filename
    lines = linecache.getlines(filename)
    if not lines:
        return None
    key = (filename, None)
    got = _TREES.get(key) or _TREES.get((filename, code.co_firstlineno))
    if got is not None and got[0] is lines:
        return got[1], got[2]
    try:
        tree = ast.parse("".join(lines), filename)
    except SyntaxError:
        key = (filename, code.co_firstlineno)
        tree = _block_tree(lines, code.co_firstlineno, filename)
        if tree is None:
            return None
    at: dict = {}
    parents: dict = {}
    for node in ast.walk(tree):                  # breadth first: inner nodes win a tie
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if hasattr(node, "lineno") and getattr(node, "end_col_offset", None) is not None:
            at[(node.lineno, node.end_lineno, node.col_offset, node.end_col_offset)] = node
    _TREES[key] = (lines, at, parents)
    return at, parents


def _block_tree(lines: List[str], first: int, filename: str):
    """The syntax tree of the indented block starting at line ``first`` (1-based), with
    the positions of the whole file (lines and columns), or None when it does not parse."""
    block = inspect.getblock(lines[first - 1:])
    if not block:
        return None
    indent = len(block[0]) - len(block[0].lstrip())
    if any(l.strip() and not l.startswith(block[0][:indent]) for l in block):
        return None
    try:
        tree = ast.parse("".join(l[indent:] if l.strip() else "\n" for l in block), filename)
    except SyntaxError:
        return None
    ast.increment_lineno(tree, first - 1)
    for node in ast.walk(tree):
        if hasattr(node, "col_offset"):
            node.col_offset += indent
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += indent
    return tree


def _output_site(frame) -> bool:
    code = frame.f_code
    positions = list(code.co_positions())
    k = frame.f_lasti // 2
    if not 0 <= k < len(positions) or None in positions[k]:
        return False
    got = _index(code)
    if got is None:
        return False
    at, parents = got
    node = at.get(positions[k])
    if node is None:
        return False
    if isinstance(node, ast.Call):
        # the conversion ran inside this call (C code: print, str, "".format)
        verdict = _call_verdict(node, frame, arg=None)
        if verdict is not None:
            return verdict
    return _follow(node, parents, frame)


def _follow(node, parents, frame) -> bool:
    """Follow the text from ``node`` up through what only builds text to its destination."""
    while True:
        parent = parents.get(id(node))
        if parent is None:
            return False
        if isinstance(parent, (ast.FormattedValue, ast.JoinedStr, ast.Tuple)):
            node = parent
            continue
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Mod)):
            node = parent
            continue
        if isinstance(parent, ast.Assert):
            return node is parent.msg
        if isinstance(parent, ast.Call):
            if node is parent.func:
                return False
            verdict = _call_verdict(parent, frame, arg=node)
            if verdict is None:              # a text builder: keep following
                node = parent
                continue
            return verdict
        return False


def _call_verdict(call: ast.Call, frame, arg) -> Optional[bool]:
    """True: the call shows its arguments (output); None: it only builds text from them;
    False: anything else."""
    if _is_format_method(call.func):
        return None
    callee = _static_value(call.func, frame)
    if callee is _MISSING:
        return False
    if _safe_in(callee, _TEXT_BUILDERS):
        return None
    if _is_output_call(call, callee, frame):
        return True
    # the exception of a raise statement: the text is its message
    parents = _index(frame.f_code)[1]
    owner = parents.get(id(call))
    if isinstance(owner, ast.Raise) and owner.exc is call and isinstance(callee, type) and \
            issubclass(callee, BaseException):
        return True
    return False


def _is_format_method(func) -> bool:
    return isinstance(func, ast.Attribute) and func.attr == "format" and \
        isinstance(func.value, (ast.Constant, ast.JoinedStr)) and \
        (not isinstance(func.value, ast.Constant) or isinstance(func.value.value, str))


def _is_output_call(call: ast.Call, callee, frame) -> bool:
    if callee is builtins.print:
        for kw in call.keywords:
            if kw.arg == "file" and not _is_std_stream(_static_value(kw.value, frame)):
                return False                 # print(..., file=buffer) may be data
        return True
    if _safe_in(callee, _OUTPUT_FUNCTIONS):
        return True
    if isinstance(callee, _Bound):
        base, name = callee.base, callee.name
        if isinstance(base, (logging.Logger, logging.LoggerAdapter)) and name in LOG_METHODS:
            return True
        if _is_std_stream(base) and name in _STREAM_METHODS:
            return True
    return False


def _is_std_stream(v) -> bool:
    return v is not None and any(v is s for s in (sys.stdout, sys.stderr, sys.__stdout__,
                                                   sys.__stderr__))


def _safe_in(v, table) -> bool:
    try:
        return v in table
    except TypeError:                        # unhashable
        return False


class _Bound:
    """``base.name`` where ``name`` is a method found on ``base``'s class (not resolved)."""

    __slots__ = ("base", "name")

    def __init__(self, base, name) -> None:
        self.base, self.name = base, name


_MISSING = object()


def _static_value(expr, frame):
    """The value of a name or attribute chain, found without running any code (no
    properties, no ``__getattr__``): ``_MISSING`` if it cannot be."""
    if isinstance(expr, ast.Name):
        for ns in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if expr.id in ns:
                return ns[expr.id]
        return _MISSING
    if isinstance(expr, ast.Attribute):
        base = _static_value(expr.value, frame)
        if base is _MISSING or isinstance(base, _Bound):
            return _MISSING
        try:
            v = inspect.getattr_static(base, expr.attr)
        except AttributeError:
            return _MISSING
        if inspect.ismodule(base) or isinstance(base, type):
            return v
        owned = getattr(base, "__dict__", None)
        if isinstance(owned, dict) and expr.attr in owned:
            return v                         # an instance attribute: the value itself
        return _Bound(base, expr.attr)      # a method of its class
    return _MISSING
