"""The real-model corpus and the seed examples exported to ONNX and run in onnxruntime at
several dynamic shapes, matching eager NumPy, and rejecting violating shapes in-graph;
control flow (``ss.cond`` / ``ss.map`` / ``ss.while_loop``) and data-dependent sizes."""
import copy

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from _bench import M as bench_models
from corpus.registry import PROGRAMS
from corpus.seeds import ARGS10, basic, model10, model12
from onnx_compare import checked_model, feeds, same_results, session

RNG = np.random.default_rng(5)
#: programs whose ops have no ONNX form: to_onnx must say which op and line
REFUSED = {"pca transform (functions, eigh)": "linalg_eigh", "pca whiten": "linalg_eigh"}


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_corpus_program_runs_in_onnxruntime_at_every_shape(prog):
    ep = ss.export(prog.fn, prog.make(**prog.export_at), dynamic_shapes=prog.spec)
    if prog.name in REFUSED:
        with pytest.raises(ss.UserError, match=REFUSED[prog.name]):
            ep.to_onnx()
        return
    checked_model(ep)
    run = ep.compile(backend="onnxruntime")
    for sizes in prog.check_at:
        args = prog.make(**sizes)
        same_results(run(*args), prog.fn(*args), rtol=1e-9)


@pytest.mark.parametrize("prog", [p for p in PROGRAMS if p.name not in REFUSED],
                         ids=[p.name for p in PROGRAMS if p.name not in REFUSED])
def test_corpus_program_rejects_violating_shapes_in_graph(prog):
    ep = ss.export(prog.fn, prog.make(**prog.export_at), dynamic_shapes=prog.spec)
    model = checked_model(ep)
    s = session(model)
    key = sorted(prog.export_at)[0]
    for bad in (1, 0, 10 ** 4):
        try:
            args = prog.make(**dict(prog.export_at, **{key: bad}))
            ep.module()(*args)
        except ss.UserError:
            break
        except Exception:
            continue
    else:
        pytest.skip("no violating size of %s among 0, 1, 10**4" % key)
    with pytest.raises(Exception, match="symshape guard failed|Got invalid dimensions"):
        s.run(None, feeds(model, args, ep))


def test_llama_kv_cache_is_written_back_across_calls():
    from corpus import llama
    model = llama.Llama(max_batch=4, max_seq=32)
    ref = copy.deepcopy(model)
    toks = RNG.integers(0, 50, (2, 5))
    ep = ss.export(model.forward, (toks, 0),
                   dynamic_shapes={"tokens": (Dim("batch", max=4), Dim("seq", max=32)),
                                   "start_pos": None})
    run = ep.compile(backend="onnxruntime")
    for b, t in ((2, 3), (4, 7), (3, 2)):
        toks = RNG.integers(0, 50, (b, t))
        same_results(run(toks, 0), ref.forward(toks, 0), rtol=1e-9)
        caches = [p for p in ep.state if "cache" in p]
        assert caches
        for path in caches:
            got = eval(path, {}, {"self": model})
            assert got is ep.state[path]          # written in place, as eager does
            np.testing.assert_allclose(got, eval(path, {}, {"self": ref}), rtol=1e-9,
                                       atol=1e-12)


@pytest.mark.parametrize("name", ["mlp", "transformer_block"])
def test_benchmark_models_run_in_onnxruntime(name):
    fn = getattr(bench_models, name)
    args = getattr(bench_models, {"mlp": "MLP_ARGS", "transformer_block": "TB_ARGS"}[name])
    spec = getattr(bench_models, {"mlp": "MLP_SPEC", "transformer_block": "TB_SPEC"}[name])
    ep = ss.export(fn, args, dynamic_shapes=spec)
    model = checked_model(ep)
    s = session(model)
    for scale in (1, 3):
        new = tuple(RNG.standard_normal((a.shape[0] * scale,) + a.shape[1:]).astype(a.dtype)
                    for a in args)
        same_results(s.run(None, feeds(model, new)), fn(*new), rtol=1e-4)


# --------------------------------------------------------------------------- seeds
def test_seed_01_basic_with_lifted_constants_and_out():
    ep = ss.export(basic, (f32(8, 100), f32(8, 100)))
    m = checked_model(ep)
    assert sorted(i.name for i in m.graph.initializer) == ["W1", "b1"]
    x, y = f32(8, 100), f32(8, 100)
    same_results(session(m).run(None, feeds(m, (x, y))), basic(x, y), rtol=1e-5)


