"""Conv-free pooling: mean over windows of 4 steps, then max over the windows."""
import numpy as np

import symshape as ss

blocks = ss.Dim("blocks", max=256)   # the sequence is 4*blocks steps long


@ss.exportable(example_inputs=(np.ones((3, 32, 8), np.float32),),
               dynamic_shapes={"x": (ss.Dim.AUTO, 4 * blocks, None)})
def pool(x):
    """x: (batch, 4*blocks, 8) -> (batch, 8)."""
    b, n, c = x.shape
    windows = x.reshape(b, n // 4, 4, c).mean(axis=2)
    return windows.max(axis=1)
