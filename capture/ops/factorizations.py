"""``np.linalg`` factorizations and solvers, and ``np.fft``: one table row per function.

NumPy computes these in compiled gufuncs, so tracing through its Python code cannot work;
each row states the function's *core signature* (``(m,m),(m,n)->(m,n)``) over the last axes,
leading axes broadcast as batch axes exactly as NumPy's gufuncs do.  A letter used twice
must name equal sizes: that equality is the guard (``inv`` of a non-square matrix fails in
eager NumPy too).  The generated code calls the same NumPy function, so values are NumPy's.

Not here, on purpose: ``np.linalg.eig`` / ``eigvals`` (their output dtype is complex or real
depending on the values), ``lstsq`` and ``matrix_rank`` (data-dependent ranks).
"""
from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from symshape.errors import UserError, where
from symshape.algebra.expr import smin
from symshape.sizes.symint import SymInt, describe
from symshape.userframe import user_frame

from ..tracer import TracedArray, Tracer, implements, shape_repr, to_expr
from .elementwise import broadcast_shapes
from .registry import defop


class Core(NamedTuple):
    """A function's core signature: per input the letters of its core axes, per output."""
    inputs: Tuple[str, ...]
    outputs: Tuple[str, ...]


def parse_core(sig: str) -> Core:
    """``"(m,m),(m,n)->(m,n)"`` -> Core(("mm", "mn"), ("mn",)); ``()`` is a scalar."""
    def side(text: str) -> Tuple[str, ...]:
        return tuple(part.strip("()").replace(",", "") for part in
                     text.replace("),(", ")|(").split("|"))
    ins, outs = sig.split("->")
    return Core(side(ins), side(outs))


def _float_dtype(x: TracedArray, what: str) -> np.dtype:
    """NumPy's linalg result dtype: float32 / complex64 stay, other inputs become float64."""
    k = x.dtype.kind
    if k in "fc":
        if x.dtype.itemsize < 4 or (k == "c" and x.dtype.itemsize < 8):
            raise UserError("%s of %s arrays is not supported by NumPy%s" % (what, x.dtype,
                                                                           where(user_frame(4))))
        return x.dtype
    if k in "biu":
        return np.dtype(np.float64)
    raise UserError("%s takes numeric arrays, got %s%s" % (what, x.dtype, where(user_frame(4))))


def core_shapes(core: Core, arrays: List[TracedArray], what: str,
                extra: Optional[Dict[str, object]] = None) -> List[tuple]:
    """Output shapes: batch axes broadcast, each core letter bound once (equal sizes are
    guards).  ``extra`` gives letters computed from the others (``k = min(m, n)``)."""
    sizes: Dict[str, object] = {}
    batches = []
    for x, letters in zip(arrays, core.inputs):
        n = len(letters)
        if x.ndim < n:
            raise UserError("%s needs at least %d dimensions, got shape %s%s"
                            % (what, n, shape_repr(x.shape), where(user_frame(4))))
        batches.append(x.shape[:x.ndim - n])
        for letter, s in zip(letters, x.shape[x.ndim - n:]):
            if letter not in sizes:
                sizes[letter] = s
            elif not (sizes[letter] == s):
                raise UserError("%s: sizes that must be equal differ (%s and %s) in shapes %s%s"
                                % (what, describe(sizes[letter]), describe(s),
                                   " and ".join(shape_repr(a.shape) for a in arrays),
                                   where(user_frame(4))))
    batch = broadcast_shapes(batches, "%s batch dimensions" % what)
    for letter, fn in (extra or {}).items():
        sizes[letter] = fn(sizes)
    return [tuple(batch) + tuple(sizes[c] for c in letters) for letters in core.outputs]


def minimum(a, b):
    """``min(m, n)`` of two sizes as a size expression, with no guard on which is smaller."""
    if type(a) is int and type(b) is int:
        return min(a, b)
    env = (a if type(a) is SymInt else b).env
    e = env.simplify(smin(to_expr(a), to_expr(b)))
    return e if type(e) is int else SymInt(e, None, env)


