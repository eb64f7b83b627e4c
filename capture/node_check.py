"""What ``ss.load`` checks of each node against its op before any code is generated: the
facts the op table itself states, so a program symshape wrote always passes.

* an elementwise op computing one NumPy ufunc takes exactly ``ufunc.nin`` operands, each an
  array (a node) or a number;
* an op whose template calls a method of (or indexes) its first input (``{0}.sum(...)``,
  ``{0}[...]``) takes a node there, not a literal;
* ``matmul`` and the ``np.linalg`` ops (``linalg_*``) take arrays only: NumPy refuses a
  number there, so a traced program never has one;
* the attributes every op spells the same way have their one type: ``axis`` (an int, a
  tuple of ints or null), ``axes``, ``keepdims`` (a bool) and ``dtype`` (a dtype or null).

A node that breaks one of these is a crafted or edited file; anything subtler is caught
when the program runs (capture/loaded_guard.py).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from symshape.algebra.expr import Expr
from symshape.sizes.symfloat import FloatExpr

from .ir import Node
from .ops.registry import OPS

_NUMBER = (bool, int, float, complex, np.generic, Expr, FloatExpr)
_RECEIVER = re.compile(r"^\(?\{0\}[.\[]")


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _ints(v) -> bool:
    return type(v) is tuple and all(_is_int(x) for x in v)


# attribute name -> (what it must be, as said in the message; the test)
ATTR_TYPES: Dict[str, Tuple[str, Callable[[Any], bool]]] = {
    "axis": ("an int, a tuple of ints or null", lambda v: v is None or _is_int(v) or _ints(v)),
    "axes": ("an int or a tuple of ints (or of tuples of ints)",
             lambda v: _is_int(v) or _ints(v) or (type(v) is tuple and all(_ints(x)
                                                                           for x in v))),
    "keepdims": ("true or false", lambda v: isinstance(v, (bool, np.bool_))),
    "dtype": ("a dtype or null", lambda v: v is None or isinstance(v, np.dtype)),
}


def _shown(v) -> str:
    if isinstance(v, Node):
        return "node %r" % v.name
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def problem(op: str, inputs: tuple, attrs: dict) -> Optional[str]:
    """What is wrong with a node of ``op`` with these decoded inputs and attributes, or
    None.  The text names the input or attribute and what the op needs there."""
    d = OPS.get(op)
    if d is None or op in ("input", "constant") or "::" in op:
        return None
    ufunc = d.traits.ufunc
    if isinstance(ufunc, np.ufunc):
        if len(inputs) != ufunc.nin:
            return "op %s takes %d operand%s, the node has %d" % (
                op, ufunc.nin, "" if ufunc.nin == 1 else "s", len(inputs))
        for i, x in enumerate(inputs):
            if not isinstance(x, Node) and not isinstance(x, _NUMBER):
                return "input %d is %s; op %s takes an array or a number there" % (
                    i, _shown(x), op)
    if op == "matmul" or op.startswith("linalg_"):
        for i, x in enumerate(inputs):
            if not (isinstance(x, Node) or (type(x) is tuple and x and all(
                    isinstance(y, Node) for y in x))):
                return "input %d is %s; op %s takes an array there" % (i, _shown(x), op)
    if d.template is not None and _RECEIVER.match(d.template):
        if not inputs or not isinstance(inputs[0], Node):
            return "input 0 is %s; op %s takes an array there" % (
                _shown(inputs[0]) if inputs else "missing", op)
    for name, (what, ok) in ATTR_TYPES.items():
        if name in attrs and not ok(attrs[name]):
            return "attribute %r is %s; it must be %s" % (name, _shown(attrs[name]), what)
    return None
