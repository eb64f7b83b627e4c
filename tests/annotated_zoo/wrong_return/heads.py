"""A return annotation that forgot the heads were merged into the last axis."""
import numpy as np
from jaxtyping import Float

import symshape as ss


@ss.exportable(example_inputs=lambda: (np.ones((2, 4, 6, 8), np.float32),))
def merge_heads(x: Float[np.ndarray, "batch heads seq dh"]
                ) -> Float[np.ndarray, "batch seq dh"]:
    b, h, s, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, s, h * d)
