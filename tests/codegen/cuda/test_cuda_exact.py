"""backend="cupy" agrees with NumPy where C and CUDA leave things undefined or round
differently: float -> integer casts of NaN / inf / out-of-range values, INT_MIN // -1,
shifts by the bit width or more, float32 sums that overflow, no fused multiply-add.
Run under the emulator (the kernels' own C, built for the CPU); the PTX checks read what
nvcc makes of the same source."""
import platform
import shutil
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.emulate import emulate, nvcc_ptx

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
A = Dim.AUTO
x86 = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                         reason="NumPy's out-of-range float->int casts follow the CPU")


def run(f, *args):
    ep = ss.export(f, args, dynamic_shapes=[tuple(A for _ in a.shape) for a in args])
    return emulate(compile_cupy(ep))


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), (got, want)


SPECIALS = [np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20, -1e20, 300.7, -200.5, 70000.5, -1.5,
            2.7, 0.0, -0.0, 2147483520.0, -2147483648.0, 4294967040.0, 1.8e19, -9.2e18]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@x86
@pytest.mark.parametrize("src", ["float32", "float64"])
def test_float_to_int_casts_match_numpy(src):
    """CUDA saturates (NaN -> 0); NumPy on x86-64 gives the lowest int32 / int64 for NaN
    and out-of-range values, and wraps through int32 for 8- and 16-bit targets."""
    x = np.array(SPECIALS * 2, dtype=src)[:24].reshape(4, 6)
    for dt in INTS:
        fn = run(lambda a, dt=dt: (a * 1).astype(dt), x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same(fn(x), x.astype(dt))


def test_float_to_int_cast_inside_a_reduction():
    x = np.array([[1.5, np.nan, -2.7], [3e9, 1.0, 2.0]], np.float32)
    fn = run(lambda a: a.astype(np.int64).sum(axis=1), x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(fn(x), x.astype(np.int64).sum(axis=1))


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64"])
def test_int_min_floor_divide_and_remainder_by_minus_one(dt):
    """x86 traps on INT_MIN / -1 (the emulator process would die with SIGFPE); NumPy gives
    INT_MIN (wrapping) and 0."""
    lo = np.iinfo(dt).min
    a = np.array([[lo, lo, 7, -7], [lo, 5, -5, 0]], dt)
    b = np.array([[-1, 1, -1, -1], [2, -1, 0, -1]], dt)
    fn = run(lambda p, q: (p // q, p % q), a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = fn(a, b), (a // b, a % b)
    same(got[0], want[0])
    same(got[1], want[1])


@pytest.mark.parametrize("dt", ["int8", "int32", "int64", "uint8", "uint32", "uint64"])
def test_shifts_by_the_bit_width_or_more(dt):
    bits = np.dtype(dt).itemsize * 8
    lo = np.iinfo(dt).min
    a = np.array([1, 5, lo, lo + 3, 8, np.iinfo(dt).max, 3, 1], dt)
    s = np.array([bits - 1, bits, bits + 3, 1, 2 * bits + 1, 0, bits - 2, 2], dt)
    if np.dtype(dt).kind == "i":
        s[-1] = -1                                    # a negative count, as NumPy sees it
    fn = run(lambda p, q: (np.left_shift(p, q), np.right_shift(p, q)), a, s)
    got = fn(a, s)
    same(got[0], np.left_shift(a, s))
    same(got[1], np.right_shift(a, s))


def test_float32_sums_accumulate_in_float32():
    """NumPy's float32 sum overflows to inf; so does the kernel (it does not widen to
    double, which gave 3e38 for [3e38, 3e38, -3e38]).  Which partial sums overflow depends
    on the order, so the rows here overflow in every order."""
    x = np.array([[3e38, 3e38, 3e38], [1.0, 2.0, 3.0]], np.float32)
    fn = run(lambda a: (a.sum(axis=1), a.mean(axis=1), a.prod(axis=1)), x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fn(x)
        want = (x.sum(axis=1), x.mean(axis=1), x.prod(axis=1))
    for g, w in zip(got, want):
        same(g, w)
    assert np.isinf(got[0][0])


def test_float32_sum_error_is_that_of_a_tree():
    """Not bit for bit (NumPy sums pairwise in blocks of 8, the kernel per thread then
    over a tree): both stay within a few ulp of the exact sum times log2(n)."""
    rng = np.random.default_rng(0)
    for n in (7, 255, 1000, 4096, 9000):
        x = rng.standard_normal((3, n)).astype(np.float32)
        fn = run(lambda a: a.sum(axis=1), x)
        exact = x.astype(np.float64).sum(axis=1)
        bound = np.abs(x).astype(np.float64).sum(axis=1) * np.log2(n) * 2 ** -23
        assert np.all(np.abs(fn(x) - exact) <= bound)
        assert np.all(np.abs(x.sum(axis=1) - exact) <= bound)


def test_multiply_add_rounds_twice_as_numpy():
    """a*b+c is two roundings in NumPy; the kernels are built without contraction."""
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((64, 33)).astype(np.float32) for _ in range(2))
    c = -(a * b)                                     # cancellation shows a fused rounding
    fn = run(lambda p, q, r: p * q + r, a, b, c)
    same(fn(a, b, c), a * b + c)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_ptx_has_no_fused_multiply_add():
    a = np.ones((4, 5), np.float32)
    ep = ss.export(lambda p, q, r: (p * q + r, (p * q + r).sum(axis=1)), (a, a, a),
                   dynamic_shapes=[(A, A)] * 3)
    ptx = nvcc_ptx(compile_cupy(ep).kernels)
    assert "mul.rn.f32" in ptx and "add.rn.f32" in ptx
    assert "fma.rn.f32" not in ptx


def test_negative_integer_power_is_documented_not_raised():
    """NumPy raises ValueError for an integer array to a negative integer power; a kernel
    cannot raise, so it gives the power truncated toward zero (README, GPU section)."""
    a = np.array([[2, 1, -1, -1, 3]], np.int64)
    e = np.array([[-1, -5, -3, -2, 2]], np.int64)
    fn = run(lambda p, q: p ** q, a, e)
    same(fn(a, e), np.array([[0, 1, -1, 1, 9]], np.int64))
    with pytest.raises(ValueError, match="negative integer powers"):
        a ** e
