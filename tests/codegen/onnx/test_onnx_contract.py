"""The contract travels in the model file: dim_params in the user's names, in-graph guards
failing in onnxruntime with the guard's text, ``symshape.contract`` / ``symshape.signature``
metadata, names and state as the signature says; and ``backend="onnxruntime"`` behind
module()'s input check, writing state back."""
import json
import sys

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

from onnx_compare import checked_model, feeds, same_results, session

RNG = np.random.default_rng(3)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def meta(model):
    return {p.key: json.loads(p.value) for p in model.metadata_props}


def dims_of(vi):
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def violation(model, args):
    with pytest.raises(Exception) as e:
        session(model).run(None, feeds(model, args))
    return str(e.value)


# --------------------------------------------------------------------------- sizes
def test_dim_params_speak_the_users_names_everywhere():
    batch = Dim("batch", max=64)

    def f(x, y):
        h = np.concatenate([x, y[1:]], axis=0)        # 2*batch + 1 - 1 + batch rows
        return h[::2] * 2.0, x.reshape(-1)

    ep = ss.export(f, (f32(4, 3), f32(9, 3)),
                   dynamic_shapes={"x": (batch, None), "y": (2 * batch + 1, None)})
    m = checked_model(ep)
    assert dims_of(m.graph.input[0]) == ["batch", 3]
    assert dims_of(m.graph.input[1]) == ["2*batch + 1", 3]
    texts = {d for vi in list(m.graph.value_info) + list(m.graph.output) for d in dims_of(vi)
             if isinstance(d, str)}
    assert "3*batch" in texts and "3*batch" in dims_of(m.graph.output[1])
    assert all("s0" not in t and "s1" not in t for t in texts), texts
    assert len(m.graph.value_info) >= 4
    s = session(m)
    for b in (2, 5):
        args = (f32(b, 3), f32(2 * b + 1, 3))
        same_results(s.run(None, feeds(m, args)), f(*args))


def test_auto_axes_keep_their_symbol_names_and_unbacked_sizes_are_u():
    ep = ss.export(lambda x: x[x > 0] * 2, (f32(6),), dynamic_shapes={"x": (Dim.AUTO,)})
    m = checked_model(ep)
    assert dims_of(m.graph.input[0]) == ["s0"]
    assert dims_of(m.graph.output[0]) == ["u0"]


# --------------------------------------------------------------------------- guards
def test_range_relation_and_static_violations_fail_in_graph_with_the_guard():
    d0, inner = Dim("d0"), Dim("inner", min=4, max=18)
    ep = ss.export(lambda x, y: x @ y, (f32(2, 16), f32(16, 4)),
                   dynamic_shapes={"x": (d0, inner), "y": (inner, None)})
    m = checked_model(ep)
    x, y = f32(3, 5), f32(5, 4)
    same_results(session(m).run(None, feeds(m, (x, y))), x @ y, rtol=1e-5)
    msg = violation(m, (f32(3, 20), f32(20, 4)))
    assert "symshape guard failed: x.shape[1] in [4, 18] (Dim inner)" in msg
    msg = violation(m, (f32(3, 8), f32(6, 4)))
    assert "symshape guard failed: y.shape[0] == x.shape[1]" in msg
    msg = violation(m, (f32(1, 8), f32(8, 4)))
    assert "x.shape[0] in [2, int_oo] (Dim d0)" in msg


def test_divisibility_and_residual_guards_name_the_users_line():
    def f(x, y):
        ss.check(x.shape[0] + y.shape[0] <= 100)
        return x.reshape(4, -1).sum(axis=0), y * 2

    ep = ss.export(f, (f32(8), f32(5)), dynamic_shapes={"x": (Dim.AUTO,), "y": (Dim.AUTO,)})
    assert ep.guards
    m = checked_model(ep)
    x, y = f32(12), f32(3)
    same_results(session(m).run(None, feeds(m, (x, y))), f(x, y))
    msg = violation(m, (f32(10), f32(3)))
    assert "symshape guard failed: x.shape[0] == 4*" in msg
    msg = violation(m, (f32(96), f32(8)))
    assert "x.shape[0] + y.shape[0] <= 100" in msg and "test_onnx_contract.py:" in msg
    assert meta(m)["symshape.contract"]["guards"] == ep.guards


def test_guards_false_has_no_guard_nodes():
    ep = ss.export(lambda x: x + 1, (f32(4),), dynamic_shapes={"x": (Dim("n", max=9),)})
    assert any(n.name.startswith("symshape guard") for n in checked_model(ep).graph.node)
    assert not any(n.name.startswith("symshape guard")
                   for n in checked_model(ep, guards=False).graph.node)


