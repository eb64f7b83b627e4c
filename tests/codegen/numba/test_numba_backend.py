"""backend="numba" against eager NumPy, within its accuracy contract
(``symshape.codegen.numba_backend``'s docstring), on every layout; one compilation per
kernel serving many shapes; the disk cache reused by another process.

numba compiles slowly: the programs here are few and fixed (Hypothesis draws shapes,
layouts and values, not programs, except ``test_random_chains``), and each is exported and
compiled once per session, so the number of kernels numba compiles stays small.
"""
import os
import re
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

numba = pytest.importorskip("numba")

os.environ.setdefault("SYMSHAPE_NUMBA_CACHE", tempfile.mkdtemp(prefix="ss-numba-test-"))

from hypothesis import given, settings, strategies as st  # noqa: E402

import symshape as ss  # noqa: E402
from symshape import Dim  # noqa: E402
from symshape.codegen.numba_backend import ULPS_MATH  # noqa: E402
from symshape.errors import UserError  # noqa: E402

N, M = Dim("n", min=0), Dim("m", min=0)
N1, M1 = Dim("n1", min=1), Dim("m1", min=1)     # where a max needs an element


# --------------------------------------------------------------------------- accuracy
def ulps(got, want) -> np.ndarray:
    """Distance in units of the last place of ``want`` (NaN where both are NaN: 0)."""
    got, want = np.asarray(got), np.asarray(want)
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got == want) | both_nan
    spacing = np.spacing(np.abs(want).astype(want.dtype))
    with np.errstate(invalid="ignore"):
        d = np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing.astype(np.float64)
        return np.where(same, 0.0, d)


def assert_within(got, want, max_ulps: float = 0) -> None:
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype,
                                                                 want.shape, want.dtype)
    if want.dtype.kind in "biu" or max_ulps == 0:
        np.testing.assert_array_equal(got, want)
        return
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert ulps(got, want).max(initial=0) <= max_ulps


def assert_sum_bound(got, want, terms, count: int, mean: bool = False) -> None:
    """A reordered sum: within 2 (n - 1) eps sum|x| of NumPy's (each is within
    (n - 1) eps sum|x| of the exact sum)."""
    eps = np.finfo(want.dtype).eps
    bound = 2 * max(count - 1, 1) * eps * np.abs(terms.astype(np.float64)).sum(-1)
    if mean:
        bound = bound / max(count, 1) + np.spacing(np.abs(want)).astype(np.float64)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert (err <= bound + 1e-30).all(), (err.max(), bound.max())


# --------------------------------------------------------------------------- layouts
def layouts(a: np.ndarray):
    """The same values as a C array, an F array, a transposed view and a strided view."""
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype) if a.ndim else None
    out = {"C": np.ascontiguousarray(a), "F": np.asfortranarray(a)}
    if a.ndim >= 2:
        out["T"] = np.ascontiguousarray(a.T).T
    if big is not None:
        big[..., ::2] = a
        out["strided"] = big[..., ::2]
    return out


LAYOUT = st.sampled_from(["C", "F", "T", "strided"])
FLOATS = st.floats(-8, 8, width=32, allow_nan=False)


def arrays(draw, shape, dtype=np.float32, specials=False):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    if np.dtype(dtype).kind == "f":
        a = (rng.standard_normal(shape) * draw(st.sampled_from([0.5, 2.0, 50.0]))).astype(dtype)
        if specials and a.size:
            flat = a.reshape(-1)
            for v in (np.nan, np.inf, -np.inf, 0.0, -0.0):
                flat[rng.integers(0, flat.size)] = v
        return a
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, dtype=dtype)


# --------------------------------------------------------------------------- programs
def ieee_chain(x, b):
    """Operations NumPy rounds exactly: the result is bit-identical to eager."""
    y = (x - b) * 1.5 + x / 3.0
    z = np.maximum(y, -x) - np.minimum(x * x, 4.0)
    w = np.where(x > 0.5, z, np.sqrt(np.abs(z)))
    return np.clip(w, -10.0, 10.0), (w > 1.0) | (x < b)


def math_chain(x):
    return np.tanh(x), np.exp(x * 0.5), np.log1p(np.abs(x))


def cube(x):
    return x ** 3 + x ** 2


def layer_norm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(-1, keepdims=True)
    return d / np.sqrt(var + 1e-5) * g + b


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def col_stats(x):
    return x.sum(0), x.max(0), (x > 0).any(0)


def int_prog(a, b):
    c = a * 3 + b - (a ^ b)
    return c.sum(-1), (c > 7) & (b != 0), np.maximum(c, b).astype(np.int16)


_COMPILED = {}


def compiled(f, example, spec):
    """``f`` exported once and compiled for numba once per test session."""
    got = _COMPILED.get(f)
    if got is None:
        ep = ss.export(f, example, dynamic_shapes=spec)
        got = _COMPILED[f] = ep.compile(backend="numba")
    return got


