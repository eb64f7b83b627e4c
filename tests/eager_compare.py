"""One comparison of a traced program's results with eager NumPy's: same number of results,
and each the same dtype, shape and values (NaN equal to NaN)."""
import numpy as np


def same(got, want) -> None:
    """Assert ``got`` equals ``want`` exactly (dtype included: ``np.linalg.eig`` takes the
    example's, tests/capture/test_eig_dtype.py)."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_array_equal(g, w)


def exports_as_eager(f, make, sizes, dynamic_shapes):
    """Export ``f`` on ``make(sizes[0])`` with ``dynamic_shapes``; its program gives eager's
    results at every size (``make(n)``: the argument tuple).  Returns the export."""
    import symshape as ss
    ep = ss.export(f, make(sizes[0]), dynamic_shapes=dynamic_shapes)
    m = ep.module()
    for n in sizes:
        same(m(*make(n)), f(*make(n)))
    return ep
