"""Two exports that pass: keyword example inputs and lazily built examples."""
import numpy as np

import symshape as ss
from symshape import Dim

W = np.ones((8, 4), np.float32)
n = Dim("n", max=1024)


@ss.exportable(example_inputs=(np.ones((6, 8), np.float32),),
               dynamic_shapes={"x": (n, None)})
def project(x):
    return x @ W


@ss.exportable(example_inputs=lambda: (np.ones((5, 3)),),
               example_kwargs={"y": np.ones((5, 3))},
               dynamic_shapes={"x": (Dim.AUTO, Dim.AUTO), "y": (Dim.AUTO, Dim.AUTO)})
def add(x, y):
    return x + y
