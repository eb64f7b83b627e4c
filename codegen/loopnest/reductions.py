"""Reductions' structure in a loop nest: which adjacent reductions of a row one read of
it computes (a merged phase), and which have no identity (an empty row raises).

A merged pair is one of two shapes of program, recognised on the graph:

* ``online``: r0 = max(x), r1 = sum(exp(x - r0)) (softmax, logsumexp): a running maximum
  and the sum of exp rescaled as it grows;
* ``welford``: r0 = mean(x), r1 = mean or sum of (x - r0)**2 (layer norm, variance): the
  plain sum and Welford's running mean and squared deviations.

x is the same per-element value in both, of dtype float32 or float64, and the terms of
r1 are computed in the kernel (inlined), not loaded.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from symshape.capture.ir import Node

from .plan import KernelSpec, same_shape

#: (r0's op, r1's ops, the op of r1's term) -> the merged phase's kind
PAIRS = {
    ("max", ("sum",), "exp"): "online",
    ("mean", ("mean", "sum"), "square"): "welford",
}
#: reductions without an identity: the ufunc an empty row's error names
NO_IDENTITY = {"max": "maximum", "min": "minimum"}


def merged_pairs(spec: KernelSpec, inline: Callable[[object], bool]
                 ) -> Dict[Node, Tuple[str, Node]]:
    """Adjacent reductions (r0 -> (kind, r1)) of ``spec`` that one read of the row
    computes; ``inline(n)``: is n computed in the kernel from its inputs?"""
    reds = spec.reductions()
    out: Dict[Node, Tuple[str, Node]] = {}
    for r0, r1 in zip(reds, reds[1:]):
        if r0 in out or any(r0 is v for _, v in out.values()):
            continue
        kind = merge_kind(r0, r1, spec.shape, inline)
        if kind:
            out[r0] = (kind, r1)
    return out


def merge_kind(r0: Node, r1: Node, shape: tuple, inline: Callable[[object], bool]) -> str:
    """``online`` / ``welford`` when one read computes r0 and r1 (see the module), else
    the empty string."""
    x = r0.inputs[0]
    if type(x) is not Node or not same_shape(x.shape, shape):
        return ""
    dt = x.dtype
    if dt.name not in ("float32", "float64") or r0.dtype != dt or r1.dtype != dt:
        return ""
    t = r1.inputs[0]
    if not inline(t) or t.dtype != dt:
        return ""
    term, d = _term(t)
    kind = next((k for (op0, ops1, top), k in PAIRS.items()
                 if r0.op == op0 and r1.op in ops1 and term == top), "")
    if not kind or not (inline(d) and d.op == "subtract" and d.dtype == dt and
                        d.inputs[0] is x and d.inputs[1] is r0):
        return ""
    return kind


def _term(t: Node) -> Tuple[str, Optional[Node]]:
    """What r1 adds per element: ``exp`` of d, ``square`` of d (``d ** 2``,
    ``square(d)``, ``d * d``), or something else."""
    if t.op == "exp":
        return "exp", t.inputs[0]
    if t.op == "power" and len(t.inputs) == 2 and type(t.inputs[1]) in (int, float) and \
            t.inputs[1] == 2:
        return "square", t.inputs[0]
    if t.op == "square" or (t.op == "multiply" and t.inputs[0] is t.inputs[1]):
        return "square", t.inputs[0]
    return "", None


def no_identity(spec: KernelSpec) -> List[str]:
    """The ufuncs of the group's max / min reductions, which an empty row cannot reduce."""
    return [NO_IDENTITY[r.op] for r in spec.reductions() if r.op in NO_IDENTITY]
