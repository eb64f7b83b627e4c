"""Compiled code against eager NumPy, and per-call overheads, side by side in one run.

    python benchmarks/compile_speed.py [--quick]

(a) For each program, one ``ep.compile()`` (exported from a small example with dynamic
    batch axes, so one shape-polymorphic function serves both sizes) is timed against the
    eager function and ``ep.module()`` at a small and a large size.  Timings interleave
    the three callables and report the median; the large elementwise cases have at least
    10M elements.  Results are checked: bit-identical to ``ep.module()`` where the program
    has no matmul, else equal to 1e-5.
(b) Per-call overhead against calling the eager function (median of many calls, tiny
    inputs): ``ss.compile`` (automatic and ``dynamic=True``) with 4 inputs, ``ep.module()``
    and ``ep.compile()``.
Targets (the issue): >= 2x over eager on the elementwise-heavy cases at the large size,
>= 0.95x at the small size; overhead <= 3 us for a JIT-compiled 4-input function, <= 5 us
for ep.module().
"""
import argparse
import statistics
import time

import numpy as np

import symshape as ss
from symshape import Dim

A = Dim.AUTO
RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------- programs
W1, B1, W2, B2 = f32(16, 256) * 0.25, f32(256), f32(256, 16) * 0.06, f32(16)


def mlp(x):
    """Elementwise-heavy MLP: a narrow input, a wide hidden layer with bias, tanh-GELU and
    a gated residual scale, projected back."""
    h = x @ W1 + B1
    g = 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
    h = g * (1.0 / (1.0 + np.exp(-h))) + 0.1 * h
    return h @ W2 + B2


G, B = f32(1024) * 0.1 + 1.0, f32(1024) * 0.1


def ln_gelu(x):
    """Layer norm (over the last axis) followed by tanh-GELU."""
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=-1, keepdims=True)
    y = xc / np.sqrt(var + 1e-5) * G + B
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def attention(q, k, v, mask):
    """Scaled dot-product attention with a causal mask."""
    s = q @ k.transpose(0, 1, 3, 2) * np.float32(1.0 / np.sqrt(q.shape[-1]))
    s = np.where(mask, s, np.float32(-1e9))
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return p @ v


def numpy_fn(X, Y):
    """Seed example 23."""
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


def attn_inputs(b, h, t, d):
    return (f32(b, h, t, d), f32(b, h, t, d), f32(b, h, t, d), np.tril(np.ones((t, t), bool)))


CASES = [
    # name, f, example (export), spec, small inputs, large inputs, elements, exact
    ("elementwise-heavy MLP", mlp, (f32(8, 16),), {"x": (A, None)},
     lambda: (f32(32, 16),), lambda: (f32(40000, 16),), lambda a: a[0].shape[0] * 256,
     False),
    ("layer norm + GELU", ln_gelu, (f32(8, 1024),), {"x": (A, None)},
     lambda: (f32(16, 1024),), lambda: (f32(10240, 1024),), lambda a: a[0].size, True),
    ("attention block", attention, attn_inputs(2, 2, 8, 32),
     {"q": (A, A, A, None), "k": (A, A, A, None), "v": (A, A, A, None), "mask": (A, A)},
     lambda: attn_inputs(2, 2, 16, 32), lambda: attn_inputs(2, 8, 896, 32),
     lambda a: a[0].shape[0] * a[0].shape[1] * a[0].shape[2] ** 2, False),
    ("seed example 23", numpy_fn, (f32(8, 8), f32(8, 8)), {"X": (A, A), "Y": (A, A)},
     lambda: (f32(8, 8), f32(8, 8)), lambda: (f32(1024, 128), f32(1024, 128)),
     lambda a: a[0].shape[0] * a[0].shape[1] ** 2, True),
]


def interleaved(fns, args, calls: int, rounds: int):
    """Median seconds per call of each callable, measured in interleaved rounds."""
    times = [[] for _ in fns]
    for fn in fns:
        fn(*args)
        fn(*args)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn(*args)
            times[i].append((time.perf_counter() - t0) / calls)
    return [statistics.median(t) for t in times]


def check(got, want, exact: bool) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    if exact:
        assert np.array_equal(got, want), "not bit-identical"
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def speed(quick: bool):
    rows = []
    for name, f, example, spec, small, large, elems, exact in CASES:
        t0 = time.perf_counter()
        ep = ss.export(f, example, dynamic_shapes=spec)
        c = ep.compile()
        ctime = time.perf_counter() - t0
        m = ep.module()
        for size, make in (("small", small), ("large", large)):
            args = make()
            check(c(*args), m(*args), exact)
            check(c(*args), f(*args), exact or size == "small")
            if size == "small":
                calls, rounds = (200, 5) if quick else (500, 31)
            else:
                calls, rounds = (1, 3) if quick else (1, 15)
            time.sleep(0.2)                # let BLAS worker threads stop spinning
            te, tm, tc = interleaved([f, m, c], args, calls, rounds)
            rows.append((name, size, elems(args), te, tm, tc, ctime))
    return rows


# --------------------------------------------------------------------------- overhead
def four(a, b, c, d):
    return a * b + c - d


def per_call_us(fn, args, n: int) -> float:
    for _ in range(100):
        fn(*args)
    ts = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t0 = clock()
        fn(*args)
        ts.append(clock() - t0)
    return statistics.median(ts) / 1e3


def overhead(quick: bool):
    xs = tuple(f32(4, 3) for _ in range(4))
    n = 5000 if quick else 30000
    cf = ss.compile(four)
    cf(*xs)
    cfd = ss.compile(four, dynamic=True)
    cfd(*xs)
    ep = ss.export(four, xs, dynamic_shapes={k: (A, A) for k in "abcd"})
    m, c = ep.module(), ep.compile()
    fns = [("eager four(a, b, c, d)", four), ("ss.compile(four)", cf),
           ("ss.compile(four, dynamic=True)", cfd), ("ep.module()", m),
           ("ep.compile()", c)]
    out = {name: [] for name, _ in fns}
    for _ in range(3):                     # interleave, keep the best median
        for name, fn in fns:
            out[name].append(per_call_us(fn, xs, n))
    best = {name: min(v) for name, v in out.items()}
    base = best["eager four(a, b, c, d)"]
    return [(name, best[name], best[name] - base) for name, _ in fns]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    a = ap.parse_args()
    rows = speed(a.quick)
    print("(a) generated code vs eager NumPy (median per call; one compiled function per "
          "program serves both sizes)")
    head = "%-22s %-5s %11s %12s %12s %12s %8s %8s" % (
        "program", "size", "elements", "eager", "ep.module()", "ep.compile()", "speedup",
        "compile")
    print(head)
    print("-" * len(head))
    for name, size, n, te, tm, tc, ctime in rows:
        unit, k = ("ms", 1e3) if te > 1e-3 else ("us", 1e6)
        print("%-22s %-5s %11d %9.2f %s %9.2f %s %9.2f %s %7.2fx %6.0fms" % (
            name, size, n, te * k, unit, tm * k, unit, tc * k, unit, te / tc, ctime * 1e3))
    print()
    print("(b) per-call overhead against the eager function (4 inputs of shape (4, 3), "
          "median of many calls)")
    for name, t, over in overhead(a.quick):
        print("%-32s %7.2f us/call   overhead %+6.2f us" % (name, t, over))


if __name__ == "__main__":
    main()
