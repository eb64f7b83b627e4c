"""``ep.compile(backend="numpy")``: generated code equals ``ep.module()`` everywhere.

The large-size path (fused groups in blocks, buffer plans, threads) is exercised on small
arrays by shrinking the thresholds (``small_blocks``); results must equal ``ep.module()``
bit for bit and in dtype, at every size the constraints admit, for the small and the large
path alike.
"""
import os
import random
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import symshape as ss
from symshape import Dim
from symshape.codegen import rt
from symshape.codegen.artifact import load
from corpus.llama import apply_rope

A = Dim.AUTO
RNG = np.random.default_rng(0)


@pytest.fixture
def small_blocks(monkeypatch):
    """Take the large-size path from 64 elements, with 16-element blocks and threads."""
    monkeypatch.setattr(rt, "BIG", 64)
    monkeypatch.setattr(rt, "BLOCK", 16)
    monkeypatch.setattr(rt, "WORTH", 16)
    monkeypatch.setattr(rt, "THREAD_MIN", 64)
    monkeypatch.setattr(rt, "THREADS", 2)
    monkeypatch.setattr(rt, "busy", lambda: False)   # threads even on a loaded machine


def same(a, b):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    assert np.array_equal(a, b, equal_nan=True), np.max(np.abs(a - b))


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


W = f32(5, 3)


def model(w, x, y, z):
    x0 = x + y
    x1 = w @ W
    return x1, np.tanh(x0.reshape(-1) + z) * 2 + 1


MODEL_ARGS = (f32(6, 5), f32(4), f32(8, 4), f32(32))
MODEL_SPEC = {"w": (A, A), "x": (A,), "y": (A, A), "z": (A,)}


def layer_norm_gelu(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=-1, keepdims=True)
    y = xc / np.sqrt(var + 1e-5) * g + b
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def softmax_masked(s, mask):
    s = np.where(mask, s, -1e9)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mixed(x, y):
    a = np.clip(x * 3.0, -1.0, 1.0)
    b = (a > 0).astype(np.float64) + a.astype(np.float64)
    c = np.where(y > 0, a, y) - x[:, :1]
    d = c[:, 1:] * 2
    return b, d, c.sum(axis=1), np.maximum(d, 0) @ np.ones((d.shape[1], 2), np.float32)


CASES = [
    ("model", model, MODEL_ARGS, MODEL_SPEC,
     lambda n: (f32(n, 5), f32(n + 1), f32(n + 2, n + 1), f32((n + 1) * (n + 2)))),
    ("ln_gelu", layer_norm_gelu, (f32(8, 16), f32(16), f32(16)),
     {"x": (A, A), "g": (A,), "b": (A,)}, lambda n: (f32(n, 16), f32(16), f32(16))),
    ("softmax_3d", softmax_masked, (f32(2, 3, 4, 4), RNG.random((4, 4)) > 0.3),
     {"s": (A, A, A, A), "mask": (A, A)},
     lambda n: (f32(2, n, 5, 5), RNG.random((5, 5)) > 0.3)),
    ("mixed", mixed, (f32(6, 4), f32(6, 4)), {"x": (A, A), "y": (A, A)},
     lambda n: (f32(n, 4), f32(n, 4))),
]


