"""Loops over a symbolic count (issue 41) under ``backend="dask"``: the ``for_loop`` node
runs per chunk along a batch axis its body keeps local (elementwise ops, row reductions),
its operands whole along the others, else as one task on the whole arrays it reads; its
carried values and stacked rows come back as dask arrays, equal to eager NumPy at several
counts and chunkings."""
import numpy as np
import pytest

import symshape as ss

from loop_programs import assert_same, cumulative, leapfrog, make_elman
from loop_programs import written_plus_one as written

da = pytest.importorskip("dask.array")

RNG = np.random.default_rng(5)
W = RNG.standard_normal((4, 4)) * 0.4
U = RNG.standard_normal((4, 4)) * 0.4
elman = make_elman(W, U)


def batched(x):
    h = np.zeros(x.shape[1:])
    outs = []
    for t in range(x.shape[0]):
        h = np.tanh(x[t] * 0.5 + h * 0.9)
        outs.append(h)
    return np.stack(outs), h.sum()


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g in got:
        assert isinstance(g, da.Array), type(g)
    assert_same(tuple(g.compute(scheduler="sync") for g in got), want, 1e-12, 1e-12)


@pytest.mark.parametrize("f, lo", [(elman, 1), (cumulative, 0), (written, 0)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_loop_programs_match_eager_at_any_chunking(f, lo):
    ep = ss.export(f, (RNG.standard_normal((5, 4)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=lo)}})
    c = ep.compile(backend="dask")
    for n in sorted({lo, 1, 5, 37}):
        x = RNG.standard_normal((n, 4))
        for chunks in ((max(n, 1), 4), (3, 4), (2, 2)):
            _same(c(da.from_array(x, chunks=chunks)), f(x))


def test_a_loop_runs_per_chunk_along_a_batch_its_body_keeps_local():
    ep = ss.export(batched, (RNG.standard_normal((5, 6, 3)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=1), 1: ss.Dim("B")}})
    c = ep.compile(backend="dask")
    x = RNG.standard_normal((7, 10, 3))
    plans = {
        # chunked along the rows the loop walks: one task on the whole array
        (3, 10, 3): "one task: for_loop (for_loop)",
        # along the batch: the loop is part of a segment that runs per chunk
        (7, 4, 3): "segment (per chunk): zeros, for_loop, getitem_1, getitem_2",
        # along both: per batch chunk, the rows made whole
        (2, 4, 3): "per chunk, whole along the others: for_loop (for_loop)",
    }
    for chunks, step in plans.items():
        dx = da.from_array(x, chunks=chunks)
        assert step in c.plan(dx).describe()
        out = c(dx)
        _same(out, batched(x))
        if chunks[1] == 4:
            assert out[0].chunks[1] == (4, 4, 2)
            assert out[0].numblocks == (1, 3, 1)


def _mixes_the_batch(x):
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = np.tanh(x[t] + h[::-1] * 0.5)       # reads the batch reversed: not local
    return h


def test_a_body_that_mixes_the_batch_is_one_task():
    ep = ss.export(_mixes_the_batch, (RNG.standard_normal((5, 6)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=0), 1: ss.Dim("B")}})
    c = ep.compile(backend="dask")
    x = RNG.standard_normal((7, 10))
    for chunks in ((7, 4), (2, 3)):
        dx = da.from_array(x, chunks=chunks)
        assert "one task: for_loop (for_loop)" in c.plan(dx).describe()
        _same(c(dx), _mixes_the_batch(x))


def test_count_from_an_integer_input():
    q, p = RNG.standard_normal(3), RNG.standard_normal(3)
    ep = ss.export(leapfrog, (q, p, 7, 0.1), dynamic_shapes={
        "q": None, "p": None, "n": ss.Dim("n", min=0), "dt": None})
    c = ep.compile(backend="dask")
    for n in (0, 1, 5, 30):
        _same(c(da.from_array(q), da.from_array(p), n, 0.1), leapfrog(q, p, n, 0.1))


def batched_rows(x):
    h = np.zeros(x.shape[1:])
    outs = []
    for t in range(x.shape[0]):
        h = np.tanh(x[t] * 0.5 + h * 0.9)
        outs.append(h)
    return np.stack(outs)


def test_chunkable_axes_of_a_loop_program_name_the_batch():
    ep = ss.export(batched_rows, (RNG.standard_normal((5, 6, 3)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=1), 1: ss.Dim("B")}})
    assert ss.chunkable_axes(ep) == {"x": (1,)}
    x = RNG.standard_normal((6, 9, 3))
    dx = da.from_array(x, chunks=(6, 2, 3))
    c = ep.compile(backend="dask")
    assert c.plan(dx).describe().startswith("segment (per chunk): zeros, for_loop, getitem")
    _same(c(dx), batched_rows(x))


def written_wide(x):
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        y[t] = np.sin(x[t]) + t
    return y


def written_part(x):
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        y[t, 1:] = np.sin(x[t, 1:]) + t      # a window of the batch: not local
    return y


def test_writes_into_the_loops_array_along_the_batch():
    spec = {"x": {0: ss.Dim("T", min=0), 1: ss.Dim("B")}}
    x = RNG.standard_normal((6, 9))
    dx = da.from_array(x, chunks=(2, 4))
    c = ss.export(written_wide, (RNG.standard_normal((5, 6)),), dynamic_shapes=spec) \
        .compile(backend="dask")
    assert "per chunk, whole along the others: for_loop" in c.plan(dx).describe()
    _same(c(dx), written_wide(x))
    c = ss.export(written_part, (RNG.standard_normal((5, 6)),), dynamic_shapes=spec) \
        .compile(backend="dask")
    assert "one task: for_loop" in c.plan(dx).describe()
    _same(c(dx), written_part(x))
    for n in (0, 1):
        z = RNG.standard_normal((n, 9))
        _same(c(da.from_array(z, chunks=(1, 4))), written_part(z))