def _run(f, c, *args):
    got, want = c(*args), f(*args)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    return got, want


# --------------------------------------------------------------------------- tests
@settings(max_examples=12)
@given(st.data())
def test_ieee_chain_bit_identical_on_every_layout(data):
    n, m = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 40))
    c = compiled(ieee_chain, (np.ones((3, 5), np.float32), np.ones(5, np.float32)),
                 {"x": (N, M), "b": (M,)})
    x = layouts(arrays(data.draw, (n, m), specials=True))[data.draw(LAYOUT)]
    b = layouts(arrays(data.draw, (m,)))[data.draw(st.sampled_from(["C", "strided"]))]
    for g, w in zip(*_run(ieee_chain, c, x, b)):
        assert_within(g, w)


@settings(max_examples=8)
@given(st.data())
def test_math_functions_within_ulps(data):
    c = compiled(math_chain, (np.ones((3, 5), np.float32),), {"x": (N, M)})
    shape = (data.draw(st.integers(1, 7)), data.draw(st.integers(1, 70)))
    x = layouts(arrays(data.draw, shape, specials=True))[data.draw(LAYOUT)]
    for g, w in zip(*_run(math_chain, c, x)):
        assert_within(g, w, ULPS_MATH)


@settings(max_examples=6)
@given(st.data())
def test_small_integer_powers_are_multiplies_within_2_ulps(data):
    c = compiled(cube, (np.ones((3, 5), np.float32),), {"x": (N, M)})
    assert "np.power" not in c.source and "**" not in c.compiled.kernel_source
    x = arrays(data.draw, (data.draw(st.integers(1, 5)), data.draw(st.integers(1, 50))))
    # (x**3 + x**2: each rounds within 2 ulps of NumPy's; the sum may cancel, so compare
    # the powers through their sum's own scale)
    got, want = c(x), cube(x)
    x64 = x.astype(np.float64)
    scale = np.spacing((np.abs(x64) ** 3 + x64 ** 2).astype(np.float32)).astype(np.float64)
    assert (np.abs(got.astype(np.float64) - want) <= 4 * scale + 1e-30).all()


@settings(max_examples=10)
@given(st.data())
def test_row_reductions_layer_norm_and_softmax(data):
    shape = (data.draw(st.integers(1, 6)), data.draw(st.integers(1, 300)))
    x = layouts(arrays(data.draw, shape))[data.draw(LAYOUT)]
    g, b = arrays(data.draw, shape[1:]), arrays(data.draw, shape[1:])
    ln = compiled(layer_norm, (np.ones((3, 5), np.float32), np.ones(5, np.float32),
                               np.ones(5, np.float32)), {"x": (N, M), "g": (M,), "b": (M,)})
    sm = compiled(softmax, (np.ones((3, 5), np.float32),), {"x": (N, M1)})
    # normalized values: the reordered sums move them by a few ulps of their scale
    got, want = ln(x, g, b), layer_norm(x, g, b)
    tol = 64 * np.finfo(np.float32).eps * (1 + np.abs(g)) * (1 + np.abs(want))
    assert (np.abs(got - want) <= tol + np.abs(b) * 1e-6).all()
    got, want = sm(x), softmax(x)
    assert (np.abs(got - want) <= 64 * np.finfo(np.float32).eps * (want + 1e-7)).all()
    np.testing.assert_allclose(got.sum(-1), 1, rtol=1e-5)


@settings(max_examples=8)
@given(st.data())
def test_column_reductions(data):
    shape = (data.draw(st.integers(1, 50)), data.draw(st.integers(1, 9)))
    x = layouts(arrays(data.draw, shape))[data.draw(LAYOUT)]
    c = compiled(col_stats, (np.ones((3, 5), np.float32),), {"x": (N1, M)})
    (s, mx, an), (ws, wmx, wan) = _run(col_stats, c, x)
    assert_sum_bound(s, ws, x.T, shape[0])
    assert_within(mx, wmx)
    assert_within(an, wan)


@settings(max_examples=8)
@given(st.data())
def test_integers_and_booleans_exact(data):
    dt = data.draw(st.sampled_from([np.int8, np.int32, np.int64, np.uint8]))
    shape = (data.draw(st.integers(1, 6)), data.draw(st.integers(1, 30)))
    c = compiled(int_prog, (np.ones((3, 5), np.int32), np.ones(5, np.int32)),
                 {"a": (N, M), "b": (M,)})
    a = layouts(arrays(data.draw, shape, np.int32))[data.draw(LAYOUT)]
    b = arrays(data.draw, shape[1:], np.int32)
    for g, w in zip(*_run(int_prog, c, a, b)):
        assert_within(g, w)
    del dt


