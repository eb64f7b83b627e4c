"""Framing through strides: ``ndarray.strides`` is symbolic, and ``as_strided`` /
``sliding_window_view`` windows that stay inside the array are a gather of the elements
each window reads (guarded so), read-only in the program as in eager NumPy's views."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided, sliding_window_view

import symshape as ss
from symshape import Dim

from eager_compare import exports_as_eager


def _sig(n):
    return (np.sin(np.arange(float(n))) * 3.0,)


def framesig(sig):
    # speech features' framing: frames of 6 samples every 2, by strides
    frame_len, frame_step = 6, 2
    n = 1 + (sig.shape[0] - frame_len) // frame_step
    s = sig.strides[0]
    frames = as_strided(sig, shape=(n, frame_len), strides=(frame_step * s, s))
    return frames * np.hamming(frame_len)


def windows(sig):
    w = sliding_window_view(sig, 4)
    return w.mean(axis=-1), w.shape[0] * 1.0


def windows_2d(sig):
    x = sig[: sig.shape[0] // 2 * 2].reshape(-1, 2)
    return sliding_window_view(x, (3, 2)), sliding_window_view(x, 2, axis=0)


def strides_of_views(sig):
    x = sig[: sig.shape[0] // 3 * 3].reshape(-1, 3)
    return np.zeros(x.strides[0] // x.itemsize) + x.T.strides[1] // 8, np.zeros(x.T.strides[0])


@pytest.mark.parametrize("f", [framesig, windows, windows_2d, strides_of_views])
def test_framing_as_eager(f):
    exports_as_eager(f, _sig, (12, 13, 20), {"sig": {0: Dim.AUTO}})


def test_writing_into_a_window_view_is_refused():
    def f(sig):
        w = sliding_window_view(sig, 3)
        w[0, 0] = 1.0
        return w

    with pytest.raises(ss.UserError, match="sliding_window_view"):
        ss.export(f, _sig(8), dynamic_shapes={"sig": {0: Dim.AUTO}})


def test_windows_past_the_end_are_refused():
    def f(sig):
        s = sig.strides[0]
        return as_strided(sig, shape=(sig.shape[0], 2), strides=(s, s))

    with pytest.raises(ss.UserError, match="past the end"):
        ss.export(f, _sig(8), dynamic_shapes={"sig": {0: Dim.AUTO}})
