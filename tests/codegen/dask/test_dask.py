"""backend="dask": compiled programs over chunked arrays equal eager NumPy on the whole array,
run chunk-local where the program is local, and go through dask.array elsewhere."""
from __future__ import annotations

from repo_paths import REPO
import os
import pickle
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim

da = pytest.importorskip("dask.array")

A = Dim.AUTO
rng = np.random.default_rng(7)
# every example builds and computes a task graph: few in CI, more with the thorough profile
EXAMPLES = 15 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 300


def export_dyn(f, *args):
    return ss.export(f, args, dynamic_shapes=[(A,) * np.ndim(a) for a in args])


def check_equal(out, ref, rtol=1e-10):
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        assert isinstance(o, da.Array), type(o)
        got = o.compute(scheduler="threads")
        assert got.dtype == np.asarray(r).dtype
        assert got.shape == np.shape(r)
        np.testing.assert_allclose(got, r, rtol=rtol, atol=1e-12)


def plan_text(fn, *args):
    return fn.plan(*args).describe()


# --------------------------------------------------------------------------- programs
def gelu_chain(x):
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    return np.minimum(0.5 * x * (1.0 + np.tanh(inner)), 2.0) * 0.9 + x * 0.1


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class LayerNorm:
    """A module-style class holding its weights."""

    def __init__(self, d):
        self.gain = rng.standard_normal(d)
        self.bias = rng.standard_normal(d)

    def __call__(self, x):
        mu = x.mean(axis=1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * self.gain + self.bias


PARAMS = {"layers": [{"w": rng.standard_normal((8, 8)) / 3, "b": rng.standard_normal(8)}
                     for _ in range(3)]}


def mlp(x):
    """A loop over layers of a parameter dict (state shared by every chunk)."""
    for layer in PARAMS["layers"]:
        x = np.tanh(x @ layer["w"] + layer["b"])
    return x


def centre(x):
    return x - x.mean(axis=0)


def flatten_scale(x):
    return x.reshape(-1) * 2.0


def positive_sum(x):
    return (x[x > 0] * 2.0).sum()


def positives(x):
    return x[x > 0] + 1.0


# --------------------------------------------------------------------------- threaded
@pytest.mark.parametrize("chunks", [(7, 8), (8, 8), (29, 8), (1, 8), (3, 3)])
def test_elementwise_chain_any_chunking(chunks):
    x = rng.standard_normal((29, 8))
    c = export_dyn(gelu_chain, x).compile(backend="dask")
    dx = da.from_array(x, chunks=chunks)
    out = c(dx)
    check_equal(out, gelu_chain(x))
    assert out.chunks[0] == dx.chunks[0]           # output chunks from the symbolic shapes


def test_remainder_chunk_of_one_row_runs_chunk_local():
    x = rng.standard_normal((9, 4))
    c = export_dyn(softmax, x).compile(backend="dask")
    dx = da.from_array(x, chunks=((4, 4, 1), (4,)))
    out = c(dx)
    check_equal(out, softmax(x))
    assert out.chunks == ((4, 4, 1), (4,))
    assert plan_text(c, dx).startswith("segment (per chunk)")
    assert "dask.array" not in plan_text(c, dx)


def test_rowwise_layer_norm_chunked_by_rows_is_one_task_per_chunk():
    ln = LayerNorm(16)
    x = rng.standard_normal((50, 16))
    ep = ss.export(ln, (x,), dynamic_shapes={"x": (A, A)})
    assert ss.chunkable_axes(ep) == {"x": (0,)}
    c = ep.compile(backend="dask")
    dx = da.from_array(x, chunks=(10, 16))
    out = c(dx)
    check_equal(out, ln(x))
    plan = c.plan(dx)
    assert len(plan.steps) == 1 and plan.segments[0].per_chunk
    # one task per chunk plus the inputs' own keys and the state's
    graph = dict(out.__dask_graph__())
    ours = [k for k in graph if isinstance(k, tuple) and str(k[0]).startswith("symshape-")
            and "state" not in str(k[0])]
    assert len(ours) == dx.numblocks[0]


def test_rowwise_programs_chunked_by_columns_use_dask_reductions():
    ln = LayerNorm(16)
    x = rng.standard_normal((12, 16))
    c = ss.export(ln, (x,), dynamic_shapes={"x": (A, A)}).compile(backend="dask")
    dx = da.from_array(x, chunks=(12, 5))
    check_equal(c(dx), ln(x))
    text = plan_text(c, dx)
    assert "dask.array: mean = x.mean(axis=(1,), keepdims=True)" in text
    cs = export_dyn(softmax, x).compile(backend="dask")
    check_equal(cs(dx), softmax(x))
    assert "dask.array" in plan_text(cs, dx)


def test_reduction_over_the_chunked_axis_is_global_not_per_chunk():
    x = rng.standard_normal((40, 6)) + np.arange(40)[:, None]
    c = export_dyn(centre, x).compile(backend="dask")
    dx = da.from_array(x, chunks=(7, 6))
    check_equal(c(dx), centre(x))        # per-chunk means would be off by up to ~17
    text = plan_text(c, dx)
    assert text.splitlines()[0] == "dask.array: mean = x.mean(axis=(0,))"
    assert text.splitlines()[1] == "segment (per chunk): subtract"


def test_matmul_with_chunked_contraction_axis():
    def f(a, b):
        return np.tanh(a @ b)
    a, b = rng.standard_normal((20, 30)), rng.standard_normal((30, 10))
    c = export_dyn(f, a, b).compile(backend="dask")
    da_, db = da.from_array(a, chunks=(20, 7)), da.from_array(b, chunks=(7, 10))
    check_equal(c(da_, db), f(a, b))
    assert "dask.array: matmul = np.matmul(a, b)" in plan_text(c, da_, db)
    # rows chunked only: the matmul runs inside the per-chunk segment
    da2 = da.from_array(a, chunks=(6, 30))
    check_equal(c(da2, da.from_array(b, chunks=-1)), f(a, b))
    assert plan_text(c, da2, da.from_array(b, chunks=-1)) == \
        "segment (per chunk): matmul, tanh"


def test_reshape_across_chunks():
    x = rng.standard_normal((13, 5))
    c = export_dyn(flatten_scale, x).compile(backend="dask")
    assert ss.chunkable_axes(c.compiled.ep) == {"x": ()}
    check_equal(c(da.from_array(x, chunks=(4, 2))), flatten_scale(x))


def test_data_dependent_masks_give_nan_chunks():
    x = rng.standard_normal((30, 4))
    c = export_dyn(positives, x).compile(backend="dask")
    out = c(da.from_array(x, chunks=(8, 4)))
    assert all(np.isnan(s) for s in out.chunks[0])
    check_equal(out, positives(x))
    s = export_dyn(positive_sum, x).compile(backend="dask")
    check_equal(s(da.from_array(x, chunks=(8, 2))), positive_sum(x))


def test_multi_output_ops_and_runtime_checks_on_data_dependent_sizes():
    def counts(x):
        vals, n = np.unique(x, return_counts=True)
        return vals * 2, n

    x = np.array([3.0, 1, 3, 2, 1, 1, 5, 2, 2, 2])
    c = export_dyn(counts, x).compile(backend="dask")
    check_equal(c(da.from_array(x, chunks=3)), counts(x))

    def checked(x):
        m = x[x > 0]
        ss.check(m.shape[0] >= 3)
        return m * 2, x + 1

    c = export_dyn(checked, np.arange(10.0) - 3).compile(backend="dask")
    good = np.arange(10.0) - 3
    check_equal(c(da.from_array(good, chunks=3)), checked(good))
    out = c(da.from_array(np.array([1.0, -1, -2, -3, 2, -5]), chunks=3))
    for o in out:          # any output carries the check, as eager code would raise
        with pytest.raises(ss.UserError, match=r"ss.check failed at run time: .* >= 3 "
                                               r"\(ss.check at .*test_dask.py"):
            o.compute(scheduler="threads")


def test_runtime_check_on_a_value_read_with_item():
    def f(x):
        n = (x > 0).sum().item()
        ss.check(n >= 2)
        return x * 2

    x = np.arange(10.0) - 3
    c = export_dyn(f, x).compile(backend="dask")
    check_equal(c(da.from_array(x, chunks=3)), f(x))
    with pytest.raises(ss.UserError, match="ss.check failed at run time"):
        c(da.from_array(-np.abs(x), chunks=3)).compute(scheduler="threads")


def test_sizes_and_python_values_among_the_outputs():
    def f(x):
        return x * 2, x.shape[0], 3.5, {"n": x.shape[0] * 2 + 1}

    x = rng.standard_normal((6, 3))
    c = export_dyn(f, x).compile(backend="dask")
    y = rng.standard_normal((9, 3))
    out = c(da.from_array(y, chunks=(2, 3)))
    assert out[1:] == (9, 3.5, {"n": 19})
    check_equal(out[0], f(y)[0])

    def count(x):
        return x[x > 0].shape[0]
    c = export_dyn(count, x).compile(backend="dask")
    with pytest.raises(ss.UserError, match="returns a size that depends on array values"):
        c(da.from_array(y, chunks=(2, 3)))


def test_segments_the_fused_generator_cannot_take_still_run(monkeypatch):
    from symshape.codegen import numpy_backend

    def broken(*args, **kwargs):
        raise IndexError("tuple index out of range")
    monkeypatch.setattr(numpy_backend, "generate", broken)
    x = rng.standard_normal((12, 4))
    c = export_dyn(softmax, x).compile(backend="dask")
    dx = da.from_array(x, chunks=(5, 4))
    check_equal(c(dx), softmax(x))
    assert "[unfused: IndexError: tuple index out of range]" in plan_text(c, dx)


def test_state_is_one_key_shared_by_every_task():
    x = rng.standard_normal((64, 8))
    c = ss.export(mlp, (x,), dynamic_shapes={"x": (A, None)}).compile(backend="dask")
    dx = da.from_array(x, chunks=(8, 8))
    out = c(dx)
    check_equal(out, mlp(x))
    assert "dask.array" not in plan_text(c, dx)
    graph = dict(out.__dask_graph__())
    w = PARAMS["layers"][0]["w"]
    holding = [k for k, v in graph.items()
               if any(o is w for o in _objects(v))]
    assert len(holding) == 1                     # the weight enters the graph once
    # the same key on the next call: nothing re-entered
    graph2 = dict(c(dx).__dask_graph__())
    assert holding[0] in graph2


def _objects(task, depth=0):
    if depth > 6:
        return
    yield task
    for attr in ("args", "kwargs", "value", "func"):
        sub = getattr(task, attr, None)
        if sub is not None and sub is not task:
            if isinstance(sub, dict):
                sub = tuple(sub.values())
            yield from _objects(sub, depth + 1)
    if isinstance(task, (tuple, list)):
        for t in task:
            yield from _objects(t, depth + 1)


def test_meta_given_dask_never_calls_the_program_on_dummy_shapes(monkeypatch):
    from symshape.codegen import dask_backend
    calls = []
    orig = dask_backend.Kernel.__call__
    monkeypatch.setattr(dask_backend.Kernel, "__call__",
                        lambda self, *a: calls.append(a) or orig(self, *a))
    x = rng.standard_normal((10, 3))
    c = export_dyn(softmax, x).compile(backend="dask")
    out = c(da.from_array(x, chunks=(3, 3)))
    assert calls == []                            # building the graph ran nothing
    assert out.dtype == x.dtype and out._meta.shape == (0, 0)
    out.compute(scheduler="sync")
    assert sorted(a[0].shape[0] for a in calls) == [1, 3, 3, 3]


def test_invalid_global_shapes_rejected_before_any_task_runs():
    ran = []

    def spy(b):
        ran.append(b.shape)
        return b
    x = rng.standard_normal((12, 4))
    c = ss.export(softmax, (x,), dynamic_shapes={"x": (A, 4)}).compile(backend="dask")
    meta = np.empty((0, 0))
    bad = da.from_array(rng.standard_normal((12, 5)), chunks=(4, 5)).map_blocks(spy, meta=meta)
    with pytest.raises(ss.UserError, match=r"x.shape\[1\]: expected 4, got 5"):
        c(bad)
    one = da.from_array(rng.standard_normal((1, 4)), chunks=(1, 4)).map_blocks(spy, meta=meta)
    with pytest.raises(ss.UserError, match=r"x.shape\[0\] = 1 is outside the range"):
        c(one)
    with pytest.raises(ss.UserError, match="dtype float64, got float32"):
        c(da.zeros((12, 4), dtype=np.float32, chunks=4))
    with pytest.raises(ss.UserError, match=r"takes a dask.array.Array, got ndarray.*"
                                           r"from_array"):
        c(x)
    assert ran == []


def test_chunks_that_are_not_ndarrays_are_a_user_error():
    x = rng.standard_normal((12, 4))
    c = export_dyn(gelu_chain, x).compile(backend="dask")
    masked = da.ma.masked_greater(da.from_array(x, chunks=4), 0.5)
    with pytest.raises(ss.UserError, match=r"input x: .*numpy.ndarray chunks.*MaskedArray"):
        c(masked)


def test_unknown_chunk_sizes_are_a_user_error():
    x = rng.standard_normal((12, 4))
    c = export_dyn(gelu_chain, x).compile(backend="dask")
    dx = da.from_array(x, chunks=(4, 4))
    unknown = dx[dx[:, 0] > 0]
    with pytest.raises(ss.UserError, match="compute_chunk_sizes"):
        c(unknown)


def test_writes_into_inputs_are_rejected_with_the_fix():
    def f(x):
        x[0] = 1.0
        return x * 2
    x = rng.standard_normal((6, 3))
    ep = export_dyn(f, x)
    with pytest.raises(ss.UserError, match="immutable. Return the new value"):
        ep.compile(backend="dask")


def test_without_dask_the_backend_says_how_to_install(monkeypatch):
    x = rng.standard_normal((6, 3))
    ep = export_dyn(gelu_chain, x)
    monkeypatch.setitem(sys.modules, "dask.array", None)
    with pytest.raises(ss.UserError, match=r'pip install "symshape\[dask\]"'):
        ep.compile(backend="dask")


def test_chunkable_axes_per_input():
    w = rng.standard_normal((3, 4))

    def f(x, y, v):
        return (x @ w) * 2, (y - y.mean(0)), v.T * 3

    ep = export_dyn(f, rng.standard_normal((6, 3)), rng.standard_normal((5, 2)),
                    rng.standard_normal((4, 7)))
    assert ss.chunkable_axes(ep) == {"x": (0,), "y": (1,), "v": (0, 1)}

    def size_as_value(x):
        return x * x.shape[0]
    assert ss.chunkable_axes(export_dyn(size_as_value, rng.standard_normal((5, 3)))) == \
        {"x": (1,)}

    def shift(x):
        return x[1:] - x[:-1]
    assert ss.chunkable_axes(export_dyn(shift, rng.standard_normal((5, 3)))) == {"x": (1,)}
    cf = ss.compile(size_as_value, dynamic=True)
    with pytest.raises(ss.UserError, match="has not been called yet"):
        ss.chunkable_axes(cf)
    cf(rng.standard_normal((5, 3)))
    assert ss.chunkable_axes(cf) == {"x": (1,)}
    with pytest.raises(ss.UserError, match="takes an ExportedProgram"):
        ss.chunkable_axes(size_as_value)
    # a static axis is never chunk-local: generated code fixes its size
    assert ss.chunkable_axes(ss.export(softmax, (rng.standard_normal((5, 3)),))) == \
        {"x": ()}


def test_jit_scales_from_numpy_to_dask_by_one_argument():
    def model(x):
        return softmax(x) * 2.0
    x = rng.standard_normal((40, 6))
    on_numpy = ss.compile(model)(x)
    cf = ss.compile(model, backend="dask")
    out = cf(da.from_array(x, chunks=(10, 6)))
    check_equal(out, on_numpy)
    assert len(cf.variants) == 1
    assert "x.shape[0] in [2, int_oo]" in cf.variants[0].guards   # dask axes: dynamic
    x2 = rng.standard_normal((17, 6))
    check_equal(cf(da.from_array(x2, chunks=(5, 6))), model(x2))
    y = rng.standard_normal((40, 7))
    check_equal(cf(da.from_array(y, chunks=(10, 7))), model(y))
    one_chunk = da.from_array(y, chunks=-1)            # later chunked differently
    check_equal(cf(one_chunk), model(y))
    assert len(cf.variants) == 1 and cf.recompile_reasons == []
    assert cf.variants[0].fn.plan(da.from_array(y, chunks=(10, 7))).describe() == \
        "segment (per chunk): max_1, subtract, exp, sum_1, divide, multiply"
    for _ in range(2):          # also once a variant was compiled for NumPy inputs
        with pytest.raises(ss.UserError, match="takes a dask.array.Array, got ndarray"):
            cf(x)


def test_jit_traces_terabyte_arrays_without_memory():
    def f(x):
        return np.tanh(x - x.mean(axis=1, keepdims=True)) * 2.0
    x = da.zeros((10 ** 6, 10 ** 6), chunks=(10 ** 5, 10 ** 6))      # 7 TiB
    out = ss.compile(f, backend="dask")(x)
    assert out.shape == x.shape and out.chunks == x.chunks
    assert len(out.__dask_graph__()) == 2 * x.numblocks[0]


@settings(max_examples=EXAMPLES, deadline=None)
@given(rows=st.integers(2, 40), cols=st.integers(2, 9), data=st.data())
def test_layer_norm_any_row_chunking_equals_eager(rows, cols, data):
    ln = LayerNorm(cols)
    x = np.random.default_rng(rows * 31 + cols).standard_normal((rows, cols))
    cuts = sorted(data.draw(st.sets(st.integers(1, rows - 1), max_size=6)))
    chunks = tuple(b - a for a, b in zip([0] + cuts, cuts + [rows]))
    c = ss.export(ln, (x,), dynamic_shapes={"x": (A, A)}).compile(backend="dask")
    check_equal(c(da.from_array(x, chunks=(chunks, cols))), ln(x))


W_SQ = rng.standard_normal((6, 6)) / 3

# shape-preserving steps over x (rows, 6): local ones and ones that read across chunks
STEPS = {
    "tanh": lambda x: np.tanh(x),
    "affine": lambda x: x * 0.5 - 0.25,
    "centre_rows": lambda x: x - x.mean(axis=1, keepdims=True),
    "centre_cols": lambda x: x - x.mean(axis=0, keepdims=True),
    "scale_rows": lambda x: x / (np.abs(x).max(axis=1, keepdims=True) + 1.0),
    "matmul": lambda x: x @ W_SQ,
    "transpose_twice": lambda x: (x.T * 2.0).T,
    "reverse_rows": lambda x: x[::-1],
    "roll_rows": lambda x: np.concatenate([x[1:], x[:1]], axis=0),
    "cumsum_rows": lambda x: np.cumsum(x, axis=0) / 10.0,
    "size_as_value": lambda x: x / x.shape[0],
    "sort_cols": lambda x: np.sort(x, axis=1),
    "leaky": lambda x: np.where(x > 0, x, 0.1 * x),
    "float32_roundtrip": lambda x: x.astype(np.float32).astype(np.float64),
    "zeros_like_plus": lambda x: np.zeros_like(x) + x * 2.0,
    "expand_squeeze": lambda x: np.squeeze(np.expand_dims(x, 1), 1) + 1.0,
    "global_norm": lambda x: x / np.sqrt((x * x).sum() + 1.0),
    "clip": lambda x: np.clip(x, -1.0, 1.0),
    "first_row": lambda x: x - x[0],
}


@settings(max_examples=EXAMPLES, deadline=None)
@given(steps=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5),
       rows=st.integers(2, 30), data=st.data())
