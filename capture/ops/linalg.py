"""Linear algebra: matmul / ``@`` (1-D, 2-D, batched with broadcasting) and dot.

The contracted sizes must be equal: that comparison is the only guard matmul makes;
batch dimensions broadcast like elementwise operands.
"""
from __future__ import annotations

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symint import describe
from symshape.userframe import user_frame
from symshape.rules import rule

from ..tracer import UFUNC_OVERRIDES, TracedArray, Tracer, implements, shape_repr
from .elementwise import broadcast_shapes, resolve, assign_out
from .registry import defop
from .shape import norm_axis, prod

defop("matmul", "np.matmul({0}, {1})", doc="matrix product with broadcast batch axes")
defop("dot", "np.dot({0}, {1})", doc="np.dot")


def _frame():
    return where(user_frame(3))


@rule("matmul.shape")
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
                        % (what, describe(k1), shape_repr(a), describe(k2),
                           "only" if b1 else "second-to-last",
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
        return assign_out(t, out[0] if isinstance(out, tuple) else out, res)
    return res


UFUNC_OVERRIDES[np.matmul] = matmul


@rule("linalg.dot")
@implements(np.dot)
def _dot(t, a, b, out=None):
    if out is not None:
        raise UserError("np.dot(..., out=...) is not supported while tracing%s" % _frame())
    x, y = t.operand(a), t.operand(b)
    if type(x) is not TracedArray or type(y) is not TracedArray or not x.ndim or not y.ndim:
        return np.multiply(x, y)                  # a scalar or 0-d operand: a product
    if x.ndim > 2 or y.ndim > 2:
        # N-D dot: a sum product over the last axis of x and the second-to-last of y (no
        # broadcasting of the other axes, unlike matmul)
        return contract(t, x, y, [x.ndim - 1], [max(y.ndim - 2, 0)], "np.dot")
    shape = matmul_shape(x.shape, y.shape, "dot")
    dt = resolve(np.matmul, [x, y])
    return t.emit("dot", (x.node, y.node), {}, shape, dt)


defop("einsum", emit=lambda a, k: "np.einsum(%s, %s)" % (k["subscripts"], ", ".join(a)),
      doc="Einstein summation over the given subscripts")
defop("tensordot", "np.tensordot({0}, {1}, axes={axes})", doc="tensor contraction")
defop("outer", "np.outer({0}, {1})", doc="outer product of the flattened inputs")


def expand_ellipsis(subscripts: str, ops) -> str:
    """``"...ij,...jk->...ik"`` with the ``...`` spelled out in fresh letters, aligned from
    the right across operands as NumPy aligns broadcast axes (sizes that NumPy would
    broadcast from 1 must here be equal: the einsum checks them as equal letters)."""
    s = subscripts.replace(" ", "")
    if "..." not in s:
        return s
    lhs, arrow, out = s.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ops) or s.replace("...", "").count(".") or \
            any(part.count("...") > 1 for part in ins + [out]):
        raise UserError("np.einsum: malformed subscripts %r%s" % (subscripts, _frame()))
    used = set(c for c in s if c.isalpha())
    fresh = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    widths = [o.ndim - len(p.replace("...", "")) if "..." in p else 0 for p, o in zip(ins, ops)]
    width = max(widths)
    if min(widths) < 0 or width > len(fresh):
        raise UserError("np.einsum: subscripts %r do not fit the operands' dimensions%s"
                        % (subscripts, _frame()))
    letters = fresh[:width]
    new_ins = [p.replace("...", "".join(letters[width - w:])) for p, w in zip(ins, widths)]
    if arrow:
        new_out = out.replace("...", "".join(letters))
    else:
        named = [c for c in lhs if c.isalpha()]
        new_out = "".join(letters) + "".join(sorted(c for c in set(named)
                                                    if named.count(c) == 1))
    return ",".join(new_ins) + "->" + new_out


def parse_einsum(subscripts: str, ops) -> tuple:
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, out = s.split("->")
    else:
        lhs = s
        letters = [c for c in lhs if c.isalpha()]
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = lhs.split(",")
    if len(ins) != len(ops):
        raise UserError("np.einsum: %d operands for %d subscript groups%s"
                        % (len(ops), len(ins), _frame()))
    return ins, out


