"""Soundness: what runs is what eager NumPy does, and the printed contract is the enforced one.

Three holes the proofs missed, each a program in the style real code uses:
  * an ``ss.check`` equality on a data-dependent size that the solver turned into a
    replacement must still be checked when the size is computed (``module()`` and compiled
    code), never dropped as ``True``;
  * dividing by a size (``n // n``) is defined only where the size is non-zero, so that joins
    the contract instead of the rewrite ``n // n -> 1`` turning eager's ZeroDivisionError
    into a value;
  * the sympy symbols of ``range_constraints`` / ``input_shapes`` carry the sign their range
    implies, nothing more.
"""
import numpy as np
import pytest
import sympy

import symshape as ss
from symshape import Dim, export

A = Dim.AUTO


# ---------------------------------------------------------------------------- 1: ss.check
def keep_positive_then_align(x):
    m = x[x > 0]
    ss.check(m.shape[0] == x.shape[0] - 3)
    return m + x[3:]


def pairs_of_positives(x):
    m = x[x > 0]
    ss.check(m.shape[0] % 2 == 0)
    return m.reshape(-1, 2)


def budget(x):
    m = x[x > 0]
    ss.check(2 * m.shape[0] + 3 * x.shape[0] == 34)
    return m.sum() + x


def five_positives(x):
    m = x[x > 0]
    ss.check(m.shape[0] == 5, "expects five positive scores")
    return m + np.ones(5)


class Scorer:
    """A model object whose forward keeps the top rows by a data-dependent mask."""

    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        keep = x[x > 0]
        ss.check(keep.shape[0] == self.k)
        return keep * 2.0


CHECK_CASES = [
    (keep_positive_then_align, np.array([1., 2, 3, 4, 5, -1, -1, -1]),
     np.array([1., -1, -1, -1, -1, -1, -1, -1])),
    (pairs_of_positives, np.array([1., 2, 3, 4, -1, -1]), np.array([1., 2, 3, -1, -1, -1])),
    (budget, np.array([1., 2, 3, 4, 5, -1, -1, -1]), np.array([1., 2, 3, 4, -1, -1, -1, -1])),
    (five_positives, np.array([1., 2, 3, 4, 5, -1, -1, -1]),
     np.array([1., 2, 3, 4, -1, -1, -1, -1])),
    (Scorer(3), np.array([1., 2, 3, -1, -1]), np.array([1., 2, -1, -1, -1])),
]


@pytest.mark.parametrize("f, example, bad", CHECK_CASES,
                         ids=["replacement", "congruence", "two_var", "constant", "object"])
def test_a_check_on_a_data_dependent_size_runs_even_when_solved(f, example, bad):
    ep = export(f, (example,), dynamic_shapes={"x": (A,)})
    with pytest.raises(ss.UserError):        # eager: the check fails
        f(bad)
    for run in (ep.module(), ep.compile()):
        with pytest.raises(ss.UserError, match="ss.check"):
            run(bad)
        np.testing.assert_array_equal(run(example), f(example))


def test_a_solved_check_still_passes_inputs_that_satisfy_it():
    ep = export(keep_positive_then_align, (np.array([1., 2, 3, 4, 5, -1, -1, -1]),),
                dynamic_shapes={"x": (A,)})
    other = np.array([-1., 7, 8, -2, 9, 1, 1, 1, 2, -3])      # 7 positives, 10 - 3
    np.testing.assert_array_equal(ep.module()(other), keep_positive_then_align(other))


def test_a_solved_check_survives_save_and_load(tmp_path):
    ep = export(five_positives, (np.array([1., 2, 3, 4, 5, -1]),), dynamic_shapes={"x": (A,)})
    path = tmp_path / "p.symshape"
    ss.save(ep, str(path))
    back = ss.load(str(path))
    with pytest.raises(ss.UserError, match="five positive"):
        back.module()(np.array([1., 2, -1, -1, -1, -1]))


def test_jit_checks_a_solved_data_dependent_check():
    f = ss.compile(keep_positive_then_align)
    f(np.array([1., 2, 3, 4, 5, -1, -1, -1]))
    with pytest.raises(ss.UserError):
        f(np.array([1., -1, -1, -1, -1, -1, -1, -1]))


# ---------------------------------------------------------------------------- 2: division
def per_group(x):
    groups = x.shape[0] // x.shape[0]
    return np.zeros(groups) + x.sum()