def test_random_programs_any_chunking_equal_eager(steps, rows, data):
    fns = [STEPS[s] for s in steps]

    def program(x):
        for f in fns:
            x = f(x)
        return x

    x = np.random.default_rng(rows).standard_normal((rows, 6))
    rcuts = sorted(data.draw(st.sets(st.integers(1, rows - 1), max_size=4)))
    ccuts = sorted(data.draw(st.sets(st.integers(1, 5), max_size=2)))
    chunks = tuple(tuple(b - a for a, b in zip([0] + c, c + [n]))
                   for c, n in ((rcuts, rows), (ccuts, 6)))
    c = export_dyn(program, x).compile(backend="dask")
    check_equal(c(da.from_array(x, chunks=chunks)), program(x), rtol=1e-9)


def _cuts(data, n, most):
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=most))) if n > 1 else []
    return tuple(b - a for a, b in zip([0] + cuts, cuts + [n]))


@settings(max_examples=EXAMPLES, deadline=None)
@given(rows=st.integers(2, 25), cols=st.integers(2, 7), data=st.data())
def test_inputs_chunked_differently_are_aligned(rows, cols, data):
    def gated(x, y, b):
        gate = 1.0 / (1.0 + np.exp(-(y + b)))
        return x * gate + (1.0 - gate) * np.tanh(x), (x - y).max(axis=1)

    g = np.random.default_rng(rows * 7 + cols)
    x, y, b = g.standard_normal((rows, cols)), g.standard_normal((rows, cols)), \
        g.standard_normal(cols)
    c = export_dyn(gated, x, y, b).compile(backend="dask")
    dx = da.from_array(x, chunks=(_cuts(data, rows, 4), _cuts(data, cols, 2)))
    dy = da.from_array(y, chunks=(_cuts(data, rows, 4), _cuts(data, cols, 2)))
    db = da.from_array(b, chunks=(_cuts(data, cols, 2),))
    check_equal(c(dx, dy, db), gated(x, y, b))


