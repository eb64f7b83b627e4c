"""backend="numba" and backend="numpy" against eager NumPy and jax.jit, side by side.

    python benchmarks/numba_vs_jax.py [--threads N] [--quick] [--rows NAME,...]
                                      [--blas-kernel env|native|NAME]

Every program of issue 33's table runs, in one process, as eager NumPy, ``ep.compile()``
(the NumPy backend), ``ep.compile(backend="numba")`` and, when JAX is importable, the same
program written with ``jax.numpy`` under ``jax.jit`` (JAX is never a dependency:
``pip install jax`` beside symshape to get that column).  float32; BLAS, numba, XLA and
symshape's own threads pinned to ``--threads`` (default 1) through the environment before
anything is imported; medians of interleaved rounds; each column is the speedup over the
eager time measured in the same rounds.  With one thread the clock is the process's CPU
time (``time.process_time``: every thread of the process, so XLA's and BLAS's count too),
which other processes on a shared machine do not inflate; with more, wall time.  Results
are checked against eager (1e-4 relative for numba, 1e-3 for jax).  The first-call
compile time of each backend follows the table (numba: in this process, so kernels
already on disk load from its cache; ``SYMSHAPE_NUMBA_CACHE=$(mktemp -d)``: a cold
compile).

BLAS is NumPy's OpenBLAS in every symshape column, and its kernel decides the matmul rows.
OpenBLAS picks a kernel for the CPU unless ``OPENBLAS_CORETYPE`` forces one; some machines
set that variable (one used here forces ``Haswell``, the AVX2 kernels, on an AVX-512 CPU,
which makes sgemm about twice as slow as OpenBLAS's own choice).  ``--blas-kernel env``
(the default) measures with the environment as it is, ``native`` removes the variable so
OpenBLAS detects the CPU, any other value forces that kernel; the kernel in use is printed
in the header.  XLA uses its own GEMM and is not affected.

numexpr (another compiler of array expressions on the package index; importable only,
never a dependency: ``pip install numexpr`` beside symshape for its column) gets a column
for the rows it can express, written as a numexpr user would: the elementwise chain whole,
and the elementwise parts of layer norm + GELU, softmax and the MLP (their row reductions
and matmuls stay NumPy's; float constants passed as float32 values, since numexpr computes
a float literal in float64).  It cannot express a matmul or a reduction over rows inside an
expression, so the GPT-2 row is "n/a".  Its threads are pinned with the others
(``NUMEXPR_NUM_THREADS``).
"""
import argparse
import os
import sys


def _pin(threads: int) -> None:
    n = str(threads)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "NUMBA_NUM_THREADS", "SYMSHAPE_THREADS", "NUMEXPR_NUM_THREADS",
              "NUMEXPR_MAX_THREADS"):
        os.environ[v] = n
    os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                               "intra_op_parallelism_threads=%d" % threads) if threads == 1 \
        else ""


if __name__ == "__main__":
    _ap = argparse.ArgumentParser()
    _ap.add_argument("--threads", type=int, default=1)
    _ap.add_argument("--quick", action="store_true")
    _ap.add_argument("--rows", default="")
    _ap.add_argument("--blas-kernel", default="env",
                     help="env: OPENBLAS_CORETYPE as set; native: unset (OpenBLAS detects "
                          "the CPU); NAME: force that OpenBLAS kernel")
    ARGS = _ap.parse_args()
    _pin(ARGS.threads)
    # OpenBLAS reads the variable once, when NumPy loads it: set it before the import
    if ARGS.blas_kernel == "native":
        os.environ.pop("OPENBLAS_CORETYPE", None)
    elif ARGS.blas_kernel != "env":
        os.environ["OPENBLAS_CORETYPE"] = ARGS.blas_kernel

import re  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import symshape as ss  # noqa: E402
from symshape import Dim  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
    jax.config.update("jax_platforms", "cpu")
except Exception:                       # JAX is optional: its column is left out
    jax = jnp = None

try:
    import numexpr  # noqa: E402
