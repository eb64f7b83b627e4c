"""Specs with fixable violations, in the forms users write them."""
import numpy as np

import symshape as ss
from symshape import Dim

W = np.ones((3, 4))

# batch dims come in threes
a, b, c = ss.dims("a", "b", "c", max=64)   # c must equal a


@ss.exportable(
    example_inputs=(np.ones((5, 2)), np.ones((7, 2)), np.ones((5, 2))),
    dynamic_shapes={"x": (a, None), "y": (b, None), "z": (c, None)},  # keep this comment
)
def addxz(x, y, z):
    return x + z, y


@ss.exportable(example_inputs=(np.ones((6, 3)),),
               dynamic_shapes={"x": (Dim.AUTO, Dim.DYNAMIC)})   # axis 1 meets W
def matmul(x):
    return x @ W


dx = Dim("dx")  # length of the flat signal


@ss.exportable(example_inputs=(np.ones(16),), dynamic_shapes={"x": (dx,)})
def fold(x):
    return x.reshape(4, -1)


@ss.exportable(example_inputs=(np.ones(5), np.ones(6)),
               dynamic_shapes={"x": (Dim("m"),), "y": (Dim("m1"),)})
def shifted(x, y):
    return x + y[1:]
