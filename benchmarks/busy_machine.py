"""The NumPy backend on a quiet and on a busy machine: ``ep.compile()`` against eager NumPy
on the real-model corpus, with a background load this benchmark starts and stops itself.

    python benchmarks/busy_machine.py [--load N] [--reps R] [--rounds N] [--quick] [--only NAME]

Programs: those of ``benchmarks/real_models.py`` (GPT-2 block and forward, LLaMA prefill and
decode, the CNN, the MLP with batch norm; ``--quick``: the small sizes only) and the small
elementwise chain (4x256).

Load: ``--load N`` busy-loop processes (default: one per CPU this process may use, so every
core has one), started for the *busy* phases and stopped for the *quiet* ones.  The phases
alternate ``--reps`` times (quiet, busy, quiet, busy, ...), so a change in what the rest of
the machine does shows up as spread rather than as a difference between the two columns.

In each phase every program is timed in ``--rounds`` interleaved rounds (eager, then
``ep.compile()``, each run for a few milliseconds per round), BLAS on one thread, reading
two clocks: wall time (what a caller waits for) and process CPU time (all its threads: the
work done).  A phase's ratio is the median over its rounds of eager / compiled; the table
shows the median over the phases of each kind, and the spread: the lowest and highest phase
ratio (how far a single measurement of this kind can be trusted on this machine).

The machine's own load (``/proc/loadavg``) is printed before the run and after it: other
processes add noise this benchmark cannot remove, only show.
"""
import os
import sys

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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_models  # noqa: E402


def _spin(stop) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(10000):
            x += 1


class Load:
    """``n`` busy-loop processes, started on entry and stopped on exit."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.stop = None
        self.procs = []

    def __enter__(self) -> "Load":
        self.stop = multiprocessing.Event()
        self.procs = [multiprocessing.Process(target=_spin, args=(self.stop,), daemon=True)
                      for _ in range(self.n)]
        for p in self.procs:
            p.start()
        time.sleep(0.2)             # every spinner running before the first timing
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for p in self.procs:
            p.join()
        time.sleep(0.1)


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as fh:
            return fh.read().strip()
    except OSError:
        return "n/a"


def programs(quick: bool, only):
    """(label, eager, ep.compile(), args factory) for the corpus and the small chain."""
    out = [("%s, %s" % (name, size), eager, epc, args_of)
           for name, size, eager, epc, _jit, args_of in real_models.cases(quick)]
    x = real_models.RNG.standard_normal((4, 256)).astype(np.float32)
    chain_c = ss.export(real_models.chain, (x,),
                        dynamic_shapes={"x": (Dim("rows"), None)}).compile()
    out.append(("small chain, 4x256", real_models.chain, chain_c, lambda: (x,)))
    if only:
        out = [p for p in out if only in p[0]]
    for _label, eager, epc, args_of in out:
        real_models.check(epc(*args_of()), eager(*args_of()))
    return out


def phase(progs, rounds: int, budget: float):
    """Per program: (wall ratio, CPU ratio), medians over interleaved rounds."""
    got = []
    for _label, eager, epc, args_of in progs:
        t = real_models.interleaved([eager, epc], args_of, rounds, budget)
        got.append((t.ratio[0], t.cpu_ratio[0]))
    return got


def summary(values) -> str:
    return "%5.2fx [%4.2f-%4.2f]" % (statistics.median(values), min(values), max(values))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", type=int, default=None,
                    help="busy processes in the busy phases (default: one per CPU)")
    ap.add_argument("--reps", type=int, default=3, help="quiet/busy phase pairs")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds per phase")
    ap.add_argument("--quick", action="store_true", help="the corpus at its small sizes")
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    cpus = rt.CPUS
    load = cpus if a.load is None else a.load
    budget = 0.01
    progs = programs(a.quick, a.only)
    print("CPUs this process may use: %d (NumPy backend threads: %d); busy phases: %d "
          "spinning processes; %d quiet/busy phase pairs of %d interleaved rounds; BLAS "
          "on one thread" % (cpus, rt.THREADS, load, a.reps, a.rounds))
    print("machine load before: %s" % loadavg())
    quiet = [[] for _ in progs]
    busy = [[] for _ in progs]
    t0 = time.perf_counter()
    for _ in range(a.reps):
        for i, r in enumerate(phase(progs, a.rounds, budget)):
            quiet[i].append(r)
        with Load(load):
            for i, r in enumerate(phase(progs, a.rounds, budget)):
                busy[i].append(r)
    print("machine load after:  %s (%.0f s)" % (loadavg(), time.perf_counter() - t0))
    print("eager / ep.compile(): median over phases [lowest-highest phase]")
    print("%-32s %20s %20s %20s %20s" % ("program", "quiet wall", "quiet CPU",
                                         "busy wall", "busy CPU"))
    cols = [[] for _ in range(4)]
    for (label, *_), q, b in zip(progs, quiet, busy):
        vals = [[r[0] for r in q], [r[1] for r in q], [r[0] for r in b], [r[1] for r in b]]
        for c, v in zip(cols, vals):
            c.append(statistics.median(v))
        print("%-32s %20s %20s %20s %20s" % ((label,) + tuple(summary(v) for v in vals)))
    print("%-32s %20s %20s %20s %20s" % (("geometric mean / lowest",) + tuple(
        "%5.2fx / %4.2fx" % (real_models.geomean(c), min(c)) for c in cols)))


if __name__ == "__main__":
    main()
