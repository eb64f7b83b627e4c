"""The generated input check (symshape.contract.writer.CheckWriter) accepts exactly what the
ConstraintSet describes and rejects everything else with a UserError naming input, axis,
expected and actual value.  Hand-built ConstraintSets first, then small exports."""
import itertools

import numpy as np
import pytest

import symshape as ss
from symshape import Dim, int_oo
from symshape.algebra import relations as R
from symshape import runtime as _rt
from symshape.errors import InternalError
from symshape.algebra.expr import Sym, format_expr
from symshape.contract.constraint_set import ConstraintSet, InputDesc
from symshape.contract.writer import CheckWriter
from symshape.algebra.ranges import ValueRange

VR = ValueRange
F32 = np.dtype("float32")
S0, S1, S2 = Sym(0), Sym(1), Sym(2)
s0, s1, s2 = S0.expr, S1.expr, S2.expr
STATIC_HINT = ("(the axis is static: the export saw this size and the spec did not mark it "
               "dynamic; pass Dim.AUTO or a Dim for it in dynamic_shapes to accept other sizes)")


def compile_check(cs, params):
    """The check lines of ``cs`` as ``check(*params)`` returning "ok" when accepted."""
    writer = CheckWriter(cs)
    lines = writer.emit()
    src = "def check(%s):\n%s    return 'ok'\n" % (
        ", ".join(params), "".join("    %s\n" % line for line in lines))
    ns = {"np": np, "_ndarray": np.ndarray, "_rt": _rt}
    ns.update(writer.consts)
    exec(compile(src, "<check>", "exec"), ns)
    return ns["check"], lines


def outcome(fn, *args):
    try:
        return fn(*args)
    except ss.UserError as e:
        return str(e)


def arr(*shape, dtype=F32):
    return np.zeros(shape, dtype)


# --------------------------------------------------------------------------- hand-built
def cs_main():
    """x: (s0, 4), y: (2*s1 + 1, s0), z: (s0 + s1,); s0 = Dim inp1_dim1 in [4, 18];
    s1 in [2, int_oo]; residual guard s0 + s1 <= 20."""
    return ConstraintSet(
        [InputDesc("x", "x", dims=(s0, 4), dtype=F32),
         InputDesc("y", "y", dims=(2 * s1 + 1, s0), dtype=F32),
         InputDesc("z", "z", dims=(s0 + s1,), dtype=F32)],
        {S0: VR(4, 18), S1: VR(2, int_oo)}, [R.le(s0 + s1, 20)], {}, {S0: "inp1_dim1"})


MAIN_CASES = [
    ((arr(5, 4), arr(7, 5), arr(8)), "ok"),
    ((arr(4, 4), arr(5, 4), arr(6)), "ok"),
    ((arr(18, 4), arr(5, 18), arr(20)), "ok"),
    ((arr(1, 4), arr(7, 5), arr(8)),
     "x.shape[0] = 1 is outside the range [4, 18] of Dim 'inp1_dim1'"),
    ((arr(19, 4), arr(7, 19), arr(22)),
     "x.shape[0] = 19 is outside the range [4, 18] of Dim 'inp1_dim1'"),
    ((arr(5, 3), arr(7, 5), arr(8)), "x.shape[1]: expected 4, got 3 " + STATIC_HINT),
    ((arr(5, 4), arr(8, 5), arr(8)),
     "y.shape[0] = 8 is not of the form 2*k + 1 required by the program"),
    ((arr(5, 4), arr(3, 5), arr(6)),
     "y.shape[0] = 3 is outside the range [5, int_oo]"),
    ((arr(5, 4), arr(7, 6), arr(8)), "y.shape[1] must equal x.shape[0] (= 5), got 6"),
    ((arr(5, 4), arr(7, 5), arr(9)), "z.shape[0] must equal x.shape[0] + (y.shape[0] - 1)/2 (= 8), got 9"),
    ((arr(18, 4), arr(7, 18), arr(21)),
     "the inputs violate the guard `x.shape[0] + (y.shape[0] - 1)/2 <= 20` that the program was exported "
     "under"),
    ((arr(5, 4, dtype=np.float64), arr(7, 5), arr(8)),
     "input x: expected dtype float32, got float64"),
    ((arr(5, 4, 1), arr(7, 5), arr(8)), "input x: expected 2 dimensions, got 3 (shape (5, 4, 1))"),
    ((arr(5), arr(7, 5), arr(8)), "input x: expected 2 dimensions, got 1 (shape (5,))"),
    (([[0.0] * 4] * 5, arr(7, 5), arr(8)), "input x: expected a numpy.ndarray, got list"),
    ((arr(5, 4), np.float32(3), arr(8)), "input y: expected a numpy.ndarray, got float32"),
    # several inputs wrong: the first in argument order is named
    ((arr(5, 3), arr(7, 6), arr(1)), "x.shape[1]: expected 4, got 3 " + STATIC_HINT),
    ((arr(5, 4), arr(7, 6), arr(8, dtype=np.int32)),
     "y.shape[1] must equal x.shape[0] (= 5), got 6"),
]