def test_data_dependent_check_fails_in_graph_once_its_size_is_known():
    def f(x):
        y = x[x > 0]
        ss.check(y.shape[0] >= 2)
        return y.sum()

    ep = ss.export(f, (np.array([1.0, 2.0, -1.0]),), dynamic_shapes={"x": (Dim.AUTO,)})
    m = checked_model(ep)
    s = session(m)
    same_results(s.run(None, feeds(m, (np.array([3.0, 1.0, -1.0, 2.0]),))), 6.0)
    msg = violation(m, (np.array([3.0, -1.0, -2.0]),))
    assert "symshape guard failed" in msg


# --------------------------------------------------------------------------- metadata
def test_contract_and_signature_metadata():
    W = f32(3, 4)
    cache = np.zeros((4, 4), np.float32)

    def f(x, k: int):
        cache[:x.shape[0]] = x @ W
        return x @ W + k, x.sum()

    ep = ss.export(f, (f32(2, 3), 5), dynamic_shapes={"x": (Dim("rows", max=4), None),
                                                      "k": None})
    m = checked_model(ep)
    md = meta(m)
    assert md["symshape.contract"] == {
        "symbols": [{"name": "rows", "axes": ["x.shape[0] = rows"], "range": [2, 4]}],
        "guards": []}
    sig = md["symshape.signature"]
    assert sig["inputs"] == [{"name": "x", "kind": "USER_INPUT", "path": "x"},
                             {"name": "k", "kind": "USER_INPUT", "path": "k"},
                             {"name": "cache", "kind": "STATE", "path": "cache"}]
    assert sig["outputs"] == [{"name": "output_0", "kind": "USER_OUTPUT", "path": "[0]"},
                              {"name": "output_1", "kind": "USER_OUTPUT", "path": "[1]"},
                              {"name": "cache:new", "kind": "STATE_MUTATION", "path": "cache"}]
    assert [i.name for i in m.graph.initializer] == ["W"]
    k = [i for i in m.graph.input if i.name == "k"][0]
    assert k.type.tensor_type.elem_type == 7 and dims_of(k) == []
    assert [o.name for o in m.graph.output] == ["output_0", "output_1", "cache:new"]
    s = session(m)
    x = f32(3, 3)
    got = s.run(None, {"x": x, "k": np.array(5), "cache": np.zeros((4, 4), np.float32)})
    np.testing.assert_allclose(got[2][:3], x @ W, rtol=1e-6)
    bad = {"x": x, "k": np.array(6), "cache": np.zeros((4, 4), np.float32)}
    with pytest.raises(Exception, match="k == 5"):
        s.run(None, bad)


def test_to_onnx_writes_the_file(tmp_path):
    import onnx
    ep = ss.export(lambda x: x * 2, (f32(3),), dynamic_shapes={"x": (Dim.AUTO,)})
    path = tmp_path / "m.onnx"
    m = ep.to_onnx(path)
    assert onnx.load(str(path)) == m


def test_opset_out_of_range_and_missing_extra_are_user_errors(monkeypatch):
    ep = ss.export(lambda x: x * 2, (f32(3),), dynamic_shapes={"x": (Dim.AUTO,)})
    with pytest.raises(ss.UserError, match="opset"):
        ep.to_onnx(opset=13)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(ss.UserError, match=r"symshape\[onnx\]"):
        ep.to_onnx()
    with pytest.raises(ss.UserError, match=r"symshape\[onnx\]"):
        ep.compile(backend="onnxruntime")


# --------------------------------------------------------------------------- the backend
def test_onnxruntime_backend_checks_inputs_as_module_does():
    ep = ss.export(lambda x, y: x @ y, (f32(2, 6), f32(6, 3)),
                   dynamic_shapes={"x": (Dim("b"), Dim("k", max=8)), "y": (Dim("k", max=8), None)})
    run = ep.compile(backend="onnxruntime")
    x, y = f32(5, 7), f32(7, 3)
    same_results(run(x, y), x @ y, rtol=1e-5)
    for bad in ((f32(5, 9), f32(9, 3)), (f32(5, 7), f32(6, 3)), (f32(5, 7, 1), f32(7, 3)),
                (f32(5, 7).astype(np.float64), f32(7, 3))):
        with pytest.raises(ss.UserError) as want:
            ep.module()(*bad)
        with pytest.raises(ss.UserError) as got:
            run(*bad)
        assert str(got.value) == str(want.value)
    assert run.backend == "onnxruntime" and "_S.run" in run.source
    assert run.session is run.session


class Cache:
    def __init__(self):
        self.k = np.zeros((2, 8, 4))
        self.w = RNG.standard_normal((4, 4))

    def step(self, x, start: int):
        self.k[:, start:start + x.shape[1]] = x @ self.w
        return self.k[:, :start + x.shape[1]].sum(axis=1)


