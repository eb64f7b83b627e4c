"""Translation validation catches a constraint set that drops a guard, and an input check
that does not check what the constraint set says."""
import numpy as np
import pytest

import symshape as ss
from symshape.algebra import relations as R
from symshape.reasoning import validate
from symshape.capture.export import trace_program
from symshape.capture.ir import Subgraph
from symshape.errors import InternalError
from symshape.contract import records as C
from symshape.contract import validate as contract_validate
from symshape.contract.writer import CheckWriter
from symshape.reasoning.env import Guard

A = ss.Dim.AUTO


def traced():
    def f(x, y):
        if x.shape[0] <= 16:
            return x @ y
        return x
    return trace_program(f, (np.ones((8, 4)), np.ones((4, 3))), None,
                         {"x": (A, A), "y": (A, A)})


def written():
    """The traced program and the check writer that has emitted its input check."""
    tr = traced()
    w = CheckWriter(tr.program.constraints)
    w.emit()
    return tr, w


def test_validation_is_on_in_the_test_suite():
    assert validate.enabled()


def test_accepts_a_correct_export():
    tr = traced()
    validate.validate_guards(tr.env, tr.program.constraints)
    w = CheckWriter(tr.program.constraints)
    w.emit()
    contract_validate.validate_check(tr.program.constraints, w)


def test_detects_a_guard_the_constraint_set_does_not_imply():
    tr = traced()
    s0 = next(iter(tr.program.constraints.ranges))
    tr.env.guards.append(Guard(R.le(s0.expr, 8), None, "guard"))
    with pytest.raises(InternalError, match="does not imply the guard"):
        validate.validate_guards(tr.env, tr.program.constraints)


def test_detects_a_check_that_misses_a_range():
    tr, w = written()
    # the records the renderer writes are what is validated: drop the range check
    w.checks = [r for r in w.checks if type(r) is not C.RangeCheck]
    with pytest.raises(InternalError, match="accepts inputs the constraint set rejects"):
        contract_validate.validate_check(tr.program.constraints, w)


def test_detects_a_check_that_is_too_strict():
    tr, w = written()
    shape = next(r for r in w.checks if type(r) is C.ReadShape)
    w.checks.append(C.StaticDim("x.shape[1]", shape.names[1], 4))
    with pytest.raises(InternalError, match="rejects inputs the constraint set admits"):
        contract_validate.validate_check(tr.program.constraints, w)


def test_detects_an_off_by_one_in_an_emitted_bound():
    tr, w = written()
    assert any("< 2" in line for line in w.lines), w.lines
    w.checks = [C.RangeCheck(r.sym, 1, r.hi, r.axis, r.coeff, r.rest, r.label)
                if type(r) is C.RangeCheck else r for r in w.checks]
    with pytest.raises(InternalError, match="accepts inputs the constraint set rejects"):
        contract_validate.validate_check(tr.program.constraints, w)


def test_a_check_record_it_cannot_read_is_an_error_not_a_pass():
    tr, w = written()
    w.checks.append("print('hello')")
    with pytest.raises(InternalError, match="cannot read the check record"):
        contract_validate.validate_check(tr.program.constraints, w)


def test_a_divisibility_check_is_validated_through_its_divmod():
    d = ss.Dim("d", min=1)
    tr = trace_program(lambda x, y: x + y[1:], (np.ones(7), np.ones(8)), None,
                       {"x": (3 * d + 1,), "y": (3 * d + 2,)})
    cs = tr.program.constraints
    w = CheckWriter(cs)
    w.emit()
    assert any("divmod" in line for line in w.lines), w.lines
    contract_validate.validate_check(cs, w)
    w.checks = [r for r in w.checks if type(r) is not C.CongruenceCheck]
    with pytest.raises(InternalError, match="accepts inputs the constraint set rejects"):
        contract_validate.validate_check(cs, w)


def keep_positive_then_align(x):
    m = x[x > 0]
    ss.check(m.shape[0] == x.shape[0] - 3)
    return m + x[3:]


def _runtime_lines(tr):
    from symshape.codegen.pycode import Renderer, ready_checks
    cs = tr.program.constraints
    bound = set(tr.env.ranges)
    return ready_checks(list(cs.runtime_checks), bound, Renderer({}, {})), bound


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


