"""Which nodes a loop nest computes: each node's class for the planner, and the operands
of elementwise ops as every target's kernel writer sees them.

A node is ``input`` / ``const`` (an argument), ``view`` (a basic ``getitem``,
``expand_dims``, ``squeeze``, ``permute_dims``, ``broadcast_to``, ``reshape``: its
coordinates map to its source's), ``red`` (a reduction a phase accumulates), ``pw`` (an
elementwise op a kernel computes) or ``lib`` (everything else: the library call NumPy
would make, between kernels).  The op traits table says what kind of op a node is; a
target (``Target``) says which dtypes, reductions and elementwise ops its kernels
translate, so the same graph may have more ``lib`` nodes for one target than another.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import numpy as np

from symshape.capture.ir import IndexAttr, Node
from symshape.capture.ops.traits import VIEW, traits_of
from symshape.algebra.expr import Expr, sub
from symshape.algebra.ranges import ValueRange

from ..fusion import numel
from .sizes import Ranges, slice_start


class Operand:
    """One operand of an elementwise op: its text in the kernel's language, its dtype (or
    weak Python type), and the Python value when it is a literal scalar (for x ** 2 and
    friends)."""

    __slots__ = ("text", "dtype", "value")

    def __init__(self, text: str, dtype, value=None) -> None:
        self.text = text
        self.dtype = dtype
        self.value = value


def scalar_ok(x) -> bool:
    """Is ``x`` a scalar operand a kernel takes (a literal or a size expression)?"""
    return x is None or type(x) in (bool, int, float) or type(x) is Expr or \
        isinstance(x, (np.bool_, np.integer, np.floating))


def operand_of(x, text: str = "x") -> Optional[Operand]:
    """``x`` (a node or a scalar) as an operand spelled ``text``; None when no kernel
    takes it."""
    if x is None:
        return None
    if type(x) is Node:
        return Operand(text, x.dtype)
    if type(x) is Expr:
        return Operand(text, int, value=x)
    if type(x) is bool or isinstance(x, np.bool_):
        return Operand(text, np.dtype(bool), value=bool(x))
    if type(x) is int:
        return Operand(text, int, value=x)
    if type(x) is float:
        return Operand(text, float, value=x)
    if isinstance(x, (np.integer, np.floating)):
        return Operand(text, x.dtype, value=x.item())
    return None



@dataclass(frozen=True)
class Target:
    """What one target's kernels translate."""

    #: can a kernel hold values of this dtype?
    dtype: Callable[[Any], bool]
    #: can a phase accumulate this reduction (the op has a kernel combine)?
    reduction: Callable[[Node], bool]
    #: does the target have an expression for this elementwise node on these operands?
    pointwise: Callable[[Node, List[Optional[Operand]]], bool]


def classify(node: Node, rg: Ranges, target: Target) -> str:
    """'input' | 'const' | 'pw' | 'view' | 'red' | 'lib' (see the module)."""
    if node.op == "input":
        return "input"
    if node.op == "constant":
        return "const"
    if node.shape is None or "binds" in node.meta or "binds_value" in node.meta or \
            not target.dtype(node.dtype):
        return "lib"
    if any(i.shape is None or not target.dtype(i.dtype) for i in node.input_nodes()):
        return "lib"
    t = traits_of(node.op)
    if t is None:
        return "lib"
    if t.kind == VIEW:
        return "view" if len(node.inputs) == 1 and type(node.inputs[0]) is Node and \
            view_ok(node, rg) else "lib"
    if t.reduce is not None and t.reduce.c_combine is not None:
        return "red" if target.reduction(node) else "lib"
    if t.c is not None:
        return "pw" if _computes(node, target) else "lib"
    return "lib"


def _computes(node: Node, target: Target) -> bool:
    """Does the target compute elementwise ``node`` (every operand a node or a scalar)?"""
    if not all(type(x) is Node or scalar_ok(x) for x in node.inputs):
        return False
    ops = [operand_of(x) for x in node.inputs]
    try:
        return target.pointwise(node, ops)
    except Exception:        # a translation that cannot match NumPy: the library call
        return False


def view_ok(node: Node, rg: Ranges) -> bool:
    """Can a kernel map coordinates through view ``node`` (its index decided by the
    ranges: slice starts of known sign, a reshape keeping the element count)?"""
    src = node.inputs[0]
    if node.op == "getitem":
        return _index_ok(node.attrs.get("index"), src.shape, rg)
    if node.op == "reshape":
        return numel(src.shape) == numel(node.shape) or \
            rg.bound(sub(numel(src.shape), numel(node.shape))) == ValueRange(0, 0)
    return True


def _index_ok(idx, shape, rg: Ranges) -> bool:
    """Is ``idx`` a basic index of ``shape`` (slices with integer steps, integers, sizes,
    new axes) whose slice starts the ranges normalize?"""
    if type(idx) is not IndexAttr:
        return False
    dim = 0
    for it in idx.items:
        if it is None:
            continue
        if dim >= len(shape):
            return False
        if isinstance(it, slice):
            step = 1 if it.step is None else it.step
            if type(step) is not int or step == 0:
                return False
            if slice_start(it.start, shape[dim], step, rg) is None:
                return False
        elif type(it) not in (int, Expr):
            return False
        dim += 1
    return True