def test_onnxruntime_backend_writes_state_back_as_module_does():
    import copy
    model = Cache()
    ref = copy.deepcopy(model)
    ep = ss.export(model.step, (RNG.standard_normal((2, 3, 4)), 0),
                   dynamic_shapes={"x": (None, Dim("t", max=4), None), "start": None})
    run = ep.compile(backend="onnxruntime")
    x = RNG.standard_normal((2, 2, 4))
    k_before = model.k
    same_results(run(x, 0), ref.step(x, 0), rtol=1e-12)
    assert model.k is k_before
    np.testing.assert_allclose(model.k, ref.k, rtol=1e-12)
    x2 = RNG.standard_normal((2, 4, 4))
    same_results(run(x2, 0), ref.step(x2, 0), rtol=1e-12)
    np.testing.assert_allclose(model.k, ref.k, rtol=1e-12)


def test_user_input_mutation_is_written_back():
    def f(x):
        x[0] = 3.0
        return x * 2

    ep = ss.export(f, (f32(4, 2),), dynamic_shapes={"x": (Dim.AUTO, None)})
    m = checked_model(ep)
    assert meta(m)["symshape.signature"]["outputs"][-1]["kind"] == "USER_INPUT_MUTATION"
    run = ep.compile(backend="onnxruntime")
    a = f32(5, 2)
    b = a.copy()
    same_results(run(a), f(b))
    np.testing.assert_array_equal(a, b)


class Recurrent:
    def __init__(self):
        self.h = np.zeros((1, 4))
        self.w = RNG.standard_normal((4, 4)) * 0.5
        self.steps = 0

    def step(self, x):
        self.h = np.tanh(self.h @ self.w + x.sum(axis=0))
        return self.h.sum(axis=1)

    def counted(self, x):
        self.steps += 1
        return x * 2


def test_a_rebound_state_array_is_an_input_and_a_state_mutation_output():
    import copy
    model = Recurrent()
    ref = copy.deepcopy(model)
    ep = ss.export(model.step, (RNG.standard_normal((3, 4)),),
                   dynamic_shapes={"x": (Dim.AUTO, None)})
    sig = meta(checked_model(ep))["symshape.signature"]
    assert {"name": "self.h", "kind": "STATE", "path": "self.h"} in sig["inputs"]
    assert sig["outputs"][-1] == {"name": "self.h:new", "kind": "STATE_MUTATION",
                                  "path": "self.h", "mutation": "rebind"}
    run = ep.compile(backend="onnxruntime")
    for n in (3, 5, 2):
        x = RNG.standard_normal((n, 4))
        same_results(run(x), ref.step(x), rtol=1e-12)
        np.testing.assert_allclose(model.h, ref.h, rtol=1e-12)


def test_python_state_writes_a_model_cannot_replay_are_user_errors():
    model = Recurrent()
    ep = ss.export(model.counted, (f32(3),), dynamic_shapes={"x": (Dim.AUTO,)})
    with pytest.raises(ss.UserError, match=r"self.steps.*ep.compile\(\)"):
        ep.to_onnx()


def test_ss_compile_runs_onnxruntime_behind_the_jit():
    def f(x):
        return np.tanh(x) * 2 + x.sum()

    cf = ss.compile(f, backend="onnxruntime")
    for n in (3, 4, 5, 6):
        x = RNG.standard_normal((n, 3))
        same_results(cf(x), f(x), rtol=1e-12)
    assert cf.recompile_reasons == ["x.shape[0] == 3 (got 4)"]


def test_a_loaded_program_exports_the_same_model(tmp_path):
    ep = ss.export(lambda x, y: (x @ y).sum(axis=0), (f32(4, 3), f32(3, 2)),
                   dynamic_shapes={"x": (Dim("rows"), None), "y": None})
    ss.save(ep, tmp_path / "p.json")
    loaded = ss.load(tmp_path / "p.json")
    m = checked_model(loaded)
    x, y = f32(6, 3), f32(3, 2)
    same_results(session(m).run(None, feeds(m, (x, y))), (x @ y).sum(axis=0), rtol=1e-5)
    assert meta(m) == meta(checked_model(ep))


def test_custom_op_is_refused_with_what_to_do_then_exports_with_a_translation():
    from symshape.codegen.onnx import register_translation
    from symshape.codegen.onnx.translations import TRANSLATIONS

    @ss.custom_op("onnxtest::scale", mutates_args=())
    def scale(x: np.ndarray, k: float) -> np.ndarray:
        return x * k

    @scale.register_fake
    def _(x, k):
        return np.empty_like(x)

    ep = ss.export(lambda x: scale(x, 3.0) + 1, (f32(4),), dynamic_shapes={"x": (Dim.AUTO,)})
    with pytest.raises(ss.UserError, match=r"onnxtest::scale.*register_translation"):
        ep.to_onnx()
    register_translation("onnxtest::scale",
                         lambda g, x, k: g.op("Mul", x, g.const(k, np.float32)))
    try:
        m = checked_model(ep)
        x = f32(7)
        same_results(session(m).run(None, feeds(m, (x,))), scale(x, 3.0) + 1)
    finally:
        TRANSLATIONS.pop("onnxtest::scale")
