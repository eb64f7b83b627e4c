"""The corpus models through ``backend="numba"``: what eager NumPy gives, and the object state
eager Python leaves (KV caches written in place and still the same arrays), on several sizes
from one export (the CNN and the MLP with batch norm run in ``test_corpus_models.py``).

Tolerances are the numba backend's accuracy contract at float64: math functions within a few
ulps and reordered row sums, so 1e-9 relative is far above what they can differ by.
"""
import copy
import os
import tempfile


import numpy as np
import pytest

pytest.importorskip("numba")
os.environ.setdefault("SYMSHAPE_NUMBA_CACHE", tempfile.mkdtemp(prefix="ss-numba-test-"))

import symshape as ss  # noqa: E402
from symshape import Dim  # noqa: E402

from corpus import gpt2, llama  # noqa: E402

RNG = np.random.default_rng(33)


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


def test_gpt2_forward_over_a_params_dict():
    ids = RNG.integers(0, gpt2.VOCAB, 6)
    ep = ss.export(gpt2.gpt2, (ids,), dynamic_shapes={"inputs": (Dim("seq", max=gpt2.N_CTX),)})
    run = ep.compile(backend="numba")
    for n in (2, 7, 33):
        ids = RNG.integers(0, gpt2.VOCAB, n)
        close(run(ids), gpt2.gpt2(ids))


def test_llama_prefill_then_decode_writes_the_same_cache_arrays():
    ref = llama.Llama()
    model, eager = copy.deepcopy(ref), copy.deepcopy(ref)
    caches = [(l.attention.cache_k, l.attention.cache_v) for l in model.layers]
    prefill = ss.export(model.forward, (RNG.integers(0, 50, (2, 5)), 0), dynamic_shapes={
        "tokens": (Dim("batch", min=1, max=4), Dim("seq", max=48)), "start_pos": None}
    ).compile(backend="numba")
    decode = ss.export(model.forward, (RNG.integers(0, 50, (1, 1)), 6), dynamic_shapes={
        "tokens": None, "start_pos": Dim("pos", max=47)}).compile(backend="numba")
    prompt = RNG.integers(0, 50, (1, 6))
    close(prefill(prompt, 0), eager.forward(prompt, 0))
    for pos in range(6, 12):
        t = RNG.integers(0, 50, (1, 1))
        close(decode(t, pos), eager.forward(t, pos))
        for mine, theirs in zip(model.layers, eager.layers):
            close(mine.attention.cache_k, theirs.attention.cache_k)
            close(mine.attention.cache_v, theirs.attention.cache_v)
    for (k, v), layer in zip(caches, model.layers):      # written in place, not rebound
        assert layer.attention.cache_k is k and layer.attention.cache_v is v
