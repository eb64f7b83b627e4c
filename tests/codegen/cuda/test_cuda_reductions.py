"""Reduction kernels of backend="cupy" under the emulator: every launch geometry (a warp per
short row, a block per long row, rows in registers or looped over, a lane per row when the
last axis is kept) against NumPy, at sizes around each switch."""
import re
import shutil

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.emulate import emulate
from symshape.codegen.cuda.kernels import ROW_ITEMS, WARP_ROW

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
A = Dim.AUTO


def f32(*shape, seed=0):
    return np.random.default_rng(seed + 3 * sum(shape)).standard_normal(shape).astype(
        np.float32)


def program(f, *args):
    ep = ss.export(f, args, dynamic_shapes=[tuple(A for _ in a.shape) for a in args])
    return compile_cupy(ep)


def close(got, want, rtol=2e-5, atol=2e-5):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def layer_norm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def rms_norm(x, g):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * g


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


ROW_LENGTHS = [2, 31, 32, 33, WARP_ROW - 1, WARP_ROW, WARP_ROW + 1, 64 * ROW_ITEMS,
               64 * ROW_ITEMS + 1, 512 * ROW_ITEMS, 512 * ROW_ITEMS + 1, 5000]


@pytest.mark.parametrize("f,extra", [(softmax, 0), (layer_norm, 2), (rms_norm, 1)],
                         ids=["softmax", "layer_norm", "rms_norm"])
def test_row_kernels_at_every_switch(f, extra):
    c = program(f, *([f32(4, 16)] + [f32(16)] * extra))
    assert len(c.kernels) == 1 and not c.kernels[0].columns
    run = emulate(c)
    for n in ROW_LENGTHS:
        rows = 3 if n > 1000 else 19
        args = [f32(rows, n)] + [f32(n, seed=i + 1) for i in range(extra)]
        close(run(*args), f(*args))
    blocks = sorted({b for _, _, b, _ in run.runtime.launches})
    assert blocks == [64, 128, 256, 512]


def variant(src, vec=False):
    """The source of the row kernels' scalar (or, ``vec``, the SS_VEC) variant."""
    out, state = [], None
    for line in src.splitlines():
        t = line.strip()
        if t == "#ifdef SS_VEC":
            state = "vec"
        elif state and t == "#else":
            state = "scalar"
        elif state and t == "#endif":
            state = None
        elif state is None or (state == "vec") == vec:
            out.append(line)
    return "\n".join(out)


def test_row_kernel_source_loads_each_row_once():
    k = program(layer_norm, f32(4, 16), f32(16), f32(16)).kernels[0]
    for vec in (False, True):
        src = variant(k.source, vec)
        cached = src.split("if (ss_inreg) {")[1].split("} else {")[0]
        assert cached.count("= in_x[") == 1 if not vec else \
            cached.count("= *(const uint4*)&in_x[") == 1   # x: loaded once into registers
        assert "rc0[ss_k]" in cached and "__shfl_xor_sync" in src
        # 2 reductions in registers; one merged phase (mean and variance) when looped
        assert src.count("__syncthreads();") == 3
        assert src.count("__shared__") == 1


COLUMN_CASES = [
    ("sum_axis0", lambda x: x.sum(axis=0), [(7, 5), (100, 33), (3, 70)]),
    ("mean_axis1_of_3d", lambda x: x.mean(axis=1), [(2, 9, 5), (3, 70, 40)]),
    ("center_columns", lambda x: x - x.mean(axis=0, keepdims=True), [(9, 40), (65, 3)]),
    ("standardize", lambda x: (x - x.mean(axis=0)) / np.sqrt(
        ((x - x.mean(axis=0)) ** 2).mean(axis=0) + 1e-5), [(9, 40), (130, 65)]),
    ("max_axes01", lambda x: x.max(axis=(0, 1)), [(2, 3, 37), (5, 7, 3)]),
]


