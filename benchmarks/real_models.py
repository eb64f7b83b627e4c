"""Real-model programs: eager NumPy vs ``ep.compile()`` vs ``ss.compile()``, side by side.

    python benchmarks/real_models.py [--quick] [--only NAME] [--rounds N] [--blas-threads N]
                                     [--backend numpy|numba]

Programs (the corpus models of tests/corpus, unmodified, at realistic sizes, float32):
GPT-2-style block and forward (a params dict; sequence 128 and 512), LLaMA-style prefill
(batch 1 and 8, sequence 128 and 512) and decode with a KV cache (one token after 128 / 512),
a CNN with im2col by fancy indexing (batch 1 and 8, 32x32 images), an MLP with batch norm in
training mode (batch 128 and 512).  ``ep.compile()`` is exported once per program with
dynamic sequence / batch axes; ``ss.compile()`` is warmed up on each size before timing.
Every timing is the median of interleaved rounds (eager, ep.compile(), ss.compile() in
turn), BLAS pinned to one thread for all three, each round read on two clocks: wall time
(what a caller waits for; the compiled code may run a costly fused group on a second core,
which eager NumPy never does) and process CPU time (all threads: the work done, whichever
core did it).  Results are checked against eager (rtol 1e-4; the tests check bit equality).
``--backend numba`` compiles both columns with ``backend="numba"`` (the numba extra).
``benchmarks/profile_models.py`` shows where the time of the compiled code goes on the same
programs.

Also: graph-break programs after their first call (the toy with 2 breaks, the GPT-2 forward
with one ``print``, the LLaMA decode with one ``print``): extra microseconds per call over
eager; and the small-size elementwise chain (4x256) through ``ep.compile()``.
"""
import os
import sys

# BLAS threads for all three callables: 1 unless ``--blas-threads N`` (read before NumPy loads)
_BLAS = sys.argv[sys.argv.index("--blas-threads") + 1] if "--blas-threads" in sys.argv else "1"
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = _BLAS

import argparse  # noqa: E402
import contextlib  # noqa: E402
import copy  # noqa: E402
import io  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import symshape as ss  # noqa: E402
from symshape import Dim  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from corpus import breaks, cnn, gpt2, llama, mlp_bn  # noqa: E402

RNG = np.random.default_rng(0)
D_MODEL, N_HEAD, N_LAYER, VOCAB = 256, 4, 2, 2048


def f32tree(v):
    if isinstance(v, dict):
        return {k: f32tree(x) for k, x in v.items()}
    if isinstance(v, list):
        return [f32tree(x) for x in v]
    return v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype == np.float64 else v


def to_f32(obj):
    """Every float64 array attribute of ``obj`` (and the objects it holds) as float32."""
    seen = set()

    def go(o):
        if id(o) in seen or not hasattr(o, "__dict__"):
            return
        seen.add(id(o))
        for k, v in vars(o).items():
            if isinstance(v, np.ndarray) and v.dtype == np.float64:
                setattr(o, k, v.astype(np.float32))
            elif isinstance(v, list):
                for x in v:
                    go(x)
            else:
                go(v)
    go(obj)
    return obj


# --------------------------------------------------------------------------- GPT-2
def gpt2_params(n_ctx):
    def lin(i, o):
        return {"w": RNG.standard_normal((i, o)) * 0.05, "b": RNG.standard_normal(o) * 0.02}
    d = D_MODEL

    def block():
        return {"ln_1": {"g": np.ones(d), "b": np.zeros(d)},
                "attn": {"c_attn": lin(d, 3 * d), "c_proj": lin(d, d)},
                "ln_2": {"g": np.ones(d), "b": np.zeros(d)},
                "mlp": {"c_fc": lin(d, 4 * d), "c_proj": lin(4 * d, d)}}
    return f32tree({"wte": RNG.standard_normal((VOCAB, d)) * 0.1,
                    "wpe": RNG.standard_normal((n_ctx, d)) * 0.02,
                    "blocks": [block() for _ in range(N_LAYER)],
                    "ln_f": {"g": np.ones(d), "b": np.zeros(d)}})


GP = gpt2_params(512)