@pytest.mark.parametrize("name,f,args,spec,make", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("path", ["small", "large"])
def test_compiled_equals_module(name, f, args, spec, make, path, request):
    if path == "large":
        request.getfixturevalue("small_blocks")
    ep = ss.export(f, args, dynamic_shapes=spec)
    c = ep.compile()
    m = ep.module()
    assert isinstance(c.source, str) and c.source.startswith("def %s(" % f.__name__)
    for n in (2, 3, 9, 33):
        inputs = make(n)
        want = m(*inputs)
        same(c(*inputs), want)
        same(c(*inputs), want)          # second call: pooled buffers, warm scratch
    same(c(*args), f(*args))


def test_source_has_check_sizes_and_both_paths(small_blocks):
    ep = ss.export(layer_norm_gelu, (f32(8, 16), f32(16), f32(16)),
                   dynamic_shapes={"x": (A, None), "g": None, "b": None})
    src = ep.compile().source
    assert "_rt.bad_range('x.shape[0]'" in src            # the input check
    assert "_z0 = 16*s0" in src                            # a size computed once
    assert "def _g0_0(_b0, _b1, _sc):" in src             # a fused group in blocks
    # computed into pooled outputs (the output argument positional where NumPy allows it)
    assert re.search(r"np\.\w+\([^()]*(out=)?_o_\w+\)", src) and "_cg.take(" in src
    # blocked, unblocked for non-contiguous inputs (reductions), and the small path
    assert src.count("np.tanh(") == 3


def test_rejects_what_module_rejects():
    ep = ss.export(model, MODEL_ARGS, dynamic_shapes=MODEL_SPEC)
    c, m = ep.compile(), ep.module()
    bad = [
        (f32(1, 5), f32(4), f32(8, 4), f32(32)),             # size 1, range starts at 2
        (f32(6, 4), f32(4), f32(8, 4), f32(32)),             # static axis
        (f32(6, 5), f32(4), f32(8, 3), f32(32)),             # relation y.shape[1] == x
        (f32(6, 5), f32(4), f32(8, 4), f32(31)),             # z == x * y
        (f32(6, 5).astype(np.float64), f32(4), f32(8, 4), f32(32)),   # dtype
        (f32(6, 5, 1), f32(4), f32(8, 4), f32(32)),          # rank
        (f32(6, 5).tolist(), f32(4), f32(8, 4), f32(32)),    # not an array
    ]
    for args in bad:
        with pytest.raises(ss.UserError) as e1:
            m(*args)
        with pytest.raises(ss.UserError) as e2:
            c(*args)
        assert str(e1.value) == str(e2.value)


def test_outputs_never_alias_live_results(small_blocks):
    def f(x):
        return np.tanh(x) * 2 + 1
    ep = ss.export(f, (f32(64, 8),), dynamic_shapes={"x": (A, A)})
    c = ep.compile()
    x1, x2 = f32(64, 8), f32(64, 8)
    r1 = c(x1)
    r2 = c(x2)
    assert not np.shares_memory(r1, r2)
    same(r1, f(x1))
    keep = r2.copy()
    p1 = r1.__array_interface__["data"][0]
    del r1
    r3 = c(x1)                                 # may reuse r1's buffer, never r2's
    same(r2, keep)
    same(r3, f(x1))
    assert r3.__array_interface__["data"][0] == p1
    v = r3[1:]                                 # a view keeps its base alive
    del r3
    r4 = c(x2)
    assert not np.shares_memory(r4, v)
    same(r4, keep)


def test_views_and_mutation(small_blocks):
    def f(x, y):
        x[0, 0] = 3.0
        h = np.exp(x) * y + 1.0
        return h[:, ::2], h.T, (h - 1.0)[1:]
    x, y = f32(16, 8), f32(16, 8)
    ep = ss.export(f, (x.copy(), y), dynamic_shapes={"x": (A, A), "y": (A, A)})
    c, m = ep.compile(), ep.module()
    for n in (4, 16, 40):
        a, b = f32(n, 8), f32(n, 8)
        a1, a2 = a.copy(), a.copy()
        same(c(a1, b), m(a2, b))
        same(a1, a2)


def test_noncontiguous_inputs_keep_reductions_exact(small_blocks):
    ep = ss.export(layer_norm_gelu, (f32(8, 16), f32(16), f32(16)),
                   dynamic_shapes={"x": (A, A), "g": (A,), "b": (A,)})
    c, m = ep.compile(), ep.module()
    x = f32(48, 64).T                     # F-ordered: eager reduces in another order
    g, b = f32(48), f32(48)
    same(c(x, g, b), m(x, g, b))
    xs = f32(64, 96)[:, ::2]
    same(c(xs, g, b), m(xs, g, b))


def test_memory_plan_reuses_dead_buffers(small_blocks):
    def f(x, w):
        h = np.tanh(x @ w)
        h = np.tanh(h @ w)
        h = np.tanh(h @ w)
        return h @ w
    x, w = f32(64, 16), f32(16, 16)
    ep = ss.export(f, (x, w), dynamic_shapes={"x": (A, None), "w": None})
    cp = ep.compile().compiled
    slots = [where for where in cp.plan.where.values() if where[0] == "slot"]
    assert len(slots) >= 4 and len({s for s in slots}) <= 3       # reused slots
    assert cp.plan.inplace                                         # tanh in place
    c = ep.compile()
    same(c(x, w), ep.module()(x, w))
    same(c(x[:33], w), ep.module()(x[:33], w))


def test_threads_give_identical_results(small_blocks, monkeypatch):
    def f(x):
        return np.sin(x) * np.cos(x) + x * x
    ep = ss.export(f, (f32(256, 32),), dynamic_shapes={"x": (A, A)})
    c = ep.compile()
    x = f32(300, 32)
    tune = c.compiled.ns["_TUNE0"]
    for mode in (1, 0, None):
        tune[4] = mode
        same(c(x), f(x))
    for _ in range(8):                                     # tuning settles on a mode
        same(c(x), f(x))
    assert tune[4] in (0, 1)


def test_cond_and_data_dependent_sizes(small_blocks):
    def f(x):
        pos = x[x > 0]
        y = ss.cond(x.sum() > 0, lambda v: np.sin(v) * 2, lambda v: np.cos(v) - 1, [x])
        return y * 3 + 1, pos * 2
    x = np.abs(f32(40))
    ep = ss.export(f, (x,), dynamic_shapes={"x": (A,)})
    c, m = ep.compile(), ep.module()
    for v in (x, -x, f32(100), f32(7)):
        same(c(v), m(v))


def test_integer_and_bool_dtypes(small_blocks):
    def f(a, b):
        s = (a * 3 + b) // 2
        return s % 5, (s > 3) & (b < 2), np.abs(s - 7).astype(np.int8)
    a = RNG.integers(-9, 9, (20, 6)).astype(np.int32)
    b = RNG.integers(-9, 9, (20, 6)).astype(np.int64)
    ep = ss.export(f, (a, b), dynamic_shapes={"a": (A, A), "b": (A, A)})
    same(ep.compile()(a, b), ep.module()(a, b))


# ----------------------------------------------------------------------------- random
def _programs():
    ops = [
        lambda x: x * 2.0 + 1.0,
        lambda x: np.tanh(np.exp(-np.abs(x))),
        lambda x: np.maximum(x, 0),
        lambda x: np.where(x > 0, x, -x),
        lambda x: x - x.mean(axis=-1, keepdims=True),
        lambda x: np.exp(x - x.max(axis=-1, keepdims=True)),
        lambda x: x.sum(axis=0) if x.ndim >= 2 else x,
        lambda x: x.T,
        lambda x: x.reshape(-1),
        lambda x: x[1:],
        lambda x: x[::2],
        lambda x: np.concatenate([x, x * 0.5], axis=-1),
        lambda x: x[None] + 1.0 if x.ndim <= 2 else x,
        lambda x: x + x[:1],
        lambda x: np.clip(x, -0.5, 0.5) + np.sign(x),
        lambda x: (x * 10).astype(np.int64) // 3 + 0.5,
        lambda x: x.var(axis=-1, keepdims=True) + x,
        lambda x: x[..., None] * x[..., None, :] if x.ndim <= 2 else x,
        lambda x: x / (np.abs(x).sum(axis=-1, keepdims=True) + 1.0),
    ]
    rnd = random.Random(1)
    out = []
    for _ in range(60):
        rank = rnd.randint(1, 3)
        shape = tuple(rnd.randint(2, 5) for _ in range(rank))
        dyn = tuple(rnd.random() < 0.7 for _ in range(rank))
        chain = [rnd.randrange(len(ops)) for _ in range(rnd.randint(2, 6))]
        out.append((shape, dyn, [ops[i] for i in chain]))
    return out


def _chained(chain):
    """One program: the ops of ``chain`` applied in turn."""
    def f(x):
        for op in chain:
            x = op(x)
        return x
    return f


def test_random_programs_equal_module(small_blocks):
    checked = 0
    make = _chained

    for i, (shape, dyn, chain) in enumerate(_programs()):
        f = make(chain)
        x = np.random.default_rng(i).standard_normal(shape)
        try:
            ep = ss.export(f, (x,), dynamic_shapes={"x": tuple(A if d else None for d in dyn)})
        except ss.UserError:
            continue
        c, m = ep.compile(), ep.module()
        for scale in (1, 5):
            xs = np.random.default_rng(i + 1).standard_normal(
                tuple(s * scale if d else s for s, d in zip(shape, dyn)))
            try:
                want = m(xs)
            except ss.UserError:
                continue
            same(c(xs), want)
            same(c(xs), want)
            checked += 1
    assert checked > 60


def _layouts(a):
    """The same values in the memory layouts real inputs arrive in."""
    yield a
    yield np.asfortranarray(a)
    if a.ndim >= 1:
        big = np.empty(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        yield big[..., ::2]                        # strided
        yield np.flip(np.flip(a, -1).copy(), -1)   # negative strides


def test_random_programs_in_any_layout_equal_eager(small_blocks):
    """Compiled code (small and blocked paths) equals eager NumPy bit for bit whatever the
    inputs' memory layout: layout decides reduction order, so blocks that write C-ordered
    buffers must not run for other layouts."""
    checked = 0
    for i, (shape, dyn, chain) in enumerate(_programs()[:30]):
        f = _chained(chain)
        x = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        try:
            ep = ss.export(f, (x,), dynamic_shapes={"x": tuple(A if d else None for d in dyn)})
        except ss.UserError:
            continue
        c = ep.compile()
        xs = np.random.default_rng(i + 1).standard_normal(
            tuple(s * 6 if d else s for s, d in zip(shape, dyn))).astype(np.float32)
        for v in _layouts(xs):
            try:
                want = f(v)
            except Exception:
                continue
            same(c(v), want)
            checked += 1
    assert checked > 40


# ----------------------------------------------------------------------------- artifact
def test_standalone_artifact_runs_without_symshape(tmp_path, small_blocks):
    ep = ss.export(model, MODEL_ARGS, dynamic_shapes=MODEL_SPEC)
    c = ep.compile()
    path = c.save(str(tmp_path / "art"))
    assert path.endswith("model.py") and os.path.exists(path)
    inputs = (f32(3, 5), f32(40), f32(7, 40), f32(280))
    np.savez(tmp_path / "inputs.npz", *inputs)
    np.savez(tmp_path / "want.npz", *ep.module()(*inputs))
    script = textwrap.dedent("""
        import sys
        for name in ("symshape", "sympy", "z3"):
            sys.modules[name] = None               # importing them now fails
        import importlib.util, numpy as np
        spec = importlib.util.spec_from_file_location("model", sys.argv[1])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        ins = np.load(sys.argv[2]); want = np.load(sys.argv[3])
        got = mod.model(*[ins["arr_%d" % i] for i in range(4)])
        for i, g in enumerate(got):
            w = want["arr_%d" % i]
            assert g.dtype == w.dtype and np.array_equal(g, w), i
        try:
            mod.forward(np.zeros((1, 5), np.float32), *[ins["arr_%d" % i] for i in (1, 2, 3)])
        except mod.UserError as e:
            assert "w.shape[0] = 1 is outside the range [2, int_oo]" in str(e), e
        else:
            raise SystemExit("the check did not run")
        bad = [m for m in sys.modules if m.split(".")[0] in ("symshape", "sympy", "z3")
               and sys.modules[m] is not None]
        assert not bad, bad
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script, path, str(tmp_path / "inputs.npz"),
                          str(tmp_path / "want.npz")], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    # in this process the module works too, and raises symshape's UserError
    mod = load(path)
    same(mod.model(*inputs), ep.module()(*inputs))
    with pytest.raises(ss.UserError):
        mod.model(f32(1, 5), *inputs[1:])


def test_backend_registry():
    ep = ss.export(model, MODEL_ARGS)
    c = ep.compile(backend="cupy")          # generated without a device
    assert 'extern "C" __global__' in c.source
    with pytest.raises(ss.UserError, match="unknown backend 'tvm'.*'numpy'"):
        ep.compile(backend="tvm")
    assert callable(ep.compile(backend="numpy"))


def test_a_rejected_lowering_leaves_the_group_unchanged(small_blocks):
    """A view that only a shallower group would admit must not slip into the current one."""
    W = np.ones((4, 3))

    def f(x, y):
        z = np.exp(x) * 2 + y[:, None]
        return z @ W, z.sum(0)

    ep = ss.export(f, (np.ones((5, 4)), np.ones(5)), dynamic_shapes={"x": (A, None), "y": (A,)})
    c = ep.compile()
    x, y = RNG.standard_normal((300, 4)), RNG.standard_normal(300)
    same(c(x, y), f(x, y))


_W = np.random.default_rng(3).standard_normal((4, 3))
_STEPS = [
    ("exp", lambda env: np.exp(-np.abs(env[-1]))),
    ("bcast_col", lambda env: env[-1] + env[1][:, None]),
    ("bcast_row", lambda env: env[-1] * env[0][0]),
    ("scale", lambda env: env[-1] * 2.0 - 1.0),
    ("tanh", lambda env: np.tanh(env[-1])),
    ("rowsum", lambda env: env[-1] - env[-1].sum(axis=1, keepdims=True)),
    ("colmax", lambda env: env[-1] / (np.abs(env[-1]).max(axis=0) + 1.0)),
    ("mix", lambda env: env[-1] + env[len(env) // 2][..., :env[-1].shape[-1]]),
]


def _dag(picks):
    def f(x, y):
        env = [x, y, x]
        for i in picks:
            env.append(_STEPS[i][1](env))
        last = env[-1]
        return last @ _W[:last.shape[-1]], last.sum(axis=0), last[::2]
    return f


@settings(deadline=None, max_examples=40)
@given(st.lists(st.sampled_from(range(len(_STEPS))), min_size=1, max_size=6))
@example([0, 3, 1])             # a fused chain, then a broadcast view (a lowering bug)
def test_random_two_input_programs_compile_like_eager(picks):
    """Differential fuzzing of the blocked path: broadcast views, row / column reductions,
    matmuls of fused results, strided views of outputs, against eager NumPy."""
    from symshape.codegen import rt
    saved = (rt.BIG, rt.BLOCK, rt.WORTH, rt.THREAD_MIN)
    rt.BIG, rt.BLOCK, rt.WORTH, rt.THREAD_MIN = 64, 16, 16, 64
    try:
        f = _dag(picks)
        ep = ss.export(f, (np.ones((5, 4)), np.ones(5)),
                       dynamic_shapes={"x": (A, None), "y": (A,)})
        c = ep.compile()
        for n in (5, 37, 130):
            x = np.random.default_rng(n).standard_normal((n, 4))
            y = np.random.default_rng(n + 1).standard_normal(n)
            same(c(x, y), f(x, y))
    finally:
        rt.BIG, rt.BLOCK, rt.WORTH, rt.THREAD_MIN = saved


# ----------------------------------------------------------------------------- strided
def test_arithmetic_groups_run_in_blocks_over_strided_views(small_blocks):
    """RoPE's halves ``x[..., ::2]`` and column slices of a fused projection are strided
    but C-ordered: a group of plain arithmetic runs in blocks over them (no eager
    fallback) and gives eager's bits; a group with exp still falls back on them."""
    def f(x, cos, sin):
        q = apply_rope(x, cos, sin)      # the corpus Llama's: strided even / odd halves
        qkv = q.reshape(q.shape[0], q.shape[1], -1)
        a, b = qkv[:, :, :8], qkv[:, :, 8:]
        return a * 0.5 - b, np.exp(a) + b

    cs = (f32(3, 2), f32(3, 2))
    ep = ss.export(f, (f32(2, 3, 4, 4),) + cs, dynamic_shapes={
        "x": (A, Dim("t"), None, None), "cos": (Dim("t"), None), "sin": (Dim("t"), None)})
    c = ep.compile()
    assert "_cg.c_ordered(" in c.source
    for b, t in ((2, 3), (5, 9), (7, 33)):
        x = f32(b, t, 4, 4)
        cos, sin = f32(t, 2), f32(t, 2)
        same(c(x, cos, sin), f(x, cos, sin))


@settings(deadline=None, max_examples=25)
@given(st.sampled_from(["add", "subtract", "multiply", "divide", "maximum", "sqrt"]),
       st.sampled_from([(slice(None), slice(None, None, 2)), (slice(None), slice(1, 7)),
                        (slice(None, None, 3), slice(None)), (slice(None), slice(None, None, -1)),
                        "T", "F", "C"]),
       st.integers(40, 90))
def test_layout_free_groups_equal_eager_in_any_layout(op, view, rows):
    """A fused group of layout-free ops over an operand in any layout (gapped C order,
    reversed, transposed, Fortran) computes eager's bits, values and memory order of later
    reductions included."""
    from symshape.codegen import rt
    saved = (rt.BIG, rt.BLOCK, rt.WORTH)
    rt.BIG, rt.BLOCK, rt.WORTH = 64, 16, 16
    ufunc = getattr(np, op)

    def f(x, y):
        z = ufunc(np.abs(x) + 1.0, y) if ufunc.nin == 2 else ufunc(np.abs(x * y))
        w = z * 3.0 - y
        return w, w.sum(axis=0)

    def laid_out(seed):
        base = np.random.default_rng(seed).standard_normal((rows, 16)).astype(np.float32)
        if view == "T":
            return np.ascontiguousarray(base[:, :12].T).T
        if view == "F":
            return np.asfortranarray(base)
        return base if view == "C" else base[view]

    try:
        x, y = laid_out(rows), laid_out(rows + 1)      # both operands in that layout
        ep = ss.export(f, (np.ones((5,) + x.shape[1:], np.float32),
                           np.ones((5,) + x.shape[1:], np.float32)),
                       dynamic_shapes={"x": (A, None), "y": (A, None)})
        same(ep.compile()(x, y), f(x, y))
    finally:
        rt.BIG, rt.BLOCK, rt.WORTH = saved
