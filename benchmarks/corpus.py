"""The model corpus (tests/corpus): export time, and per call eager NumPy vs ``ep.module()``
vs ``ep.compile()`` at a realistic size, medians of interleaved runs, BLAS on one thread.

    python benchmarks/corpus.py            # every program
    python benchmarks/corpus.py --quick    # fewer rounds
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"          # before NumPy loads BLAS: ratios stable on a shared machine

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import symshape as ss  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from corpus.registry import PROGRAMS  # noqa: E402


def _per_call(fn, args, reps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    return (time.perf_counter() - t0) / reps


def measure(prog, rounds: int):
    t0 = time.perf_counter()
    ep = ss.export(prog.fn, prog.make(**prog.export_at), dynamic_shapes=prog.spec)
    export_s = time.perf_counter() - t0
    runners = {"eager": prog.fn, "module": ep.module(), "compile": ep.compile()}
    args = prog.make(**prog.bench_at)
    for fn in runners.values():            # warm caches, buffers and the compiled code
        fn(*args)
    t = _per_call(prog.fn, args, 1)
    reps = max(1, min(200, int(0.02 / max(t, 1e-7))))
    times = {k: [] for k in runners}
    for _ in range(rounds):                 # interleaved: drift hits every runner alike
        for k, fn in runners.items():
            times[k].append(_per_call(fn, args, reps))
    med = {k: statistics.median(v) for k, v in times.items()}
    return export_s, med


def main(argv) -> None:
    rounds = 5 if "--quick" in argv else 15
    print("%-38s %9s %11s %9s %9s" % ("program (size)", "export s", "eager ms",
                                       "module x", "compile x"))
    for prog in PROGRAMS:
        export_s, med = measure(prog, rounds)
        size = ",".join("%s=%d" % kv for kv in prog.bench_at.items())
        print("%-38s %9.2f %11.3f %9.2f %9.2f" % (
            "%s (%s)" % (prog.name[:24], size), export_s, med["eager"] * 1e3,
            med["eager"] / med["module"], med["eager"] / med["compile"]))
    print("\nmodule x / compile x: eager time divided by that runner's time (above 1: faster)")


if __name__ == "__main__":
    main(sys.argv[1:])
