"""NumPy functions that write into their first argument and return None: ``putmask``,
``place``, ``put`` and ``fill_diagonal``.  Each computes the new value with traced ops and
rebinds the array (its base and views follow, as for any traced write), so sizes stay
symbolic: no loop over elements, no slice with a size as its step.
"""
from __future__ import annotations

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symint import describe
from symshape.userframe import user_frame

from ..tracer import TracedArray, implements
from .creation import index_arange
from .factorizations import minimum


def _target(t, a, what: str) -> TracedArray:
    x = t.operand(a)
    if type(x) is not TracedArray:
        raise UserError("%s into a plain array while tracing: the array must be a traced "
                        "value%s" % (what, where(user_frame(3))))
    return x


def _cycled(t, values, n, dtype) -> TracedArray:
    """``values`` flattened and repeated to ``n`` elements (NumPy's rule for put & co.)."""
    v = t.operand(values)
    v = t.constant(np.asarray(v)) if type(v) is not TracedArray else v
    v = np.ravel(v).astype(dtype)
    if v.shape[0] == 1:
        return np.broadcast_to(v, (n,))
    return np.take(v, np.mod(index_arange(t, n), v.shape[0]))


@implements(np.putmask)
def _putmask(t, a, mask, values):
    """``a.flat[i] = values.flat[i % values.size]`` where ``mask`` is true."""
    x = _target(t, a, "np.putmask")
    m = np.broadcast_to(t.operand(mask), x.shape)
    n = x.size
    new = np.where(np.reshape(m, (n,)), _cycled(t, values, n, x.dtype), np.reshape(x, (n,)))
    t.rebind(x, np.reshape(new, x.shape))


@implements(np.place)
def _place(t, arr, mask, vals):
    """The k-th true position of ``mask`` gets ``vals[k % len(vals)]``."""
    x = _target(t, arr, "np.place")
    n = x.size
    m = np.reshape(np.broadcast_to(t.operand(mask), x.shape), (n,))
    v = t.operand(vals)
    v = t.constant(np.asarray(v)) if type(v) is not TracedArray else v
    v = np.ravel(v).astype(x.dtype)
    if not (v.shape[0] >= 1):
        raise UserError("np.place: vals must not be empty%s" % where(user_frame(2)))
    k = np.cumsum(m.astype(np.intp)) - 1
    picked = np.take(v, np.mod(np.maximum(k, 0), v.shape[0]))
    t.rebind(x, np.reshape(np.where(m, picked, np.reshape(x, (n,))), x.shape))


@implements(np.put)
def _put(t, a, ind, v, mode="raise"):
    """``a.flat[ind] = v`` (``v`` repeated to the number of indices)."""
    if mode != "raise":
        raise UserError("np.put(mode=%r) is not supported while tracing%s"
                        % (mode, where(user_frame(2))))
    x = _target(t, a, "np.put")
    idx = t.operand(ind)
    idx = t.constant(np.asarray(idx)) if type(idx) is not TracedArray else idx
    idx = np.ravel(idx)
    if idx.dtype == bool:                   # NumPy reads them as the indices 0 and 1
        idx = idx.astype(np.intp)
    x.flat[idx] = _cycled(t, v, idx.shape[0], x.dtype)


@implements(np.fill_diagonal)
def _fill_diagonal(t, a, val, wrap=False):
    """The main diagonal (``min`` of the sizes long) set to ``val``, repeated."""
    x = _target(t, a, "np.fill_diagonal")
    if x.ndim < 2:
        raise UserError("np.fill_diagonal: array must be at least 2-d%s"
                        % where(user_frame(2)))
    if x.ndim > 2:
        for s in x.shape[1:]:
            if not (s == x.shape[0]):
                raise UserError("np.fill_diagonal: all dimensions of input must be of equal "
                                "length, got %s and %s%s" % (describe(x.shape[0]), describe(s),
                                                             where(user_frame(2))))
    elif wrap:
        raise UserError("np.fill_diagonal(wrap=True) is not supported while tracing%s"
                        % where(user_frame(2)))
    k = x.shape[0] if x.ndim > 2 else minimum(x.shape[0], x.shape[1])
    i = index_arange(t, k)
    x[(i,) * x.ndim] = _cycled(t, val, k, x.dtype)
