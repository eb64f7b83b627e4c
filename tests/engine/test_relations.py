"""symshape.algebra.relations: normal forms, decided relations, negation, and/or folding, text."""
import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symshape.algebra import relations as R
from symshape.algebra.expr import Sym, evaluate, floordiv, format_expr, mod, smin

S0, S1, S2 = Sym(0), Sym(1), Sym(2)
a, b, c = S0.expr, S1.expr, S2.expr

# (relation, normal op, normal expression ``e`` of ``e <op> 0``, format text)
NORMAL_FORMS = [
    (lambda: R.le(a, 16), "<=", "s0 - 16", "s0 <= 16"),
    (lambda: R.ge(a, 16), "<=", "16 - s0", "s0 >= 16"),
    (lambda: R.lt(a, 16), "<=", "s0 - 15", "s0 <= 15"),
    (lambda: R.gt(a, 16), "<=", "17 - s0", "s0 >= 17"),
    (lambda: R.eq(a, c + 2), "==", "s0 - s2 - 2", "s0 == s2 + 2"),
    (lambda: R.eq(c + 2, a), "==", "s0 - s2 - 2", "s0 == s2 + 2"),   # first coefficient > 0
    (lambda: R.ne(a, 5), "!=", "s0 - 5", "s0 != 5"),
    (lambda: R.ne(5, a), "!=", "s0 - 5", "s0 != 5"),
    (lambda: R.eq(-a, b), "==", "s0 + s1", "s0 + s1 == 0"),
    (lambda: R.le(a, b), "<=", "s0 - s1", "s0 <= s1"),
    (lambda: R.lt(a, b), "<=", "s0 - s1 + 1", "s0 <= s1 - 1"),
    (lambda: R.le(a - b + 3, 0), "<=", "s0 - s1 + 3", "s0 <= s1 - 3"),
    (lambda: R.eq(a - b + 3, 0), "==", "s0 - s1 + 3", "s0 + 3 == s1"),
    (lambda: R.eq(a + 3, 0), "==", "s0 + 3", "s0 == -3"),
    (lambda: R.ne(a + 3, 0), "!=", "s0 + 3", "s0 != -3"),
    (lambda: R.le(a + 3, 0), "<=", "s0 + 3", "s0 <= -3"),
    (lambda: R.ge(a, -5), "<=", "-s0 - 5", "s0 + 5 >= 0"),
    # gcd division: == / != divide exactly, <= rounds the constant up
    (lambda: R.eq(2 * a, 4 * b + 6), "==", "s0 - 2*s1 - 3", "s0 == 2*s1 + 3"),
    (lambda: R.ne(6 * a, 9 * b), "!=", "2*s0 - 3*s1", "2*s0 != 3*s1"),
    (lambda: R.le(2 * a, 7), "<=", "s0 - 3", "s0 <= 3"),              # s0 <= 3.5
    (lambda: R.le(6 * a, 9), "<=", "s0 - 1", "s0 <= 1"),              # s0 <= 1.5
    (lambda: R.le(3 * a, -7), "<=", "s0 + 3", "s0 <= -3"),            # s0 <= -2.33
    (lambda: R.ge(2 * a, 7), "<=", "4 - s0", "s0 >= 4"),              # s0 >= 3.5
    (lambda: R.ge(6 * a, 9), "<=", "2 - s0", "s0 >= 2"),              # s0 >= 1.5
    (lambda: R.le(2 * a + 4 * b, 7), "<=", "s0 + 2*s1 - 3", "s0 + 2*s1 <= 3"),
    # non-linear terms are kept as terms
    (lambda: R.eq(mod(a, 4), 0), "==", "Mod(s0, 4)", "Mod(s0, 4) == 0"),
    (lambda: R.ne(a * b, 12), "!=", "s0*s1 - 12", "s0*s1 != 12"),
    (lambda: R.le(smin(16, a), 8), "<=", "Min(16, s0) - 8", "Min(16, s0) <= 8"),
    (lambda: R.gt(floordiv(a, 2), b), "<=", "s1 - (s0//2) + 1", "s1 <= ((s0 - 2)//2)"),
]