@pytest.mark.parametrize("name,f,shapes", COLUMN_CASES, ids=[c[0] for c in COLUMN_CASES])
def test_column_reductions_are_coalesced_and_match(name, f, shapes):
    c = program(f, f32(*shapes[0]))
    k = [k for k in c.kernels if k.kind == "reduce"][0]
    assert k.columns and "ss_col" in k.source
    run = emulate(c)
    for shp in shapes:
        x = f32(*shp)
        close(run(x), f(x), rtol=1e-4, atol=1e-5)
    assert {b for _, _, b, _ in run.runtime.launches} == {256}


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(st.integers(2, 40), min_size=1, max_size=3),
       axes=st.sets(st.integers(0, 2), min_size=1),
       op=st.sampled_from(["sum", "max", "mean", "min", "any"]),
       seed=st.integers(0, 5))
def test_random_reductions_match_numpy(shape, axes, op, seed):
    axes = tuple(sorted(a for a in axes if a < len(shape))) or (0,)
    x = f32(*shape, seed=seed)

    def f(a):
        v = a > 0.3 if op == "any" else a
        return getattr(np, op)(v, axis=axes) * 1

    c = program(f, np.ones([s + 1 for s in shape], np.float32))
    close(emulate(c)(x), f(x), rtol=1e-4, atol=1e-5)


SPLIT_CASES = [
    ("softmax", softmax, 0),
    ("layer_norm", layer_norm, 2),
    ("row_sums", lambda x: (x.sum(axis=-1), x.max(axis=-1, keepdims=True) - x.mean()), 0),
]


@pytest.mark.parametrize("name,f,extra", SPLIT_CASES, ids=[c[0] for c in SPLIT_CASES])
def test_few_long_rows_are_split_across_blocks(name, f, extra):
    """A decode-time softmax (few rows, each longer than a block's registers hold) runs the
    split companion: every chunk of every row is a block, in one pass per phase plus one
    to write."""
    c = program(f, *([f32(4, 16)] + [f32(16)] * extra))
    k = [k for k in c.kernels if k.kind == "reduce"][0]
    assert k.split is not None and "ss_pass" in k.split.source
    run = emulate(c)
    n = 512 * ROW_ITEMS * 3 + 17                     # 4 chunks per row
    args = [f32(3, n)] + [f32(n, seed=i + 1) for i in range(extra)]
    close(run(*args), f(*args), rtol=1e-4, atol=1e-5)
    split = [l for l in run.runtime.launches if l[0] == k.split.name]
    # one pass per phase (softmax's max and sum, layer norm's mean and variance: one
    # merged phase) plus one to write
    assert len(split) == k.split.passes == len(
        [r for r in k.source.splitlines() if r.startswith("//   reduce:")]) - k.merged + 1
    assert k.merged == (0 if name == "row_sums" else 1)
    assert {(g, b) for _, g, b, _ in split} == {(3 * 4, 512)}
    # many long rows keep a block per row (every SM is busy anyway)
    run2 = emulate(c)
    args = [f32(300, 4200)] + [f32(4200, seed=i + 1) for i in range(extra)]
    close(run2(*args), f(*args), rtol=1e-4, atol=1e-5)
    assert all(l[0] != k.split.name for l in run2.runtime.launches)


def test_split_rows_propagate_nan_and_match_max():
    c = program(lambda x: x.max(axis=-1), f32(4, 16))
    x = f32(2, 9000)
    x[1, 7000] = np.nan
    got = emulate(c)(x)
    assert np.isnan(got[1]) and got[0] == x[0].max()


@pytest.mark.parametrize("shape,blocks", [((20000, 3), 40), ((9000, 100), 72),
                                          ((5000, 40), 20)])
def test_few_long_columns_are_split_across_blocks(shape, blocks):
    """x.sum(axis=0) over few columns used one block (32 columns each) for the whole
    array: the column split keeps the coalesced layout and gives each block one range of
    the reduced elements, about 528 blocks in all."""
    def f(x):
        return (x - x.mean(axis=0)) * 2 + x.max(axis=0)
    c = program(f, f32(8, 4))
    k = c.kernels[0]
    assert k.columns and k.split is not None and k.split.columns
    run = emulate(c)
    x = f32(*shape)
    close(run(x), f(x), rtol=1e-4, atol=1e-5)
    launches = [(g, b) for name, g, b, _ in run.runtime.launches if name == k.split.name]
    assert launches == [(blocks, 256)] * k.split.passes


