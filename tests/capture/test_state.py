"""Model state: weights and caches reached through globals, closures, parameter dicts and
objects export unmodified, are named by their paths, are never copied, are written in place
by module() and compiled code, and every user object is restored after tracing."""
import copy
import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from corpus import gpt2, llama  # noqa: E402

RNG = np.random.default_rng(11)
A = Dim.AUTO


# --------------------------------------------------------------------------- corpus models
def test_gpt2_over_a_params_dict_exports_with_a_dynamic_sequence():
    ids = RNG.integers(0, gpt2.VOCAB, 6)
    ep = ss.export(gpt2.gpt2, (ids,), dynamic_shapes={"inputs": (Dim("seq", max=gpt2.N_CTX),)})
    assert str(ep.input_shapes["inputs"]) == "(s0,)"
    assert ep.range_constraints[next(iter(ep.range_constraints))].upper == gpt2.N_CTX
    assert ep.state["params['wte']"] is gpt2.params["wte"]
    assert "params['blocks'][1]['attn']['c_attn']['w']" in ep.state
    run = ep.module()
    for n in (2, 3, 5, 17, 40):
        ids = RNG.integers(0, gpt2.VOCAB, n)
        np.testing.assert_allclose(run(ids), gpt2.gpt2(ids), rtol=1e-12, atol=1e-12)
    assert isinstance(gpt2.params["wte"], np.ndarray)      # restored


def test_llama_prefill_and_decode_write_the_kv_cache_in_place():
    ref = llama.Llama()
    model, eager = copy.deepcopy(ref), copy.deepcopy(ref)
    toks = RNG.integers(0, 50, (2, 5))
    seq, batch = Dim("seq", max=48), Dim("batch", min=1, max=4)
    prefill = ss.export(model.forward, (toks, 0),
                        dynamic_shapes={"tokens": (batch, seq), "start_pos": None})
    assert prefill.state["self.layers[0].attention.cache_k"] is \
        model.layers[0].attention.cache_k
    kinds = {s.target: s.kind for s in prefill.graph_signature.output_specs}
    assert kinds["self.layers[1].attention.cache_v"] == "STATE_MUTATION"
    run = prefill.module()
    for b, n in ((1, 2), (2, 3), (3, 7), (4, 16), (2, 40)):
        t = RNG.integers(0, 50, (b, n))
        np.testing.assert_allclose(run(t, 0), eager.forward(t, 0), rtol=1e-10, atol=1e-12)
        for mine, theirs in zip(model.layers, eager.layers):
            np.testing.assert_allclose(mine.attention.cache_k, theirs.attention.cache_k,
                                       rtol=1e-12, atol=1e-12)
    # the decode step: one token at a dynamic cache position
    model, eager = copy.deepcopy(ref), copy.deepcopy(ref)
    prompt = RNG.integers(0, 50, (1, 6))
    model.forward(prompt, 0)
    eager.forward(prompt, 0)
    step = ss.export(model.forward, (prompt[:, :1], 6),
                     dynamic_shapes={"tokens": None, "start_pos": Dim("pos", max=47)})
    decode = step.module()
    for pos in range(6, 14):
        t = RNG.integers(0, 50, (1, 1))
        np.testing.assert_allclose(decode(t, pos), eager.forward(t, pos), rtol=1e-10,
                                   atol=1e-12)
    np.testing.assert_allclose(model.layers[1].attention.cache_v,
                               eager.layers[1].attention.cache_v, rtol=1e-12, atol=1e-12)
    compiled = step.compile()
    for pos in range(14, 17):
        t = RNG.integers(0, 50, (1, 1))
        np.testing.assert_allclose(compiled(t, pos), eager.forward(t, pos), rtol=1e-10,
                                   atol=1e-12)


def test_jit_compiles_the_gpt2_forward_once_for_every_prompt_length():
    cf = ss.compile(gpt2.gpt2, dynamic=True)
    for n in (3, 5, 9, 12, 30):
        ids = RNG.integers(0, gpt2.VOCAB, n)
        np.testing.assert_allclose(cf(ids), gpt2.gpt2(ids), rtol=1e-12, atol=1e-12)
    assert len(cf.variants) == 1 and not cf.recompile_reasons


# --------------------------------------------------------------------------- styles
W_GLOBAL = RNG.standard_normal((7, 3))
CACHE = np.zeros((10, 3))


