"""A GPT-2-style forward over a parameter dict whose blocks are called through a module
attribute (``layers.transformer_block``); positions are ``wpe[range(len(inputs))]``."""
import numpy as np

from . import blocks as layers

VOCAB, D, N_HEAD, N_CTX, N_LAYER = 50, 16, 2, 32, 2


def init_params(seed=3):
    rng = np.random.default_rng(seed)

    def w(*shape):
        return rng.standard_normal(shape) * 0.2

    def ln():
        return {"g": np.ones(D), "b": np.zeros(D)}
    return {"wte": w(VOCAB, D), "wpe": w(N_CTX, D), "ln_f": ln(),
            "blocks": [{"ln_1": ln(), "attn": {"w_qkv": w(D, 3 * D), "w_o": w(D, D)},
                        "ln_2": ln(), "ffn": {"w1": w(D, 4 * D), "w2": w(4 * D, D)}}
                       for _ in range(N_LAYER)]}


def gpt2(inputs, wte, wpe, blocks, ln_f, n_head):
    x = wte[inputs] + wpe[range(len(inputs))]
    for block in blocks:
        x = layers.transformer_block(x, **block, n_head=n_head)
    return layers.layer_norm(x, **ln_f) @ wte.T
