"""Sizes flow through Python's conversions: ``int()``, ``math.floor/ceil/trunc``, ``round``,
``operator.index`` and ``//`` of size expressions stay symbolic where the result is used as a
size, index, slice bound, loop count or NumPy argument (``np.repeat(a, N)``), and names
shadowing the builtins (``from builtins import range, int``) route like the builtins."""
import math
import operator
import textwrap

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import exports_as_eager, same
from runners import import_source


def _x(n):
    return (np.arange(n * 3, dtype=np.float64).reshape(n, 3) / 3.0,)


def _dynamic(f, sizes=(6, 7, 9, 12)):
    return exports_as_eager(f, _x, sizes, {"x": {0: Dim.AUTO}})


def frames(x):
    slen = x.shape[0]
    frame_len, frame_step = 2, 1
    num = 1 + int(math.ceil((1.0 * slen - frame_len) / frame_step))
    return np.zeros(num) + x[:num, 0]


def int_of_shape(x):
    return np.zeros(int(x.shape[0])) + x[:, 1]


def floor_trunc_round(x):
    n = x.shape[0]
    a = int(math.floor(n / 2))
    b = math.trunc(n / 3)
    c = round(n / 2)
    return x[:a].sum() + x[b:].sum() + x[:c, 0]


def index_of_size(x):
    return x[:operator.index(x.shape[0]) - 1]


def floordiv_count(x):
    half = x.shape[0] // 2
    out = x[:half] * 2
    return out[: int(half)]


def repeat_size(x):
    return np.repeat(x[:, 0], x.shape[0])


def repeat_axis(x):
    return np.repeat(x, int(x.shape[0] // 3), axis=1)


def tile_frames(x):
    # speech features' framing: a static arange tiled a size-dependent number of times
    n = 1 + int(math.ceil((1.0 * x.shape[0] - 2) / 1))
    idx = np.tile(np.arange(0, 2), (n - 1, 1)) + np.tile(np.arange(0, n - 1), (2, 1)).T
    return x[:, 0][np.array(idx, dtype=np.int32)]


def repeat_static_array(x):
    return np.repeat(np.arange(3.0), x.shape[0]) + x[:, 0].sum()


@pytest.mark.parametrize("f", [frames, int_of_shape, floor_trunc_round, index_of_size,
                               floordiv_count, repeat_size, repeat_axis, tile_frames,
                               repeat_static_array])
def test_conversions_keep_sizes_symbolic(f):
    _dynamic(f)


def test_int_size_becomes_data_specialises():
    """Where a converted size becomes data (a string), it specialises as before."""
    def f(x):
        key = str(int(x.shape[0]))
        return x * len(key)
    ep = ss.export(f, _x(6), dynamic_shapes={"x": {0: Dim.AUTO}})
    with pytest.raises(ss.UserError):
        ep.module()(*_x(7))


def test_int_stays_int_class():
    def f(x):
        assert isinstance(int(x.shape[0]), int)
        return x * np.zeros(3, dtype=int).dtype.itemsize
    _dynamic(f)


SHADOWED = textwrap.dedent("""
    from builtins import range, int
    from operator import index
    import numpy as np

    def picks(P, y):
        N = P.shape[0]
        return P[range(N), y] + np.zeros(int(N)) + np.ones(index(N))
""")


def test_builtins_imported_by_name_route(tmp_path_factory):
    mod = import_source(tmp_path_factory, SHADOWED, "shadowed")
    P = np.arange(15.0).reshape(5, 3)
    y = np.array([0, 1, 2, 1, 0])
    ep = ss.export(mod.picks, (P, y), dynamic_shapes={"P": {0: Dim("n")}, "y": {0: Dim("n")}})
    m = ep.module()
    for n in (4, 6, 9):
        P2 = np.arange(n * 3.0).reshape(n, 3)
        y2 = np.arange(n) % 3
        same(m(P2, y2), mod.picks(P2, y2))
