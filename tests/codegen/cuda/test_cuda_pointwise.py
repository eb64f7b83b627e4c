"""Pointwise kernels of backend="cupy": the 128-bit variant (each thread moves 16 bytes of
every array it reads or writes at its own elements) is chosen per call from the arrays'
alignment, handles the tail, keeps broadcast loads scalar, and matches NumPy."""
import re
import shutil

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.emulate import EmuRuntime, emulate
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


class _SmallGrid(EmuRuntime):
    """The emulator with every launch capped at ``blocks`` blocks: each thread then runs
    several iterations of its grid-stride loop, so stepped coordinates are exercised."""

    def __init__(self, kernels, blocks):
        super().__init__(kernels)
        self.blocks = blocks

    def launch(self, k, grid, block, *args, **kwargs):
        return super().launch(k, min(grid, self.blocks), block, *args, **kwargs)


def small_grid(prog, blocks=1):
    rt = _SmallGrid(prog.kernels, blocks)
    fn = prog.bind(rt)
    fn.runtime = rt
    return fn


@pytest.mark.parametrize("shape", [(7, 33, 5), (3, 100, 17), (3, 5, 300), (40, 2, 9)])
def test_grid_stride_steps_broadcast_coordinates(shape):
    """Scalar, strided and 128-bit variants step their coordinates by the grid stride with
    carries (no divide per element): with one or three blocks each thread takes many
    strides, crossing rows and planes; every element matches NumPy exactly."""
    def f(x, b, c):
        return x * b + c
    prog = program(f, rnd(4, 8, 6), rnd(8, 1), rnd(6))
    k = prog.kernels[0]
    assert "ss_d2" in k.source and "/ s2" not in k.source.split("#else")[-1].split("for (")[1]
    x, b, c = rnd(*shape), rnd(shape[1], 1, seed=1), rnd(shape[2], seed=2)
    want = f(x, b, c)
    for blocks in (1, 3):
        run = small_grid(prog, blocks)
        np.testing.assert_array_equal(run(x, b, c), want)              # 128-bit
        np.testing.assert_array_equal(run(x[:, :, ::1][1:], b, c), want[1:])
        xt = np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0)
        np.testing.assert_array_equal(run(xt, b, c), want)             # strided
        np.testing.assert_array_equal(run(x[..., :-1], b, c[:-1]), f(x[..., :-1], b, c[:-1]))
        assert run.runtime.vectorised and run.runtime.strided


def _ptx_loops(ptx):
    """The instruction lines of every loop in PTX: from a label to a later branch back
    to it."""
    lines = ptx.splitlines()
    labels = {}
    loops = []
    for i, l in enumerate(lines):
        m = re.match(r"^(\$L\w+):", l.strip())
        if m:
            labels[m.group(1)] = i
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L\w+);", l)
        if m and m.group(1) in labels:
            loops.append(lines[labels[m.group(1)]:i + 1])
    return loops


def kernel_ptx(k, **variant):
    nv = nvrtc_module()
    if nv is not None:
        return nvrtc_ptx(k, nvrtc=nv, **variant)
    import os
    import subprocess
    import tempfile
    flags = {"vec": "-DSS_VEC", "strided": "-DSS_STRIDED", "index64": "-DSS_INDEX64"}
    with tempfile.TemporaryDirectory() as d:
        cu = os.path.join(d, "k.cu")
        with open(cu, "w") as fh:
            fh.write(k.source)
        subprocess.run(["nvcc", "--ptx", "--fmad=false", "-arch=sm_80", "-o",
                        os.path.join(d, "k.ptx"), cu] +
                       [flags[v] for v, on in variant.items() if on], check=True)
        return open(os.path.join(d, "k.ptx")).read()


_INT_DIV = re.compile(r"\b(div|rem)\.[su](32|64)\b")


@pytest.mark.skipif(shutil.which("nvcc") is None and nvrtc_module() is None,
                    reason="neither nvcc nor NVRTC installed")
@pytest.mark.parametrize("variant", [{}, {"strided": True}, {"index64": True},
                                     {"index64": True, "strided": True}],
                         ids=["scalar", "strided", "scalar64", "strided64"])
def test_broadcast_loops_have_no_integer_division(variant):
    """The PTX of the scalar and strided variants of a 3-D broadcast: integer divides and
    modulos only before the grid-stride loop (the hoisted decodes), none inside it."""
    prog = program(lambda x, b, c: x * b + c, rnd(4, 8, 6), rnd(8, 1), rnd(6))
    ptx = kernel_ptx(prog.kernels[0], **variant)
    loops = _ptx_loops(ptx)
    assert loops and _INT_DIV.search(ptx)             # the hoisted decode divides
    for body in loops:
        assert not [l for l in body if _INT_DIV.search(l)], "\n".join(body)