def looped(c):
    """The emulated program with its row kernels' split companions removed, so few long
    rows run the looped kernel (one block per row, the row read from memory)."""
    for k in c.kernels:
        k.split = None
    return emulate(c)


def loop_part(k, vec=False):
    return variant(k.source, vec).split("if (ss_inreg) {")[1].split("\n    } else {")[1]


def test_long_rows_merge_softmax_and_variance_phases():
    """Rows longer than the registers hold are read once per merged phase: softmax reads
    the row twice (max and sum of exp online, then the write), layer norm twice (sum and
    Welford's moments, then the write), RMS norm twice (its one sum, then the write)."""
    for f, extra, merged in [(softmax, 0, "ss_online_merge"), (layer_norm, 2, "ss_welford_merge"),
                             (rms_norm, 1, None)]:
        k = program(f, *([f32(4, 16)] + [f32(16)] * extra)).kernels[0]
        for vec in (False, True):
            body = loop_part(k, vec)
            assert body.count("= in_x[" if not vec else "= *(const uint4*)&in_x[") == 2
            assert body.count("__syncthreads();") == 1
            if merged:
                assert merged in body and merged not in variant(k.source, vec).split(
                    "if (ss_inreg) {")[1].split("\n    } else {")[0]


LONG = [4097, 5000, 9001]


@pytest.mark.parametrize("f,extra", [(softmax, 0), (layer_norm, 2), (rms_norm, 1)],
                         ids=["softmax", "layer_norm", "rms_norm"])
def test_long_rows_match_numpy(f, extra):
    """The looped kernel (few rows, split companion removed) at lengths past the register
    limit, with an offset of 1000 that would make a one-pass sum of squares cancel.  At
    that offset the float32 mean itself (a sum in another order than NumPy's) is off by
    about 1e-7 * 1000 = 1e-4, hence the wider absolute tolerance there."""
    c = program(f, *([f32(4, 16)] + [f32(16)] * extra))
    run = looped(c)
    for n in LONG:
        for shift in (0.0, 1000.0):
            args = [f32(3, n) + np.float32(shift)] + [f32(n, seed=i + 1) for i in range(extra)]
            close(run(*args), f(*args), rtol=1e-4, atol=1e-3 if shift else 1e-5)
    assert {b for _, _, b, _ in run.runtime.launches} == {512}


def test_online_softmax_sum_accuracy():
    """The online (rescaled) float32 sum of exp(x - max) against a float64 reference: within
    1e-6 relative (measured: up to 2.3e-7; NumPy up to 1.8e-7)."""
    def lse(x):
        return np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1)

    run = looped(program(lse, f32(4, 16)))
    for n in LONG:
        for scale in (1, 10):
            x = f32(3, n) * np.float32(scale)
            truth = lse(x.astype(np.float64))
            assert np.max(np.abs(run(x) - truth) / truth) < 1e-6


def test_welford_variance_accuracy():
    """Against a float64 reference, at an offset of 1000 (the case a one-pass sum of squares
    loses): the merged float32 variance is within 1e-5 relative (measured: 1e-6 to 3e-6;
    NumPy's two-pass: 1e-7)."""
    def var(x):
        return ((x - x.mean(axis=-1, keepdims=True)) ** 2).mean(axis=-1)

    run = looped(program(var, f32(4, 16)))
    for n in LONG:
        x = f32(3, n) + np.float32(1000)
        truth = var(x.astype(np.float64))
        assert np.max(np.abs(run(x) - truth) / truth) < 1e-5


