"""The reference behaviours of export: seed examples 1, 2 and 6-16 (export basics and dynamic
shapes)."""
import logging
import re

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from corpus.seeds import ARGS10, basic, model10, model12


def f32(*shape, fill=None):
    rng = np.random.default_rng(sum(shape) + len(shape))
    if fill is not None:
        return np.full(shape, fill, np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def user_error(fn, *args):
    with pytest.raises(ss.UserError) as e:
        fn(*args)
    return str(e.value)


def shapes_str(ep):
    return {k: tuple(str(s) for s in v) for k, v in ep.input_shapes.items()}


def ranges_str(ep):
    return {str(k): str(v) for k, v in ep.range_constraints.items()}


# --------------------------------------------------------------------------- 1, 2
def test_01_basic_export_is_functional_and_annotated():
    x, y = f32(8, 100), f32(8, 100)
    ep = ss.export(basic, (x, y))
    text = str(ep)
    assert "f32[8, 10]" in text and "f32[8, 100]" in text
    assert "# File: " in text and "code: h = (x + y) @ W1.T + b1" in text
    assert "code: np.maximum(h, 0, out=h)" in text
    assert "Range constraints: {}" in text
    for node in ep.graph.nodes:
        assert not node.op.endswith("_")
        assert "out" not in node.attrs
        assert node.source == "" or re.search(r"seeds\.py:\d+$", node.source)
    sig = ep.graph_signature
    assert sig.lifted_constants == ["W1", "b1"]
    assert sig.user_inputs == ["x", "y"]
    assert ep.range_constraints == {}
    x2, y2 = f32(8, 100), f32(8, 100)
    out = ep.module()(x2, y2)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, basic(x2, y2))


def test_02_static_by_default():
    ep = ss.export(basic, (f32(8, 100), f32(8, 100)))
    msg = user_error(ep.module(), f32(10, 100), f32(10, 100))
    assert msg.startswith("x.shape[0]: expected 8, got 10")


# --------------------------------------------------------------------------- 6
def test_06_ranges():
    def f(x):
        return np.maximum(x[:, 2:], 0)

    spec = {"x": {0: Dim("inp1_dim0"), 1: Dim("inp1_dim1", min=4, max=18)}}
    ep = ss.export(f, (f32(10, 10, 2),), dynamic_shapes=spec)
    assert ranges_str(ep) == {"s0": "VR[2, int_oo]", "s1": "VR[4, 18]"}
    m = ep.module()
    x = f32(5, 5, 2)
    np.testing.assert_array_equal(m(x), f(x))
    for shape in [(8, 1, 2), (8, 20, 2)]:
        msg = user_error(m, f32(*shape))
        assert "x.shape[1]" in msg and "[4, 18]" in msg
    msg = user_error(m, f32(8, 8, 3))
    assert msg.startswith("x.shape[2]: expected 2, got 3")


# --------------------------------------------------------------------------- 7
def test_07_shared_dim_is_equality():
    d0, inner, d1 = Dim("d0"), Dim("inner"), Dim("d1")
    ep = ss.export(lambda x, y: x @ y, (f32(2, 16), f32(16, 4)),
                   dynamic_shapes={"x": {0: d0, 1: inner}, "y": {0: inner, 1: d1}})
    m = ep.module()
    np.testing.assert_allclose(m(f32(2, 16), f32(16, 4)), f32(2, 16) @ f32(16, 4), rtol=1e-6)
    msg = user_error(m, f32(4, 8), f32(4, 2))
    assert msg == "y.shape[0] must equal x.shape[1] (= 8), got 4"


# --------------------------------------------------------------------------- 8
def test_08_derived_dims():
    dimx = Dim("dimx", min=3, max=6)
    dimy = dimx + 1
    ep = ss.export(lambda x, y: x + y[1:], (f32(4), f32(5)),
                   dynamic_shapes={"x": (dimx,), "y": (dimy,)})
    assert shapes_str(ep) == {"x": ("s0",), "y": ("s0 + 1",)}
    assert ranges_str(ep) == {"s0": "VR[3, 6]", "s0 + 1": "VR[4, 7]"}
    m = ep.module()
    m(f32(4), f32(5))
    assert "y.shape[0] must equal" in user_error(m, f32(4), f32(6))

    dx = Dim("dx")
    ep = ss.export(lambda z, y: z[1:] + y[1::3], (f32(4), f32(10)),
                   dynamic_shapes={"z": (dx + 1,), "y": (3 * dx + 1,)})
    assert shapes_str(ep) == {"z": ("s0 + 1",), "y": ("3*s0 + 1",)}
    z, y = f32(7), f32(19)
    np.testing.assert_array_equal(ep.module()(z, y), z[1:] + y[1::3])