def _emit_multi(t: Tracer, op: str, inputs: tuple, attrs: dict, shapes: List[tuple],
                dtypes: List[np.dtype], result: Optional[type] = None):
    """One node per output; ``result``: NumPy's named-tuple type of the result
    (``EighResult``), so the program reads ``.eigenvalues`` as in eager code."""
    if len(shapes) == 1:
        return t.emit(op, inputs, attrs, shapes[0], dtypes[0])
    whole = t.emit(op, inputs, attrs, (len(shapes),), np.dtype(object))
    parts = tuple(t.emit("tuple_get", (whole.node,), {"index": i}, s, d, name="getitem")
                  for i, (s, d) in enumerate(zip(shapes, dtypes)))
    return result(*parts) if result is not None else parts


def result_type(func: Callable, *args) -> Optional[type]:
    """The named-tuple type NumPy's ``func`` returns (None for a plain tuple)."""
    out = func(*args)
    t = type(out)
    return t if isinstance(out, tuple) and t is not tuple and hasattr(t, "_fields") else None


class Row(NamedTuple):
    """One function: its op name, core signature, generated call, and output dtype rule
    (None: the floating dtype of the first input for every output)."""
    func: Callable
    op: str
    core: str
    call: str
    dtypes: Optional[Callable] = None


