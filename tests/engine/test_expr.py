"""symshape.algebra.expr: canonical forms, div/mod rules, min/max, subs, evaluate, printing.

Tables of ``(built expression, expected text)`` rows, one driver per table, plus a
Hypothesis differential test against plain Python ints.
"""
import operator

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from symshape.algebra.expr import (Expr, OpAtom, Sym, add, atoms_of, ceildiv, evaluate, floordiv,
                           format_expr, format_py, mod, mul, neg, scale, smax, smin, sub, subs)

S0, S1, S2, S3 = Sym(0), Sym(1), Sym(2), Sym(3)
a, b, c = S0.expr, S1.expr, S2.expr
U0 = Sym(0, unbacked=True)


def _check_text(built, expected):
    got = format_expr(built)
    assert got == expected, "\nBefore:   built by the table row\nAfter:    %s\nExpected: %s" % (
        got, expected)


# --------------------------------------------------------------------------- canonical forms
CANONICAL = [
    # commutativity and term ordering: symbols by index, shorter terms first (s0 + s0*s1,
    # 2*s1 + s1**2: unlike sympy, degree does not lead)
    (lambda: a + b, "s0 + s1"),
    (lambda: b + a, "s0 + s1"),
    (lambda: c + a, "s0 + s2"),
    (lambda: a * b, "s0*s1"),
    (lambda: b * a, "s0*s1"),
    (lambda: a * b + a, "s0 + s0*s1"),
    (lambda: mul(b, 2) + mul(a, 3), "3*s0 + 2*s1"),
    # constants last, except "5 - s0" when every coefficient is negative
    (lambda: 2 * a + 1, "2*s0 + 1"),
    (lambda: 1 + 2 * a, "2*s0 + 1"),
    (lambda: 5 - a, "5 - s0"),
    (lambda: -a - 5, "-s0 - 5"),
    (lambda: a - 5, "s0 - 5"),
    (lambda: -2 * a + b, "-2*s0 + s1"),
    # powers and products
    (lambda: a * a, "s0**2"),
    (lambda: (a + 1) * (a - 1), "s0**2 - 1"),
    (lambda: (a + b) * (a - b), "s0**2 - s1**2"),
    (lambda: 3 * a * b - 2, "3*s0*s1 - 2"),
    (lambda: scale(a + b, 3), "3*s0 + 3*s1"),
    (lambda: scale(a, -1), "-s0"),
    (lambda: neg(a - b), "-s0 + s1"),
    (lambda: sub(a + b, a), "s1"),
    # unbacked symbols sort after backed ones
    (lambda: U0.expr + S3.expr, "s3 + u0"),
    (lambda: U0.expr * a, "s0*u0"),
]


@pytest.mark.parametrize("build,expected", CANONICAL)
def test_canonical_form_text(build, expected):
    _check_text(build(), expected)


CONSTANT_FOLDING = [
    (lambda: add(3, 4), 7),
    (lambda: a - a, 0),
    (lambda: (a + 3) - a, 3),
    (lambda: mul(a, 0), 0),
    (lambda: scale(a + b, 0), 0),
    (lambda: a * b - b * a + 2, 2),
    (lambda: floordiv(7, 2), 3),
    (lambda: floordiv(-7, 2), -4),
    (lambda: mod(-7, 3), 2),
    (lambda: mod(7, -3), -2),
    (lambda: floordiv(a, a), 1),
    (lambda: mod(a, a), 0),
    (lambda: mod(a * b, b), 0),
    (lambda: mod(6 * a + 7, 3), 1),
    (lambda: mod(a, 1), 0),
    (lambda: floordiv(0, a), 0),
    (lambda: smin(3, 5), 3),
    (lambda: smax(3, -5, 2), 3),
    (lambda: subs(a * b, {S0: 2, S1: 3}), 6),
]


@pytest.mark.parametrize("build,expected", CONSTANT_FOLDING)
def test_constant_results_are_plain_ints(build, expected):
    got = build()
    assert type(got) is int
    assert got == expected


