"""backend="onnxruntime" against eager NumPy, ep.compile(), backend="numba" and jax.jit.

    python benchmarks/onnx_speed.py [--threads N] [--quick] [--rows NAME,...]

The programs of ``benchmarks/numba_vs_jax.py`` (the same text for NumPy and jax.numpy), at
sizes a shared machine runs in a minute, each exported once with a dynamic first axis and
run, in one process, as eager NumPy, ``ep.compile()``, ``ep.compile(backend="numba")``
(when numba is importable), ``ep.compile(backend="onnxruntime")`` and ``jax.jit`` (when
JAX is importable; never a dependency).  float32; BLAS, numba, XLA, onnxruntime's
intra-op pool and symshape's own threads pinned to ``--threads`` (default 1; 0: each
library's default) through the environment before anything is imported; medians of
interleaved rounds; each column is the speedup over the eager time measured in the same
rounds (one thread: process CPU time, which other processes on a shared machine do not
inflate; more: wall time).  Results are checked against eager (1e-4 relative).
"""
import argparse
import os
import sys

if __name__ == "__main__":
    _ap = argparse.ArgumentParser()
    _ap.add_argument("--threads", type=int, default=1)
    _ap.add_argument("--quick", action="store_true")
    _ap.add_argument("--rows", default="")
    ARGS = _ap.parse_args()
    if ARGS.threads > 0:
        for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                   "NUMBA_NUM_THREADS", "SYMSHAPE_THREADS"):
            os.environ[_v] = str(ARGS.threads)
        os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=%d" % ARGS.threads)

import importlib.util  # noqa: E402
import inspect  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numba_vs_jax as P  # noqa: E402  (the programs, one text for numpy and jax.numpy)

import symshape as ss  # noqa: E402
from symshape import Dim  # noqa: E402
from symshape.codegen.onnx.session import make_session  # noqa: E402

ROWS = [
    ("MLP 4096x256-1024-256", P.mlp_mul, lambda: P._mlp_args(4096)),
    ("LN+GELU 8192x256", P.ln_gelu_mul,
     lambda: (P.f32(8192, 256), P.f32(256) * 0.1 + 1, P.f32(256) * 0.1)),
    ("row softmax 2048x1024", P.softmax, lambda: (P.f32(2048, 1024),)),
    ("5-op chain 8192x256", P.chain5, lambda: (P.f32(8192, 256),)),
    ("GPT-2 2 blocks seq 128", P.gpt2, lambda: (P.f32(128, 128),) + tuple(P.gpt2_weights())),
    ("small chain 4x256", P.chain5, lambda: (P.f32(4, 256),)),
]


def _export(prog, args):
    names = ["x"] + ["w%d" % i for i in range(len(args) - 1)]

    def f(*a, _p=prog):
        return _p(np, *a)
    f.__signature__ = inspect.Signature([inspect.Parameter(n, 1) for n in names])
    n = Dim("n", max=256) if prog is P.gpt2 else Dim("n")
    spec = dict(zip(names, [(n,) + (None,) * (args[0].ndim - 1)] + [None] * (len(args) - 1)))
    return ss.export(f, args, dynamic_shapes=spec)


def _columns(ep, prog, args, threads):
    cols = [("eager", lambda *a: prog(np, *a)), ("ep.compile()", ep.compile())]
    if importlib.util.find_spec("numba") is not None:
        cols.append(("numba", ep.compile(backend="numba")))
    ort = ep.compile(backend="onnxruntime")
    if threads != 1:        # the backend's session uses symshape's threads; this, ORT's
        sess = make_session(ort.model, threads if threads > 0 else 0)
        ort.compiled.ns["_S"] = sess
    cols.append(("onnxruntime", ort))
    try:
        import jax
        import jax.numpy as jnp
        jf = jax.jit(lambda *a: prog(jnp, *a))
        cols.append(("jax.jit", lambda *a: jf(*a).block_until_ready()))
    except ImportError:
        pass
    return cols


def run(quick: bool, only, threads: int):
    """Measure every row and print the table."""
    print("threads: %s; onnxruntime %s, numpy %s" % (
        threads or "library defaults", __import__("onnxruntime").__version__, np.__version__))
    rows, head = [], None
    for name, prog, make in ROWS:
        if only and not any(o in name for o in only):
            continue
        args = make()
        ep = _export(prog, args)
        cols = _columns(ep, prog, args, threads)
        want = np.asarray(prog(np, *args), np.float64)
        for label, fn in cols[1:]:
            P._close(np.asarray(fn(*args)), want, 1e-4)
        t0 = time.perf_counter()
        prog(np, *args)
        calls = max(1, int(0.05 / max(time.perf_counter() - t0, 1e-7)))
        clock = time.process_time if threads == 1 else time.perf_counter
        times = []
        for _ in range(5 if quick else 11):
            one = []
            for _, fn in cols:
                t0 = clock()
                for _ in range(calls):
                    fn(*args)
                one.append((clock() - t0) / calls)
            times.append(one)
        med = [statistics.median(t[i] for t in times) for i in range(len(cols))]
        if head is None:
            head = "| program | " + " | ".join(c for c, _ in cols) + " |"
            rows += [head, "|---|" + "---|" * len(cols)]
        rows.append("| %s | 1x (%.3g ms) | %s |" % (
            name, med[0] * 1e3, " | ".join("%.2fx" % (med[0] / m) for m in med[1:])))
        print(rows[-1], flush=True)
    print()
    print("\n".join(rows))


if __name__ == "__main__":
    run(ARGS.quick, [r for r in ARGS.rows.split(",") if r], ARGS.threads)
