"""Token-mixing MLP block (MLP-Mixer style) over a fixed 16-token grid."""
import numpy as np

import symshape as ss

TOKENS = 16
_rng = np.random.default_rng(2)
W_TOK = (_rng.standard_normal((TOKENS, TOKENS)) / 4).astype(np.float32)

batch, channels = ss.dims("batch", "channels", max=512)


@ss.exportable(example_inputs=(np.ones((4, TOKENS, 8), np.float32),),
               dynamic_shapes={"x": (batch, TOKENS, channels)})
def mix(x):
    """x: (batch, 16, channels) -> same shape, RMS-normalized."""
    mixed = np.swapaxes(x, 1, 2) @ W_TOK          # (batch, channels, 16)
    x = x + np.swapaxes(np.maximum(mixed, 0), 1, 2)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5)
