"""Tests that kill the surviving mutants of ``symshape/reasoning/env.py``'s ``evaluate`` / ``check``
and the guard recording around them (the mutation gate, ``python -m proofs.mutation --only
env``; docs/mutation_report.md)."""
import logging

import pytest

from symshape import logs
from symshape.algebra import relations as R
from symshape.reasoning.env import ShapeEnv
from symshape.errors import GuardOnDataDependentError
from symshape.algebra.expr import mod, smin
from symshape.algebra.infinity import int_oo
from symshape.algebra.ranges import ValueRange
from symshape.userframe import UserFrame


def test_a_data_dependent_condition_is_shown_as_python_the_user_can_paste():
    # the message's `ss.check(...)` is Python: `%` and `min`, never sympy's Mod / Min,
    # and it means the condition (mutant: format(..., py=False))
    env = ShapeEnv()
    u = env.create_unbacked("u", ValueRange(0, int_oo)).expr
    with pytest.raises(GuardOnDataDependentError) as e:
        env.evaluate(R.le(mod(u, 4) + smin(u, 7), 5))
    msg = str(e.value)
    assert "Mod" not in msg and "Min" not in msg
    pasted = msg.split("Add `ss.check(")[1].split(")` (or its negation)")[0]
    name = u.as_symbol().name
    for v in range(30):
        assert eval(pasted, {name: v}) == ((v % 4) + min(v, 7) <= 5)


def test_the_guard_stack_log_lists_the_user_frames(caplog, monkeypatch):
    # SYMSHAPE_GUARD_STACK: a guard whose text holds the filter is logged with the user
    # frames that made it (mutants: the frame lines built with `//` or `*`, a TypeError, or `+`)
    monkeypatch.setattr(logs, "guard_stack_filter", "s0")
    env = ShapeEnv()
    x = env.create_symbol(9, "x", ValueRange(2, int_oo)).expr
    with caplog.at_level(logging.INFO, logger="symshape.dynamic"):
        assert env.evaluate(R.le(x, 20)) is True
    stack = [r.getMessage() for r in caplog.records if "user stack for guard" in r.getMessage()]
    assert len(stack) == 1
    lines = stack[0].splitlines()
    assert lines[0] == "  user stack for guard s0 <= 20:"
    assert lines[1].startswith("    %s:" % __file__)
    assert lines[1].endswith("in test_the_guard_stack_log_lists_the_user_frames, code: "
                             "assert env.evaluate(R.le(x, 20)) is True")


def test_a_data_dependent_size_is_named_by_the_line_that_made_it():
    # the message says where the size was made: `code` at file:line (mutant: the pair
    # formatted with `-`, a TypeError)
    env = ShapeEnv()
    here = UserFrame(__file__, 1, "<module>")
    u = env.create_unbacked("m.sum()", ValueRange(0, int_oo), frame=here).expr
    with pytest.raises(GuardOnDataDependentError) as e:
        env.evaluate(R.le(u, 5))
    assert "(it is made by `%s` at %s)" % (here.code, here.location) in str(e.value)


def test_cancel_pending_drops_a_size_that_became_the_one_named():
    # a pending specialisation of y + 1 is cancelled by x + 1 once y is replaced by x
    # (the pending form is compared after simplification too; mutant: `or`)
    env = ShapeEnv()
    x, y = (env.create_symbol(5, n, ValueRange(2, int_oo)).expr for n in "xy")
    assert env.specialize_later(y + 1, "int()") == 6
    env.replace(y.as_symbol(), x)
    env.cancel_pending([x + 1])
    assert env.pending == []
    assert env.specialize_later(x + 2, "int()") == 7
    env.cancel_pending([x + 3])
    assert [p[0] for p in env.pending] == [x + 2]
