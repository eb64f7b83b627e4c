"""What library code asks about an array's memory, answered for traced arrays: ``flags``,
``np.may_share_memory`` / ``np.shares_memory``, ``np.unravel_index`` (flat positions back
to indices, with NumPy's bounds check kept as a run-time check), and framing through strides
(``as_strided``, ``sliding_window_view``) as a gather of the elements each window reads, with
a guard that every window stays inside the array; the result is read-only in the program
(a write through the view would change the array it frames).

Memory answers follow the tracer's view records (``capture.views``): an array the program
computed, or an input, owns its C-contiguous memory (inputs that share memory are refused
when the program runs); a reshape of it is C-contiguous too, a 2-D transpose Fortran-
contiguous.  An answer that depends on where a view's slice lies is not guessed: it is a
``UserError`` naming the line.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symshape.algebra import relations as R
from symshape.errors import UserError, where
from symshape.runtime import raise_text
from symshape.sizes.symint import SymInt
from symshape.userframe import user_frame

from ..methods import METHOD_OPS
from ..tracer import SIZE_FUNCTIONS, TracedArray, Tracer, implements, to_expr
from ..views import root_of


@dataclass(frozen=True)
class TracedFlags:
    """``ndarray.flags`` of a traced array: the memory layout NumPy would give it."""
    c_contiguous: bool
    f_contiguous: bool
    owndata: bool
    writeable: bool = True
    aligned: bool = True
    writebackifcopy: bool = False

    @property
    def contiguous(self) -> bool:
        return self.c_contiguous

    @property
    def fortran(self) -> bool:
        """NumPy's ``flags.fortran``: Fortran-contiguous and not C-contiguous."""
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self) -> bool:
        return self.c_contiguous or self.f_contiguous

    @property
    def fnc(self) -> bool:
        return self.fortran

    def __getitem__(self, key: str) -> bool:
        name = {"C": "c_contiguous", "F": "f_contiguous", "W": "writeable", "A": "aligned",
                "O": "owndata", "X": "writebackifcopy", "CONTIGUOUS": "c_contiguous",
                "FORTRAN": "f_contiguous"}.get(key.upper(), key.lower())
        return getattr(self, name)


def _layout(x: TracedArray):
    """(C-contiguous, F-contiguous) of ``x``, or None when its view's slice decides it."""
    if x.view is None:
        return True, x.ndim <= 1
    parent = _layout(x.view.parent)
    if parent is None:
        return None
    if x.view.kind == "reshape" and parent[0]:
        return True, x.ndim <= 1
    if x.view.kind == "index" and parent[0] and _leading_block(x.view.arg):
        return True, x.ndim <= 1
    if x.view.kind == "permute" and parent[0]:
        flipped = tuple(x.view.arg) == tuple(range(x.ndim))[::-1]
        identity = tuple(x.view.arg) == tuple(range(x.ndim))
        return identity or x.ndim <= 1, flipped or x.ndim <= 1
    return None


def _full(i) -> bool:
    return i is Ellipsis or (isinstance(i, slice) and i == slice(None))


def _leading_block(idx) -> bool:
    """Basic indexing that keeps a C-contiguous block: integers on leading axes, then at
    most one slice of step 1, then whole axes (``x[3]``, ``x[:k]``, ``x[2, 1:5, :]``)."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    while items and _full(items[-1]):
        items.pop()
    while items and isinstance(items[0], (int, np.integer, SymInt)) and \
            not isinstance(items[0], bool):
        items.pop(0)
    if not items:
        return True
    first = items[0]
    return len(items) == 1 and isinstance(first, slice) and first.step in (None, 1)


def flags_of(x: TracedArray) -> TracedFlags:
    """``x.flags`` while tracing."""
    got = _layout(x)
    if got is None:
        raise UserError("ndarray.flags of a view made by indexing depends on where the slice "
                        "lies, which the tracer does not model%s; copy it first (np.copy), or "
                        "read the flags of the array it was taken from" % where(user_frame(3)))
    return TracedFlags(got[0], got[1], owndata=x.view is None)


def _same_memory(t: Tracer, a, b, name: str):
    if type(a) is not TracedArray or type(b) is not TracedArray:
        return False              # a traced value never lives in a plain NumPy array
    ra, rb = root_of(a), root_of(b)
    if ra.node is not rb.node:
        return False              # different arrays (inputs that share are refused at run)
    if a.view is None or b.view is None or a is b:
        return True               # an array and a view of it (or itself)
    raise UserError("np.%s of two views of one array depends on where their slices lie, "
                    "which the tracer does not model%s" % (name, where(user_frame(3))))


@implements(np.may_share_memory)
def _may_share_memory(t, a, b, max_work=None):
    return _same_memory(t, a, b, "may_share_memory")


@implements(np.shares_memory)
def _shares_memory(t, a, b, max_work=None):
    return _same_memory(t, a, b, "shares_memory")


@implements(np.unravel_index)
def _unravel_index(t, indices, shape, order="C"):
    """``divmod`` by each size, from the last axis (C order) or the first (F order); an
    index outside the array raises NumPy's ``ValueError`` when the program runs."""
    if order not in ("C", "F"):
        raise UserError("np.unravel_index: order must be 'C' or 'F'%s" % where(user_frame(2)))
    idx = t.operand(indices)
    if type(idx) is not TracedArray or idx.dtype.kind not in "iu":
        raise UserError("np.unravel_index needs integer indices%s" % where(user_frame(2)))
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    total = 1
    for d in dims:
        total = total * d
    _check_bounds(t, idx, total)
    out = [None] * len(dims)
    order_axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    rest = idx.astype(np.intp)
    for k in order_axes:
        out[k] = rest % dims[k]
        rest = rest // dims[k]
    return tuple(out)


