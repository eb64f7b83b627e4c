"""Hostile checks on sizes used as values: a function may return floats computed from sizes
(``n / 2``, ``d ** -0.5``) next to arrays and sizes, on every runner, as eager NumPy does."""
import numpy as np
import pytest

import symshape as ss
from runners import runner

A = ss.Dim.AUTO


def stats(x):
    n = x.shape[0]
    return x * 2, n / 2, {"scale": x.shape[1] ** -0.5, "n": n}



@pytest.mark.parametrize("kind", ["module", "compile", "loaded", "cupy", "dask", "jit"])
def test_floats_computed_from_sizes_are_outputs(kind, tmp_path):
    if kind == "jit":
        run = ss.compile(stats)
    else:
        ep = ss.export(stats, (np.ones((4, 3)),), dynamic_shapes={"x": (A, A)})
        run = runner(ep, kind, tmp_path)
    for shape in [(4, 3), (7, 5)]:
        x = np.ones(shape)
        arr, half, d = run(x)
        ref = stats(x)
        np.testing.assert_array_equal(np.asarray(arr), ref[0])
        assert type(half) is float and half == ref[1]
        assert d == ref[2] and type(d["scale"]) is float and type(d["n"]) is int
