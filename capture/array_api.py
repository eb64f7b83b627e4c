"""The array API namespace of traced arrays: ``x.__array_namespace__()`` returns this module.

Code written against the Python array API standard (``xp = array_namespace(x)``, then
``xp.permute_dims``, ``xp.concat``, ``xp.astype``, ``xp.vecdot``, ...) traces like NumPy code:
every function here is the standard's name and signature, computed with the NumPy calls the
tracer records (so sizes stay symbolic), and works on plain NumPy arrays too, where it runs
eagerly.  The elementwise functions are the core ufunc ops of the op traits table.
The standard's names shadow Python builtins here (``any``, ``max``, ``bool``, ...): module code
calls the builtins through ``builtins``.
"""
from __future__ import annotations

import builtins
import math
from typing import Optional

import numpy as np

from symshape.errors import UserError

from .ops.elementwise import broadcast_shapes
from .tracer import METHOD_OPS
from .ops import traits as _op_traits

__array_api_version__ = "2023.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12")

# --------------------------------------------------------------------------- dtypes
bool = np.bool_      # noqa: A001  (the standard's name)
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float32, float64 = np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128

e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None

CPU = "cpu"          # the one device: the host, like NumPy's own namespace


def _check_device(device, where: str) -> None:
    if device is not None and device != CPU:
        raise UserError("%s: device=%r is not available; traced arrays live on %r"
                        % (where, device, CPU))


def _dt(dtype):
    return None if dtype is None else np.dtype(dtype)


# --------------------------------------------------------------------------- elementwise
def _elementwise(name: str, np_name: str):
    # the standard's positional-only signature: (x, /) or (x1, x2, /)
    if getattr(np, np_name).nin == 1:
        def fn(x, /):
            return getattr(np, np_name)(x)
    else:
        def fn(x1, x2, /):
            return getattr(np, np_name)(x1, x2)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "The array API's ``%s`` (NumPy's ``np.%s``)." % (name, np_name)
    return fn


# the standard's elementwise functions are the core set's ufunc ops (op traits table)
for _t in _op_traits.TRAITS.values():
    if _t.is_core and _t.ufunc is not None:
        globals()[_t.name] = _elementwise(_t.name, _t.ufunc.__name__)
del _t


def real(x):
    """Real part (``np.real``)."""
    return np.real(x) if _is_complex(x) else x


def imag(x):
    """Imaginary part (``np.imag``)."""
    return np.imag(x)


def round(x):          # noqa: A001
    """Round half to even."""
    return np.round(x)


def clip(x, /, min=None, max=None):     # noqa: A002
    """Clamp to ``[min, max]``; either bound may be omitted (then it does not apply)."""
    if min is None and max is None:
        return x
    out = np.clip(x, min, max)
    return out if out.dtype == x.dtype else astype(out, x.dtype)


def _is_complex(x) -> bool:
    return np.dtype(getattr(x, "dtype", np.float64)).kind == "c"


# --------------------------------------------------------------------------- creation
def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """``np.arange``; symbolic bounds stay symbolic."""
    _check_device(device, "arange")
    return np.arange(start, stop, step, dtype=_dt(dtype)) if stop is not None else \
        np.arange(start, step=step, dtype=_dt(dtype)) if step != 1 else \
        np.arange(start, dtype=_dt(dtype))


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """An array from ``obj`` (a traced array stays traced; ``copy=True`` copies)."""
    _check_device(device, "asarray")
    if isinstance(obj, (list, tuple)) and builtins.any(_traced(o) for o in _flat(obj)):
        obj = np.stack([asarray(o) for o in obj])
    if _traced(obj):
        if dtype is not None and np.dtype(dtype) != obj.dtype:
            return obj.astype(dtype)
        return np.copy(obj) if copy else obj
    if copy:
        return np.array(obj, dtype=_dt(dtype))
    return np.asarray(obj, dtype=_dt(dtype))


def _traced(x) -> bool:
    """A traced array (not a NumPy array): NumPy's conversion functions cannot take it."""
    return hasattr(x, "__array_namespace__") and not isinstance(x, (np.ndarray, np.generic))


