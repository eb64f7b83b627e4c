"""Array memory layout, kept through save and load.

NumPy (and the BLAS under it) may pick a different kernel, and so round differently, for the
same values in another layout: a transposed slice of a weight (``W1[:3, :4].T``) multiplied
by an input is not always bit-identical to the same product with a contiguous copy.  A lifted
constant therefore keeps its layout: the saved bytes are the smallest buffer that covers
the view, with the view's element strides and its data pointer's offset within a 64-byte
line, so the loaded array is laid out exactly as the one that was exported.  An archive
(archive.py) places those bytes at the same offset modulo 64 in the file, so an array that
is memory-mapped rather than read keeps the layout too.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np

ALIGN = 64
# a view whose covering buffer is much larger than its data (``W[::1000]``) is stored
# contiguous instead: its layout costs more disk than it is worth
MAX_COVER_RATIO = 4


def needs_layout(arr: np.ndarray) -> bool:
    """True when a plain C-ordered copy would not reproduce ``arr``'s memory layout."""
    if arr.size == 0:
        return False
    aligned = arr.__array_interface__["data"][0] % ALIGN == 0
    return not (arr.flags.c_contiguous and aligned)


def covering(arr: np.ndarray) -> Optional[Tuple[np.ndarray, list, int]]:
    """(the covering buffer as a 1-D little-endian array, element strides, alignment offset),
    or None when the layout is not worth keeping (negative or non-element strides, a sparse
    view).  The buffer is a view of ``arr``'s memory when that is already little-endian and
    contiguous (no copy of a large weight)."""
    item = arr.itemsize
    if any(s < 0 or s % item for s in arr.strides):
        return None
    strides = [s // item for s in arr.strides]
    n = 1 + sum((d - 1) * s for d, s in zip(arr.shape, strides))
    if n > MAX_COVER_RATIO * max(arr.size, 1) + 64:
        return None
    flat = np.lib.stride_tricks.as_strided(arr, shape=(n,), strides=(item,))
    data = np.ascontiguousarray(flat, dtype=arr.dtype.newbyteorder("<"))
    return data, strides, arr.__array_interface__["data"][0] % ALIGN


def plain(arr: np.ndarray) -> np.ndarray:
    """``arr`` in C order as little-endian data (a view when it already is)."""
    return np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))


def c_strides(shape) -> list:
    """Element strides of a C-ordered array of ``shape``."""
    out, acc = [], 1
    for d in reversed(shape):
        out.insert(0, acc)
        acc *= d
    return out


def rebuild(raw: bytes, dtype: np.dtype, shape: tuple, strides: list, align: int) -> np.ndarray:
    """The array ``covering`` described, at the same alignment offset (a private copy)."""
    buf = np.empty(len(raw) + ALIGN, np.uint8)
    start = (align - buf.__array_interface__["data"][0]) % ALIGN
    buf = buf[start:start + len(raw)]
    buf[...] = np.frombuffer(raw, np.uint8)
    return place(buf, dtype, shape, strides)


def place(buf: np.ndarray, dtype: np.dtype, shape: tuple, strides: list) -> np.ndarray:
    """The array of ``dtype``/``shape``/element ``strides`` over ``buf`` (uint8, the covering
    buffer's little-endian bytes, already at its alignment offset): no copy, except on a
    big-endian machine, where the values are converted to native order."""
    item = dtype.itemsize
    flat = buf.view(dtype.newbyteorder("<"))
    if not flat.dtype.isnative:
        flat = flat.astype(flat.dtype.newbyteorder("="))
    return np.lib.stride_tricks.as_strided(flat, shape=shape,
                                           strides=tuple(s * item for s in strides),
                                           writeable=flat.flags.writeable)


def covered_elements(shape, strides) -> int:
    """How many elements the covering buffer of this layout holds (0 for an empty view)."""
    if math.prod(shape) == 0:
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(shape, strides))
