"""Soundness of ss.check on data-dependent sizes, in cond branches and at top level.

A check on a size the program computes (``m = x[x > 0]``) holds only where the program has
computed that size and checked it: inside an ``ss.cond`` branch, only when that branch runs.
So such a check never turns into a constraint on the inputs (no replacement of an input
size, no narrower range, no divisibility in the contract): it is checked at run time, in
the user's names, where the size is computed.  Eager NumPy is the oracle: the exported
program runs wherever eager runs (with the same values) and raises a ``UserError`` naming
the check wherever eager's ``ss.check`` fails; never a NameError or AttributeError.
Translation validation is on for every export here (tests/conftest.py).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape import Dim, export

A = Dim.AUTO


def _data(n, positives):
    """``n`` entries, the first ``positives`` of them positive, so ``x[x > 0]`` has that
    many elements and ``x.sum() > 0`` picks the branch that computes it."""
    x = -np.ones(n) * 0.5
    x[:positives] = np.arange(1, positives + 1)
    return x


def _outcome(f, x):
    try:
        return "ok", f(x)
    except ss.UserError as e:
        return "error", e


def _agree(run, f, x):
    """``run`` (module() or compile()) does what eager ``f`` does on ``x``."""
    want_kind, want = _outcome(f, x)
    got_kind, got = _outcome(run, x)     # a NameError / AttributeError fails the test
    assert got_kind == want_kind, (len(x), want, got)
    if want_kind == "ok":
        np.testing.assert_array_equal(got, want)
    return got


# ---------------------------------------------------------------------------- in a branch
def budgeted_scores(x):
    """The issue's program: two checks tie the positives' count to the input length, in
    the branch that runs only for a positive total."""
    def positive_path(x):
        m = x[x > 0]
        ss.check(m.shape[0] % 2 == 0)
        ss.check(2 * m.shape[0] + 3 * x.shape[0] == 34)
        return m.sum() + x

    return ss.cond(x.sum() > 0, positive_path, lambda x: x * 2, (x,))


class GatedAligner:
    """A layer object whose positive path aligns the kept entries with a slice."""

    def __init__(self, offset):
        self.offset = offset

    def __call__(self, x):
        def keep(x):
            m = x[x > 0]
            ss.check(m.shape[0] == x.shape[0] - self.offset)
            return (m + x[self.offset:]).sum() + x

        def skip(x):
            return x - 1
        return ss.cond(x.sum() > 0, keep, skip, (x,))


def bounded_pairs(x):
    def pairs(x):
        m = x[x > 0]
        ss.check(m.shape[0] % 2 == 0)
        ss.check(m.shape[0] <= 6, "at most three pairs")
        return m.reshape(-1, 2).sum() + x

    return ss.cond(x.sum() > 0, pairs, lambda x: x + 0.0, (x,))


@pytest.mark.parametrize("example", [_data(10, 2), _data(10, 8), _data(12, 5)],
                         ids=["satisfied", "violated", "odd"])
def test_branch_checks_never_constrain_the_inputs(example):
    ep = export(budgeted_scores, (example,), dynamic_shapes={"x": (A,)})
    # neither pinned nor made a multiple of anything: the other branch takes any length
    rc = {str(k): v for k, v in ep.range_constraints.items()}
    assert list(rc) == ["s0"] and (rc["s0"].lower, str(rc["s0"].upper)) == (2, "int_oo")
    for run in (ep.module(), ep.compile()):
        for n, pos in [(10, 2), (10, 8), (10, 4), (10, 3), (13, 0), (7, 0), (2, 0),
                       (4, 4), (6, 1)]:
            _agree(run, budgeted_scores, _data(n, pos))


def test_a_violated_branch_check_names_itself_in_the_users_names():
    ep = export(budgeted_scores, (_data(10, 2),), dynamic_shapes={"x": (A,)})
    with pytest.raises(ss.UserError, match=r"m\.shape\[0\] % 2 == 0"):
        ep.module()(_data(10, 3))
    with pytest.raises(ss.UserError) as info:
        ep.module()(_data(10, 4))
    text = str(info.value)
    assert "m.shape[0]" in text and "x.shape[0]" in text and "34" in text
    assert "u0" not in text and "u1" not in text and "s0" not in text


def test_a_bound_after_a_congruence_is_quoted_as_written():
    ep = export(bounded_pairs, (_data(9, 4),), dynamic_shapes={"x": (A,)})
    with pytest.raises(ss.UserError, match=r"m\.shape\[0\] <= 6.*at most three pairs"):
        ep.module()(_data(12, 8))
    for run in (ep.module(), ep.compile()):
        for n, pos in [(9, 4), (9, 6), (9, 8), (9, 5), (3, 0), (20, 2)]:
            _agree(run, bounded_pairs, _data(n, pos))


def test_an_offset_check_in_a_branch_leaves_short_inputs_to_the_other_branch():
    layer = GatedAligner(3)
    ep = export(layer, (_data(8, 5),), dynamic_shapes={"x": (A,)})
    for run in (ep.module(), ep.compile()):
        for n, pos in [(8, 5), (9, 6), (8, 4), (2, 0), (3, 0), (5, 1), (4, 1)]:
            _agree(run, layer, _data(n, pos))


def test_a_check_false_at_the_example_still_builds_and_runs():
    # 8 positives of 10: the check fails on the example itself, which export cannot see
    # (the size has no example value); module() must build and fail like eager does
    ep = export(budgeted_scores, (_data(10, 8),), dynamic_shapes={"x": (A,)})
    with pytest.raises(ss.UserError, match="ss.check"):
        ep.module()(_data(10, 8))
    np.testing.assert_array_equal(ep.module()(_data(10, 2)), budgeted_scores(_data(10, 2)))


def test_a_check_on_an_outer_size_inside_a_branch_runs_only_in_that_branch():
    def f(x):
        m = x[x > 0]

        def strict(x):
            ss.check(m.shape[0] == x.shape[0] - 2)
            return x + m.sum()
        return ss.cond(x.sum() > 0, strict, lambda x: x * 3, (x,))

    ep = export(f, (_data(6, 4),), dynamic_shapes={"x": (A,)})
    for run in (ep.module(), ep.compile()):
        for n, pos in [(6, 4), (6, 3), (6, 0), (3, 1), (2, 0)]:
            _agree(run, f, _data(n, pos))


def test_checks_that_contradict_each_other_are_a_user_error():
    def f(x):
        m = x[x > 0]
        ss.check(m.shape[0] % 2 == 0)
        ss.check(m.shape[0] == 5)
        return m

    with pytest.raises(ss.UserError, match=r"m\.shape\[0\]"):
        export(f, (_data(8, 4),), dynamic_shapes={"x": (A,)})


# ---------------------------------------------------------------------------- top level
def budget_top(x):
    m = x[x > 0]
    ss.check(m.shape[0] % 2 == 0)
    ss.check(2 * m.shape[0] + 3 * x.shape[0] == 34)
    return m.sum() + x


def test_top_level_checks_on_a_computed_size_are_run_time_checks_only():
    # as torch.export: a check tying a data-dependent size to an input size is a run-time
    # assertion, not an input constraint (no "x.shape[0] % 4 == 2" in the contract)
    ep = export(budget_top, (_data(10, 2),), dynamic_shapes={"x": (A,)})
    rc = {str(k): v for k, v in ep.range_constraints.items()}
    assert list(rc) == ["s0"] and rc["s0"].lower == 2 and str(rc["s0"].upper) == "int_oo"
    for run in (ep.module(), ep.compile()):
        for n, pos in [(10, 2), (10, 4), (10, 3), (8, 5), (6, 8 - 2), (2, 2)]:
            _agree(run, budget_top, _data(n, pos))


def test_an_offset_check_at_top_level_keeps_the_size_and_the_message():
    def align(x):
        m = x[x > 0]
        ss.check(m.shape[0] == x.shape[0] - 3)
        ss.check(m.shape[0] >= 2, "needs two positives")
        return m + x[3:]

    ep = export(align, (_data(8, 5),), dynamic_shapes={"x": (A,)})
    with pytest.raises(ss.UserError, match=r"m\.shape\[0\] >= 2.*two positives"):
        ep.module()(_data(4, 1))
    for run in (ep.module(), ep.compile()):
        for n, pos in [(8, 5), (9, 6), (8, 4), (4, 1), (5, 2), (3, 0)]:
            _agree(run, align, _data(n, pos))


# ---------------------------------------------------------------------------- fuzz
_FORMS = {
    "offset": lambda m, x, k: ss.check(m.shape[0] == x.shape[0] - k),
    "const": lambda m, x, k: ss.check(m.shape[0] == k),
    "mod": lambda m, x, k: ss.check(m.shape[0] % k == 0),
    "two_var": lambda m, x, k: ss.check(2 * m.shape[0] + 3 * x.shape[0] == 5 * k + 9),
    "upper": lambda m, x, k: ss.check(m.shape[0] <= x.shape[0] - k),
    "mod_then_two_var": lambda m, x, k: (ss.check(m.shape[0] % 2 == 0),
                                         ss.check(2 * m.shape[0] + 3 * x.shape[0] == 4 * k + 30)),
}


@settings(max_examples=25 if __import__("os").environ.get("HYPOTHESIS_PROFILE") != "thorough"
          else 1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(form=st.sampled_from(sorted(_FORMS)), k=st.integers(2, 4),
       example=st.tuples(st.integers(2, 12), st.integers(0, 12)),
       probes=st.lists(st.tuples(st.integers(2, 14), st.integers(0, 14)), min_size=1,
                       max_size=4))
def test_branch_checks_fail_at_run_time_exactly_where_eager_fails(form, k, example, probes):
    check = _FORMS[form]

    def f(x):
        def checked(x):
            m = x[x > 0]
            check(m, x, k)
            return m.sum() + x
        return ss.cond(x.sum() > 0, checked, lambda x: x * 2, (x,))

    n, pos = example
    ep = export(f, (_data(n, min(pos, n)),), dynamic_shapes={"x": (A,)})
    run = ep.module()
    for n2, pos2 in probes:
        _agree(run, f, _data(n2, min(pos2, n2)))


def test_a_python_if_on_a_checked_size_inside_a_branch_stays_in_the_branch():
    # after the check, m.shape[0] is x.shape[0] - 3: the `if` is decided on the example, and
    # that path is checked where the branch computes m, never on the inputs (x of length 4
    # takes the other branch and must run)
    def f(x):
        def keep(x):
            m = x[x > 0]
            ss.check(m.shape[0] == x.shape[0] - 3)
            if m.shape[0] > 2:
                return m.sum() * 2 + x
            return m.sum() + x
        return ss.cond(x.sum() > 0, keep, lambda x: x * 2, (x,))

    ep = export(f, (_data(8, 5),), dynamic_shapes={"x": (A,)})
    rc = {str(k): v for k, v in ep.range_constraints.items()}
    assert rc["s0"].lower == 2
    for run in (ep.module(), ep.compile()):
        for n, pos in [(8, 5), (4, 0), (2, 0), (9, 6), (5, 2)]:
            kind, _ = _outcome(f, _data(n, pos))
            got_kind, got = _outcome(run, _data(n, pos))
            if got_kind == "ok":         # never a different value than eager
                np.testing.assert_array_equal(got, f(_data(n, pos)))
            else:                        # the traced path only: (5, 2) takes the other `if`
                assert (n, pos) == (5, 2) or kind == "error", (n, pos, got)
