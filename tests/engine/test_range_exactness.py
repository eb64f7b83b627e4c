"""The transfer functions that are exact by design return the hull of the operation's
values, not merely a sound range (the proofs show soundness; these show nothing is lost):
every finite end is attained, and every infinite end is needed.  Run on ranges with ends
in ``ENDS`` and the infinities; members are enumerated inside a window ``[-w, w]`` for
``w = W`` and ``2*W``: a finite end is the extreme in both windows, an infinite end's side
grows with the window.  (The mutation gate's precision check: a mutant that widens a range survives
every soundness proof.)"""
import itertools

import pytest

from symshape.algebra import ranges as RG
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.algebra.ranges import ValueRange

ENDS = (-3, -1, 0, 1, 2, 5)
W = 40


def _ranges():
    out = [ValueRange(a, b) for a in ENDS for b in ENDS if a <= b]
    out += [ValueRange(NEG_INT_OO, b) for b in ENDS] + [ValueRange(a, INT_OO) for a in ENDS]
    return out + [ValueRange(NEG_INT_OO, INT_OO)]


def _members(r, w=W):
    lo = -w if is_inf(r.lower) else r.lower
    hi = w if is_inf(r.upper) else r.upper
    return range(lo, hi + 1)


def _check_hull(got, values, what):
    """``values(w)``: the operation's values over the members inside ``[-w, w]``."""
    small, big = values(W), values(2 * W)
    if is_inf(got.lower):
        assert min(big) < min(small), "%s: lower end -int_oo, but the values stop at %s" % (
            what, min(big))
    else:
        assert got.lower == min(small) == min(big), "%s: lower end %s, the least value is %s" % (
            what, got.lower, min(big))
    if is_inf(got.upper):
        assert max(big) > max(small), "%s: upper end int_oo, but the values stop at %s" % (
            what, max(big))
    else:
        assert got.upper == max(small) == max(big), "%s: upper end %s, the greatest value is " \
            "%s" % (what, got.upper, max(big))


BINARY = [
    ("add", RG.vr_add, lambda x, y: x + y, lambda b: True),
    ("mul", RG.vr_mul, lambda x, y: x * y, lambda b: True),
    ("floordiv+", RG.vr_floordiv, lambda x, y: x // y, lambda b: b.lower > 0),
    ("floordiv-", RG.vr_floordiv, lambda x, y: x // y, lambda b: b.upper < 0),
    ("min", lambda a, b: RG.vr_min([a, b]), min, lambda b: True),
    ("max", lambda a, b: RG.vr_max([a, b]), max, lambda b: True),
]


@pytest.mark.parametrize("name,fn,op,ok", BINARY, ids=[b[0] for b in BINARY])
def test_binary_transfer_is_the_hull(name, fn, op, ok):
    for a, b in itertools.product(_ranges(), repeat=2):
        if not ok(b):
            continue
        _check_hull(fn(a, b), lambda w: [op(x, y) for x in _members(a, w) for y in _members(b, w)],
                    "%s(%s, %s)" % (name, a, b))


@pytest.mark.parametrize("n", range(1, 6))
def test_pow_is_the_hull(n):
    for a in _ranges():
        _check_hull(RG.vr_pow(a, n), lambda w: [x ** n for x in _members(a, w)],
                    "pow(%s, %d)" % (a, n))


@pytest.mark.parametrize("k", (-3, -1, 0, 2))
def test_scale_is_the_hull(k):
    for a in _ranges():
        _check_hull(RG.vr_scale(a, k), lambda w: [k * x for x in _members(a, w)],
                    "scale(%s, %d)" % (a, k))


def test_mod_without_wrap_is_the_hull():
    for a in _ranges():
        for m in (1, 2, 3, 7):
            if is_inf(a.lower) or is_inf(a.upper) or a.lower // m != a.upper // m:
                continue
            _check_hull(RG.vr_mod(a, ValueRange(m, m)), lambda w: [x % m for x in _members(a, w)],
                        "mod(%s, %d)" % (a, m))


@pytest.mark.parametrize("b", [ValueRange(3, 5), ValueRange(1, 1), ValueRange(2, INT_OO),
                               ValueRange(-5, -3), ValueRange(NEG_INT_OO, -2),
                               ValueRange(-3, 0), ValueRange(0, 4), ValueRange(-2, 3),
                               ValueRange(NEG_INT_OO, 0), ValueRange(0, INT_OO)])
def test_mod_over_a_whole_period_is_the_hull(b):
    # x ranging over a whole period of every divisor: x % y takes every value of
    # [0, d - 1] (y > 0), [c + 1, 0] (y < 0), their union with 0 (y either side of 0;
    # y == 0 raises), and no other
    for a in (ValueRange(NEG_INT_OO, INT_OO), ValueRange(-W, INT_OO)):
        _check_hull(RG.vr_mod(a, b), lambda w: [x % y for x in _members(a, w)
                                                for y in _members(b, w) if y],
                    "mod(%s, %s)" % (a, b))


def test_mod_upper_end_is_the_greatest_value_for_nonnegative_numerators():
    # 0 <= x: x % y <= min(x, d - 1), attained when x can be at most d - 1 (x itself, or
    # d - 1 with y == d); the lower end stays 0, sound but not always attained
    for a in _ranges():
        if is_inf(a.lower) or a.lower < 0:
            continue
        for b in (ValueRange(1, 1), ValueRange(1, 5), ValueRange(3, 5), ValueRange(5, 7),
                  ValueRange(2, INT_OO)):
            if not is_inf(b.upper) and a.lower > b.upper - 1:
                continue
            got = RG.vr_mod(a, b)
            for w in (W, 2 * W):
                values = [x % y for x in _members(a, w) for y in _members(b, w)]
                if not is_inf(got.upper):
                    assert got.upper == max(values), (a, b, got)
