"""Per-call cost of the generated input check, this checkout against another, interleaved.

    python benchmarks/check_overhead.py --baseline PYTHON [--rounds 9]

PYTHON is the interpreter of another checkout's environment (one where ``import symshape``
is that checkout).  Each round runs the measurement once under each interpreter, in
alternating order; each measurement is the median per-call time of many calls on tiny
inputs (4 arrays of shape (4, 3), one dynamic axis, a residual guard) of

* ``ep.module()``: the checked Python module (the check's ``_rt`` protocol, raising),
* ``ep.compile()``: the NumPy backend's checked function,
* ``ss.compile(f)``: the JIT's dispatcher (the variant's check rendered with ``break``),
* a JIT miss that is refused (``freeze()``), whose reason comes from the check records
  evaluated through the returning protocol (the cold path, for reference).

Printed: the median over rounds for each checkout and the ratio this / baseline.
BLAS runs on one thread.  ``--measure`` runs one measurement and prints JSON.
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def f(a, b, c, d):
    return (a + b) * c - d[: a.shape[0]]


def _per_call(fn, args, n: int) -> float:
    """Median microseconds per call over 15 batches of ``n`` calls."""
    out = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        out.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(out)


def measure() -> dict:
    import symshape as ss
    A = ss.Dim.AUTO
    x = np.ones((4, 3))
    args = (x, x, x, np.ones((6, 3)))
    ep = ss.export(f, args, dynamic_shapes={"a": (A, None), "b": (A, None),
                                            "c": (A, None), "d": (A, None)})
    mod, comp = ep.module(), ep.compile()
    jit = ss.compile(f)
    jit(*args)
    frozen = ss.compile(f)
    frozen(*args)
    frozen.freeze()
    bad = (np.ones((4, 3), np.float32), x, x, np.ones((6, 3)))

    def refused(*a):
        try:
            frozen(*a)
        except ss.UserError:
            pass

    return {"ep.module()": _per_call(mod, args, 2000),
            "ep.compile()": _per_call(comp, args, 2000),
            "ss.compile dispatch": _per_call(jit, args, 2000),
            "refused miss (reason)": _per_call(refused, bad, 200)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--baseline", help="python of the checkout to compare against")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--measure", action="store_true")
    a = p.parse_args()
    if a.measure:
        print(json.dumps(measure()))
        return
    runs = {"this": [], "baseline": []}
    who = [("this", sys.executable), ("baseline", a.baseline)]
    for r in range(a.rounds):
        for name, py in (who if r % 2 == 0 else who[::-1]):
            out = subprocess.run([py, __file__, "--measure"], capture_output=True, text=True,
                                 check=True, cwd="/")
            runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("median over %d interleaved rounds, us per call (tiny inputs)" % a.rounds)
    print("%-24s %10s %10s %8s" % ("", "baseline", "this", "ratio"))
    for key in runs["this"][0]:
        base = statistics.median(m[key] for m in runs["baseline"])
        this = statistics.median(m[key] for m in runs["this"])
        print("%-24s %10.2f %10.2f %8.3f" % (key, base, this, this / base))


if __name__ == "__main__":
    main()