def _real_of(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt == np.complex64 else \
        np.dtype(np.float64) if dt.kind == "c" else dt


_LINALG = [
    Row(np.linalg.inv, "linalg_inv", "(m,m)->(m,m)", "np.linalg.inv({0})"),
    Row(np.linalg.pinv, "linalg_pinv", "(m,n)->(n,m)", "np.linalg.pinv({0})"),
    Row(np.linalg.det, "linalg_det", "(m,m)->()", "np.linalg.det({0})"),
    Row(np.linalg.cholesky, "linalg_cholesky", "(m,m)->(m,m)", "np.linalg.cholesky({0})"),
    Row(np.linalg.eigvalsh, "linalg_eigvalsh", "(m,m)->(m)", "np.linalg.eigvalsh({0})",
        lambda dt: [_real_of(dt)]),
    Row(np.linalg.eigh, "linalg_eigh", "(m,m)->(m),(m,m)", "tuple(np.linalg.eigh({0}))",
        lambda dt: [_real_of(dt), dt]),
    Row(np.linalg.slogdet, "linalg_slogdet", "(m,m)->(),()", "tuple(np.linalg.slogdet({0}))",
        lambda dt: [dt, _real_of(dt)]),
]

for _row in _LINALG:
    defop(_row.op, _row.call, doc="np.linalg.%s (core signature %s)" % (_row.func.__name__,
                                                                      _row.core))


def _linalg_handler(row: Row):
    core = parse_core(row.core)
    what = "np.linalg.%s" % row.func.__name__

    def handler(t, a, *args, **kwargs):
        if args or any(v is not None and k != "UPLO" for k, v in kwargs.items()):
            raise UserError("%s with extra arguments is not supported while tracing%s"
                            % (what, where(user_frame(2))))
        if kwargs.get("UPLO", "L") != "L":
            raise UserError("%s(UPLO='U') is not supported while tracing%s"
                            % (what, where(user_frame(2))))
        x = t.operand(a)
        dt = _float_dtype(x, what)
        shapes = core_shapes(core, [x], what)
        dtypes = row.dtypes(dt) if row.dtypes else [dt] * len(shapes)
        return _emit_multi(t, row.op, (x.node,), {}, shapes, dtypes, named)
    named = result_type(row.func, np.eye(2))
    handler.__name__ = "_" + row.op
    return handler


for _row in _LINALG:
    implements(_row.func)(_linalg_handler(_row))


defop("linalg_solve", "np.linalg.solve({0}, {1})", doc="np.linalg.solve")
defop("linalg_svd", "tuple(np.linalg.svd({0}, full_matrices={full_matrices}))",
      doc="np.linalg.svd (reduced or full)")
defop("linalg_svdvals", "np.linalg.svd({0}, compute_uv=False)", doc="singular values")
defop("linalg_qr", "tuple(np.linalg.qr({0}))", doc="np.linalg.qr, reduced")


@implements(np.linalg.solve)
def _solve(t, a, b):
    x, y = t.operand(a), t.operand(b)
    what = "np.linalg.solve"
    dt = np.result_type(_float_dtype(x, what), _float_dtype(y, what))
    # NumPy 2: b is a vector only when it is 1-D; else a stack of (m, n) matrices
    core = parse_core("(m,m),(m)->(m)" if y.ndim == 1 else "(m,m),(m,n)->(m,n)")
    return t.emit("linalg_solve", (x.node, y.node), {}, core_shapes(core, [x, y], what)[0], dt)


_SVD = result_type(np.linalg.svd, np.eye(2))
_QR = result_type(np.linalg.qr, np.eye(2))


@implements(np.linalg.svd)
def _svd(t, a, full_matrices=True, compute_uv=True, hermitian=False):
    x = t.operand(a)
    what = "np.linalg.svd"
    dt = _float_dtype(x, what)
    if hermitian:
        raise UserError("np.linalg.svd(hermitian=True) is not supported while tracing%s"
                        % where(user_frame(2)))
    k = {"k": lambda s: minimum(s["m"], s["n"])}
    if not compute_uv:
        shape = core_shapes(parse_core("(m,n)->(k)"), [x], what, k)[0]
        return t.emit("linalg_svdvals", (x.node,), {}, shape, _real_of(dt))
    sig = "(m,n)->(m,m),(k),(n,n)" if full_matrices else "(m,n)->(m,k),(k),(k,n)"
    shapes = core_shapes(parse_core(sig), [x], what, k)
    return _emit_multi(t, "linalg_svd", (x.node,), {"full_matrices": bool(full_matrices)},
                       shapes, [dt, _real_of(dt), dt], _SVD)


@implements(np.linalg.qr)
def _qr(t, a, mode="reduced"):
    x = t.operand(a)
    what = "np.linalg.qr"
    if mode != "reduced":
        raise UserError("np.linalg.qr(mode=%r) is not supported while tracing (mode='reduced' "
                        "is)%s" % (mode, where(user_frame(2))))
    shapes = core_shapes(parse_core("(m,n)->(m,k),(k,n)"), [x], what,
                         {"k": lambda s: minimum(s["m"], s["n"])})
    dt = _float_dtype(x, what)
    return _emit_multi(t, "linalg_qr", (x.node,), {}, shapes, [dt, dt], _QR)


# --------------------------------------------------------------------------- np.fft
_FFT_KINDS = {"fft": "c", "ifft": "c", "rfft": "r", "irfft": "ir", "hfft": "ir", "ihfft": "r"}

for _kind in _FFT_KINDS:
    defop("fft_" + _kind, "np.fft.%s({0}, n={n}, axis={axis}, norm={norm})" % _kind,
          doc="np.fft.%s along one axis" % _kind)


def _fft_handler(kind: str):
    def handler(t, a, n=None, axis=-1, norm=None, out=None):
        what = "np.fft.%s" % kind
        if out is not None:
            raise UserError("%s(out=...) is not supported while tracing%s"
                            % (what, where(user_frame(2))))
        x = t.operand(a)
        if x.ndim == 0:
            raise UserError("%s needs an array with at least one dimension%s"
                            % (what, where(user_frame(2))))
        ax = axis + x.ndim if axis < 0 else axis
        if not 0 <= ax < x.ndim:
            raise UserError("%s: axis %d is out of range for shape %s%s"
                            % (what, axis, shape_repr(x.shape), where(user_frame(2))))
        length = x.shape[ax] if n is None else n
        form = _FFT_KINDS[kind]
        single = x.dtype in (np.float32, np.complex64)
        cdt = np.dtype(np.complex64 if single else np.complex128)
        rdt = np.dtype(np.float32 if single else np.float64)
        if form == "r":
            size, dt = length // 2 + 1, cdt
        elif form == "ir":
            size = 2 * (length - 1) if n is None else n
            dt = rdt
        else:
            size, dt = length, cdt
        if not (size >= 1):
            raise UserError("%s: the transform length must be at least 1, got %s%s"
                            % (what, size, where(user_frame(2))))
        shape = x.shape[:ax] + (size,) + x.shape[ax + 1:]
        return t.emit("fft_" + kind, (x.node,), {"n": None if n is None else to_expr(n),
                                                 "axis": ax, "norm": norm}, shape, dt)
    handler.__name__ = "_" + kind
    return handler


for _kind in _FFT_KINDS:
    implements(getattr(np.fft, _kind))(_fft_handler(_kind))


# --------------------------------------------------------------------------- C routines
defop("searchsorted", "np.searchsorted({0}, {1}, side={side})",
      doc="insertion indices into a sorted 1-D array")
defop("interp", "np.interp({0}, {1}, {2})", doc="piecewise-linear interpolation")
defop("convolve", "np.convolve({0}, {1}, mode={mode})", doc="1-D discrete convolution")


@implements(np.searchsorted)
def _searchsorted(t, a, v, side="left", sorter=None):
    if sorter is not None:
        raise UserError("np.searchsorted(sorter=...) is not supported while tracing%s"
                        % where(user_frame(2)))
    x, y = t.operand(a), t.operand(v)
    if x.ndim != 1:
        raise UserError("np.searchsorted needs a 1-D sorted array, got shape %s%s"
                        % (shape_repr(x.shape), where(user_frame(2))))
    return t.emit("searchsorted", (x.node, y.node), {"side": side}, y.shape,
                  np.dtype(np.intp))


@implements(np.interp)
def _interp(t, x, xp, fp, left=None, right=None, period=None):
    if left is not None or right is not None or period is not None:
        raise UserError("np.interp(left=, right=, period=) is not supported while tracing%s"
                        % where(user_frame(2)))
    a, b, c = t.operand(x), t.operand(xp), t.operand(fp)
    if b.ndim != 1 or c.ndim != 1 or not (b.shape[0] == c.shape[0]):
        raise UserError("np.interp: xp and fp must be 1-D of one length, got shapes %s and "
                        "%s%s" % (shape_repr(b.shape), shape_repr(c.shape),
                                  where(user_frame(2))))
    dt = np.dtype(np.complex128) if c.dtype.kind == "c" else np.dtype(np.float64)
    return t.emit("interp", (a.node, b.node, c.node), {}, a.shape, dt)


@implements(np.convolve)
def _convolve(t, a, v, mode="full"):
    x, y = t.operand(a), t.operand(v)
    if x.ndim != 1 or y.ndim != 1:
        raise UserError("np.convolve takes 1-D arrays, got shapes %s and %s%s"
                        % (shape_repr(x.shape), shape_repr(y.shape), where(user_frame(2))))
    n, m = x.shape[0], y.shape[0]
    if not (n >= 1) or not (m >= 1):
        raise UserError("np.convolve of an empty array%s" % where(user_frame(2)))
    if mode == "full":
        size = n + m - 1
    elif mode == "same":
        size = n - minimum(n, m) + m
    elif mode == "valid":
        size = n + m - 2 * minimum(n, m) + 1
    else:
        raise UserError("np.convolve mode must be 'full', 'same' or 'valid', got %r%s"
                        % (mode, where(user_frame(2))))
    dt = np.result_type(x.dtype, y.dtype)
    return t.emit("convolve", (x.node, y.node), {"mode": mode}, (size,), dt)
