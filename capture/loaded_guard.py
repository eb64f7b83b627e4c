"""The net under ``ss.load``'s validation: a loaded program's generated code that fails
with a Python or NumPy exception (a crafted file whose node reads a literal where an array
belongs, an attribute NumPy cannot use) raises a ``UserError`` naming the node and its op.

A program ``ss.save`` wrote cannot fail this way for inputs its checks admit, so the
message says the file was edited or crafted.  The error is also an instance of the original
exception type where Python allows it (``except TypeError`` keeps working).  Errors that
depend on the values alone, as they would in eager NumPy (``LinAlgError`` for a singular
matrix, ``FloatingPointError`` under ``np.errstate``, ``MemoryError``), and errors raised
by the user's own custom ops pass through unchanged.
"""
from __future__ import annotations

import functools
import linecache
import re
from typing import Callable, Dict, Optional

import numpy as np

from symshape.errors import UserError

from .ir import Graph, Node, Subgraph

# value-dependent failures eager NumPy raises too: never a sign of a crafted file
PASS_THROUGH = (FloatingPointError, MemoryError, RecursionError)
# a LinAlgError about the values (singular, not positive definite, did not converge) passes
# through; one about dimensions ("0-dimensional array given", "must be square") cannot
# happen to inputs the checks admit
_LINALG_SHAPE = re.compile(r"dimension|square", re.I)
_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")


def _nodes_by_name(g: Graph, out: Dict[str, Node]) -> Dict[str, Node]:
    for n in g.nodes:
        out.setdefault(n.name, n)
        for v in n.attrs.values():
            if isinstance(v, Subgraph):
                _nodes_by_name(v.graph, out)
    return out


def _generated_line(tb) -> Optional[str]:
    """The innermost line of generated code in the traceback (files named ``<symshape...>``),
    or None when the failure did not pass through generated code."""
    line = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith("<symshape"):
            line = linecache.getline(code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return line


def _as_user_error(e: BaseException, message: str) -> UserError:
    """A UserError carrying ``message`` that is also an instance of ``type(e)`` (or of its
    nearest base Python can combine with UserError and construct from a message)."""
    for base in type(e).__mro__:
        if base in (BaseException, Exception, object):
            break
        try:
            combined = type("Loaded" + base.__name__, (UserError, base), {})
            return combined(message)
        except TypeError:        # a layout conflict, or a constructor needing more
            continue
    return UserError(message)


def failure(e: Exception, nodes: Dict[str, Node]) -> Optional[UserError]:
    """The UserError for ``e`` raised while a loaded program ran, or None to re-raise ``e``
    (a UserError already, a value-dependent error, a custom op's own error, or a failure
    outside the generated code)."""
    if isinstance(e, (UserError,) + PASS_THROUGH):
        return None
    if isinstance(e, np.linalg.LinAlgError) and not _LINALG_SHAPE.search(str(e)):
        return None
    line = _generated_line(e.__traceback__)
    if line is None:
        return None
    m = _ASSIGN.match(line)
    node = nodes.get(m.group(1)) if m else None
    if node is not None and "::" in node.op:
        return None                      # the user's own custom op raised it
    what = ("node %r (op %s)" % (node.name, node.op)) if node is not None else "its code"
    detail = str(e).splitlines()[0] if str(e) else ""
    return _as_user_error(e, "the loaded program failed at %s: %s%s. A program ss.save wrote "
                             "does not fail this way for inputs its checks admit, so the saved "
                             "file was edited or crafted: export the function and save it again"
                          % (what, type(e).__name__, ": " + detail[:200] if detail else ""))


def guarded(fn: Callable, graph: Graph) -> Callable:
    """``fn`` (a loaded program's callable), raising ``failure``'s UserError in place of
    an exception its generated code raises.  No cost on calls that succeed."""
    nodes = _nodes_by_name(graph, {})

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            err = failure(e, nodes)
            if err is None:
                raise
            raise err from None
    return run