def gpt2_block(x):
    """One GPT-2 transformer block of the corpus, weights from a params dict."""
    return gpt2.transformer_block(x, **GP["blocks"][0], n_head=N_HEAD)


def gpt2_forward(inputs):
    """The corpus GPT-2 forward over this benchmark's (larger) params dict."""
    x = GP["wte"][inputs] + GP["wpe"][range(len(inputs))]
    for block in GP["blocks"]:
        x = gpt2.transformer_block(x, **block, n_head=N_HEAD)
    x = gpt2.layer_norm(x, **GP["ln_f"])
    return x @ GP["wte"].T


def gpt2_forward_print(inputs):
    """The same forward with one debugging ``print`` (a graph break)."""
    x = GP["wte"][inputs] + GP["wpe"][range(len(inputs))]
    for block in GP["blocks"]:
        x = gpt2.transformer_block(x, **block, n_head=N_HEAD)
    print("hidden", x.shape)
    x = gpt2.layer_norm(x, **GP["ln_f"])
    return x @ GP["wte"].T


# --------------------------------------------------------------------------- LLaMA
def llama_model():
    return to_f32(llama.Llama(vocab=VOCAB, dim=D_MODEL, n_heads=N_HEAD, n_layers=N_LAYER,
                              max_batch=8, max_seq=520))


ChattyLlama = llama.ChattyLlama


# --------------------------------------------------------------------------- toy
toy = breaks.toy


def chain(x):
    """The small elementwise chain: a layer-norm-like standardisation and tanh-GELU."""
    y = (x - x.mean(axis=-1, keepdims=True)) * 0.5 + 0.1
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


# --------------------------------------------------------------------------- timing
class Timing:
    """Per callable: median seconds per call in wall and in process CPU time; per callable
    after the first: the median over rounds of first / that callable within the same round
    (robust to load that changes between rounds) in both clocks, and the median over rounds
    of (that callable - first) in seconds per call, wall time."""

    def __init__(self, wall, cpu) -> None:
        self.wall = [statistics.median(t) for t in wall]
        self.cpu = [statistics.median(t) for t in cpu]
        self.ratio = [statistics.median(a / b for a, b in zip(wall[0], t)) for t in wall[1:]]
        self.cpu_ratio = [statistics.median(a / b for a, b in zip(cpu[0], t)) for t in cpu[1:]]
        self.diff = [statistics.median(b - a for a, b in zip(wall[0], t)) for t in wall[1:]]


def interleaved(fns, args_of, rounds: int, budget: float) -> Timing:
    """Each callable timed in interleaved rounds; a round runs each callable as many times
    as fit in ``budget`` seconds (at least once), reading both clocks: wall time
    (``time.perf_counter``, what a caller waits for) and the CPU time of this process
    (``time.process_time``, all its threads: the work done, whichever core did it)."""
    for fn in fns:
        fn(*args_of())
    t0 = time.perf_counter()
    fns[0](*args_of())
    once = max(time.perf_counter() - t0, 1e-7)
    calls = max(1, int(budget / once))
    wall = [[] for _ in fns]
    cpu = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            args = args_of()
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(calls):
                fn(*args)
            t1, c1 = time.perf_counter(), time.process_time()
            wall[i].append((t1 - t0) / calls)
            cpu[i].append((c1 - c0) / calls)
    return Timing(wall, cpu)