# --------------------------------------------------------------------------- floordiv / mod
DIVMOD = [
    # coefficient reduction: (b*q + r)//b == q + r//b
    (lambda: floordiv(6 * a + 7, 3), "2*s0 + 2"),
    (lambda: floordiv(6 * a + 8, 3), "2*s0 + 2"),
    (lambda: floordiv(7 * a + 1, 3), "2*s0 + ((s0 + 1)//3)"),
    (lambda: floordiv(a, 1), "s0"),
    (lambda: floordiv(3 * a, 3), "s0"),
    (lambda: mod(7 * a + 3, 4), "Mod(3*s0 + 3, 4)"),
    (lambda: mod(-a, 3), "Mod(2*s0, 3)"),
    # negative divisors, Python semantics: a // -b == (-a) // b, a % -b == -((-a) % b)
    (lambda: floordiv(a, -2), "-s0 + (s0//2)"),
    (lambda: floordiv(-a, 2), "-s0 + (s0//2)"),
    (lambda: mod(a, -2), "-Mod(s0, 2)"),
    (lambda: mod(7 * a + 3, -2), "-Mod(s0 + 1, 2)"),
    (lambda: ceildiv(a, -2), "-(s0//2)"),
    # nested floor divisions merge: (x//c)//b == x//(b*c)
    (lambda: floordiv(floordiv(a, 3), 4), "(s0//12)"),
    (lambda: floordiv(floordiv(a + 1, 2), 3), "((s0 + 1)//6)"),
    # (x % c) % b == x % b when b divides c; kept otherwise (no ranges here)
    (lambda: mod(mod(a, 8), 4), "Mod(s0, 4)"),
    (lambda: mod(mod(a, 12), 4), "Mod(s0, 4)"),
    (lambda: mod(mod(a, 4), 8), "Mod(Mod(s0, 4), 8)"),
    # exact polynomial quotients
    (lambda: floordiv(a * b, b), "s0"),
    (lambda: floordiv(a * b + b, b), "s0 + 1"),
    (lambda: floordiv(2 * a * b + 4 * b, 2 * b), "s0 + 2"),
    (lambda: floordiv(a * a, a), "s0"),
    (lambda: floordiv(a * b + 1, b), "((s0*s1 + 1)//s1)"),
    (lambda: floordiv(a, b), "(s0//s1)"),
    (lambda: mod(a, b), "Mod(s0, s1)"),
    (lambda: floordiv(5, a), "(5//s0)"),
    (lambda: floordiv(-5, a), "((-5)//s0)"),
    (lambda: floordiv(a, 2 * b), "(s0//(2*s1))"),
    # ceildiv is -((-a) // b)
    (lambda: ceildiv(4 * a, 4), "s0"),
    (lambda: ceildiv(a, 4), "((s0 + 3)//4)"),
    # display folds the constant back into a single floor division
    (lambda: floordiv(a + 1, 2) - 1, "((s0 - 1)//2)"),
    (lambda: floordiv(a + 2, 2), "((s0 + 2)//2)"),
]


@pytest.mark.parametrize("build,expected", DIVMOD)
def test_floordiv_mod_rules(build, expected):
    _check_text(build(), expected)


def test_floordiv_keeps_constant_outside_canonically():
    # ((s0 + 2)//2) is displayed, but the canonical form is 1 + (s0//2)
    e = floordiv(a + 2, 2)
    assert e == floordiv(a, 2) + 1
    assert e.const == 1