OPS = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / (np.abs(b) + 1)), ("max", np.maximum), ("min", np.minimum),
    ("where", lambda a, b: np.where(a > b, a, b * 2)), ("sq", lambda a, b: a * a - b),
]


@settings(max_examples=6)
@given(st.lists(st.sampled_from(range(len(OPS))), min_size=1, max_size=4), st.data())
def test_random_chains(ops_idx, data):
    """Random elementwise programs over a broadcast operand, one row reduction after
    them: bit-identical elementwise, a reordered sum for the reduction."""
    def prog(x, b):
        y = x
        for i in ops_idx:
            y = OPS[i][1](y, b)
        return y, y.sum(-1)
    ep = ss.export(prog, (np.ones((3, 5), np.float32), np.ones(5, np.float32)),
                   dynamic_shapes={"x": (N, M), "b": (M,)})
    c = ep.compile(backend="numba")
    for _ in range(2):
        shape = (data.draw(st.integers(1, 5)), data.draw(st.integers(1, 40)))
        x = layouts(arrays(data.draw, shape))[data.draw(LAYOUT)]
        b = arrays(data.draw, shape[1:])
        (gy, gs), (wy, ws) = _run(prog, c, x, b)
        assert_within(gy, wy)
        assert_sum_bound(gs, ws, wy, shape[1])


def test_one_compilation_serves_every_shape():
    c = compiled(softmax, (np.ones((3, 5), np.float32),), {"x": (N, M1)})
    kernels = [v for k, v in c.compiled.ns.items() if k.startswith("_K") and k.endswith("s")]
    before = None
    for shape in [(2, 3), (7, 129), (1, 1), (33, 8), (0, 4)]:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(c(x), softmax(x), rtol=1e-5, atol=1e-7)
        counts = [len(k.signatures) for k in kernels]
        before = counts if before is None else before
        assert counts == before          # no new compilation for a new shape
    assert kernels


def test_ss_compile_and_loaded_programs_use_numba(tmp_path):
    f = ss.compile(layer_norm, backend="numba", dynamic=True)
    x, g, b = (np.random.default_rng(1).standard_normal(s).astype(np.float32)
               for s in [(4, 16), (16,), (16,)])
    np.testing.assert_allclose(f(x, g, b), layer_norm(x, g, b), rtol=1e-5, atol=1e-5)
    assert f.variants[0].fn.backend == "numba"
    ep = ss.export(softmax, (x,), dynamic_shapes={"x": (N, M1)})
    ss.save(ep, str(tmp_path / "sm"))
    c = ss.load(str(tmp_path / "sm")).compile(backend="numba")
    np.testing.assert_allclose(c(x), softmax(x), rtol=1e-5, atol=1e-7)
    with pytest.raises(UserError, match="ss.save"):
        c.save(str(tmp_path / "out"))


def views_and_updates(x):
    x *= 2
    y = x.T[::2, 1:] * 3
    return y, x.reshape(-1) + 1, x[None, :, ::-1] - x[:, :1]


def test_views_and_in_place_updates_match_eager():
    c = compiled(views_and_updates, (np.ones((4, 6), np.float32),), {"x": (N1, M1)})
    for layout in ("C", "F", "strided"):
        x = layouts(np.random.default_rng(2).standard_normal((5, 7)).astype(np.float32))[layout]
        x_eager = x.copy()
        want = views_and_updates(x_eager)
        got = c(x)
        for g, w in zip(got, want):
            assert_within(g, w)
        np.testing.assert_array_equal(x, x_eager)      # the update reached the caller


