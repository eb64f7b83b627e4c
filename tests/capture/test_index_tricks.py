"""``np.c_``, ``np.r_`` and ``np.s_`` in traced code give exactly what eager NumPy gives (a
differential test over the index tricks real code writes, with a dynamic axis)."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import same

TRICKS = {
    "c_ 1-D and 2-D": lambda x: np.c_[np.sqrt(np.abs(x[:, 0])), x],
    "c_ two 1-D": lambda x: np.c_[x[:, 0], x[:, 1]],
    "c_ 2-D": lambda x: np.c_[x, x * 2],
    "c_ ones column": lambda x: np.c_[np.ones(x.shape[0]), x],
    "r_ 1-D": lambda x: np.r_[x[:, 0], x[:, 1]],
    "r_ with scalars": lambda x: np.r_[x[:, 0], 0.0, x[:, 1], 7],
    "r_ with a slice": lambda x: np.r_[1:4, x[:, 0]],
    "r_ 2-D rows": lambda x: np.r_[x, x],
    "r_ '0,2'": lambda x: np.r_['0,2', x[:, 0], x[:, 1]],
    "r_ '-1'": lambda x: np.r_['-1', x, x],
    "r_ '1,2,0'": lambda x: np.r_['1,2,0', x[:, 0], x[:, 1]],
    "s_ rows": lambda x: x[np.s_[1:3]],
    "s_ step and column": lambda x: x[np.s_[::2, 0]],
    "s_ ellipsis": lambda x: x[np.s_[..., 1]],
}


def _x(n):
    return (np.arange(n * 3, dtype=np.float64).reshape(n, 3) - 4.0,)


@pytest.mark.parametrize("name", sorted(TRICKS))
def test_index_trick_as_eager(name):
    f = TRICKS[name]
    ep = ss.export(f, _x(5), dynamic_shapes={"x": {0: Dim.AUTO}})
    m = ep.module()
    for n in (4, 5, 9):
        same(m(*_x(n)), f(*_x(n)))
