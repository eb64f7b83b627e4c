"""``ss.compile``: guard-keyed variants, recompile reasons, automatic dynamic, cache limit,
frozen mode, reports, cheap dispatch, and graph breaks run eagerly (``ss.explain``)."""
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape.codegen.jit import RecompileError, RecompileLimitWarning

from corpus.breaks import toy

TOY_FILE = toy.__code__.co_filename   # messages name the line in the user's file

RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a, b, equal_nan=True)


def act(x, b):
    return np.tanh(x + b) * 2.0


# ----------------------------------------------------------------------------- variants
def test_automatic_dynamic_recompiles_once():
    cf = ss.compile(act)
    b = f32(3)
    for n in (5, 8, 12, 40):
        x = f32(n, 3)
        same(cf(x, b), act(x, b))
    assert len(cf.variants) == 2
    assert cf.recompile_reasons == ["x.shape[0] == 5 (got 8)"]
    v0, v1 = cf.variants
    assert v0.input_shapes == {"x": "f32[5, 3]", "b": "f32[3]"}
    assert v1.input_shapes == {"x": "f32[s0, 3]", "b": "f32[3]"}
    assert (v0.calls, v1.calls) == (1, 3)
    assert v1.reason == "x.shape[0] == 5 (got 8)" and v0.reason is None
    assert v0.compile_time > 0 and "x.shape[0] == 5" in v0.guards


