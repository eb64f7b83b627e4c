"""NumPy's output shapes, stated from NumPy's documentation (never from ``capture/ops``).

Each function takes the input shapes (tuples of sizes) and the op's static arguments and
returns ``(output shapes, conditions)``: the shapes NumPy returns, and the conditions on the
input sizes under which NumPy accepts the call (a contract that admits a point violating
one admits a call NumPy rejects).  A size is a Python int or a Z3 integer term; the same
function therefore states the proof's reference (``proofs/op_shape_rules.py``, over Z3) and
is checked against real NumPy on concrete shapes (``tests/test_numpy_shapes.py``).

``P`` does Python's ``//`` and ``%`` on the size type: ``proofs.pyint.Py`` for Z3, ``INTS``
for ints.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import z3

Shape = Tuple
Spec = Tuple[List[Shape], List]


class _Ints:
    """Python's ``//`` and ``%`` on ints (the ``Py`` interface, for concrete checks)."""

    @staticmethod
    def floordiv(a: int, b: int) -> int:
        return a // b

    @staticmethod
    def mod(a: int, b: int) -> int:
        return a % b


INTS = _Ints()


def _is_py(*vs) -> bool:
    return all(isinstance(v, (int, bool)) for v in vs)


def ite(c, a, b):
    """``a if c else b`` on ints or Z3 terms."""
    if isinstance(c, bool):
        return a if c else b
    return z3.If(c, a, b)


def vmax(a, b):
    return max(a, b) if _is_py(a, b) else z3.If(a >= b, a, b)


def vmin(a, b):
    return min(a, b) if _is_py(a, b) else z3.If(a <= b, a, b)


def _is_one(s) -> bool:
    """``s`` is the constant 1 (an int, or a Z3 numeral)."""
    return (_is_py(s) and s == 1) or (z3.is_int_value(s) and s.as_long() == 1)


def prod(sizes, one=1):
    out = one
    for s in sizes:
        out = out * s
    return out


def norm(axis: int, ndim: int) -> int:
    """An axis in ``[-ndim, ndim)`` as an index (the callers generate only valid ones)."""
    assert -ndim <= axis < ndim, (axis, ndim)
    return axis % ndim


def bcast(sizes: Sequence):
    """One axis broadcast (NumPy's broadcasting rules): the size other than 1, all such sizes
    equal; conditions: each size is 1 or the result."""
    sizes = list(sizes)
    out = 1
    for s in reversed(sizes):
        out = ite(s != 1, s, out)
    if _is_py(*sizes):
        return out, [s == 1 or s == out for s in sizes]
    # "each size is 1 or the result" is "every two sizes other than 1 are equal": stated
    # pairwise, the conditions hold no copy of the result's nested If (Z3 prints a query
    # as a tree, and the cache key is that text)
    return out, [z3.Or(a == 1, b == 1, a == b) for k, a in enumerate(sizes)
                 for b in sizes[k + 1:]]


def broadcast(*shapes) -> Spec:
    """``np.broadcast_shapes``: align on the right, each axis broadcast."""
    nd = max([len(s) for s in shapes] + [0])
    out, ok = [], []
    for i in range(-nd, 0):
        r, c = bcast([s[i] for s in shapes if len(s) >= -i])
        out.append(r)
        ok += c
    return [tuple(out)], ok


# ---------------------------------------------------------------------------- reductions
def reduction(shape, axis, keepdims: bool) -> Spec:
    """``np.sum(x, axis, keepdims)``: the reduced axes removed (kept as 1)."""
    axes = range(len(shape)) if axis is None else \
        {norm(a, len(shape)) for a in (axis if isinstance(axis, tuple) else (axis,))}
    if keepdims:
        return [tuple(1 if i in axes else s for i, s in enumerate(shape))], []
    return [tuple(s for i, s in enumerate(shape) if i not in axes)], []


