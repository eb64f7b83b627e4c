"""symshape.algebra.ranges and symshape.algebra.infinity: printing, int_oo arithmetic, transfer functions
(tables and Hypothesis soundness checks), and ``bound()`` on expressions."""
import copy
import pickle

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from symshape import int_oo
from symshape.algebra.expr import Sym, evaluate, floordiv, mod, smax, smin
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.algebra.ranges import (UNBOUNDED, ValueRange, bound, point, vr_add, vr_floordiv,
                             vr_max, vr_min, vr_mod, vr_mul, vr_pow, vr_scale)

VR = ValueRange
S0, S1, S2, S3 = Sym(0), Sym(1), Sym(2), Sym(3)
a, b, c, d = S0.expr, S1.expr, S2.expr, S3.expr


# --------------------------------------------------------------------------- printing
@pytest.mark.parametrize("vr,text", [
    (VR(2, int_oo), "VR[2, int_oo]"),
    (VR(-int_oo, 5), "VR[-int_oo, 5]"),
    (UNBOUNDED, "VR[-int_oo, int_oo]"),
    (point(3), "VR[3, 3]"),
    (VR(16, 510), "VR[16, 510]"),
])
def test_value_range_repr(vr, text):
    assert repr(vr) == text and str(vr) == text


def test_int_oo_text():
    assert repr(int_oo) == str(int_oo) == "int_oo"
    assert repr(-int_oo) == "-int_oo"
    assert int_oo is INT_OO and -int_oo is NEG_INT_OO


# --------------------------------------------------------------------------- int_oo
INF_ARITH = [
    (lambda: int_oo + 5, INT_OO),
    (lambda: 5 + int_oo, INT_OO),
    (lambda: int_oo - 5, INT_OO),
    (lambda: 5 - int_oo, NEG_INT_OO),
    (lambda: -int_oo - 5, NEG_INT_OO),
    (lambda: int_oo + int_oo, INT_OO),
    (lambda: -int_oo + -int_oo, NEG_INT_OO),
    (lambda: int_oo * 3, INT_OO),
    (lambda: 3 * int_oo, INT_OO),
    (lambda: int_oo * -2, NEG_INT_OO),
    (lambda: -int_oo * -2, INT_OO),
    (lambda: int_oo * 0, 0),
    (lambda: 0 * -int_oo, 0),
    (lambda: int_oo * int_oo, INT_OO),
    (lambda: int_oo * -int_oo, NEG_INT_OO),
    (lambda: -int_oo * -int_oo, INT_OO),
    (lambda: -(-int_oo), INT_OO),
]


@pytest.mark.parametrize("build,expected", INF_ARITH)
def test_int_oo_arithmetic(build, expected):
    got = build()
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("build", [lambda: int_oo - int_oo, lambda: int_oo + -int_oo,
                                   lambda: -int_oo + int_oo, lambda: -int_oo - -int_oo])
def test_int_oo_minus_int_oo_is_undefined(build):
    with pytest.raises(ArithmeticError):
        build()


def test_int_oo_ordering():
    big = 10 ** 100
    assert int_oo > big and big < int_oo and not int_oo < big and int_oo >= big
    assert -int_oo < -big and -big > -int_oo and -int_oo <= -big
    assert -int_oo < int_oo and not int_oo < -int_oo and not int_oo <= -int_oo
    assert int_oo <= int_oo and int_oo >= int_oo and not int_oo < int_oo
    assert int_oo == int_oo and int_oo != -int_oo and int_oo != big
    assert max(3, int_oo) is INT_OO and min(3, -int_oo) is NEG_INT_OO and min(3, int_oo) == 3
    assert sorted([int_oo, 3, -int_oo, -7]) == [NEG_INT_OO, -7, 3, INT_OO]
    assert hash(int_oo) == hash(INT_OO) and hash(int_oo) != hash(-int_oo)
    assert is_inf(int_oo) and is_inf(-int_oo) and not is_inf(big)


def test_int_oo_stays_a_singleton():
    assert copy.deepcopy(int_oo) is INT_OO
    assert pickle.loads(pickle.dumps(-int_oo)) is NEG_INT_OO
    assert pickle.loads(pickle.dumps(VR(2, int_oo))) == VR(2, int_oo)