# --------------------------------------------------------------------------- distributed
@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None, host="127.0.0.1")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_local_cluster_runs_compiled_programs(client):
    x = rng.standard_normal((61, 8))                # chunks of 10 rows and one of 1
    ln = LayerNorm(8)
    progs = [(export_dyn(gelu_chain, x), gelu_chain),
             (export_dyn(softmax, x), softmax),
             (ss.export(ln, (x,), dynamic_shapes={"x": (A, A)}), ln),
             (ss.export(mlp, (x,), dynamic_shapes={"x": (A, None)}), mlp),
             (export_dyn(centre, x), centre),
             (export_dyn(positives, x), positives)]
    dx = da.from_array(x, chunks=(10, 8))
    outs = [ep.compile(backend="dask")(dx) for ep, _ in progs]
    got = client.compute(outs, sync=True)
    for g, (_, f) in zip(got, progs):
        np.testing.assert_allclose(g, f(x), rtol=1e-10, atol=1e-12)
    # the tasks ran on the worker processes (kernels travel by source)
    assert set(client.run(lambda: len(
        __import__("symshape.codegen.dask_backend", fromlist=["Kernel"]).Kernel._cache) > 0)
        .values()) == {True}
    # a wrong global shape is refused before anything reaches the cluster
    with pytest.raises(ss.UserError, match=r"x.shape\[1\]: expected 8, got 7"):
        progs[3][0].compile(backend="dask")(da.zeros((61, 7), chunks=(10, 7)))


