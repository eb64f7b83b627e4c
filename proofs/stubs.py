"""Stand-ins for a traced array and the tracer, just enough for an op's shape function to
run outside a trace: the every-input proofs run the engine's shape functions on shapes whose
sizes are Z3 terms (``proofs/shape_every.py``, ``proofs/reshape_every.py``)."""
from __future__ import annotations

import numpy as np


class ShapeOnly:
    """Just enough of a traced array for the shape functions: a shape, no node."""

    def __init__(self, shape) -> None:
        self.shape = tuple(shape)
        self.ndim = len(self.shape)
        self.node = None
        self.dtype = np.dtype(np.float64)


class StubTracer:
    """Just enough of a Tracer for the shape functions: ``emit`` returns the result."""

    def emit(self, op, inputs, attrs, shape, dtype, name=None):
        return ShapeOnly(shape)

    def operand(self, a):
        return a