# --------------------------------------------------------------------------- branches
def _branch_program(check):
    """A model-style forward whose positive-only path runs inside ss.cond."""
    def forward(x):
        def positive_path(x):
            m = x[x > 0]
            check(m, x)
            return m.sum() + x

        def fallback(x):
            return x * 2
        return ss.cond(x.sum() > 0, positive_path, fallback, (x,))
    return forward


BRANCH_CHECKS = [
    lambda m, x: ss.check(m.shape[0] == x.shape[0] - 2),       # solved into u0 -> s0 - 2
    lambda m, x: ss.check(m.shape[0] % 2 == 0),                # solved into a quotient
    lambda m, x: ss.check(2 * m.shape[0] + 3 * x.shape[0] == 36),
    lambda m, x: ss.check(m.shape[0] <= x.shape[0] - 2)]


def _drop_one(monkeypatch, kind):
    """Make the emitted branch functions lose their first line calling ``_rt.<kind>``."""
    from symshape.codegen import pycode
    real = pycode.subgraph_lines
    dropped = []

    def lossy(sub, r, ns):
        lines = real(sub, r, ns)
        hit = [i for i, line in enumerate(lines) if "_rt.%s(" % kind in line]
        if hit:
            dropped.append(lines.pop(hit[0]))
        return lines
    monkeypatch.setattr(pycode, "subgraph_lines", lossy)
    return dropped


@pytest.mark.parametrize("check", BRANCH_CHECKS)
def test_checks_inside_a_cond_branch_are_validated_and_a_dropped_one_is_caught(
        check, monkeypatch):
    example = (np.array([1., 2, 3, 4, 5, 6, -1, -1]),)
    tr = trace_program(_branch_program(check), example, None, {"x": (A,)})
    sub = next(v for n in tr.program.graph.nodes for v in n.attrs.values()
               if isinstance(v, Subgraph) and v.goals)
    assert sub.checks                          # the branch emits its own checks
    dropped = _drop_one(monkeypatch, "bad_check")
    with pytest.raises(InternalError, match="do not enforce ss.check"):
        trace_program(_branch_program(check), example, None, {"x": (A,)})
    assert dropped


def test_a_weakened_branch_check_is_caught(monkeypatch):
    from symshape.codegen import pycode
    real = pycode.subgraph_lines
    monkeypatch.setattr(pycode, "subgraph_lines", lambda sub, r, ns: [
        line.replace("== 0", ">= 0") if "bad_check" in line else line
        for line in real(sub, r, ns)])
    with pytest.raises(InternalError, match="branch true_graph_0 do not enforce"):
        trace_program(_branch_program(BRANCH_CHECKS[0]), (np.array([1., 2, 3, -1]),), None,
                      {"x": (A,)})


def test_a_check_on_an_input_size_inside_a_loop_body_is_validated(monkeypatch):
    def count_down(x, k):
        def more(a, i):
            return i > 0

        def step(a, i):
            ss.check(a.shape[0] >= 3, "the loop needs three rows")
            return a[::-1] * 1.0, i - 1
        return ss.while_loop(more, step, (x, k))[0]
    args = (np.ones(4), np.array(3))
    trace_program(count_down, args, None, {"x": (A,), "k": ()})
    dropped = _drop_one(monkeypatch, "bad_guard")
    with pytest.raises(InternalError, match="do not enforce ss.check"):
        trace_program(count_down, args, None, {"x": (A,), "k": ()})
    assert "three rows" in dropped[0]


def test_a_branch_check_reading_a_size_nothing_binds_is_an_error_not_a_pass(monkeypatch):
    from symshape.codegen import pycode
    real = pycode.subgraph_lines

    def early(sub, r, ns):
        lines = real(sub, r, ns)
        hit = [i for i, line in enumerate(lines) if "bad_check" in line]
        if hit:
            lines.insert(1, lines.pop(hit[0]))      # before the size is computed
        return lines
    monkeypatch.setattr(pycode, "subgraph_lines", early)
    with pytest.raises(InternalError, match="used before it is assigned"):
        trace_program(_branch_program(BRANCH_CHECKS[0]), (np.array([1., 2, 3, -1]),), None,
                      {"x": (A,)})
