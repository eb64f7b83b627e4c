"""The SciPy functions NumPy libraries call (``scipy.linalg.cholesky``, ``cho_factor``,
``cho_solve``, ``solve``, ``inv``, ``block_diag``; ``scipy.special.expit``, ``logsumexp``,
``softmax``; ``scipy.fftpack.dct`` / ``scipy.fft.dct``) called on traced arrays, and the
library functions of ``library_ops.py`` (scikit-learn's finiteness check and k-means
labels).

Each is one op of the program whose generated code calls SciPy itself (an ``ss.custom_op``
named ``scipy::...``), so results are SciPy's, bit for bit, and ``check_finite=True`` is
SciPy's own check, made when the program runs (raising SciPy's ``ValueError``).  The op's
shape is the rule written here; its dtype is what SciPy gives for the input dtypes, read
from SciPy on a tiny array of those dtypes.  ``block_diag`` copies blocks into zeros, as
SciPy does, with traced NumPy.  Arguments the rule does not cover are a ``UserError``.

Nothing here imports SciPy: the rows are registered (``register_loaded``) for the SciPy
modules the process has loaded when a trace starts, and routed like NumPy's functions.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.errors import UserError, where
from symshape.userframe import user_frame

from .custom import custom_op
from .library_ops import sklearn_assert_all_finite, sklearn_kmeans_labels
from .tracer import FUNCTIONS, LATE_FUNCTIONS, TracedArray


@dataclass(frozen=True)
class Row:
    """SciPy function ``module.name``; ``make(fn)`` gives its tracer handler."""
    module: str
    name: str
    make: Callable[[Callable], Callable]


# SciPy's result dtypes, by rule (never by running SciPy while tracing: its caches would be
# read as state of the program)
_LAPACK = tuple(np.dtype(c) for c in "fdFD")


def lapack_dtype(*dtypes) -> np.dtype:
    """The dtype ``scipy.linalg`` computes in: float32 / float64 / complex64 / complex128
    kept, anything else float64, then promoted (``find_best_lapack_type``)."""
    return np.result_type(*[d if d in _LAPACK else np.dtype(np.float64) for d in dtypes])


def fft_dtype(dt) -> np.dtype:
    """The dtype of a SciPy DCT: single and double precision kept, half in single, any
    other real in double."""
    dt = np.dtype(dt)
    if dt.kind == "c" or dt in (np.dtype(np.float32), np.dtype(np.float64)):
        return dt
    return np.dtype(np.float32) if dt == np.float16 else np.dtype(np.float64)


def exp_dtype(dt) -> np.dtype:
    """The dtype of ``softmax`` / ``logsumexp``: what ``np.exp`` gives."""
    return np.dtype(np.exp.resolve_dtypes((np.dtype(dt), None))[1])


def ufunc_dtype(ufunc, dt) -> np.dtype:
    """The dtype SciPy's ufunc gives for ``dt`` (its own type resolution)."""
    return np.dtype(ufunc.resolve_dtypes((np.dtype(dt), None))[1])


def _refuse(what: str) -> UserError:
    return UserError("%s is not supported while tracing%s; call it outside the traced "
                     "function, or wrap it in ss.custom_op" % (what, where(user_frame(4))))


def _op(name: str, fn: Callable, fake: Callable):
    op = custom_op("scipy::" + name)(fn)
    op.register_fake(fake)
    return op


# --------------------------------------------------------------------------- linalg
def _cholesky(fn):
    def run(a, lower, check_finite):
        return fn(a, lower=lower, check_finite=check_finite)

    def fake(a, lower, check_finite):
        return np.empty(a.shape, lapack_dtype(a.dtype), like=a)
    op = _op("linalg_cholesky", run, fake)

    def handler(t, a, lower=False, overwrite_a=False, check_finite=True):
        return op(a, bool(lower), bool(check_finite))
    return handler


def _cho_factor(fn):
    def handler(t, a, lower=False, overwrite_a=False, check_finite=True):
        # SciPy's c holds the factor in one triangle and leftovers of ``a`` in the other:
        # the leftovers are unspecified, so the program takes SciPy's own c
        return _op_cho_factor(fn)(a, bool(lower), bool(check_finite)), bool(lower)
    return handler


_CHO_FACTOR: Dict[int, object] = {}


def _op_cho_factor(fn):
    got = _CHO_FACTOR.get(id(fn))
    if got is None:
        def run(a, lower, check_finite):
            return fn(a, lower=lower, check_finite=check_finite)[0]

        def fake(a, lower, check_finite):
            return np.empty(a.shape, lapack_dtype(a.dtype), like=a)
        got = _CHO_FACTOR[id(fn)] = _op("linalg_cho_factor", run, fake)
    return got