# --------------------------------------------------------------------------- ValueRange
def test_value_range_basics():
    r = VR(2, 16)
    assert 2 in r and 16 in r and 1 not in r and 17 not in r
    assert 10 ** 9 in VR(2, int_oo) and -5 in UNBOUNDED
    assert point(4).is_singleton and not r.is_singleton and not VR(int_oo, int_oo).is_singleton
    assert r.intersect(VR(8, int_oo)) == VR(8, 16)
    assert VR(4, 8).issubset(r) and not VR(4, 20).issubset(r) and r.issubset(UNBOUNDED)
    assert VR(2, 16) == VR(2, 16) and hash(VR(2, 16)) == hash(VR(2, 16)) and r != VR(2, 15)
    with pytest.raises(ValueError, match=r"empty value range \[5, 4\]"):
        VR(5, 4)
    with pytest.raises(ValueError):
        VR(2, 5).intersect(VR(7, 9))


# --------------------------------------------------------------------------- transfer tables
TRANSFER = [
    # add
    (lambda: vr_add(VR(2, int_oo), VR(-3, 4)), VR(-1, int_oo)),
    (lambda: vr_add(VR(-int_oo, 3), VR(2, int_oo)), UNBOUNDED),
    (lambda: vr_add(VR(1, 2), VR(10, 20)), VR(11, 22)),
    # scale
    (lambda: vr_scale(VR(2, 5), 3), VR(6, 15)),
    (lambda: vr_scale(VR(2, int_oo), -3), VR(-int_oo, -6)),
    (lambda: vr_scale(VR(2, 5), 0), VR(0, 0)),
    (lambda: vr_scale(VR(-2, 5), -1), VR(-5, 2)),
    # mul: the extremes sit at the corners
    (lambda: vr_mul(VR(2, 3), VR(4, 5)), VR(8, 15)),
    (lambda: vr_mul(VR(-2, 3), VR(-5, 4)), VR(-15, 12)),
    (lambda: vr_mul(VR(-2, 3), VR(4, int_oo)), UNBOUNDED),
    (lambda: vr_mul(VR(0, 3), VR(2, int_oo)), VR(0, int_oo)),
    (lambda: vr_mul(VR(2, int_oo), VR(2, int_oo)), VR(4, int_oo)),
    # pow
    (lambda: vr_pow(VR(-3, 2), 1), VR(-3, 2)),
    (lambda: vr_pow(VR(-3, 2), 2), VR(0, 9)),         # even power straddling 0
    (lambda: vr_pow(VR(-3, 2), 3), VR(-27, 8)),
    (lambda: vr_pow(VR(2, 3), 2), VR(4, 9)),
    (lambda: vr_pow(VR(-3, -2), 2), VR(4, 9)),
    (lambda: vr_pow(VR(-int_oo, -2), 2), VR(4, int_oo)),
    (lambda: vr_pow(VR(-int_oo, -2), 3), VR(-int_oo, -8)),
    # floordiv: positive, negative, straddling and zero-only divisors
    (lambda: vr_floordiv(VR(7, 20), VR(2, 3)), VR(2, 10)),
    (lambda: vr_floordiv(VR(-7, 20), VR(2, 3)), VR(-4, 10)),
    (lambda: vr_floordiv(VR(7, 20), VR(-3, -2)), VR(-10, -3)),
    (lambda: vr_floordiv(VR(-7, 20), VR(-3, 4)), VR(-20, 20)),
    (lambda: vr_floordiv(VR(5, 9), VR(0, 3)), VR(1, 9)),         # 0 excluded: [1, 3]
    (lambda: vr_floordiv(VR(1, 2), VR(0, 0)), UNBOUNDED),
    (lambda: vr_floordiv(VR(2, int_oo), VR(2, int_oo)), VR(0, int_oo)),
    (lambda: vr_floordiv(VR(-5, int_oo), VR(2, int_oo)), VR(-3, int_oo)),
    (lambda: vr_floordiv(VR(-int_oo, -1), VR(1, int_oo)), VR(-int_oo, -1)),
    # mod
    (lambda: vr_mod(VR(5, 7), point(8)), VR(5, 7)),              # no wrap-around
    (lambda: vr_mod(VR(9, 11), point(8)), VR(1, 3)),             # shifted, no wrap
    (lambda: vr_mod(VR(5, 9), point(8)), VR(0, 7)),              # wraps
    (lambda: vr_mod(VR(-3, -1), point(8)), VR(5, 7)),
    (lambda: vr_mod(VR(2, int_oo), point(4)), VR(0, 3)),
    (lambda: vr_mod(VR(2, 3), VR(4, 10)), VR(0, 3)),             # x % m == x for 0 <= x < m
    (lambda: vr_mod(VR(-5, 3), VR(4, 10)), VR(0, 9)),
    (lambda: vr_mod(VR(0, 100), VR(2, int_oo)), VR(0, 100)),
    (lambda: vr_mod(VR(-5, 3), VR(-4, -2)), VR(-3, 0)),          # divisor's sign
    (lambda: vr_mod(VR(-5, 3), VR(-4, 6)), VR(-3, 5)),
    (lambda: vr_mod(VR(-5, 3), VR(-int_oo, int_oo)), UNBOUNDED),
    # min / max
    (lambda: vr_min([VR(2, 10), VR(5, 7)]), VR(2, 7)),
    (lambda: vr_min([VR(2, int_oo), point(16)]), VR(2, 16)),
    (lambda: vr_max([VR(2, 10), VR(5, int_oo)]), VR(5, int_oo)),
    (lambda: vr_max([VR(-int_oo, 0), point(-3), VR(-9, -4)]), VR(-3, 0)),
]


