"""Per-call cost of compiled segments (a function with graph breaks) against eager Python.

    .venv/bin/python benchmarks/jit_segments.py [--rounds 7]

For each program (tiny and larger arrays; one or two graph breaks: a data-dependent branch,
a ``print``), measured side by side in one run, interleaved round by round:

* eager: the plain function;
* segments: ``ss.compile`` held in its compiled-with-breaks form (the speed fallback off);
* JIT: ``ss.compile`` as shipped, which times both forms over its first calls and runs
  eagerly when the compiled form measured slower (codegen/jit_speed.py); its mode is
  printed.

Printed: the median over rounds of the median microseconds per call, and the ratios to
eager.  BLAS runs on one thread.
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import symshape as ss  # noqa: E402
from symshape.codegen import jit_speed  # noqa: E402


def branchy(x, w):
    h = np.tanh(x @ w)
    if h.sum() > 0:                     # data-dependent: a graph break
        h = h * 2.0
    return (h @ w.T).sum(axis=1)


def chatty(x, w):
    h = np.maximum(x @ w, 0.0)
    print("step")                       # a graph break (runs once per call, eagerly)
    h = h / (1.0 + np.abs(h))
    if h.mean() > 0.1:                  # a second break
        h = h - h.mean()
    return h @ w.T


def elementwise(x, w):
    y = np.exp(-x * x) * 3.0 + np.sin(x)
    if y.max() > 1.0:
        y = y / y.max()
    return np.sqrt(np.abs(y)) + np.cos(y) * 0.5 - y * y


PROGRAMS = [
    ("branch, 4x4", branchy, (4, 4)),
    ("branch, 256x256", branchy, (256, 256)),
    ("print + branch, 8x8", chatty, (8, 8)),
    ("print + branch, 256x256", chatty, (256, 256)),
    ("elementwise + branch, 16x16", elementwise, (16, 16)),
    ("elementwise + branch, 512x512", elementwise, (512, 512)),
]


def _per_call(fn, args, n: int) -> float:
    """Median microseconds per call over 9 batches of ``n`` calls."""
    out = []
    for _ in range(9):
        t = time.perf_counter()
        for _ in range(n):
            fn(*args)
        out.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(out)


def _warm(cf, args, calls: int) -> None:
    for _ in range(calls):
        cf(*args)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    opts = ap.parse_args()
    warm = 1 + jit_speed.WARMUP + 2 * jit_speed.CALLS + 2
    print("%-32s %10s %10s %7s %10s %7s  %s" % ("program", "eager us", "segments", "ratio",
                                               "JIT us", "ratio", "JIT mode"))
    with warnings.catch_warnings(), open(os.devnull, "w") as sink, \
            contextlib.redirect_stdout(sink):
        warnings.simplefilter("ignore")
        rows = []
        for name, f, (n, m) in PROGRAMS:
            rng = np.random.default_rng(0)
            args = (rng.standard_normal((n, m)), rng.standard_normal((m, m)) / m)
            saved = jit_speed.MARGIN
            jit_speed.MARGIN = float("inf")         # held compiled: never falls back
            try:
                held = ss.compile(f)
                _warm(held, args, warm)
            finally:
                jit_speed.MARGIN = saved
            shipped = ss.compile(f)
            _warm(shipped, args, warm)
            reps = max(3, int(2000 / (1 + n * m / 64)))
            times = {"eager": [], "segments": [], "jit": []}
            for _ in range(opts.rounds):
                times["eager"].append(_per_call(f, args, reps))
                times["segments"].append(_per_call(held, args, reps))
                times["jit"].append(_per_call(shipped, args, reps))
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append((name, med, shipped.mode))
    for name, med, mode in rows:
        print("%-32s %10.1f %10.1f %7.2f %10.1f %7.2f  %s" % (
            name, med["eager"], med["segments"], med["segments"] / med["eager"],
            med["jit"], med["jit"] / med["eager"], mode))


if __name__ == "__main__":
    main()
