"""``ss.bounds`` and decided comparisons next to JAX's shape polymorphism, query by query.

    python benchmarks/bounds_vs_jax.py [--repeat N]     # symshape vs JAX (live or recorded)
    /path/to/jax-venv/bin/python benchmarks/bounds_vs_jax.py --record   # ask JAX again

Each query is a size expression (its bounds are asked) or a comparison (decided True /
False, or inconclusive), under constraints written in the syntax both engines read
(``>=``, ``<=``, ``==`` over ``+ - * // %`` and ``max`` / ``min``).  The queries are grouped
by class: linear facts over several symbols, floor division and modulo by constants,
Min / Max, products, polynomials, differences that must cancel (``max(a, b) - a``,
``(-a) // 2``), equalities that must be solved, and comparisons under constraints.

For every query the script finds the exact answer by brute force over a window of symbol
values (``exact``), asks symshape (``ss.symbolic_shape`` + ``ss.bounds`` / a comparison),
and takes JAX's answer (``jax.export.symbolic_shape`` + its bounds decision) live when
``jax`` is importable, else from
``bounds_jax_answers.json`` (measured with jax, kept here so that the comparison runs
without it).  It prints, per class and per side (lower bound, upper bound, comparison),
how often symshape is tighter than / equal to / looser than JAX, and how many answers of
each engine are wrong, then the average and worst time of one cold ``ss.bounds`` query
(a fresh environment each time, median of ``--repeat`` runs).

A bound is wrong when a feasible point of the window lies beyond it; a comparison is wrong
when it is decided and a feasible point says otherwise.  An infinite end of the exact
answer is found by doubling the window: an end that moves is unbounded.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from typing import Dict, List, NamedTuple, Optional, Tuple

ANSWERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bounds_jax_answers.json")
CMP_OPS = (">=", "<=", ">", "<")


class Query(NamedTuple):
    """One corpus entry: its class, the symbol names, the constraints, the query text and
    the brute-force window (largest symbol value tried; doubled to find infinite ends)."""
    cls: str
    names: str
    constraints: Tuple[str, ...]
    text: str
    window: int

    @property
    def key(self) -> str:
        return "%s | %s | %s" % (self.names, "; ".join(self.constraints), self.text)

    @property
    def is_comparison(self) -> bool:
        return any(op in self.text for op in CMP_OPS)


def _q(cls, names, constraints, text, window=40) -> Query:
    return Query(cls, names, tuple(constraints), text, window)


CORPUS: List[Query] = [
    # -- linear facts over several symbols
    _q("linear facts", "a, b", ["a >= b + 2", "b <= 64"], "a - b", 90),
    _q("linear facts", "a, b", ["a >= b + 2", "b <= 64"], "a", 90),
    _q("linear facts", "a, b", ["a + b <= 100"], "a", 110),
    _q("linear facts", "a, b", ["a + b <= 100"], "a + 2*b", 110),
    _q("linear facts", "a, b, c", ["a <= b", "b <= c", "c <= 30"], "c - a", 35),
    _q("linear facts", "a, b, c", ["a <= b", "b <= c", "c <= 30"], "a + c", 35),
    _q("linear facts", "a, b", ["a >= 2*b", "b >= 3"], "a - b", 40),
    _q("linear facts", "a, b", ["a + b >= 10", "a <= 4"], "b", 40),
    _q("linear facts", "a, b", ["3*a + 2*b <= 30"], "a + b", 40),
    _q("linear facts", "a, b", ["a - b >= 1", "a <= 20"], "b", 40),
    _q("linear facts", "a, b, c", ["a >= b + 1", "b >= c + 1"], "a", 20),
    _q("linear facts", "a, b", ["2*a + b <= 10", "a + 2*b <= 10"], "a + b", 20),
    _q("linear facts", "a, b, c, d", ["a <= b", "b <= c", "c <= d", "d <= 30"], "a", 32),
    # -- floor division and modulo by constants
    _q("div/mod", "n", [], "n - n // 2"),
    _q("div/mod", "n", ["n >= 8"], "(n + 1) // 2"),
    _q("div/mod", "n", ["n // 100 == 30"], "n", 3200),
    _q("div/mod", "n", ["n // 4 <= 4"], "n"),
    _q("div/mod", "n", ["3*n // 2 <= 12"], "n"),
    _q("div/mod", "n", ["(n + 1) // 2 >= 2"], "n"),
    _q("div/mod", "n", ["n // 2 == 3"], "n"),
    _q("div/mod", "n", ["n <= 50"], "n % 7", 60),
    _q("div/mod", "n", [], "n % 4"),
    _q("div/mod", "n", [], "n - 2*(n // 2)"),
    _q("div/mod", "n", ["n <= 64"], "n // 4 + n % 4", 70),
    _q("div/mod", "a, b", ["a <= 30", "b <= 30"], "(a + b) // 2 - a // 2", 35),
    _q("div/mod", "n", ["n % 4 == 0"], "n"),
    _q("div/mod", "n", [], "(2*n) % 4"),
    # -- Min / Max
    _q("min/max", "a, b", [], "max(a, b) - a"),
    _q("min/max", "a, b", ["a >= b + 2", "b <= 64"], "max(a, b) - a", 90),
    _q("min/max", "a", [], "min(a, 256)", 300),
    _q("min/max", "a", ["a <= 255"], "min(256, a + 1) - min(256, a)", 300),
    _q("min/max", "a", [], "max(0, min(256, a + 1) - min(256, a))", 300),
    _q("min/max", "a", ["min(a, 5) == 5"], "a"),
    _q("min/max", "a, b", ["max(a, b) <= 12"], "a + b", 20),
    _q("min/max", "a, b", [], "max(a, b) + min(a, b) - a - b"),
    _q("min/max", "a", [], "max(a - 8, 0)"),
    _q("min/max", "a, b", ["a <= 10"], "min(a, b)"),
    # -- products
    _q("products", "n", ["n*n <= 100"], "n"),
    _q("products", "a, b", ["a*b <= 28", "a >= 3"], "b"),
    _q("products", "a, b", ["a <= 8", "b <= 6"], "a*b", 20),
    _q("products", "a, b", ["a*b <= 64"], "a*b", 70),
    _q("products", "a, b", [], "a*b - a"),
    _q("products", "a, b", ["b >= 2"], "a*b - 2*a"),
    _q("products", "a, b", ["a >= 4", "b >= 5"], "a*b", 30),
    _q("products", "a, b, c", ["a <= 4", "b <= 4", "c <= 4"], "a*b*c", 12),
    _q("products", "a, b", ["a*b == 12"], "a + b", 20),
    # -- polynomials in one or two symbols
    _q("polynomials", "a", ["a <= 10"], "a*a - a"),
    _q("polynomials", "a", [], "a*a - 2*a + 1"),
    _q("polynomials", "a", [], "a*a*a - a*a"),
    _q("polynomials", "a", ["a <= 6"], "a*a*a"),
    _q("polynomials", "a, b", ["a <= 4", "b <= 4"], "a*a + b*b - 2*a*b", 12),
    _q("polynomials", "a", ["a >= 3"], "a*a - 3*a"),
    _q("polynomials", "a", [], "a*a - 5*a + 6"),
    _q("polynomials", "a, b", ["a <= b"], "b*b - a*a", 20),
    # -- differences that must cancel
    _q("differences", "a", [], "(-a) // 2"),
    _q("differences", "a", [], "a - (a + 1) // 2"),
    _q("differences", "a, b", [], "max(a, b) - b"),
    _q("differences", "a", [], "a // 2 - a"),
    _q("differences", "a", [], "(a + 3) // 4 * 4 - a"),
    _q("differences", "a", [], "-((-a) // 4) * 4 - a"),
    _q("differences", "a, b", [], "min(a, b) - a"),
    _q("differences", "a, b", [], "max(a, b) - min(a, b)"),
    _q("differences", "a, b", [], "max(a, b) - max(b, a)", 20),
    # -- equalities that must be solved
    _q("equalities", "a, b", ["b == 2*a - 1"], "b"),
    _q("equalities", "a, b", ["b == a + 3", "a <= 10"], "b"),
    _q("equalities", "a, b", ["a == b + 3", "a <= 10"], "b"),
    _q("equalities", "a, b", ["a == b + 3", "a <= 10"], "a"),
    _q("equalities", "a, b, c", ["c == a + b", "c <= 20"], "a", 25),
    _q("equalities", "a, b", ["a == 2*b"], "a % 2"),
    _q("equalities", "a, b", ["a == 2*b"], "a // 2 - b"),
    _q("equalities", "a, b", ["a == b + 3"], "a - b"),
    _q("equalities", "a, b", ["a + b == 10"], "a", 20),
    _q("equalities", "a, b", ["a*b == 12"], "a", 20),
    _q("equalities", "a, b", ["b == a*a"], "b - a", 20),
    _q("equalities", "a, b", ["max(a, b) == 4"], "a + b", 20),
    # -- comparisons decided under constraints
    _q("comparisons", "a, b", ["a >= b + 2", "b <= 64"], "a >= b", 90),
    _q("comparisons", "a, b", ["a >= b + 2", "b <= 64"], "a >= 5", 90),
    _q("comparisons", "a, b", ["a >= b + 2"], "a >= 3"),
    _q("comparisons", "a, b", ["a >= b", "b >= 16"], "a >= 16"),
    _q("comparisons", "a, b, c", ["a <= b", "b <= c"], "a <= c", 20),
    _q("comparisons", "a, b", ["max(a, b) <= 12"], "a <= 12", 20),
    _q("comparisons", "a, b", ["a*b <= 64", "a >= 8"], "b <= 8", 70),
    _q("comparisons", "a, b", [], "max(a, b) >= a"),
    _q("comparisons", "a, b", [], "a*b >= a"),
    _q("comparisons", "n", [], "n // 2 * 2 <= n"),
    _q("comparisons", "a", [], "a*a >= a"),
    _q("comparisons", "a, b", ["b == a + 3"], "b >= 4"),
    _q("comparisons", "n", ["n // 4 <= 4"], "n < 20"),
    _q("comparisons", "a, b", ["a + b <= 10"], "a > 9"),
]


# ------------------------------------------------------------------------ exact answers
def _points(q: Query, window: int):
    k = len([n for n in q.names.split(",") if n.strip()])
    window = window if k == 1 else min(window, 120 if k == 2 else 35)
    preds = [compile(_py(c), "<c>", "eval") for c in q.constraints]
    body = compile(q.text, "<q>", "eval")
    names = [n.strip() for n in q.names.split(",")]
    for p in itertools.product(range(1, window + 1), repeat=k):
        env = dict(zip(names, p))
        if all(eval(c, {}, env) for c in preds):
            yield eval(body, {}, env)


def _py(c: str) -> str:
    return c


def exact(q: Query):
    """The exact answer by brute force: ``(lo, hi)`` (``None`` for an infinite end) for a
    size, True / False / None (not decided by the constraints) for a comparison."""
    if q.is_comparison:
        seen = set(_points(q, q.window))
        return True if seen == {True} else False if seen == {False} else None
    v1 = list(_points(q, q.window))
    v2 = list(_points(q, 2 * q.window))
    lo = None if min(v2) < min(v1) else min(v1)
    hi = None if max(v2) > max(v1) else max(v1)
    return lo, hi


def wrong(q: Query, answer) -> bool:
    """Whether an engine's answer is contradicted by a feasible point of the window."""
    if answer == "error":
        return False
    if q.is_comparison:
        if answer is None:
            return False
        return any(v is not answer for v in _points(q, q.window))
    lo, hi = answer
    vals = list(_points(q, q.window))
    return (lo is not None and min(vals) < lo) or (hi is not None and max(vals) > hi)


