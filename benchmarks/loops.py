"""Loops over a dynamic count (issue 41): the exported loop against the eager Python loop.

    python benchmarks/loops.py [--repeat 20] [--counts 10,100,1000]

Per program (an Elman RNN over time with its outputs stacked, a Kalman filter class over a
batch of measurements, deltas over frames, a leapfrog integrator) and trip count T, prints
the median milliseconds of the eager function, of ``ep.module()``, of ``ep.compile()``
(numpy backend) and of ``ss.compile`` (one variant for every T), and each one's ratio to
eager, side by side.  One export serves every T.  BLAS is pinned to one thread.
"""
import argparse
import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the loop programs are shared with the tests and benchmarks/loops_backends.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import symshape as ss  # noqa: E402
from loop_programs import Filter, make_elman  # noqa: E402
from medians import median_ms  # noqa: E402

RNG = np.random.default_rng(0)
W = RNG.standard_normal((16, 32)) * 0.2
U = RNG.standard_normal((32, 32)) * 0.2
elman = make_elman(W, U, last=False)


def deltas(feat):
    n = 2
    out = np.empty_like(feat)
    padded = np.pad(feat, ((n, n), (0, 0)), mode="edge")
    for t in range(len(feat)):
        out[t] = np.dot(np.arange(-n, n + 1), padded[t:t + 2 * n + 1]) / 10
    return out


def leapfrog(q, steps):
    p = np.zeros_like(q)
    for _ in range(steps.shape[0]):
        p = p - 0.05 * q
        q = q + 0.1 * p
        p = p - 0.05 * q
    return q, p


def _cases(counts):
    kf = Filter()
    cases = [
        ("Elman RNN (T x 16 -> T x 32)", elman, lambda T: (RNG.standard_normal((T, 16)),),
         {"x": {0: ss.Dim("T", min=1)}}, None),
        ("Kalman filter class over zs", kf.batch_filter,
         lambda T: (RNG.standard_normal((T, 1)),), {"zs": {0: ss.Dim("T", min=1)}}, kf),
        ("deltas over frames (T x 13)", deltas, lambda T: (RNG.standard_normal((T, 13)),),
         {"feat": {0: ss.Dim("T", min=1)}}, None),
        ("leapfrog integrator, T steps", leapfrog,
         lambda T: (RNG.standard_normal(64), np.zeros(T)),
         {"q": None, "steps": {0: ss.Dim("T", min=1)}}, None),
    ]
    return cases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--counts", default="10,100,1000")
    a = ap.parse_args()
    counts = [int(c) for c in a.counts.split(",")]
    print("%-32s %6s %10s %10s %8s %10s %8s %10s %8s" % (
        "program", "T", "eager ms", "module ms", "ratio", "compile ms", "ratio",
        "ss.compile", "ratio"))
    for name, f, make, spec, obj in _cases(counts):
        ep = ss.export(f, make(7), dynamic_shapes=spec)
        m, c = ep.module(), ep.compile()
        jit = ss.compile(f, dynamic=True)
        for T in counts:
            args = make(T)
            e = median_ms(lambda: f(*args), a.repeat)
            tm = median_ms(lambda: m(*args), a.repeat)
            tc = median_ms(lambda: c(*args), a.repeat)
            tj = median_ms(lambda: jit(*args), a.repeat)
            print("%-32s %6d %10.3f %10.3f %8.2f %10.3f %8.2f %10.3f %8.2f" % (
                name, T, e, tm, tm / e, tc, tc / e, tj, tj / e))
        print("%-32s ss.compile variants: %d" % ("", len(jit.variants)))


if __name__ == "__main__":
    main()
