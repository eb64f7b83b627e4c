"""Creation: zeros / ones / empty / full with ``like=`` and the ``*_like`` functions.

``np.zeros((x.shape[0], 3), like=x)`` keeps the size symbolic.  Without ``like=`` NumPy
converts the sizes to ints itself, which specialises them with a logged warning.
"""
from __future__ import annotations

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symfloat import SymFloat
from symshape.algebra import relations as R
from symshape.sizes.symint import SymInt, describe, sym_ceildiv, sym_max
from symshape.userframe import user_frame
from symshape.rules import rule

from ..tracer import FUNCTIONS, TracedArray, Tracer, holds_traced, implements, to_expr
from .registry import defop
from .elementwise import astype

for _n in ("zeros", "ones", "empty"):
    defop(_n, "np.%s({shape}, dtype={dtype})" % _n, doc="np.%s of a shape" % _n)
defop("full", "np.full({shape}, {0}, dtype={dtype})", doc="np.full of a shape")


def nonnegative(s, what: str, frame=None):
    """A size a creation function receives must not be negative (NumPy raises
    ``ValueError`` there): for a symbolic size that is a guard ``s >= 0`` of the program, so
    the contract admits only inputs for which eager NumPy accepts the call."""
    if type(s) is SymInt:
        frame = frame or user_frame(3)
        if not s.env.evaluate(R.ge(s.expr, 0), None, frame):
            raise UserError("%s: the size %s is negative for the example inputs (NumPy raises "
                            "'negative dimensions are not allowed')%s"
                            % (what, describe(s), where(frame)))
    elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s < 0:
        raise UserError("%s: negative dimensions are not allowed (got %d)%s"
                        % (what, s, where(frame or user_frame(3))))
    return s


def _shape(t: Tracer, shape, what: str = "creating an array") -> tuple:
    sizes = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    t.env.cancel_pending([to_expr(s) for s in sizes])
    t.env.commit_pending()
    out = []
    for s in sizes:
        if type(s) is SymInt:
            out.append(nonnegative(s, what, user_frame(3)))
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            if s < 0:
                raise UserError("negative dimensions are not allowed%s" % where(user_frame(3)))
            out.append(int(s))
        else:
            raise UserError("a shape must hold ints or sizes, got %r%s"
                            % (s, where(user_frame(3))))
    return tuple(out)


def _fill(name):
    def handler(t, shape, dtype=None, order="C", *, device=None, like=None):
        sh = _shape(t, shape, "np." + name)
        dt = np.dtype(float if dtype is None else dtype)
        return t.emit(name, (), {"shape": tuple(map(to_expr, sh)), "dtype": dt}, sh, dt)
    return handler


implements(np.zeros)(_fill("zeros"))
implements(np.ones)(_fill("ones"))
implements(np.empty)(_fill("empty"))
for _f in (np.zeros, np.ones, np.empty):
    FUNCTIONS[_f].takes_sizes = True


