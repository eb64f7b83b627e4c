"""Tests that kill the surviving mutants of ``symshape/env.py``'s ``evaluate`` / ``check``
and the guard recording around them (the mutation gate, ``python -m proofs.mutation --only
env``; docs/mutation_report.md)."""
import logging

import pytest

from symshape import logs
from symshape import relations as R
from symshape.env import ShapeEnv
from symshape.errors import GuardOnDataDependentError
from symshape.expr import mod, smin
from symshape.infinity import int_oo
from symshape.ranges import ValueRange


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
    # frames that made it (mutant: the frame lines built with `//`, a TypeError)
    monkeypatch.setattr(logs, "guard_stack_filter", "s0")
    env = ShapeEnv()
    x = env.create_symbol(9, "x", ValueRange(2, int_oo)).expr
    with caplog.at_level(logging.INFO, logger="symshape.dynamic"):
        assert env.evaluate(R.le(x, 20)) is True
    stack = [r.getMessage() for r in caplog.records if "user stack for guard" in r.getMessage()]
    assert len(stack) == 1
    assert "in test_the_guard_stack_log_lists_the_user_frames" in stack[0]
