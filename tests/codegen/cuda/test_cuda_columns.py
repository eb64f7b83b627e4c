"""Column kernels (a leading axis reduced, the last axis kept) in their SS_VEC variant: each
lane takes V adjacent columns (16 bytes of the widest array read along the kept axis, at
most 8), so its loads of a row of the input are one 128-bit (or 64-bit) load, and its
elementwise outputs and per-column results leave as vector stores.  Checked against NumPy
under the emulator (in registers and looped, column counts that are and are not multiples
of V, misaligned views), and in NVRTC's PTX."""
import re
import shutil

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from symshape.codegen.cuda.emulate import emulate
from symshape.codegen.cuda.nvrtc import nvrtc_module, nvrtc_ptx

from test_cuda_reductions import close, column_norm, column_softmax, f32, looped, program

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

TOL = {np.float16: (2e-2, 2e-2), np.float32: (1e-4, 1e-5), np.float64: (1e-10, 1e-12)}


def col_sum(x):
    return x.sum(axis=0)


def col_mean(x):
    return x.mean(axis=0)


def col_max(x):
    return x.max(axis=0)


CASES = [(col_sum, 0), (col_mean, 0), (col_max, 0), (column_softmax, 0),
         (column_norm, 1)]
IDS = ["sum", "mean", "max", "softmax", "norm"]


def _args(shape, dtype, extra):
    return [f32(*shape).astype(dtype)] + [f32(shape[1], seed=i + 1).astype(dtype)
                                          for i in range(extra)]


def _kernel(c):
    return [k for k in c.kernels if k.kind == "reduce"][0]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64],
                         ids=["f16", "f32", "f64"])
@pytest.mark.parametrize("f,extra", CASES, ids=IDS)
def test_column_vec_variant_matches_numpy(f, extra, dtype):
    """V = 16 bytes / element size columns per lane: equal to NumPy with short columns
    (in registers) and long ones (looped; merged phases for float32/64 softmax and norm),
    the vector variant run exactly for the column counts that are multiples of V."""
    c = program(f, *_args((16, 8), dtype, extra))
    k = _kernel(c)
    V = 16 // np.dtype(dtype).itemsize
    assert k.columns and k.vec == min(V, 8)
    rtol, atol = TOL[dtype]
    run = looped(c)            # no split companion: long columns run the looped kernel
    shapes = [(5, 8 * V), (5, 3 * V), (5, V + 1), (70, 2 * V), (300, 33), (300, 4 * V)]
    for shape in shapes:
        args = _args(shape, dtype, extra)
        close(run(*args), f(*args), rtol=rtol, atol=atol)
    assert len(run.runtime.vectorised) == sum(1 for s in shapes if s[1] % V == 0)
    assert {b for _, _, b, _ in run.runtime.launches} == {256}


def test_column_vec_grid_covers_32_lanes_of_v_columns():
    """A block covers 32 * V adjacent columns in the vector variant (32 otherwise)."""
    c = program(col_sum, f32(16, 8))
    run = emulate(c)
    run(f32(7, 4 * 32 * 3))
    run(f32(7, 4 * 32 * 3 + 1))
    assert [g for _, g, _, _ in run.runtime.launches] == [3, 13]
    assert run.runtime.vectorised == [c.kernels[0].name]


@pytest.mark.parametrize("f,shapes", [
    (lambda x: x.mean(axis=1), [(3, 70, 40), (2, 9, 5), (2, 9, 8)]),
    (lambda x: x.max(axis=(0, 1)), [(2, 3, 36), (5, 7, 3)]),
    (lambda x: x - x.mean(axis=0, keepdims=True), [(9, 40), (65, 3), (300, 12)]),
], ids=["mean_axis1_of_3d", "max_axes01", "center"])
def test_column_vec_variant_other_layouts(f, shapes):
    """Leading kept axes (decoded once per lane), several reduced axes, keepdims outputs."""
    c = program(f, f32(*shapes[0]))
    assert _kernel(c).columns and _kernel(c).vec == 4
    run = looped(c)
    for shp in shapes:
        x = f32(*shp)
        close(run(x), f(x), rtol=1e-4, atol=1e-5)
    assert len(run.runtime.vectorised) == sum(1 for s in shapes if s[-1] % 4 == 0)


