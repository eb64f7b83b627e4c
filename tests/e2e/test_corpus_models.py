"""Corpus models (a CNN with im2col by fancy indexing, an MLP with batch norm holding running
statistics) exported once with a dynamic batch: ep.module() and ep.compile() give what eager
NumPy gives on several shapes, and write the running statistics in place as eager does."""
import copy

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from corpus import cnn, mlp_bn  # noqa: E402

RNG = np.random.default_rng(21)

try:
    import numba  # noqa: F401
    NUMBA = "numba"
except ImportError:
    NUMBA = pytest.param("numba", marks=pytest.mark.skip("the numba extra is not installed"))
RUNS = ["module", "compile", NUMBA]


def runner(ep, run):
    """ep.module(), ep.compile() or ep.compile(backend="numba")."""
    if run == "module":
        return ep.module()
    return ep.compile(backend="numba") if run == "numba" else ep.compile()


def close(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


# --------------------------------------------------------------------------- CNN
@pytest.mark.parametrize("run", RUNS)
def test_cnn_with_im2col_matches_eager_for_every_batch(run):
    params = cnn.init_params(hw=16)
    x = RNG.standard_normal((2, 3, 16, 16))
    ep = ss.export(cnn.cnn, (x, params),
                   dynamic_shapes={"x": (Dim("batch", min=1), None, None, None),
                                   "params": None})
    fn = runner(ep, run)
    for n in (1, 2, 5, 8):
        x = RNG.standard_normal((n, 3, 16, 16))
        close(fn(x, params), cnn.cnn(x, params))


def test_cnn_image_size_is_static_and_says_so():
    params = cnn.init_params(hw=16)
    ep = ss.export(cnn.cnn, (RNG.standard_normal((2, 3, 16, 16)), params),
                   dynamic_shapes={"x": (Dim("batch"), None, None, None), "params": None})
    with pytest.raises(ss.UserError, match=r"x\.shape\[2\]"):
        ep.module()(RNG.standard_normal((2, 3, 8, 16)), params)


def test_cnn_jit_compiles_once_for_changing_batches():
    params = cnn.init_params(hw=8)
    cf = ss.compile(cnn.cnn)
    for n in (2, 3, 4, 6):
        x = RNG.standard_normal((n, 3, 8, 8))
        close(cf(x, params), cnn.cnn(x, params))
    assert len(cf.variants) == 2


# --------------------------------------------------------------------------- MLP + BN
@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("training", [True, False])
def test_mlp_batch_norm_matches_eager_and_updates_running_stats(run, training):
    model = mlp_bn.MLP((32, 64, 48, 10)).train(training)
    ref = copy.deepcopy(model)
    x = RNG.standard_normal((8, 32))
    ep = ss.export(model.forward, (x,), dynamic_shapes={"x": (Dim("batch"), None)})
    fn = runner(ep, run)
    for n in (2, 8, 3, 17):
        x = RNG.standard_normal((n, 32))
        close(fn(x), ref.forward(x))
        for layer, want in zip(model.layers, ref.layers):
            if isinstance(layer, mlp_bn.BatchNorm1d):
                close(layer.running_mean, want.running_mean)
                close(layer.running_var, want.running_var)


def test_mlp_batch_norm_float32_keeps_its_dtype():
    model = mlp_bn.MLP((16, 32, 4))
    for layer in model.layers:
        for k, v in vars(layer).items():
            if isinstance(v, np.ndarray):
                setattr(layer, k, v.astype(np.float32))
    ref = copy.deepcopy(model)
    x = RNG.standard_normal((6, 16)).astype(np.float32)
    fn = ss.export(model.forward, (x,), dynamic_shapes={"x": (Dim("batch"), None)}).compile()
    for n in (6, 9):
        x = RNG.standard_normal((n, 16)).astype(np.float32)
        got, want = fn(x), ref.forward(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
