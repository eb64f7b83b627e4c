"""float32 ``exp`` and ``tanh`` written in arithmetic, so LLVM vectorizes the loops of
kernels that call them.

numba calls the C library's scalar ``expf`` / ``tanhf`` per element unless Intel's SVML
is available to its LLVM (it is not with the llvmlite wheels from PyPI), while NumPy's
float32 ``exp`` / ``tanh`` are SIMD loops: a kernel calling libm loses to eager NumPy.
These are the classic Cephes formulas (Cody-Waite range reduction and a degree-6
polynomial for ``exp``; an odd polynomial near 0 and ``1 - 2 / (exp(2|x|) + 1)`` elsewhere
for ``tanh``), without branches: both sides are computed and one is selected, which the
vectorizer turns into blends.  Accuracy against NumPy is measured by
``tests/codegen/numba/test_numba_backend.py`` (within ``ULPS_MATH``); NaN and infinities give NumPy's
results; results in the subnormal range may differ by more ulps (a product of two
scales rounds twice there).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_F = np.float32


@intrinsic
def _f32_bits(typingctx, i):
    """The float32 whose bits are the int32 ``i``."""
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return sig, codegen


@njit(inline="always")
def _pow2(n):
    """2 ** n for an int32 n in [-126, 127]."""
    return _f32_bits(np.int32((n + np.int32(127)) << np.int32(23)))


@njit(inline="always")
def exp32(x):
    """e ** x for a float32 x."""
    xc = x if x > _F(-104.0) else _F(-104.0)
    xc = xc if xc < _F(89.0) else _F(89.0)
    n = np.floor(xc * _F(1.44269504088896341) + _F(0.5))
    r = xc - n * _F(0.693359375)
    r = r - n * _F(-2.12194440e-4)
    p = _F(1.9875691500e-4)
    p = p * r + _F(1.3981999507e-3)
    p = p * r + _F(8.3334519073e-3)
    p = p * r + _F(4.1665795894e-2)
    p = p * r + _F(1.6666665459e-1)
    p = p * r + _F(5.0000001201e-1)
    y = p * (r * r) + r + _F(1.0)
    k = np.int32(n)
    k1 = k >> np.int32(1)
    y = y * _pow2(k1) * _pow2(k - k1)
    return y if x == x else x


@njit(inline="always")
def tanh32(x):
    """tanh(x) for a float32 x."""
    ax = abs(x)
    z = x * x
    p = _F(-5.70498872745e-3)
    p = p * z + _F(2.06390887954e-2)
    p = p * z - _F(5.37397155531e-2)
    p = p * z + _F(1.33314422036e-1)
    p = p * z - _F(3.33332819422e-1)
    small = p * z * x + x
    e = exp32(ax + ax)
    big = _F(1.0) - _F(2.0) / (e + _F(1.0))
    big = big if x >= _F(0.0) else -big
    return small if ax < _F(0.625) else big


# ---------------------------------------------------------------------------- row reductions
# Not inlined: their fast-math flags hold only here.  ``reassoc`` lets LLVM keep a vector
# of running sums (the order the accuracy contract allows); max / min also assume no NaN
# (``nnan``: the kernel tracks NaN itself and replaces the result).
@njit(fastmath={"reassoc"}, nogil=True, cache=True)
def _rsum(buf, n, s):
    for i in range(n):
        s += buf[i]
    return s


@njit(fastmath={"nnan", "nsz", "reassoc"}, nogil=True, cache=True)
def _rmax(buf, n, m):
    for i in range(n):
        m = max(m, buf[i])
    return m


@njit(fastmath={"nnan", "nsz", "reassoc"}, nogil=True, cache=True)
def _rmin(buf, n, m):
    for i in range(n):
        m = min(m, buf[i])
    return m
