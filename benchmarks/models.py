"""Models shared by the benchmarks (and reusable in tests)."""
import os
import sys

import numpy as np

import symshape as ss
from symshape import Dim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from corpus import seeds  # noqa: E402

RNG = np.random.default_rng(0)
A = Dim.AUTO

# ---------------------------------------------------------------- seed example 10
seed10 = seeds.model10
SEED10_ARGS = seeds.ARGS10
SEED10_SPEC = {"w": (A, A), "x": (A,), "y": (A, A), "z": (A,)}

# ---------------------------------------------------------------- 2-layer MLP
MLP_W1 = RNG.standard_normal((64, 128)).astype(np.float32)
MLP_B1 = RNG.standard_normal(128).astype(np.float32)
MLP_W2 = RNG.standard_normal((128, 10)).astype(np.float32)
MLP_B2 = RNG.standard_normal(10).astype(np.float32)


def mlp(x):
    h = np.maximum(x @ MLP_W1 + MLP_B1, 0)
    return h @ MLP_W2 + MLP_B2


MLP_ARGS = (np.ones((8, 64), np.float32),)
MLP_SPEC = {"x": (Dim("batch"), None)}

# ---------------------------------------------------------------- transformer block
D, H = 64, 4
TB = {k: (RNG.standard_normal(s) * 0.1).astype(np.float32) for k, s in
      {"wq": (D, D), "wk": (D, D), "wv": (D, D), "wo": (D, D), "w1": (D, 4 * D),
       "w2": (4 * D, D), "g1": (D,), "b1": (D,), "g2": (D,), "b2": (D,)}.items()}


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def transformer_block(x):
    B, T, C = x.shape
    h = layer_norm(x, TB["g1"], TB["b1"])
    q = (h @ TB["wq"]).reshape(B, T, H, C // H).transpose(0, 2, 1, 3)
    k = (h @ TB["wk"]).reshape(B, T, H, C // H).transpose(0, 2, 1, 3)
    v = (h @ TB["wv"]).reshape(B, T, H, C // H).transpose(0, 2, 1, 3)
    att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(C // H)
    i = np.arange(T, like=x)
    causal = i[:, None] < i[None, :]
    att = softmax(np.where(causal, -1e9, att))
    y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    x = x + y @ TB["wo"]
    h = layer_norm(x, TB["g2"], TB["b2"])
    return x + gelu(h @ TB["w1"]) @ TB["w2"]


TB_ARGS = (np.ones((2, 16, D), np.float32),)
TB_SPEC = {"x": (Dim("batch"), Dim("seq"), None)}


# ---------------------------------------------------------------- GPU / fusion models
def seed23(X, Y):
    """Seed example 23: an elementwise product feeding a two-axis reduction."""
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


def ln_gelu(x, g, b):
    return gelu(layer_norm(x, g, b))


def mlp_layer(x, w, b):
    h = x @ w + b
    return np.maximum(h, 0) * 0.5 + np.tanh(h) ** 2


def bias_gelu(x, b):
    return gelu(x + b)