def test_local_cluster_jit_matmul_and_reshape(client):
    def f(a, b):
        return (a @ b).reshape(-1) + 1.0
    a, b = rng.standard_normal((12, 9)), rng.standard_normal((9, 5))
    cf = ss.compile(f, backend="dask")
    out = cf(da.from_array(a, chunks=(5, 4)), da.from_array(b, chunks=(4, 5)))
    np.testing.assert_allclose(client.compute(out, sync=True), f(a, b), rtol=1e-10)


def test_readme_program_scales_to_the_cluster(client):
    import re
    page = open(os.path.join(REPO, "docs", "backends.md")).read()
    section = page.split("## Dask: programs over chunked arrays", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    ns = {"__name__": "readme"}                 # the module-scoped cluster stands in
    exec(compile(code, "docs/backends.md", "exec"), ns)
    out = ss.compile(ns["layer_norm"], backend="dask")(ns["x"])
    assert out.chunks == ns["x"].chunks
    np.testing.assert_allclose(client.compute(out, sync=True), ns["y"], rtol=1e-10)


def test_kernels_pickle_by_source():
    from symshape.codegen import dask_backend
    x = rng.standard_normal((10, 4))
    c = export_dyn(gelu_chain, x).compile(backend="dask")
    out = c(da.from_array(x, chunks=(5, 4)))
    kernels = {v[0] for v in dict(out.__dask_graph__()).values()
               if isinstance(v, tuple) and isinstance(v[0], dask_backend.Kernel)}
    assert kernels
    k = pickle.loads(pickle.dumps(next(iter(kernels))))
    np.testing.assert_allclose(k(x[:5]), gelu_chain(x[:5]))


# --------------------------------------------------------------------------- dask, made generator
def _made_rng_programs():
    def one(x):
        rng = np.random.default_rng(0)
        return x + rng.standard_normal(x.shape)

    def two_draws(x):
        rng = np.random.default_rng(3)
        a = rng.uniform(size=x.shape)
        b = rng.normal(1.0, 2.0, size=(x.shape[0], 1))
        return (x * a + b).sum(1), a

    def legacy(x):
        rng = np.random.RandomState(5)
        return np.tanh(x) * rng.standard_normal(size=x.shape)

    def ints(x):
        rng = np.random.default_rng(1)
        y = x * 2
        return y + rng.integers(0, 10, size=y.shape)
    return [one, two_draws, legacy, ints]


@pytest.mark.parametrize("f", _made_rng_programs(), ids=lambda f: f.__name__)
def test_dask_generator_made_in_the_program_gives_eager_numbers(f):
    da = pytest.importorskip("dask.array")
    ep = ss.export(f, (np.arange(24.0).reshape(8, 3),), dynamic_shapes={"x": (A, None)})
    c = ep.compile(backend="dask")
    for n, chunks in ((8, (3, 3)), (8, (8, 1)), (11, (2, 2)), (5, (5, 3))):
        x = np.arange(n * 3.0).reshape(n, 3)
        want = f(x)
        for _ in range(2):          # each call makes its generator afresh, as eager code
            got = c(da.from_array(x, chunks=chunks))
            if isinstance(want, tuple):
                for w, g in zip(want, got):
                    np.testing.assert_array_equal(g.compute(), w)
            else:
                np.testing.assert_array_equal(got.compute(), want)
