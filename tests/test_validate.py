"""Translation validation catches a constraint set that drops a guard, and an input check
that does not check what the constraint set says."""
import numpy as np
import pytest

import symshape as ss
from symshape import relations as R
from symshape import validate
from symshape.capture.export import trace_program
from symshape.errors import InternalError
from symshape.guards import CheckWriter
from symshape.env import Guard

A = ss.Dim.AUTO


def traced():
    def f(x, y):
        if x.shape[0] <= 16:
            return x @ y
        return x
    return trace_program(f, (np.ones((8, 4)), np.ones((4, 3))), None,
                         {"x": (A, A), "y": (A, A)})


def test_validation_is_on_in_the_test_suite():
    assert validate.enabled()


def test_accepts_a_correct_export():
    tr = traced()
    validate.validate_guards(tr.env, tr.program.constraints)
    w = CheckWriter(tr.program.constraints)
    w.emit()
    validate.validate_check(tr.program.constraints, w)


def test_detects_a_guard_the_constraint_set_does_not_imply():
    tr = traced()
    s0 = next(iter(tr.program.constraints.ranges))
    tr.env.guards.append(Guard(R.le(s0.expr, 8), None, "guard"))
    with pytest.raises(InternalError, match="does not imply the guard"):
        validate.validate_guards(tr.env, tr.program.constraints)


def test_detects_a_check_that_misses_a_range():
    tr = traced()
    w = CheckWriter(tr.program.constraints)
    w.emit()
    # the emitted code itself is what is validated: drop the line that checks a range
    w.lines = [line for line in w.lines if "bad_range" not in line]
    with pytest.raises(InternalError, match="accepts inputs the constraint set rejects"):
        validate.validate_check(tr.program.constraints, w)


def test_detects_a_check_that_is_too_strict():
    tr = traced()
    w = CheckWriter(tr.program.constraints)
    w.emit()
    w.lines.append("if x.shape[1] != 4: _rt.bad_static('x.shape[1]', 4, x.shape[1])")
    with pytest.raises(InternalError, match="rejects inputs the constraint set admits"):
        validate.validate_check(tr.program.constraints, w)


def test_detects_an_off_by_one_in_an_emitted_bound():
    tr = traced()
    w = CheckWriter(tr.program.constraints)
    w.emit()
    assert any("< 2" in line for line in w.lines), w.lines
    w.lines = [line.replace("< 2", "< 1") for line in w.lines]
    with pytest.raises(InternalError, match="accepts inputs the constraint set rejects"):
        validate.validate_check(tr.program.constraints, w)


def test_a_check_line_it_cannot_read_is_an_error_not_a_pass():
    tr = traced()
    w = CheckWriter(tr.program.constraints)
    w.emit()
    w.lines.append("print('hello')")
    with pytest.raises(InternalError, match="cannot read the check line"):
        validate.validate_check(tr.program.constraints, w)


def test_a_divisibility_check_is_validated_through_its_divmod():
    d = ss.Dim("d", min=1)
    tr = trace_program(lambda x, y: x + y[1:], (np.ones(7), np.ones(8)), None,
                       {"x": (3 * d + 1,), "y": (3 * d + 2,)})
    cs = tr.program.constraints
    w = CheckWriter(cs)
    w.emit()
    assert any("divmod" in line for line in w.lines), w.lines
    validate.validate_check(cs, w)
    w.lines = [line for line in w.lines if "bad_congruence" not in line]
    with pytest.raises(InternalError, match="accepts inputs the constraint set rejects"):
        validate.validate_check(cs, w)


def keep_positive_then_align(x):
    m = x[x > 0]
    ss.check(m.shape[0] == x.shape[0] - 3)
    return m + x[3:]


def _runtime_lines(tr):
    from symshape.capture.pycode import Renderer, _ready_checks
    cs = tr.program.constraints
    bound = set(tr.env.ranges)
    return _ready_checks(list(cs.runtime_checks), bound, Renderer({}, {})), bound


def test_run_time_checks_on_data_dependent_sizes_are_validated():
    tr = trace_program(keep_positive_then_align, (np.array([1., 2, 3, 4, 5, -1, -1, -1]),),
                       None, {"x": (A,)})
    cs = tr.program.constraints
    lines, bound = _runtime_lines(tr)
    assert lines and all("bad_check" in line for line in lines)
    validate.validate_runtime_checks(tr.env, cs, lines, bound)
    # nothing emitted (the check dropped as "True" after its replacement): caught
    with pytest.raises(InternalError, match="do not enforce ss.check"):
        validate.validate_runtime_checks(tr.env, cs, [], bound)
    # a weaker emitted check: caught
    weak = [line.replace("==", ">=", 1) for line in lines]
    with pytest.raises(InternalError, match="do not enforce ss.check"):
        validate.validate_runtime_checks(tr.env, cs, weak, bound)


@pytest.mark.parametrize("check", [
    lambda m, x: ss.check(m.shape[0] % 2 == 0),
    lambda m, x: ss.check(2 * m.shape[0] + 3 * x.shape[0] == 34),
    lambda m, x: ss.check(m.shape[0] == 5),
    lambda m, x: ss.check(m.shape[0] <= x.shape[0] - 2)])
def test_every_kind_of_data_dependent_check_validates_and_is_caught_when_dropped(check):
    def f(x):
        m = x[x > 0]
        check(m, x)
        return m * 2
    tr = trace_program(f, (np.array([1., 2, 3, 4, 5, 6, -1, -1]),), None, {"x": (A,)})
    cs = tr.program.constraints
    lines, bound = _runtime_lines(tr)
    validate.validate_runtime_checks(tr.env, cs, lines, bound)
    with pytest.raises(InternalError, match="do not enforce ss.check"):
        validate.validate_runtime_checks(tr.env, cs, [], bound)