def arg_reduction(shape, axis, keepdims: bool) -> Spec:
    """``np.argmax``: as a reduction over one axis (all axes when None, flattened); NumPy
    raises on an empty extent ("attempt to get argmax of an empty sequence")."""
    out, _ = reduction(shape, axis, keepdims)
    reduced = shape if axis is None else (shape[norm(axis, len(shape))],)
    return out, [s >= 1 for s in reduced]


def along_axis(shape, axis) -> Spec:
    """``np.cumsum`` / ``np.sort`` / ``np.argsort``: the shape itself; ``axis=None``
    flattens first."""
    if axis is None:
        return [(prod(shape),)], []
    return [tuple(shape)], []


def diff(shape, n: int, axis: int) -> Spec:
    """``np.diff(x, n, axis)``: the axis shrinks by n, to no less than 0 (n >= 0)."""
    ax = norm(axis, len(shape))
    return [tuple(vmax(s - n, 0) if i == ax else s for i, s in enumerate(shape))], []


# ---------------------------------------------------------------------------- axes
def transpose(shape, axes: Optional[Sequence[int]]) -> Spec:
    nd = len(shape)
    axes = tuple(range(nd))[::-1] if axes is None else tuple(norm(a, nd) for a in axes)
    return [tuple(shape[a] for a in axes)], []


def swapaxes(shape, a1: int, a2: int) -> Spec:
    out = list(shape)
    i, j = norm(a1, len(shape)), norm(a2, len(shape))
    out[i], out[j] = shape[j], shape[i]
    return [tuple(out)], []


def moveaxis(shape, source: int, destination: int) -> Spec:
    """The axis ``source`` taken out and put back at ``destination`` (the docs' example:
    ``np.moveaxis(x, 0, -1)`` of (3, 4, 5) is (4, 5, 3))."""
    nd = len(shape)
    rest = [s for i, s in enumerate(shape) if i != norm(source, nd)]
    rest.insert(norm(destination, nd), shape[norm(source, nd)])
    return [tuple(rest)], []


def expand_dims(shape, axis) -> Spec:
    """Each axis of ``axis`` is a position in the *result* (rank + len(axis))."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    nd = len(shape) + len(axes)
    pos = {norm(a, nd) for a in axes}
    it = iter(shape)
    return [tuple(1 if i in pos else next(it) for i in range(nd))], []


def squeeze(shape, axis) -> Spec:
    """``np.squeeze``: the size-1 axes (or the named ones, which must have size 1) removed."""
    if axis is None:
        # the result's rank depends on which sizes are 1: a size not known to be 1 is kept,
        # on the condition that it is not 1
        kept = [s for s in shape if not _is_one(s)]
        return [tuple(kept)], [s != 1 for s in kept]
    axes = {norm(a, len(shape)) for a in (axis if isinstance(axis, tuple) else (axis,))}
    return [tuple(s for i, s in enumerate(shape) if i not in axes)], \
        [shape[i] == 1 for i in sorted(axes)]


# ---------------------------------------------------------------------------- joining
def concatenate(shapes, axis) -> Spec:
    """``np.concatenate``: equal shapes off the axis, the sizes summed along it; ``None``
    flattens every input."""
    if axis is None:
        return [(sum((prod(s) for s in shapes[1:]), prod(shapes[0])),)], []
    ax = norm(axis, len(shapes[0]))
    first = shapes[0]
    out = tuple(sum((s[ax] for s in shapes[1:]), first[ax]) if i == ax else first[i]
                for i in range(len(first)))
    return [out], [s[i] == first[i] for s in shapes[1:] for i in range(len(first)) if i != ax]


def split_sections(P, shape, k: int, axis: int) -> Spec:
    """``np.split(x, k, axis)``: k equal parts; NumPy raises unless k divides the size."""
    ax = norm(axis, len(shape))
    n = shape[ax]
    part = tuple(P.floordiv(n, k) if i == ax else s for i, s in enumerate(shape))
    return [part] * k, [P.mod(n, k) == 0]


def array_split_sections(P, shape, k: int, axis: int) -> Spec:
    """``np.array_split(x, k, axis)``: the first ``n % k`` parts have ``n // k + 1`` items,
    the rest ``n // k`` (the docs' "l % n sub-arrays of size l//n + 1")."""
    ax = norm(axis, len(shape))
    n = shape[ax]
    q, m = P.floordiv(n, k), P.mod(n, k)
    return [tuple(q + ite(j < m, 1, 0) if i == ax else s for i, s in enumerate(shape))
            for j in range(k)], []