@pytest.mark.parametrize("path", ["looped", "split"])
def test_online_softmax_special_values(path):
    """Rows with -inf (masked attention), a row of -inf only (NaN, as NumPy), +inf and NaN
    (NaN rows), and a maximum that grows element by element (a rescale per element); in
    the looped kernel and in the split companion (chunk partials merged across blocks)."""
    c = program(softmax, f32(4, 16))
    run = looped(c) if path == "looped" else emulate(c)
    n = 4500
    x = f32(6, n)
    x[0, ::3] = -np.inf
    x[0, :7] = -np.inf
    x[1] = -np.inf
    x[2, 4000] = np.inf
    x[3, 17] = np.nan
    x[4] = np.linspace(-50, 50, n, dtype=np.float32)
    x[5] = np.linspace(80, -80, n, dtype=np.float32)
    with np.errstate(invalid="ignore"):
        want = softmax(x)
    got = run(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("path", ["looped", "split"])
def test_welford_variance_special_values(path):
    """A variance with NaN, inf and an overflowing float32 sum (mean inf, variance inf as
    NumPy) in long rows; float64 too; looped and split."""
    def var(x):
        return ((x - x.mean(axis=-1, keepdims=True)) ** 2).mean(axis=-1)

    for dt in (np.float32, np.float64):
        c = program(var, f32(4, 16).astype(dt))
        assert "ss_welford_merge" in c.kernels[0].source
        run = looped(c) if path == "looped" else emulate(c)
        x = f32(5, 4300).astype(dt)
        x[1, 5] = np.nan
        x[2, 9] = np.inf
        x[3] = np.finfo(dt).max / 2
        x[4] *= 1e3
        with np.errstate(invalid="ignore", over="ignore"):
            want = var(x)
        got = run(x)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        ok = np.isfinite(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4)


TOL = {np.float16: (2e-2, 2e-3), np.float32: (1e-4, 1e-5), np.float64: (1e-10, 1e-12)}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("f,extra", [(softmax, 0), (layer_norm, 2)], ids=["softmax", "layer_norm"])
def test_row_kernels_load_128_bits_when_rows_allow(f, extra, dtype):
    """Rows whose length is a multiple of the vector width (8 float16, 4 float32, 2 float64)
    on 16-byte aligned arrays run the SS_VEC variant: each thread loads chunks of 16 bytes
    (in registers or looped); other lengths and misaligned arrays the scalar one."""
    c = program(f, *[a.astype(dtype) for a in [f32(4, 16)] + [f32(16)] * extra])
    k = c.kernels[0]
    width = min(16 // np.dtype(dtype).itemsize, ROW_ITEMS)
    assert k.vec == width and "#ifdef SS_VEC" in k.source
    run = looped(c)
    rtol, atol = TOL[dtype]
    lengths = [40, 44, 1000, 4096, 4100, 5000]
    for n in lengths:
        args = [f32(3, n).astype(dtype)] + [f32(n, seed=i + 1).astype(dtype)
                                            for i in range(extra)]
        close(run(*args), f(*args), rtol=rtol, atol=atol)
    assert len(run.runtime.vectorised) == len([n for n in lengths if n % width == 0])
    # a contiguous but misaligned array (4 bytes past a 16-byte boundary): scalar variant
    base = f32(3 * 64 + 8).astype(dtype)
    x = base[1:1 + 3 * 64].reshape(3, 64)
    if x.ctypes.data % 16:
        args = [x] + [f32(64, seed=i + 1).astype(dtype) for i in range(extra)]
        before = len(run.runtime.vectorised)
        close(run(*args), f(*args), rtol=rtol, atol=atol)
        assert len(run.runtime.vectorised) == before


VARIANTS = {"scalar": [], "index64": ["SS_INDEX64"], "vec": ["SS_VEC"],
            "strided": ["SS_STRIDED"], "strided64": ["SS_STRIDED", "SS_INDEX64"]}


def _ptxas_report(kernels, variants=VARIANTS):
    """``nvcc -cubin -Xptxas -v`` (sm_90) of every variant the driver can launch of each
    kernel (or of ``variants``), compiled as renamed copies in one translation unit:
    {(kernel position, variant): (registers, spill bytes)}."""
    import os
    import subprocess
    import tempfile
    parts = []
    for i, k in enumerate(kernels):
        for name, macros in variants.items():
            src = k.source.replace(" %s(" % k.name, " ss_p%d_%s(" % (i, name))
            parts += ["#define %s" % m for m in macros] + [src] + \
                ["#undef %s" % m for m in macros] + ["#undef SS_OFF"]
    with tempfile.TemporaryDirectory() as d:
        cu = os.path.join(d, "k.cu")
        with open(cu, "w") as fh:
            fh.write("\n".join(parts))
        r = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "--fmad=false", "-Xptxas", "-v",
                            "-o", os.path.join(d, "k.cubin"), cu], capture_output=True,
                           text=True)
    assert r.returncode == 0, r.stderr
    out = {}
    for block in r.stderr.split("Compiling entry function")[1:]:
        m = re.match(r"\s*'ss_p(\d+)_(\w+)'", block)
        regs = int(re.search(r"Used (\d+) registers", block).group(1))
        spill = sum(int(x) for x in re.findall(r"(\d+) bytes spill", block))
        out[int(m.group(1)), m.group(2)] = (regs, spill)
    return out


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_row_kernels_fit_64_registers_without_spills():
    """softmax, layer norm and RMS norm (row kernel and split companion): every variant the
    driver launches (32/64-bit indices, 128-bit loads, strided inputs) stays within 64
    registers (two 512-thread blocks per SM) with no spills."""
    kernels = []
    for f, extra in [(softmax, 0), (layer_norm, 2), (rms_norm, 1)]:
        k = program(f, *([f32(4, 16)] + [f32(16)] * extra)).kernels[0]
        kernels += [k, k.split]
    for f, extra in [(column_softmax, 0), (column_norm, 1)]:      # merged column phases
        k = program(f, *([f32(16, 4)] + [f32(4)] * extra)).kernels[0]
        kernels += [k, k.split]
    report = _ptxas_report(kernels)
    assert len(report) == len(kernels) * len(VARIANTS)
    for (i, name), (regs, spill) in sorted(report.items()):
        assert regs <= 64 and spill == 0, (kernels[i].name, name, regs, spill)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_column_vec_variants_fit_64_registers_without_spills():
    """The column kernels' SS_VEC variant (V columns per lane: 8 float16, 4 float32, 2
    float64) of sums, softmax, norms and centring, in every float dtype, and their scalar
    variant: within 64 registers, no spills."""
    kernels = []
    for f, extra in [(column_softmax, 0), (column_norm, 1), (lambda x: x.sum(axis=0), 0),
                     (lambda x: x - x.mean(axis=0, keepdims=True), 0)]:
        for dt in (np.float16, np.float32, np.float64):
            k = program(f, *[a.astype(dt) for a in [f32(16, 4)] + [f32(4)] * extra]).kernels[0]
            assert k.columns and k.vec == 16 // np.dtype(dt).itemsize
            kernels.append(k)
    variants = {"scalar": [], "vec": ["SS_VEC"]}
    report = _ptxas_report(kernels, variants)
    assert len(report) == len(kernels) * len(variants)
    for (i, name), (regs, spill) in sorted(report.items()):
        assert regs <= 64 and spill == 0, (kernels[i].name, name, regs, spill)


