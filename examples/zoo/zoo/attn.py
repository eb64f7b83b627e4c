"""Single-head self-attention with a padding mask.

Its spec is the zoo's broken one: ``symshape check examples/zoo`` reports two violations
and suggests the fixes that ``symshape check --fix examples/zoo`` writes back here.
"""
import numpy as np

import symshape as ss

MAX_TOKENS = 128
D = 16
_rng = np.random.default_rng(1)
WQ, WK, WV, WO = ((_rng.standard_normal((D, D)) / 4).astype(np.float32) for _ in range(4))

batch = ss.Dim("batch", max=64)
tokens = ss.Dim("tokens")            # promises any length; the block takes <= MAX_TOKENS
mask_tokens = ss.Dim("mask_tokens")  # declared apart from tokens, but must equal it


@ss.exportable(
    example_inputs=(np.ones((2, 10, D), np.float32), np.ones((2, 10), np.float32)),
    dynamic_shapes={"x": (batch, tokens, None), "mask": (batch, mask_tokens)},
)
def block(x, mask):
    """x: (batch, tokens, 16), mask: (batch, tokens) of 1.0 (keep) / 0.0 (padding)."""
    assert x.shape[1] <= MAX_TOKENS, "at most MAX_TOKENS tokens"
    q, k, v = x @ WQ, x @ WK, x @ WV
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(D)
    scores = scores + (1.0 - mask[:, None, :]) * -1e9
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p = p / p.sum(axis=-1, keepdims=True)
    return x + (p @ v) @ WO
