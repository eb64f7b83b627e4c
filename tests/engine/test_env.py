"""symshape.reasoning.env.ShapeEnv driven directly: symbols, the decision tiers, guards and what the
environment learns from them (replacements, ranges, divisibility, facts), unbacked symbols,
``check``, ``specialize`` and the pending specialisations, and range-aware ``simplify``."""
import logging

import pytest

import symshape as ss
from symshape.algebra import relations as R
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.expr import Sym, floordiv, format_expr, mod, smax, smin
from symshape.algebra.infinity import int_oo
from symshape.algebra.ranges import ValueRange

VR = ValueRange


def make_env(*specs):
    """``make_env((hint, source[, range[, kind]]), ...)`` -> (env, [expr per symbol])."""
    env = ShapeEnv()
    out = []
    for spec in specs:
        hint, source = spec[0], spec[1]
        vr = spec[2] if len(spec) > 2 else VR(2, int_oo)
        kind = spec[3] if len(spec) > 3 else "auto"
        out.append(env.create_symbol(hint, source, vr, kind=kind).expr)
    return env, out


def texts(env):
    return {
        "replacements": {s.name: format_expr(v) for s, v in env.replacements.items()},
        "guards": [g.cond.format() for g in env.guards],
        "facts": [f.format() for f in env.facts],
    }


# --------------------------------------------------------------------------- symbols
def test_create_symbol():
    env = ShapeEnv()
    s0 = env.create_symbol(8, "x.shape[0]")
    s1 = env.create_symbol(5, "y.shape[1]", VR(4, 18), kind="named")
    u0 = env.create_unbacked("nonzero(x)", VR(0, 10))
    assert (s0.name, s1.name, u0.name) == ("s0", "s1", "u0")
    assert not s0.unbacked and u0.unbacked
    assert env.ranges == {s0: VR(2, int_oo), s1: VR(4, 18), u0: VR(0, 10)}
    assert env.infos[s0].hint == 8 and env.infos[s1].kind == "named"
    assert env.infos[u0].hint is None and env.infos[u0].kind == "unbacked"
    assert env.name_of(s1) == "y.shape[1]" and env.name_of(Sym(9)) == "s9"
    assert env.hint_of(2 * s0.expr + s1.expr) == 21
    assert env.hint_of(s0.expr + u0.expr) is None
    assert env.hint_of(7) == 7
    assert env.guards == [] and env.replacements == {}


# --------------------------------------------------------------------------- decided by ranges
DECIDED = [
    (lambda s: R.ge(s[0], 2), True),
    (lambda s: R.le(s[0], 1), False),
    (lambda s: R.ne(s[0], 0), True),
    (lambda s: R.eq(s[0], 1), False),
    (lambda s: R.le(s[1], 18), True),
    (lambda s: R.gt(s[1], 18), False),
    (lambda s: R.ge(s[1], 4), True),
    (lambda s: R.ge(s[0] + s[1], 6), True),
    (lambda s: R.lt(s[0] + s[1], 6), False),
    (lambda s: R.ne(s[1], 3), True),
    (lambda s: R.eq(mod(s[0], 4), 4), False),             # Mod(s0, 4) in [0, 3]
    (lambda s: R.le(floordiv(s[1], 20), 0), True),        # s1 // 20 == 0
    (lambda s: R.le(smin(s[0], s[1]), 18), True),
    (lambda s: R.ge(s[0] * s[1], 8), True),
    (lambda s: R.combine("and", [R.ge(s[0], 2), R.le(s[1], 18)]), True),
    (lambda s: R.combine("or", [R.le(s[0], 1), R.ge(s[1], 19)]), False),
]


@pytest.mark.parametrize("build,expected", DECIDED)
def test_decided_by_ranges_records_no_guard(build, expected):
    env, s = make_env((8, "x.shape[0]"), (10, "y.shape[0]", VR(4, 18)))
    assert env.decide(build(s)) is expected
    assert env.evaluate(build(s)) is expected
    assert env.guards == [] and env.facts == [] and env.z3_queries == 0


