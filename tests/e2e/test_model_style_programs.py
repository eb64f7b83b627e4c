"""Differential fuzzing of model-style programs against eager NumPy (Hypothesis).

Each example builds a small model the way NumPy code is written (a class holding weights and
a cache, a loop over layers, a parameter dict, closures, in-place writes into views, sizes
used as values), exports it with every axis Dim.AUTO, and runs ``module()``, the compiled
NumPy code, the saved-and-loaded program and ``ss.compile`` on fresh shapes.  Each runner
must give eager NumPy's values, dtypes and shapes and leave the inputs and the model state
as eager NumPy leaves them; a runner may reject an input only with a ``UserError``, and only
when the shape leaves the exported contract (the example's ranges)."""
import copy
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import symshape as ss

A = ss.Dim.AUTO


def layer_relu(h, w, b):
    return np.maximum(h @ w + b, 0)


def layer_tanh_residual(h, w, b):
    return h + np.tanh(h @ w + b)


def layer_norm(h, w, b):
    mu = h.mean(axis=-1, keepdims=True)
    var = ((h - mu) ** 2).mean(axis=-1, keepdims=True)
    return (h - mu) / np.sqrt(var + 1e-5) * (w.sum(0) + 1) + b


def layer_softmax_mix(h, w, b):
    s = h @ w
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) + b


LAYERS = {"relu": layer_relu, "residual": layer_tanh_residual, "norm": layer_norm,
          "softmax": layer_softmax_mix}


class Model:
    """Weights in a list of dicts, a running cache written in place, sizes used as values."""

    def __init__(self, kinds, width, dtype, seed):
        rng = np.random.default_rng(seed)
        self.kinds = kinds
        self.blocks = [{"w": (rng.standard_normal((width, width)) / width).astype(dtype),
                        "b": rng.standard_normal(width).astype(dtype)} for _ in kinds]
        self.cache = np.zeros((len(kinds), width), dtype)

    def __call__(self, x, mask):
        n, d = x.shape
        h = x * d ** -0.5 + np.arange(n, dtype=x.dtype)[:, None] / n
        for i, (kind, p) in enumerate(zip(self.kinds, self.blocks)):
            h = LAYERS[kind](h, p["w"], p["b"])
            self.cache[i] += h.mean(axis=0)         # state written in place
        view = x[::2]
        view *= 0.5                                  # an in-place write into an input view
        h = np.where(mask[:, None], h, -h)
        return h, h.sum(axis=1).astype(np.float64) * n, (mask.sum(), x.T[-1].copy())


def _inputs(rng, n, width, dtype):
    return (rng.standard_normal((n, width)).astype(dtype), rng.random(n) > 0.4)


def _same(out, ref):
    out_l, ref_l = _leaves(out), _leaves(ref)
    assert len(out_l) == len(ref_l)
    for o, r in zip(out_l, ref_l):
        o, r = np.asarray(o), np.asarray(r)
        assert o.shape == r.shape and o.dtype == r.dtype, (o.shape, o.dtype, r.shape, r.dtype)
        tol = 1e-4 if r.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(o, r, rtol=tol, atol=tol)


def _leaves(v):
    if isinstance(v, (tuple, list)):
        return [y for x in v for y in _leaves(x)]
    return [v]


def _runner(kind, model, example, tmp_path):
    if kind == "jit":
        return ss.compile(model)
    ep = ss.export(model, copy.deepcopy(example), dynamic_shapes={"x": (A, None), "mask": (A,)})
    if kind == "module":
        return ep.module()
    if kind == "compile":
        return ep.compile()
    ss.save(ep, tmp_path / "model.json")
    loaded = ss.load(tmp_path / "model.json")
    # a loaded program holds its own copy of the state: its cache is the one written
    model.cache = loaded.state["self.cache"]
    return loaded.module()


@settings(max_examples=300 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 6,
          deadline=None, suppress_health_check=list(HealthCheck))
@given(kinds=st.lists(st.sampled_from(sorted(LAYERS)), min_size=1, max_size=3),
       width=st.integers(2, 5), n0=st.integers(2, 6),
       sizes=st.lists(st.integers(0, 9), min_size=1, max_size=3),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2 ** 16))
@pytest.mark.parametrize("kind", ["module", "compile", "loaded", "jit"])
def test_model_programs_match_eager(kind, kinds, width, n0, sizes, dtype, seed,
                                    tmp_path_factory):
    rng = np.random.default_rng(seed)
    example = _inputs(rng, n0, width, dtype)
    # the runner's model and its eager twin start equal; each call must keep them equal
    model, twin = Model(kinds, width, dtype, seed), Model(kinds, width, dtype, seed)
    run = _runner(kind, model, example, tmp_path_factory.mktemp("hostile"))
    for n in [n0] + sizes:
        call = _inputs(rng, n, width, dtype)
        mine, eager = copy.deepcopy(call), copy.deepcopy(call)
        try:
            with np.errstate(all="ignore"):
                out = run(*mine)
        except ss.UserError as e:
            # only sizes outside the exported ranges (0 and 1 specialize) are refused
            assert kind != "jit" and n < 2, (n, str(e))
            continue
        with np.errstate(all="ignore"):
            ref = twin(*eager)
        _same(out, ref)
        _same(mine, eager)                  # the in-place write into the input
        _same(model.cache, twin.cache)      # the in-place write into the model's state
