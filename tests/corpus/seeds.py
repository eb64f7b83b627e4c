"""Two seed-example programs that the export tests, the serialisation tests and the
benchmarks all export: a linear layer over lifted module constants with an in-place ReLU,
and model 10, whose dynamic sizes ``Dim.AUTO`` discovers (an add, a matmul, a reshape)."""
import numpy as np

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