def chunk_rows(x, y):
    return np.zeros((x.shape[0] * y.shape[0]) // x.shape[0])


def test_dividing_by_a_size_that_may_be_zero_is_reported_against_the_spec():
    with pytest.raises(ss.ConstraintViolationError) as e:
        export(per_group, (np.zeros(4),), dynamic_shapes={"x": (Dim("n", min=0),)})
    assert "n = Dim('n', min=1)" in [str(f) for f in e.value.suggested_fixes]
    with pytest.raises(ss.ConstraintViolationError):
        export(chunk_rows, (np.zeros(4), np.zeros(3)),
               dynamic_shapes={"x": (Dim("n", min=0),), "y": (Dim("m"),)})


def test_a_size_divisor_keeps_the_guard_eager_raises_on():
    n = Dim("n", min=1)
    ep = export(per_group, (np.zeros(4),), dynamic_shapes={"x": (n,)})
    assert ep.range_constraints[sympy.Symbol("s0", integer=True, positive=True)].lower == 1
    with pytest.raises(ZeroDivisionError):
        per_group(np.zeros(0))
    with pytest.raises(ss.UserError, match="x.shape\\[0\\]"):
        ep.module()(np.zeros(0))
    np.testing.assert_array_equal(ep.module()(np.ones(6)), per_group(np.ones(6)))


def test_an_auto_divisor_is_guarded_in_the_contract():
    ep = export(per_group, (np.zeros(4),), dynamic_shapes={"x": (Dim.DYNAMIC,)})
    with pytest.raises(ss.UserError):
        ep.module()(np.zeros(0))


def count_per_positive(x):
    m = x[x > 0]
    return np.zeros(12 // m.shape[0])


def test_a_data_dependent_divisor_is_checked_where_it_is_computed():
    ep = export(count_per_positive, (np.array([1., 2, 3, -1]),), dynamic_shapes={"x": (A,)})
    np.testing.assert_array_equal(ep.module()(np.array([1., 1, -1, -1])),
                                  count_per_positive(np.array([1., 1, -1, -1])))
    with pytest.raises(ZeroDivisionError):
        count_per_positive(np.array([-1., -1, -1]))
    with pytest.raises(ss.UserError, match="must not be 0"):
        ep.module()(np.array([-1., -1, -1]))


# ---------------------------------------------------------------------------- 3: sympy signs
def take_first(x, k):
    return x[:k]


def test_a_negative_int_input_gets_a_negative_symbol():
    ep = export(take_first, (np.zeros(8), -3),
                dynamic_shapes={"x": (A,), "k": Dim.DYNAMIC})
    (s_x, vr_x), (s_k, vr_k) = sorted(ep.range_constraints.items(), key=lambda kv: str(kv[0]))
    assert vr_k.upper == -1
    assert (s_k < 0) is sympy.true
    assert s_k.is_positive is False and s_k.is_negative is True
    assert s_x.is_positive is True


def test_a_size_admitting_zero_is_not_positive():
    ep = export(lambda x: x + 1, (np.zeros(4),), dynamic_shapes={"x": (Dim("n", min=0),)})
    (s, vr), = ep.range_constraints.items()
    assert vr.lower == 0
    assert s.is_positive is None and s.is_nonnegative is True
    assert sympy.Eq(s, 0) != sympy.false        # size 0 is admitted: sympy must not rule it out
    shape, = ep.input_shapes.values()
    assert shape[0] == s


@pytest.mark.parametrize("lo, hi, want", [
    (1, 9, {"positive": True}), (0, 9, {"nonnegative": True}), (-5, -1, {"negative": True}),
    (-5, 0, {"nonpositive": True}), (-3, 3, {}), (0, 0, {"nonnegative": True,
                                                         "nonpositive": True})])
def test_sympy_assumptions_follow_the_range(lo, hi, want):
    from symshape.algebra.ranges import ValueRange
    from symshape.contract.sympy_form import assumptions
    got = assumptions(ValueRange(lo, hi))
    assert got.pop("integer") is True
    assert got == want


def gated(x):
    def keep_two(x):
        m = x[x > 0]
        ss.check(m.shape[0] == 2, "the branch expects two positive entries")
        return m.sum() + x

    def double(x):
        return x * 2
    return ss.cond(x.sum() > 0, keep_two, double, (x,))


def test_a_solved_check_inside_a_cond_branch_runs_after_its_size_is_computed():
    ep = export(gated, (np.array([1., 2, -1]),), dynamic_shapes={"x": (A,)})
    for run in (ep.module(), ep.compile()):
        ok = np.array([1., 2, -0.5])
        np.testing.assert_array_equal(run(ok), np.array([4., 5., 2.5]))
        np.testing.assert_array_equal(run(np.array([1., 2, -9])), np.array([2., 4., -18.]))
        with pytest.raises(ss.UserError, match="two positive"):
            run(np.array([1., 2, 3]))


def integer_steps(x, k):
    return x[: x.shape[0] // k]


def test_dividing_by_an_int_input_rejects_zero_like_eager():
    ep = export(integer_steps, (np.ones(8), 2), dynamic_shapes={"x": (A,), "k": Dim.DYNAMIC})
    with pytest.raises(ZeroDivisionError):
        integer_steps(np.ones(8), 0)
    # the slice's sign guard (stop >= 0 at the example) makes the exact range k >= 1,
    # which also excludes 0
    with pytest.raises(ss.UserError, match=r"k != 0|k = 0 is outside the range \[1, int_oo\]"):
        ep.module()(np.ones(8), 0)
    assert ep.module()(np.ones(8), 4).shape == integer_steps(np.ones(8), 4).shape


# ---------------------------------------------------------------------------- fuzz: checks
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_FORMS = {
    # name: (condition on (count, n), ss.check call) -- the forms the solver rewrites
    "offset": (lambda c, n, k: c == n - k, lambda m, x, k: ss.check(m.shape[0] == x.shape[0] - k)),
    "const": (lambda c, n, k: c == k, lambda m, x, k: ss.check(m.shape[0] == k)),
    "mod": (lambda c, n, k: c % k == 0, lambda m, x, k: ss.check(m.shape[0] % k == 0)),
    "two_var": (lambda c, n, k: 2 * c + 3 * n == 2 * k + 3 * (k + 3),
                lambda m, x, k: ss.check(2 * m.shape[0] + 3 * x.shape[0] == 5 * k + 9)),
    "upper": (lambda c, n, k: c <= n - k, lambda m, x, k: ss.check(m.shape[0] <= x.shape[0] - k)),
}


@st.composite
def _check_cases(draw):
    form = draw(st.sampled_from(sorted(_FORMS)))
    k = draw(st.integers(2, 4))
    # an example that satisfies the check (export needs it), and a probe that may not
    n = k + 3 if form == "two_var" else draw(st.integers(k + 2, 12))
    c = {"offset": n - k, "const": k, "two_var": k,
         "mod": k * draw(st.integers(0, n // k)),
         "upper": draw(st.integers(0, n - k))}[form]
    n2 = draw(st.integers(2, 14))
    c2 = draw(st.integers(0, n2))
    return form, k, (n, c), (n2, c2)


def _data(n, c):
    x = -np.ones(n)
    x[:c] = np.arange(1, c + 1)
    return x


@settings(max_examples=60 if __import__("os").environ.get("HYPOTHESIS_PROFILE") != "thorough"
          else 2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_check_cases())
def test_data_dependent_checks_fail_at_run_time_exactly_where_eager_fails(case):
    form, k, (n, c), (n2, c2) = case
    holds, check = _FORMS[form]

    def f(x):
        m = x[x > 0]
        check(m, x, k)
        return m * 2.0

    try:
        ep = export(f, (_data(n, c),), dynamic_shapes={"x": (A,)})
    except ss.UserError:
        return                               # a spec the example cannot satisfy: not this test
    probe = _data(n2, c2)
    try:
        want = f(probe)
        eager_ok = True
    except ss.UserError:
        eager_ok = False
    run = ep.module()
    try:
        got = run(probe)
        ok = True
    except ss.UserError:
        ok = False
    if ok:
        assert eager_ok, "%s: the program ran where eager's ss.check fails (n=%d, count=%d)" % (
            form, n2, c2)
        np.testing.assert_array_equal(got, want)


def scale_by_count(x):
    return x / x.shape[0] * (1 / x.shape[0])


def test_true_division_by_a_size_guards_it_too():
    ep = export(scale_by_count, (np.ones(4),), dynamic_shapes={"x": (Dim("n", min=1),)})
    np.testing.assert_allclose(ep.module()(np.ones(5)), scale_by_count(np.ones(5)))
    with pytest.raises(ss.ConstraintViolationError):
        export(scale_by_count, (np.ones(4),), dynamic_shapes={"x": (Dim("n", min=0),)})
