"""Proofs of the op shape rules in ``capture/ops``: concatenate (broadcasting two sizes and
reshape: ``proofs/shape_every.py``; matmul: ``proofs/linalg_every.py``).

Each rule is proven for symbolic sizes against a reference stated from Python's / NumPy's
documented semantics (not from the code path under test); then NumPy programs using the op
are traced with symbolic sizes and the shapes the engine computed are proven equal to that
reference for every input their contract admits (``proofs/op_rules.Contract``), and the real
shape function is run on small integers against Python / NumPy themselves.
"""
from __future__ import annotations

import itertools
from typing import Optional

import numpy as np
import z3

from symshape.capture.ops import shape as SH
from symshape.errors import UserError

from . import bounded, proves
from .code import prove_code
from .pyint import require

import symshape as _ss  # noqa: E402

A = _ss.Dim.AUTO


# ---------------------------------------------------------------------------- shape stubs
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


# ---------------------------------------------------------------------------- concatenate
def _engine_concat(shapes, axis) -> Optional[tuple]:
    try:
        return SH._concatenate(StubTracer(), [ShapeOnly(s) for s in shapes], axis=axis).shape
    except UserError:
        return None


@proves("concatenate.shape",
        over=bounded("two and three operands of every rank 1..4, every axis and None, sizes "
                     "symbolic"))
def concatenate_shape():
    # the fold shape[ax] = shape[ax] + x.shape[ax] over the inputs is the sum; the other
    # axes are the first input's, equal to every input's by the guards
    # traced: the shape the engine gives, for every admitted input, is NumPy's: the sum along
    # the axis, and equal sizes off it (the contract admits nothing else)
    from .op_rules import Contract
    for axis, shapes in ((0, ((2, 5), (3, 5), (4, 5))), (1, ((3, 2), (3, 4))),
                         (-1, ((2, 3, 1), (2, 3, 4), (2, 3, 2)))):
        names = "abc"[:len(shapes)]
        f = eval("lambda %s: np.concatenate([%s], axis=%d)" % (", ".join(names),
                                                              ", ".join(names), axis),
                 {"np": np})
        tr = Contract(f, tuple(np.ones(s) for s in shapes),
                      {n: tuple(A for _ in s) for n, s in zip(names, shapes)})
        ins = tr.ins
        ax = axis % len(shapes[0])
        want = [sum((sh[ax] for sh in ins[1:]), ins[0][ax]) if i == ax else ins[0][i]
                for i in range(len(shapes[0]))]
        same = [sh[i] == ins[0][i] for sh in ins[1:] for i in range(len(shapes[0])) if i != ax]
        prove_code(lambda *v: z3.And(*[a == b for a, b in zip(v, want)], *same),
                   list(tr.outs[0]), tr.hyps, P=tr.P,
                   what="concatenate %s on axis %d traced" % (shapes, axis))
    shapes = [s for r in (1, 2) for s in itertools.product(range(3), repeat=r)]
    for k in (1, 2, 3):
        for combo in itertools.product(shapes, repeat=k):
            if k == 3 and len({len(s) for s in combo}) > 1:
                continue
            for axis in (-2, -1, 0, 1, None):
                got = _engine_concat(combo, axis)
                try:
                    want: Optional[tuple] = np.concatenate(
                        [np.empty(s) for s in combo], axis=axis).shape
                except (ValueError, np.exceptions.AxisError):
                    want = None
                require(got == want, "concatenate %s on axis %s: the rule gives %s, NumPy %s",
                        combo, axis, got, want)
    # every rank up to 4, every axis and offset (proofs/op_shape_rules.py)
    from .op_shape_rules import concatenate_sweep
    concatenate_sweep()