except Exception:                       # numexpr is optional: its column is left out
    numexpr = None

RNG = np.random.default_rng(0)


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


# --------------------------------------------------------------------------- programs
# each program takes its array module ``xp`` (numpy or jax.numpy) first: one text, two
# libraries
def chain5(xp, x):
    return xp.tanh(x * 1.5 + 0.25) * x - 0.5


def _gelu3(xp, y):
    return 0.5 * y * (1 + xp.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))


def _gelu_mul(xp, y):
    return 0.5 * y * (1 + xp.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def _ln(xp, x, g, b):
    mu = x.mean(-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(-1, keepdims=True)
    return d / xp.sqrt(var + 1e-5) * g + b


def ln_gelu_pow(xp, x, g, b):
    return _gelu3(xp, _ln(xp, x, g, b))


def ln_gelu_mul(xp, x, g, b):
    return _gelu_mul(xp, _ln(xp, x, g, b))


def softmax(xp, x):
    e = xp.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mlp_pow(xp, x, w1, b1, w2, b2):
    return _gelu3(xp, x @ w1 + b1) @ w2 + b2


def mlp_mul(xp, x, w1, b1, w2, b2):
    return _gelu_mul(xp, x @ w1 + b1) @ w2 + b2


def gpt2(xp, x, *w):
    """A GPT-2 forward in the style of the public NumPy implementations (picoGPT's
    layout): 2 pre-norm blocks of causal multi-head attention and a GELU MLP, then the
    final layer norm and the tied unembedding."""
    T = x.shape[0]
    h = x + w[0][:T]
    mask = (1 - xp.tri(T, dtype=x.dtype)) * -1e10
    for i in range(2):
        g1, b1, wqkv, bqkv, wo, bo, g2, b2, wf, bf, wp, bp = w[2 + 12 * i:14 + 12 * i]
        a = _ln(xp, h, g1, b1) @ wqkv + bqkv
        q, k, v = a[:, :128], a[:, 128:256], a[:, 256:]
        heads = []
        for j in range(4):
            s = slice(32 * j, 32 * j + 32)
            att = q[:, s] @ k[:, s].T / np.float32(np.sqrt(32)) + mask
            heads.append(softmax(xp, att) @ v[:, s])
        h = h + xp.concatenate(heads, axis=-1) @ wo + bo
        h = h + _gelu3(xp, _ln(xp, h, g2, b2) @ wf + bf) @ wp + bp
    return _ln(xp, h, w[26], w[27]) @ w[1].T


def gpt2_weights(C=128, V=512, P=256):
    w = [f32(P, C, scale=0.02), f32(V, C, scale=0.02)]
    for _ in range(2):
        w += [f32(C) * 0 + 1, f32(C) * 0, f32(C, 3 * C, scale=0.02), f32(3 * C) * 0,
              f32(C, C, scale=0.02), f32(C) * 0, f32(C) * 0 + 1, f32(C) * 0,
              f32(C, 4 * C, scale=0.02), f32(4 * C) * 0, f32(4 * C, C, scale=0.02),
              f32(C) * 0]
    return w + [f32(C) * 0 + 1, f32(C) * 0]


def _mlp_args(n):
    return (f32(n, 256), f32(256, 1024, scale=0.06), f32(1024, scale=0.1),
            f32(1024, 256, scale=0.03), f32(256, scale=0.1))


# --------------------------------------------------------------------------- numexpr
_FLOAT = re.compile(r"(?<![\w.])(\d+\.\d*(?:e-?\d+)?|\d+e-?\d+)")


def ne_eval(text: str, **values):
    """``numexpr.evaluate(text)`` over ``values``, each float literal of ``text`` passed as
    a float32 value (a literal would make numexpr compute in float64)."""
    consts = {}

    def name(m):
        consts["_c%d" % len(consts)] = np.float32(float(m.group(1)))
        return "_c%d" % (len(consts) - 1)
    return numexpr.evaluate(_FLOAT.sub(name, text), local_dict=dict(values, **consts))


_NE_GELU = "0.5 * y * (1 + tanh(0.7978845608 * (y + 0.044715 * y{cube})))"


def _ne_ln_gelu(cube):
    def run(x, g, b):
        mu = x.mean(-1, keepdims=True)
        d = x - mu
        var = (d * d).mean(-1, keepdims=True)
        y = "(d / sqrt(var + 1e-5) * g + b)"
        return ne_eval(_NE_GELU.format(cube=cube).replace("y", y), d=d, var=var, g=g, b=b)
    return run


def _ne_softmax(x):
    m = x.max(-1, keepdims=True)
    e = ne_eval("exp(x - m)", x=x, m=m)
    return ne_eval("e / s", e=e, s=e.sum(-1, keepdims=True))


def _ne_mlp(cube):
    def run(x, w1, b1, w2, b2):
        h = ne_eval(_NE_GELU.format(cube=cube).replace("y", "(h + b1)"), h=x @ w1, b1=b1)
        return h @ w2 + b2
    return run


# the rows numexpr can express (the elementwise parts, as a numexpr user writes them)
NUMEXPR = {
    "chain5": lambda x: ne_eval("tanh(x * 1.5 + 0.25) * x - 0.5", x=x),
    "ln_gelu_pow": _ne_ln_gelu(" ** 3"), "ln_gelu_mul": _ne_ln_gelu(" * y * y"),
    "softmax": _ne_softmax, "mlp_pow": _ne_mlp(" ** 3"), "mlp_mul": _ne_mlp(" * y * y"),
}

ROWS = [
    # name, program, make(quick) -> inputs, dynamic axes of the first input
    ("5-op chain 40000x256", chain5, lambda q: (f32(40000, 256),)),
    ("LN+GELU x**3 40000x256", ln_gelu_pow,
     lambda q: (f32(40000, 256), f32(256) * 0.1 + 1, f32(256) * 0.1)),
    ("LN+GELU y*y*y 40000x256", ln_gelu_mul,
     lambda q: (f32(40000, 256), f32(256) * 0.1 + 1, f32(256) * 0.1)),
    ("row softmax 8192x1024", softmax, lambda q: (f32(8192, 1024),)),
    ("MLP 8192x256-1024-256 x**3", mlp_pow, lambda q: _mlp_args(8192)),
    ("MLP 8192x256-1024-256 h*h*h", mlp_mul, lambda q: _mlp_args(8192)),
    ("GPT-2 2 blocks seq 128", gpt2, lambda q: (f32(128, 128),) + tuple(gpt2_weights())),
    ("small chain 4x256", chain5, lambda q: (f32(4, 256),)),
]


def _bind(prog, xp):
    return lambda *a: prog(xp, *a)


def _close(got, want, rtol):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want))))
    err = np.max(np.abs(got.astype(np.float64) - want) / (np.abs(want) + 1e-2 * scale))
    assert err <= rtol, "relative error %.2e" % err