def column_softmax(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def column_norm(x, g):
    mu = x.mean(axis=0)
    var = ((x - mu) ** 2).mean(axis=0)
    return (x - mu) / np.sqrt(var + 1e-5) * g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("f,extra,kind", [(column_softmax, 0, "running max"),
                                          (column_norm, 1, "Welford")],
                         ids=["softmax", "norm"])
def test_long_columns_merge_phases(f, extra, kind, dtype):
    """Column reductions (the last axis kept) too long for registers merge a pair of
    reductions into one read of the column, as row kernels do: softmax's max and sum of
    exp (online), a norm's mean and squared deviations (Welford); the COL_SPLIT threads of
    a column combine the pair through shared memory.  Equal to NumPy on short columns (in
    registers), long ones (looped: the merged phase) and the split companion (few columns)."""
    c = program(f, *[a.astype(dtype) for a in [f32(16, 4)] + [f32(4)] * extra])
    k = [k for k in c.kernels if k.kind == "reduce"][0]
    assert k.columns and k.merged == 1
    loop = loop_part(k)
    assert "one read of the row" in loop and kind in loop
    rtol, atol = TOL[dtype]
    for shape in [(5, 7), (300, 40), (5000, 33), (9000, 3)]:
        args = [f32(*shape).astype(dtype)] + [f32(shape[1], seed=i + 1).astype(dtype)
                                               for i in range(extra)]
        close(emulate(c)(*args), f(*args), rtol=rtol, atol=atol)
        close(looped(c)(*args), f(*args), rtol=rtol, atol=atol)