# ------------------------------------------------------------------------------ engines
def ask_symshape(q: Query):
    """symshape's answer: ``(lo, hi)`` with None for an infinite end, or a decision."""
    import symshape as ss
    from symshape.algebra.infinity import is_inf
    syms = ss.symbolic_shape(q.names, constraints=q.constraints)
    env = dict(zip([n.strip() for n in q.names.split(",")], syms))
    env.update(max=ss.sym_max, min=ss.sym_min)
    if q.is_comparison:
        try:
            return bool(eval(q.text, {}, env))
        except ss.UserError:
            return None
    lo, hi = ss.bounds(eval(q.text, {}, env))
    return (None if is_inf(lo) else lo), (None if is_inf(hi) else hi)


def time_symshape(q: Query, repeat: int) -> float:
    """Median seconds of one cold ``ss.bounds`` (or comparison) of the query."""
    import symshape as ss
    times = []
    code = compile(q.text, "<query>", "eval")
    for _ in range(repeat):
        syms = ss.symbolic_shape(q.names, constraints=q.constraints)
        env = dict(zip([n.strip() for n in q.names.split(",")], syms))
        env.update(max=ss.sym_max, min=ss.sym_min)
        if q.is_comparison:
            t = time.perf_counter()
            try:
                eval(code, {}, env)
            except ss.UserError:
                pass
        else:
            e = eval(code, {}, env)
            t = time.perf_counter()
            ss.bounds(e)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def ask_jax(q: Query):
    """JAX's answer, live: ``(lo, hi)`` / a decision / ``"error"`` (constraints refused)."""
    import math
    from jax import export
    from jax._src import core
    from jax._src.export import shape_poly, shape_poly_decision
    try:
        syms = export.symbolic_shape(q.names, constraints=[_jax_text(c)
                                                           for c in q.constraints])
    except Exception:
        return "error"
    env = dict(zip([n.strip() for n in q.names.split(",")], syms))
    env.update(max=core.max_dim, min=core.min_dim)
    if q.is_comparison:
        try:
            return bool(eval(q.text, {}, env))
        except core.InconclusiveDimensionOperation:
            return None
    e = eval(q.text, {}, env)
    lo, hi = shape_poly_decision.bounds_decision(e, shape_poly.BoundsPrecision.BEST)
    return (None if math.isinf(lo) else int(lo)), (None if math.isinf(hi) else int(hi))


