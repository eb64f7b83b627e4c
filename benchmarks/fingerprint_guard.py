"""Per-call cost of the conservative fingerprint guard (capture/state/guardkinds.py).

Class attributes read on the class (``Net.scale``, ``type(self).eps``) and module
attributes (``cfg.SCALE``) are reads the recorder cannot see, so an exported or compiled
program guards the attributes its code loads from every class and module the trace
touched.  This measures that guard on a model of 25 layer objects of 3 user classes (each
with a few class-level hyperparameters) and one config module with 20 settings: the
compiled model's time per call with the fingerprint guards and with them removed, side by
side in one run, and the straight-line state check alone both ways.  Tiny arrays, so the
time is the per-call overhead; BLAS pinned to one thread.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/fingerprint_guard.py
"""
import os
import sys
import tempfile
import time
import warnings

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

import symshape as ss  # noqa: E402

_DIR = tempfile.mkdtemp()
with open(os.path.join(_DIR, "ss_bench_cfg.py"), "w") as _f:
    _f.write("".join("S%d = %d.0\n" % (i, i) for i in range(20)))
sys.path.insert(0, _DIR)
import ss_bench_cfg as cfg  # noqa: E402


class Base:
    eps = 1e-3
    gain = 1.0


class Dense(Base):
    scale = 0.5

    def __init__(self, i):
        self.w = np.full(4, 1.0 + i * 1e-3)

    def __call__(self, x):
        return x * self.w * Dense.scale + type(self).eps


class Norm(Base):
    def __init__(self):
        self.g = np.ones(4)

    def __call__(self, x):
        return x * self.g * Norm.gain + cfg.S3


class Net:
    def __init__(self):
        self.layers = [Dense(i) if i % 2 else Norm() for i in range(25)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x + cfg.S7


def side_by_side(f, g, *args, n=300, rounds=15):
    """Microseconds per call of ``f`` and of ``g``: the best of ``rounds`` short runs,
    alternating, so both see the same load on a shared machine."""
    f(*args)
    g(*args)
    best = [float("inf"), float("inf")]
    for _ in range(rounds):
        for i, h in enumerate((f, g)):
            t = time.perf_counter()
            for _ in range(n):
                h(*args)
            best[i] = min(best[i], (time.perf_counter() - t) / n * 1e6)
    return best


def without_fingerprints(sp) -> None:
    sp.guards = [g for g in sp.guards if g.kind != "fingerprint"]
    sp.__dict__.pop("_fast", None)        # the straight-line check, rebuilt on next use


def main() -> None:
    x = np.ones(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with_fp, without = ss.compile(Net()), ss.compile(Net())
        with_fp(x)
        without(x)
    sp_with = with_fp.variants[0].program.state_program
    sp_without = without.variants[0].program.state_program
    n_fp = sum(g.kind == "fingerprint" for g in sp_with.guards)
    names = sum(len(g.value[0]) for g in sp_with.guards if g.kind == "fingerprint")
    without_fingerprints(sp_without)
    assert not any(g.kind == "fingerprint" for g in sp_without.guards)
    rows = [("compiled model, fingerprint guards",) + tuple(side_by_side(with_fp, without, x)),
            ("state check, fingerprint guards",) + tuple(side_by_side(sp_with.failed,
                                                                     sp_without.failed, ()))]
    print("%d fingerprint guards over %d attribute names; %d guards in all" % (
        n_fp, names, len(sp_with.guards)))
    for a, ta, tb in rows:
        print("%-36s %8.2f us   without them %8.2f us   ratio %.3f   (+%.2f us per call)" % (
            a, ta, tb, ta / tb, ta - tb))


if __name__ == "__main__":
    main()