def blas_kernel() -> str:
    """The kernel NumPy's OpenBLAS runs on this CPU (``openblas_get_corename``), or
    "unknown" where NumPy is linked to another BLAS."""
    import ctypes
    import glob
    libdir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for lib in glob.glob(os.path.join(libdir, "*openblas*")):
        handle = ctypes.CDLL(lib)
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            if hasattr(handle, name):
                fn = getattr(handle, name)
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return "unknown"


def run(quick: bool, only):
    print("threads: %d  (numba %s, jax %s, numexpr %s, numpy %s; OpenBLAS kernel %s, "
          "OPENBLAS_CORETYPE=%s)" % (
              ARGS.threads, _version("numba"), getattr(jax, "__version__", "not importable"),
              _version("numexpr"), np.__version__, blas_kernel(),
              os.environ.get("OPENBLAS_CORETYPE", "unset")))
    head = "| program | eager | numpy backend | numba backend | jax.jit | numba / jax | numexpr |"
    rows, compile_rows = [head, "|---|---|---|---|---|---|---|"], []
    for name, prog, make in ROWS:
        if only and not any(o in name for o in only):
            continue
        args = make(quick)
        eager = _bind(prog, np)
        # GPT-2: the sequence is at most the position table's length
        n = Dim("n", max=256) if prog is gpt2 else Dim("n")
        spec = {"x": (n,) + (None,) * (args[0].ndim - 1)}
        sig_names = ["x"] + ["w%d" % i for i in range(len(args) - 1)]

        def f(*a, _p=prog):
            return _p(np, *a)
        f.__signature__ = __import__("inspect").Signature(
            [__import__("inspect").Parameter(n, 1) for n in sig_names])
        t0 = time.perf_counter()
        ep = ss.export(f, args, dynamic_shapes=dict(zip(sig_names, [spec["x"]] + [None] * (
            len(args) - 1))))
        t_export = time.perf_counter() - t0
        t0 = time.perf_counter()
        c_np = ep.compile()
        c_np(*args)
        t_np = time.perf_counter() - t0
        t0 = time.perf_counter()
        c_nb = ep.compile(backend="numba")
        c_nb(*args)
        t_nb = time.perf_counter() - t0
        want = eager(*args).astype(np.float64)
        _close(c_nb(*args), want, 1e-4)
        fns = [eager, c_np, c_nb]
        ne_fn = NUMEXPR.get(prog.__name__) if numexpr is not None else None
        if ne_fn is not None:
            _close(ne_fn(*args), want, 1e-3)
        t_jax = None
        if jax is not None:
            jf = jax.jit(_bind(prog, jnp))
            jargs = tuple(jnp.asarray(a) for a in args)
            t0 = time.perf_counter()
            jf(*jargs).block_until_ready()
            t_jax = time.perf_counter() - t0
            _close(jf(*jargs), want, 1e-3)
            fns.append(lambda *a: jf(*a).block_until_ready())
        i_jax = 3 if jax is not None else None
        if ne_fn is not None:
            fns.append(ne_fn)
        for i, fn in enumerate(fns):  # warm-up (and numba / XLA compile) before timing
            fn(*(jargs if i == i_jax else args))
        # calls per round: about 50 ms of eager work (at least one call)
        t0 = time.perf_counter()
        eager(*args)
        calls = max(1, int(0.05 / max(time.perf_counter() - t0, 1e-7)))
        rounds = 5 if quick else 15
        clock = time.process_time if ARGS.threads == 1 else time.perf_counter
        times = []
        for _ in range(rounds):
            one = []
            for i, fn in enumerate(fns):
                a = jargs if i == i_jax else args
                t0 = clock()
                for _ in range(calls):
                    fn(*a)
                one.append((clock() - t0) / calls)
            times.append(one)
        med = [statistics.median(t[i] for t in times) for i in range(len(fns))]
        sp = [med[0] / m for m in med]
        jx = "%.2fx" % sp[3] if jax is not None else "-"
        ratio = "%.2f" % (sp[2] / sp[3]) if jax is not None else "-"
        nx = "-" if numexpr is None else "%.2fx" % sp[-1] if ne_fn is not None else "n/a"
        rows.append("| %s | 1x (%.3g ms) | %.2fx | %.2fx | %s | %s | %s |" % (
            name, med[0] * 1e3, sp[1], sp[2], jx, ratio, nx))
        compile_rows.append("| %s | %.0f | %.0f | %.0f | %s |" % (
            name, t_export * 1e3, t_np * 1e3, t_nb * 1e3,
            "%.0f" % (t_jax * 1e3) if t_jax is not None else "-"))
        print(rows[-1], flush=True)
    print()
    print("\n".join(rows))
    print()
    print("first call (ms): export, then compile + first call per backend")
    print("| program | export | numpy | numba | jax.jit |\n|---|---|---|---|---|")
    print("\n".join(compile_rows))


def _version(mod):
    try:
        return __import__(mod).__version__
    except Exception:
        return "not importable"


if __name__ == "__main__":
    run(ARGS.quick, [r for r in ARGS.rows.split(",") if r])
