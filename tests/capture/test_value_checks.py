"""A branch on array values whose other side raises is a run-time check: the side that
goes on is traced, and the program raises the same exception (type and message) when it runs
on data that fails the condition, as eager code does."""
import textwrap

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from eager_compare import same
from runners import import_source

# a module of its own: pytest rewrites the asserts of test files
SOURCE = textwrap.dedent('''
    import numpy as np

    MSG = "Input contains NaN or infinity."


    def finite(x):
        if not np.isfinite(x).all():
            raise ValueError(MSG)
        return x * 2


    def nonnegative(x):
        if np.any(x < 0):
            raise ValueError("probabilities must be non-negative, got %d rows" % 3)
        return x / x.sum()


    def asserted(x):
        assert (x >= 0).all(), "x must be >= 0"
        return np.sqrt(x)


    def bare_assert(x):
        assert np.all(x >= 0)
        return x + 1


    def either(x):
        if np.isnan(x).any() or np.isinf(x).any():
            raise FloatingPointError("bad values")
        return x - 1


    def class_raised(x):
        if (x < 0).any():
            raise ArithmeticError
        return x


    def goes_on(x):
        if (x > 0).all():
            return x
        return -x


    def and_chain(x):
        if (x > 0).all() and (x < 10).all():
            raise ValueError("in range")
        return x
''')

CASES = [("finite", ValueError, np.nan), ("nonnegative", ValueError, -1.0),
         ("asserted", AssertionError, -1.0), ("bare_assert", AssertionError, -1.0),
         ("either", FloatingPointError, np.inf), ("class_raised", ArithmeticError, -1.0)]


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    return import_source(tmp_path_factory, SOURCE, "valuechecks")


def _good(n):
    return np.arange(1.0, 1.0 + n * 2).reshape(n, 2)


@pytest.mark.parametrize("name,kind,bad_value", CASES)
def test_check_passes_and_raises_like_eager(progs, name, kind, bad_value):
    f = getattr(progs, name)
    ep = ss.export(f, (_good(5),), dynamic_shapes={"x": {0: Dim.AUTO}})
    m = ep.module()
    for n in (3, 5, 8):
        same(m(_good(n)), f(_good(n)))
    bad = _good(6)
    bad[2, 1] = bad_value
    with pytest.raises(kind) as eager:
        f(bad)
    with pytest.raises(kind) as got:
        m(bad)
    assert type(got.value) is type(eager.value)
    assert got.value.args == eager.value.args


def test_compiled_check_raises(progs):
    cf = ss.compile(progs.finite, dynamic=True, fullgraph=True)
    same(cf(_good(4)), progs.finite(_good(4)))
    bad = _good(7)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        cf(bad)


@pytest.mark.parametrize("name", ["goes_on", "and_chain"])
def test_branch_without_a_single_raising_side_is_data_dependent(progs, name):
    with pytest.raises(ss.GuardOnDataDependentError):
        ss.export(getattr(progs, name), (_good(4),), dynamic_shapes={"x": {0: Dim.AUTO}})
