"""What one element of a fused group costs under NumPy: the estimate that decides whether a
group is worth trying on two threads.

Element count alone is a poor guide: ``x ** 3`` over 100 000 float64 elements with mixed
signs takes ~4.5 ms (the vectorised ``pow`` sends every negative base down a slow scalar
path, ~45 ns each), while ten additions over the same elements take ~0.2 ms.  The first is
worth a second core, the second is not.  The table holds rough nanoseconds per element on
one core (in-cache blocks, float64, measured with ``np.<op>(x, out=o)`` on 65 536 elements);
only the order of magnitude matters: the run-time tuner (``rt.blocks``) measures one thread
against two before it keeps either.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

#: ns per element of ops well above a plain arithmetic op (everything else: ``CHEAP_NS``)
NS_PER_ELEMENT = {
    # pow: vectorised and fast for positive bases, a scalar slow path for negative ones
    "power": 45.0, "float_power": 45.0,
    # trigonometry on float64 is not vectorised (~8 ns); on float32 it is (~0.4 ns)
    "sin": 8.0, "cos": 8.0, "tan": 8.0, "arcsin": 2.0, "arccos": 2.0, "arctan2": 2.0,
    "sinh": 2.0, "cosh": 2.0,
    "exp": 0.6, "exp2": 0.6, "expm1": 0.7, "log": 0.6, "log2": 0.6, "log10": 0.6,
    "log1p": 0.7, "tanh": 0.8, "arctan": 0.7, "arcsinh": 1.0, "arccosh": 1.0,
    "arctanh": 1.0, "sqrt": 0.9, "cbrt": 2.0, "divide": 0.3, "true_divide": 0.3,
    "floor_divide": 1.0, "remainder": 1.0, "fmod": 1.0,
}
CHEAP_NS = 0.25
#: exponents NumPy computes without ``pow`` (square, square root, reciprocal, copy)
_FAST_EXPONENTS = (2, 2.0, 0.5, 1, 1.0, -1, -1.0)


def node_ns(node) -> float:
    """Estimated nanoseconds per element of one group member."""
    if node.op in ("power", "float_power"):
        e = node.inputs[1] if len(node.inputs) > 1 else None
        if type(e) in (int, float) and e in _FAST_EXPONENTS:
            return 0.3
        dt = node.dtype
        if dt is not None and np.dtype(dt).kind in "iu":
            return 2.0
    return NS_PER_ELEMENT.get(node.op, CHEAP_NS)


def group_ns(nodes: Iterable) -> int:
    """Estimated nanoseconds per element of a whole group (at least 1)."""
    return max(1, int(round(sum(node_ns(n) for n in nodes))))
