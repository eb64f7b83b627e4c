"""State arrays that are views of other state arrays alias as in NumPy.

``self.k = self.kv[0]`` in a constructor makes ``self.k`` a view: eager code that writes
``self.k[t] = x`` changes ``self.kv``.  After the state walk, each state array that is a
basic-indexing view of another one (``view_index``: the index, found from the buffer
offset and strides and verified) is traced as that view of the other's proxy, so a write
through it reaches its base (capture/views.py) and it is no separate state input; a guard
(``Guard`` kind ``view``) checks at call time that it still is that view.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from ..views import View, attach


def is_view(v, b, idx) -> bool:
    """Whether ``v`` is exactly ``b[idx]`` (same memory, shape, strides and dtype)."""
    if not isinstance(v, np.ndarray) or not isinstance(b, np.ndarray):
        return False
    try:
        w = b[idx]
    except (IndexError, TypeError):
        return False
    return w.shape == v.shape and w.strides == v.strides and w.dtype == v.dtype and \
        _address(w) == _address(v)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def view_index(a: np.ndarray, b: np.ndarray) -> Optional[tuple]:
    """An index ``idx`` of ints and slices with ``b[idx]`` exactly ``a`` (same memory,
    shape and strides), or None."""
    if a.dtype != b.dtype or a.size == 0 or b.size == 0 or a is b:
        return None
    if any(s <= 0 for s in b.strides) or any(s < 0 for s in a.strides):
        return None
    off = _address(a) - _address(b)
    if off < 0:
        return None
    # where a starts, as an index of b (b's axes by decreasing stride)
    order = sorted(range(b.ndim), key=lambda d: -b.strides[d])
    start = [0] * b.ndim
    rest = off
    for d in order:
        start[d], rest = divmod(rest, b.strides[d])
        if start[d] >= b.shape[d]:
            return None
    if rest:
        return None
    idx = []
    ai = 0
    for d in range(b.ndim):
        if ai < a.ndim and a.strides[ai] % b.strides[d] == 0 and a.strides[ai] > 0:
            step = a.strides[ai] // b.strides[d]
            stop = start[d] + step * (a.shape[ai] - 1) + 1
            if stop <= b.shape[d]:
                idx.append(slice(start[d], stop, step) if step != 1 else
                           slice(start[d], start[d] + a.shape[ai]))
                ai += 1
                continue
        idx.append(start[d])
    if ai != a.ndim:
        return None
    idx = tuple(idx)
    try:
        v = b[idx]
    except IndexError:
        return None
    if v.shape == a.shape and v.strides == a.strides and _address(v) == _address(a):
        return idx
    return None


def alias_views(binding, tracer) -> List[Tuple[object, object, tuple]]:
    """Trace each state array that is a view of another state array as that view (writes
    through it reach the base).  Returns ``(view path, base path, index, view node)`` for
    the guards (one is kept only while the view's node is live in the finished graph)."""
    arrays = list(binding.arrays.values())
    out = []
    for a in arrays:
        if a.base is None:
            continue
        best = None
        for b in arrays:
            if b is a or b.size <= a.size or not np.may_share_memory(a, b):
                continue
            idx = view_index(a, b)
            if idx is not None and (best is None or b.size > best[0].size):
                best = (b, idx)
        if best is None:
            continue
        b, idx = best
        pa, pb = tracer.state[id(a)], tracer.state[id(b)]
        if pb.view is not None:
            continue                      # its base is a view itself: keep it simple
        node = pa.node
        derived = pb[idx]
        # the proxy of ``a`` becomes the view: same object, so every place holding it sees it
        pa.node, pa._shape, pa.dtype = derived.node, derived.shape, derived.dtype
        attach(tracer, pa, pb, View(pb, "index", idx))
        tracer.state_nodes.remove(node)
        tracer.input_proxies.pop(id(pa), None)
        tracer.final.pop(node, None)
        out.append((binding.array_paths[id(a)], binding.array_paths[id(b)], idx, pa.node))
    return out
