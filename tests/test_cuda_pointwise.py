"""Pointwise kernels of backend="cupy": the 128-bit variant (each thread moves 16 bytes of
every array it reads or writes at its own elements) is chosen per call from the arrays'
alignment, handles the tail, keeps broadcast loads scalar, and matches NumPy."""
import shutil

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.emulate import emulate
from symshape.codegen.cuda.nvrtc import nvrtc_module, nvrtc_ptx

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
A = Dim.AUTO


def program(f, *args):
    return compile_cupy(ss.export(f, args, dynamic_shapes=[tuple(A for _ in a.shape)
                                                           for a in args]))


def bias_gelu(x, b):
    h = x + b
    return 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))


def rnd(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype,width", [(np.float32, 4), (np.float64, 2)])
def test_vector_variant_matches_and_covers_the_tail(dtype, width):
    c = program(bias_gelu, rnd(4, 8, dtype=dtype), rnd(8, dtype=dtype))
    k = c.kernels[0]
    assert k.kind == "pointwise" and k.vec == width
    assert "uint4" in k.source and "vb_in_x[ss_v]" in k.source
    assert "in_b[SS_OFF(c1, (c1 * in_b_st0))]" in k.source   # the broadcast bias: scalar
    run = emulate(c)
    for shape in [(3, 5), (7, 13), (2, 64), (1 + 1, 3)]:  # sizes off the vector width too
        x, b = rnd(*shape, dtype=dtype), rnd(shape[1], dtype=dtype, seed=1)
        np.testing.assert_allclose(run(x, b), bias_gelu(x, b), rtol=1e-5, atol=1e-6)
    assert len(run.runtime.vectorised) == 4


def test_mixed_widths_take_the_widest_element():
    c = program(lambda x, y: (x > y, x.astype(np.float64) * 2, (x + y).astype(np.int8)),
                rnd(5, 7), rnd(5, 7))
    k = c.kernels[0]
    assert k.vec == 2                                     # 16 bytes of float64
    run = emulate(c)
    x, y = rnd(9, 11), rnd(9, 11, seed=1)
    for g, w in zip(run(x, y), (x > y, x.astype(np.float64) * 2, (x + y).astype(np.int8))):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert run.runtime.vectorised


def test_misaligned_views_take_the_scalar_variant():
    c = program(lambda x: np.exp(x) * 2, rnd(16))
    run = emulate(c)
    base = rnd(65)
    x = base[1:]                                          # contiguous, 4 bytes off
    assert x.ctypes.data % 16 != 0
    np.testing.assert_allclose(run(x), np.exp(x) * 2, rtol=1e-6)
    assert not run.runtime.vectorised
    np.testing.assert_allclose(run(base[4:]), np.exp(base[4:]) * 2, rtol=1e-6)
    assert run.runtime.vectorised == [c.kernels[0].name] or base[4:].ctypes.data % 16


@pytest.mark.skipif(shutil.which("nvcc") is None and nvrtc_module() is None,
                    reason="neither nvcc nor NVRTC installed")
def test_vector_variant_compiles_to_128_bit_accesses():
    k = program(bias_gelu, rnd(4, 8), rnd(8)).kernels[0]
    nv = nvrtc_module()
    if nv is not None:
        ptx = nvrtc_ptx(k, vec=True, nvrtc=nv)
    else:
        import os
        import subprocess
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            cu = os.path.join(d, "k.cu")
            with open(cu, "w") as f:
                f.write(k.source)
            subprocess.run(["nvcc", "--ptx", "-DSS_VEC", "--fmad=false", "-arch=sm_80", "-o",
                            os.path.join(d, "k.ptx"), cu], check=True)
            ptx = open(os.path.join(d, "k.ptx")).read()
    assert "ld.global.nc.v4.u32" in ptx or "ld.global.v4.u32" in ptx
    assert "st.global.v4" in ptx


def test_vector_variant_steps_coordinates_across_rows():
    """The 128-bit variant decodes a thread's first coordinates once and steps them with a
    carry: chunks that cross one or several rows (last axis shorter than the chunk) stay
    exact, with broadcasts along middle and last axes."""
    def f(x, b, c):
        return x * b + c
    prog = program(f, rnd(4, 8, 6), rnd(8, 1), rnd(6))
    k = prog.kernels[0]
    assert "if (++c2 == s2) { c2 = 0; if (++c1 == s1) { c1 = 0; ++c0; } }" in k.source
    run = emulate(prog)
    for shape in [(5, 3, 2), (2, 2, 3), (7, 2, 5), (3, 9, 4), (2, 2, 2)]:
        x, b, c = rnd(*shape), rnd(shape[1], 1, seed=1), rnd(shape[2], seed=2)
        np.testing.assert_array_equal(run(x, b, c), f(x, b, c))
    assert len(run.runtime.vectorised) == 5