def _jax_text(constraint: str) -> str:
    """A constraint in JAX's spelling: ``floordiv(e, k)`` / ``mod(e, k)`` for ``//`` / ``%``."""
    import ast

    class Spell(ast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            name = {ast.FloorDiv: "floordiv", ast.Mod: "mod"}.get(type(node.op))
            if name is None:
                return node
            return ast.Call(ast.Name(name, ast.Load()), [node.left, node.right], [])

    return ast.unparse(Spell().visit(ast.parse(constraint, mode="eval")))


def load_jax_answers() -> Dict[str, object]:
    """The recorded JAX answers, by query key (lists become tuples)."""
    with open(ANSWERS) as f:
        data = json.load(f)
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data["answers"].items()}


# ------------------------------------------------------------------------- comparison
def compare_bounds(ours, theirs) -> Tuple[int, int]:
    """Per side (lower, upper): +1 when ours is tighter, 0 equal, -1 looser."""
    def side(a, b, sign):
        if a == b:
            return 0
        if a is None:
            return -1
        if b is None:
            return 1
        return 1 if (a - b) * sign > 0 else -1
    return side(ours[0], theirs[0], 1), side(ours[1], theirs[1], -1)


def compare_decision(ours, theirs) -> int:
    """+1 when only ours decides, 0 when both say the same, -1 when only theirs does."""
    if ours == theirs:
        return 0
    if theirs is None or theirs == "error":
        return 1
    return -1 if ours is None else 0


