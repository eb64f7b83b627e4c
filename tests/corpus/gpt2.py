"""A GPT-2-style forward pass as functions over a dict of parameters (module-level)."""
import numpy as np

rng = np.random.default_rng(7)
VOCAB, D_MODEL, N_HEAD, N_CTX, N_LAYER = 61, 16, 2, 40, 2


def _block_params():
    def lin(i, o):
        return {"w": rng.standard_normal((i, o)) * 0.2, "b": rng.standard_normal(o) * 0.1}
    return {"ln_1": {"g": np.ones(D_MODEL), "b": np.zeros(D_MODEL)},
            "attn": {"c_attn": lin(D_MODEL, 3 * D_MODEL), "c_proj": lin(D_MODEL, D_MODEL)},
            "ln_2": {"g": np.ones(D_MODEL), "b": np.zeros(D_MODEL)},
            "mlp": {"c_fc": lin(D_MODEL, 4 * D_MODEL), "c_proj": lin(4 * D_MODEL, D_MODEL)}}


params = {"wte": rng.standard_normal((VOCAB, D_MODEL)) * 0.3,
          "wpe": rng.standard_normal((N_CTX, D_MODEL)) * 0.1,
          "blocks": [_block_params() for _ in range(N_LAYER)],
          "ln_f": {"g": np.ones(D_MODEL), "b": np.zeros(D_MODEL)}}


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(var + eps) + b


def linear(x, w, b):
    return x @ w + b


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, c_attn, c_proj, n_head):
    x = linear(x, **c_attn)
    qkv = np.split(x, 3, axis=-1)
    qkv_heads = list(map(lambda a: np.split(a, n_head, axis=-1), qkv))
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    return linear(np.hstack(out_heads), **c_proj)


def ffn(x, c_fc, c_proj):
    return linear(gelu(linear(x, **c_fc)), **c_proj)


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head):
    x = x + mha(layer_norm(x, **ln_1), **attn, n_head=n_head)
    return x + ffn(layer_norm(x, **ln_2), **mlp)


def gpt2(inputs):
    """Logits for a sequence of token ids (``inputs``: int array of any length <= N_CTX)."""
    x = params["wte"][inputs] + params["wpe"][range(len(inputs))]
    for block in params["blocks"]:
        x = transformer_block(x, **block, n_head=N_HEAD)
    x = layer_norm(x, **params["ln_f"])
    return x @ params["wte"].T
