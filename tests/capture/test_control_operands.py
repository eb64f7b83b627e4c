"""ss.cond / ss.map / ss.while_loop with operands that are not arrays
(Python numbers, NumPy scalars, sizes), run through every runner against eager NumPy."""
import numpy as np
import pytest

import symshape as ss
from runners import runner

A = ss.Dim.AUTO
RUNNERS = ["module", "compile", "loaded", "cupy"]




def same(out, ref):
    out = out if isinstance(out, tuple) else (out,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        o, r = np.asarray(o), np.asarray(r)
        assert o.shape == r.shape and o.dtype == r.dtype, (o.shape, o.dtype, r.shape, r.dtype)
        np.testing.assert_allclose(o, r, rtol=1e-6)


def doubling(x):
    """A counter carried as a NumPy scalar: it behaves as a 0-d array in eager NumPy too."""
    return ss.while_loop(lambda i, y: y.sum() < 100, lambda i, y: (i + 1, y * 2),
                         (np.int64(0), np.abs(x).astype(np.float32) + 1))


def scaled(x, k):
    return ss.cond(x.sum() > 0, lambda x, k: x * k, lambda x, k: x - k, (x, k))


def by_rows(x):
    return ss.cond(x.sum() > 0, lambda x, n: x * n, lambda x, n: x - n, (x, x.shape[0]))


def mapped(x):
    return ss.map(lambda r, s, n: r * s + n, x, 2.5, x.shape[1])


CASES = {
    "while_numpy_counter": (doubling, (np.ones((4, 3)),), {"x": (A, A)},
                            [(np.ones((6, 2)),), (np.full((2, 5), 30.0),)]),
    # a Python float operand keeps its weak promotion: float32 stays float32
    "cond_python_float": (scaled, (np.ones((4, 3), np.float32), 2.5), {"x": (A, A), "k": None},
                          [(-np.ones((6, 2), np.float32), 2.5)]),
    "cond_size_operand": (by_rows, (np.ones((4, 3), np.float32),), {"x": (A, A)},
                          [(-np.ones((6, 2), np.float32),), (np.ones((3, 5), np.float32),)]),
    "map_scalar_and_size": (mapped, (np.ones((4, 3), np.float32),), {"x": (A, A)},
                            [(np.arange(12, dtype=np.float32).reshape(6, 2),)]),
}


@pytest.mark.parametrize("kind", RUNNERS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_non_array_operands_match_eager(name, kind, tmp_path):
    f, args, spec, others = CASES[name]
    run = runner(ss.export(f, args, dynamic_shapes=spec), kind, tmp_path)
    for call in (args,) + tuple(others):
        same(run(*call), f(*call))


@pytest.mark.parametrize("counter", ["python", "size"])
def test_python_counter_in_while_loop_is_refused_with_the_fix(counter):
    def count(x):
        start = 0 if counter == "python" else x.shape[1]
        return ss.while_loop(lambda i, y: i < 10, lambda i, y: (i + 1, y * 0.5), (start, x))

    count(np.ones((4, 3)))          # eager runs it
    with pytest.raises(ss.UserError, match=r"carried value 0 .*np\.int64\(") as e:
        ss.export(count, (np.ones((4, 3)),), dynamic_shapes={"x": (A, A)})
    assert "SymInt" not in str(e.value) and "test_control_operands.py" in str(e.value)
    if counter == "size":
        assert "x.shape[1]" in str(e.value)