# --------------------------------------------------------------------------- undecided
UNDECIDED = [
    # (condition, hints, answer, guard text)
    (lambda s: R.le(s[0], 16), (8, 3), True, "s0 <= 16"),
    (lambda s: R.le(s[0], 16), (20, 3), False, "s0 >= 17"),
    (lambda s: R.eq(s[0], 5), (8, 3), False, "s0 != 5"),
    (lambda s: R.ne(s[0], 8), (8, 3), False, "s0 == 8"),
    (lambda s: R.gt(s[0], s[1]), (8, 3), True, "s1 <= s0 - 1"),
    (lambda s: R.eq(s[0], s[1]), (8, 3), False, "s0 != s1"),
    (lambda s: R.eq(mod(s[0], 4), 0), (8, 3), True, "Mod(s0, 4) == 0"),
    (lambda s: R.combine("or", [R.le(s[0], 4), R.ge(s[1], 5)]), (8, 3), False,
     "(s0 >= 5) and (s1 <= 4)"),
]


@pytest.mark.parametrize("build,hints,answer,guard", UNDECIDED)
def test_undecided_records_one_guard_with_the_example_answer(build, hints, answer, guard):
    env, s = make_env((hints[0], "x.shape[0]"), (hints[1], "y.shape[0]"))
    assert env.evaluate(build(s)) is answer
    assert [g.cond.format() for g in env.guards] == [guard]
    assert env.guards[0].kind == "guard"
    assert env.guards[0].frame is not None and env.guards[0].frame.filename == __file__
    # asking again is now decided: still one guard
    assert env.evaluate(build(s)) is answer
    assert len(env.guards) == 1


def test_explicit_hint_overrides_the_example():
    env, (x,) = make_env((8, "x.shape[0]"))
    assert env.evaluate(R.le(x, 4), hint=True) is True
    assert texts(env)["guards"] == ["s0 <= 4"]


# --------------------------------------------------------------------------- equality
ELIMINATION = [
    # (symbols, condition, replacements): freer kind first, then larger example, then later
    ([(8, "x"), (8, "y")], lambda s: R.eq(s[0], s[1]), {"s1": "s0"}),
    ([(8, "x", VR(2, int_oo), "named"), (8, "y")], lambda s: R.eq(s[0], s[1]), {"s1": "s0"}),
    ([(8, "x"), (8, "y", VR(2, int_oo), "named")], lambda s: R.eq(s[0], s[1]), {"s0": "s1"}),
    ([(10, "x"), (8, "y")], lambda s: R.eq(s[0], s[1] + 2), {"s0": "s1 + 2"}),
    ([(8, "x"), (10, "y")], lambda s: R.eq(s[1], s[0] + 2), {"s1": "s0 + 2"}),
    ([(10, "x", VR(2, int_oo), "named"), (8, "y")], lambda s: R.eq(s[0], s[1] + 2),
     {"s1": "s0 - 2"}),
    ([(8, "x"), (8, "y", VR(2, int_oo), "intermediate")], lambda s: R.eq(s[0], s[1]),
     {"s1": "s0"}),
    ([(8, "x", VR(2, int_oo), "intermediate"), (8, "y")], lambda s: R.eq(s[0], s[1]),
     {"s0": "s1"}),
    ([(5, "x")], lambda s: R.eq(s[0], 5), {"s0": "5"}),
    ([(6, "x"), (3, "y")], lambda s: R.eq(s[0], 2 * s[1]), {"s0": "2*s1"}),
]


@pytest.mark.parametrize("syms,build,replacements", ELIMINATION)
def test_equality_becomes_replacement(syms, build, replacements):
    env, s = make_env(*syms)
    assert env.evaluate(build(s)) is True
    assert texts(env)["replacements"] == replacements
    assert env.facts == []


def test_unbacked_symbol_is_eliminated_first():
    env, (x,) = make_env((8, "x.shape[0]"))
    u = env.create_unbacked("nonzero(a)", VR(0, 20)).expr
    env.add_guard(R.eq(u, x), None)
    assert texts(env)["replacements"] == {"u0": "s0"}
    assert env.ranges[x.as_symbol()] == VR(2, 20)


