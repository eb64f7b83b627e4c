"""Loops over a symbolic count (issue 41) on each backend, against eager NumPy.

    python benchmarks/loops_backends.py [--quick] [--counts 10,100,1000]

Each program (a Python ``for`` over ``range(x.shape[0])`` or an integer input, exported
with ``Dim("T")``: one ``for_loop`` node) runs as eager NumPy, ``ep.compile()`` (the NumPy
backend: a Python loop over the body's generated code), ``ep.compile(backend="numba")``
(the whole loop one numba function where the body is elementwise, else a Python loop) and
``backend="onnxruntime"`` (one ONNX ``Loop``), at T = 10, 100 and 1000.  BLAS, numba and
onnxruntime pinned to one thread through the environment before anything is imported; the
clock is the process's CPU time (other processes on a shared machine do not inflate it);
medians of interleaved rounds.  Each backend column is the speedup over eager measured in
the same rounds (``x3.1``: 3.1 times faster than eager); results are checked against eager
first.  The ``numba loop`` column says whether the loop became one numba function.
"""
import argparse
import os
import statistics
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "SYMSHAPE_THREADS"):
    os.environ[_v] = "1"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the loop programs are shared with the tests and benchmarks/loops.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import symshape as ss  # noqa: E402
from loop_programs import gated, make_elman  # noqa: E402

RNG = np.random.default_rng(0)
H = 16
W = RNG.standard_normal((8, H)) * 0.2
U = RNG.standard_normal((H, H)) * 0.2
elman = make_elman(W, U)


def cumulative(x):
    acc = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        acc = acc * 0.99 + x[t]
    return acc


def written(x):
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        y[t] = np.sin(x[t]) * 0.5 + 1.0
    return y


def leapfrog(q, p, n):
    dt = 0.01
    for _ in range(n):
        p = p - 0.5 * dt * q
        q = q + dt * p
        p = p - 0.5 * dt * q
    return q, p


def _programs():
    """(name, f, export args, spec, args at count T)."""
    q, p = RNG.standard_normal(8), RNG.standard_normal(8)
    return [
        ("elman (matmul body)", elman, (RNG.standard_normal((5, 8)),),
         {"x": {0: ss.Dim("T", min=1)}}, lambda T: (RNG.standard_normal((T, 8)),)),
        ("cumulative (carried)", cumulative, (RNG.standard_normal((5, 8)),),
         {"x": {0: ss.Dim("T")}}, lambda T: (RNG.standard_normal((T, 8)),)),
        ("written y[t] = ...", written, (RNG.standard_normal((5, 8)),),
         {"x": {0: ss.Dim("T")}}, lambda T: (RNG.standard_normal((T, 8)),)),
        ("gated rnn (elementwise)", gated, (RNG.standard_normal((5, 4, 8)),),
         {"x": {0: ss.Dim("T", min=1)}}, lambda T: (RNG.standard_normal((T, 4, 8)),)),
        ("leapfrog (int count)", leapfrog, (q, p, 7),
         {"q": None, "p": None, "n": ss.Dim("n", min=0)}, lambda T: (q, p, T)),
    ]


def _cpu_ms(fn, rounds: int, inner: int) -> list:
    out = []
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(inner):
            fn()
        out.append((time.process_time() - t0) / inner * 1e3)
    return out


def _close(a, b):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(y), x, rtol=1e-6, atol=1e-9)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--counts", default="10,100,1000")
    a = ap.parse_args()
    counts = [int(c) for c in a.counts.split(",")]
    rounds = 3 if a.quick else 7
    backends = ["numpy", "numba"]
    import importlib.util
    if importlib.util.find_spec("onnxruntime") is not None:
        backends.append("onnxruntime")
    print("loops over a symbolic count: speedup over eager NumPy (CPU time, 1 thread, "
          "medians of %d rounds)" % rounds)
    head = "%-26s %6s %10s" % ("program", "T", "eager ms") + \
        "".join(" %12s" % b for b in backends) + "  numba loop"
    print(head)
    print("-" * len(head))
    for name, f, ex, spec, make in _programs():
        ep = ss.export(f, ex, dynamic_shapes=spec)
        compiled = {b: ep.compile(backend=b) for b in backends}
        one = "_L0(" in compiled["numba"].source
        for T in counts:
            args = make(T)
            want = f(*args)
            for b in backends:
                _close(want, compiled[b](*args))
            inner = max(1, 2000 // T)
            fns = [lambda: f(*args)] + [lambda c=compiled[b]: c(*args) for b in backends]
            times = [[] for _ in fns]
            for _ in range(rounds):             # interleaved: drift hits every column
                for i, fn in enumerate(fns):
                    times[i].extend(_cpu_ms(fn, 1, inner))
            med = [statistics.median(t) for t in times]
            print("%-26s %6d %10.3f" % (name, T, med[0]) +
                  "".join(" %12s" % ("x%.1f" % (med[0] / m) if m > 0 else "-")
                          for m in med[1:]) + "  %s" % ("yes" if one else "no"))


if __name__ == "__main__":
    main()