@pytest.mark.parametrize("build,op,expr,text", NORMAL_FORMS)
def test_normal_form_and_text(build, op, expr, text):
    r = build()
    assert isinstance(r, R.Rel)
    assert (r.op, format_expr(r.expr), r.format()) == (op, expr, text)
    assert repr(r) == text


DECIDED = [
    (lambda: R.eq(a, a), True),
    (lambda: R.ne(a, a), False),
    (lambda: R.le(a, a + 1), True),
    (lambda: R.lt(a, a), False),
    (lambda: R.ge(a, a), True),
    (lambda: R.gt(a + 2, a), True),
    (lambda: R.ne(a + 1, a), True),
    (lambda: R.eq(2 * a, 4 * b + 3), False),     # parity: 2*(...) == odd never holds
    (lambda: R.ne(2 * a, 4 * b + 3), True),
    (lambda: R.eq(3 * a + 6 * b, 1), False),
    (lambda: R.eq(3, 3), True),
    (lambda: R.le(5, 3), False),
    (lambda: R.lt(2, 3), True),
    (lambda: R.make(R.NE, 0), False),
]


@pytest.mark.parametrize("build,expected", DECIDED)
def test_decided_relations_are_bools(build, expected):
    got = build()
    assert type(got) is bool and got is expected


NEGATE = [
    (lambda: R.le(a, 16), "s0 >= 17"),
    (lambda: R.lt(a, 16), "s0 >= 16"),
    (lambda: R.ge(a, 16), "s0 <= 15"),
    (lambda: R.le(2 * a, 7), "s0 >= 4"),
    (lambda: R.eq(a, b), "s0 != s1"),
    (lambda: R.ne(a, 5), "s0 == 5"),
    (lambda: R.combine("and", [R.le(a, 16), R.ge(b, 3)]), "(s0 >= 17) or (s1 <= 2)"),
    (lambda: R.combine("or", [R.eq(a, 4), R.gt(b, a)]), "(s0 != 4) and (s1 <= s0)"),
]


@pytest.mark.parametrize("build,text", NEGATE)
def test_negate(build, text):
    r = build()
    n = R.negate(r)
    assert n.format() == text
    assert R.negate(n) == r


def test_negate_bool():
    assert R.negate(True) is False and R.negate(False) is True


COMBINE = [
    (lambda: R.combine("and", [R.le(a, 16), True]), "s0 <= 16"),
    (lambda: R.combine("and", [R.le(a, 16), False]), False),
    (lambda: R.combine("or", [R.le(a, 16), True]), True),
    (lambda: R.combine("or", [False, R.eq(a, b)]), "s0 == s1"),
    (lambda: R.combine("and", []), True),
    (lambda: R.combine("or", []), False),
    (lambda: R.combine("and", [True, True]), True),
    (lambda: R.combine("or", [False, False]), False),
    (lambda: R.combine("and", [R.le(a, 16), R.le(a, 16)]), "s0 <= 16"),
    (lambda: R.combine("and", [R.le(a, 16), R.ge(b, 3)]), "(s0 <= 16) and (s1 >= 3)"),
    (lambda: R.combine("or", [R.le(a, 16), R.combine("or", [R.ge(b, 3), R.eq(c, 2)])]),
     "(s0 <= 16) or (s1 >= 3) or (s2 == 2)"),
    (lambda: R.combine("and", [R.le(a, 16), R.combine("or", [R.ge(b, 3), R.eq(c, 2)])]),
     "(s0 <= 16) and ((s1 >= 3) or (s2 == 2))"),
]


