"""ss.custom_op (seed example 18): a NumPy function kept as one opaque node, shaped by its
fake, run for real by the module."""
import logging

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.capture.custom import REGISTRY, lookup

A = Dim.AUTO
CALLS = []


def f32(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


@ss.custom_op("mylib::scale")
def scale(x, factor=2.0):
    CALLS.append(x.shape)
    return x * factor


@scale.register_fake
def _(x, factor=2.0):
    return np.empty_like(x)


def custom_nodes(ep):
    return [n for n in ep.graph.nodes if "::" in n.op]


# --------------------------------------------------------------------------- seed 18
def test_18_one_node_and_the_real_function_runs():
    def f(x):
        return scale(x + 1, factor=3.0) - 1

    ep = ss.export(f, (f32(4, 3),), dynamic_shapes={"x": (A, None)})
    nodes = custom_nodes(ep)
    assert len(nodes) == 1 and nodes[0].op == "mylib::scale"
    assert "mylib::scale" in nodes[0].op
    assert [n.op for n in ep.graph.nodes] == ["input", "add", "mylib::scale", "subtract"]
    assert tuple(str(s) for s in nodes[0].shape) == ("s0", "3")
    assert nodes[0].dtype == np.float32
    assert nodes[0].source.endswith(":%d" % (f.__code__.co_firstlineno + 1))
    CALLS.clear()
    x = f32(7, 3)
    out = ep.module()(x)
    assert CALLS == [(7, 3)]                # the real function ran, once
    np.testing.assert_allclose(out, (x + 1) * 3.0 - 1, rtol=1e-6)
    assert out.dtype == np.float32
    assert "(add, factor=3.0)" in ep.module_source       # called as the program called it


def test_eager_call_runs_the_function():
    CALLS.clear()
    x = f32(2, 2)
    np.testing.assert_array_equal(scale(x), x * 2.0)
    np.testing.assert_array_equal(scale(x, 5.0), x * 5.0)
    assert CALLS == [(2, 2), (2, 2)]
    assert scale.__name__ == "scale" and scale.name == "mylib::scale"
    assert lookup("mylib::scale") is scale and REGISTRY["mylib::scale"] is scale


def test_missing_fake_names_the_op_and_the_fix():
    @ss.custom_op("mylib::nofake")
    def nofake(x):
        return x

    with pytest.raises(ss.UserError) as e:
        ss.export(lambda x: nofake(x) + 1, (f32(3),))
    msg = str(e.value)
    assert "'mylib::nofake'" in msg and "no fake" in msg
    assert "@nofake.register_fake" in msg and "np.empty_like" in msg
    assert "test_custom_ops.py" in msg


# --------------------------------------------------------------------------- shapes
@ss.custom_op("mylib::rowsum_pairs")
def rowsum_pairs(x, y):
    return x.sum(axis=1), np.concatenate([x, y], axis=1).astype(np.float64)


@rowsum_pairs.register_fake
def _(x, y):
    assert x.shape[0] == y.shape[0]          # the fake's guard is the op's shape rule
    return (np.zeros((x.shape[0],), dtype=x.dtype, like=x),
            np.empty_like(np.concatenate([x, y], axis=1), dtype=np.float64))


def test_multiple_outputs_and_guards_from_the_fake():
    def f(x, y):
        s, c = rowsum_pairs(x, y)
        return s * 2, c

    ep = ss.export(f, (f32(4, 3), f32(4, 5)), dynamic_shapes={"x": (A, A), "y": (A, A)})
    nodes = custom_nodes(ep)
    assert len(nodes) == 1 and nodes[0].dtype == np.dtype(object)
    gets = [n for n in ep.graph.nodes if n.op == "tuple_get"]
    assert [tuple(str(s) for s in n.shape) for n in gets] == [("s0",), ("s0", "s1 + s3")]
    assert [n.dtype for n in gets] == [np.float32, np.float64]
    # nodes the fake recorded are not in the graph
    assert [n.op for n in ep.graph.nodes] == ["input", "input", "mylib::rowsum_pairs",
                                               "tuple_get", "tuple_get", "multiply"]
    assert ep.input_shapes == {"x": ep.input_shapes["x"], "y": (ep.input_shapes["x"][0],
                                                                  ep.input_shapes["y"][1])}
    x, y = f32(6, 2), f32(6, 7)
    s, c = ep.module()(x, y)
    np.testing.assert_allclose(s, x.sum(axis=1) * 2, rtol=1e-6)
    np.testing.assert_array_equal(c, np.concatenate([x, y], axis=1).astype(np.float64))
    with pytest.raises(ss.UserError, match=r"y\.shape\[0\] must equal x\.shape\[0\]"):
        ep.module()(f32(6, 2), f32(5, 7))


@ss.custom_op("mylib::positives")
def positives(x):
    return x[x > 0]


@positives.register_fake
def _(x):
    return x[x > 0]            # a data-dependent size: unbacked, bound by the custom node


def test_data_dependent_output_size():
    ep = ss.export(lambda x: positives(x) * 2, (np.array([1.0, -2.0, 3.0]),),
                   dynamic_shapes={"x": (A,)})
    node = custom_nodes(ep)[0]
    assert str(node.shape[0]) == "u0" and node.meta["binds"][0][1] == 0
    assert [n.op for n in ep.graph.nodes] == ["input", "mylib::positives", "multiply"]
    x = np.array([1.0, -1.0, 4.0, 5.0, -3.0])
    np.testing.assert_array_equal(ep.module()(x), x[x > 0] * 2)


@ss.custom_op("mylib::accumulate", mutates_args=("out",))
def accumulate(x, out):
    out += x.sum()


@accumulate.register_fake
def _(x, out):
    return None


def test_mutating_op_is_functionalized():
    def f(x, buf):
        accumulate(x, buf)
        return buf * 2

    ep = ss.export(f, (f32(3), np.zeros(2, np.float32)), dynamic_shapes={"x": (A,), "buf": None})
    assert ep.graph_signature.inputs_to_mutate == {
        next(n.name for n in ep.graph.nodes if n.op == "tuple_get"): "buf"}
    x, buf = f32(5), np.ones(2, np.float32)
    want_buf = buf.copy()
    want = f(x, want_buf)
    got = ep.module()(x, buf)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(buf, want_buf, rtol=1e-6)       # written back, like eager
    for n in ep.graph.nodes:
        assert not n.op.endswith("_") and "out" not in n.attrs


def test_arguments_scalars_sizes_constants_and_kwargs():
    W = f32(3, 3)

    @ss.custom_op("mylib::affine")
    def affine(x, w, n, *, bias=0.0, mode="add"):
        assert mode == "add"
        return x @ w[:, :n] + bias

    @affine.register_fake
    def _(x, w, n, *, bias=0.0, mode="add"):
        return np.zeros((x.shape[0], n), like=x, dtype=np.result_type(x.dtype, w.dtype))

    def f(x):
        return affine(x, W, x.shape[0] - 1, bias=0.5)

    ep = ss.export(f, (f32(3, 3),), dynamic_shapes={"x": (Dim("n", max=4), None)})
    node = custom_nodes(ep)[0]
    assert node.attrs["params"] == ("", "", "", "bias")
    assert ep.graph_signature.lifted_constants == ["W"]
    x = f32(4, 3)
    np.testing.assert_allclose(ep.module()(x), x @ W[:, :3] + 0.5, rtol=1e-6)


def test_direct_form_and_redefinition(caplog):
    ss.custom_op("mylib::twice", lambda x: x * 2).register_fake(lambda x: np.empty_like(x))
    first = lookup("mylib::twice")
    with caplog.at_level(logging.WARNING, logger="symshape.custom_op"):
        again = ss.custom_op("mylib::twice", lambda x: x * 2)
    again.register_fake(lambda x: np.empty_like(x))
    assert lookup("mylib::twice") is again is not first
    assert any("defined again" in r.getMessage() for r in caplog.records)
    ep = ss.export(lambda x: again(x), (f32(3),))
    np.testing.assert_array_equal(ep.module()(f32(3)), f32(3) * 2)


@pytest.mark.parametrize("name", ["scale", "my lib::x", "lib::", "::x", "lib::1x", 3])
def test_bad_names(name):
    with pytest.raises(ss.UserError, match="namespace::opname"):
        ss.custom_op(name)(lambda x: x)


def test_bad_mutates_args():
    with pytest.raises(ss.UserError, match="not a parameter"):
        ss.custom_op("mylib::bad_mut", mutates_args=("y",))(lambda x: x)
    with pytest.raises(ss.UserError, match="'unknown' is not supported"):
        ss.custom_op("mylib::bad_mut2", mutates_args="unknown")(lambda x: x)


def test_bad_fakes():
    @ss.custom_op("mylib::badfake")
    def badfake(x):
        return x

    badfake.register_fake(lambda x: 3)
    with pytest.raises(ss.UserError, match="returned a int.*np.empty_like"):
        ss.export(lambda x: badfake(x), (f32(3),))
    badfake.register_fake(lambda x: None)
    with pytest.raises(ss.UserError, match="returned None"):
        ss.export(lambda x: badfake(x), (f32(3),))

    def raising(x):
        raise KeyError("boom")

    badfake.register_fake(raising)
    with pytest.raises(ss.UserError, match="fake function of custom op 'mylib::badfake' raised "
                                           "KeyError"):
        ss.export(lambda x: badfake(x), (f32(3),))

    def writing(x):
        x[0] = 1
        return np.empty_like(x)

    badfake.register_fake(writing)
    with pytest.raises(ss.UserError, match="wrote into its argument"):
        ss.export(lambda x: badfake(x), (f32(3),))
    badfake.register_fake(lambda x: np.empty(x.shape, dtype=object, like=x))
    with pytest.raises(ss.UserError, match="dtype object"):
        ss.export(lambda x: badfake(x), (f32(3),))


def test_custom_op_in_a_cond_branch():
    def f(x):
        return ss.cond(x.sum() > 0, lambda a: scale(a, 4.0), lambda a: a - 1, [x])

    ep = ss.export(f, (np.abs(f32(3)),), dynamic_shapes={"x": (A,)})
    x = np.abs(f32(5))
    np.testing.assert_allclose(ep.module()(x), x * 4.0, rtol=1e-6)
    np.testing.assert_allclose(ep.module()(-x), -x - 1, rtol=1e-6)


def test_run_decompositions_keeps_custom_ops_unless_named():
    ep = ss.export(lambda x: scale(x).mean(), (f32(4),), dynamic_shapes={"x": (A,)})
    core = ep.run_decompositions()
    assert [n.op for n in custom_nodes(core)] == ["mylib::scale"]
    lowered = ep.run_decompositions({"mylib::scale": lambda x, factor=2.0: x * factor})
    assert custom_nodes(lowered) == []
    x = f32(6)
    np.testing.assert_allclose(lowered.module()(x), ep.module()(x), rtol=1e-6)
