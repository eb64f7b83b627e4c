"""A congruence on a data-dependent size (``ss.check(m.shape[0] % 2 == 0)`` after
``m = x[x > 0]``) stays a fact about that size: the solver introduces no quotient symbol
for it (which compiled code would then have to bind from the size), so the run-time check
compares the size the program computes, and the input contract is untouched."""
import numpy as np

from symshape.algebra import relations as R
from symshape.sizes.checks import runtime_condition
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.expr import mod
from symshape.algebra.infinity import int_oo
from symshape.algebra.ranges import ValueRange


def _env():
    env = ShapeEnv()
    x = env.create_symbol(10, "x.shape[0]", ValueRange(2, int_oo)).expr
    u = env.create_unbacked("x[x > 0].shape[0]", ValueRange(0, int_oo)).expr
    return env, x, u


def _no_quotient_of_a_data_dependent_size(env):
    made = [s for s, info in env.infos.items()
            if info.parent is not None and info.parent.unbacked]
    assert made == [], made


def test_a_congruence_on_a_computed_size_makes_no_quotient():
    env, x, u = _env()
    for c in (R.eq(mod(u, 2), 0), R.eq(mod(u, 4), 2), R.eq(2 * u + 3 * x, 34)):
        env.check(c, None)
    _no_quotient_of_a_data_dependent_size(env)
    # each check is compared at run time over the size itself
    for c, _, _ in env.checks:
        got = runtime_condition(env, c)
        assert got is not True and any(s.unbacked for s in got.free_symbols), got


def test_an_offset_on_a_computed_size_is_still_compared_over_the_size():
    env, x, u = _env()
    env.check(R.eq(u, x - 3), None)          # u0 -> s0 - 3 inside the environment
    env.check(R.eq(mod(u, 2), 0), None)
    _no_quotient_of_a_data_dependent_size(env)
    for c, _, _ in env.checks:
        got = runtime_condition(env, c)
        assert got is not True and any(s.unbacked for s in got.free_symbols), got


def test_exported_branch_code_binds_only_the_computed_size():
    import symshape as ss
    from symshape import Dim, export

    def f(x):
        def pairs(x):
            m = x[x > 0]
            ss.check(m.shape[0] % 2 == 0, "pairs only")
            return m.reshape(-1, 2).sum() + x
        return ss.cond(x.sum() > 0, pairs, lambda x: x * 2, (x,))

    x = -np.ones(10) * 0.5
    x[:4] = [1.0, 2.0, 3.0, 4.0]
    ep = export(f, (x,), dynamic_shapes={"x": (Dim.AUTO,)})
    src = ep.module_source
    assert ".shape[0]\n" in src and " // 2" not in src, src
    odd = x.copy()
    odd[4] = 5.0
    for run in (ep.module(), ep.compile()):
        np.testing.assert_array_equal(run(x), f(x))
        try:
            run(odd)
        except ss.UserError as e:
            assert "pairs only" in str(e) and "m.shape[0]" in str(e), str(e)
        else:
            raise AssertionError("an odd count of positives passed the check")
