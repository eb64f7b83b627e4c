"""Linear algebra: matmul / ``@`` (1-D, 2-D, batched with broadcasting) and dot.

The contracted sizes must be equal: that comparison is the only guard matmul makes;
batch dimensions broadcast like elementwise operands.
"""
from __future__ import annotations

import numpy as np

from symshape.errors import UserError, where
from symshape.userframe import user_frame

from ..tracer import UFUNC_OVERRIDES, TracedArray, Tracer, implements, shape_repr
from .elementwise import broadcast_shapes, resolve
from .registry import defop

defop("matmul", "np.matmul({0}, {1})", doc="matrix product with broadcast batch axes")
defop("dot", "np.dot({0}, {1})", doc="np.dot")


def _frame():
    return where(user_frame(3))


def matmul_shape(a: tuple, b: tuple, what: str = "matmul") -> tuple:
    if len(a) == 0 or len(b) == 0:
        raise UserError("%s: operands must have at least one dimension, got shapes %s and %s%s"
                        % (what, shape_repr(a), shape_repr(b), _frame()))
    a1, b1 = len(a) == 1, len(b) == 1
    aa = (1,) + tuple(a) if a1 else tuple(a)
    bb = tuple(b) + (1,) if b1 else tuple(b)
    k1, k2 = aa[-1], bb[-2]
    if not (k1 == k2):
        raise UserError("%s: the contracted sizes differ: %s (last axis of the first operand, "
                        "shape %s) vs %s (%s axis of the second, shape %s)%s"
                        % (what, k1, shape_repr(a), k2, "only" if b1 else "second-to-last",
                           shape_repr(b), _frame()))
    batch = broadcast_shapes([aa[:-2], bb[:-2]], "%s batch dimensions" % what)
    out = list(batch)
    if not a1:
        out.append(aa[-2])
    if not b1:
        out.append(bb[-1])
    return tuple(out)


def _operands(t, a, b, what):
    x, y = t.operand(a), t.operand(b)
    for v in (x, y):
        if type(v) is not TracedArray:
            raise UserError("%s: scalar operands are not allowed, use '*' instead%s"
                            % (what, _frame()))
    return x, y


def matmul(t: Tracer, ufunc, inputs, kwargs):
    if set(kwargs) - {"out", "dtype"} or len(inputs) != 2:
        raise UserError("np.matmul: only two operands and out= / dtype= are supported while "
                        "tracing%s" % where(user_frame(2)))
    x, y = _operands(t, inputs[0], inputs[1], "matmul")
    shape = matmul_shape(x.shape, y.shape)
    dt = resolve(np.matmul, [x, y], kwargs.get("dtype"))
    res = t.emit("matmul", (x.node, y.node), {}, shape, dt)
    out = kwargs.get("out")
    if out is not None:
        from .elementwise import assign_out
        return assign_out(t, out[0] if isinstance(out, tuple) else out, res)
    return res


UFUNC_OVERRIDES[np.matmul] = matmul


@implements(np.dot)
def _dot(t, a, b, out=None):
    if out is not None:
        raise UserError("np.dot(..., out=...) is not supported while tracing%s" % _frame())
    x, y = t.operand(a), t.operand(b)
    if type(x) is not TracedArray or type(y) is not TracedArray:
        return np.multiply(x, y)
    if x.ndim > 2 or y.ndim > 2:
        raise UserError("np.dot on arrays of more than 2 dimensions is not supported while "
                        "tracing%s; use np.matmul or np.einsum" % _frame())
    shape = matmul_shape(x.shape, y.shape, "dot")
    dt = resolve(np.matmul, [x, y])
    return t.emit("dot", (x.node, y.node), {}, shape, dt)
