"""Strided inputs are read in place: a transposed, sliced, reversed or broadcast (stride 0)
array reaches the kernels without a copy, through the SS_STRIDED variant that indexes it
with its element strides; only views the kernels cannot index (strides not a multiple of the
item size, or an extent past the 32-bit index limit) are copied."""
import shutil

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.backend import kernel_input
from symshape.codegen.cuda.emulate import emulate

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
A = Dim.AUTO


def program(f, *args):
    return compile_cupy(ss.export(f, args, dynamic_shapes=[tuple(A for _ in a.shape)
                                                           for a in args]))


def rnd(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def bias_tanh(x, b):
    return np.tanh(x + b) * 2


VIEWS = {
    "transposed": lambda: rnd(13, 9).T,
    "sliced": lambda: rnd(12, 40)[1:10:2, 3:30],
    "reversed": lambda: rnd(9, 13)[::-1, ::-2],
    "broadcast": lambda: np.broadcast_to(rnd(1, 13), (9, 13)),
    "column": lambda: rnd(9, 13, 2)[:, :, 1],
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("f,extra", [(softmax, False), (bias_tanh, True)],
                         ids=["softmax", "bias_tanh"])
def test_strided_views_are_read_in_place(view, f, extra):
    c = program(f, *([rnd(4, 8)] + ([rnd(8)] if extra else [])))
    run = emulate(c)
    x = VIEWS[view]()
    assert not x.flags.c_contiguous
    args = [x] + ([rnd(9, seed=1)[::-1][:x.shape[1]] if x.shape[1] <= 9 else
                   rnd(2 * x.shape[1], seed=1)[::2]] if extra else [])
    np.testing.assert_allclose(run(*args), f(*args), rtol=1e-5, atol=1e-6)
    assert run.runtime.strided == [c.kernels[0].name]
    # the driver hands the array itself to the kernel: no copy was made
    kin = kernel_input(lambda a: pytest.fail("copied %s" % view))
    assert kin(x) is x


def test_contiguous_inputs_take_the_plain_variant():
    c = program(softmax, rnd(4, 8))
    run = emulate(c)
    x = rnd(9, 13)
    np.testing.assert_allclose(run(x), softmax(x), rtol=1e-5, atol=1e-6)
    assert not run.runtime.strided


def test_views_the_kernels_cannot_index_are_copied():
    kin = kernel_input(lambda a: "a contiguous copy")
    rec = np.zeros((6, 5), dtype=[("a", np.float32), ("b", np.int8)])
    odd = rec["a"]                          # strides of 5 bytes: not whole float32 items
    assert kin(odd) == "a contiguous copy"
    # an extent past 2**31 elements (never read here: the stand-in copy touches nothing)
    huge = np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), (3, 2), (2 ** 33, 4))
    assert kin(huge) == "a contiguous copy"


def test_strided_column_reduction():
    c = program(lambda x: x.mean(axis=0) + x.max(axis=0), rnd(8, 6))
    run = emulate(c)
    x = rnd(70, 40).T[::2]
    np.testing.assert_allclose(run(x), x.mean(axis=0) + x.max(axis=0), rtol=1e-5, atol=1e-6)
    assert run.runtime.strided