@pytest.mark.parametrize("args,expected", MAIN_CASES)
def test_hand_built_check_messages(args, expected):
    check, _ = compile_check(cs_main(), ["x", "y", "z"])
    assert outcome(check, *args) == expected


def test_hand_built_check_accepts_exactly_the_contract():
    check, _ = compile_check(cs_main(), ["x", "y", "z"])
    for x0, y0, dz in itertools.product(range(0, 22), range(0, 12), (-1, 0, 1)):
        y_root, rem = divmod(y0 - 1, 2)
        valid = (4 <= x0 <= 18 and rem == 0 and y_root >= 2 and x0 + y_root <= 20 and dz == 0)
        z0 = x0 + y_root + dz
        if z0 < 0:
            continue
        got = outcome(check, arr(x0, 4), arr(y0, x0), arr(z0))
        assert (got == "ok") == valid, (x0, y0, dz, got)


def test_hand_built_check_is_straight_line_and_binds_roots():
    _, lines = compile_check(cs_main(), ["x", "y", "z"])
    assert not any(line.startswith(("for ", "while ")) for line in lines)
    assert "s0 = __a0_0" in lines
    assert "s1, _r = divmod((__a1_0 - 1), 2)" in lines
    assert lines[-1] == ("if not ((s0 + s1 - 20) <= 0): _rt.bad_guard("
                         "'x.shape[0] + (y.shape[0] - 1)/2 <= 20')")


def test_range_constraints_of_constraint_set():
    rc = cs_main().range_constraints()
    assert {format_expr(k): repr(v) for k, v in rc.items()} == {
        # every range is exact under the residual guard s0 + s1 <= 20 (s1 <= 16), roots
        # included: the set was built by hand, its root ranges not narrowed to the guard
        "s0": "VR[4, 18]", "s1": "VR[2, 16]", "2*s1 + 1": "VR[5, 33]",
        "s0 + s1": "VR[6, 20]"}
    assert cs_main().roots() == [S0, S1]


def test_multiple_check_binds_symbol_and_checks_later_axes():
    cs = ConstraintSet([InputDesc("x", "x", dims=(4 * s0,), dtype=F32),
                        InputDesc("y", "y", dims=(s0 + 1, 3), dtype=F32)],
                       {S0: VR(1, int_oo)}, [], {}, {})
    check, _ = compile_check(cs, ["x", "y"])
    assert outcome(check, arr(8), arr(3, 3)) == "ok"
    assert outcome(check, arr(4), arr(2, 3)) == "ok"
    assert outcome(check, arr(10), arr(3, 3)) == \
        "x.shape[0] = 10 is not of the form 4*k required by the program"
    assert outcome(check, arr(0), arr(1, 3)) == \
        "x.shape[0] = 0 is outside the range [4, int_oo]"
    assert outcome(check, arr(8), arr(2, 3)) == "y.shape[0] must equal x.shape[0]/4 + 1 (= 3), got 2"
    assert outcome(check, arr(8), arr(3, 2)) == "y.shape[1]: expected 3, got 2 " + STATIC_HINT


def test_named_multiple_uses_dim_name():
    cs = ConstraintSet([InputDesc("x", "x", dims=(4 * s0,), dtype=F32)],
                       {S0: VR(2, 8)}, [], {}, {S0: "dx"})
    check, _ = compile_check(cs, ["x"])
    assert outcome(check, arr(12)) == "ok"
    assert outcome(check, arr(10)) == \
        "x.shape[0] = 10 is not of the form 4*dx required by the program"
    assert outcome(check, arr(36)) == \
        "x.shape[0] (dx = x.shape[0]/4) = 9 is outside the range [2, 8] of Dim 'dx'"


def test_negative_coefficient_binding_accepts_exactly():
    """x: (20 - d,), y: (d,) with d in [2, 16]: x.shape[0] binds d = 20 - x.shape[0]."""
    cs = ConstraintSet([InputDesc("x", "x", dims=(20 - s0,), dtype=F32),
                        InputDesc("y", "y", dims=(s0,), dtype=F32)],
                       {S0: VR(2, 16)}, [], {}, {S0: "d"})
    check, _ = compile_check(cs, ["x", "y"])
    for x0 in range(0, 21):
        got = outcome(check, arr(x0), arr(20 - x0))
        assert (got == "ok") == (4 <= x0 <= 18), (x0, got)
        if got != "ok":
            assert got.startswith("x.shape[0] (d = ")
            assert (") = %d is outside the range [2, 16] of Dim 'd'" % (20 - x0)) in got
    assert outcome(check, arr(10), arr(9)) == "y.shape[0] must equal d (= 10), got 9"