def slice_bound(v, n, default):
    """A bound of ``x[lo:hi]`` (step 1) as Python adjusts it: None is ``default``, a
    negative one counts from the end and is then clipped to ``[0, n]``."""
    if v is None:
        return default
    return ite(v < 0, vmax(v + n, 0), vmin(v, n))


def split_indices(shape, indices: Sequence, axis: int) -> Spec:
    """``np.split(x, [i, j, ...], axis)``: the parts ``x[:i], x[i:j], ..., x[j:]`` along the
    axis (the docs: "an index exceeding the dimension gives an empty sub-array")."""
    ax = norm(axis, len(shape))
    n = shape[ax]
    edges = [None] + list(indices) + [None]
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        a, b = slice_bound(lo, n, 0), slice_bound(hi, n, n)
        out.append(tuple(vmax(b - a, 0) if i == ax else s for i, s in enumerate(shape)))
    return out, []


# ---------------------------------------------------------------------------- indexing
def take(shape, idx_shape, axis) -> Spec:
    """``np.take(x, i, axis)``: the axis replaced by i's shape; ``None``: the flattened x."""
    if axis is None:
        return [tuple(idx_shape)], []
    ax = norm(axis, len(shape))
    return [tuple(shape[:ax]) + tuple(idx_shape) + tuple(shape[ax + 1:])], []


def take_along_axis(shape, idx_shape, axis: int) -> Spec:
    """``np.take_along_axis``: the index's size along the axis, the others broadcast."""
    ax = norm(axis, len(shape))
    out, ok = [], []
    for i, (s, t) in enumerate(zip(shape, idx_shape)):
        if i == ax:
            out.append(t)
        else:
            r, c = bcast([s, t])
            out.append(r)
            ok += c
    return [tuple(out)], ok


def advanced_index(shape, index_shapes, pos: Sequence[int]) -> Spec:
    """``x[...]`` with 1-D index arrays at the axes ``pos`` (the others full slices): the
    arrays broadcast to B; B replaces adjacent arrays in place and goes first when they
    are not adjacent."""
    (b,), ok = broadcast(*[tuple(s) for s in index_shapes])
    rest = [s for a, s in enumerate(shape) if a not in pos]
    if list(pos) == list(range(pos[0], pos[0] + len(pos))):
        return [tuple(shape[:pos[0]]) + tuple(b) + tuple(shape[pos[-1] + 1:])], ok
    return [tuple(b) + tuple(rest)], ok


def basic_index(shape, items: Sequence) -> Spec:
    """``x[items]`` with ints, slices (step 1 or any other constant), None and one
    Ellipsis: an int removes its axis (and needs ``-n <= i < n``), a slice keeps
    ``len(range(n)[s])`` items, None inserts a 1, ``...`` stands for the axes not indexed."""
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    full: list = []
    for i in items:
        if i is Ellipsis:
            full += [slice(None)] * (len(shape) - used)
        else:
            full.append(i)
    if not any(i is Ellipsis for i in items):      # identity: a Z3 term's == is symbolic
        full += [slice(None)] * (len(shape) - used)
    out, ok, dim = [], [], 0
    for i in full:
        if i is None:
            out.append(1)
            continue
        n = shape[dim]
        dim += 1
        if isinstance(i, slice):
            out.append(slice_len(n, i.start, i.stop, 1 if i.step is None else i.step))
        else:
            ok += [i < n, i >= -n]
    return [tuple(out)], ok