def check(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def cases(quick: bool, backend: str = "numpy"):
    """(program, size label, eager fn, ep.compile() fn, ss.compile() fn, args factory), both
    compiled with ``backend``."""
    seqs = (128,) if quick else (128, 512)
    batches = (1,) if quick else (1, 8)
    out = []
    # GPT-2 block and forward
    x0 = RNG.standard_normal((16, D_MODEL)).astype(np.float32)
    ep_block = ss.export(gpt2_block, (x0,), dynamic_shapes={"x": (Dim("seq"), None)}
                         ).compile(backend=backend)
    jit_block = ss.compile(gpt2_block, backend=backend)
    ids0 = RNG.integers(0, VOCAB, 16)
    ep_fwd = ss.export(gpt2_forward, (ids0,),
                       dynamic_shapes={"inputs": (Dim("seq", max=512),)}).compile(backend=backend)
    jit_fwd = ss.compile(gpt2_forward, backend=backend)
    for t in seqs:
        x = RNG.standard_normal((t, D_MODEL)).astype(np.float32)
        out.append(("gpt2 block", "seq %d" % t, gpt2_block, ep_block, jit_block, lambda x=x: (x,)))
    for t in seqs:
        ids = RNG.integers(0, VOCAB, t)
        out.append(("gpt2 forward", "seq %d" % t, gpt2_forward, ep_fwd, jit_fwd,
                    lambda ids=ids: (ids,)))
    # LLaMA prefill and decode: three copies of the model (their KV caches are state)
    m_eager, m_ep, m_jit = llama_model(), None, None
    m_ep, m_jit = copy.deepcopy(m_eager), copy.deepcopy(m_eager)
    tok0 = RNG.integers(0, VOCAB, (2, 16))
    ep_pre = ss.export(m_ep.forward, (tok0, 0), dynamic_shapes={
        "tokens": (Dim("batch", min=1, max=8), Dim("seq", max=512)), "start_pos": None}
    ).compile(backend=backend)
    ep_dec = ss.export(m_ep.forward, (RNG.integers(0, VOCAB, (2, 1)), 16), dynamic_shapes={
        "tokens": (Dim("batch", min=1, max=8), None),
        "start_pos": Dim("pos", min=1, max=512)}).compile(backend=backend)
    jit_llama = ss.compile(m_jit.forward, backend=backend)
    for b in batches:
        for t in seqs:
            tok = RNG.integers(0, VOCAB, (b, t))
            out.append(("llama prefill", "batch %d seq %d" % (b, t), m_eager.forward, ep_pre,
                        jit_llama, lambda tok=tok: (tok, 0)))
    for b in batches:
        for t in seqs:
            tok = RNG.integers(0, VOCAB, (b, 1))
            out.append(("llama decode", "batch %d pos %d" % (b, t), m_eager.forward, ep_dec,
                        jit_llama, lambda tok=tok, t=t: (tok, t)))
    # CNN
    params = f32tree(cnn.init_params(c_in=3, c1=16, c2=32, n_classes=10, hw=32))
    xi = RNG.standard_normal((2, 3, 32, 32)).astype(np.float32)
    ep_cnn = ss.export(cnn.cnn, (xi, params), dynamic_shapes={
        "x": (Dim("batch", min=1), None, None, None), "params": None}
    ).compile(backend=backend)
    jit_cnn = ss.compile(cnn.cnn, backend=backend)
    for b in batches:
        x = RNG.standard_normal((b, 3, 32, 32)).astype(np.float32)
        out.append(("cnn", "batch %d" % b, cnn.cnn, ep_cnn, jit_cnn,
                    lambda x=x: (x, params)))
    # MLP with batch norm (training: batch statistics, running stats updated in place)
    mlp_e = to_f32(mlp_bn.MLP((256, 512, 512, 10)))
    mlp_ep, mlp_jit = copy.deepcopy(mlp_e), copy.deepcopy(mlp_e)
    ep_mlp = ss.export(mlp_ep.forward, (RNG.standard_normal((8, 256)).astype(np.float32),),
                       dynamic_shapes={"x": (Dim("batch"), None)}).compile(backend=backend)
    jit_mlp = ss.compile(mlp_jit.forward, backend=backend)
    for b in ((128,) if quick else (128, 512)):
        x = RNG.standard_normal((b, 256)).astype(np.float32)
        out.append(("mlp + batch norm", "batch %d" % b, mlp_e.forward, ep_mlp, jit_mlp,
                    lambda x=x: (x,)))
    return out


def geomean(xs) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=None)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--backend", default="numpy", choices=("numpy", "numba"),
                    help="the backend of both compiled columns (default numpy)")
    ap.add_argument("--blas-threads", default="1",
                    help="BLAS threads for eager and compiled alike (default 1)")
    a = ap.parse_args()
    rounds, budget = (5, 0.02) if a.quick else (21, 0.03)
    rounds = a.rounds or rounds
    print("BLAS threads: %s; median of %d interleaved rounds; times are wall-clock "
          "medians; ratios are medians over rounds of eager / compiled in that round, in "
          "wall time (x) and in process CPU time (cpu x); backend %s" % (_BLAS, rounds,
                                                                       a.backend))
    print("%-18s %-18s %10s %10s %10s %7s %7s %7s %7s" % (
        "program", "size", "eager", "ep.compile", "ss.compile", "ep x", "jit x", "ep cpu x",
        "jit cpu x"))
    ratios, jit_ratios, cpu_ratios, jit_cpu = [], [], [], []
    for name, size, eager, epc, jit, args_of in cases(a.quick, a.backend):
        if a.only and a.only not in name:
            continue
        args = args_of()
        want = eager(*args)
        check(epc(*args), want)
        for _ in range(3):                      # automatic dynamic settles
            check(jit(*args), want)
        t = interleaved([eager, epc, jit], args_of, rounds, budget)
        ratios.append(t.ratio[0])
        jit_ratios.append(t.ratio[1])
        cpu_ratios.append(t.cpu_ratio[0])
        jit_cpu.append(t.cpu_ratio[1])
        print("%-18s %-18s %8.3f ms %8.3f ms %8.3f ms %6.2fx %6.2fx %7.2fx %8.2fx" % (
            name, size, t.wall[0] * 1e3, t.wall[1] * 1e3, t.wall[2] * 1e3, t.ratio[0],
            t.ratio[1], t.cpu_ratio[0], t.cpu_ratio[1]))
    if ratios:
        print("geometric mean, wall time: ep.compile() %.2fx, ss.compile() %.2fx; lowest "
              "ep.compile() %.2fx" % (geomean(ratios), geomean(jit_ratios), min(ratios)))
        print("geometric mean, CPU time:  ep.compile() %.2fx, ss.compile() %.2fx; lowest "
              "ep.compile() %.2fx" % (geomean(cpu_ratios), geomean(jit_cpu), min(cpu_ratios)))
    if a.only:
        return
    # graph breaks after the first call
    print("\ngraph-break programs after the first call (extra time per call over eager):")
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xa, xb = RNG.standard_normal(10).astype(np.float32), \
            -np.abs(RNG.standard_normal(10).astype(np.float32))
        jt = ss.compile(toy)
        res = [("toy with 2 breaks",
                interleaved([toy, jt], lambda: (xa, xb), rounds * 3, budget))]
        jp = ss.compile(gpt2_forward_print)
        ids = RNG.integers(0, VOCAB, 128)
        check(jp(ids), gpt2_forward_print(ids))
        res.append(("gpt2 forward + print, seq 128",
                    interleaved([gpt2_forward_print, jp], lambda: (ids,), rounds * 3, budget)))
        ce = to_f32(ChattyLlama(vocab=VOCAB, dim=D_MODEL, n_heads=N_HEAD, n_layers=N_LAYER,
                                max_batch=8, max_seq=520))
        cj = copy.deepcopy(ce)
        jc = ss.compile(cj.forward)
        tok = RNG.integers(0, VOCAB, (1, 1))
        check(jc(tok, 128), ce.forward(tok, 128))
        res.append(("llama decode + print, pos 128",
                    interleaved([ce.forward, jc], lambda: (tok, 128), rounds * 3, budget)))
    for label, t in res:
        print("  %-32s eager %9.1f us  ss.compile %9.1f us  (median per-round difference "
              "%+.1f us per call)" % (label, t.wall[0] * 1e6, t.wall[1] * 1e6, t.diff[0] * 1e6))
    # small elementwise chain
    x = RNG.standard_normal((4, 256)).astype(np.float32)
    ep_chain = ss.export(chain, (x,), dynamic_shapes={"x": (Dim("rows"), None)}).compile()
    check(ep_chain(x), chain(x))
    t = interleaved([chain, ep_chain], lambda: (x,), rounds * 3, budget)
    print("\nsmall elementwise chain 4x256: eager %.1f us, ep.compile() %.1f us (%.2fx wall, "
          "%.2fx CPU)" % (t.wall[0] * 1e6, t.wall[1] * 1e6, t.ratio[0], t.cpu_ratio[0]))


if __name__ == "__main__":
    main()
