"""Transformer blocks of a small GPT-2-style model; names imported from NumPy by name, so
only routing this module's globals keeps their sizes symbolic."""
import functools

import numpy as np
from numpy import sqrt, tri, zeros


def traced_twice(fn):
    """A decorator, as model code writes them (the wrapper lives in this module)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(var + eps) + b


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@traced_twice
def attention(x, w_qkv, w_o, n_head):
    T, D = len(x), x.shape[1]
    causal = (1 - tri(len(x), dtype=x.dtype)) * -1e10
    qkv = x @ w_qkv
    heads = zeros((n_head, T, D // n_head), dtype=x.dtype)
    for h in range(n_head):
        lo, hi = h * (D // n_head), (h + 1) * (D // n_head)
        q, k, v = qkv[:, lo:hi], qkv[:, D + lo:D + hi], qkv[:, 2 * D + lo:2 * D + hi]
        heads[h] = softmax(q @ k.T / sqrt(D // n_head) + causal) @ v
    return heads.transpose(1, 0, 2).reshape(T, D) @ w_o


def mlp(x, w1, w2):
    h = x @ w1
    return (0.5 * h * (1 + np.tanh(0.79788456 * (h + 0.044715 * h * h * h)))) @ w2


def transformer_block(x, ln_1, attn, ln_2, ffn, n_head):
    x = x + attention(layer_norm(x, **ln_1), **attn, n_head=n_head)
    return x + mlp(layer_norm(x, **ln_2), **ffn)