def _check_bounds(t: Tracer, idx: TracedArray, total) -> None:
    ok = np.all((idx >= 0) & (idx < total))
    flag = METHOD_OPS["item"](t, ok, ())
    exc = ValueError("index is out of bounds for array with size %s" % (
        "the product of the shape" if type(total) is SymInt else total))
    t.env.check(R.eq(to_expr(flag), 1), None, raise_text(exc), user_frame(3))


def _gather_windows(t: Tracer, x: TracedArray, shape: tuple, steps: tuple, what: str):
    """Element ``[i0, i1, ...]`` of the result is ``x.ravel()[i0 * steps[0] + ...]``:
    a gather, guarded so that the last window ends inside ``x``."""
    frame = user_frame(4)
    last = 0
    for n, s in zip(shape, steps):
        last = last + (n - 1) * s
    size = 1
    for n in x.shape:
        size = size * n
    t.env.check(R.le(to_expr(last), to_expr(size - 1)), None,
                "%s reads past the end of the array" % what, frame)
    flat = np.reshape(x, (-1,))
    idx = None
    for k, (n, s) in enumerate(zip(shape, steps)):
        part = np.reshape(np.arange(n, like=x) * s, (1,) * k + (n,) + (1,) * (len(shape) - k - 1))
        idx = part if idx is None else idx + part
    out = flat[idx] if idx is not None else np.reshape(flat[:1], ())
    out.readonly = "the %s view" % what
    return out


@implements(np.lib.stride_tricks.as_strided)
def _as_strided(t, x, shape=None, strides=None, subok=False, writeable=True):
    a = t.operand(x)
    if not flags_of(a).c_contiguous:
        raise UserError("as_strided of an array that is not C-contiguous in the program%s; "
                        "copy it first (np.ascontiguousarray)" % where(user_frame(2)))
    shape = tuple(a.shape) if shape is None else tuple(shape)
    strides = tuple(a.strides) if strides is None else tuple(strides)
    if len(shape) != len(strides):
        raise UserError("as_strided: shape and strides have different lengths%s"
                        % where(user_frame(2)))
    item = a.dtype.itemsize
    steps = []
    for s in strides:
        if type(s) is not SymInt and (s < 0 or s % item):
            raise UserError("as_strided with a negative stride or one that is not a multiple "
                            "of the item size (%d) is not supported while tracing%s"
                            % (item, where(user_frame(2))))
        steps.append(s // item)
    return _gather_windows(t, a, shape, tuple(steps), "as_strided")


@implements(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(t, x, window_shape, axis=None, *, subok=False, writeable=False):
    a = t.operand(x)
    windows = tuple(window_shape) if isinstance(window_shape, (tuple, list)) else \
        (window_shape,)
    axes = tuple(range(a.ndim)) if axis is None else (
        tuple(axis) if isinstance(axis, (tuple, list)) else (axis,))
    axes = tuple(ax % a.ndim for ax in axes)
    if len(axes) != len(windows) or len(set(axes)) != len(axes):
        raise UserError("sliding_window_view: one window size per distinct axis is supported "
                        "while tracing%s" % where(user_frame(2)))
    out = a
    for ax, w in zip(axes, windows):
        n = out.shape[ax] - w + 1
        t.env.check(R.ge(to_expr(n), 1), None, "window shape cannot be larger than input "
                    "array shape", user_frame(2))
        idx = np.reshape(np.arange(n, like=a), (n, 1)) + np.reshape(np.arange(w, like=a),
                                                                     (1, w))
        out = np.moveaxis(np.take(out, idx, axis=ax), ax + 1, -1)
    out = np.copy(out)
    out.readonly = "the sliding_window_view view"
    return out


SIZE_FUNCTIONS.append(np.lib.stride_tricks.as_strided)
METHOD_OPS["flags"] = flags_of
