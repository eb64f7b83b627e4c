"""Time and tightness of ``ss.bounds`` over a corpus of size queries.

    python benchmarks/bounds_queries.py [--repeat N]

Each query class (one symbol; linear facts over several symbols; Min / Max; floor division
and modulo by constants; products) holds queries written the way shape code meets them,
each under its own ``ss.symbolic_shape`` constraints.  For every query the script prints
the engine's ``(lo, hi)`` next to the exact answer found by brute force over a window of
symbol values (an infinite end is checked by its direction: no window point exceeds a
finite bound, and an ``int_oo`` end grows with the window), flags any wrong bound (there
must be none) and any loose side, then reports the average and worst time per query:
cold (a fresh ``symbolic_shape`` environment, nothing cached) and warm (asked again).
"""
import argparse
import itertools
import statistics
import time

import symshape as ss
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf

# (class, names, constraints, query as a function of the symbols, brute-force window)
CORPUS = [
    ("one symbol", "a", (), lambda a: a, 40),
    ("one symbol", "a", ("a <= 64",), lambda a: 3 * a - 1, 70),
    ("one symbol", "a", ("a >= 8",), lambda a: (a + 1) // 2, 40),
    ("one symbol", "a", (), lambda a: (-a) // 2, 40),
    ("one symbol", "a", ("a <= 10",), lambda a: a * a - a, 40),
    ("linear facts", "a, b", ("a >= b + 2", "b <= 64"), lambda a, b: a - b, 90),
    ("linear facts", "a, b", ("a >= b + 2", "b <= 64"), lambda a, b: a, 90),
    ("linear facts", "a, b", ("a + b <= 100",), lambda a, b: a, 110),
    ("linear facts", "a, b", ("a + b <= 100",), lambda a, b: a + 2 * b, 110),
    ("linear facts", "a, b, c", ("a <= b", "b <= c", "c <= 30"), lambda a, b, c: c - a, 35),
    ("linear facts", "a, b", ("2*a == b + 1",), lambda a, b: b, 40),
    ("min/max", "a, b", ("a >= b + 2", "b <= 64"), lambda a, b: ss.sym_max(a, b) - a, 90),
    ("min/max", "a, b", (), lambda a, b: ss.sym_max(a, b) - a, 40),
    ("min/max", "a", (), lambda a: ss.sym_min(a, 256), 300),
    ("min/max", "a", ("a <= 255",), lambda a: ss.sym_min(256, a + 1) - ss.sym_min(256, a),
     300),
    ("min/max", "a", ("min(a, 5) == 5",), lambda a: a, 40),
    ("min/max", "a, b", ("max(a, b) <= 12",), lambda a, b: a + b, 20),
    ("div/mod", "n", ("n // 100 == 30",), lambda n: n, 3200),
    ("div/mod", "n", ("n // 4 <= 4",), lambda n: n, 40),
    ("div/mod", "n", ("3 * n // 2 <= 12",), lambda n: n, 40),
    ("div/mod", "n", ("(n + 1) // 2 >= 2",), lambda n: n, 40),
    ("div/mod", "n", ("n % 4 == 0", "n <= 64"), lambda n: n // 4, 70),
    ("div/mod", "n", (), lambda n: n - n // 2, 40),
    ("div/mod", "n", ("n <= 50",), lambda n: n % 7, 60),
    ("products", "n", ("n * n <= 100",), lambda n: n, 40),
    ("products", "a, b", ("a * b <= 28", "a >= 3"), lambda a, b: b, 40),
    ("products", "a, b", ("a <= 8", "b <= 6"), lambda a, b: a * b, 20),
    ("products", "a, b", ("a * b <= 64",), lambda a, b: a * b, 70),
]


def _extremes(names, constraints, query, window):
    k = len([n for n in names.split(",") if n.strip()])
    pred = [eval("lambda %s: %s" % (names, c)) for c in constraints]
    vals = [query(*p) for p in itertools.product(range(1, window + 1), repeat=k)
            if all(f(*p) for f in pred)]
    return min(vals), max(vals)


def brute(names, constraints, query, window):
    """The exact (lo, hi) by brute force: over the window, and over twice it; an end that
    moves between the two is unbounded (reported as -int_oo / int_oo).  Each window is
    chosen to hold every finite end of its query."""
    k = len([n for n in names.split(",") if n.strip()])
    window = window if k == 1 else min(window, 120)
    lo, hi = _extremes(names, constraints, query, window)
    lo2, hi2 = _extremes(names, constraints, query, 2 * window)
    return (NEG_INT_OO if lo2 < lo else lo), (INT_OO if hi2 > hi else hi)


def run(repeat: int) -> None:
    cold, warm = [], []
    wrong = loose = 0
    for cls, names, cons, q, window in CORPUS:
        times = []
        for _ in range(repeat):
            syms = ss.symbolic_shape(names, constraints=cons)
            e = q(*syms)
            t = time.perf_counter()
            lo, hi = ss.bounds(e)
            times.append(time.perf_counter() - t)
        t = time.perf_counter()
        ss.bounds(e)
        warm.append(time.perf_counter() - t)
        cold.append(statistics.median(times))
        blo, bhi = brute(names, cons, q, window)
        bad = (not is_inf(lo) and lo > blo) or (not is_inf(hi) and hi < bhi)
        exact_hi = hi == bhi
        exact_lo = lo == blo
        wrong += bad
        loose += (not bad) and not (exact_lo and exact_hi)
        print("%-13s %-40s -> (%s, %s)  exact (%s, %s)%s  %.3f ms" % (
            cls, "%s | %s" % (", ".join(cons) or "-", _text(q, names)), lo, hi, blo,
            bhi, "  WRONG" if bad else
            ("" if exact_lo and exact_hi else "  loose"), cold[-1] * 1e3))
    print()
    print("%d queries: %d wrong, %d loose" % (len(CORPUS), wrong, loose))
    print("cold: average %.3f ms, worst %.3f ms; warm (cached): average %.4f ms, worst "
          "%.4f ms" % (statistics.mean(cold) * 1e3, max(cold) * 1e3,
                       statistics.mean(warm) * 1e3, max(warm) * 1e3))


def _text(q, names):
    import inspect
    src = inspect.getsource(q).strip()
    body = src[src.index("lambda"):].split(":", 1)[1]
    return body[:body.rindex(",", 0, body.rindex(","))].strip()[:40] if body.count(",") \
        else body.strip()[:40]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    run(ap.parse_args().repeat)
