"""Export speed and module() overhead, measured side by side in one run.

    python benchmarks/export_speed.py [--repeat 20] [--torch-python PATH]

Prints, per model: warm export time (median of --repeat exports in one process), node,
guard and constraint counts, Z3 queries; then the per-call overhead of ep.module() against
calling the eager function on the same inputs (median of many calls).  With
``--torch-python``, the Python of a separate environment that has PyTorch (never a
dependency), ``torch_export_speed.py`` runs there and the ratio of symshape's export time
to ``torch.export``'s is printed per program.
"""
import argparse
import json
import os
import subprocess
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import symshape as ss  # noqa: E402
from symshape.capture.export import trace_program  # noqa: E402

import models as M  # noqa: E402
from medians import median_ms  # noqa: E402

CASES = [
    ("seed example 10 (Dim.AUTO)", M.seed10, M.SEED10_ARGS, M.SEED10_SPEC),
    ("2-layer MLP (dynamic batch)", M.mlp, M.MLP_ARGS, M.MLP_SPEC),
    ("transformer block (dynamic batch, seq)", M.transformer_block, M.TB_ARGS, M.TB_SPEC),
]


def call_overhead_us(fn, ref, args, n: int = 2000) -> float:
    """Median over batches of (fn - ref) per call, in microseconds."""
    per = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(n // 10):
            fn(*args)
        t1 = time.perf_counter()
        for _ in range(n // 10):
            ref(*args)
        t2 = time.perf_counter()
        per.append(((t1 - t0) - (t2 - t1)) / (n // 10))
    return statistics.median(per) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--torch-python", default="",
                    help="a Python with torch installed: also time torch.export")
    a = ap.parse_args()
    export_ms = {}
    print("%-40s %10s %6s %7s %6s %5s" % ("model", "export ms", "nodes", "guards", "ranges",
                                          "z3"))
    rows = []
    for name, f, args, spec in CASES:
        ms = median_ms(lambda: ss.export(f, args, dynamic_shapes=spec), a.repeat)
        export_ms[name] = ms
        tr = trace_program(f, args, None, spec)
        ep = tr.program
        print("%-40s %10.2f %6d %7d %6d %5d" % (name, ms, len(ep.graph.nodes),
                                                 len(tr.env.guards),
                                                 len(ep.constraints.range_constraints()),
                                                 tr.env.z3_queries))
        rows.append((name, f, args, ep))
    print()
    print("%-40s %14s %14s %14s" % ("model", "eager call us", "module() us", "module() +us"))
    for name, f, args, ep in rows:
        m = ep.module()
        eager = median_ms(lambda: [f(*args) for _ in range(100)], 9) * 10
        mod = median_ms(lambda: [m(*args) for _ in range(100)], 9) * 10
        # the overhead is the input check plus dispatch: resolvable only where the
        # program itself is cheap; for the large model compare the two totals
        over = "%14.2f" % call_overhead_us(m, f, args) if eager < 100 else "%14s" % "(totals)"
        print("%-40s %14.1f %14.1f %s" % (name, eager, mod, over))
    if a.torch_python:
        torch_vs(a.torch_python, export_ms)


def torch_vs(python: str, export_ms: dict) -> None:
    """Run torch_export_speed.py under ``python`` and print symshape's export time as a
    fraction of torch.export's, per program both files define."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([python, os.path.join(here, "torch_export_speed.py")],
                         capture_output=True, text=True, check=True).stdout
    theirs = json.loads(out.strip().splitlines()[-1])
    print()
    print("%-40s %12s %14s %10s" % ("model (torch %s)" % theirs["torch"], "symshape ms",
                                    "torch.export ms", "ratio"))
    for name, ms in export_ms.items():
        if name in theirs:
            print("%-40s %12.2f %14.1f %10s" % (name, ms, theirs[name],
                                                "1/%.0f" % (theirs[name] / ms)))


if __name__ == "__main__":
    main()
