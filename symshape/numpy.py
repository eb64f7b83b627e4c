"""``symshape.numpy``: NumPy with creation functions that keep symbolic sizes.

``import symshape.numpy as snp``; ``snp.zeros((x.shape[0], 3))`` stays symbolic while
tracing (NumPy itself would convert the size to an int first, which specialises it).
Outside tracing every name is NumPy's own.  Any other attribute is looked up in NumPy.
While tracing, the tracer that owns the sizes (found through them) traces the call, so this
module imports nothing of capture.
"""
from __future__ import annotations

import numpy as _np

from symshape.sizes.symint import SymInt

__all__ = ["zeros", "ones", "empty", "full", "arange", "eye"]


def _tracer_of(*values):
    for v in values:
        items = v if isinstance(v, (tuple, list)) else (v,)
        for s in items:
            if type(s) is SymInt:
                t = getattr(s.env, "tracer", None)
                if t is not None:
                    return t
    return None


def _dispatch(np_func, sizes, *args, **kwargs):
    t = _tracer_of(*sizes)
    if t is None:
        return np_func(*args, **kwargs)
    kwargs.pop("like", None)
    return t.call(np_func, *args, **kwargs)


def zeros(shape, dtype=float, order="C", **kw):
    return _dispatch(_np.zeros, (shape,), shape, dtype, order, **kw)


def ones(shape, dtype=None, order="C", **kw):
    return _dispatch(_np.ones, (shape,), shape, dtype, order, **kw)


def empty(shape, dtype=float, order="C", **kw):
    return _dispatch(_np.empty, (shape,), shape, dtype, order, **kw)


def full(shape, fill_value, dtype=None, order="C", **kw):
    return _dispatch(_np.full, (shape,), shape, fill_value, dtype, order, **kw)


def arange(start, stop=None, step=None, dtype=None, **kw):
    return _dispatch(_np.arange, (start, stop, step), start, stop, step, dtype, **kw)


def eye(N, M=None, k=0, dtype=float, order="C", **kw):
    return _dispatch(_np.eye, (N, M), N, M, k, dtype, order, **kw)


def __getattr__(name):
    return getattr(_np, name)
