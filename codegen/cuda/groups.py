"""Which nodes the CUDA kernels compute: the classes the planner groups
(``loopnest/plan.py`` describes the plan)."""
from __future__ import annotations

from typing import List, Optional

from symshape.capture.ir import IndexAttr, Node
from symshape.capture.ops.traits import VIEW, traits_of
from symshape.expr import Expr, sub
from symshape.ranges import ValueRange

from ..fusion import numel
from ..loopnest.classify import operand_of, scalar_ok
from ..loopnest.sizes import Ranges, slice_start
from . import cops
from .cops import Operand, ctype


def pointwise_expr(node: Node, ops: List[Optional[Operand]], helpers: set) -> Optional[str]:
    """C text of pointwise ``node`` on ``ops`` (the traits table's C template)."""
    return cops.pointwise_expr(node.op, ops, node.dtype, node.attrs, helpers)


def classify(node: Node, rg: Ranges) -> str:
    """'input' | 'const' | 'pw' | 'view' | 'red' | 'lib'."""
    if node.op == "input":
        return "input"
    if node.op == "constant":
        return "const"
    if node.shape is None or "binds" in node.meta or "binds_value" in node.meta or \
            ctype(node.dtype) is None:
        return "lib"
    ins = node.input_nodes()
    if any(i.shape is None or ctype(i.dtype) is None for i in ins):
        return "lib"
    t = traits_of(node.op)
    if t is None:
        return "lib"
    if t.kind == VIEW:
        return "view" if len(node.inputs) == 1 and type(node.inputs[0]) is Node and \
            _view_ok(node, rg) else "lib"
    if t.reduce is not None and t.reduce.c_combine is not None:
        return "red" if cops.reduction_supported(node) else "lib"
    if t.c is not None:
        if not all(type(x) is Node or scalar_ok(x) for x in node.inputs):
            return "lib"
        ops = [operand_of(x) for x in node.inputs]
        try:
            return "pw" if pointwise_expr(node, ops, set()) is not None else "lib"
        except Exception:
            return "lib"
    return "lib"


def _view_ok(node: Node, rg: Ranges) -> bool:
    src = node.inputs[0]
    if node.op == "getitem":
        idx = node.attrs.get("index")
        if type(idx) is not IndexAttr:
            return False
        dim = 0
        for it in idx.items:
            if it is None:
                continue
            if dim >= len(src.shape):
                return False
            n = src.shape[dim]
            if isinstance(it, slice):
                step = 1 if it.step is None else it.step
                if type(step) is not int or step == 0:
                    return False
                if slice_start(it.start, n, step, rg) is None:
                    return False
            elif type(it) not in (int, Expr):
                return False
            dim += 1
        return True
    if node.op == "reshape":
        return numel(src.shape) == numel(node.shape) or \
            rg.bound(sub(numel(src.shape), numel(node.shape))) == ValueRange(0, 0)
    return True

