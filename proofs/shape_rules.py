"""Proofs of the op shape rules in ``capture/ops``: slice length, matmul (concatenate:
``proofs/concatenate_every.py``; broadcasting two sizes and reshape: ``proofs/shape_every.py``).

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

from symshape.capture.ops.linalg import matmul_shape
from symshape.errors import UserError

from . import bounded, proves
from .code import prove_code
from .pyint import prove, require

import symshape as _ss  # noqa: E402

A = _ss.Dim.AUTO
NONE = -1          # "cannot broadcast" / "rejected" as a size value (sizes are >= 0)


# ---------------------------------------------------------------------------- broadcasting
def _np_broadcast(a, b):
    """NumPy's rule for two sizes: equal, or one of them 1 (the result is the other)."""
    return z3.If(z3.Or(a == b, a == 1, b == 1), z3.If(a == 1, b, a), NONE)


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


# ---------------------------------------------------------------------------- matmul
def _np_matmul_shape(a, b):
    """NumPy's documented matmul shapes, over symbolic sizes (lists of Z3 ints): returns
    (shape, conditions for validity).  1-D operands are promoted and the added axis
    removed; batch axes broadcast."""
    pa = [1] + list(a) if len(a) == 1 else list(a)
    pb = list(b) + [1] if len(b) == 1 else list(b)
    ok = [pa[-1] == pb[-2]]
    ba, bb = pa[:-2], pb[:-2]
    nd = max(len(ba), len(bb))
    ba = [1] * (nd - len(ba)) + ba
    bb = [1] * (nd - len(bb)) + bb
    batch = [_np_broadcast(_z(x), _z(y)) for x, y in zip(ba, bb)]
    ok += [s != NONE for s in batch]
    out = batch + [pa[-2], pb[-1]]
    if len(a) == 1:
        out.pop(-2)
    if len(b) == 1:
        out.pop(-1)
    return out, ok


def _z(v):
    return z3.IntVal(v) if isinstance(v, int) else v


def _code_matmul_shape(a, b):
    """``linalg.matmul_shape`` re-stated over symbolic sizes."""
    a1, b1 = len(a) == 1, len(b) == 1
    aa = [1] + list(a) if a1 else list(a)
    bb = list(b) + [1] if b1 else list(b)
    ok = [aa[-1] == bb[-2]]
    xa, xb = aa[:-2], bb[:-2]
    nd = max(len(xa), len(xb))
    batch = []
    for i in range(-nd, 0):          # broadcast_shapes: fold broadcast_pair from size 1
        size = _z(1)
        for s in (xa, xb):
            if len(s) >= -i:
                got = z3.If(z3.Or(size == s[i], s[i] == 1), size,
                            z3.If(size == 1, _z(s[i]), NONE))
                ok.append(got != NONE)
                size = z3.If(size == NONE, NONE, got)
        batch.append(size)
    out = list(batch)
    if not a1:
        out.append(aa[-2])
    if not b1:
        out.append(bb[-1])
    return out, ok


@proves("matmul.shape",
        over=bounded("every pair of ranks 1..4, every pattern of 1s in the aligned batch "
                     "axes (traced, both directions), sizes symbolic"))
def matmul_shape_rule():
    for ra, rb in itertools.product((1, 2, 3, 4), repeat=2):
        a = list(z3.Ints(" ".join("a%d" % i for i in range(ra))))
        b = list(z3.Ints(" ".join("b%d" % i for i in range(rb))))
        sizes = [v >= 0 for v in a + b]
        ref, ref_ok = _np_matmul_shape(a, b)
        code, code_ok = _code_matmul_shape(a, b)
        require(len(ref) == len(code), "matmul ranks %d, %d: %d axes, NumPy %d",
                ra, rb, len(code), len(ref))
        prove(z3.And(z3.And(*code_ok) == z3.And(*ref_ok),
                     z3.Implies(z3.And(*ref_ok), z3.And(*[x == y for x, y in zip(code, ref)]))),
              sizes)
    shapes = [s for r in (1, 2, 3) for s in itertools.product((0, 1, 2, 3), repeat=r)]
    for sa, sb in itertools.product(shapes, repeat=2):
        try:
            got: Optional[tuple] = matmul_shape(sa, sb)
        except UserError:
            got = None
        try:
            want: Optional[tuple] = np.matmul(np.empty(sa), np.empty(sb)).shape
        except ValueError:
            want = None
        require(got == want, "matmul_shape(%s, %s) = %s, NumPy %s", sa, sb, got, want)
    # traced: x @ y on symbolic sizes (1-D, 2-D, batched and broadcast batches)
    from .op_rules import Contract
    for sa, sb in (((4,), (4, 3)), ((5, 4), (4,)), ((2, 5, 4), (4, 3)),
                   ((2, 1, 5, 4), (3, 4, 6))):
        tr = Contract(lambda x, y: x @ y, (np.ones(sa), np.ones(sb)),
                      {"x": tuple(1 if s == 1 else A for s in sa),
                       "y": tuple(1 if s == 1 else A for s in sb)})
        ref, ok = _np_matmul_shape(list(tr.ins[0]), list(tr.ins[1]))
        prove_code(lambda *v: z3.And(*[a == b for a, b in zip(v, ref)], *ok),
                   list(tr.outs[0]), tr.hyps, P=tr.P, what="%s @ %s traced" % (sa, sb))
    # traced: every pair of ranks 1..4, every pattern of 1s in the batch axes, both
    # directions (proofs/op_shape_rules.py)
    from .op_shape_rules import matmul_sweep
    matmul_sweep()
