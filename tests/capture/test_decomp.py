"""run_decompositions (seed example 19): lowering to the core op set of docs/core_ops.md,
and custom tables that lower exactly the ops they name."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.capture.ir import Subgraph
from symshape.capture.decomp import CORE_OPS, default_decompositions, is_core

A = Dim.AUTO
R = np.random.default_rng(3)


def arr(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def ops(ep):
    return [n.op for n in ep.graph.nodes]


def non_core(ep):
    return sorted({n.op for n in ep.graph.nodes if not is_core(n)})


def same(got, want, exact=True):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def check_lowering(fn, args, spec, *others, exact=True, keep=()):
    ep = ss.export(fn, args, dynamic_shapes=spec)
    core = ep.run_decompositions()
    assert core is not ep
    assert non_core(core) == sorted(keep), core
    assert core.range_constraints == ep.range_constraints
    assert core.input_shapes == ep.input_shapes
    assert str(core.call_signature) == str(ep.call_signature)
    for a in (args,) + others:
        same(core.module()(*a), ep.module()(*a), exact)
        same(core.module()(*a), fn(*a), exact)
    return ep, core


# --------------------------------------------------------------------------- seed 19
def test_19_transpose_then_matmul_becomes_permute_dims_and_matmul():
    def f(x, y):
        return np.dot(x.T, y)

    x, y = arr(4, 3), arr(4, 5)
    ep = ss.export(f, (x, y), dynamic_shapes={"x": (A, A), "y": (A, A)})
    assert ops(ep) == ["input", "input", "permute_dims", "dot"]
    core = ep.run_decompositions()
    assert ops(core) == ["input", "input", "permute_dims", "matmul"]
    assert ops(ep) == ["input", "input", "permute_dims", "dot"]        # the original is kept
    x2, y2 = arr(6, 2), arr(6, 7)
    np.testing.assert_allclose(core.module()(x2, y2), f(x2, y2), rtol=1e-12)
    assert "Range constraints: {s0: VR[2, int_oo], s1: VR[2, int_oo], s3: VR[2, int_oo]}" \
        in str(core)


def test_19_a_custom_table_lowers_only_the_ops_it_names():
    def f(x, y):
        return np.dot(x.T, y).mean(axis=0), np.clip(x, 0, 1)

    ep = ss.export(f, (arr(4, 3), arr(4, 5)), dynamic_shapes={"x": (A, A), "y": (A, A)})
    only = ep.run_decompositions({"dot": lambda a, b: np.matmul(a, b)})
    assert ops(only) == ["input", "input", "permute_dims", "matmul", "mean", "clip"]
    full = ep.run_decompositions()
    assert "mean" not in ops(full) and "clip" not in ops(full)
    assert non_core(full) == []
    x, y = arr(5, 2), arr(5, 3)
    same(only.module()(x, y), f(x, y), exact=False)
    same(full.module()(x, y), f(x, y), exact=False)


# --------------------------------------------------------------------------- defaults
X3 = (arr(3, 4),)
NORM_ALL = lambda x: np.linalg.norm(x, keepdims=True)  # noqa: E731  (sqrt of a dot product)
NORM_ALL_LINE = NORM_ALL.__code__.co_firstlineno
OTHER = (arr(5, 2),)


@pytest.mark.parametrize("fn", [
    lambda x: x.mean(axis=0),
    lambda x: x.mean(),
    lambda x: x.mean(axis=(0, 1), keepdims=True),
    lambda x: x.astype(np.float32).mean(axis=1),
    lambda x: x.astype(np.float16).mean(axis=1),
    lambda x: (x * 10).astype(np.int32).mean(axis=0),
    lambda x: x.astype(np.float32).mean(axis=1, dtype=np.float64),
    lambda x: x.var(axis=1),
    lambda x: x.var(ddof=1),
    lambda x: x.astype(np.float32).std(axis=0, ddof=1, keepdims=True),
    lambda x: (x * 10).astype(np.int64).var(axis=1),
    lambda x: np.clip(x, -0.5, 0.5),
    lambda x: np.clip(x, None, 0.25),
    lambda x: x.clip(min=0),
    lambda x: x.copy(),
    lambda x: np.stack([x, x * 2], axis=1),
    lambda x: np.tile(x, (2, 3)),
    lambda x: np.tile(x, 2),
    lambda x: np.tile(x, (2, 1, 1)),
    lambda x: np.repeat(x, 3, axis=0),
    lambda x: np.repeat(x, 2),
    lambda x: np.flip(x),
    lambda x: np.flip(x, 1),
    lambda x: np.roll(x, 2, axis=1),
    lambda x: np.roll(x, -7),
    lambda x: np.roll(x, (1, -1), axis=(0, 1)),
    lambda x: np.pad(x, ((1, 2), (0, 3))),
    lambda x: np.pad(x, 1, constant_values=7.5),
    lambda x: np.round(x * 100, 2),
    lambda x: np.round(x * 100, -1),
    lambda x: np.round((x * 100).astype(np.int32), -1),
    lambda x: np.round((x * 100).astype(np.int32), 1),
    lambda x: np.cumsum(x, axis=1),
    lambda x: np.cumprod(x, axis=0, dtype=np.float32),
    lambda x: np.abs(x) ** 2 + np.arctan2(x, 1.5) + np.arcsin(np.tanh(x)),
    lambda x: np.invert((x > 0)) ^ np.left_shift((x * 4).astype(np.int32), 1).astype(bool),
    lambda x: np.right_shift((x * 40).astype(np.int64), 2),
    lambda x: np.conjugate(x + 1j * x),
    lambda x: np.fabs(x) + np.rint(x * 3),
    lambda x: np.rint((x * 10).astype(np.int8)),
    lambda x: np.divmod(x, 0.3),
    lambda x: np.add(x, 1, dtype=np.float32),
    lambda x: np.multiply(x.astype(np.float32), np.float64(2), dtype=np.float64),
    lambda x: np.outer(x, x[0]),
    lambda x: np.tensordot(x, x, axes=([0], [0])),
    lambda x: np.tensordot(x, x.T, axes=1),
    lambda x: np.einsum("ij->ji", x),
    lambda x: np.einsum("ij->", x),
    lambda x: np.einsum("ij,kj->ik", x, x),
    lambda x: np.einsum("bi,bj,bk->ijk", x, x, x),
    lambda x: np.einsum("ij,jk", x, x.T),
    lambda x: np.dot(x, x[0]),
    lambda x: np.dot(x[0], x[1]),
    lambda x: np.diff(x, axis=0),
    lambda x: np.diff(x, n=2) + np.diff(x > 0.5)[:, :1],
    lambda x: np.linalg.norm(x, axis=1),
    lambda x: np.linalg.norm(x, ord=1, axis=0, keepdims=True),
    lambda x: np.linalg.norm(x[0], ord=np.inf),
    lambda x: np.linalg.norm((x * 10).astype(np.int32), axis=(0, 1)),
    NORM_ALL,
    lambda x: np.sort(x, axis=0) + np.argsort(x, axis=1),
])
def test_default_decomposition_is_core_and_equal(fn):
    # contractions lowered to matmul may sum in another order: equal up to rounding
    exact = not any(n in fn.__code__.co_names for n in ("einsum", "tensordot", "dot")) and \
        fn.__code__.co_firstlineno != NORM_ALL_LINE
    check_lowering(fn, X3, {"x": (A, A)}, OTHER, exact=exact)


def test_ops_without_core_equivalent_are_kept():
    fn = lambda x: np.exp2(x) + np.fmod(x, 0.7) + np.pad(x, 1, mode="edge")[1:-1, 1:-1] + \
        np.einsum("ii->i", x)[:, None]  # noqa: E731
    check_lowering(fn, (arr(3, 3),), {"x": (A, None)}, keep=("einsum", "exp2", "fmod", "pad"))


def test_data_dependent_sizes_survive_lowering():
    def f(x):
        pos = x[x > 0]
        return pos.mean(), np.stack([pos, pos]).var(axis=1), np.nonzero(x)[0]

    ep, core = check_lowering(f, (np.array([1.0, -2.0, 3.0, 0.5]),), {"x": (A,)},
                              (np.array([2.0, -1.0, 0.0, 4.0, 5.0, -3.0, 8.0]),))
    assert "divide" in ops(core)


def test_cond_branches_are_lowered_too():
    def f(x):
        return ss.cond(x.sum() > 0, lambda a: a.mean(axis=0), lambda a: np.clip(a, 0, 1).sum(0),
                       [x])

    ep, core = check_lowering(f, (np.abs(arr(3, 2)),), {"x": (A, A)}, (-np.abs(arr(4, 5)),),
                              (np.abs(arr(2, 2)),))
    cond = next(n for n in core.graph.nodes if n.op == "cond")
    for g in (cond.attrs["true_graph"].graph, cond.attrs["false_graph"].graph):
        assert all(is_core(n) for n in g.nodes)


def test_map_and_while_loop_bodies_are_lowered():
    def f(x, w):
        y = ss.map(lambda r, w: (r * w).mean(axis=0), x, w)
        i, a = ss.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, np.clip(a * 2.0, -5, 5)),
                             [np.array(0), x])
        return y, a

    ep, core = check_lowering(f, (arr(4, 3), arr(3)), {"x": (A, A), "w": (A,)},
                              (arr(6, 5), arr(5)))
    for n in core.graph.nodes:
        for v in n.attrs.values():
            if isinstance(v, Subgraph):
                assert all(is_core(k) for k in v.graph.nodes), [k.op for k in v.graph.nodes]


def test_input_mutation_and_constants_are_kept():
    W = arr(4, 2)

    def f(x):
        x[0, 0] = 3
        return np.dot(x, W).mean(axis=1)

    ep = ss.export(f, (arr(3, 4),), dynamic_shapes={"x": (A, None)})
    core = ep.run_decompositions()
    assert non_core(core) == []
    assert list(core.graph_signature.inputs_to_mutate.values()) == ["x"]
    assert core.graph_signature.lifted_constants == ["W"]
    a, b = arr(5, 4), None
    b = a.copy()
    same(core.module()(a), ep.module()(b))
    np.testing.assert_array_equal(a, b)
    assert a[0, 0] == 3


def test_lowered_nodes_keep_the_source_line_and_rejections_are_unchanged():
    def f(x):
        return x.var(axis=0)

    ep = ss.export(f, (arr(3, 4),), dynamic_shapes={"x": (Dim("n", max=10), A)})
    core = ep.run_decompositions()
    line = f.__code__.co_firstlineno + 1
    for n in core.graph.nodes:
        if n.op != "input":
            assert n.source.endswith("test_decomp.py:%d" % line)
    for bad in (arr(11, 4), arr(3, 4, 1), arr(3, 4).astype(np.float32)):
        with pytest.raises(ss.UserError) as e1:
            ep.module()(bad)
        with pytest.raises(ss.UserError) as e2:
            core.module()(bad)
        assert str(e1.value) == str(e2.value)


def test_sizes_used_as_values_and_symint_inputs():
    def f(x, n):
        return (x * n).mean(axis=0) + x.shape[0]

    check_lowering(f, (arr(3, 2), 4), {"x": (A, A), "n": Dim.DYNAMIC}, (arr(6, 3), -2))


def test_decomposed_program_round_trips(tmp_path):
    ep = ss.export(lambda x, y: np.dot(x, y).std(axis=1), (arr(3, 4), arr(4, 2)),
                   dynamic_shapes={"x": (A, A), "y": (A, A)})
    core = ep.run_decompositions()
    ss.save(core, tmp_path / "core.json")
    loaded = ss.load(tmp_path / "core.json")
    assert str(loaded) == str(core) and loaded.module_source == core.module_source
    x, y = arr(5, 6), arr(6, 3)
    same(loaded.module()(x, y), core.module()(x, y))
    # a loaded program has no shape environment: it can still be lowered
    ep2 = ss.load(tmp_path / "core.json")
    assert ep2.run_decompositions().module_source == core.module_source


def test_default_table_is_a_plain_dict():
    table = default_decompositions()
    for name in ("mean", "var", "std", "clip", "dot", "absolute", "power", "cumsum", "stack"):
        assert callable(table[name])
    assert "matmul" not in table and "permute_dims" in CORE_OPS
    ep = ss.export(lambda x: np.abs(x).mean(), (arr(3),), dynamic_shapes={"x": (A,)})
    lowered = ep.run_decompositions({"mean": table["mean"]})
    assert ops(lowered) == ["input", "absolute", "sum", "divide"]


# --------------------------------------------------------------------------- custom tables
def test_custom_table_receives_inputs_and_attrs():
    seen = {}

    def lower_mean(x, axis=None, keepdims=False, dtype=None):
        seen.update(axis=axis, keepdims=keepdims, shape=x.shape, type=type(x).__name__)
        return np.sum(x, axis=axis, keepdims=keepdims) / x.shape[axis[0]]

    def lower_getitem(x, index):
        seen["index"] = index
        return x[index]

    ep = ss.export(lambda x: x[1:, ::2].mean(axis=1, keepdims=True), (arr(4, 6),),
                   dynamic_shapes={"x": (A, A)})
    new = ep.run_decompositions({"mean": lower_mean, "getitem": lower_getitem})
    assert seen["axis"] == (1,) and seen["keepdims"] is True and seen["type"] == "TracedArray"
    assert [s.describe() for s in seen["shape"]] == ["x.shape[0] - 1", "((x.shape[1] + 1)//2)"]
    assert isinstance(seen["index"], tuple) and seen["index"][0].start == 1
    assert ops(new) == ["input", "getitem", "sum", "divide"]
    x = arr(7, 5)
    same(new.module()(x), ep.module()(x), exact=False)


def test_not_implemented_keeps_the_node():
    ep = ss.export(lambda x: x.mean(axis=0), (arr(3, 2),), dynamic_shapes={"x": (A, A)})
    new = ep.run_decompositions({"mean": lambda x, **kw: NotImplemented})
    assert ops(new) == ["input", "mean"]


@pytest.mark.parametrize("table, expected", [
    ({"mean": lambda x, **kw: np.sum(x, axis=1)}, r"returned shape \(s0\), but the op produces "
                                                  r"\(s1\)"),
    ({"mean": lambda x, **kw: (np.sum(x, axis=0) / 2).astype(np.float32)},
     "returned dtype float32, but the op produces float64"),
    ({"mean": lambda x, **kw: np.sum(x, axis=0) / int(x.shape[0])},
     r"needs `s0 == 3`, which the program's constraints do not imply"),
    ({"mean": lambda x, **kw: np.sum(x, axis=0) / 2 if x.shape[0] > 3 else x[0]},
     r"needs `s0 <= 3`"),
    ({"mean": lambda x, **kw: "mean"}, "returned a str; it must return an array"),
    ({"mean": lambda x, **kw: 1 / 0}, "raised ZeroDivisionError"),
])
def test_bad_table_functions_name_the_node(table, expected):
    ep = ss.export(lambda x: x.mean(axis=0), (arr(3, 2),), dynamic_shapes={"x": (A, A)})
    with pytest.raises(ss.UserError, match=expected) as e:
        ep.run_decompositions(table)
    assert "mean (op mean" in str(e.value) and "test_decomp.py" in str(e.value)


def test_bad_tables():
    ep = ss.export(lambda x: x + 1, (arr(3),))
    with pytest.raises(ss.UserError, match="must be a dict"):
        ep.run_decompositions([("add", np.add)])
    with pytest.raises(ss.UserError, match="op names"):
        ep.run_decompositions({np.add: lambda a, b: a})
    with pytest.raises(ss.UserError, match="must be a function"):
        ep.run_decompositions({"add": 3})