def _solve_like(name: str, call: Callable):
    def make(fn):
        def run(a, b, **kw):
            return call(fn, a, b, **kw)

        def fake(a, b, **kw):
            return np.empty(b.shape, lapack_dtype(a.dtype, b.dtype), like=b)
        return _op(name, run, fake)
    return make


def _cho_solve(fn):
    op = _solve_like("linalg_cho_solve",
                     lambda f, c, b, lower, check_finite: f((c, lower), b,
                                                            check_finite=check_finite))(fn)

    def handler(t, c_and_lower, b, overwrite_b=False, check_finite=True):
        c, lower = c_and_lower
        return op(c, b, lower=bool(lower), check_finite=bool(check_finite))
    return handler


def _solve(fn):
    op = _solve_like("linalg_solve",
                     lambda f, a, b, assume_a, lower, check_finite: f(
                         a, b, assume_a=assume_a, lower=lower, check_finite=check_finite))(fn)

    def handler(t, a, b, lower=False, overwrite_a=False, overwrite_b=False,
                check_finite=True, assume_a=None, transposed=False):
        if transposed:
            raise _refuse("scipy.linalg.solve(transposed=True)")
        return op(a, b, assume_a=assume_a, lower=bool(lower), check_finite=bool(check_finite))
    return handler


def _inv(fn):
    def run(a, check_finite):
        return fn(a, check_finite=check_finite)

    def fake(a, check_finite):
        return np.empty(a.shape, lapack_dtype(a.dtype), like=a)
    op = _op("linalg_inv", run, fake)

    def handler(t, a, overwrite_a=False, check_finite=True):
        return op(a, bool(check_finite))
    return handler


def _block_diag(fn):
    def handler(t, *arrs):
        if not arrs:
            return fn()
        blocks = [np.atleast_2d(t.operand(a)) for a in arrs]
        if any(b.ndim != 2 for b in blocks):
            raise UserError("scipy.linalg.block_diag takes arrays of at most 2 dimensions%s"
                            % where(user_frame(3)))
        rows = cols = 0
        for b in blocks:
            rows, cols = rows + b.shape[0], cols + b.shape[1]
        like = next(b for b in blocks if type(b) is TracedArray)
        out = np.zeros((rows, cols), dtype=np.result_type(*[b.dtype for b in blocks]), like=like)
        r = c = 0
        for b in blocks:
            out[r:r + b.shape[0], c:c + b.shape[1]] = b
            r, c = r + b.shape[0], c + b.shape[1]
        return out
    return handler


# --------------------------------------------------------------------------- special, fft
def _elementwise(name: str, extra: Tuple[str, ...] = ()):
    def make(fn):
        def run(x, **kw):
            return fn(x, **kw)

        def fake(x, **kw):
            dt = ufunc_dtype(fn, x.dtype) if isinstance(fn, np.ufunc) else exp_dtype(x.dtype)
            return np.empty(x.shape, dt, like=x)
        op = _op(name, run, fake)

        def handler(t, x, *args, out=None, **kwargs):
            if args or set(kwargs) - set(extra):
                raise _refuse("scipy %s with arguments %s" % (
                    name.split("_", 1)[-1], sorted(set(kwargs) - set(extra)) or "by position"))
            result = op(x, **kwargs)
            return result if out is None else _into(out, result)
        return handler
    return make


def _into(out, result):
    """``out=``: the result written into ``out`` (a traced write: functional in the graph),
    which is returned, as a ufunc does (a 1-tuple, as ``__array_ufunc__`` passes it, too)."""
    target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if type(target) is not TracedArray:
        raise _refuse("out= into an array that is not traced")
    target[...] = result
    return target


def _logsumexp(fn):
    def run(a, axis, keepdims):
        return fn(a, axis=axis, keepdims=keepdims)

    def fake(a, axis, keepdims):
        return np.sum(a, axis=axis, keepdims=keepdims).astype(exp_dtype(a.dtype))
    op = _op("special_logsumexp", run, fake)

    def handler(t, a, axis=None, b=None, keepdims=False, return_sign=False):
        if b is not None or return_sign:
            raise _refuse("scipy.special.logsumexp with b= or return_sign=True")
        return op(a, axis if not isinstance(axis, list) else tuple(axis), bool(keepdims))
    return handler


