"""Loops over a symbolic count (issue 41) under ``backend="cupy"``, without a GPU: the
``for_loop`` node is a library step of the driver (a Python loop whose body's NumPy calls
run on CuPy; the kernels around it are generated as usual), and the driver run by the
emulator (CUDA C built for the CPU) equals eager NumPy at several counts, 0 included.
Skips where no C++ compiler is installed."""
import os
import shutil
import types

import numpy as np
import pytest

import symshape as ss
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.backend import _CupyRT
from symshape.codegen.cuda.emulate import emulate

from loop_programs import assert_same, leapfrog
from loop_programs import written_plus_one as written

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and not os.environ.get("CXX"),
                                reason="the CUDA emulator needs g++")
RNG = np.random.default_rng(9)
W = (RNG.standard_normal((4, 4)) * 0.4).astype(np.float32)
U = (RNG.standard_normal((4, 4)) * 0.4).astype(np.float32)


def elman(x):
    h = np.zeros(4, np.float32)
    outs = []
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h @ U)
        outs.append(h)
    return np.stack(outs) * 2.0, h


def cumulative(x):
    y = np.exp(x) - 1.0                 # a kernel before the loop
    acc = np.zeros(x.shape[1], x.dtype)
    for t in range(x.shape[0]):
        acc = acc + y[t] * 0.5
    return np.sqrt(acc * acc + 1.0)     # and one after it


def _same(got, want):
    assert_same(got, want, 1e-5, 1e-6)


@pytest.mark.parametrize("f, lo", [(elman, 1), (cumulative, 0), (written, 0)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_loop_programs_match_eager_under_the_emulator(f, lo):
    x0 = RNG.standard_normal((5, 4)).astype(np.float32)
    c = compile_cupy(ss.export(f, (x0,), dynamic_shapes={"x": {0: ss.Dim("T", min=lo)}}))
    assert "_rt.for_loop(" in c.source
    run = emulate(c)
    for n in sorted({lo, 1, 5, 37}):
        x = RNG.standard_normal((n, 4)).astype(np.float32)
        _same(run(x), f(x))


def test_kernels_around_the_loop_still_launch():
    x0 = RNG.standard_normal((5, 4)).astype(np.float32)
    c = compile_cupy(ss.export(cumulative, (x0,), dynamic_shapes={"x": {0: ss.Dim("T")}}))
    assert c.kernels
    run = emulate(c)
    _same(run(x0), cumulative(x0))
    assert run.runtime.launches


def test_count_from_an_integer_input():
    q, p = RNG.standard_normal(3), RNG.standard_normal(3)
    c = compile_cupy(ss.export(leapfrog, (q, p, 7, 0.1), dynamic_shapes={
        "q": None, "p": None, "n": ss.Dim("n", min=0), "dt": None}))
    run = emulate(c)
    for n in (0, 1, 5, 30):
        _same(run(q, p, n, 0.1), leapfrog(q, p, n, 0.1))


class _Dev(np.ndarray):
    """Stands for a CuPy array."""


def test_rows_of_a_loop_that_does_not_run_are_device_arrays():
    fake = types.SimpleNamespace(ndarray=_Dev, asarray=lambda v: np.asarray(v).view(_Dev))
    rt = _CupyRT(fake)

    def body(i, c):
        return c + 1, c * 2
    c, rows = rt.for_loop(body, 0, 0, 1, (np.zeros(3).view(_Dev),), (), ((3,),),
                                (np.dtype("f8"),))
    assert isinstance(rows, _Dev) and rows.shape == (0, 3)
    c, rows = rt.for_loop(body, 0, 2, 1, (np.zeros(3).view(_Dev),), (), ((3,),),
                                (np.dtype("f8"),))
    assert isinstance(rows, _Dev) and rows.shape == (2, 3) and c.tolist() == [2.0] * 3


def nested(x):
    acc = np.zeros(x.shape[1], x.dtype)
    for t in range(x.shape[0]):
        for j in range(x.shape[1]):
            acc[j] = acc[j] * np.float32(0.5) + x[t, j]
    return np.exp(acc)


def test_a_loop_inside_a_loop_and_writes_in_place():
    x0 = RNG.standard_normal((5, 4)).astype(np.float32)
    c = compile_cupy(ss.export(nested, (x0,), dynamic_shapes={
        "x": {0: ss.Dim("T", min=0), 1: ss.Dim("K", min=1)}}))
    run = emulate(c)
    for n, k in ((0, 3), (1, 1), (6, 5)):
        x = RNG.standard_normal((n, k)).astype(np.float32)
        _same(run(x), nested(x))