def test_seed_05_cond_takes_the_branch_of_the_data():
    def f(x):
        return ss.cond(x.sum() > 0, np.sin, np.cos, [x])

    ep = ss.export(f, (f32(4, 3),), dynamic_shapes={"x": (Dim.AUTO, None)})
    m = checked_model(ep)
    assert any(n.op_type == "If" for n in m.graph.node)
    s = session(m)
    for x in (np.abs(f32(5, 3)), -np.abs(f32(2, 3))):
        same_results(s.run(None, feeds(m, (x,))), f(x))


def test_seed_06_08_ranges_and_derived_dims():
    dx = Dim("dx", min=3, max=6)
    ep = ss.export(lambda x, y: x + y[1:], (f32(4), f32(5)),
                   dynamic_shapes={"x": (dx,), "y": (dx + 1,)})
    m = checked_model(ep)
    s = session(m)
    x, y = f32(6), f32(7)
    same_results(s.run(None, feeds(m, (x, y))), x + y[1:])
    with pytest.raises(Exception, match=r"y.shape\[0\] == x.shape\[0\] \+ 1"):
        s.run(None, feeds(m, (f32(4), f32(6))))
    with pytest.raises(Exception, match=r"\[3, 6\] \(Dim dx\)"):
        s.run(None, feeds(m, (f32(7), f32(8))))


def test_seed_10_auto_and_12_guards():
    ep = ss.export(model10, ARGS10, dynamic_shapes={"w": (Dim.AUTO, Dim.AUTO), "x": (Dim.AUTO,),
                                                    "y": (Dim.AUTO, Dim.AUTO),
                                                    "z": (Dim.AUTO,)})
    m = checked_model(ep)
    args = (f32(3, 5).astype(np.float64), np.ones(7), np.ones((2, 7)), np.ones(14))
    same_results(session(m).run(None, feeds(m, args)), model10(*args))
    ep12 = ss.export(model12, (np.ones((18, 5)), np.ones(16), np.ones((3, 16)), np.ones(48)),
                     dynamic_shapes={"w": (Dim.AUTO, Dim.AUTO), "x": (Dim.AUTO,),
                                     "y": (Dim.AUTO, Dim.AUTO), "z": (Dim.AUTO,)})
    m12 = checked_model(ep12)
    args = (np.ones((22, 5)), np.ones(20), np.ones((2, 20)), np.ones(40))
    same_results(session(m12).run(None, feeds(m12, args)), model12(*args))
    with pytest.raises(Exception, match="symshape guard failed"):
        session(m12).run(None, feeds(m12, (np.ones((12, 5)), np.ones(10), np.ones((2, 10)),
                                           np.ones(20))))


def test_seed_14_divisibility():
    dx = Dim("dx", min=4, max=256)
    ep = ss.export(lambda x: x * 2, (f32(16, 3),), dynamic_shapes={"x": (4 * dx, None)})
    m = checked_model(ep)
    s = session(m)
    same_results(s.run(None, feeds(m, (np.ones((20, 3), np.float32),))),
                 np.full((20, 3), 2, np.float32))
    with pytest.raises(Exception, match=r"x.shape\[0\] == 4\*dx"):
        s.run(None, feeds(m, (np.ones((22, 3), np.float32),)))


def test_seed_17_data_dependent_sizes():
    def f(x):
        y = x[x > 0]
        return y * y.shape[0], np.nonzero(x)[0] + 1

    ep = ss.export(f, (f32(6),), dynamic_shapes={"x": (Dim.AUTO,)})
    m = checked_model(ep)
    s = session(m)
    for n in (2, 9, 30):
        x = f32(n)
        same_results(s.run(None, feeds(m, (x,))), f(x))


# --------------------------------------------------------------------------- control flow
def test_cond_on_a_size_map_and_while_loop():
    def f(x, w):
        a = ss.cond(x.shape[0] > 4, lambda v: v * 2, lambda v: v - 1, [x])
        b = ss.map(lambda r, w: np.tanh(r @ w), x, w)

        def c(i, v):
            return i < 3

        def body(i, v):
            return i + 1, v * 0.5 + 1

        _, d = ss.while_loop(c, body, (np.array(0), x))
        return a, b, d

    ep = ss.export(f, (f32(6, 3), f32(3, 2)), dynamic_shapes={"x": (Dim.AUTO, None), "w": None})
    m = checked_model(ep)
    ops = {n.op_type for n in m.graph.node}
    assert {"If", "Scan", "Loop"} <= ops
    s = session(m)
    for n in (2, 4, 9):
        args = (f32(n, 3), f32(3, 2))
        same_results(s.run(None, feeds(m, args)), f(*args), rtol=1e-5)