def test_replacement_intersects_ranges_and_substitutes():
    env, (x, y) = make_env((8, "x", VR(4, 20)), (8, "y", VR(2, 10)))
    env.evaluate(R.eq(y, x))
    assert texts(env)["replacements"] == {"s1": "s0"}
    assert env.ranges[x.as_symbol()] == VR(4, 10)
    assert format_expr(env.simplify(y + 1)) == "s0 + 1"
    assert env.decide(R.eq(x, y)) is True and env.decide(R.le(y, 10)) is True


def test_replacement_propagates_range_of_eliminated_symbol():
    env, (x, y) = make_env((10, "x", VR(2, int_oo), "named"), (8, "y"))
    env.evaluate(R.eq(x, y + 2))
    assert texts(env)["replacements"] == {"s1": "s0 - 2"}
    assert env.ranges[x.as_symbol()] == VR(4, int_oo)         # y = x - 2 >= 2


def test_chained_replacements_point_at_roots():
    env, (x, y, z) = make_env((8, "x"), (8, "y"), (8, "z"))
    env.evaluate(R.eq(z, y))
    env.evaluate(R.eq(y, x))
    assert texts(env)["replacements"] == {"s2": "s0", "s1": "s0"}


def test_specialize_sum_eliminates_larger_example():
    env, (x, y) = make_env((5, "x"), (8, "y"))
    assert env.specialize(x + y, "int()") == 13
    assert texts(env) == {"replacements": {"s1": "13 - s0"}, "guards": ["s0 + s1 == 13"],
                          "facts": []}
    assert env.ranges[x.as_symbol()] == VR(2, 11)


# --------------------------------------------------------------------------- ranges
REFINE = [
    # (condition, hint, answer, range of s0 afterwards, facts)
    (lambda x: R.le(x, 16), 8, True, VR(2, 16), []),
    (lambda x: R.ge(x, 4), 8, True, VR(4, int_oo), []),
    (lambda x: R.lt(x, 3), 10, False, VR(3, int_oo), []),
    (lambda x: R.le(2 * x, 33), 8, True, VR(2, 16), []),
    (lambda x: R.ge(3 * x, 10), 8, True, VR(4, int_oo), []),
    (lambda x: R.ne(x, 2), 8, True, VR(3, int_oo), []),          # excludes the lower end
    (lambda x: R.ne(x, 5), 8, True, VR(2, int_oo), ["s0 != 5"]),  # a hole: kept as a fact
    (lambda x: R.gt(x, 100), 8, False, VR(2, 100), []),
]


@pytest.mark.parametrize("build,hint,answer,vr,facts", REFINE)
def test_one_symbol_inequality_refines_range(build, hint, answer, vr, facts):
    env, (x,) = make_env((hint, "x.shape[0]"))
    assert env.evaluate(build(x)) is answer
    assert env.ranges[x.as_symbol()] == vr
    assert texts(env)["facts"] == facts
    assert env.replacements == {}


def test_singleton_range_becomes_int_replacement():
    env, (x,) = make_env((2, "x.shape[0]"))
    assert env.evaluate(R.le(x, 2)) is True
    assert env.replacements == {x.as_symbol(): 2}
    assert type(env.replacements[x.as_symbol()]) is int
    assert env.simplify(3 * x + 1) == 7


def test_two_bounds_meeting_make_a_constant():
    env, (x,) = make_env((6, "x.shape[0]", VR(2, 6)))
    assert env.evaluate(R.ge(x, 6)) is True
    assert env.replacements == {x.as_symbol(): 6}


def test_decisions_follow_refined_ranges():
    env, (x,) = make_env((8, "x.shape[0]"))
    c = R.le(x, 16)
    assert env.decide(c) is None
    env.evaluate(R.le(x, 10))
    assert env.decide(c) is True
    assert env.decide(R.gt(x, 10)) is False


# --------------------------------------------------------------------------- divisibility
def test_mod_zero_becomes_multiple():
    env, (x,) = make_env((8, "x.shape[0]"))
    assert env.evaluate(R.eq(mod(x, 4), 0)) is True
    q = Sym(1)
    assert texts(env)["replacements"] == {"s0": "4*s1"}
    assert env.ranges[q] == VR(1, int_oo)
    info = env.infos[q]
    assert (info.hint, info.source, info.kind, info.parent) == (2, "x.shape[0]//4", "quotient",
                                                                 x.as_symbol())
    assert env.simplify(mod(x, 4)) == 0 and env.simplify(mod(x, 2)) == 0
    assert format_expr(env.simplify(floordiv(x, 4))) == "s1"
    assert env.evaluate(R.eq(mod(x, 2), 0)) is True and len(env.guards) == 1