@pytest.mark.parametrize("build,expected", TRANSFER)
def test_transfer_functions(build, expected):
    assert build() == expected


# --------------------------------------------------------------------------- soundness
@st.composite
def interval_and_members(draw, lo=-30, hi=30, width=12, n=3):
    low = draw(st.integers(lo, hi))
    high = low + draw(st.integers(0, width))
    members = draw(st.lists(st.integers(low, high), min_size=1, max_size=n))
    return VR(low, high), members


SOUND = settings(max_examples=200, deadline=None)


@SOUND
@given(interval_and_members(), interval_and_members())
def test_vr_add_sound(x, y):
    (rx, xs), (ry, ys) = x, y
    out = vr_add(rx, ry)
    assert all(u + v in out for u in xs for v in ys)


@SOUND
@given(interval_and_members(), st.integers(-7, 7))
def test_vr_scale_sound(x, k):
    rx, xs = x
    out = vr_scale(rx, k)
    assert all(u * k in out for u in xs)


@SOUND
@given(interval_and_members(), interval_and_members())
def test_vr_mul_sound(x, y):
    (rx, xs), (ry, ys) = x, y
    out = vr_mul(rx, ry)
    assert all(u * v in out for u in xs for v in ys)


@SOUND
@given(interval_and_members(lo=-9, hi=9), st.integers(1, 5))
def test_vr_pow_sound(x, n):
    rx, xs = x
    out = vr_pow(rx, n)
    assert all(u ** n in out for u in xs)
    if n % 2 == 0:
        assert out.lower >= 0


