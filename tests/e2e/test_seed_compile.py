"""The reference behaviours of the compile side (torch.compile's counterpart): seed examples
21, 22 and 23, in NumPy."""
import warnings

import numpy as np
import pytest

import symshape as ss
from corpus.breaks import toy

TOY_FILE = toy.__code__.co_filename   # messages name the line in the user's file

RNG = np.random.default_rng(21)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ----------------------------------------------------------------------------- 21
def f21(x, y):
    return np.maximum(x @ y, 0) + x.sum(axis=1, keepdims=True)


def test_21_guards_and_recompilation():
    y = f32(4, 3)
    cf = ss.compile(f21)
    out = cf(f32(5, 4), y)
    assert len(cf.variants) == 1 and cf.recompile_reasons == []
    x8 = f32(8, 4)
    np.testing.assert_array_equal(cf(x8, y), f21(x8, y))        # new shape: recompiles
    assert len(cf.variants) == 2
    assert cf.recompile_reasons == ["x.shape[0] == 5 (got 8)"]
    x13 = f32(13, 4)
    np.testing.assert_array_equal(cf(x13, y), f21(x13, y))      # automatic dynamic
    assert len(cf.variants) == 2 and len(cf.recompile_reasons) == 1
    assert cf.variants[1].input_shapes["x"] == "f32[s0, 4]"
    assert out.shape == (5, 3)
    report = cf.report()
    assert "variant 0" in report and "variant 1" in report
    assert "x.shape[0] == 5 (got 8)" in report


def test_21_dynamic_false_recompiles_per_shape_up_to_a_limit():
    y = f32(4, 3)
    cf = ss.compile(f21, dynamic=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(2, 12):
            x = f32(n, 4)
            np.testing.assert_array_equal(cf(x, y), f21(x, y))
    assert len(cf.variants) == 8                                 # the default limit
    assert len(cf.recompile_reasons) == 7                        # one per recompile
    assert all(r.startswith("x.shape[0] == ") and "(got " in r
               for r in cf.recompile_reasons)
    assert cf.recompile_reasons[0] == "x.shape[0] == 2 (got 3)"
    assert cf.eager_calls == 2
    assert any("cache size limit" in str(m.message) for m in w)


# ----------------------------------------------------------------------------- 22


LINE = toy.__code__.co_firstlineno


def test_22_explain_reports_graphs_breaks_and_ops():
    a, b = f32(10), -np.abs(f32(10))
    e = ss.explain(toy, a, b)
    assert e.graph_count == 3
    assert e.graph_break_count == 2
    assert len(e.graphs) == e.graph_count
    assert e.break_reasons == [
        "%s:%d: call to print (a side effect: it runs eagerly, on every call)"
        % (TOY_FILE, LINE + 2),
        "%s:%d: data-dependent branch on array values" % (TOY_FILE, LINE + 3),
    ]
    assert e.op_count == sum(g.op_count for g in e.graphs) == 7
    text = str(e)
    assert "Graph Count: 3" in text and "Break Reasons" in text and "Op Count: 7" in text


def test_22_compile_runs_the_breaks_eagerly(capsys):
    cf = ss.compile(toy)
    a, b = f32(10), f32(10)
    for bb in (np.abs(b), -np.abs(b)):
        np.testing.assert_array_equal(cf(a, bb), toy(a, bb))
    assert capsys.readouterr().out == "woo\n" * 4


def test_22_fullgraph_raises_on_the_first_break():
    with pytest.raises(ss.UserError, match=r"breaks.py:%d: call to print"
                       % (LINE + 2)):
        ss.compile(toy, fullgraph=True)(f32(10), f32(10))


# ----------------------------------------------------------------------------- 23
def numpy_fn(X, Y):
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


def test_23_numpy_backend_matches_eager():
    cf = ss.compile(numpy_fn, backend="numpy")
    for n, d in ((10, 8), (64, 32), (7, 8)):
        X, Y = f32(n, d), f32(n, d)
        got = cf(X, Y)
        want = numpy_fn(X, Y)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    ep = ss.export(numpy_fn, (f32(10, 8), f32(10, 8)),
                   dynamic_shapes={"X": (ss.Dim.AUTO, ss.Dim.AUTO),
                                   "Y": (ss.Dim.AUTO, ss.Dim.AUTO)})
    c = ep.compile(backend="numpy")
    X, Y = f32(300, 40), f32(300, 40)
    np.testing.assert_array_equal(c(X, Y), numpy_fn(X, Y))
    assert "def numpy_fn(X, Y):" in c.source


def test_23_cupy_backend_generates_fused_kernels_without_a_device():
    ep = ss.export(numpy_fn, (f32(10, 8), f32(10, 8)),
                   dynamic_shapes={"X": (ss.Dim.AUTO, ss.Dim.AUTO),
                                   "Y": (ss.Dim.AUTO, ss.Dim.AUTO)})
    c = ep.compile(backend="cupy")
    assert c.source.count('extern "C" __global__') == 1       # multiply + sum: one kernel
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(ss.UserError, match="needs CuPy"):
            c(f32(10, 8), f32(10, 8))
