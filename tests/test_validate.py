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
    w.semantics = [s for s in w.semantics if s[0] != "range"]
    with pytest.raises(InternalError, match="accepts inputs the constraint set rejects"):
        validate.validate_check(tr.program.constraints, w)


def test_detects_a_check_that_is_too_strict():
    tr = traced()
    w = CheckWriter(tr.program.constraints)
    w.emit()
    w.semantics.append(("static", "x.shape[1]", 4))
    with pytest.raises(InternalError, match="rejects inputs the constraint set admits"):
        validate.validate_check(tr.program.constraints, w)