def test_mod_remainder_becomes_offset_multiple():
    env, (x,) = make_env((9, "x.shape[0]"))
    assert env.evaluate(R.eq(mod(x, 4), 1)) is True
    q = Sym(1)
    assert texts(env)["replacements"] == {"s0": "4*s1 + 1"}
    assert env.ranges[q] == VR(1, int_oo)
    assert (env.infos[q].hint, env.infos[q].source) == (2, "(x.shape[0] - 1)//4")
    assert env.simplify(mod(x, 4)) == 1 and env.decide(R.eq(mod(x, 2), 1)) is True


def test_divisibility_respects_the_range():
    env, (x,) = make_env((8, "x.shape[0]", VR(2, 16)))
    env.evaluate(R.eq(mod(x, 4), 0))
    assert env.ranges[Sym(1)] == VR(1, 4)


def test_two_variable_equation():
    env, (x, y) = make_env((6, "a"), (4, "b"))
    assert env.evaluate(R.eq(2 * x, 3 * y)) is True
    k = Sym(2)
    assert texts(env)["replacements"] == {"s0": "3*s2", "s1": "2*s2"}
    assert env.ranges[k] == VR(1, int_oo)
    assert (env.infos[k].hint, env.infos[k].kind) == (2, "quotient")
    assert env.decide(R.eq(mod(x, 3), 0)) is True


# --------------------------------------------------------------------------- facts and Z3
def _fact_env():
    env, (x, y) = make_env((9, "x"), (3, "y"))
    assert env.evaluate(R.le(y, 3)) is True                 # y in [2, 3]
    assert env.evaluate(R.ge(x + y, 11)) is True            # a fact
    return env, x, y


def test_multivariate_guard_is_kept_as_fact():
    env, x, y = _fact_env()
    assert texts(env) == {"replacements": {}, "guards": ["s1 <= 3", "s0 + s1 >= 11"],
                          "facts": ["s0 + s1 >= 11"]}
    # exact projection: s0 + s1 >= 11 with s1 <= 3 leaves s0 >= 8
    assert env.ranges == {x.as_symbol(): VR(8, int_oo), y.as_symbol(): VR(2, 3)}


def test_query_implied_by_fact_is_decided_by_z3_without_guard():
    env, x, y = _fact_env()
    n, q = len(env.guards), env.z3_queries
    assert env.evaluate(R.ge(x, 8)) is True                 # the range is exact: x >= 8
    assert len(env.guards) == n and env.z3_queries == q
    assert env.evaluate(R.ge(x + 2 * y, 13)) is True        # (x + y) + y >= 11 + 2
    assert len(env.guards) == n and env.z3_queries == q     # a sum of facts settled it
    assert env.evaluate(R.ge(2 * x + 3 * y, 24)) is True    # 2(x + y) + y >= 22 + 2
    assert len(env.guards) == n and env.z3_queries == q + 1
    assert env.evaluate(R.le(2 * x + 3 * y, 23)) is False
    assert len(env.guards) == n


def test_fact_and_its_negation_decide_syntactically():
    env, x, y = _fact_env()
    q = env.z3_queries
    assert env.decide(R.ge(x + y, 11)) is True
    assert env.decide(R.le(x + y, 10)) is False
    assert env.z3_queries == q


def test_query_not_implied_by_fact_records_guard():
    env, x, y = _fact_env()
    q = env.z3_queries
    assert env.evaluate(R.ge(x, 9)) is True                 # x = 8, y = 3 also satisfies
    assert texts(env)["guards"][-1] == "s0 >= 9"
    assert env.z3_queries == q                              # a witness point settled it


# --------------------------------------------------------------------------- unbacked
def test_unbacked_decided_by_range():
    env = ShapeEnv()
    u = env.create_unbacked("nonzero(x)", VR(0, 10)).expr
    assert env.evaluate(R.ge(u, 0)) is True
    assert env.evaluate(R.le(u, 10)) is True
    assert env.evaluate(R.gt(u, 10)) is False
    assert env.guards == []


