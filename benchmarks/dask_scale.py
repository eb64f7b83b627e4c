"""NumPy-on-dask vs ``ss.compile(f, backend="dask")`` on the same chunked arrays.

The same NumPy function runs two ways on a dask array of 8 chunks (each larger than the
L2 cache): applied directly (NumPy dispatches every call to dask.array, which fuses the
elementwise tasks but runs each NumPy call over a whole chunk, temporaries included), and
compiled (one task per chunk runs the NumPy backend's fused, cache-blocked code).  Both
build the graph and compute it on the threaded scheduler with 2 threads, interleaved,
median of the runs; BLAS is pinned to one thread.  Task counts are those of the graph as
built and after dask's optimization (blockwise fusion).  The last row chunks the same
layer norm by columns, the axis it reduces: not chunk-local, so its reductions go through
dask.array in both versions.

    python benchmarks/dask_scale.py [--rows 16384] [--cols 512] [--chunks 8] [--repeat 7]
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import symshape as ss  # noqa: E402


def elementwise(x):
    """An elementwise-heavy program: a GELU with a soft clip and a residual."""
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    g = 0.5 * x * (1.0 + np.tanh(inner))
    clipped = np.minimum(np.maximum(g, -3.0), 3.0)
    return clipped * 0.9 + x * 0.1


GAIN = None
BIAS = None


def layer_norm(x):
    """Row-wise normalisation with a learned gain and bias (model state)."""
    mu = x.mean(axis=1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=1, keepdims=True)
    return d / np.sqrt(var + 1e-5) * GAIN + BIAS


def _tasks(arr) -> tuple:
    import dask
    built = len(arr.__dask_graph__())
    (opt,) = dask.optimize(arr)
    return built, len(opt.__dask_graph__())


def main() -> None:
    import dask.array as da
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=16384)
    p.add_argument("--cols", type=int, default=512)
    p.add_argument("--chunks", type=int, default=8)
    p.add_argument("--repeat", type=int, default=7)
    a = p.parse_args()
    global GAIN, BIAS
    rng = np.random.default_rng(0)
    GAIN = rng.standard_normal(a.cols)
    BIAS = rng.standard_normal(a.cols)
    xn = rng.standard_normal((a.rows, a.cols))
    # the input lives in memory, chunked by rows (and, for the last row, by columns)
    x = da.from_array(xn, chunks=(-(-a.rows // a.chunks), a.cols)).persist(scheduler="threads")
    xc = da.from_array(xn, chunks=(a.rows, -(-a.cols // a.chunks))).persist(scheduler="threads")
    print("x: %s float64 (%.0f MB) in %d chunks of %.1f MB; threaded scheduler, 2 threads"
          % (xn.shape, xn.nbytes / 1e6, a.chunks, xn.nbytes / a.chunks / 1e6))
    print()
    print("| program | NumPy-on-dask (ms) | compiled (ms) | ratio | tasks NumPy-on-dask "
          "(built / optimized) | tasks compiled (built / optimized) | chunk-local |")
    print("|---|---|---|---|---|---|---|")
    cases = [("elementwise", elementwise, x), ("layer_norm", layer_norm, x),
             ("layer_norm, column chunks", layer_norm, xc)]
    for label, f, x in cases:
        cf = ss.compile(f, backend="dask")
        ref = f(xn)
        got = cf(x).compute(scheduler="threads", num_workers=2)
        assert np.allclose(got, ref), label
        plan = cf.variants[0].fn.plan(x)
        local = len(plan.steps) == 1 and plan.segments and plan.segments[0].per_chunk
        ts = {"dask": [], "compiled": []}
        for _ in range(a.repeat):
            for name, fn in (("dask", f), ("compiled", cf)):
                t0 = time.perf_counter()
                fn(x).compute(scheduler="threads", num_workers=2)
                ts[name].append(time.perf_counter() - t0)
        td, tc = statistics.median(ts["dask"]), statistics.median(ts["compiled"])
        print("| %s | %.1f | %.1f | %.2fx | %d / %d | %d / %d | %s |" % (
            label, td * 1e3, tc * 1e3, td / tc, *_tasks(f(x)), *_tasks(cf(x)),
            "yes" if local else "no"))


if __name__ == "__main__":
    main()