def test_symbol_bound_late_from_a_product():
    """x: (s0*s1,) can only be checked once y and z have bound s0 and s1."""
    cs = ConstraintSet([InputDesc("x", "x", dims=(s0 * s1,), dtype=F32),
                        InputDesc("y", "y", dims=(s0,), dtype=F32),
                        InputDesc("z", "z", dims=(s1,), dtype=F32)],
                       {S0: VR(2, int_oo), S1: VR(2, int_oo)}, [], {}, {})
    check, _ = compile_check(cs, ["x", "y", "z"])
    assert outcome(check, arr(6), arr(2), arr(3)) == "ok"
    assert outcome(check, arr(5), arr(2), arr(3)) == \
        "x.shape[0] must equal y.shape[0]*z.shape[0] (= 6), got 5"


def test_nested_paths_and_scalars():
    cs = ConstraintSet([InputDesc("batch[0]", ("batch", (0,)), dims=(s0, 2), dtype=F32),
                        InputDesc("feats['a']", ("feats", ("a",)), dims=(3, s0), dtype=F32),
                        InputDesc("n", "n", value=3)],
                       {S0: VR(2, int_oo)}, [], {}, {})
    check, _ = compile_check(cs, ["batch", "feats", "n"])
    assert outcome(check, [arr(5, 2)], {"a": arr(3, 5)}, 3) == "ok"
    assert outcome(check, [arr(5, 3)], {"a": arr(3, 5)}, 3) == \
        "batch[0].shape[1]: expected 2, got 3 " + STATIC_HINT
    assert outcome(check, [arr(5, 2)], {"a": arr(3, 4)}, 3) == \
        "feats['a'].shape[1] must equal batch[0].shape[0] (= 5), got 4"
    assert outcome(check, [arr(5, 2)], {"a": arr(3, 5)}, 4) == \
        "input n: the program was exported with n = 3 (Python scalars are specialized), got 4"
    assert outcome(check, [arr(5, 2)], {"a": arr(3, 5)}, 3.0) == \
        "input n: the program was exported with n = 3 (Python scalars are specialized), got 3.0"
    assert outcome(check, [arr(5, 2)], {"a": arr(3, 5, dtype=np.int64)}, 3) == \
        "input feats['a']: expected dtype float32, got int64"


def test_unbindable_symbols_are_internal_errors():
    cs = ConstraintSet([InputDesc("x", "x", dims=(s0 * s1,), dtype=F32)],
                       {S0: VR(2, int_oo), S1: VR(2, int_oo)}, [], {}, {})
    with pytest.raises(InternalError, match=r"cannot bind the symbols of x\.shape\[0\]"):
        CheckWriter(cs).emit()
    cs = ConstraintSet([InputDesc("x", "x", dims=(s0,), dtype=F32)],
                       {S0: VR(2, int_oo), S2: VR(2, int_oo)}, [R.le(s2, 7)], {}, {})
    with pytest.raises(InternalError, match="guard s2 <= 7 mentions s2, which no input binds"):
        CheckWriter(cs).emit()


# --------------------------------------------------------------------------- via export
def test_static_by_default():
    def f(x, y):
        return x + y

    m = ss.export(f, (arr(8, 3), arr(8, 3))).module()
    assert outcome(m, arr(10, 3), arr(10, 3)) == "x.shape[0]: expected 8, got 10 " + STATIC_HINT
    assert outcome(m, arr(8, 3), arr(8, 4)) == "y.shape[1]: expected 3, got 4 " + STATIC_HINT
    assert outcome(m, arr(8, 3, dtype=np.float64), arr(8, 3)) == \
        "input x: expected dtype float32, got float64"
    assert outcome(m, arr(8), arr(8, 3)) == "input x: expected 2 dimensions, got 1 (shape (8,))"
    assert outcome(m, "x", arr(8, 3)) == "input x: expected a numpy.ndarray, got str"
    np.testing.assert_array_equal(m(arr(8, 3), arr(8, 3)), arr(8, 3))


def test_named_dim_ranges():
    def f(x):
        return np.maximum(x[:, 2:], 0)

    ep = ss.export(f, (arr(10, 10, 2),), dynamic_shapes={
        "x": {0: Dim("inp1_dim0"), 1: Dim("inp1_dim1", min=4, max=18)}})
    m = ep.module()
    assert m(arr(5, 5, 2)).shape == (5, 3, 2)
    assert outcome(m, arr(8, 1, 2)) == \
        "x.shape[1] = 1 is outside the range [4, 18] of Dim 'inp1_dim1'"
    assert outcome(m, arr(8, 20, 2)) == \
        "x.shape[1] = 20 is outside the range [4, 18] of Dim 'inp1_dim1'"
    assert outcome(m, arr(1, 8, 2)) == \
        "x.shape[0] = 1 is outside the range [2, int_oo] of Dim 'inp1_dim0'; a Dim's range " \
        "starts at 2 unless it is given min=: Dim('inp1_dim0', min=1) admits size 1"
    assert outcome(m, arr(8, 8, 3)) == "x.shape[2]: expected 2, got 3 " + STATIC_HINT
    assert outcome(m, arr(8, 8)) == "input x: expected 3 dimensions, got 2 (shape (8, 8))"


