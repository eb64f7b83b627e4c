"""Guards equating Min / Max read as what they mean in ``ep.guards`` and ``print(ep)``, and
the input check still enforces exactly the guard."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim

W = np.ones(20)


def windowed(x, y):
    # the shorter input, then a third of it, added to a table of 20 rows
    x = x[:ss.sym_min(x.shape[0], y.shape[0])]
    k = x.shape[0] // 3
    return x[:k] + W[:k]


def _ep(f, args, names):
    return ss.export(f, args, dynamic_shapes={n: (Dim.AUTO,) for n in names})


def test_min_of_min_equality_reads_as_the_bound_it_means():
    ep = _ep(windowed, (np.ones(30), np.ones(40)), ("x", "y"))
    assert ep.guards == ["min(x.shape[0], y.shape[0]) <= 62"]
    assert "min(x.shape[0], y.shape[0]) <= 62" in str(ep)
    run = ep.module()
    for a, b in ((62, 90), (90, 62), (62, 62), (3, 200)):
        x, y = np.arange(float(a)), np.arange(float(b))
        np.testing.assert_allclose(run(x, y), windowed(x, y))
    for a, b in ((63, 63), (100, 90)):
        with pytest.raises(ss.UserError):
            run(np.ones(a), np.ones(b))


@pytest.mark.parametrize("a, b", [(6, 7), (62, 63), (63, 62), (63, 63), (2, 500)])
def test_the_readable_guard_admits_exactly_what_the_check_admits(a, b):
    ep = _ep(windowed, (np.ones(30), np.ones(40)), ("x", "y"))
    ok = min(a, b) <= 62
    try:
        ep.module()(np.ones(a), np.ones(b))
        admitted = True
    except ss.UserError:
        admitted = False
    assert admitted == ok


def test_a_root_read_off_an_axis_prints_as_that_axis_where_it_can():
    """``x.shape[0] == 4*s``: the guard reads ``y.shape[0] + x.shape[0] <= 20``, not
    ``y.shape[0] + 4*x.shape[0]/4 <= 20``; the check admits exactly what it says."""
    import numpy as np
    import symshape as ss

    def f(x, y):
        ss.check(x.shape[0] % 4 == 0)
        ss.check(y.shape[0] + x.shape[0] <= 20)
        return x.sum() + y.sum()

    ep = ss.export(f, (np.ones(8), np.ones(3)),
                   dynamic_shapes={"x": (ss.Dim.AUTO,), "y": (ss.Dim.AUTO,)})
    assert ep.guards == ["y.shape[0] + x.shape[0] <= 20"]
    for n in (4, 8, 12, 16):
        for m in range(2, 20):
            ok = n + m <= 20
            try:
                ep.module()(np.ones(n), np.ones(m))
                assert ok, (n, m)
            except ss.UserError:
                assert not ok, (n, m)
