"""Seed-example programs that the export tests, the serialisation tests and the
benchmarks export: a linear layer over lifted module constants with an in-place ReLU,
model 10, whose dynamic sizes ``Dim.AUTO`` discovers (an add, a matmul, a reshape), and
model 12, which guards model 10 with an assert, an ``ss.check`` and a branch."""
import numpy as np

import symshape as ss

W1 = np.random.default_rng(112).standard_normal((10, 100)).astype(np.float32)
b1 = np.random.default_rng(11).standard_normal(10).astype(np.float32)
W10 = np.random.default_rng(0).standard_normal((5, 3))


def basic(x, y):
    h = (x + y) @ W1.T + b1
    np.maximum(h, 0, out=h)
    return h


def model10(w, x, y, z):
    x0 = x + y
    x1 = w @ W10
    x2 = x0.reshape(-1)
    return x1, x2 + z


ARGS10 = (np.zeros((6, 5)), np.zeros(4), np.zeros((8, 4)), np.zeros(32))


def model12(w, x, y, z):
    assert w.shape[0] <= 512
    ss.check(x.shape[0] >= 16)
    if w.shape[0] == x.shape[0] + 2:
        return model10(w, x, y, z)
    return w