def test_unbacked_undecided_raises_guard_on_data_dependent():
    env = ShapeEnv()
    u = env.create_unbacked("nonzero(x)", VR(0, 10)).expr
    with pytest.raises(ss.GuardOnDataDependentError) as e:
        env.evaluate(R.ge(u, 3))
    msg = str(e.value)
    assert isinstance(e.value, ss.UserError)
    assert msg.startswith("Could not decide `u0 >= 3` at %s:" % __file__)
    assert "u0 is data-dependent (it is made by `nonzero(x)`)" in msg
    assert "Add `ss.check(u0 >= 3)` (or its negation)" in msg and "ss.cond" in msg
    assert env.guards == []
    with pytest.raises(ss.GuardOnDataDependentError):
        env.evaluate(R.ge(u, 3), hint=True)               # a hint does not help


def test_unbacked_specialize_raises():
    env = ShapeEnv()
    u = env.create_unbacked("nonzero(x)", VR(0, 10)).expr
    with pytest.raises(ss.GuardOnDataDependentError,
                       match=r"int\(\) needs a concrete value of the data-dependent size "
                             r"nonzero\(x\)"):
        env.specialize(u, "int()")
    with pytest.raises(ss.GuardOnDataDependentError):
        env.specialize_later(u + 1, "index")
    assert env.pending == []


# --------------------------------------------------------------------------- check
def test_check_decided_true_is_silent():
    env, (x,) = make_env((8, "x.shape[0]"))
    env.check(R.ge(x, 2), True)
    env.check(True, None)
    assert env.guards == []


def test_check_records_check_guard_and_refines():
    env, (x,) = make_env((8, "x.shape[0]"))
    env.check(R.le(x, 12), True, "small")
    assert [(g.cond.format(), g.kind) for g in env.guards] == [("s0 <= 12", "check")]
    assert env.ranges[x.as_symbol()] == VR(2, 12)


def test_check_false_for_example_raises_with_user_names():
    env, (x,) = make_env((8, "x.shape[0]"))
    with pytest.raises(ss.UserError) as e:
        env.check(R.ge(x, 100), False, "too small")
    msg = str(e.value)
    assert msg.startswith("ss.check(x.shape[0] >= 100) is false for the example inputs at ")
    assert msg.endswith(": too small")
    assert env.guards == []


def test_check_decided_false_raises():
    env, (x,) = make_env((8, "x.shape[0]", VR(2, 12)))
    with pytest.raises(ss.UserError, match=r"ss\.check\(x\.shape\[0\] >= 13\) is false"):
        env.check(R.ge(x, 13), None)


def test_check_literal_false_raises():
    env = ShapeEnv()
    with pytest.raises(ss.UserError, match=r"^ss\.check failed at .*: msg$"):
        env.check(False, None, "msg")


def test_check_on_unbacked_is_assumed_and_kept_for_run_time():
    env = ShapeEnv()
    u = env.create_unbacked("nonzero(x)", VR(0, 10)).expr
    env.check(R.ge(u, 2), None, "m")
    assert [(c.format(), m) for c, m, _ in env.checks] == [("u0 >= 2", "m")]
    assert env.ranges[u.as_symbol()] == VR(2, 10)
    assert env.evaluate(R.ge(u, 1)) is True               # now decided by the range


# --------------------------------------------------------------------------- specialize
def test_specialize_logs_and_guards(caplog):
    env, (x,) = make_env((5, "x.shape[0]"))
    with caplog.at_level(logging.WARNING, logger="symshape.dynamic"):
        v = env.specialize(x, "int()")
    assert v == 5 and type(v) is int
    assert [(g.cond.format(), g.kind) for g in env.guards] == [("s0 == 5", "specialize")]
    assert env.replacements == {x.as_symbol(): 5}
    records = [r for r in caplog.records if r.name == "symshape.dynamic"]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    assert records[0].getMessage().startswith("int() specialized x.shape[0] to 5 at ")
    # already a constant: no new guard
    assert env.specialize(x + 1, "int()") == 6 and len(env.guards) == 1


