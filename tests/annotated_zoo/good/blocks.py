"""Transformer-ish blocks annotated the way jaxtyping users write them."""
import numpy as np
from jaxtyping import Float, Int

import symshape as ss

rng = np.random.default_rng(0)
PARAMS = {
    "w1": rng.standard_normal((16, 32)).astype(np.float32),
    "b1": np.zeros(32, np.float32),
    "w2": rng.standard_normal((32, 16)).astype(np.float32),
}
TABLE = rng.standard_normal((100, 16)).astype(np.float32)


@ss.exportable(example_inputs=lambda: (np.ones((4, 10, 16), np.float32),))
def mlp(x: Float[np.ndarray, "batch seq 16"]) -> Float[np.ndarray, "batch seq 16"]:
    h = np.maximum(x @ PARAMS["w1"] + PARAMS["b1"], 0)
    return h @ PARAMS["w2"]


@ss.exportable(example_inputs=lambda: (np.ones((3, 5, 8), np.float32),))
def layer_norm(x: Float[np.ndarray, "*batch d"]) -> Float[np.ndarray, "*batch d"]:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5)


@ss.exportable(example_inputs=lambda: (np.ones((2, 12, 8), np.float32),))
def pool_pairs(x: Float[np.ndarray, "batch 2*n d"]) -> Float[np.ndarray, "batch n d"]:
    b, t, d = x.shape
    return x.reshape(b, t // 2, 2, d).mean(axis=2)


@ss.exportable(example_inputs=lambda: (np.zeros((2, 7), np.int64),))
def embed(ids: Int[np.ndarray, "batch seq"]) -> Float[np.ndarray, "batch seq 16"]:
    return TABLE[ids]


class Attention:
    """Weights held by an object; the method is annotated."""

    def __init__(self, d: int = 16) -> None:
        self.wq = rng.standard_normal((d, d)).astype(np.float32)
        self.wk = rng.standard_normal((d, d)).astype(np.float32)

    def scores(self, x: Float[np.ndarray, "batch seq 16"]
               ) -> Float[np.ndarray, "batch seq seq"]:
        q, k = x @ self.wq, x @ self.wk
        return q @ np.swapaxes(k, -1, -2) / 4.0


ATTN = Attention()
attention_scores = ss.exportable(example_inputs=lambda: (np.ones((2, 6, 16), np.float32),))(
    ATTN.scores)
