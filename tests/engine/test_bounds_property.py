"""``ss.bounds`` against brute force: every answer is exact on a bounded box, and sound
(never narrower than the truth) when a symbol is unbounded.  The queries and constraints
mix the shapes that the fast paths (chains of facts, floor division written out, corner
samples) and the solver each answer."""
import itertools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.algebra.infinity import is_inf

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"

# (constraint text with {k} and {m}, the same as a predicate)
FACTS = [
    ("a >= b + {k}", lambda a, b, k, m: a >= b + k),
    ("a + b <= {m}", lambda a, b, k, m: a + b <= m),
    ("a * b <= {m}", lambda a, b, k, m: a * b <= m),
    ("a // {k} <= {m} // 3", lambda a, b, k, m: a // k <= m // 3),
    ("b % {k} == 0", lambda a, b, k, m: b % k == 0),
    ("2 * a == b + {k}", lambda a, b, k, m: 2 * a == b + k),
    ("max(a, b) <= {m}", lambda a, b, k, m: max(a, b) <= m),
]
QUERIES = [
    lambda a, b: a - b,
    lambda a, b: a + 2 * b,
    lambda a, b: b - a // 2,
    lambda a, b: (-a) // 3 + b,
    lambda a, b: a - a // 2,
    lambda a, b: ss.sym_max(a, b) - a,
    lambda a, b: a * b,
    lambda a, b: b % 5 + a,
    # polynomials (one symbol: Cauchy's bound; two: a slack for a linear fact), Min / Max
    # by cases
    lambda a, b: a * a - 5 * a + 6,
    lambda a, b: a * a - b * b,
    lambda a, b: a * b - b * b,
    lambda a, b: ss.sym_max(a, b) - ss.sym_min(a, b),
    lambda a, b: ss.sym_max(a, b) + ss.sym_min(a, b) - a - b,
    lambda a, b: ss.sym_max(0, ss.sym_min(20, a + 1) - ss.sym_min(20, b)),
]


def _brute(preds, query, a_hi, b_hi):
    vals = []
    for a, b in itertools.product(range(1, a_hi + 1), range(1, b_hi + 1)):
        if all(p(a, b) for p in preds):
            vals.append(query(a, b))
    return (min(vals), max(vals)) if vals else None


@settings(max_examples=200 if THOROUGH else 30, deadline=None, derandomize=True)
@given(facts=st.lists(st.sampled_from(range(len(FACTS))), max_size=2, unique=True),
       k=st.integers(1, 4), m=st.integers(2, 120), query=st.sampled_from(range(len(QUERIES))),
       a_hi=st.integers(1, 90), b_hi=st.integers(1, 90))
def test_bounds_are_exact_on_a_box(facts, k, m, query, a_hi, b_hi):
    texts = ["a <= %d" % a_hi, "b <= %d" % b_hi]
    preds = [lambda a, b: True]
    for i in facts:
        text, pred = FACTS[i]
        texts.append(text.format(k=k, m=m))
        preds.append(lambda a, b, pred=pred: pred(a, b, k, m))
    q = QUERIES[query]
    truth = _brute(preds, q, a_hi, b_hi)
    if truth is None:
        with pytest.raises(ss.UserError):
            ss.symbolic_shape("a, b", constraints=texts)
        return
    a, b = ss.symbolic_shape("a, b", constraints=texts)
    assert ss.bounds(q(a, b)) == truth, texts


@settings(max_examples=100 if THOROUGH else 15, deadline=None, derandomize=True)
@given(facts=st.lists(st.sampled_from(range(len(FACTS))), max_size=2, unique=True),
       k=st.integers(1, 4), m=st.integers(2, 120), query=st.sampled_from(range(len(QUERIES))))
def test_bounds_are_sound_with_unbounded_symbols(facts, k, m, query):
    texts, preds = [], []
    for i in facts:
        text, pred = FACTS[i]
        texts.append(text.format(k=k, m=m))
        preds.append(lambda a, b, pred=pred: pred(a, b, k, m))
    q = QUERIES[query]
    seen = _brute(preds, q, 150, 150)
    try:
        a, b = ss.symbolic_shape("a, b", constraints=texts)
    except ss.UserError:
        assert seen is None
        return
    lo, hi = ss.bounds(q(a, b))
    if seen is not None:
        assert (is_inf(lo) or lo <= seen[0]) and (is_inf(hi) or hi >= seen[1]), texts
