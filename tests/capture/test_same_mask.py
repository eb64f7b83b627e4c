"""The same mask is the same size: two uses of one boolean expression select the same
number of elements, so a masked update ``a[a > 0] = a[a > 0] ** -1.5`` exports; two different
masks (or two random draws) keep two sizes."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import same


def _x(n, seed=0):
    return (np.random.default_rng(seed + n).standard_normal((n, 3)),)


def masked_power(x):
    a = x.copy()
    a[a > 0] = a[a > 0] ** -1.5
    return a


def masked_twice(x):
    m = np.abs(x) < 1.0
    y = x.copy()
    y[m] = np.sqrt(np.abs(x[m])) + x[np.abs(x) < 1.0]
    return y


def rows_masked(x):
    keep = x[:, 0] > 0
    out = np.zeros_like(x)
    out[keep] = x[keep] * 2
    return out


@pytest.mark.parametrize("f", [masked_power, masked_twice, rows_masked])
def test_same_mask_same_size(f):
    ep = ss.export(f, _x(6), dynamic_shapes={"x": {0: Dim.AUTO}})
    m = ep.module()
    for n in (4, 6, 9):
        same(m(*_x(n)), f(*_x(n)))


def test_different_masks_stay_different():
    def f(x):
        a = x[x > 0]
        b = x[x > 1]
        if a.shape[0] == b.shape[0]:
            return a.sum()
        return b.sum()

    with pytest.raises(ss.GuardOnDataDependentError):
        ss.export(f, _x(6), dynamic_shapes={"x": {0: Dim.AUTO}})
