"""``np.random.seed`` inside a program is replayed when the program runs, before the global
draws that follow it, so the program draws the numbers eager code draws and leaves NumPy's
global generator in the same state."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import same


def reseeded(x):
    np.random.seed(123)
    a = x + np.random.rand(*x.shape)
    np.random.seed([1, 2])
    return a, np.random.normal(size=x.shape[0]), np.random.randint(0, 9, size=3)


def _x(n):
    return (np.ones((n, 3)),)


def test_seed_replayed_by_the_program():
    ep = ss.export(reseeded, _x(5), dynamic_shapes={"x": {0: Dim.AUTO}})
    m = ep.module()
    for n in (3, 5, 8):
        same(m(*_x(n)), reseeded(*_x(n)))
        after_program = np.random.rand()
        reseeded(*_x(n))
        assert after_program == np.random.rand()
    assert [n.op for n in ep.graph.nodes].count("global_random_seed") == 2


def test_seed_in_compiled_program():
    cf = ss.compile(reseeded, dynamic=True, fullgraph=True)
    for n in (3, 6):
        same(cf(*_x(n)), reseeded(*_x(n)))


def test_seed_of_a_traced_value_is_refused():
    def f(x):
        np.random.seed(x.astype(int))
        return x

    with pytest.raises(ss.UserError, match="np.random.seed"):
        ss.export(f, _x(4), dynamic_shapes={"x": {0: Dim.AUTO}})