def test_module_globals_indexed_by_traced_arrays_and_written():
    def f(ids, pos):
        h = W_GLOBAL[ids]
        CACHE[pos:pos + 2] = h
        return CACHE[:pos + 2].sum(axis=0)

    ep = ss.export(f, (np.array([1, 2]), 3), dynamic_shapes={"ids": None,
                                                             "pos": Dim("pos", max=8)})
    sig = ep.graph_signature
    assert sig.lifted_constants == ["W_GLOBAL"] and sig.state == ["W_GLOBAL", "CACHE"]
    assert ep.state["CACHE"] is CACHE
    before = CACHE.copy()
    got = ep.module()(np.array([4, 0]), 5)
    after = CACHE.copy()
    CACHE[:] = before
    want = f(np.array([4, 0]), 5)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(after, CACHE)
    CACHE[:] = 0


def test_closures_callable_objects_dataclasses_and_tuples():
    @dataclasses.dataclass(frozen=True)
    class Norm:
        gamma: np.ndarray
        beta: np.ndarray

    Pair = namedtuple("Pair", "w b")

    def make():
        emb = RNG.standard_normal((9, 4))
        layers = (Pair(RNG.standard_normal((4, 4)), RNG.standard_normal(4)),
                  Pair(RNG.standard_normal((4, 4)), RNG.standard_normal(4)))
        norm = Norm(np.ones(4) * 2, np.zeros(4) + 0.5)

        def forward(ids):
            x = emb[ids]
            for layer in layers:
                x = np.tanh(x @ layer.w + layer.b)
            return x * norm.gamma + norm.beta
        return forward, (emb, layers, norm)

    forward, held = make()
    ids = RNG.integers(0, 9, 5)
    ep = ss.export(forward, (ids,), dynamic_shapes={"ids": (A,)})
    assert set(ep.state) == {"emb", "layers[0][0]", "layers[0][1]", "layers[1][0]",
                             "layers[1][1]", "norm.gamma", "norm.beta"}
    assert forward.__closure__[0].cell_contents is held[0] or \
        any(c.cell_contents is held[0] for c in forward.__closure__)
    for n in (2, 6, 11):
        ids = RNG.integers(0, 9, n)
        np.testing.assert_array_equal(ep.module()(ids), forward(ids))

    class Embedder:
        def __init__(self):
            self.table = {"tok": RNG.standard_normal((12, 3))}

        def __call__(self, ids):
            return self.table["tok"][ids].sum(axis=0)

    emb = Embedder()
    ep = ss.export(emb, (np.array([1, 5, 7]),), dynamic_shapes=({0: A},))
    assert list(ep.state) == ["self.table['tok']"]
    np.testing.assert_array_equal(ep.module()(np.array([3, 3, 4, 11])),
                                  emb(np.array([3, 3, 4, 11])))


def test_everything_is_restored_also_when_tracing_raises():
    params = {"w": RNG.standard_normal((3, 3)), "layers": [RNG.standard_normal(3)],
              "pair": (RNG.standard_normal(2), 1)}
    snapshot = {"w": params["w"], "l0": params["layers"][0], "pair": params["pair"]}

    class M:
        def __init__(self):
            self.w = RNG.standard_normal((3, 3))

        def forward(self, x):
            y = x @ self.w @ params["w"] + params["layers"][0]
            if y.sum() > 0:            # data-dependent: raises while tracing
                return y
            return -y

    m = M()
    w = m.w
    with pytest.raises(ss.GuardOnDataDependentError):
        ss.export(m.forward, (np.ones((2, 3)),))
    assert m.w is w and type(m.w) is np.ndarray
    assert params["w"] is snapshot["w"] and params["layers"][0] is snapshot["l0"]
    assert params["pair"] is snapshot["pair"]
    assert "len" not in globals() and "range" not in globals()
    assert np.zeros is np.zeros and "routes" not in dir(np.zeros)
    assert not hasattr(np.zeros, "symshape_routes") and not hasattr(np.tri, "symshape_routes")


def test_state_survives_save_and_load(tmp_path):
    table = RNG.standard_normal((6, 2))
    buf = np.zeros((8, 2))

    def f(ids, pos):
        buf[pos:pos + 1] = table[ids].sum(axis=0, keepdims=True)
        return buf.sum()

    ep = ss.export(f, (np.array([1, 2, 3]), 2),
                   dynamic_shapes={"ids": (A,), "pos": Dim("pos", min=0, max=7)})
    path = tmp_path / "p.json"
    ss.save(ep, path)
    loaded = ss.load(path)
    assert list(loaded.state) == ["table", "buf"]
    np.testing.assert_array_equal(loaded.state["table"], table)
    assert loaded.state["buf"] is not buf            # the loaded program owns its state
    ids = np.array([0, 5])
    got = loaded.module()(ids, 4)
    want = f(ids, 4)
    assert got == want
    np.testing.assert_array_equal(loaded.state["buf"], buf)
    kinds = [s.kind for s in loaded.graph_signature.output_specs]
    assert kinds == ["USER_OUTPUT", "STATE_MUTATION"]
