"""Writes that were replayed wrongly: ``|=`` on a state dict or set is an update (it was
dropped), and a rebound state value that also feeds an output stays a value of the
numba-compiled program (it was fused away: ``NameError: name 'add' is not defined``)."""
import numpy as np
import pytest

import symshape as ss


class Stats:
    def __init__(self):
        self.stats = {"a": 1.0}
        self.seen = {1}

    def __call__(self, x):
        self.stats |= {"b": 2.0}
        self.seen |= {2, 3}
        return x + self.stats["a"]


def test_in_place_or_on_state_dict_and_set_is_replayed():
    m, e = Stats(), Stats()
    mod = ss.export(m, (np.ones(3),)).module()
    assert np.array_equal(mod(np.ones(3)), e(np.ones(3)))
    assert m.stats == e.stats == {"a": 1.0, "b": 2.0} and m.seen == e.seen == {1, 2, 3}


class EMA:
    def __init__(self):
        self.m = np.zeros(3)

    def __call__(self, x):
        self.m = 0.9 * self.m + 0.1 * x.mean(0)
        return self.m + 1.0


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_rebound_state_value_that_feeds_an_output(backend):
    pytest.importorskip(backend)
    m, e = EMA(), EMA()
    c = ss.export(m, (np.ones((4, 3)),)).compile(backend=backend)
    for k in range(3):
        x = np.full((4, 3), float(k))
        assert np.allclose(c(x), e(x))
        assert np.allclose(m.m, e.m)