def test_pending_specialisation_commits_at_next_evaluate():
    env, (x, y) = make_env((5, "x.shape[0]"), (6, "y.shape[0]"))
    assert env.specialize_later(x + 1, "a conversion to a concrete int") == 6
    assert [format_expr(p[0]) for p in env.pending] == ["s0 + 1"]
    assert env.guards == [] and env.replacements == {}
    assert env.evaluate(R.ge(y, 2)) is True               # any evaluation commits first
    assert env.pending == []
    assert [(g.cond.format(), g.kind) for g in env.guards] == [("s0 == 5", "specialize")]
    assert env.replacements == {x.as_symbol(): 5}


def test_cancel_pending_keeps_size_symbolic():
    env, (x, y) = make_env((5, "x.shape[0]"), (6, "y.shape[0]"))
    env.specialize_later(x + 1, "index")
    env.specialize_later(y, "index")
    env.cancel_pending([x + 1])
    assert [format_expr(p[0]) for p in env.pending] == ["s1"]
    env.commit_pending()
    assert env.pending == []
    assert {s.name: v for s, v in env.replacements.items()} == {"s1": 6}


def test_evaluate_commits_pending_before_deciding():
    env, (x, y) = make_env((6, "x.shape[0]"), (6, "y.shape[0]"))
    env.specialize_later(y, "index")
    env.evaluate(R.eq(x, y))                              # commits y first: y -> 6
    assert env.pending == [] and env.simplify(y) == 6
    assert [(g.cond.format(), g.kind) for g in env.guards] == [
        ("s1 == 6", "specialize"), ("s0 == 6", "guard")]


def test_cancel_pending_matches_simplified_expression():
    env, (x, y) = make_env((6, "x.shape[0]"), (6, "y.shape[0]"))
    env.add_guard(R.eq(x, y), None)                       # y -> x, nothing pending yet
    env.specialize_later(y, "index")                      # stored simplified, as s0
    assert [format_expr(p[0]) for p in env.pending] == ["s0"]
    env.cancel_pending([x])
    assert env.pending == []


def test_specialize_later_of_int_is_immediate():
    env, (x,) = make_env((5, "x.shape[0]"))
    env.evaluate(R.eq(x, 5))
    assert env.specialize_later(x * 2, "index") == 10
    assert env.pending == []


# --------------------------------------------------------------------------- simplify
SIMPLIFY = [
    (lambda s: smin(s[0], s[1]), "s0"),
    (lambda s: smax(s[0], s[1]), "s1"),
    (lambda s: smin(s[0], 20), "s0"),
    (lambda s: smin(s[0], 16), "s0"),
    (lambda s: smax(s[0], 1), "s0"),
    (lambda s: smax(s[0] + 1, s[1]), "s1"),
    (lambda s: smin(s[0], s[1], 3), "Min(3, s0)"),
    (lambda s: smin(s[0], 8), "Min(8, s0)"),
    (lambda s: mod(s[2], 4), "s2"),
    (lambda s: mod(s[0], 32), "s0"),
    (lambda s: mod(s[0], 8), "Mod(s0, 8)"),
    (lambda s: floordiv(s[2], 4), "0"),
    (lambda s: floordiv(s[2] + 4, 4), "1"),
    (lambda s: floordiv(s[1], 4), "(s1//4)"),
    (lambda s: s[0] - smax(0, s[0] - 3), "Min(3, s0)"),
    (lambda s: 2 * floordiv(s[0], 2) + mod(s[0], 2), "s0"),
    (lambda s: 3 * floordiv(s[1], 3) + mod(s[1], 3) + 1, "s1 + 1"),
    (lambda s: smin(16, s[2]) + floordiv(s[2], 8), "s2"),
]


@pytest.mark.parametrize("build,expected", SIMPLIFY)
def test_simplify_folds_with_ranges(build, expected):
    env, s = make_env((8, "x", VR(2, 16)), (20, "y", VR(17, 30)), (3, "z", VR(0, 3)))
    assert format_expr(env.simplify(build(s))) == expected
    assert env.guards == []


def test_simplify_applies_replacements_then_folds():
    env, (x, y) = make_env((8, "x", VR(2, 16)), (8, "y"))
    env.evaluate(R.eq(y, x))
    assert format_expr(env.simplify(smin(y, 16) + mod(y, 32))) == "2*s0"
    assert env.bound(y * 2) == VR(4, 32)