def _flat(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _flat(x)
    else:
        yield v


def empty(shape, *, dtype=None, device=None):
    """``np.empty``."""
    _check_device(device, "empty")
    return np.empty(shape, dtype=_dt(dtype) or np.float64)


def empty_like(x, /, *, dtype=None, device=None):
    """``np.empty_like``."""
    _check_device(device, "empty_like")
    return np.empty_like(x, dtype=_dt(dtype))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """``np.eye``."""
    _check_device(device, "eye")
    return np.eye(n_rows, n_cols, k=k, dtype=_dt(dtype) or np.float64)


def full(shape, fill_value, *, dtype=None, device=None):
    """``np.full``; without ``dtype`` a Python bool/int/float/complex picks the default."""
    _check_device(device, "full")
    if dtype is None and isinstance(fill_value, (int, float, complex)):
        dtype = _default_dtype(fill_value)
    return np.full(shape, fill_value, dtype=_dt(dtype))


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """``np.full_like``."""
    _check_device(device, "full_like")
    return np.full_like(x, fill_value, dtype=_dt(dtype))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``np.linspace``."""
    _check_device(device, "linspace")
    return np.linspace(start, stop, num, dtype=_dt(dtype), endpoint=endpoint)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate matrices from 1-d arrays (``indexing`` ``"xy"`` or ``"ij"``)."""
    if indexing not in ("xy", "ij"):
        raise UserError("meshgrid: indexing must be 'xy' or 'ij', got %r" % (indexing,))
    n = len(arrays)
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        axis = i
        if indexing == "xy" and n >= 2 and i < 2:
            axis = 1 - i
        shape = [1] * n
        shape[axis] = a.shape[0]
        out.append(np.broadcast_to(np.reshape(a, tuple(shape)), tuple(sizes)))
    return out


def ones(shape, *, dtype=None, device=None):
    """``np.ones``."""
    _check_device(device, "ones")
    return np.ones(shape, dtype=_dt(dtype) or np.float64)


def ones_like(x, /, *, dtype=None, device=None):
    """``np.ones_like``."""
    _check_device(device, "ones_like")
    return np.ones_like(x, dtype=_dt(dtype))


def zeros(shape, *, dtype=None, device=None):
    """``np.zeros``."""
    _check_device(device, "zeros")
    return np.zeros(shape, dtype=_dt(dtype) or np.float64)


def zeros_like(x, /, *, dtype=None, device=None):
    """``np.zeros_like``."""
    _check_device(device, "zeros_like")
    return np.zeros_like(x, dtype=_dt(dtype))


def tril(x, /, *, k=0):
    """Lower triangle of the last two axes."""
    return np.tril(x, k)


def triu(x, /, *, k=0):
    """Upper triangle of the last two axes."""
    return np.triu(x, k)


def from_dlpack(x, /, *, device=None, copy=None):
    """``np.from_dlpack``; a traced array is already one of this namespace's arrays."""
    _check_device(device, "from_dlpack")
    if _traced(x):
        return np.copy(x) if copy else x      # already an array of this namespace
    return np.from_dlpack(x)


def _default_dtype(v):
    if isinstance(v, (np.bool_, type(True))):
        return np.bool_
    if isinstance(v, int):
        return np.int64
    if isinstance(v, float):
        return np.float64
    return np.complex128


# --------------------------------------------------------------------------- data types
def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` (a traced conversion; ``copy=False`` may return ``x``)."""
    _check_device(device, "astype")
    if not copy and np.dtype(dtype) == x.dtype:
        return x
    return x.astype(dtype)


def can_cast(from_, to, /):
    """Whether ``from_`` (a dtype or an array) casts to ``to`` under the standard's rules."""
    return np.can_cast(getattr(from_, "dtype", from_), to, casting="same_kind") and \
        _promotes_to(np.dtype(getattr(from_, "dtype", from_)), np.dtype(to))


def _promotes_to(a: np.dtype, b: np.dtype) -> bool:
    return np.promote_types(a, b) == b


def finfo(type, /):        # noqa: A002
    """``np.finfo`` of a dtype or an array's dtype."""
    return np.finfo(getattr(type, "dtype", type))


def iinfo(type, /):        # noqa: A002
    """``np.iinfo`` of a dtype or an array's dtype."""
    return np.iinfo(getattr(type, "dtype", type))


# dtype kind names of the standard -> the NumPy kind letters they cover
_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name, or a tuple of them."""
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    dtype = np.dtype(dtype)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise UserError("isdtype: unknown kind %r; the kinds are %s"
                            % (kind, ", ".join(_KINDS)))
        return dtype.kind in _KINDS[kind]
    return dtype == np.dtype(kind)


def result_type(*arrays_and_dtypes):
    """The promoted dtype (arrays count by their dtype; Python scalars are weak)."""
    return np.result_type(*[a.dtype if hasattr(a, "dtype") and not isinstance(a, np.dtype)
                            and not isinstance(a, type) else a for a in arrays_and_dtypes])


# --------------------------------------------------------------------------- indexing
def take(x, indices, /, *, axis=None):
    """``np.take`` (``axis`` may be omitted for a 1-d ``x``)."""
    if axis is None and x.ndim != 1:
        raise UserError("take: axis is required for a %d-d array" % x.ndim)
    return np.take(x, indices, axis=0 if axis is None else axis)


def take_along_axis(x, indices, /, *, axis=-1):
    """``np.take_along_axis``."""
    return np.take_along_axis(x, indices, axis=axis)


# --------------------------------------------------------------------------- linear algebra
def matmul(x1, x2, /):
    """Matrix product (``@``)."""
    return np.matmul(x1, x2)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    if x.ndim < 2:
        raise UserError("matrix_transpose needs an array with at least 2 axes, got %d-d"
                        % x.ndim)
    return np.swapaxes(x, -1, -2)


def tensordot(x1, x2, /, *, axes=2):
    """``np.tensordot`` (with 0-d operands and ``axes=0``: their product)."""
    if (x1.ndim == 0 or x2.ndim == 0) and (axes == 0 or axes == ([], [])):
        return np.multiply(x1, x2)
    return np.tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product along ``axis`` after broadcasting (the first argument conjugated)."""
    a = np.conj(x1) if _is_complex(x1) else x1
    # the vectors' axis is moved last first, so inputs of different ranks broadcast as
    # NumPy's own vecdot does
    return np.sum(np.moveaxis(a, axis, -1) * np.moveaxis(x2, axis, -1), axis=-1)


# --------------------------------------------------------------------------- manipulation
def broadcast_arrays(*arrays):
    """Every array broadcast to their common shape."""
    shape = _broadcast_shape([a.shape for a in arrays])
    return [np.broadcast_to(a, shape) for a in arrays]


def _broadcast_shape(shapes) -> tuple:
    return tuple(broadcast_shapes(shapes, "broadcast_arrays: the arrays"))


def broadcast_to(x, /, shape):
    """``np.broadcast_to``."""
    return np.broadcast_to(x, shape)


def concat(arrays, /, *, axis=0):
    """Join along ``axis`` (``None``: flatten each first)."""
    arrays = list(arrays)
    if axis is None:
        return np.concatenate([np.reshape(a, (-1,)) for a in arrays])
    return np.concatenate(arrays, axis=axis)


def expand_dims(x, /, axis=0):
    """Insert an axis of size 1."""
    return np.expand_dims(x, axis)


def flip(x, /, *, axis=None):
    """Reverse along ``axis`` (all axes by default)."""
    return np.flip(x, axis=axis)


def moveaxis(x, source, destination, /):
    """``np.moveaxis``."""
    return np.moveaxis(x, source, destination)


def permute_dims(x, /, axes):
    """Permute the axes (``np.transpose`` with explicit axes)."""
    return np.transpose(x, tuple(axes))


def repeat(x, repeats, /, *, axis=None):
    """``np.repeat`` (``axis=None`` flattens first)."""
    return np.repeat(x, repeats, axis=axis)


def reshape(x, /, shape, *, copy=None):
    """``np.reshape``."""
    return np.reshape(x, tuple(shape))


def roll(x, /, shift, *, axis=None):
    """``np.roll``."""
    return np.roll(x, shift, axis=axis)


def squeeze(x, /, axis):
    """Remove the given size-1 axes."""
    return np.squeeze(x, axis=axis)


def stack(arrays, /, *, axis=0):
    """Join along a new axis."""
    return np.stack(list(arrays), axis=axis)


def tile(x, repetitions, /):
    """``np.tile``."""
    return np.tile(x, repetitions)


def unstack(x, /, *, axis=0):
    """The slices along ``axis``, as a tuple (its length is a Python int, so a symbolic
    size there is specialised)."""
    moved = np.moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(moved.shape[0]))


# --------------------------------------------------------------------------- searching
def argmax(x, /, *, axis=None, keepdims=False):
    """Index of the maximum."""
    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    """Index of the minimum."""
    return np.argmin(x, axis=axis, keepdims=keepdims)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """Number of non-zero elements."""
    return np.count_nonzero(x, axis=axis, keepdims=keepdims)


def nonzero(x, /):
    """Indices of the non-zero elements (data-dependent sizes)."""
    return np.nonzero(x)


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Insertion points of ``x2`` in the sorted 1-d ``x1``: the number of elements of
    ``x1`` below (``side="left"``) or not above (``"right"``) each value."""
    if side not in ("left", "right"):
        raise UserError("searchsorted: side must be 'left' or 'right', got %r" % (side,))
    if sorter is not None:
        x1 = np.take(x1, sorter)
    below = np.less if side == "left" else np.less_equal
    hits = below(x1, np.expand_dims(x2, -1))
    return np.sum(hits, axis=-1, dtype=np.int64)


def where(condition, x1, x2, /):
    """Select from ``x1`` where ``condition``, else ``x2``."""
    return np.where(condition, x1, x2)


# --------------------------------------------------------------------------- sets
def unique_values(x, /):
    """The distinct values, sorted."""
    return np.unique(np.reshape(x, (-1,)))


def unique_counts(x, /):
    """(values, counts)."""
    values, counts = np.unique(np.reshape(x, (-1,)), return_counts=True)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /):
    """(values, inverse indices shaped like ``x``)."""
    values, inverse = np.unique(np.reshape(x, (-1,)), return_inverse=True)
    return UniqueInverseResult(values, np.reshape(inverse, x.shape))


def unique_all(x, /):
    """(values, first indices, inverse indices shaped like ``x``, counts)."""
    values, index, inverse, counts = np.unique(np.reshape(x, (-1,)), return_index=True,
                                               return_inverse=True, return_counts=True)
    return UniqueAllResult(values, index, np.reshape(inverse, x.shape), counts)


class UniqueCountsResult(tuple):
    """``(values, counts)`` with those names as attributes."""

    def __new__(cls, values, counts):
        return super().__new__(cls, (values, counts))

    values = property(lambda self: self[0])
    counts = property(lambda self: self[1])


class UniqueInverseResult(tuple):
    """``(values, inverse_indices)`` with those names as attributes."""

    def __new__(cls, values, inverse_indices):
        return super().__new__(cls, (values, inverse_indices))

    values = property(lambda self: self[0])
    inverse_indices = property(lambda self: self[1])


class UniqueAllResult(tuple):
    """``(values, indices, inverse_indices, counts)`` with those names as attributes."""

    def __new__(cls, values, indices, inverse_indices, counts):
        return super().__new__(cls, (values, indices, inverse_indices, counts))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])
    inverse_indices = property(lambda self: self[2])
    counts = property(lambda self: self[3])


# --------------------------------------------------------------------------- sorting
def sort(x, /, *, axis=-1, descending=False, stable=True):
    """Sorted copy; ``descending`` keeps equal elements in their original order."""
    if not descending:
        return np.sort(x, axis=axis, kind="stable")
    return np.flip(np.sort(np.flip(x, axis=axis), axis=axis, kind="stable"), axis=axis)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices that sort ``x``; ``descending`` keeps equal elements in their original
    order."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(flipped, axis=axis)


# --------------------------------------------------------------------------- statistics
def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sum along ``axis`` (optional for 1-d); ``include_initial`` prepends 0."""
    return _cumulative(np.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running product along ``axis`` (optional for 1-d); ``include_initial`` prepends 1."""
    return _cumulative(np.cumprod, 1, x, axis, dtype, include_initial)


def _cumulative(fn, initial, x, axis, dtype, include_initial):
    if axis is None:
        if x.ndim != 1:
            raise UserError("%s: axis is required for a %d-d array"
                            % (fn.__name__, x.ndim))
        axis = 0
    out = fn(x, axis=axis, dtype=_dt(dtype))
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        first = np.full(tuple(shape), initial, dtype=out.dtype)
        out = np.concatenate([first, out], axis=axis)
    return out


def max(x, /, *, axis=None, keepdims=False):       # noqa: A001
    """Maximum along ``axis``."""
    return np.max(x, axis=_axis(axis), keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):       # noqa: A001
    """Minimum along ``axis``."""
    return np.min(x, axis=_axis(axis), keepdims=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean along ``axis``."""
    return np.mean(x, axis=_axis(axis), keepdims=keepdims)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product along ``axis``."""
    return np.prod(x, axis=_axis(axis), dtype=_dt(dtype), keepdims=keepdims)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):      # noqa: A001
    """Sum along ``axis``."""
    return np.sum(x, axis=_axis(axis), dtype=_dt(dtype), keepdims=keepdims)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Standard deviation with ``correction`` degrees of freedom removed."""
    return np.std(x, axis=_axis(axis), ddof=correction, keepdims=keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance with ``correction`` degrees of freedom removed."""
    return np.var(x, axis=_axis(axis), ddof=correction, keepdims=keepdims)


# --------------------------------------------------------------------------- utility
def all(x, /, *, axis=None, keepdims=False):       # noqa: A001
    """Whether every element along ``axis`` is true."""
    return np.all(x, axis=_axis(axis), keepdims=keepdims)


def any(x, /, *, axis=None, keepdims=False):       # noqa: A001
    """Whether some element along ``axis`` is true."""
    return np.any(x, axis=_axis(axis), keepdims=keepdims)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """n-th discrete difference along ``axis``."""
    kw = {}
    if prepend is not None:
        kw["prepend"] = prepend
    if append is not None:
        kw["append"] = append
    return np.diff(x, n=n, axis=axis, **kw)


# --------------------------------------------------------------------------- extensions
class _Linalg:
    """The ``linalg`` extension, for the functions the tracer records."""

    matmul = staticmethod(matmul)
    matrix_transpose = staticmethod(matrix_transpose)
    tensordot = staticmethod(tensordot)
    vecdot = staticmethod(vecdot)

    @staticmethod
    def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):       # noqa: A002
        """Vector norm over ``axis`` (all axes by default)."""
        if axis is None:
            x, axis = np.reshape(x, (-1,)), 0
            if keepdims:
                raise UserError("linalg.vector_norm: keepdims=True needs an explicit axis "
                                "here")
        return np.linalg.norm(x, ord=ord, axis=_axis(axis), keepdims=keepdims)

    @staticmethod
    def outer(x1, x2, /):
        """Outer product of two 1-d arrays."""
        return np.outer(x1, x2)

    @staticmethod
    def trace(x, /, *, offset=0, dtype=None):
        """Sum of the diagonal of the last two axes."""
        n, m = x.shape[-2], x.shape[-1]
        mask = np.eye(n, m, k=offset, dtype=np.bool_)
        return np.sum(np.where(mask, x, 0), axis=(-2, -1), dtype=_dt(dtype))


linalg = _Linalg()


# --------------------------------------------------------------------------- inspection
class _Info:
    """``__array_namespace_info__()``: devices and default dtypes."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self):
        return CPU

    def devices(self):
        return [CPU]

    def default_dtypes(self, *, device=None):
        _check_device(device, "default_dtypes")
        return {"real floating": np.dtype(np.float64), "complex floating":
                np.dtype(np.complex128), "integral": np.dtype(np.int64),
                "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None):
        _check_device(device, "dtypes")
        names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128"]
        return {n: np.dtype(n) for n in names if kind is None or isdtype(np.dtype(n), kind)}


def __array_namespace_info__():
    """Inspection of this namespace (devices, default dtypes)."""
    return _Info()


def namespace_for(api_version: Optional[str]):
    """This module, after checking that ``api_version`` is one it implements."""
    if api_version is not None and api_version not in SUPPORTED_VERSIONS:
        raise UserError("array API version %r is not supported by traced arrays; supported: "
                        "%s" % (api_version, ", ".join(SUPPORTED_VERSIONS)))
    import sys
    return sys.modules[__name__]


METHOD_OPS["namespace"] = namespace_for
