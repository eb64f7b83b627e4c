"""Legacy ``np.random.RandomState(seed)`` made inside the traced program: every drawing
method (``rand``, ``randn``, ``randint``, ``random_sample``, ``uniform``, ``normal``,
``tomaxint``...) gives eager's numbers, seeded the same, through module(), ep.compile(),
a save/load round trip and ss.compile; what cannot be recorded is a UserError naming the
method and the fix."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from runners import runner

A = ss.Dim.AUTO

DRAWS = {
    "rand": lambda rs, n: rs.rand(n, 3),
    "rand_scalar": lambda rs, n: rs.rand(),
    "randn": lambda rs, n: rs.randn(n, 2),
    "randn_1d": lambda rs, n: rs.randn(n),
    "randint": lambda rs, n: rs.randint(0, 10, size=(n, 2)),
    "randint_high_only": lambda rs, n: rs.randint(5, size=n),
    "random_sample": lambda rs, n: rs.random_sample((n,)),
    "random": lambda rs, n: rs.random((n, 2)),
    "uniform": lambda rs, n: rs.uniform(-1.0, 1.0, (n, 2)),
    "normal": lambda rs, n: rs.normal(2.0, 3.0, size=n),
    "standard_normal": lambda rs, n: rs.standard_normal((n, 2)),
    "binomial": lambda rs, n: rs.binomial(10, 0.5, n),
    "tomaxint": lambda rs, n: rs.tomaxint(n),
    "rand_then_randn": lambda rs, n: rs.rand(n) + rs.randn(n),
}


def _program(body, seed):
    def f(x):
        rs = np.random.RandomState(seed)
        return x.sum() + body(rs, x.shape[0])
    return f


def _export(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ss.export(f, (np.ones(4),), dynamic_shapes={"x": (A,)})


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["module", "compile", "loaded"])
@pytest.mark.parametrize("name", sorted(DRAWS))
def test_draws_from_a_made_random_state_equal_eager(name, kind, tmp_path):
    f = _program(DRAWS[name], 5)
    run = runner(_export(f), kind, tmp_path)
    for n in (4, 7, 2):
        _same(run(np.ones(n)), f(np.ones(n)))
        _same(run(np.ones(n)), f(np.ones(n)))       # made afresh each call, as eager


@pytest.mark.parametrize("name", ["rand", "randn", "randint", "uniform"])
def test_ss_compile(name):
    f = _program(DRAWS[name], 11)
    run = ss.compile(f, fullgraph=True)
    for n in (3, 6, 9):
        _same(run(np.ones(n)), f(np.ones(n)))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(2, 9),
       names=st.lists(st.sampled_from(sorted(DRAWS)), min_size=1, max_size=3))
def test_sequences_of_draws_from_any_seed(seed, n, names):
    def f(x):
        rs = np.random.RandomState(seed)
        return [x.sum() + DRAWS[k](rs, x.shape[0]) for k in names]
    ep = _export(f)
    for g, w in zip(ep.module()(np.ones(n)), f(np.ones(n))):
        _same(g, w)


@pytest.mark.parametrize("body, message", [
    (lambda rs, n: rs.random_integers(1, 5, n), r"RandomState\(5\)\.random_integers is not "
     r"supported while tracing: write randint\(low, high \+ 1, size\)"),
    (lambda rs, n: (rs.seed(3), rs.rand(n))[1], r"RandomState\(5\)\.seed is not supported "
     r"while tracing: .*np\.random\.RandomState\(s\)"),
    (lambda rs, n: (rs.get_state(), rs.rand(n))[1], r"RandomState\(5\)\.get_state is not "
     r"supported while tracing \(its state exists only when the program runs\): make the "
     r"generator outside the function"),
    (lambda rs, n: rs.bytes(4), r"RandomState\(5\)\.bytes is not supported while tracing: "
     r"draw integers instead"),
])
def test_what_cannot_be_recorded_names_the_method_and_the_fix(body, message):
    with pytest.raises(ss.UserError, match=message) as e:
        _export(_program(body, 5))
    assert "test_made_random_state.py" in str(e.value)         # the user's line


def test_random_integers_fix_gives_the_same_numbers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want = np.random.RandomState(5).random_integers(1, 5, (3, 4))
    np.testing.assert_array_equal(np.random.RandomState(5).randint(1, 5 + 1, (3, 4)), want)


def test_a_made_generator_still_has_no_rand():
    def f(x):
        return np.random.default_rng(0).rand(x.shape[0])
    with pytest.raises(ss.UserError, match=r"default_rng\(0\) has no method rand"):
        _export(f)