def test_column_vec_variant_needs_every_row_aligned():
    """A slice of the last axis (x[:, :8]) is read at rows of the full width: the vector
    variant only when that width is a multiple of V too (else rows start misaligned)."""
    def f(x):
        return x[:, :8].sum(axis=0)
    c = program(f, f32(20, 12))
    assert len(_kernel(c).vec_lens) == 2
    run = emulate(c)
    for shape in [(20, 12), (20, 10), (20, 16)]:
        x = f32(*shape)
        close(run(x), f(x), rtol=1e-4, atol=1e-5)
    assert len(run.runtime.vectorised) == 2


@pytest.mark.parametrize("f,extra", [(column_softmax, 0), (column_norm, 1)],
                         ids=["softmax", "norm"])
def test_misaligned_column_views_run_the_scalar_variant(f, extra):
    """A contiguous view 4 bytes past a 16-byte boundary: the scalar variant, same values."""
    c = program(f, *_args((16, 8), np.float32, extra))
    run = emulate(c)
    base = f32(40 * 8 + 4)
    x = base[1:1 + 40 * 8].reshape(40, 8)
    if x.ctypes.data % 16 == 0:
        x = base[2:2 + 40 * 8].reshape(40, 8)
    args = [x] + [f32(8, seed=1)] * extra
    close(run(*args), f(*args), rtol=1e-4, atol=1e-5)
    assert run.runtime.vectorised == []
    args = [x.copy()] + [f32(8, seed=1)] * extra
    close(run(*args), f(*args), rtol=1e-4, atol=1e-5)
    assert len(run.runtime.vectorised) == 1


PROGRAMS = {}


@settings(max_examples=10, deadline=None)
@given(op=st.sampled_from(["sum", "max", "mean", "min", "any", "softmax", "norm"]),
       dtype=st.sampled_from([np.float16, np.float32, np.float64]),
       lead=st.integers(2, 3), n=st.integers(2, 90), groups=st.integers(1, 40),
       extra_col=st.booleans(), seed=st.integers(0, 5))
def test_random_column_reductions_match_numpy(op, dtype, lead, n, groups, extra_col, seed):
    """Column reductions of random shapes (lead, n, columns) reducing the middle axis,
    columns a multiple of V or one more, in every float dtype: equal to NumPy, the vector
    variant run exactly when the columns allow it."""
    V = 16 // np.dtype(dtype).itemsize
    cols = groups * V + (1 if extra_col else 0)

    def f(x):
        if op == "softmax":
            e = np.exp(x - x.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        if op == "norm":
            mu = x.mean(axis=1, keepdims=True)
            return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + 1e-3)
        return getattr(np, op)(x > 0.3 if op == "any" else x, axis=1)

    key = (op, dtype)
    if key not in PROGRAMS:
        PROGRAMS[key] = looped(program(f, f32(2, 9, 2 * V).astype(dtype)))
    run = PROGRAMS[key]
    x = f32(lead, n, cols, seed=seed).astype(dtype)
    before = len(run.runtime.vectorised)
    rtol, atol = TOL[dtype]
    close(run(x), f(x), rtol=rtol, atol=atol)
    assert len(run.runtime.vectorised) - before == (0 if extra_col else 1)


NVRTC = nvrtc_module()


@pytest.mark.skipif(NVRTC is None, reason="NVRTC wheels (cupy-cuda12x, "
                    "nvidia-cuda-nvrtc-cu12) not installed")
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64],
                         ids=["f16", "f32", "f64"])
def test_nvrtc_column_vec_variant_moves_128_bits(dtype):
    """NVRTC's PTX of the column kernels' SS_VEC variant: 128-bit loads of the input
    (``ld.global.nc.v4`` of 32-bit words or ``.v2`` of 64-bit ones), 128-bit stores of the
    elementwise outputs and per-column results, no local memory; the scalar variant has
    no vector access."""
    v128 = r"\.v(4\.[ubf]32|2\.[ubf]64)"
    for f, extra in [(col_sum, 0), (column_softmax, 0), (column_norm, 1)]:
        k = _kernel(program(f, *_args((16, 8), dtype, extra)))
        ptx = nvrtc_ptx(k, vec=True, nvrtc=NVRTC)
        assert re.search(r"ld\.global\.nc" + v128, ptx), (f, dtype)
        assert re.search(r"st\.global" + v128, ptx), (f, dtype)
        assert ".local" not in ptx
        scalar = nvrtc_ptx(k, nvrtc=NVRTC)
        assert not re.search(r"(ld|st)\.global(\.nc)?\.v[24]", scalar)
