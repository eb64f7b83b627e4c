"""The NumPy backend on a quiet and on a busy machine: ``ep.compile()`` against eager NumPy.

    python benchmarks/busy_machine.py [--load N] [--rounds R] [--quick]

``--load N`` starts N busy-loop processes (default: one per CPU this process may use) for
the second half of the run, so the same programs are timed on the machine as it is and then
with every core taken.  Each timing is the median over rounds of the per-round ratio eager /
compiled (eager and compiled interleaved in each round), wall time, BLAS on one thread, and
in brackets the ratio of the best batches (robust to other processes taking the CPU now
and then: what the code costs when it runs).
Programs: the small elementwise chain (4x256), tanh-GELU with ``x**3`` (a costly group that
the backend may split across two threads), a row softmax, and a 5-op chain at 40000x256.
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import symshape as ss  # noqa: E402
from symshape import Dim  # noqa: E402
from symshape.codegen import rt  # noqa: E402

RNG = np.random.default_rng(0)


def chain(x):
    y = (x - x.mean(axis=-1, keepdims=True)) * 0.5 + 0.1
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def gelu_pow(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def five(x):
    return (((x + 1.0) * 0.5 - 0.25) * x) / 3.0


def cases(quick: bool):
    big = 8000 if quick else 40000
    return [("chain 4x256", chain, (4, 256)),
            ("gelu x**3 %dx256" % (big // 4), gelu_pow, (big // 4, 256)),
            ("softmax 2048x1024", softmax, (2048, 1024)),
            ("5-op chain %dx256" % big, five, (big, 256))]


def _spin(stop):
    x = 0
    while not stop.is_set():
        for _ in range(10000):
            x += 1


def ratio(f, c, x, rounds: int) -> float:
    def per(fn):
        if fn not in per.last:                  # one call sizes the batches
            t0 = time.perf_counter()
            fn(x)
            per.last[fn] = time.perf_counter() - t0
        n = max(1, int(2e-2 / max(per.last[fn], 1e-7)))
        t0 = time.perf_counter()
        for _ in range(n):
            fn(x)
        dt = (time.perf_counter() - t0) / n
        per.last[fn] = dt
        return dt
    per.last = {}
    per(f), per(c)
    rs, fs, cs = [], [], []
    for _ in range(rounds):
        fs.append(per(f))
        cs.append(per(c))
        rs.append(fs[-1] / cs[-1])
    return statistics.median(rs), min(fs) / min(cs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    cpus = getattr(rt, "CPUS", None) or rt._cpus()
    load = cpus if a.load is None else a.load
    progs = []
    for name, f, shape in cases(a.quick):
        x = RNG.standard_normal(shape).astype(np.float32)
        c = ss.export(f, (x[:4],), dynamic_shapes={"x": (Dim("n"), None)}).compile()
        assert np.array_equal(c(x), f(x))
        progs.append((name, f, c, x))
    print("CPUs this process may use: %d; threads: %d" % (cpus, rt.THREADS))
    print("%-24s %18s %18s" % ("program", "quiet", "busy (%d spin)" % load))
    quiet = [ratio(f, c, x, a.rounds) for _, f, c, x in progs]
    stop = multiprocessing.Event()
    procs = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(load)]
    for p in procs:
        p.start()
    try:
        time.sleep(0.2)
        busy = [ratio(f, c, x, a.rounds) for _, f, c, x in progs]
    finally:
        stop.set()
        for p in procs:
            p.join()
    for (name, *_), q, b in zip(progs, quiet, busy):
        print("%-24s %8.2fx [%5.2fx] %8.2fx [%5.2fx]" % (name, q[0], q[1], b[0], b[1]))


if __name__ == "__main__":
    main()