@pytest.mark.parametrize("k", [-5, -3, -2, -1, 1, 2, 3, 7])
def test_floordiv_mod_ceildiv_python_semantics(k):
    fd, md, cd = floordiv(3 * a + 1, k), mod(3 * a + 1, k), ceildiv(3 * a + 1, k)
    for v in range(-12, 13):
        x = 3 * v + 1
        assert evaluate(fd, {S0: v}) == x // k
        assert evaluate(md, {S0: v}) == x % k
        assert evaluate(cd, {S0: v}) == -(-x // k)


def test_division_by_zero_constant_raises():
    with pytest.raises(ZeroDivisionError):
        floordiv(a, 0)
    with pytest.raises(ZeroDivisionError):
        mod(a + 1, 0)


# --------------------------------------------------------------------------- min / max
MINMAX = [
    (lambda: smin(16, a), "Min(16, s0)"),
    (lambda: smin(a, 16), "Min(16, s0)"),          # ints sort first
    (lambda: smin(S3.expr, 16), "Min(16, s3)"),
    (lambda: smin(a, 4, 7), "Min(4, s0)"),          # constants folded to one
    (lambda: smin(b, a), "Min(s0, s1)"),
    (lambda: smin(a, a + 1), "s0"),                 # constant-offset dominance
    (lambda: smax(a, a + 1), "s0 + 1"),
    (lambda: smin(a - 3, a), "s0 - 3"),
    (lambda: smax(a, b, a), "Max(s0, s1)"),         # duplicates dropped
    (lambda: smin(smin(a, 3), b, 5), "Min(3, s0, s1)"),   # flattening
    (lambda: smax(smax(a, b), smax(b, c)), "Max(s0, s1, s2)"),
    (lambda: smin(smax(a, 2), 5), "Min(5, Max(2, s0))"),   # different kinds do not flatten
    (lambda: smin(a), "s0"),
    (lambda: smin(a + b, a + b + 2, c), "Min(s0 + s1, s2)"),
]


@pytest.mark.parametrize("build,expected", MINMAX)
def test_min_max(build, expected):
    _check_text(build(), expected)


# --------------------------------------------------------------------------- subs / evaluate
SUBS = [
    (lambda: subs(a * b + floordiv(a, 2), {S0: 4}), "4*s1 + 2"),
    (lambda: subs(smin(a, b), {S1: a + 1}), "s0"),
    (lambda: subs(floordiv(a, b), {S1: a}), "1"),
    (lambda: subs(mod(a, 4), {S0: 4 * c + 1}), "1"),
    (lambda: subs(floordiv(a, 4), {S0: 4 * c}), "s2"),
    (lambda: subs(a + b, {S0: b, S1: a}), "s0 + s1"),      # simultaneous
    (lambda: subs(a - b, {S0: b, S1: a}), "-s0 + s1"),
    (lambda: subs(a * a, {S0: b + 1}), "2*s1 + s1**2 + 1"),
    (lambda: subs(smax(a, c), {S2: 3}), "Max(3, s0)"),
]


@pytest.mark.parametrize("build,expected", SUBS)
def test_subs(build, expected):
    _check_text(build(), expected)


def test_subs_without_relevant_symbols_returns_same_object():
    e = a + floordiv(b, 3)
    assert subs(e, {S2: 7}) is e
    assert subs(e, {}) is e
    assert subs(5, {S0: 1}) == 5


EVALUATE = [
    (lambda: floordiv(a, 3) + mod(b, 5) * c, {S0: -7, S1: -3, S2: 2}, -3 + 2 * 2),
    (lambda: smin(16, a) * smax(b, 2), {S0: 20, S1: -1}, 32),
    (lambda: a * a * b - 7, {S0: -3, S1: 2}, 11),
    (lambda: floordiv(a, b), {S0: 7, S1: -2}, -4),
    (lambda: mod(a, b), {S0: 7, S1: -2}, -1),
    (lambda: 12, {}, 12),
]


@pytest.mark.parametrize("build,values,expected", EVALUATE)
def test_evaluate(build, values, expected):
    assert evaluate(build(), values) == expected


def test_evaluate_missing_symbol_is_keyerror():
    with pytest.raises(KeyError):
        evaluate(a + b, {S0: 1})


# --------------------------------------------------------------------------- printing
FORMAT_PY = [
    (lambda: a, "s0"),
    (lambda: -3, "(-3)"),
    (lambda: 4, "4"),
    (lambda: a + 1, "(s0 + 1)"),
    (lambda: 5 - a, "(-s0 + 5)"),
    (lambda: 2 * a, "2*s0"),
    (lambda: -a, "(-s0)"),
    (lambda: a * a, "s0*s0"),
    (lambda: floordiv(a, 2), "(s0 // 2)"),
    (lambda: mod(a, 4), "(s0 % 4)"),
    (lambda: smin(16, a), "min(16, s0)"),
    (lambda: smax(a, b), "max(s0, s1)"),
    (lambda: floordiv(-5, a), "((-5) // s0)"),
    (lambda: floordiv(a + 1, 2) - 1, "(((s0 + 1) // 2) - 1)"),
]


@pytest.mark.parametrize("build,expected", FORMAT_PY)
def test_format_py(build, expected):
    assert format_py(build()) == expected


def test_format_with_custom_names():
    e = 2 * a + floordiv(b, 3)
    names = {S0: "x.shape[0]", S1: "y.shape[1]"}
    assert format_expr(e, names.__getitem__) == "2*x.shape[0] + (y.shape[1]//3)"
    assert format_py(e, names.__getitem__) == "(2*x.shape[0] + (y.shape[1] // 3))"
    assert repr(floordiv(a, 2)) == str(floordiv(a, 2)) == "(s0//2)"



@pytest.mark.parametrize("build,values", [
    (lambda: floordiv(b, 2 * a), {S0: 3, S1: 7}),
    (lambda: floordiv(c, a * b), {S0: 2, S1: 3, S2: 7}),
    (lambda: mod(b, 2 * a), {S0: 3, S1: 7}),
    (lambda: mod(c, a * b), {S0: 2, S1: 3, S2: 7}),
])
def test_format_py_parenthesises_product_divisors(build, values):
    e = build()
    env = {s.name: v for s, v in values.items()}
    assert eval(format_py(e), {"min": min, "max": max}, env) == evaluate(e, values)



def test_format_expr_parenthesises_product_divisor():
    assert format_expr(floordiv(c, a * b)) == "(s2//(s0*s1))"


# --------------------------------------------------------------------------- identity
def test_hashing_and_equality_follow_canonical_form():
    e1, e2 = a * b + 2 * c + 1, 1 + c * 2 + b * a
    assert e1 == e2 and hash(e1) == hash(e2)
    assert {e1: "v"}[e2] == "v"
    assert floordiv(a + 1, 2) == floordiv(1 + a, 2)
    assert hash(smin(a, 16)) == hash(smin(16, a))
    assert a + 1 != a + 2
    assert (a == 1) is False and (a != a) is False
    assert len({a + b, b + a, a - b}) == 2


def test_structure_queries():
    e = 2 * a + floordiv(b, 3) + smin(c, 4)
    assert e.free_symbols == frozenset({S0, S1, S2})
    assert a.as_symbol() is S0
    assert (a + 1).as_symbol() is None and (2 * a).as_symbol() is None
    assert (2 * a - 3 * c).linear_coeffs() == {S0: 2, S2: -3}
    assert (a * b).linear_coeffs() is None
    assert (6 * a + 9 * b + 1).coeff_gcd() == 3
    kinds = sorted(x.kind for x in atoms_of(e) if isinstance(x, OpAtom))
    assert kinds == ["FloorDiv", "Min"]
    assert isinstance(floordiv(a, b).as_atom(), OpAtom)
    assert repr(S0) == "s0" and repr(U0) == "u0" and S0 < S1 < U0


def test_expr_operators_match_functions():
    assert a + 1 == add(a, 1) and 1 - a == sub(1, a) and -a == neg(a)
    assert a * b == mul(a, b) and a // 3 == floordiv(a, 3) and a % 3 == mod(a, 3)
    assert 7 // a == floordiv(7, a) and 7 % a == mod(7, a)


# --------------------------------------------------------------------------- differential
SYMS = [S0, S1, S2]
BINOPS = {
    "add": (add, operator.add),
    "sub": (sub, operator.sub),
    "mul": (mul, operator.mul),
    "floordiv": (floordiv, operator.floordiv),
    "mod": (mod, operator.mod),
    "ceildiv": (ceildiv, lambda x, y: -(-x // y)),
    "min": (smin, min),
    "max": (smax, max),
}

leaf = st.one_of(st.sampled_from(SYMS).map(lambda s: ("sym", s)),
                 st.integers(-6, 6).map(lambda k: ("int", k)))
trees = st.recursive(
    leaf,
    lambda kids: st.one_of(
        st.tuples(st.sampled_from(sorted(BINOPS)), kids, kids),
        st.tuples(st.just("scale"), kids, st.integers(-4, 4)),
        st.tuples(st.just("neg"), kids)),
    max_leaves=8)


def build(tree):
    """(symbolic value, reference function over a values dict)."""
    tag = tree[0]
    if tag == "sym":
        s = tree[1]
        return s.expr, lambda v: v[s]
    if tag == "int":
        k = tree[1]
        return k, lambda v: k
    if tag == "neg":
        x, fx = build(tree[1])
        return neg(x), lambda v: -fx(v)
    if tag == "scale":
        x, fx = build(tree[1])
        k = tree[2]
        return scale(x, k), lambda v: fx(v) * k
    sym_op, py_op = BINOPS[tag]
    x, fx = build(tree[1])
    y, fy = build(tree[2])
    return sym_op(x, y), lambda v: py_op(fx(v), fy(v))


@settings(max_examples=200, deadline=None)
@given(trees, st.lists(st.integers(-9, 9), min_size=3, max_size=3))
def test_constructors_agree_with_python_ints(tree, vals):
    try:
        e, ref = build(tree)
    except ZeroDivisionError:          # a constant divisor folded to 0
        assume(False)
    values = dict(zip(SYMS, vals))
    try:
        want = ref(values)
    except ZeroDivisionError:
        assume(False)
    assert evaluate(e, values) == want
    if type(e) is Expr:
        # the canonical form survives a rebuild through subs with an identity mapping
        assert evaluate(subs(e, {S0: S0.expr + 0}), values) == want


safe_divisor = st.one_of(
    st.integers(-5, 5).filter(lambda k: k != 0).map(lambda k: ("int", k)),
    st.sampled_from(SYMS).map(lambda s: ("sym", s)))
py_trees = st.recursive(
    leaf,
    lambda kids: st.one_of(
        st.tuples(st.sampled_from(["add", "sub", "mul", "min", "max"]), kids, kids),
        st.tuples(st.sampled_from(["floordiv", "mod"]), kids, safe_divisor)),
    max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(py_trees, st.lists(st.integers(-9, 9), min_size=3, max_size=3))
def test_format_py_evaluates_like_evaluate(tree, vals):
    e, _ = build(tree)
    values = dict(zip(SYMS, vals))
    try:
        want = evaluate(e, values)
    except ZeroDivisionError:
        assume(False)
    env = {s.name: v for s, v in values.items()}
    assert eval(format_py(e), {"min": min, "max": max}, env) == want
