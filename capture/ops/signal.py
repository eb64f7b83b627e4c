"""Signal processing and sizes used as values, computed by NumPy itself (``ops/npcall.py``):
window functions and ``fftfreq`` / ``rfftfreq`` of a symbolic length, ``fftshift`` /
``ifftshift``, ``correlate``, ``ediff1d``, ``trim_zeros`` (a data-dependent length), the
``poly*`` family, ``geomspace`` / ``logspace`` and ``i0``.

``np.roots`` is refused with its reason: how many roots there are (leading zeros of the
coefficients are dropped) and whether they are complex depend on the values.
"""
from __future__ import annotations

import numpy as np

from symshape.rules import rule
from symshape.errors import UserError, where
from symshape.sizes.symint import SymInt, describe, sym_max
from symshape.userframe import user_frame

from ..tracer import FUNCTIONS, TracedArray, implements
from .elementwise import broadcast_shapes
from .npcall import Args, Call, register, traced_call
from .shape import norm_axis, prod


def _length(a: Args, name: str):
    """A length argument: an int or a size (never an array)."""
    n = a.val(name)
    if type(n) is TracedArray:
        raise a.fail("%s must be an int or a size, not an array" % name)
    if not (type(n) is SymInt or isinstance(n, (int, np.integer))) or isinstance(n, bool):
        raise a.fail("%s should be an integer, got %r" % (name, n))
    return n if type(n) is SymInt else int(n)


def _window(a: Args) -> tuple:
    m = _length(a, "M")
    return (sym_max(m, 0),) if type(m) is SymInt else (max(m, 0),)


def _positive(a: Args, n) -> None:
    if not (n >= 1):
        raise a.fail("n (%s) must be at least 1 (NumPy divides by it)" % describe(n))


def _fftfreq(a: Args) -> tuple:
    n = _length(a, "n")
    _positive(a, n)
    return (n,)


