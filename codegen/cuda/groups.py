"""Which nodes the CUDA kernels compute: the target the planner classifies nodes for
(``loopnest/plan.py`` describes the plan, ``loopnest/classify.py`` the classes).

A kernel holds every dtype with a C type (float16 in float registers); a reduction joins
a kernel when ``cops`` has its combine for the dtypes, an elementwise node when the op
traits table's C template covers its loop."""
from __future__ import annotations

from typing import List, Optional

from symshape.capture.ir import Node

from ..loopnest.classify import Operand, Target
from ..loopnest.classify import classify as classify_for
from ..loopnest.sizes import Ranges
from . import cops


def pointwise_expr(node: Node, ops: List[Optional[Operand]], helpers: set) -> Optional[str]:
    """C text of pointwise ``node`` on ``ops`` (the traits table's C template)."""
    return cops.pointwise_expr(node.op, ops, node.dtype, node.attrs, helpers)


#: what the CUDA kernels translate
CUDA = Target(dtype=lambda dt: cops.ctype(dt) is not None,
              reduction=cops.reduction_supported,
              pointwise=lambda node, ops: pointwise_expr(node, ops, set()) is not None)


def classify(node: Node, rg: Ranges) -> str:
    """The class of ``node`` for the CUDA kernels: 'input' | 'const' | 'pw' | 'view' |
    'red' | 'lib'."""
    return classify_for(node, rg, CUDA)