def slice_len(n, start, stop, step: int):
    """``len(range(n)[start:stop:step])`` from the documented adjustment of the bounds
    (``slice.indices``): the number of ``start' + step*k`` strictly before ``stop'``."""
    if step > 0:
        a = slice_bound(start, n, 0)
        b = slice_bound(stop, n, n)
        return vmax(_ceil(b - a, step), 0)
    a = n - 1 if start is None else ite(start < 0, vmax(start + n, -1), vmin(start, n - 1))
    b = -1 if stop is None else ite(stop < 0, vmax(stop + n, -1), vmin(stop, n - 1))
    return vmax(_ceil(a - b, -step), 0)


def _ceil(a, k: int):
    """ceil(a / k) for k > 0, on ints or Z3 terms (Z3's ``/`` floors for k > 0)."""
    if _is_py(a):
        return -((-a) // k)
    return (a + k - 1) / k


# ---------------------------------------------------------------------------- repetition
def repeat(shape, r: int, axis) -> Spec:
    if axis is None:
        return [(prod(shape) * r,)], []
    ax = norm(axis, len(shape))
    return [tuple(s * r if i == ax else s for i, s in enumerate(shape))], []


def pad(shape, widths) -> Spec:
    """``np.pad(x, widths)``: widths as NumPy broadcasts them -- an int, one (before, after)
    pair for every axis, or one pair per axis."""
    nd = len(shape)
    if not isinstance(widths, (tuple, list)):
        pairs = [(widths, widths)] * nd
    elif len(widths) and not isinstance(widths[0], tuple):
        pairs = [tuple(widths)] * nd if len(widths) == 2 else [(widths[0], widths[0])] * nd
    else:
        pairs = list(widths) if len(widths) == nd else [widths[0]] * nd
    # NumPy raises for a negative width ("index can't contain negative values")
    return [tuple(s + a + b for s, (a, b) in zip(shape, pairs))], \
        [w >= 0 for a, b in pairs for w in (a, b)]


def flip(shape, axis) -> Spec:
    return [tuple(shape)], []


def diagonal(shape, offset: int, axis1: int, axis2: int) -> Spec:
    """``np.diagonal``: the two axes removed and the diagonal's length appended:
    ``max(0, min(n1, n2 - k))`` for an offset k >= 0, ``max(0, min(n1 + k, n2))`` below."""
    nd = len(shape)
    a1, a2 = norm(axis1, nd), norm(axis2, nd)
    n1, n2 = shape[a1], shape[a2]
    d = vmax(0, vmin(n1, n2 - offset) if offset >= 0 else vmin(n1 + offset, n2))
    return [tuple(s for i, s in enumerate(shape) if i not in (a1, a2)) + (d,)], []


# ---------------------------------------------------------------------------- products
def dot(a, b) -> Spec:
    """``np.dot``: 1-D . 1-D is a scalar; N-D . 1-D sums over the last axes; N-D . M-D
    (M >= 2) over a's last and b's second-to-last: ``a.shape[:-1] + b.shape[:-2] +
    b.shape[-1:]``."""
    if len(b) == 1:
        return [tuple(a[:-1])], [a[-1] == b[0]]
    return [tuple(a[:-1]) + tuple(b[:-2]) + (b[-1],)], [a[-1] == b[-2]]


def matmul(a, b) -> Spec:
    """``a @ b`` (``np.matmul``, operands of rank >= 1): a 1-D operand is promoted to a
    matrix (a 1 prepended to a, appended to b) and that axis removed from the result; the
    last axis of a meets b's second-to-last; the batch axes (all but the last two)
    broadcast."""
    pa = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    pb = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    (batch,), ok = broadcast(pa[:-2], pb[:-2])
    out = tuple(batch) + ((pa[-2],) if len(a) > 1 else ()) + ((pb[-1],) if len(b) > 1 else ())
    return [out], [pa[-1] == pb[-2]] + ok


def stack(shapes, axis: int) -> Spec:
    """``np.stack(arrays, axis)``: the arrays' common shape with an axis of their count
    inserted at ``axis`` (of the result's rank); every shape must be equal."""
    out = list(shapes[0])
    out.insert(norm(axis, len(out) + 1), len(shapes))
    return [tuple(out)], [len(s) == len(shapes[0]) for s in shapes[1:]] + \
        [a == b for s in shapes[1:] for a, b in zip(shapes[0], s)]


def tile(shape, reps: Sequence[int]) -> Spec:
    """``np.tile(x, reps)``: shape and reps padded with leading 1s to the longer, then
    multiplied axis by axis."""
    nd = max(len(shape), len(reps))
    s = (1,) * (nd - len(shape)) + tuple(shape)
    r = (1,) * (nd - len(reps)) + tuple(reps)
    return [tuple(a * k for a, k in zip(s, r))], []


def tensordot(a, b, k: int) -> Spec:
    """``np.tensordot(a, b, axes=k)``: a's last k axes summed with b's first k."""
    return [tuple(a[:len(a) - k]) + tuple(b[k:])], \
        [a[len(a) - k + i] == b[i] for i in range(k)]


def outer(a, b) -> Spec:
    return [(prod(a), prod(b))], []


def inner(a, b) -> Spec:
    """``np.inner``: a sum over the last axes: ``a.shape[:-1] + b.shape[:-1]`` (a 0-D
    operand multiplies)."""
    if not a or not b:
        return [tuple(b) if not a else tuple(a)], []
    return [tuple(a[:-1]) + tuple(b[:-1])], [a[-1] == b[-1]]


def kron(a, b) -> Spec:
    """``np.kron``: the shapes aligned on the right (1s prepended), multiplied axis by axis."""
    nd = max(len(a), len(b))
    a = (1,) * (nd - len(a)) + tuple(a)
    b = (1,) * (nd - len(b)) + tuple(b)
    return [tuple(p * q for p, q in zip(a, b))], []


# ---------------------------------------------------------------------------- 1-D functions
def correlate(n, m, mode: str) -> Spec:
    """``np.convolve`` / ``np.correlate`` of lengths n, m (neither may be empty): ``full``
    n + m - 1, ``same`` max(n, m), ``valid`` max(n, m) - min(n, m) + 1."""
    size = {"full": n + m - 1, "same": vmax(n, m),
            "valid": vmax(n, m) - vmin(n, m) + 1}[mode]
    return [(size,)], [n >= 1, m >= 1]


def histogram_edges(e) -> Spec:
    """``np.histogram(x, bins=edges)`` with e edges: e - 1 counts and the e edges."""
    return [(vmax(e - 1, 0),), (e,)], []


def linspace(num) -> Spec:
    """``np.linspace(start, stop, num)``: num samples; NumPy raises for num < 0."""
    return [(num,)], [num >= 0]


__all__ = ["INTS", "inner", "arg_reduction", "along_axis", "arange", "atleast", "average", "atleast_nd", "dstack", "hstack", "vstack", "array_split_sections", "basic_index",
           "advanced_index", "bcast", "broadcast", "concatenate", "diagonal", "diff", "dot", "einsum", "expand_dims",
           "flip", "meshgrid", "moveaxis", "kron", "matmul", "stack", "tile", "correlate", "histogram_edges", "linspace", "outer", "pad", "nonempty_reduction", "partition", "quantile", "ravel", "reduction", "repeat", "slice_len",
           "reshape", "split_indices", "split_sections", "squeeze", "swapaxes", "take",
           "take_along_axis", "tensordot", "transpose"]


def reshape(P, shape, target) -> Spec:
    """``x.reshape(target)``: at most one -1, inferred as ``size // prod(others)``, which
    must be a positive divisor of the size; every other entry >= 0; without a -1 the
    product must equal the size."""
    size = prod(shape)
    holes = [i for i, t in enumerate(target) if _is_py(t) and t == -1]
    known = prod(t for i, t in enumerate(target) if i not in holes)
    ok = [t >= 0 for i, t in enumerate(target) if i not in holes]
    if not holes:
        return [tuple(target)], ok + [known == size]
    out = list(target)
    out[holes[0]] = P.floordiv(size, known)
    return [tuple(out)], ok + [known >= 1, P.mod(size, known) == 0]


# ---------------------------------------------------------------------------- h/v/dstack
def atleast(shape, nd: int) -> tuple:
    """``np.atleast_1d`` / ``_2d`` / ``_3d``: () is all 1s; (n,) is (1, n) / (1, n, 1);
    (m, n) is (m, n, 1) for 3-D; higher ranks unchanged."""
    s = tuple(shape)
    if len(s) >= nd:
        return s
    if not s:
        return (1,) * nd
    if len(s) == 1:
        return (1, s[0], 1)[:nd] if nd > 1 else s
    return s + (1,)


def _pieces(shapes):
    """The arrays a stacking function joins: a list of shapes, or (the argument being one
    array) its rows, ``shape[0]`` of them, each of shape ``shape[1:]``; with the count."""
    if isinstance(shapes, list):
        return shapes, None
    return [tuple(shapes[1:])], shapes[0]


def _join(pieces, count, axis: int) -> Spec:
    out, ok = concatenate(pieces, axis)
    if count is None:
        return out, ok
    ax = norm(axis, len(pieces[0]))
    shape = tuple(count * s if i == ax else s for i, s in enumerate(pieces[0]))
    return [shape], [count >= 1]          # NumPy: "need at least one array to concatenate"


def hstack(shapes) -> Spec:
    """``np.hstack``: 1-D arrays joined along axis 0, others along axis 1."""
    pieces, count = _pieces(shapes)
    pieces = [atleast(p, 1) for p in pieces]
    return _join(pieces, count, 0 if len(pieces[0]) == 1 else 1)


def vstack(shapes) -> Spec:
    """``np.vstack``: the arrays made at least 2-D, joined along axis 0."""
    pieces, count = _pieces(shapes)
    return _join([atleast(p, 2) for p in pieces], count, 0)


def dstack(shapes) -> Spec:
    """``np.dstack``: the arrays made at least 3-D, joined along axis 2."""
    pieces, count = _pieces(shapes)
    return _join([atleast(p, 3) for p in pieces], count, 2)


# ---------------------------------------------------------------------------- einsum
def einsum(subscripts: str, shapes) -> Spec:
    """``np.einsum(subscripts, *operands)`` (NumPy's einsum docs): a letter repeated in one
    operand takes its diagonal (equal sizes there); across operands a letter's sizes
    broadcast (1 or the common size), as do the axes an ``...`` stands for (aligned on the
    right).  The output is the ``->`` part, or implicitly the ``...`` axes then the letters
    that occur exactly once, in alphabetical order."""
    lhs, arrow, out = subscripts.replace(" ", "").partition("->")
    terms = lhs.split(",")
    ok: List = []
    across: Dict[str, List] = {}
    ells = []
    for term, shape in zip(terms, shapes):
        shape = tuple(shape)
        if "..." in term:
            pre, post = term.split("...")
            k = len(shape) - len(pre) - len(post)
            ells.append(shape[len(pre):len(pre) + k])
            labels = list(pre) + [None] * k + list(post)
        else:
            labels = list(term)
        within: Dict[str, List] = {}
        for c, n in zip(labels, shape):
            if c is not None:
                within.setdefault(c, []).append(n)
        for c, ns in within.items():
            ok += [n == ns[0] for n in ns[1:]]
            across.setdefault(c, []).append(ns[0])
    size = {}
    for c, ns in across.items():
        size[c], conds = bcast(ns)
        ok += conds
    (ell,), conds = broadcast(*ells)
    ok += conds
    if not arrow:
        letters = [c for c in lhs if c.isalpha()]
        out = ("..." if ells else "") + "".join(sorted(c for c in set(letters)
                                                       if letters.count(c) == 1))
    pre, dots, post = out.partition("...")
    return [tuple(size[c] for c in pre) + (tuple(ell) if dots else ()) +
            tuple(size[c] for c in post)], ok



# ---------------------------------------------------------------------------- creation
def ravel(shape) -> Spec:
    """``np.ravel`` / ``x.reshape(-1)`` / ``x.flatten()``: one axis of the size."""
    return [(prod(shape),)], []


def numpy_max_rank() -> int:
    """The highest rank NumPy allows an array (64 in NumPy 2, 32 before): found by asking
    NumPy, so that "every rank" means NumPy's own limit, not a chosen bound."""
    import numpy as np
    rank = 0
    while True:
        try:
            np.empty((1,) * (rank + 1))
        except ValueError:
            return rank
        rank += 1


def atleast_nd(shapes, nd: int) -> Spec:
    """``np.atleast_1d`` / ``_2d`` / ``_3d`` of one or more arrays (``atleast``)."""
    return [atleast(s, nd) for s in shapes], []


def arange(P, start, stop, step: int) -> Spec:
    """``np.arange(start, stop, step)``: ``max(0, ceil((stop - start) / step))``
    elements (NumPy's docs), ceil written as ``-((start - stop) // step)``."""
    return [(vmax(-P.floordiv(start - stop, step), 0),)], []


def meshgrid(shapes, indexing: str, sparse: bool) -> Spec:
    """``np.meshgrid(*xs, indexing, sparse)``: each input flattened; the grid's shape is
    the sizes in order ('ij') or with the first two exchanged ('xy', two or more inputs);
    every output has it, or (sparse) 1s except its own input's axis of the grid."""
    sizes = [prod(s) for s in shapes]
    pos = list(range(len(sizes)))
    if indexing == "xy" and len(sizes) >= 2:
        pos[0], pos[1] = 1, 0
    grid = [sizes[pos.index(a)] for a in range(len(sizes))]
    if not sparse:
        return [tuple(grid)] * len(sizes), []
    return [tuple(s if a == p else 1 for a in range(len(sizes)))
            for s, p in zip(sizes, pos)], []


# ---------------------------------------------------------------------------- statistics
def nonempty_reduction(shape, axis, keepdims: bool) -> Spec:
    """``np.nanmax`` / ``np.nanargmin`` / ``np.percentile``...: a reduction over ``axis``
    (None, an int or a tuple) that NumPy refuses on an empty reduced extent."""
    out, _ = reduction(shape, axis, keepdims)
    axes = range(len(shape)) if axis is None else \
        [norm(a, len(shape)) for a in (axis if isinstance(axis, tuple) else (axis,))]
    return out, [shape[i] >= 1 for i in axes]


def quantile(q_shape, shape, axis, keepdims: bool, nonempty: bool) -> Spec:
    """``np.quantile(a, q, axis, keepdims)`` and friends: q's shape, then the reduction's
    (``nonempty``: NumPy refuses an empty extent, as np.quantile and np.percentile do)."""
    (out,), ok = (nonempty_reduction if nonempty else reduction)(shape, axis, keepdims)
    return [tuple(q_shape) + tuple(out)], ok


def average(shape, axis, keepdims: bool) -> Spec:
    """``np.average(a, axis, keepdims)`` without weights: a reduction; NumPy divides
    ``a.size`` by the result's size, so an empty result raises (ZeroDivisionError)."""
    (out,), _ = reduction(shape, axis, keepdims)
    kept, _ = reduction(shape, axis, False)
    return [out], [s >= 1 for s in kept[0]]


def partition(shape, kth, axis) -> Spec:
    """``np.partition`` / ``np.argpartition(a, kth, axis)``: the shape (flattened for
    ``axis=None``); NumPy raises unless the array is empty or every kth is in ``[-n, n)``
    for the axis size n."""
    (out,), _ = along_axis(shape, axis)
    n = out[0] if axis is None else shape[norm(axis, len(shape))]
    ks = kth if isinstance(kth, (list, tuple)) else [kth]
    inside = [c for k in ks for c in (-n <= k, k < n)]
    size = prod(shape)
    return [out], [size == 0 or all(inside) if _is_py(size, n) else
                   z3.Or(size == 0, z3.And(*inside))]