# --------------------------------------------------------------------------- 9
def test_09_suggested_fixes_round_trip():
    def f(x, y):
        return x @ y[:, :16] if x.shape[0] <= 16 else y

    spec = {"x": (Dim("inp4_dim0"), Dim("inp4_dim1")),
            "y": (Dim("inp5_dim0"), Dim("inp5_dim1"))}
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(f, (f32(8, 16), f32(16, 32)), dynamic_shapes=spec)
    err = e.value
    lines = [str(fx) for fx in err.suggested_fixes]
    assert "inp4_dim0 = Dim('inp4_dim0', max=16)" in lines
    assert "inp5_dim0 = inp4_dim1" in lines
    assert not any(l.startswith("inp5_dim1") for l in lines)
    assert str(err).splitlines()[-len(lines) - 1] == "Suggested fixes:"
    fixed = spec
    for fx in err.suggested_fixes:
        fixed = fx.apply(fixed)
    ep = ss.export(f, (f32(8, 16), f32(16, 32)), dynamic_shapes=fixed)
    x, y = f32(4, 32), f32(32, 64)
    np.testing.assert_allclose(ep.module()(x, y), f(x, y), rtol=1e-5)
    # the guard is kept symbolic: y's second axis may be anything, even below 16
    x, y = f32(4, 32), f32(32, 5)
    np.testing.assert_allclose(ep.module()(x, y), f(x, y), rtol=1e-5)


# --------------------------------------------------------------------------- 10-12
A = Dim.AUTO


def test_10_auto_discovers_the_program(caplog):
    ss.set_logs(dynamic=logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG, logger="symshape.dynamic"):
            ep = ss.export(model10, ARGS10,
                           dynamic_shapes={"w": (A, A), "x": (A,), "y": (A, A), "z": (A,)})
    finally:
        ss.set_logs(dynamic=logging.WARNING)
    assert shapes_str(ep) == {"w": ("s0", "5"), "x": ("s2",), "y": ("s3", "s2"),
                              "z": ("s2*s3",)}
    assert ranges_str(ep) == {"s0": "VR[2, int_oo]", "s2": "VR[2, int_oo]",
                              "s3": "VR[2, int_oo]", "s2*s3": "VR[4, int_oo]"}
    msgs = [r.getMessage() for r in caplog.records]
    creates = [m for m in msgs if m.startswith("create_symbol")]
    assert len(creates) == 6
    assert creates[0].startswith("create_symbol s0 = 6 for w.shape[0] VR[2, int_oo]")
    guards = [m for m in msgs if m.startswith("guard added")]
    assert len(guards) == 3
    assert all("seeds.py" in g for g in guards)          # the program's own file
    assert any("x0 = x + y" in g for g in guards)
    out = ep.module()(np.ones((3, 5)), np.ones(7), np.ones((2, 7)), np.ones(14))
    ref = model10(np.ones((3, 5)), np.ones(7), np.ones((2, 7)), np.ones(14))
    for a, b in zip(out, ref):
        np.testing.assert_array_equal(a, b)


def test_11_dynamic_keeps_its_promise():
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(model10, ARGS10,
                  dynamic_shapes={"w": (A, Dim.DYNAMIC), "x": (A,), "y": (A, A), "z": (A,)})
    assert "w.shape[1] was marked Dim.DYNAMIC, but the program specialized it to 5" in str(e.value)
    assert [str(f) for f in e.value.suggested_fixes] == ["dynamic_shapes['w'][1] = Dim.STATIC"]
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(model10, ARGS10, dynamic_shapes={"w": (A, A), "x": (Dim.STATIC,),
                                                   "y": (A, Dim.DYNAMIC), "z": (A,)})
    assert "y.shape[1] was marked Dim.DYNAMIC" in str(e.value)
    assert "x.shape[0], which is marked static" in str(e.value)


def test_12_asserts_checks_and_branches_are_guards():
    ep = ss.export(model12, (np.zeros((18, 5)), np.zeros(16), np.zeros((8, 16)), np.zeros(128)),
                   dynamic_shapes={"w": (A, A), "x": (A,), "y": (A, A), "z": (A,)})
    shapes = shapes_str(ep)
    assert shapes["w"] == ("s2 + 2", "5")
    rc = ranges_str(ep)
    assert rc["s2"] == "VR[16, 510]" and rc["s2 + 2"] == "VR[18, 512]"
    m = ep.module()
    m(np.zeros((20, 5)), np.zeros(18), np.zeros((2, 18)), np.zeros(36))
    assert "[18, 512]" in user_error(m, np.zeros((17, 5)), np.zeros(15), np.zeros((2, 15)),
                                     np.zeros(30))