def test_dynamic_false_recompiles_per_shape_up_to_the_limit():
    cf = ss.compile(act, dynamic=False)
    b = f32(3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(2, 14):
            x = f32(n, 3)
            same(cf(x, b), act(x, b))
    assert len(cf.variants) == 8
    assert cf.recompile_reasons == ["x.shape[0] == %d (got %d)" % (n, n + 1)
                                    for n in range(2, 9)]
    assert cf.eager_calls == 4
    lim = [x for x in w if issubclass(x.category, RecompileLimitWarning)]
    assert len(lim) == 1
    assert "cache size limit of 8" in str(lim[0].message)
    assert "x.shape[0] == 9 (got 10)" in str(lim[0].message)
    # each cached shape is dispatched to its own variant, most recent first
    before = [v.calls for v in cf.variants]
    cf(f32(2, 3), b)
    cf(f32(9, 3), b)
    after = [v.calls for v in cf.variants]
    assert after[0] == before[0] + 1 and after[7] == before[7] + 1
    assert len(cf.variants) == 8 and cf.eager_calls == 4


def test_cache_size_limit_is_configurable():
    cf = ss.compile(act, dynamic=False, cache_size_limit=2)
    b = f32(3)
    with pytest.warns(RecompileLimitWarning):
        for n in (2, 3, 4):
            cf(f32(n, 3), b)
    assert len(cf.variants) == 2 and cf.eager_calls == 1


def test_dynamic_true_is_dynamic_from_the_first_call():
    cf = ss.compile(act, dynamic=True)
    for n, m in ((5, 3), (9, 3), (9, 7), (30, 4)):
        x, b = f32(n, m), f32(m)
        same(cf(x, b), act(x, b))
    assert len(cf.variants) == 1
    assert cf.variants[0].input_shapes == {"x": "f32[s0, s1]", "b": "f32[s1]"}
    cf(f32(1, 3), f32(3))                     # 1 is outside the dynamic range [2, int_oo]
    assert len(cf.recompile_reasons) == 1
    assert cf.recompile_reasons[0].startswith("x.shape[0] >= 2 (got 1); nothing in the "
                                              "program depends on size 1")
    cf(f32(1, 3), f32(3))
    cf(f32(7, 3), f32(3))
    assert len(cf.variants) == 2


def test_dtype_rank_and_type_changes_are_reasons():
    cf = ss.compile(act)
    x, b = f32(4, 3), f32(3)
    cf(x, b)
    cf(x.astype(np.float64), b)
    cf(f32(4, 3, 1), b)
    cf(x, 2.0)
    assert cf.recompile_reasons == [
        "x.dtype == float32 (got float64)",
        "x.ndim == 2 (got 3)",
        "type(b) is numpy.ndarray (got float)",
    ]
    same(cf(x, 2.0), act(x, 2.0))


def test_int_inputs_become_dynamic_after_a_change():
    def scale(x, k):
        return x[:k] * k
    cf = ss.compile(scale)
    x = f32(10, 2)
    for k in (2, 3, 4, 5):
        same(cf(x, k), scale(x, k))
    assert cf.recompile_reasons == ["k == 2 (got 3)"]
    assert len(cf.variants) == 2


def test_kwargs_defaults_and_nested_inputs():
    def g(xs, opts, scale=2.0, *, shift=1.0):
        return xs[0] * scale + xs[1] - opts["bias"] + shift
    cf = ss.compile(g)
    xs, opts = [f32(4, 3), f32(4, 3)], {"bias": f32(3)}
    same(cf(xs, opts), g(xs, opts))
    same(cf(xs, opts, 3.0, shift=2.0), g(xs, opts, 3.0, shift=2.0))
    same(cf(xs, opts=opts, shift=2.0), g(xs, opts=opts, shift=2.0))
    assert cf.recompile_reasons[0] == "scale == 2.0 (got 3.0)"
    assert len(cf.variants) == 3
    xs2 = [f32(9, 3), f32(9, 3)]
    same(cf(xs2, opts), g(xs2, opts))
    assert cf.recompile_reasons[-1] == "xs[0].shape[0] == 4 (got 9)"


def test_frozen_refuses_new_variants():
    cf = ss.compile(act)
    b = f32(3)
    cf(f32(4, 3), b)
    cf.freeze()
    x = f32(4, 3)
    same(cf(x, b), act(x, b))
    with pytest.raises(RecompileError, match=r"variant 0: x.shape\[0\] == 4 \(got 6\)"):
        cf(f32(6, 3), b)
    assert isinstance(RecompileError("x"), ss.UserError)
    cf.freeze(on_miss="eager")
    x = f32(6, 3)
    same(cf(x, b), act(x, b))
    assert cf.eager_calls == 1 and len(cf.variants) == 1
    cf.unfreeze()
    cf(x, b)
    assert len(cf.variants) == 2
    with pytest.raises(ss.UserError):
        cf.freeze(on_miss="maybe")


def test_report_lists_variants_guards_reasons_and_times():
    cf = ss.compile(act)
    b = f32(3)
    cf(f32(5, 3), b)
    cf(f32(8, 3), b)
    text = cf.report()
    for part in ("ss.compile(act)", "variant 0: x: f32[5, 3], b: f32[3]",
                 "variant 1: x: f32[s0, 3], b: f32[3]", "guard: x.shape[0] == 5",
                 "guard: x.shape[0] in [2, int_oo]", "recompile reasons:",
                 "1. x.shape[0] == 5 (got 8)", "compiled in", "ms"):
        assert part in text, (part, text)
    assert "2 variants" in repr(cf)


def test_dispatch_is_compiled_python_most_recent_first():
    cf = ss.compile(act, dynamic=False)
    b = f32(3)
    cf(f32(2, 3), b)
    cf(f32(3, 3), b)
    src = cf.dispatch_source
    assert src.index("_core1(") < src.index("_core0(")
    assert "_miss(" in src and "break" in src


def test_warm_calls_neither_trace_nor_compile(monkeypatch):
    # The per-call cost is measured in benchmarks/compile_speed.py; here we only count: a warm
    # call goes through the generated dispatch and never reaches export again.
    def four(a, b, c, d):
        return a * b + c - d
    xs = [f32(4, 3) for _ in range(4)]
    cf = ss.compile(four)
    cf(*xs)
    import symshape.capture.export as ex

    def no_trace(*a, **k):
        raise AssertionError("a warm call traced again")
    monkeypatch.setattr(ex, "export", no_trace)
    for _ in range(50):
        same(cf(*xs), four(*xs))
    assert len(cf.variants) == 1 and not cf.recompile_reasons


def test_backend_and_arguments_are_validated():
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(ss.UserError, match="needs CuPy"):
            ss.compile(act, backend="cupy")(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(ss.UserError, match="dynamic must be"):
        ss.compile(act, dynamic="yes")
    with pytest.raises(ss.UserError, match="callable"):
        ss.compile(3)


def test_compiled_function_looks_like_f():
    import inspect
    cf = ss.compile(act)
    assert cf.__name__ == "act" and cf.__wrapped__ is act
    assert list(inspect.signature(cf).parameters) == ["x", "b"]


# ----------------------------------------------------------------------------- breaks


def test_graph_breaks_run_eagerly_every_call(capsys):
    cf = ss.compile(toy)
    a, b = f32(10), f32(10)
    for bb in (b, -b, np.abs(b), -np.abs(b)):
        same(cf(a, bb), toy(a, bb))
    assert capsys.readouterr().out == "woo\n" * 8
    # one view of what compiled: the variants of every segment (API: compile guards)
    seg_variants = [v for seg in cf.segments for v in seg.variants]
    assert len(cf.variants) == len(seg_variants) > 0
    assert {id(v) for v in cf.variants} == {id(v) for v in seg_variants}
    assert cf.break_calls == 4
    text = cf.report()
    assert "call to print" in text and "data-dependent branch" in text


def test_fullgraph_raises_at_the_first_break():
    cf = ss.compile(toy, fullgraph=True)
    with pytest.raises(ss.UserError) as e:
        cf(f32(10), f32(10))
    line = toy.__code__.co_firstlineno + 2
    assert "%s:%d: call to print" % (TOY_FILE, line) in str(e.value)
    assert 'print("woo")' in str(e.value)


def test_unsupported_calls_and_data_dependent_sizes_run_eagerly():
    def g(x, y):
        i = np.nonzero(x > 0)[0]
        if len(i) > 2:
            x = x[i] * 2
        z = np.sum(y, where=y > 0)                 # where= is not traced
        v = np.asarray(x).max()                    # conversion to NumPy
        return x + z + v, float(y.mean())
    cf = ss.compile(g)
    for x in (np.array([1.0, -1, 2, 3]), np.array([1.0, -1, -2, 3])):
        y = np.array([0.5, -2.0, 3.0])
        same(cf(x, y), g(x, y))
    assert cf.mode == "split" and cf.break_calls == 2


def test_mutation_through_breaks_writes_the_input():
    def h(x):
        x[0] = 7.0
        print("mutated")
        return x * 2
    a, b = f32(5), f32(5)
    a2 = a.copy()
    cf = ss.compile(h)
    same(cf(a), h(a2))
    same(a, a2)


def test_explain_reports_graphs_breaks_and_op_counts():
    a, b = f32(10), f32(10)
    e = ss.explain(toy, a, -np.abs(b))
    assert e.graph_count == 3 and e.graph_break_count == 2
    line = toy.__code__.co_firstlineno
    assert e.break_reasons[0].startswith("%s:%d: call to print" % (TOY_FILE, line + 2))
    assert e.break_reasons[1] == "%s:%d: data-dependent branch on array values" % (
        TOY_FILE, line + 3)
    assert [g.ops for g in e.graphs] == [["absolute", "add", "divide"], ["sum", "less"],
                                         ["multiply", "multiply"]]
    assert e.op_count == 7 and len(e.graphs) == 3
    text = str(e)
    assert "Graph Count: 3" in text and "Graph Break Count: 2" in text
    assert "Op Count: 7" in text and 'print("woo")' in text


def test_explain_of_a_clean_function_is_one_graph():
    e = ss.explain(act, f32(4, 3), f32(3))
    assert (e.graph_count, e.graph_break_count, e.op_count) == (1, 0, 3)
    assert e.break_reasons == []


def test_decorator_forms_and_nested_compiled_calls():
    @ss.compile(dynamic=True)
    def inner(x):
        return x * 2 + 1

    @ss.compile
    def outer(x, y):
        return inner(x) + y                      # inlined into outer's graph

    x, y = f32(4, 3), f32(3)
    same(outer(x, y), x * 2 + 1 + y)
    assert len(outer.variants) == 1 and outer.mode == "graph"
    assert inner.variants == [] and inner.mode == "graph"
    same(inner(x), x * 2 + 1)
    assert len(inner.variants) == 1


def test_prints_see_real_values_and_masked_writes_run_eagerly(capsys):
    def m(x):
        x[x > 0.5] = 0.0
        print("total", round(float(x.sum()), 3))
        return x * 3
    a = np.array([0.1, 0.9, 0.7, 0.2])
    b = a.copy()
    cf = ss.compile(m)
    same(cf(a), m(b))
    same(a, b)
    assert capsys.readouterr().out == "total 0.3\n" * 2
    assert any("float() of array values" in r for r in cf.break_reasons)


def test_segments_are_compiled_once_and_reused():
    cf = ss.compile(toy)
    a, b = f32(10), -np.abs(f32(10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(5):
            cf(a, b)
    before, branch, after = cf.segments            # x = ..., b = b * -1, return x * b
    assert [len(s.variants) for s in cf.segments] == [1, 1, 1]
    assert before.calls == 5 and branch.calls == 4 and after.calls == 4
    assert cf._segments.fns == {}                  # nothing traced through breaks


def test_container_layouts_are_guarded():
    def f(*xs, **kw):
        out = xs[0] * kw.get("scale", 1.0)
        for x in xs[1:]:
            out = out + x
        return out
    cf = ss.compile(f)
    a, b = f32(3, 2), f32(3, 2)
    for args, kw in (((a, b), {}), ((a, b), {"scale": 3.0}), ((a, b, a), {}), ((a,), {})):
        same(cf(*args, **kw), f(*args, **kw))
    assert cf.recompile_reasons == ["kw.keys() == {} (got {'scale'})",
                                    "len(xs) == 2 (got 3)", "len(xs) == 3 (got 1)"]
    assert "xs: tuple of length 2" in cf.variants[0].guards


def test_device_arrays_are_traced_through_host_copies():
    from symshape.codegen import jit

    class ndarray:                        # stands in for cupy.ndarray (no device here)
        __module__ = "cupy._core.core"
        __cuda_array_interface__ = {}

        def __init__(self, a):
            self.a, self.shape = a, a.shape

        def get(self):
            return self.a

    d = ndarray(np.arange(3.0))
    assert jit._is_device_array(d) and not jit._is_device_array(np.arange(3.0))
    host = jit._to_host(((d,), {"k": d}, 3))
    assert host[0][0] is d.a and host[1]["k"] is d.a and host[2] == 3


def layer(params, x, k=2):
    return params["w"] @ params["b"][0] + x * k


PARAMS = {"w": np.ones((3, 4)), "b": [np.arange(20.0).reshape(4, 5)]}


@pytest.mark.parametrize("order", [[2, 3, "array"], ["array", 2, 3], [2, "array", 4, "array"]])
def test_a_parameter_that_is_an_int_then_an_array(order):
    jit = ss.compile(layer)
    for i, k in enumerate(order):
        k = np.full(5, 1.5 + i) if k == "array" else k
        x = np.linspace(0, 1, 5)
        out = jit(PARAMS, x, k)
        ref = layer(PARAMS, x, k)
        assert out.dtype == ref.dtype
        np.testing.assert_allclose(out, ref)
