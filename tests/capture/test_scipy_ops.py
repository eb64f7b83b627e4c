"""SciPy functions that NumPy libraries call, on traced arrays: one op each whose program
calls SciPy itself (results bit for bit, SciPy's dtype), with ``check_finite`` SciPy's own
check when the program runs; ``block_diag`` in traced NumPy."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import same

scipy = pytest.importorskip("scipy")
import scipy.fftpack  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.special  # noqa: E402
from scipy.linalg import cho_factor, cho_solve  # noqa: E402


def _spd(n):
    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, n))
    return (m @ m.T + n * np.eye(n), rng.standard_normal(n))


def chol_upper(a, b):
    return scipy.linalg.cholesky(a)


def chol_lower(a, b):
    return scipy.linalg.cholesky(a, lower=True) @ b


def factor_solve(a, b):
    c = cho_factor(a)
    return cho_solve(c, b)


def solve_inv(a, b):
    return scipy.linalg.solve(a, b, assume_a="pos") + scipy.linalg.inv(a) @ b


def blocks(a, b):
    return scipy.linalg.block_diag(a, np.eye(2), b[None, :])


def special(a, b):
    return (scipy.special.expit(a), scipy.special.logsumexp(a, axis=1),
            scipy.special.softmax(a, axis=0), scipy.special.logsumexp(b))


def expit_out(a, b):
    y = a * 2
    scipy.special.expit(y, out=y)
    return y, scipy.special.expit(b, out=np.empty_like(b))


def dct(a, b):
    return scipy.fftpack.dct(a, type=2, axis=1, norm="ortho")[:, :2]


@pytest.mark.parametrize("f", [chol_upper, chol_lower, factor_solve, solve_inv, blocks,
                               special, expit_out, dct])
def test_scipy_op_as_eager(f):
    ep = ss.export(f, _spd(4), dynamic_shapes={"a": {0: Dim("n"), 1: Dim("n")},
                                              "b": {0: Dim("n")}})
    m = ep.module()
    for n in (3, 4, 7):
        same(m(*_spd(n)), f(*_spd(n)))
    assert any(n.op.startswith("scipy::") for n in ep.graph.nodes) or f is blocks


def test_check_finite_at_run_time():
    ep = ss.export(chol_upper, _spd(4), dynamic_shapes={"a": {0: Dim("n"), 1: Dim("n")},
                                                       "b": {0: Dim("n")}})
    a, b = _spd(5)
    a[1, 1] = np.nan
    with pytest.raises(ValueError) as eager:
        chol_upper(a, b)
    with pytest.raises(ValueError) as got:
        ep.module()(a, b)
    assert str(got.value) == str(eager.value)


def test_unsupported_argument_is_refused():
    def f(a, b):
        return scipy.special.logsumexp(a, b=b[:, None], axis=0)

    with pytest.raises(ss.UserError, match="logsumexp"):
        ss.export(f, _spd(4), dynamic_shapes={"a": {0: Dim("n"), 1: Dim("n")},
                                              "b": {0: Dim("n")}})


def test_foreign_ufunc_without_op_is_refused():
    def f(a, b):
        return scipy.special.erfcx(a)

    with pytest.raises(ss.UserError, match="erfcx"):
        ss.export(f, _spd(4), dynamic_shapes={"a": {0: Dim("n"), 1: Dim("n")},
                                              "b": {0: Dim("n")}})


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16, np.complex64])
def test_scipy_dtypes_as_eager(dtype):
    def f(a, b):
        return (scipy.linalg.cholesky(a), scipy.special.expit(a.real),
                scipy.special.softmax(a, axis=1), scipy.fftpack.dct(a.real, axis=0),
                scipy.linalg.solve(a, b))

    def spd(n):
        a, b = _spd(n)
        return np.round(a * 4).astype(dtype), np.round(b * 4).astype(dtype)

    ep = ss.export(f, spd(4), dynamic_shapes={"a": {0: Dim("n"), 1: Dim("n")},
                                             "b": {0: Dim("n")}})
    for n in (3, 5):
        same(ep.module()(*spd(n)), f(*spd(n)))
