"""Per-call cost of ``ss.compile``'s guards on a model with state (issue 29), side by side.

    python benchmarks/guard_overhead.py [--rounds 7] [--calls 2000]

The model holds 50 state arrays in nested objects (``model.layers[j].blocks[k].w`` / ``.b``,
5 layers of 5 blocks) and its forward pass reads 10 Python scalars (``layer.scale``,
``layer.eps``); every array is tiny (4 elements), so a call costs its overhead, not its
arithmetic.  Measured, as the median over rounds of the median per-call time of batches:

* ``eager``: ``model.forward(x)`` in Python;
* ``ss.compile``: ``ss.compile(model.forward)(x)``: the dispatcher (the guards of the
  variant as straight-line Python, then the compiled code);
* ``compiled code alone``: the model variant's compiled body called directly (no guards,
  no dispatch), where its parameters are the function's own (no sizes bound by guards);
* ``bare compiled``: ``ss.compile`` of a function of one array and no state (``x * 2 + 1``):
  the dispatcher's floor; and ``bare eager``, the same function in Python.

Printed: microseconds per call, the guard count and dispatcher lines of the model's
variant, the ratios model compiled / model eager and model compiled / bare compiled, and
the guard + dispatch cost (compiled call minus compiled code alone).
BLAS runs on one thread (set before NumPy loads), as in the other benchmarks.
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

LAYERS, BLOCKS, N = 5, 5, 4


class Block:
    """Two state arrays."""

    def __init__(self, i: int) -> None:
        self.w = np.full(N, 1.0 + i * 1e-3)
        self.b = np.full(N, 1e-2 * i)


class Model:
    """50 state arrays (5 layers x 5 blocks x w, b) and 10 Python scalars."""

    def __init__(self) -> None:
        self.layers = [types.SimpleNamespace(
            blocks=[Block(BLOCKS * j + k) for k in range(BLOCKS)],
            scale=1.0 + 0.1 * j, eps=1e-3 * (j + 1)) for j in range(LAYERS)]

    def forward(self, x):
        for layer in self.layers:
            for blk in layer.blocks:
                x = x * blk.w + blk.b
            x = x * layer.scale + layer.eps
        return x


def bare(x):
    return x * 2 + 1


def _per_call(fn, x, n: int) -> float:
    """Median microseconds per call over 9 batches of ``n`` calls."""
    out = []
    for _ in range(9):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(x)
        out.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(out)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=2000)
    a = p.parse_args()
    import symshape as ss
    model = Model()
    x = np.linspace(-1, 1, N)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jit_model, jit_bare = ss.compile(model.forward), ss.compile(bare)
        np.testing.assert_allclose(jit_model(x), model.forward(x), rtol=1e-12)
        np.testing.assert_allclose(jit_bare(x), bare(x))
    fns = {"eager": model.forward, "ss.compile": jit_model,
           "bare eager": bare, "bare compiled": jit_bare}
    v = jit_model.variants[-1]
    cp = v.compiled
    if cp.param_names == ["x"] and not cp.sym_names:
        fns["compiled code alone"] = cp.core
    times = {k: [] for k in fns}
    for r in range(a.rounds):
        for name, fn in (list(fns.items()) if r % 2 == 0 else list(fns.items())[::-1]):
            times[name].append(_per_call(fn, x, a.calls))
    us = {k: statistics.median(v) for k, v in times.items()}
    body = [ln for ln in jit_model.dispatch_source.splitlines() if ln.strip()]
    print("model: %d state arrays in nested objects, %d Python scalars read, arrays of %d "
          "elements; BLAS threads: 1" % (2 * LAYERS * BLOCKS, 2 * LAYERS, N))
    print("variants: %d, mode: %s, guards of the variant: %d, dispatcher lines: %d"
          % (len(jit_model.variants), jit_model.mode, len(v.guards), len(body)))
    print("median over %d rounds, us per call" % a.rounds)
    print("%-16s %10s %10s %10s %10s" % ("", "eager", "compiled", "ratio", "vs bare"))
    print("%-16s %10.2f %10.2f %10.3f %10.2f" % (
        "model", us["eager"], us["ss.compile"], us["ss.compile"] / us["eager"],
        us["ss.compile"] / us["bare compiled"]))
    print("%-16s %10.2f %10.2f %10.3f %10.2f" % (
        "bare x*2+1", us["bare eager"], us["bare compiled"],
        us["bare compiled"] / us["bare eager"], 1.0))
    if "compiled code alone" in us:
        print("compiled code alone: %.2f us; guard + dispatch: %.2f us per call (%.1f%% of "
              "the compiled call)" % (us["compiled code alone"],
                                      us["ss.compile"] - us["compiled code alone"],
                                      100 * (1 - us["compiled code alone"] / us["ss.compile"])))
    else:
        print("compiled code alone: n/a (its parameters are not the function's own: %s)"
              % ", ".join(cp.param_names + cp.sym_names))


if __name__ == "__main__":
    main()