@rule("linalg.contract")
@implements(np.einsum)
def _einsum(t, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
            optimize=False):
    if not isinstance(subscripts, str) or out is not None or dtype is not None:
        raise UserError("np.einsum: only the subscripts-string form without out=/dtype= is "
                        "supported while tracing%s" % _frame())
    ops = [t.operand(o) for o in operands]
    for o in ops:
        if type(o) is not TracedArray:
            raise UserError("np.einsum: operands must be arrays%s" % _frame())
    subscripts = expand_ellipsis(subscripts, ops)
    ins, outs = parse_einsum(subscripts, ops)
    sizes = {}
    for spec, o in zip(ins, ops):
        if len(spec) != o.ndim:
            raise UserError("np.einsum: subscripts %r need %d dimensions, the operand has %d%s"
                            % (spec, len(spec), o.ndim, _frame()))
        for c, sz in zip(spec, o.shape):
            if c in sizes:
                if not (sizes[c] == sz):
                    raise UserError("np.einsum: sizes for subscript %r differ: %s vs %s%s"
                                    % (c, describe(sizes[c]), describe(sz), _frame()))
            else:
                sizes[c] = sz
    for c in outs:
        if c not in sizes:
            raise UserError("np.einsum: output subscript %r does not appear in the inputs%s"
                            % (c, _frame()))
    shape = tuple(sizes[c] for c in outs)
    dt = np.result_type(*[o.dtype for o in ops])
    return t.emit("einsum", tuple(o.node for o in ops), {"subscripts": subscripts}, shape, dt)


@rule("linalg.inner")
@implements(np.inner)
def _inner(t, a, b):
    x, y = t.operand(a), t.operand(b)
    if type(x) is not TracedArray or type(y) is not TracedArray or not x.ndim or not y.ndim:
        return np.multiply(a, b)                  # a scalar operand: a product
    return contract(t, x, y, [x.ndim - 1], [y.ndim - 1], "np.inner")


@rule("linalg.tensordot")
@implements(np.tensordot)
def _tensordot(t, a, b, axes=2):
    x, y = _operands(t, a, b, "tensordot")
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ax_a = list(range(x.ndim - n, x.ndim))
        ax_b = list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise UserError("np.tensordot: shape-mismatch for sum%s" % _frame())
    return contract(t, x, y, ax_a, ax_b, "np.tensordot")


def contract(t, x: TracedArray, y: TracedArray, ax_a, ax_b, what: str):
    """The sum product of ``x`` and ``y`` over axes ``ax_a`` of x and ``ax_b`` of y (a
    ``tensordot`` node); ``what`` is the call the user wrote (``np.inner``, ``np.dot``),
    named in the error when the contracted sizes differ."""
    ax_a = [norm_axis(i, x.ndim) for i in ax_a]
    ax_b = [norm_axis(i, y.ndim) for i in ax_b]
    # NumPy refuses an axis named twice (as given, or once normalised: its transpose)
    if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
        raise UserError("%s: duplicate axes are not allowed: the contracted axes %s of the "
                        "first operand and %s of the second must each name an axis once%s"
                        % (what, ax_a, ax_b, _frame()))
    for i, j in zip(ax_a, ax_b):
        if not (x.shape[i] == y.shape[j]):
            raise UserError("%s: contracted sizes differ: %s vs %s%s"
                            % (what, describe(x.shape[i]), describe(y.shape[j]), _frame()))
    shape = tuple(s for i, s in enumerate(x.shape) if i not in ax_a) + \
        tuple(s for j, s in enumerate(y.shape) if j not in ax_b)
    dt = resolve(np.matmul, [x, y])
    return t.emit("tensordot", (x.node, y.node), {"axes": (tuple(ax_a), tuple(ax_b))}, shape, dt)


@rule("linalg.outer")
@implements(np.outer)
def _outer(t, a, b, out=None):
    x, y = _operands(t, a, b, "outer")
    dt = resolve(np.multiply, [x, y])
    return t.emit("outer", (x.node, y.node), {}, (prod(x.shape), prod(y.shape)), dt)