def _rfftfreq(a: Args) -> tuple:
    n = _length(a, "n")
    _positive(a, n)
    return (n // 2 + 1,)


def _same_shape(name: str):
    def rule(a: Args) -> tuple:
        x = a.arr(name)
        return tuple(x.shape) if x is not None else np.shape(a.val(name))
    return rule


def _vector_len(a: Args, name: str):
    x = a.arr(name)
    if x is not None:
        if x.ndim != 1:
            raise a.fail("%s must be one-dimensional, got %d dimensions" % (name, x.ndim))
        return x.shape[0]
    v = np.asarray(a.val(name))
    if v.ndim != 1:
        raise a.fail("%s must be a one-dimensional array while tracing" % name)
    return v.shape[0]


@rule("signal.correlate")
def _correlate(a: Args) -> tuple:
    n, m = _vector_len(a, "a"), _vector_len(a, "v")
    if not (n >= 1) or not (m >= 1):
        raise a.fail("the arrays must not be empty")
    mode = a.val("mode", "valid")
    if mode == "full":
        return (n + m - 1,)
    if mode == "same":
        return (sym_max(n, m),)
    if mode == "valid":
        return (sym_max(n, m) - _min(n, m) + 1,)
    raise a.fail("mode must be 'full', 'same' or 'valid', got %r" % (mode,))


def _min(n, m):
    return -sym_max(-n, -m) if type(n) is SymInt or type(m) is SymInt else min(n, m)


def _count(a: Args, name: str):
    v = a.val(name)
    if v is None:
        return 0
    x = a.arr(name)
    return prod(x.shape) if x is not None else int(np.size(v))


def _ediff1d(a: Args) -> tuple:
    x = a.arr("ary")
    n = prod(x.shape)
    return (sym_max(n - 1, 0) + _count(a, "to_begin") + _count(a, "to_end"),)


def _trim_zeros(a: Args) -> tuple:
    x = a.arr("filt")
    if x is None or x.ndim < 1:
        raise a.fail("filt must be an array of at least one dimension")
    if a.val("trim", "fb") not in ("f", "b", "fb", "bf", "F", "B", "FB", "BF"):
        raise a.fail("trim must be 'f', 'b' or 'fb'")
    axis = a.val("axis")
    axes = range(x.ndim) if axis is None else [
        norm_axis(v, x.ndim) for v in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    # how many zeros there are at the ends is known only when the program runs
    return tuple(a.new_size("trim_zeros length", 0, s if isinstance(s, int) else None)
                 if i in axes else s for i, s in enumerate(x.shape))


def _poly_len(a: Args, name: str):
    """The number of coefficients of a 1-D polynomial argument (traced or constant)."""
    return _vector_len(a, name)


def _polyadd(a: Args) -> tuple:
    x, y = a.arr("a1"), a.arr("a2")
    if x is not None and y is not None and x.ndim == y.ndim and x.ndim > 1:
        # NumPy adds along the first axis after padding it: equal shapes only
        if not all(p == q for p, q in zip(x.shape, y.shape)):
            raise a.fail("arrays of more than one dimension must have equal shapes")
        return tuple(x.shape)
    return (sym_max(_poly_len(a, "a1"), _poly_len(a, "a2")),)


def _polymul(a: Args) -> tuple:
    _poly_len(a, "a1"), _poly_len(a, "a2")        # both must be 1-D coefficient vectors
    # np.poly1d drops leading zero coefficients first: the length depends on the values
    return (a.new_size("polymul length", 1, None),)


def _polyder(a: Args) -> tuple:
    m = a.val("m", 1)
    if not isinstance(m, (int, np.integer)) or m < 0:
        raise a.fail("m must be a non-negative int while tracing")
    return (sym_max(_poly_len(a, "p") - int(m), 0) if m else _poly_len(a, "p"),)


def _polyint(a: Args) -> tuple:
    m = a.val("m", 1)
    if not isinstance(m, (int, np.integer)) or m < 0:
        raise a.fail("m must be a non-negative int while tracing")
    return (_poly_len(a, "p") + int(m),)


def _polyval(a: Args) -> tuple:
    p = a.arr("p")
    rest = tuple(p.shape[1:]) if p is not None else np.shape(a.val("p"))[1:]
    if p is not None and p.ndim == 0:
        raise a.fail("p must be an array of coefficients")
    x = a.arr("x")
    xs = tuple(x.shape) if x is not None else np.shape(a.val("x"))
    # NumPy loops over p's rows: y = y * x + row
    return broadcast_shapes([xs, rest], a.what)


def _polydiv(a: Args):
    n, m = _poly_len(a, "u"), _poly_len(a, "v")
    # the remainder drops its leading (near-)zero coefficients: a data-dependent length
    return [(sym_max(n - m + 1, 1),), (a.new_size("polydiv remainder", 1, None),)]


def _poly(a: Args) -> tuple:
    x = a.arr("seq_of_zeros")
    if x is None:
        raise a.fail("seq_of_zeros must be an array while tracing")
    if x.dtype.kind == "c":
        raise a.fail("complex roots give real or complex coefficients depending on the "
                     "values (conjugate pairs): not traced")
    if x.ndim == 2:
        if not (x.shape[0] == x.shape[1]):
            raise a.fail("a 2-D input must be square")
        return (x.shape[0] + 1,)
    if x.ndim != 1:
        raise a.fail("input must be 1d or non-empty square 2d array")
    return (x.shape[0] + 1,)


def _polyfit(a: Args) -> tuple:
    if a.val("full") or a.val("cov"):
        raise a.fail("full= and cov= are not supported while tracing")
    deg = a.val("deg")
    if not isinstance(deg, (int, np.integer)) or deg < 0:
        raise a.fail("deg must be a non-negative int while tracing")
    y = a.arr("y")
    n = _poly_len(a, "x")
    if y is None or y.ndim not in (1, 2) or not (y.shape[0] == n):
        raise a.fail("y must be 1-D or 2-D with as many rows as x has points")
    return (int(deg) + 1,) + tuple(y.shape[1:])


def _spaced(a: Args) -> tuple:
    num = _length(a, "num") if a.given("num") else 50
    if not (num >= 0):
        raise a.fail("the number of samples (%s) must be non-negative" % describe(num))
    ends = []
    for name in ("start", "stop"):
        x = a.arr(name)
        ends.append(tuple(x.shape) if x is not None else np.shape(a.val(name)))
    rest = broadcast_shapes(ends, a.what)
    axis = a.val("axis", 0)
    ax = axis if axis >= 0 else len(rest) + 1 + axis
    return tuple(rest[:ax]) + (num,) + tuple(rest[ax:])


WINDOWS = [Call(f, _window) for f in (np.hanning, np.hamming, np.blackman, np.bartlett,
                                      np.kaiser)]
FREQS = [Call(np.fft.fftfreq, _fftfreq), Call(np.fft.rfftfreq, _rfftfreq)]
SPACED = [Call(np.geomspace, _spaced), Call(np.logspace, _spaced)]
_LINSPACE = Call(np.linspace, _spaced)

ROWS = [
    Call(np.fft.fftshift, _same_shape("x")),
    Call(np.fft.ifftshift, _same_shape("x")),
    Call(np.correlate, _correlate),
    Call(np.ediff1d, _ediff1d),
    Call(np.trim_zeros, _trim_zeros),
    Call(np.polyadd, _polyadd),
    Call(np.polysub, _polyadd),
    Call(np.polymul, _polymul),
    Call(np.polyder, _polyder),
    Call(np.polyint, _polyint),
    Call(np.polyval, _polyval),
    Call(np.polydiv, _polydiv),
    Call(np.polyfit, _polyfit),
    Call(np.i0, _same_shape("x")),
]

register(ROWS)
register([_LINSPACE], implement=False)
_scalar_linspace = FUNCTIONS[np.linspace]


def _linspace(t, start, stop, *args, **kwargs):
    """``np.linspace``: of scalar endpoints, creation.py's op; of array endpoints (or with
    retstep= / axis=), NumPy's own call."""
    if any(type(v) is TracedArray or isinstance(v, np.ndarray) for v in (start, stop)) or \
            kwargs.get("retstep") or kwargs.get("axis", 0) != 0:
        if kwargs.get("retstep"):
            raise UserError("np.linspace(retstep=True) is not supported while tracing%s"
                            % where(user_frame(2)))
        return traced_call(t, _LINSPACE, (start, stop) + args, kwargs)
    return _scalar_linspace(t, start, stop, *args, **kwargs)


_linspace.takes_sizes = True
implements(np.linspace)(_linspace)
# np.poly's dispatcher iterates over its argument (the rows of a traced array) before
# dispatching: routed by name instead, like the functions of sizes
register(WINDOWS + FREQS + SPACED + [Call(np.poly, _poly)], sizes=True)


@implements(np.roots)
def _roots(t, p):
    raise UserError("np.roots cannot be traced%s: how many roots there are (leading zero "
                    "coefficients are dropped) and whether they are real or complex depend on "
                    "the values. Compute the companion matrix's eigenvalues with "
                    "np.linalg.eigvals (traced: the dtype eager NumPy gives on the example, "
                    "checked when the program runs) if the leading coefficient is known to be "
                    "non-zero." % where(user_frame(2)))
