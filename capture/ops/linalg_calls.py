"""More linear algebra with symbolic sizes, computed by NumPy itself (``ops/npcall.py``):
``eig`` / ``eigvals``, ``lstsq``, ``matrix_rank``, ``cond``, ``tensorsolve``, ``tensorinv``,
``multi_dot``, ``linalg.vecdot``, ``kron``, ``vdot``, ``diagflat``, ``vander``, and
``diag_indices_from`` (traced: aranges).

``np.linalg.eig`` / ``eigvals`` of a real matrix return real arrays when every eigenvalue is
real and complex ones otherwise: a dtype that depends on the values.  Traced, the call
computes the complex result, and the program takes the dtype eager NumPy gives on the
example (its value there: ``capture/examples.py``): the real parts when the example's
eigenvalues are all real, the complex arrays otherwise.  Either way the program checks when
it runs that the values still give that dtype (``all(w.imag == 0)``, NumPy's own test), and
raises ``ValueDependentDtypeError`` naming the user's line otherwise: never a silently
different dtype.
"""
from __future__ import annotations

from typing import List

import numpy as np

from symshape.algebra import relations as R
from symshape.rules import rule
from symshape.errors import UserError, ValueDependentDtypeError, where
from symshape.runtime import raise_text
from symshape.sizes.symint import SymInt, describe
from symshape.userframe import user_frame

from ..examples import example_value
from ..methods import METHOD_OPS
from ..tracer import SIZE_FUNCTIONS, TracedArray, implements, to_expr
from .creation import index_arange
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

_EIG = Call(np.linalg.eig, lambda a: _square(a), post=_complex)
_EIGVALS = Call(np.linalg.eigvals, lambda a: _square(a, sig="(m,m)->(m)")[0], post=_complex)

ROWS = [
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

register(ROWS + [_DIAG])
register([_EIG, _EIGVALS], post_code={"np_linalg_eig": _AS_COMPLEX,
                                      "np_linalg_eigvals": _AS_COMPLEX_1}, implement=False)


# routed by name too, as every NumPy-computed row is (ops/npcall.py): a call holding a
# traced value reaches the handler where NumPy would not dispatch it first
SIZE_FUNCTIONS.extend([np.linalg.eig, np.linalg.eigvals])


@implements(np.linalg.eig)
def _eig(t, *args, **kwargs):
    """``np.linalg.eig``: the dtype eager NumPy gives on the example, checked at run time."""
    out = traced_call(t, _EIG, args, kwargs)
    real = _follow_example(t, _EIG, args, kwargs, out[0])
    if not real:
        return out
    parts = (np.real(out[0]), np.real(out[1]))
    return tuple(parts) if type(out) is tuple else type(out)(*parts)


@implements(np.linalg.eigvals)
def _eigvals(t, *args, **kwargs):
    """``np.linalg.eigvals``: the dtype eager NumPy gives on the example, checked at run
    time."""
    w = traced_call(t, _EIGVALS, args, kwargs)
    return np.real(w) if _follow_example(t, _EIGVALS, args, kwargs, w) else w


def _follow_example(t, row: Call, args, kwargs, w: TracedArray) -> bool:
    """Whether the result is real (eager NumPy's dtype on the example), with the run-time
    check that the values give that dtype again.  A complex input gives complex results
    whatever the values: no check."""
    what = "np.linalg.%s" % row.func.__name__
    frame = user_frame(4)
    a = args[0] if args else kwargs.get("a")
    # a nested list holding traced values is the traced array NumPy makes of it (routed)
    x = t.operand(a) if type(a) is TracedArray else np.asarray(a)
    if x.dtype.kind == "c":
        return False
    value = example_value(t, x) if type(x) is TracedArray else x
    if value is None:
        raise UserError(
            "%s%s: NumPy gives real results when every eigenvalue is real and complex ones "
            "otherwise, and symshape cannot compute the matrix's value on the example here "
            "(it depends on a random draw, on the arguments of an ss.cond / ss.map branch or "
            "a loop body, or on something else the trace cannot run), so it "
            "cannot follow eager NumPy's dtype. Fix the dtype instead: np.linalg.%s(a + 0j) "
            "always gives complex results (np.linalg.eigh / eigvalsh always real ones, for a "
            "symmetric matrix)" % (what, where(frame), row.func.__name__))
    real = np.linalg.eigvals(value).dtype.kind != "c"
    there = where(frame).strip() or "in the traced function"
    cplx = np.result_type(x.dtype, np.complex64)
    if real:
        why = ("%s %s: some eigenvalues are complex for these inputs, so eager NumPy returns "
               "%s; the program was exported with an example whose eigenvalues are all real "
               "(%s results) and keeps that dtype" % (what, there, cplx, np.real(
                   np.zeros((), cplx)).dtype))
    else:
        why = ("%s %s: every eigenvalue is real for these inputs, so eager NumPy returns "
               "%s; the program was exported with an example with complex eigenvalues (%s "
               "results) and keeps that dtype" % (what, there, np.real(
                   np.zeros((), cplx)).dtype, cplx))
    text = raise_text(ValueDependentDtypeError(
        why + ". Export with an example of the same kind, or fix the dtype: "
        "np.linalg.%s(a + 0j) always gives complex results (np.linalg.eigh / eigvalsh "
        "always real ones, for a symmetric matrix)" % row.func.__name__))
    all_real = np.all(np.imag(w) == 0)
    ok = METHOD_OPS["item"](t, all_real == real, ())
    t.env.check(R.eq(to_expr(ok), 1), None, text, frame)
    return real


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
    idx = index_arange(t, n)
    return (idx,) * x.ndim
