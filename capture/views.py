"""Views alias as in NumPy: a write through a view reaches its base and every other view.

Functionalisation replaces a written array by a new value (``Tracer.rebind``).  NumPy's
basic indexing, reshapes and transposes return *views*, so eager code that writes into
``v = x[1:]`` changes ``x`` and every other view of ``x``.  Each traced view therefore
remembers how it was derived from its parent (``View``: a kind and its arguments).  When any
array is rebound, the new value is carried up to the root with each view's inverse
(``setitem`` of the index, the reshape back, the inverse permutation), and every other live
view of that root is derived again from the root's new value, in creation order (parents
before children).  Reads after a write therefore see what eager NumPy would show.

Assumption (documented in the README): a reshape of an input behaves as a view, which is
what NumPy does for contiguous arrays (every array the program creates, and inputs as callers
usually pass them).
"""
from __future__ import annotations

import weakref
from typing import Any, List, NamedTuple

import numpy as np

from symshape.sizes.symint import SymInt

from .methods import METHOD_OPS


class View(NamedTuple):
    parent: Any          # the TracedArray this one was derived from
    kind: str            # "index" | "reshape" | "permute"
    arg: Any             # the index, the shape, or the axes


def _permutation(func, args, kwargs, ndim: int) -> tuple:
    """The axes permutation a transpose-like call applies (probed on a small array whose
    sizes are all different, so the result's shape names each axis)."""
    probe = np.empty(tuple(range(1, ndim + 1)))
    out = func(probe, *args, **kwargs)
    return tuple(probe.shape.index(s) for s in out.shape)


RESHAPES = {np.reshape, np.ravel, np.squeeze, np.expand_dims}
PERMUTES = {np.transpose, np.swapaxes, np.moveaxis, np.matrix_transpose} \
    if hasattr(np, "matrix_transpose") else {np.transpose, np.swapaxes, np.moveaxis}


def register_call(tracer, func, args, kwargs, result):
    """After a NumPy call on a traced array: record ``result`` as a view when NumPy's
    result would be one (``result`` and ``args[0]`` are traced arrays: the tracer checks).
    Returns the object to hand to the user."""
    base = args[0]
    if func in RESHAPES:
        view = View(base, "reshape", result.shape)
    elif func in PERMUTES:
        view = View(base, "permute", _permutation(func, args[1:], kwargs, base.ndim))
    else:
        return result
    return attach(tracer, result, base, view)


def register_index(tracer, base, idx, result):
    """After basic indexing: a view unless every axis got an integer (a scalar copy)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if all(isinstance(i, (int, np.integer, SymInt)) for i in items) \
            and len(items) >= base.ndim:
        return result
    return attach(tracer, result, base, View(base, "index", idx))


def attach(tracer, result, base, view: View):
    if result is base:            # x[:] or a no-op reshape: a distinct object, same value
        result = tracer.wrap(base.node, base.shape, base.dtype)
    result.view = view
    root = root_of(result)
    tracer.views.setdefault(id(root), []).append(weakref.ref(result))
    return result


def root_of(a):
    while a.view is not None:
        a = a.view.parent
    return a


def forward(tracer, parent, view: View):
    """The view's value derived again from its parent's current value."""
    if view.kind == "index":
        return METHOD_OPS["getitem_value"](tracer, parent, view.arg)
    if view.kind == "reshape":
        return np.reshape(parent, view.arg)
    return np.transpose(parent, view.arg)


def inverse(tracer, parent, view: View, new):
    """The parent's new value once this view holds ``new``."""
    if view.kind == "index":
        return METHOD_OPS["setitem_value"](tracer, parent, view.arg, new)
    if view.kind == "reshape":
        return np.reshape(new, parent.shape)
    return np.transpose(new, tuple(int(i) for i in np.argsort(view.arg)))


def propagate(tracer, target) -> None:
    """``target`` was just rebound: update its ancestors, then re-derive the other views."""
    if target.view is None and id(target) not in tracer.views:
        return
    path = [target]
    a = target
    while a.view is not None:
        parent = a.view.parent
        tracer.set_value(parent, inverse(tracer, parent, a.view, a))
        a = parent
        path.append(a)
    refs: List[weakref.ref] = tracer.views.get(id(a), [])
    alive = []
    for ref in refs:
        w = ref()
        if w is None:
            continue
        alive.append(ref)
        if any(w is p for p in path):
            continue
        tracer.set_value(w, forward(tracer, w.view.parent, w.view))
    tracer.views[id(a)] = alive