@implements(np.full)
def _full(t, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    sh = _shape(t, shape, "np.full")
    v = t.operand(fill_value)
    if type(v) is TracedArray:
        raise UserError("np.full with a traced fill value is not supported; use "
                        "np.broadcast_to(value, shape) or value * np.ones(shape, like=x)%s"
                        % where(user_frame(2)))
    dt = np.dtype(dtype) if dtype is not None else np.array(fill_value).dtype
    return t.emit("full", (to_expr(v),), {"shape": tuple(map(to_expr, sh)), "dtype": dt}, sh, dt)


def _like(name):
    def handler(t, prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
        x = t.operand(prototype)
        sh = x.shape if shape is None else _shape(t, shape, "np.%s_like" % name)
        dt = x.dtype if dtype is None else np.dtype(dtype)
        return t.emit(name, (), {"shape": tuple(map(to_expr, sh)), "dtype": dt}, sh, dt)
    return handler


implements(np.zeros_like)(_like("zeros"))
implements(np.ones_like)(_like("ones"))
implements(np.empty_like)(_like("empty"))


@implements(np.full_like)
def _full_like(t, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    x = t.operand(a)
    sh = x.shape if shape is None else _shape(t, shape, "np.full_like")
    dt = x.dtype if dtype is None else np.dtype(dtype)
    fill = t.operand(fill_value)
    if type(fill) is TracedArray:              # an array of values: broadcast, then cast
        return np.broadcast_to(fill, sh).astype(dt)
    return t.emit("full", (to_expr(fill),),
                  {"shape": tuple(map(to_expr, sh)), "dtype": dt}, sh, dt)


defop("arange", "np.arange({start}, {stop}, {step}, dtype={dtype})", doc="np.arange")


@rule("arange.length")
@implements(np.arange)
def _arange(t, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    args = [a for a in (start, stop, step) if a is not None]
    t.env.cancel_pending([to_expr(a) for a in args])
    t.env.commit_pending()
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    for v in (start, stop, step):
        if not (type(v) is SymInt or isinstance(v, (int, np.integer))) or isinstance(v, bool):
            raise UserError("np.arange while tracing takes int or size arguments, got %r%s"
                            % (v, where(user_frame(2))))
    if type(step) is SymInt:
        step = int(step)
    step = int(step)
    if step == 0:
        raise UserError("np.arange: step must not be zero%s" % where(user_frame(2)))
    span = stop - start
    n = sym_ceildiv(span, step)
    n = sym_max(n, 0) if type(n) is SymInt else max(n, 0)
    dt = np.dtype(dtype) if dtype is not None else np.arange(1).dtype
    return t.emit("arange", (), {"start": to_expr(start), "stop": to_expr(stop),
                                 "step": step, "dtype": dt}, (n,), dt)


for _f in (np.zeros, np.ones, np.empty, np.full, np.arange):
    FUNCTIONS[_f].takes_sizes = True


defop("eye", "np.eye({N}, {M}, k={k}, dtype={dtype})", doc="identity-like matrix")


def index_arange(t, n):
    """The traced ``np.arange(n)`` of a size ``n``: the indices ``0 .. n-1`` (for ops that
    build index arrays)."""
    return _arange(t, n)


@implements(np.eye)
def _eye(t, N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    sizes = [v for v in (N, M) if v is not None]
    t.env.cancel_pending([to_expr(v) for v in sizes])
    t.env.commit_pending()
    M = N if M is None else M
    for v in (N, M):
        nonnegative(v, "np.eye")
    dt = np.dtype(dtype)
    return t.emit("eye", (), {"N": to_expr(N), "M": to_expr(M), "k": int(k), "dtype": dt},
                  (N, M), dt)


FUNCTIONS[np.eye].takes_sizes = True


def _has_size(a) -> bool:
    if type(a) is SymInt or type(a) is SymFloat:
        return True
    return isinstance(a, (tuple, list)) and any(_has_size(b) for b in a)


def _hints(a):
    if type(a) is SymInt:
        return a.hint if a.hint is not None else 0
    if type(a) is SymFloat:
        return 0.5
    if isinstance(a, (tuple, list)):
        return [_hints(b) for b in a]
    return a


def _sizes_array(t: Tracer, a, dt: np.dtype) -> TracedArray:
    """Sizes used as data (``np.array(n)``, ``np.asarray(x.shape)``): an array of NumPy's
    dtype for the same Python ints, never an object array of symbols."""
    if isinstance(a, (tuple, list)):
        parts = [_sizes_array(t, b, dt) for b in a]
        if not parts:
            return t.constant(np.zeros((0,), dt))
        return np.stack(parts)
    if type(a) is TracedArray:
        return a if a.dtype == dt else astype(t, a, dt)
    v = t.operand(a)
    return t.emit("full", (to_expr(v),), {"shape": (), "dtype": dt}, (), dt)


def _as_traced(t, a, dtype, copy: bool):
    if type(a) is TracedArray:
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return astype(t, a, dtype)
        return t.emit("copy", (a.node,), {}, a.shape, a.dtype) if copy else a
    if _has_size(a):
        dt = np.dtype(dtype) if dtype is not None else np.asarray(_hints(a)).dtype
        return _sizes_array(t, a, dt)
    if isinstance(a, (tuple, list)) and holds_traced(a):
        out = t.stack_list(a)
        return out if dtype is None else _as_traced(t, out, dtype, False)
    arr = np.asarray(a, dtype=dtype)
    if arr.dtype == object:
        raise UserError("np.asarray of a mix of traced and plain values is not supported; "
                        "use np.stack%s" % where(user_frame(3)))
    return t.constant(a if isinstance(a, np.ndarray) and dtype is None else arr)


@implements(np.asarray, np.asanyarray)
def _asarray(t, a, dtype=None, *args, like=None, **kwargs):
    """``np.asarray(CONST, like=x)``: a NumPy constant as a traced value, so that indexing
    it with sizes (``POS[:x.shape[1]]``) stays symbolic; of a traced value, that value."""
    return _as_traced(t, a, dtype, copy=False)


@implements(np.array)
def _array(t, a, dtype=None, *args, copy=True, like=None, ndmin=0, **kwargs):
    """``np.array`` copies (a later write to the copy must not reach the original);
    ``ndmin`` prepends axes of size 1 (``np.c_`` / ``np.r_`` build their operands so)."""
    out = _as_traced(t, a, dtype, copy=copy is not False)
    if out.ndim < ndmin:
        out = np.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


for _f in (np.asarray, np.asanyarray, np.array):
    FUNCTIONS[_f].takes_sizes = True


# --------------------------------------------------------------------------- triangles
def _sizes_only(t: Tracer, *vals):
    t.env.cancel_pending([to_expr(v) for v in vals if v is not None])
    t.env.commit_pending()


@implements(np.identity)
def _identity(t, n, dtype=None, *, like=None):
    _sizes_only(t, n)
    return _eye(t, n, dtype=float if dtype is None else dtype)


@implements(np.tri)
def _tri(t, N, M=None, k=0, dtype=float, *, like=None):
    """``tri[i, j] = j <= i + k``, from two aranges: symbolic in ``N`` and ``M``."""
    _sizes_only(t, N, M)
    M = N if M is None else M
    rows = _arange(t, N)
    cols = _arange(t, M)
    mask = np.greater_equal(rows[:, None] + int(k), cols[None, :])
    dt = np.dtype(float if dtype is None else dtype)
    return mask if dt == np.bool_ else mask.astype(dt)


@rule("creation.triangle")
def _triangle(lower: bool):
    def handler(t, m, k=0):
        x = t.operand(m)
        if x.ndim < 1:
            raise UserError("np.%s needs an array of at least 1 dimension (NumPy: tri() "
                            "needs N): pass an array of 1 or more dimensions%s"
                            % ("tril" if lower else "triu", where(user_frame(2))))
        # NumPy: mask = tri(*m.shape[-2:], k=k), an (N, N) mask for a 1-D array
        keep = _tri(t, *x.shape[-2:], k=k if lower else k - 1, dtype=bool)
        zero = np.zeros((), dtype=x.dtype)
        # NumPy: tril = where(tri(k), m, 0); triu = where(tri(k - 1), 0, m)
        return np.where(keep, x, zero) if lower else np.where(keep, zero, x)
    return handler


implements(np.tril)(_triangle(True))
implements(np.triu)(_triangle(False))
for _f in (np.identity, np.tri):
    FUNCTIONS[_f].takes_sizes = True


defop("linspace", "np.linspace({start}, {stop}, {num}, endpoint={endpoint}, dtype={dtype})",
      doc="evenly spaced values (a size for num)")


@rule("creation.linspace")
@implements(np.linspace)
def _linspace(t, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
              device=None):
    _sizes_only(t, num)
    for v in (start, stop):
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
            raise UserError("np.linspace while tracing takes scalar start and stop, got %r%s"
                            % (v, where(user_frame(2))))
    if retstep or axis != 0:
        raise UserError("np.linspace with retstep= or axis= is not supported while tracing%s"
                        % where(user_frame(2)))
    nonnegative(num, "np.linspace (num)")
    if type(num) is not SymInt:
        return t.constant(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))
    dt = np.dtype(dtype) if dtype is not None else np.linspace(start, stop, 2).dtype
    return t.emit("linspace", (), {"start": start, "stop": stop, "num": to_expr(num),
                                   "endpoint": bool(endpoint), "dtype": dt}, (num,), dt)


FUNCTIONS[np.linspace].takes_sizes = True
