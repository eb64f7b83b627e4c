"""More linear algebra with symbolic sizes, computed by NumPy itself (``ops/npcall.py``):
``eig`` / ``eigvals``, ``lstsq``, ``matrix_rank``, ``cond``, ``tensorsolve``, ``tensorinv``,
``multi_dot``, ``linalg.vecdot``, ``kron``, ``vdot``, ``diagflat``, ``vander``, and
``diag_indices_from`` (traced: aranges).

``np.linalg.eig`` returns real arrays when every eigenvalue is real and complex ones
otherwise: a dtype that depends on the values.  Traced, it always returns the complex dtype
(``complex128`` for float64 input, ``complex64`` for float32), equal in value to eager
NumPy's (an imaginary part of zero where eager NumPy's result is real).
"""
from __future__ import annotations

from typing import List

import numpy as np

from symshape.rules import rule
from symshape.errors import UserError, where
from symshape.sizes.symint import SymInt, describe
from symshape.userframe import user_frame

from ..tracer import TracedArray, implements
from .creation import _arange
from .elementwise import broadcast_shapes
from .factorizations import minimum, core_shapes, parse_core
from .npcall import Args, Call, register, traced_call
from .shape import prod


def _square(a: Args, name: str = "a", sig: str = "(m,m)->(m),(m,m)"):
    x = a.arr(name)
    if x is None:
        raise a.fail("%s must be an array while tracing" % name)
    return core_shapes(parse_core(sig), [x], a.what)


def _complex(dtypes: List[np.dtype]) -> List[np.dtype]:
    return [np.result_type(d, np.complex64) for d in dtypes]


_AS_COMPLEX = "tuple(np.asarray(_v, np.result_type(_v.dtype, np.complex64)) for _v in %s)"
_AS_COMPLEX_1 = "(lambda _v: np.asarray(_v, np.result_type(_v.dtype, np.complex64)))(%s)"


def _lstsq(a: Args):
    x, b = a.arr("a"), a.arr("b")
    if x is None or b is None or x.ndim != 2 or b.ndim not in (1, 2):
        raise a.fail("takes a 2-D array a and a 1-D or 2-D array b")
    m, n = x.shape
    if not (b.shape[0] == m):
        raise a.fail("incompatible dimensions: a has %s rows, b %s"
                     % (describe(m), describe(b.shape[0])))
    k = b.shape[1] if b.ndim == 2 else 1
    # the residuals are empty unless m > n and a has full rank: a data-dependent length
    res = a.new_size("lstsq residuals", 0, k if isinstance(k, int) else None)
    sol = (n, b.shape[1]) if b.ndim == 2 else (n,)
    return [sol, (res,), (), (minimum(m, n),)]


def _batch(a: Args, name: str, core: int = 2) -> tuple:
    x = a.arr(name)
    if x is None:
        raise a.fail("%s must be an array while tracing" % name)
    if x.ndim < core:
        return ()
    return tuple(x.shape[:x.ndim - core])


def _tensorsolve(a: Args) -> tuple:
    x, b = a.arr("a"), a.arr("b")
    if a.val("axes") is not None:
        raise a.fail("axes= is not supported while tracing (move the axes first with "
                     "np.moveaxis)")
    out = tuple(x.shape[b.ndim:])
    if not (prod(out) == prod(b.shape)):
        raise a.fail("a's trailing dimensions (%s) must hold as many elements as b (%s)"
                     % (describe(prod(out)), describe(prod(b.shape))))
    if not (prod(x.shape[:b.ndim]) == prod(b.shape)):
        raise a.fail("a's leading dimensions must match b's shape")
    return out


def _tensorinv(a: Args) -> tuple:
    x = a.arr("a")
    ind = a.val("ind", 2)
    if not isinstance(ind, int) or ind <= 0:
        raise a.fail("ind must be a positive integer")
    out = tuple(x.shape[ind:]) + tuple(x.shape[:ind])
    if not (prod(x.shape[:ind]) == prod(x.shape[ind:])):
        raise a.fail("the product of the first ind dimensions must equal the product of "
                     "the others")
    return out


def _multi_dot(a: Args) -> tuple:
    xs = a.arrays("arrays")
    if len(xs) < 2:
        raise a.fail("expecting at least two arrays")
    shapes = [list(x.shape) for x in xs]
    first_vec, last_vec = len(shapes[0]) == 1, len(shapes[-1]) == 1
    if first_vec:
        shapes[0] = [1] + shapes[0]
    if last_vec:
        shapes[-1] = shapes[-1] + [1]
    for s in shapes:
        if len(s) != 2:
            raise a.fail("the arrays in the middle must be 2-D, the first and last 1-D or 2-D")
    for s, t in zip(shapes, shapes[1:]):
        if not (s[1] == t[0]):
            raise a.fail("shapes not aligned: %s != %s" % (describe(s[1]), describe(t[0])))
    out = []
    if not first_vec:
        out.append(shapes[0][0])
    if not last_vec:
        out.append(shapes[-1][1])
    return tuple(out)


