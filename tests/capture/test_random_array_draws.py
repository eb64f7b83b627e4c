"""Generator methods that take arrays (issue 30): choice, permutation, shuffle (in place),
multinomial, multivariate_normal, dirichlet, of a Generator passed as an argument, reached as
state, made by the program (default_rng(seed) or Generator(PCG64(seed))) and of NumPy's
global functions; seeded the same, the exported program gives eager NumPy's numbers."""
import numpy as np
from hypothesis import given, settings, strategies as st

import symshape as ss
from eager_compare import same
from symshape import Dim

A = Dim.AUTO
STATE_RNG = np.random.default_rng(11)


def draws(x, rng):
    p = np.abs(x[:, 0]) / np.abs(x[:, 0]).sum()
    y = x.copy()
    rng.shuffle(y)
    return (rng.choice(x[:, 0], size=3), rng.choice(x.shape[0], size=(2, x.shape[1])),
            rng.choice(x, size=2, axis=1, replace=False), rng.choice(x.shape[0], 4, p=p),
            rng.permutation(x), rng.permutation(x.shape[0]), y,
            rng.multinomial(10, [0.2, 0.3, 0.5], size=x.shape[0]),
            rng.multivariate_normal(np.zeros(2), np.eye(2), size=x.shape[0]),
            rng.dirichlet(np.ones(3), size=2))


@settings(max_examples=8)
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_generator_argument(seed):
    ep = ss.export(draws, (np.ones((6, 4)), np.random.default_rng(0)),
                   dynamic_shapes={"x": (A, A), "rng": None})
    for shape in [(6, 4), (9, 3), (3, 5)]:
        x = np.random.default_rng(shape[0]).standard_normal(shape)
        same(ep.module()(x, np.random.default_rng(seed)), draws(x, np.random.default_rng(seed)))


def test_legacy_random_state_and_global_functions():
    def f(x):
        y = x.copy()
        np.random.shuffle(y)
        return (np.random.choice(x.shape[0], 3), np.random.permutation(x[:, 0]), y,
                np.random.dirichlet([1.0, 2.0], size=x.shape[1]))
    ep = ss.export(f, (np.ones((6, 4)),), dynamic_shapes={"x": (A, A)})
    for shape in [(6, 4), (8, 2)]:
        x = np.random.default_rng(1).standard_normal(shape)
        np.random.seed(4)
        got = ep.module()(x)
        np.random.seed(4)
        same(got, f(x))


def test_generators_made_in_the_program_and_state():
    def f(x):
        g = np.random.Generator(np.random.PCG64(7))
        r = np.random.default_rng(3)
        return (g.normal(size=x.shape[0]), g.choice(x[:, 0], 2, replace=False),
                r.permutation(x.shape[1]), STATE_RNG.dirichlet([1.0, 1.0], size=x.shape[0]))
    ep = ss.export(f, (np.ones((6, 4)),), dynamic_shapes={"x": (A, A)})
    start = STATE_RNG.bit_generator.state
    for shape in [(6, 4), (9, 3)]:
        x = np.random.default_rng(2).standard_normal(shape)
        STATE_RNG.bit_generator.state = start
        got = ep.module()(x)
        STATE_RNG.bit_generator.state = start
        same(got, f(x))


def test_shuffle_is_an_input_mutation_as_eager():
    def f(x, rng):
        rng.shuffle(x)
        return x.sum(axis=0)
    ep = ss.export(f, (np.ones((5, 3)), np.random.default_rng(0)),
                   dynamic_shapes={"x": (A, A), "rng": None})
    x1 = np.arange(21.0).reshape(7, 3)
    x2 = x1.copy()
    ep.module()(x1, np.random.default_rng(9))
    f(x2, np.random.default_rng(9))
    np.testing.assert_array_equal(x1, x2)