def record() -> None:
    """Ask JAX every query and rewrite ``bounds_jax_answers.json`` (needs only jax)."""
    import jax
    answers = {q.key: ask_jax(q) for q in CORPUS}
    with open(ANSWERS, "w") as f:
        json.dump({"jax_version": jax.__version__,
                   "note": "JAX's answer per query of benchmarks/bounds_vs_jax.py: [lo, hi] "
                           "(null = infinite end), a decision (true / false / null = "
                           "inconclusive) or \"error\" (constraints refused)",
                   "answers": {k: list(v) if isinstance(v, tuple) else v
                               for k, v in answers.items()}}, f, indent=1)
        f.write("\n")
    print("recorded %d answers of jax %s in %s" % (len(answers), jax.__version__, ANSWERS))


def jax_answers() -> Tuple[Dict[str, object], str]:
    """JAX's answers: asked live when jax is importable, else the recorded ones."""
    try:
        import jax
    except ImportError:
        return load_jax_answers(), "recorded in %s" % os.path.basename(ANSWERS)
    return {q.key: ask_jax(q) for q in CORPUS}, "live, jax %s" % jax.__version__


def run(repeat: int) -> int:
    """Print the query table and the per-class summary; 1 when symshape is ever wrong or
    looser than JAX."""
    jax_answers_, origin = jax_answers()
    print("JAX answers: %s" % origin)
    classes: Dict[str, Dict[str, List[int]]] = {}
    times: Dict[str, List[float]] = {}
    bounds_times: List[float] = []             # per query, in corpus order
    total_wrong = [0, 0]
    for q in CORPUS:
        ours = ask_symshape(q)
        theirs = jax_answers_.get(q.key, "missing")
        truth = exact(q)
        w_ours, w_theirs = wrong(q, ours), (theirs not in ("missing", "error")
                                            and wrong(q, theirs))
        total_wrong[0] += w_ours
        total_wrong[1] += w_theirs
        row = classes.setdefault(q.cls, {"lo": [0, 0, 0], "hi": [0, 0, 0], "cmp": [0, 0, 0],
                                         "wrong": [0, 0], "exact": [0, 0], "n": [0]})
        row["n"][0] += 1
        row["wrong"][0] += w_ours
        row["wrong"][1] += w_theirs
        if theirs in ("missing", "error"):
            theirs = None if q.is_comparison else (None, None)
        if q.is_comparison:
            row["cmp"][1 - compare_decision(ours, theirs)] += 1
        else:
            lo, hi = compare_bounds(ours, theirs)
            row["lo"][1 - lo] += 1
            row["hi"][1 - hi] += 1
        row["exact"][0] += ours == truth
        row["exact"][1] += theirs == truth
        times.setdefault(q.cls, []).append(time_symshape(q, repeat))
        bounds_times.append(times[q.cls][-1])
        flag = "WRONG" if w_ours else ("" if ours == truth else "not exact")
        print("%-12s %-48s ss %-12s jax %-12s exact %-12s %6.3f ms %s" % (
            q.cls, (("%s | " % "; ".join(q.constraints)) if q.constraints else "")
            + q.text, _show(ours), _show(jax_answers_.get(q.key, "missing")), _show(truth),
            times[q.cls][-1] * 1e3, flag))
    print()
    print("per class: symshape vs JAX, tighter / equal / looser on each side (lower bound, "
          "upper bound, decided comparison); wrong answers of each; answers equal to the "
          "exact one; ss.bounds time (cold, median of %d)" % repeat)
    print("%-12s %3s  %-9s %-9s %-9s %-11s %-11s %s" % (
        "class", "n", "lo t/e/l", "hi t/e/l", "cmp t/e/l", "wrong ss/jx", "exact ss/jx",
        "avg / worst ms"))
    all_t = []
    for cls, row in classes.items():
        ts = times[cls]
        all_t += ts
        print("%-12s %3d  %-9s %-9s %-9s %-11s %-11s %.3f / %.3f" % (
            cls, row["n"][0], "/".join(map(str, row["lo"])), "/".join(map(str, row["hi"])),
            "/".join(map(str, row["cmp"])), "%d/%d" % tuple(row["wrong"]),
            "%d/%d" % tuple(row["exact"]), statistics.mean(ts) * 1e3, max(ts) * 1e3))
    looser = sum(r["lo"][2] + r["hi"][2] + r["cmp"][2] for r in classes.values())
    tighter = sum(r["lo"][0] + r["hi"][0] + r["cmp"][0] for r in classes.values())
    print()
    print("%d queries: symshape wrong %d, JAX wrong %d; symshape tighter on %d sides, looser "
          "on %d" % (len(CORPUS), total_wrong[0], total_wrong[1], tighter, looser))
    print("ss query time (cold): average %.3f ms, worst %.3f ms" % (
        statistics.mean(all_t) * 1e3, max(all_t) * 1e3))
    only = [t for q, t in zip(CORPUS, bounds_times) if not q.is_comparison]
    print("ss.bounds alone (%d queries, cold): average %.3f ms, worst %.3f ms" % (
        len(only), statistics.mean(only) * 1e3, max(only) * 1e3))
    return 1 if total_wrong[0] or looser else 0


def _show(a) -> str:
    if isinstance(a, tuple):
        return "[%s, %s]" % tuple("-oo" if v is None and i == 0 else "oo" if v is None else v
                                  for i, v in enumerate(a))
    return "inconclusive" if a is None else str(a)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--record", action="store_true",
                    help="ask jax (must be importable) and rewrite bounds_jax_answers.json")
    args = ap.parse_args()
    if args.record:
        record()
    else:
        sys.exit(run(args.repeat))
