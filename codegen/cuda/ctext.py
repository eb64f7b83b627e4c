"""CUDA C text the kernel writers share: device helpers of merged row phases, the
``SS_OFF`` macro, element sizes and vector types, and small spellings (stores of register
chunks, carries, ceilings)."""
from __future__ import annotations

import re
from typing import List

from symshape.algebra.expr import format_expr


ROW_HELPERS = {
    # exp in the precision of its argument, as the generated exp of that dtype
    # (m, s) += (m2, s2): two running maxima and the sums of exp(x - max) they hold, each
    # rescaled to the larger maximum (scaled by 1 when it is its own: no exp(-inf + inf))
    "online": "\n".join([
        "__device__ __forceinline__ float ss_expt(float x) { return expf(x); }",
        "__device__ __forceinline__ double ss_expt(double x) { return exp(x); }",
        "template <typename T> __device__ __forceinline__ void ss_online_merge("
        "T& m, T& s, T m2, T s2) {",
        "  const T mn = ss_maximum(m, m2);",
        "  s = s * (m == mn ? (T)1 : ss_expt(m - mn)) + s2 * (m2 == mn ? (T)1 : "
        "ss_expt(m2 - mn));",
        "  m = mn;",
        "}"]),
    # (n, mean, m2) += (n2, mean2, m22): Chan, Golub and LeVeque's pairwise update of a
    # count, a mean and a sum of squared deviations from it (nothing to add when n2 == 0)
    "welford": "\n".join([
        "template <typename T> __device__ __forceinline__ void ss_welford_merge("
        "T& n, T& mean, T& m2, T n2, T mean2, T m22) {",
        "  if (n2 > (T)0) {",
        "    if (n > (T)0) {",
        "      const T nn = n + n2, f = n2 / nn, d = mean2 - mean;",
        "      mean = mean + d * f;",
        "      m2 = m2 + m22 + d * (d * (n * f));",
        "      n = nn;",
        "    } else {",
        "      n = n2; mean = mean2; m2 = m22;",
        "    }",
        "  }",
        "}"]),
}


#: SS_OFF(contiguous offset, strided offset): which one the compiled variant uses
SS_OFF = "\n".join(["#ifndef SS_OFF", "#ifdef SS_STRIDED", "#define SS_OFF(c, s) (s)", "#else",
                     "#define SS_OFF(c, s) (c)", "#endif", "#endif"])

SIZEOF = {"bool": 1, "signed char": 1, "unsigned char": 1, "short": 2, "unsigned short": 2,
           "int": 4, "unsigned int": 4, "float": 4, "long long": 8, "unsigned long long": 8,
           "double": 8}
#: a chunk of this many bytes moves as one load / store of this type
VECT = {16: "uint4", 8: "uint2", 4: "unsigned int", 2: "unsigned short", 1: "unsigned char"}


def vector_store(ct: str, buf: str, off: str, V: int) -> List[str]:
    """Store the register chunk ``vo_<buf>`` (V elements of C type ``ct``) at ``buf[off]``
    in moves of at most 16 bytes (a float64 chunk of 4 is two 128-bit stores)."""
    size = SIZEOF[ct] * V
    step = min(size, 16)
    vt = VECT[step]
    per = step // SIZEOF[ct]
    return ["*(%s*)&%s[%s + %d] = *(const %s*)&vo_%s[%d];" % (vt, buf, off, q * per, vt,
                                                              buf, q * per)
            if q else "*(%s*)&%s[%s] = *(const %s*)vo_%s;" % (vt, buf, off, vt, buf)
            for q in range(size // step)]



def carry(axes: List[int], sizes: List[str]) -> str:
    """``c[last] += 1`` with the carry into earlier axes (the first one never wraps),
    written outside in: the last axis is tested first."""
    text = "++c%d;" % axes[0]
    for a, sz in zip(axes[1:], sizes[1:]):
        text = "if (++c%d == %s) { c%d = 0; %s }" % (a, sz, a, text)
    return text


def ceildiv_c(a: str, b: str) -> str:
    """C text of ``ceil(a / b)`` for non-negative ``a`` and positive ``b`` (C's ``/``
    truncates, so the Python spelling ``-(-a // b)`` is no ceiling there): the one place
    the kernels spell it.  A literal divisor folds its ``- 1`` (``(n + 31) / 32``)."""
    if b.isdigit():
        return "(%s + %d) / %s" % (a, int(b) - 1, b)
    return "(%s + %s - 1) / %s" % (a, b, b)



_COORD = re.compile(r"\bc\d+\b")
_DECL = re.compile(r"const idx_t (c\d+) =")


def uses_coords(decode: List[str], lines: List[str]) -> bool:
    """Does any line (other than a decode) read a coordinate that ``decode`` declares?"""
    declared = set(_DECL.findall("\n".join(decode)))
    used = set()
    for l in lines:
        if not _DECL.match(l.strip()):
            used |= set(_COORD.findall(l))
    return bool(declared & used)


def fmt_shape(shape) -> str:
    """``[s0, 4]``: a shape as a kernel's head comment shows it."""
    return "[%s]" % ", ".join(format_expr(s) for s in shape)