# --------------------------------------------------------------------------- 13
def test_13_zero_one_specialization():
    W = f32(3, 4)
    g = lambda x: x @ W.T  # noqa: E731
    ep = ss.export(g, (f32(1, 4),), dynamic_shapes={"x": (A, Dim.STATIC)})
    assert shapes_str(ep) == {"x": ("1", "4")}
    assert "expected 1, got 2" in user_error(ep.module(), f32(2, 4))
    ep = ss.export(g, (f32(2, 4),), dynamic_shapes={"x": (A, Dim.STATIC)})
    assert shapes_str(ep) == {"x": ("s0", "4")}
    np.testing.assert_allclose(ep.module()(f32(7, 4)), g(f32(7, 4)), rtol=1e-6)


# --------------------------------------------------------------------------- 14
def test_14_named_dims_and_divisibility():
    dx = Dim("dx", min=4, max=256)
    dh = Dim("dh", max=512)
    fn = lambda x, y: x.sum() + y.sum()  # noqa: E731
    ep = ss.export(fn, (np.zeros((8, 3)), np.zeros((16, 5))),
                   dynamic_shapes={"x": (dx, None), "y": (2 * dx, dh)})
    assert shapes_str(ep) == {"x": ("s0", "3"), "y": ("2*s0", "s1")}
    assert ranges_str(ep)["s0"] == "VR[4, 256]"
    assert "y.shape[0] must equal 2*x.shape[0]" in user_error(
        ep.module(), np.zeros((8, 3)), np.zeros((18, 5)))

    ep = ss.export(fn, (np.zeros((16, 3)), np.zeros((16, 5))),
                   dynamic_shapes={"x": (4 * dx, None), "y": None})
    assert shapes_str(ep)["x"] == ("4*s0", "3")
    assert ranges_str(ep)["4*s0"] == "VR[16, 1024]"
    m = ep.module()
    m(np.zeros((20, 3)), np.zeros((16, 5)))
    assert "not of the form 4*dx" in user_error(m, np.zeros((18, 3)), np.zeros((16, 5)))
    assert "outside the range [4, 256]" in user_error(m, np.zeros((12, 3)), np.zeros((16, 5)))


def test_14_reshape_divisibility_on_auto_and_named():
    ep = ss.export(lambda x: x.reshape(4, -1), (np.zeros(8),), dynamic_shapes={"x": (A,)})
    (size,) = ep.input_shapes["x"]
    assert re.fullmatch(r"4\*s\d+", str(size))
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(lambda x: x.reshape(4, -1), (np.zeros(8),),
                  dynamic_shapes={"x": (Dim("dx"),)})
    lines = [str(f) for f in e.value.suggested_fixes]
    assert lines == ["_dx = Dim('_dx', min=1)", "dx = 4*_dx"]


# --------------------------------------------------------------------------- 15
def test_15_missing_relations():
    dx, dy, d1 = ss.dims("dx", "dy", "d1")
    fn = lambda x, y: x + y + np.ones(4, np.float32)  # noqa: E731
    spec = {"x": (dx, d1), "y": (dy, d1)}
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(fn, (f32(6, 4), f32(6, 4)), dynamic_shapes=spec)
    text = str(e.value)
    assert "d1 was marked dynamic, but the program specialized it to 4" in text
    assert "dy must equal dx" in text
    assert [str(f) for f in e.value.suggested_fixes] == ["d1 = 4", "dy = dx"]
    fixed = spec
    for fx in e.value.suggested_fixes:
        fixed = fx.apply(fixed)
    assert fixed == {"x": (dx, 4), "y": (dx, 4)}
    ss.export(fn, (f32(6, 4), f32(6, 4)), dynamic_shapes=fixed)


# --------------------------------------------------------------------------- 16
def test_16_spec_forms():
    def fn(x, n, flag, y):
        return x * n + (y if flag else 0)

    args = (f32(3, 4), 2, True, f32(3, 4))
    ep = ss.export(fn, args, dynamic_shapes={"x": None, "n": None, "flag": None,
                                             "y": (None, 4)})
    assert shapes_str(ep) == {"x": ("3", "4"), "y": ("3", "4")}
    m = ep.module()
    np.testing.assert_array_equal(m(*args), fn(*args))
    assert "exported with n = 2" in user_error(m, f32(3, 4), 3, True, f32(3, 4))
    with pytest.raises(ss.UserError) as e:
        ss.export(fn, args, dynamic_shapes={"x": None, "n": None, "flag": None, "y": (None, 5)})
    assert "dynamic_shapes['y'][1]" in str(e.value) and "static size 5" in str(e.value)
    ep = ss.export(fn, args, dynamic_shapes=(None, None, None, (A, None)))
    assert shapes_str(ep)["y"][1] == "4"