def _dct(name: str):
    def make(fn):
        def run(x, type, axis, norm):
            return fn(x, type=type, axis=axis, norm=norm)

        def fake(x, type, axis, norm):
            return np.empty(x.shape, fft_dtype(x.dtype), like=x)
        op = _op(name, run, fake)

        def handler(t, x, type=2, n=None, axis=-1, norm=None, overwrite_x=False, **kw):
            if n is not None or kw:
                raise _refuse("dct with n= or %s" % sorted(kw))
            return op(x, int(type), int(axis), norm)
        return handler
    return make


ROWS: List[Row] = [
    Row("scipy.linalg", "cholesky", _cholesky),
    Row("scipy.linalg", "cho_factor", _cho_factor),
    Row("scipy.linalg", "cho_solve", _cho_solve),
    Row("scipy.linalg", "solve", _solve),
    Row("scipy.linalg", "inv", _inv),
    Row("scipy.linalg", "block_diag", _block_diag),
    Row("scipy.special", "expit", _elementwise("special_expit")),
    Row("scipy.special", "logit", _elementwise("special_logit")),
    Row("scipy.special", "softmax", _elementwise("special_softmax", ("axis",))),
    Row("scipy.special", "log_softmax", _elementwise("special_log_softmax", ("axis",))),
    Row("scipy.special", "logsumexp", _logsumexp),
    Row("scipy.fftpack", "dct", _dct("fftpack_dct")),
    Row("scipy.fft", "dct", _dct("fft_dct")),
    # library functions run as written when the program runs (library_ops.py)
    Row("sklearn.utils.validation", "_assert_all_finite", sklearn_assert_all_finite),
    Row("sklearn.cluster._kmeans", "_labels_inertia_threadpool_limit", sklearn_kmeans_labels),
]

# id(SciPy function) -> the function, registered in FUNCTIONS with its handler
_REGISTERED: Dict[int, Callable] = {}


def register_loaded() -> List[Callable]:
    """Register a handler for every row whose SciPy module is loaded; the functions
    registered so far (new ones are routed from the next trace on)."""
    for row in ROWS:
        mod = sys.modules.get(row.module)
        fn = getattr(mod, row.name, None) if mod is not None else None
        # while a trace runs, the module's name may hold its router: the function it routes
        fn = getattr(fn, "symshape_routes", fn)
        if fn is None or id(fn) in _REGISTERED:
            continue
        FUNCTIONS[fn] = _lazy(row, fn)
        FUNCTIONS[fn].takes_sizes = False
        _REGISTERED[id(fn)] = fn
    return list(_REGISTERED.values())


def _lazy(row: Row, fn: Callable) -> Callable:
    """The handler, built (its ops registered) on the first traced call."""
    built: Optional[Callable] = None

    def handler(t, *args, **kwargs):
        nonlocal built
        if built is None:
            built = row.make(fn)
        return built(t, *args, **kwargs)
    handler.__name__ = "scipy_" + row.name
    return handler


def stand_in(tracer) -> Callable[[Any, str], Any]:
    """For model state: a SciPy function of the rows held as a value (``self.sqrt =
    cholesky`` in filterpy's ``MerweScaledSigmaPoints``) is seen as one that traces its
    calls on traced arrays, as the same function called by its name is routed
    (``capture/namespace.py``); its other calls reach SciPy unchanged.  The binding guards
    the original's identity."""
    register_loaded()           # the state is walked before the names are routed

    def replace(v, path: str):
        if not callable(v) or id(v) not in _REGISTERED or _REGISTERED[id(v)] is not v:
            return None
        return _held(tracer, v)
    return replace


def _held(tracer, fn: Callable) -> Callable:
    handler = FUNCTIONS[fn]

    def routed(*args, **kwargs):
        if not any(type(a) is TracedArray for a in list(args) + list(kwargs.values())):
            return fn(*args, **kwargs)
        tracer.env.commit_pending()     # as __array_function__ does before a handler
        return handler(tracer, *args, **kwargs)
    routed.__name__ = getattr(fn, "__name__", "routed")
    routed.__qualname__ = getattr(fn, "__qualname__", routed.__name__)
    routed.__doc__ = getattr(fn, "__doc__", None)
    routed.symshape_routes = fn
    return routed


def loaded_modules() -> Tuple[str, ...]:
    """The SciPy modules of the rows that are loaded (their namespaces are routed)."""
    return tuple(sorted({r.module for r in ROWS if r.module in sys.modules}))


LATE_FUNCTIONS.append(register_loaded)