@SOUND
@given(interval_and_members(), interval_and_members(lo=-8, hi=8, width=8))
def test_vr_floordiv_sound(x, y):
    (rx, xs), (ry, ys) = x, y
    assume(any(v != 0 for v in ys))
    out = vr_floordiv(rx, ry)
    assert all(u // v in out for u in xs for v in ys if v != 0)


@SOUND
@given(interval_and_members(), interval_and_members(lo=-8, hi=8, width=8))
def test_vr_mod_sound(x, y):
    (rx, xs), (ry, ys) = x, y
    assume(any(v != 0 for v in ys))
    out = vr_mod(rx, ry)
    assert all(u % v in out for u in xs for v in ys if v != 0)


@SOUND
@given(st.integers(-40, 40), st.integers(0, 30), st.integers(1, 12))
def test_vr_mod_singleton_divisor_sound_and_tight(low, width, m):
    """With one positive divisor the result is exact when the range does not wrap."""
    rx = VR(low, low + width)
    out = vr_mod(rx, point(m))
    values = {u % m for u in range(low, low + width + 1)}
    assert values <= set(range(out.lower, out.upper + 1))
    if low // m == (low + width) // m:
        assert (out.lower, out.upper) == (min(values), max(values))


@SOUND
@given(st.lists(interval_and_members(), min_size=1, max_size=4))
def test_vr_min_max_sound(args):
    ranges = [r for r, _ in args]
    lo, hi = vr_min(ranges), vr_max(ranges)
    picks = [m[0] for _, m in args]
    assert min(picks) in lo and max(picks) in hi
    picks = [m[-1] for _, m in args]
    assert min(picks) in lo and max(picks) in hi


@SOUND
@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(1, 6), st.integers(0, 50))
def test_vr_floordiv_half_infinite_sound(x0, y0, sign, extra):
    """Divisor range [y0, int_oo] (or its mirror) against a dividend range [x0, int_oo]."""
    rx = VR(x0, int_oo)
    ry = VR(y0, int_oo) if sign % 2 else VR(-int_oo, y0)
    out = vr_floordiv(rx, ry)
    for u in (x0, x0 + extra):
        for v in (y0, y0 + extra if sign % 2 else y0 - extra):
            if v != 0:
                assert u // v in out


# --------------------------------------------------------------------------- bound()
RANGES = {S0: VR(16, int_oo), S1: VR(2, int_oo), S2: VR(2, 10), S3: VR(2, int_oo)}
NEG = {S0: VR(-3, 2), S1: VR(-4, -1), S2: VR(0, 5), S3: VR(2, int_oo)}

BOUNDS = [
    (lambda: a * d - 2 * d, RANGES, VR(28, int_oo)),    # factored: s3*(s0 - 2) >= 2*14
    (lambda: c * c - 2 * c, RANGES, VR(0, 80)),          # s2*(s2 - 2) with s2 in [2, 10]
    (lambda: a + b, RANGES, VR(18, int_oo)),
    (lambda: a - b, RANGES, UNBOUNDED),
    (lambda: 3 * c + 1, RANGES, VR(7, 31)),
    (lambda: 20 - c, RANGES, VR(10, 18)),
    (lambda: floordiv(c, 3), RANGES, VR(0, 3)),
    (lambda: floordiv(a, c), RANGES, VR(1, int_oo)),
    (lambda: mod(a, 4), RANGES, VR(0, 3)),
    (lambda: mod(c, 16), RANGES, VR(2, 10)),
    (lambda: smin(16, c), RANGES, VR(2, 10)),
    (lambda: smax(16, c), RANGES, VR(16, 16)),
    (lambda: smin(a, d), RANGES, VR(2, int_oo)),
    (lambda: 7, RANGES, VR(7, 7)),
    (lambda: a * a, NEG, VR(0, 9)),
    (lambda: a * b, NEG, VR(-8, 12)),
    (lambda: -c, NEG, VR(-5, 0)),
    (lambda: floordiv(c, b), NEG, VR(-5, 0)),
    (lambda: mod(c, b), NEG, VR(-3, 0)),
]


@pytest.mark.parametrize("build,ranges,expected", BOUNDS)
def test_bound(build, ranges, expected):
    assert bound(build(), ranges.__getitem__) == expected


@SOUND
@given(st.integers(-6, 6), st.integers(-6, 6), st.integers(-6, 6),
       st.lists(interval_and_members(lo=-8, hi=8, width=6, n=1), min_size=3, max_size=3))
def test_bound_sound_on_polynomials(k1, k2, k3, xs):
    """bound() of k1*s0*s1 + k2*s1*s2 + k3*s1 + Min(s0, s2) - Mod(s1, 3) holds its values."""
    e = k1 * a * b + k2 * b * c + k3 * b + smin(a, c) - mod(b, 3)
    ranges = {S0: xs[0][0], S1: xs[1][0], S2: xs[2][0]}
    values = {S0: xs[0][1][0], S1: xs[1][1][0], S2: xs[2][1][0]}
    assert evaluate(e, values) in bound(e, ranges.__getitem__)
