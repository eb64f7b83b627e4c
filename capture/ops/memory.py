"""What library code asks about an array's memory, answered for traced arrays: ``flags``,
``np.may_share_memory`` / ``np.shares_memory``, and ``np.unravel_index`` (flat positions
back to indices, with NumPy's bounds check kept as a run-time check).

Memory answers follow the tracer's view records (``capture.views``): an array the program
computed, or an input, owns its C-contiguous memory (inputs that share memory are refused
when the program runs); a reshape of it is C-contiguous too, a 2-D transpose Fortran-
contiguous.  An answer that depends on where a view's slice lies is not guessed: it is a
``UserError`` naming the line.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symshape import relations as R
from symshape.errors import UserError, where
from symshape.runtime import raise_text
from symshape.symint import SymInt
from symshape.userframe import user_frame

from ..methods import METHOD_OPS
from ..tracer import TracedArray, Tracer, implements, to_expr
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
    if x.view.kind == "permute" and parent[0]:
        flipped = tuple(x.view.arg) == tuple(range(x.ndim))[::-1]
        identity = tuple(x.view.arg) == tuple(range(x.ndim))
        return identity or x.ndim <= 1, flipped or x.ndim <= 1
    return None


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


METHOD_OPS["flags"] = flags_of