def mlp(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def test_matmul_epilogues_in_pooled_buffers_keep_earlier_results():
    """Kernels after a matmul write into its pooled buffer; a result the caller still
    holds is never reused by a later call."""
    rng = np.random.default_rng(3)
    w = [rng.standard_normal(s).astype(np.float32) for s in [(8, 300), (300,), (300, 4),
                                                              (4,)]]
    c = compiled(mlp, (np.ones((2, 8), np.float32),) + tuple(w),
                 {"x": (N1, None), "w1": None, "b1": None, "w2": None, "b2": None})
    xs = [rng.standard_normal((n, 8)).astype(np.float32) for n in (300, 300, 5)]
    held = [c(x, *w) for x in xs]
    assert re.search(r"\n\s+\w+ = matmul\n", c.source)     # written in place
    for x, got in zip(xs, held):
        np.testing.assert_allclose(got, mlp(x, *w), rtol=1e-5, atol=1e-5)


def test_without_numba_says_how_to_install(monkeypatch):
    ep = ss.export(softmax, (np.ones((3, 5), np.float32),), dynamic_shapes={"x": (N, M1)})
    monkeypatch.setitem(sys.modules, "numba", None)
    with pytest.raises(UserError, match=r'pip install "symshape\[numba\]"'):
        ep.compile(backend="numba")


def test_second_process_loads_kernels_from_the_disk_cache(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, symshape as ss
        def f(x):
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
        ep = ss.export(f, (np.ones((3, 5), np.float32),),
                       dynamic_shapes={"x": (ss.Dim("n"), ss.Dim("m", min=1))})
        c = ep.compile(backend="numba")
        c(np.ones((4, 6), np.float32))
        ks = [v for k, v in c.compiled.ns.items() if k.startswith("_K") and k.endswith("s")]
        print(sum(sum(k.stats.cache_hits.values()) for k in ks),
              sum(sum(k.stats.cache_misses.values()) for k in ks))
    """)
    env = dict(os.environ, SYMSHAPE_NUMBA_CACHE=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first = [int(v) for v in runs[0].stdout.split()]
    second = [int(v) for v in runs[1].stdout.split()]
    assert first[0] == 0 and first[1] >= 1          # compiled in the first process
    assert second[0] >= 1 and second[1] == 0        # loaded from disk in the second


# --------------------------------------------------------------------------- driver choices
class Attention:
    """A decoder layer's KV cache, written one position per call (the LLaMA decode style)."""

    def __init__(self, n_ctx=64, d=8):
        self.cache_k = np.zeros((2, n_ctx, d), np.float32)

    def step(self, k, pos):
        self.cache_k[:k.shape[0], pos:pos + 1] = k
        return np.tanh(self.cache_k[:k.shape[0], :pos + 1]).sum(1)


def test_kv_cache_update_writes_its_row_in_place():
    """``cache[:, pos] = k`` writes into the cache itself, as eager does, not into a copy
    of the whole cache written back afterwards; the object's array stays the same one."""
    eager, mod = Attention(), Attention()
    rng = np.random.default_rng(5)
    ep = ss.export(mod.step, (np.ones((2, 1, 8), np.float32), 3), dynamic_shapes={
        "k": (Dim("b", min=1, max=2), None, None), "pos": Dim("pos", min=0, max=62)})
    c = ep.compile(backend="numba")
    assert "_cg.setitem_into(" in c.source and "cache_k[...] =" not in c.source
    held = mod.cache_k
    for pos in (3, 4, 10, 0):
        k = rng.standard_normal((2, 1, 8)).astype(np.float32)
        want = eager.step(k, pos)
        assert_within(c(k, pos), want, 2 * ULPS_MATH)
        np.testing.assert_array_equal(mod.cache_k, eager.cache_k)
    assert mod.cache_k is held


def batch_norm_train(x, g, b):
    mu = x.mean(axis=0)
    var = ((x - mu) ** 2).mean(axis=0)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def test_column_reductions_stay_numpys_calls():
    """A reduction over a leading axis (a batch norm's statistics) is NumPy's own call, which
    adds whole rows at a time; the elementwise work around it is still fused."""
    from symshape.codegen.numba_backend import plan_program
    x = np.random.default_rng(6).standard_normal((40, 24)).astype(np.float32)
    g, b = np.float32(1.5) * np.ones(24, np.float32), np.zeros(24, np.float32)
    ep = ss.export(batch_norm_train, (x, g, b), dynamic_shapes={"x": (N1, M), "g": (M,),
                                                                "b": (M,)})
    kinds = [obj.kind for kind, obj in plan_program(ep).steps if kind == "kernel"]
    assert "reduce" not in kinds and "pointwise" in kinds
    c = ep.compile(backend="numba")
    np.testing.assert_allclose(c(x, g, b), batch_norm_train(x, g, b), rtol=1e-5, atol=1e-5)


def test_parallel_kernels_run_serially_while_the_machine_is_busy(monkeypatch):
    """A kernel large enough for its ``prange`` variant runs the serial one while other
    runnable threads fill the machine (a parallel region would wait for a core)."""
    from symshape.codegen import rt
    from symshape.codegen.numba_backend import backend
    monkeypatch.setattr(rt, "busy", lambda: True)
    monkeypatch.setattr(backend, "_threads", lambda: 2)
    c = compiled(softmax, (np.ones((3, 5), np.float32),), {"x": (N, M1)})
    x = np.random.default_rng(7).standard_normal((512, 256)).astype(np.float32)
    tunes = [v for k, v in c.compiled.ns.items() if re.fullmatch(r"_T\d+", k)]
    assert tunes
    calls = []
    for k, v in list(c.compiled.ns.items()):
        if re.fullmatch(r"_K\d+p", k):
            monkeypatch.setitem(c.compiled.ns, k, lambda *a, _k=k: calls.append(_k))
    for _ in range(5):
        np.testing.assert_allclose(c(x), softmax(x), rtol=1e-5, atol=1e-7)
    assert calls == []                                   # never the parallel variant
    assert all(t[4] == 0 for t in tunes)                 # decided: this thread