def _vecdot(a: Args) -> tuple:
    x, y = a.arr("x1"), a.arr("x2")
    axis = a.val("axis", -1)
    if x is None or y is None:
        raise a.fail("takes two arrays while tracing")
    ax1, ax2 = axis % x.ndim, axis % y.ndim
    if not (x.shape[ax1] == y.shape[ax2]):
        raise a.fail("the vector sizes differ (%s and %s)"
                     % (describe(x.shape[ax1]), describe(y.shape[ax2])))
    rest = [tuple(s for i, s in enumerate(v.shape) if i != ax) for v, ax in ((x, ax1), (y, ax2))]
    return broadcast_shapes(rest, a.what)


@rule("linalg.kron")
def _kron(a: Args) -> tuple:
    x, y = a.arr("a"), a.arr("b")
    xs = tuple(x.shape) if x is not None else np.shape(a.val("a"))
    ys = tuple(y.shape) if y is not None else np.shape(a.val("b"))
    nd = max(len(xs), len(ys))
    xs = (1,) * (nd - len(xs)) + xs
    ys = (1,) * (nd - len(ys)) + ys
    return tuple(p * q for p, q in zip(xs, ys))


def _vdot(a: Args) -> tuple:
    x, y = a.arr("a"), a.arr("b")
    nx = prod(x.shape) if x is not None else np.size(a.val("a"))
    ny = prod(y.shape) if y is not None else np.size(a.val("b"))
    if not (nx == ny):
        raise a.fail("the arrays hold different numbers of elements (%s and %s)"
                     % (describe(nx), describe(ny)))
    return ()


def _diagflat(a: Args) -> tuple:
    v = a.arr("v")
    k = a.val("k", 0)
    if not isinstance(k, (int, np.integer)):
        raise a.fail("k must be an int while tracing")
    n = prod(v.shape) + abs(int(k))
    return (n, n)


def _vander(a: Args) -> tuple:
    x = a.arr("x")
    if x is None or x.ndim != 1:
        raise a.fail("x must be a one-dimensional array")
    n = a.val("N")
    n = x.shape[0] if n is None else n
    if type(n) is SymInt and not (n >= 0):
        raise a.fail("N (%s) is negative for the example inputs" % describe(n))
    return (x.shape[0], n)


_DIAG = Call(np.diag, lambda a: _diagflat(Args(a.t, a.what, {"v": a.arr("v"),
                                                             "k": a.val("k", 0)}, {}, a.frame)))

ROWS = [
    Call(np.linalg.eig, lambda a: _square(a), post=_complex),
    Call(np.linalg.eigvals, lambda a: _square(a, sig="(m,m)->(m)")[0], post=_complex),
    Call(np.linalg.lstsq, _lstsq),
    Call(np.linalg.matrix_rank, lambda a: _batch(a, "A")),
    Call(np.linalg.cond, lambda a: _batch(a, "x")),
    Call(np.linalg.tensorsolve, _tensorsolve),
    Call(np.linalg.tensorinv, _tensorinv),
    Call(np.linalg.multi_dot, _multi_dot),
    Call(np.linalg.vecdot, _vecdot),
    Call(np.kron, _kron),
    Call(np.vdot, _vdot),
    Call(np.diagflat, _diagflat),
    Call(np.vander, _vander),
]

register(ROWS + [_DIAG], post_code={"np_linalg_eig": _AS_COMPLEX,
                                    "np_linalg_eigvals": _AS_COMPLEX_1})


@implements(np.diag)
def _diag(t, v, k=0):
    """``np.diag``: of a vector, the square matrix NumPy builds (by its own call); of a
    matrix, its k-th diagonal (``np.diagonal``, as NumPy's code does)."""
    x = t.operand(v)
    if type(x) is not TracedArray or x.ndim not in (1, 2):
        raise UserError("np.diag: input must be 1-d or 2-d%s" % where(user_frame(2)))
    if x.ndim == 2:
        return np.diagonal(x, k)
    return traced_call(t, _DIAG, (x, k), {})


@implements(np.diag_indices_from)
def _diag_indices_from(t, arr):
    """``(arange(n),) * ndim`` for an array whose sizes are all equal (a guard)."""
    x = t.operand(arr)
    if x.ndim < 2:
        raise UserError("np.diag_indices_from: input array must be at least 2-d%s"
                        % where(user_frame(2)))
    n = x.shape[0]
    for s in x.shape[1:]:
        if not (s == n):
            raise UserError("np.diag_indices_from: all dimensions of input must be of equal "
                            "length, got %s and %s%s" % (describe(n), describe(s),
                                                         where(user_frame(2))))
    idx = _arange(t, n)
    return (idx,) * x.ndim
