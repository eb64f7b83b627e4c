"""Each check record rendered as Python (``contract.render_python.PyRenderer``) is a line that runs: it
passes on a value the record accepts and calls its failure with the arguments the
runtime's texts take on one it rejects (the JIT's layout and rebinding records included,
which no exported program's check reaches)."""
import numpy as np
import pytest

from symshape.contract import records as C
from symshape.contract import render_python as RP
from symshape.contract import render_text as RT
from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.algebra.infinity import INT_OO, NEG_INT_OO
from symshape.runtime import TEXTS

S = E.Sym(0)


class Failed(Exception):
    pass


class _Rt:
    """The runtime's failure calls, recording which one ran and with what."""

    def __getattr__(self, name):
        def fail(*args):
            kind = name[len("bad_"):]
            if kind in TEXTS:                    # the texts must accept these arguments
                for text in TEXTS[kind]:
                    assert isinstance(text(*args), str)
            raise Failed(name, args)
        return fail

    @staticmethod
    def same_scalar(got, expected):
        return type(got) is type(expected) and got == expected


G = {"seen": 1}            # the module dict a rebinding record watches


def _cell(v):
    return (lambda: v).__closure__[0]


CASES = [
    # (record, {variable: passing value}, {variable: failing value})
    (C.ArrayCheck("x", "x", 1, np.dtype("float64")), {"x": np.ones(3)}, {"x": np.ones((2, 2))}),
    (C.IntCheck("k", "_i0"), {"_i0": 3}, {"_i0": 3.0}),
    (C.IntValue("k", "_i0", 3), {"_i0": 3}, {"_i0": 4}),
    (C.ScalarCheck("t", C.Access("t"), 0.5), {"t": 0.5}, {"t": 0.25}),
    (C.ClassCheck("g", C.Access("g"), np.random.Generator),
     {"g": np.random.default_rng(0)}, {"g": 3}),
    (C.ConfiguredCheck("fn", len), {"fn": len}, {"fn": abs}),
    (C.StaticDim("x.shape[0]", "_x0", 5), {"_x0": 5}, {"_x0": 6}),
    (C.StaticDim("x.shape[0]", "_x0", 5, "pinned at f.py:3"), {"_x0": 5}, {"_x0": 6}),
    (C.CongruenceCheck("x.shape[0]", "_x0", S, 3, 1), {"_x0": 7, "_r": 0},
     {"_x0": 8, "_r": 1}),
    (C.RangeCheck(S, 2, INT_OO, "x.shape[0]", 1, 0, None), {"s0": 2}, {"s0": 1}),
    (C.RangeCheck(S, NEG_INT_OO, 5, "k", 1, 0, None), {"s0": -9}, {"s0": 6}),
    (C.RangeCheck(S, 1, 50, "x.shape[0]", 3, 1, "d"), {"s0": 4}, {"s0": 51}),
    (C.RangeCheck(S, 1, 50, "x.shape[0]", 3, 1, None), {"s0": 4}, {"s0": 0}),
    (C.RangeCheck(S, NEG_INT_OO, 7, "x.shape[0]", 2, 1, None), {"s0": 7}, {"s0": 8}),
    (C.RelationCheck("y.shape[0]", "_y0", 3 * S.expr + 2), {"_y0": 11, "s0": 3},
     {"_y0": 10, "s0": 3}),
    (C.GuardCheck(R.le(S.expr + E.smin(S.expr, 4), 9), " (from f.py:2)"), {"s0": 4},
     {"s0": 6}),
    (C.GuardCheck(R.combine("or", [R.eq(E.mod(S.expr, 3), 0), R.le(S.expr, 2)])),
     {"s0": 9}, {"s0": 7}),
    (C.SizeCheck(R.ne(E.floordiv(S.expr, 2), 3), "n // 2 != 3"), {"s0": 4}, {"s0": 6}),
    (C.LenCheck("xs", C.Access("xs"), "list", 2), {"xs": [1, 2]}, {"xs": (1, 2)}),
    (C.LenCheck("xs", C.Access("xs"), "tuple", 2), {"xs": (1, 2)}, {"xs": (1, 2, 3)}),
    (C.KeysCheck("d", C.Access("d"), frozenset({"a", "b"})), {"d": {"a": 1, "b": 2}},
     {"d": {"a": 1}}),
    (C.RebindCheck("global", G, "seen", 1, "f"), {}, {"__rebind__": 2}),
    (C.RebindCheck("closure", _cell(1), "w", 1, "f"), {}, {"__cell__": 2}),
]


def _run(rec, env):
    consts = {}
    r = RP.PyRenderer(RT.TextRenderer(RT.Names({})), RP.numbered_consts(consts))
    line = r.line(rec)
    ns = dict(consts, _rt=_Rt(), _ndarray=np.ndarray, **env)
    if "__rebind__" in env:
        G["seen"] = env["__rebind__"]
    if "__cell__" in env:
        rec.where.cell_contents = env["__cell__"]
    try:
        exec(compile(line, "<check>", "exec"), ns)
    finally:
        G["seen"] = 1
    return line


@pytest.mark.parametrize("rec,good,bad", CASES, ids=[type(c[0]).__name__ for c in CASES])
def test_a_rendered_check_passes_and_fails_as_its_record_says(rec, good, bad):
    _run(rec, good)                                   # accepted: no failure call
    with pytest.raises(Failed) as e:
        _run(rec, bad)
    assert e.value.args[0] == rec.fails


def test_every_failing_record_kind_is_rendered_here():
    assert {type(c[0]) for c in CASES} == set(C.CHECKS)


def test_a_record_of_no_kind_is_refused():
    r = RP.PyRenderer(RT.TextRenderer(RT.Names({})), RP.numbered_consts({}))
    with pytest.raises(TypeError, match="not a check record"):
        r.test_and_args(object())


def test_a_solved_roots_range_is_reported_on_its_axis():
    # x.shape[0] == 3*s0 + 1 with s0 in [1, 50]: the axis must lie in [4, 151]
    rec = C.RangeCheck(S, 1, 50, "x.shape[0]", 3, 1, None)
    with pytest.raises(Failed) as e:
        _run(rec, {"s0": 51})
    message = TEXTS["range"][0](*e.value.args[1])
    assert message.startswith("x.shape[0] = 154 is outside the range [4, 151]"), message
    rec = C.RangeCheck(S, NEG_INT_OO, 7, "x.shape[0]", 2, 1, None)
    with pytest.raises(Failed) as e:
        _run(rec, {"s0": 8})
    message = TEXTS["range"][0](*e.value.args[1])
    assert message.startswith("x.shape[0] = 17 is outside the range [-int_oo, 15]"), message


@pytest.mark.parametrize("rest,value,want", [
    (-3, 4, "y.shape[0] = 1 is outside the range [2, int_oo]"),
    (1, 1, "y.shape[0] = 2 is outside the range [3, int_oo]"),
    (2, 0, "y.shape[0] = 2 is outside the range [3, int_oo]")])
def test_a_root_read_with_an_offset_is_reported_on_its_axis(rest, value, want):
    # y.shape[0] == s0 + rest: the message speaks of the axis, never of s0
    rec = C.RangeCheck(S, 2 - rest if rest < 0 else 2, INT_OO, "y.shape[0]", 1, rest, None)
    if rest > 0:
        rec = C.RangeCheck(S, 3 - rest, INT_OO, "y.shape[0]", 1, rest, None)
    with pytest.raises(Failed) as e:
        _run(rec, {"s0": value})
    assert TEXTS["range"][0](*e.value.args[1]).startswith(want)