@pytest.mark.parametrize("build,expected", COMBINE)
def test_combine_folds_and_flattens(build, expected):
    got = build()
    if type(expected) is bool:
        assert got is expected
    else:
        assert got.format() == expected



def test_combine_dedups_after_flattening():
    r1, r2 = R.le(a, 16), R.ge(b, 3)
    got = R.combine("and", [r1, R.combine("and", [r2, r1])])
    assert got == R.combine("and", [r1, r2])
    assert got.format() == "(s0 <= 16) and (s1 >= 3)"


def test_boolop_structure():
    r1, r2 = R.le(a, 16), R.ge(b, 3)
    both = R.combine("and", [r1, r2])
    assert isinstance(both, R.BoolOp) and both.op == "and" and both.args == (r1, r2)
    assert both == R.combine("and", [R.le(a, 16), R.ge(b, 3)])
    assert hash(both) == hash(R.combine("and", [R.le(a, 16), R.ge(b, 3)]))
    assert both.free_symbols == frozenset({S0, S1})
    names = {S0: "x.shape[0]", S1: "y.shape[1]"}
    assert both.format(names.__getitem__) == "(x.shape[0] <= 16) and (y.shape[1] >= 3)"


def test_equal_facts_have_equal_keys():
    assert R.eq(a, b) == R.eq(b, a)
    assert R.eq(2 * a, 2 * b) == R.eq(a, b)
    assert R.le(2 * a, 2 * b) == R.le(a, b)
    assert R.lt(a, 17) == R.le(a, 16)
    assert R.ge(a, 4) == R.gt(a, 3)
    assert hash(R.le(3 * a, 9)) == hash(R.le(a, 3))
    assert len({R.ne(a, 5), R.ne(5, a), R.ne(2 * a, 10)}) == 1
    assert R.le(a, b) != R.le(b, a) and R.eq(a, b) != R.ne(a, b)


def test_rel_holds_and_free_symbols():
    r = R.le(a, 16)
    assert r.holds(0) and r.holds(-3) and not r.holds(1)
    assert R.eq(a, 4).holds(0) and not R.eq(a, 4).holds(2)
    assert R.ne(a, 4).holds(2) and not R.ne(a, 4).holds(0)
    assert R.eq(a + floordiv(b, 2), c).free_symbols == frozenset({S0, S1, S2})


def test_format_with_user_names():
    names = {S0: "x.shape[0]", S1: "y.shape[1]", S2: "n"}.__getitem__
    assert R.le(a, 16).format(names) == "x.shape[0] <= 16"
    assert R.ge(a, 16).format(names) == "x.shape[0] >= 16"
    assert R.eq(b, a + 2).format(names) == "x.shape[0] + 2 == y.shape[1]"
    assert R.eq(mod(c, 4), 1).format(names) == "Mod(n, 4) == 1"


# --------------------------------------------------------------------------- differential
OPS = [(R.eq, operator.eq), (R.ne, operator.ne), (R.le, operator.le),
       (R.lt, operator.lt), (R.ge, operator.ge), (R.gt, operator.gt)]
coeffs = st.integers(-6, 6)


@settings(max_examples=200, deadline=None)
@given(coeffs, coeffs, coeffs, coeffs, st.integers(0, 5),
       st.lists(st.integers(-9, 9), min_size=3, max_size=3))
def test_normal_form_preserves_truth(ka, kb, kc, k, which, vals):
    """``op(lhs, rhs)`` (and its negation) hold exactly when the Python comparison does."""
    lhs = ka * a + kb * b
    rhs = kc * c + k
    rel, py = OPS[which]
    values = dict(zip((S0, S1, S2), vals))
    want = py(evaluate(lhs, values), evaluate(rhs, values))
    r = rel(lhs, rhs)
    got = r if type(r) is bool else r.holds(evaluate(r.expr, values))
    assert got == want
    n = R.negate(r)
    assert (n if type(n) is bool else n.holds(evaluate(n.expr, values))) == (not want)