def test_relation_between_auto_axes():
    def f(x, y):
        return x + y.T

    ep = ss.export(f, (arr(7, 5), arr(5, 7)),
                   dynamic_shapes={"x": (Dim.AUTO, Dim.AUTO), "y": (Dim.AUTO, Dim.AUTO)})
    m = ep.module()
    assert m(arr(3, 4), arr(4, 3)).shape == (3, 4)
    assert outcome(m, arr(7, 5), arr(5, 6)) == "y.shape[1] must equal x.shape[0] (= 7), got 6"
    assert outcome(m, arr(7, 5), arr(4, 7)) == "y.shape[0] must equal x.shape[1] (= 5), got 4"
    assert outcome(m, arr(1, 5), arr(5, 1)) == (
        "x.shape[0] = 1 is outside the range [2, int_oo] (export specializes sizes 0 and 1, "
        "so a dynamic axis starts at 2)")


def test_derived_dim_relation():
    dx = Dim("dx", min=3, max=6)

    def f(x, y):
        return x + y[1:]

    m = ss.export(f, (arr(4), arr(5)), dynamic_shapes={"x": (dx,), "y": (dx + 1,)}).module()
    assert m(arr(6), arr(7)).shape == (6,)
    assert outcome(m, arr(4), arr(6)) == "y.shape[0] must equal x.shape[0] + 1 (= 5), got 6"
    assert outcome(m, arr(7), arr(8)) == "x.shape[0] = 7 is outside the range [3, 6] of Dim 'dx'"


def test_divisibility_on_auto_axis():
    def f(x):
        return x.reshape(4, -1)

    ep = ss.export(f, (arr(12),), dynamic_shapes={"x": (Dim.AUTO,)})
    m = ep.module()
    assert m(arr(8)).shape == (4, 2) and m(arr(4)).shape == (4, 1)
    msg = outcome(m, arr(10))
    assert msg.startswith("x.shape[0] = 10 is not of the form 4*k") and \
        msg.endswith(" required by the program")


def test_multivariate_guard_is_checked():
    def f(x, y):
        if x.shape[0] + y.shape[0] > 10:
            return x.sum() + y.sum()
        return x.sum()

    m = ss.export(f, (arr(6), arr(6)),
                  dynamic_shapes={"x": (Dim.AUTO,), "y": (Dim.AUTO,)}).module()
    assert m(arr(5), arr(6)) == 0
    msg = outcome(m, arr(5), arr(5))
    assert msg.startswith("the inputs violate the guard `x.shape[0] + y.shape[0] >= 11 (from ")
    assert msg.endswith("code: if x.shape[0] + y.shape[0] > 10:)` that the program was "
                        "exported under")


def test_check_becomes_range():
    def f(x):
        ss.check(x.shape[0] >= 16)
        return x + 1

    ep = ss.export(f, (arr(20),), dynamic_shapes={"x": (Dim.AUTO,)})
    assert {str(k): repr(v) for k, v in ep.range_constraints.items()} == {"s0": "VR[16, int_oo]"}
    assert outcome(ep.module(), arr(15)) == "x.shape[0] = 15 is outside the range [16, int_oo]"


def test_specialized_scalar_input():
    def f(x, n):
        return x * n

    m = ss.export(f, (arr(4), 3)).module()
    assert outcome(m, arr(4), 4) == \
        "input n: the program was exported with n = 3 (Python scalars are specialized), got 4"
    assert outcome(m, arr(4), True) == \
        "input n: the program was exported with n = 3 (Python scalars are specialized), got True"



def test_guard_with_product_divisor_rejects():
    def f(x, a, b):
        return x.reshape(a.shape[0] * b.shape[0], -1)

    A = Dim.AUTO
    m = ss.export(f, (arr(24), arr(2), arr(3)),
                  dynamic_shapes={"x": (A,), "a": (A,), "b": (A,)}).module()
    assert m(arr(24), arr(2), arr(4)).shape == (8, 3)
    with pytest.raises(ss.UserError, match=r"violate the guard `x\.shape\[0\] % "
                                           r"\(a\.shape\[0\]\*b\.shape\[0\]\) == 0"):
        m(arr(10), arr(5), arr(3))
