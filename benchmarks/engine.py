"""Engine speed and scale, measured side by side in one run.

    python benchmarks/engine.py [--repeat 7]

Prints: warm export time (median) of the reference models with guard / constraint counts and
the share of time spent in Z3 and sympy; the synthetic N x k grid (a chain of N ops over k
dynamic inputs); the growth ratios the targets are stated in; and the cold wall time of
`python -c "import symshape; <export seed example 10>"`.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import symshape as ss  # noqa: E402
from symshape.reasoning import z3bridge  # noqa: E402
from symshape.capture.export import trace_program  # noqa: E402

import models as M  # noqa: E402

_z3_time = [0.0]
_implies = z3bridge.implies


def _timed_implies(*a, **k):
    t0 = time.perf_counter()
    try:
        return _implies(*a, **k)
    finally:
        _z3_time[0] += time.perf_counter() - t0


z3bridge.implies = _timed_implies


def chain(n_ops: int, k: int):
    """N elementwise / slicing ops mixing k dynamic inputs (each first use relates one)."""
    def f(*xs):
        a = xs[0]
        for i in range(n_ops):
            r = i % 4
            if r == 0:
                a = a + xs[i % k]
            elif r == 1:
                a = np.maximum(a * 1.5, 0.0)
            elif r == 2:
                a = np.where(a > 1.0, a, -a)
            else:
                a = a - a.mean(keepdims=True)
        return a
    args = tuple(np.ones(8) for _ in range(k))
    spec = (tuple((ss.Dim.AUTO,) for _ in range(k)),)     # one entry: the *xs parameter
    return f, args, spec


def measure(f, args, spec, repeat):
    ss.export(f, args, dynamic_shapes=spec)
    times, z3s = [], []
    for _ in range(repeat):
        _z3_time[0] = 0.0
        t0 = time.perf_counter()
        ss.export(f, args, dynamic_shapes=spec)
        times.append(time.perf_counter() - t0)
        z3s.append(_z3_time[0])
    tr = trace_program(f, args, None, spec)
    med = statistics.median(times)
    return med, statistics.median(z3s) / med if med else 0.0, tr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    print("%-44s %10s %7s %7s %7s %7s" % ("export", "ms", "nodes", "guards", "ranges",
                                          "z3 %"))
    for name, f, args, spec in [
            ("seed example 10", M.seed10, M.SEED10_ARGS, M.SEED10_SPEC),
            ("2-layer MLP", M.mlp, M.MLP_ARGS, M.MLP_SPEC),
            ("transformer block (batch, seq dynamic)", M.transformer_block, M.TB_ARGS,
             M.TB_SPEC)]:
        med, z3share, tr = measure(f, args, spec, a.repeat)
        print("%-44s %10.2f %7d %7d %7d %7.1f" % (
            name, med * 1e3, len(tr.program.graph.nodes), len(tr.env.guards),
            len(tr.program.constraints.range_constraints()), 100 * z3share))
    grid = {}
    for n in (100, 1000):
        for k in (1, 10, 100):
            f, args, spec = chain(n, k)
            med, z3share, tr = measure(f, args, spec, max(3, a.repeat // 2))
            grid[n, k] = med
            print("%-44s %10.2f %7d %7d %7d %7.1f" % (
                "chain N=%d k=%d" % (n, k), med * 1e3, len(tr.program.graph.nodes),
                len(tr.env.guards), len(tr.program.constraints.range_constraints()),
                100 * z3share))
    print()
    print("growth N=100 -> 1000 (target <= 12x): " + ", ".join(
        "k=%d: %.1fx" % (k, grid[1000, k] / grid[100, k]) for k in (1, 10, 100)))
    print("growth k=1 -> 100 (target <= 3x):     " + ", ".join(
        "N=%d: %.1fx" % (n, grid[n, 100] / grid[n, 1]) for n in (100, 1000)))
    print("sympy imported during export: %s" % ("sympy" in sys.modules))
    code = ("import numpy as np, symshape as ss\n"
            "W = np.ones((5, 3))\n"
            "def m(w, x, y, z):\n"
            "    return w @ W, (x + y).reshape(-1) + z\n"
            "A = ss.Dim.AUTO\n"
            "ss.export(m, (np.zeros((6, 5)), np.zeros(4), np.zeros((8, 4)), np.zeros(32)),\n"
            "          dynamic_shapes={'w': (A, A), 'x': (A,), 'y': (A, A), 'z': (A,)})\n")
    colds = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        colds.append(time.perf_counter() - t0)
    print("cold `python -c 'import symshape; export seed 10'`: %.3f s (median of 5; target "
          "<= 0.5 s)" % statistics.median(colds))


if __name__ == "__main__":
    main()
