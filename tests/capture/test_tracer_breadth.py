"""Tracer breadth: shape ops, advanced indexing, data-dependent sizes, cond, mutation,
symbolic int inputs; seed examples 3, 4, 5 and 17."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.capture.export import trace_program

A = Dim.AUTO
R = np.random.default_rng(7)


def arr(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def same(got, want):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def check(f, args, spec, *others):
    ep = ss.export(f, args, dynamic_shapes=spec)
    for a in (args,) + others:
        same(ep.module()(*a), f(*a))
    return ep


def shapes(ep):
    return [tuple(str(s) for s in n.shape) for n in ep.graph.nodes
            if n.op not in ("input", "constant")]


# --------------------------------------------------------------------------- shape ops
def test_tile_repeat_pad_flip_roll_stack():
    f = lambda x: (np.tile(x, (2, 1)), np.repeat(x, 3, axis=1), np.pad(x, ((1, 2), (0, 3))),  # noqa
                   np.flip(x, 0), np.roll(x, 2, axis=1), np.hstack([x, x]), np.vstack([x, x]),
                   np.stack([x, x], axis=1))
    ep = check(f, (arr(4, 6),), {"x": (A, A)}, (arr(5, 7),))
    outs = [tuple(str(s) for s in o.shape) for o in ep.graph.outputs]
    assert outs == [("2*s0", "s1"), ("s0", "3*s1"), ("s0 + 3", "s1 + 3"), ("s0", "s1"),
                    ("s0", "s1"), ("s0", "2*s1"), ("2*s0", "s1"), ("s0", "2", "s1")]


def test_stacking_0d_arrays_scalars_and_the_rows_of_a_1d_array_as_numpy():
    # NumPy makes each array at least 1-D / 2-D / 3-D first (a 0-d one, a Python scalar, the
    # 0-d rows of a 1-D array): the rules refused these (found by the every-rank proofs)
    f = lambda x, y: (np.hstack([y, x]), np.vstack([y, x[None, :1]]), np.hstack(x),  # noqa
                      np.vstack(x), np.dstack(x), np.atleast_1d(x, 3.0)[1],
                      np.atleast_2d(3.0, x)[0])
    ep = check(f, (arr(4), arr()), {"x": (A,), "y": ()}, (arr(6), arr()))
    outs = [tuple(str(s) for s in o.shape) for o in ep.graph.outputs]
    assert outs == [("s0 + 1",), ("2", "1"), ("s0",), ("s0", "1"), ("1", "1", "s0"), ("1",),
                    ("1", "1")]


def test_pad_widths_numpy_cannot_broadcast_are_refused():
    # NumPy broadcasts pad_width to (ndim, 2): three widths in a row never fit (the rule
    # padded every axis by the first one)
    for pw in ((1, 2, 3), ((1, 2, 3),), ((1, 2), (3, 4), (5, 6))):
        with pytest.raises(ValueError):
            np.pad(np.ones((2, 3)), pw)
        with pytest.raises(ss.UserError, match="pad_width"):
            ss.export(lambda x: np.pad(x, pw), (arr(2, 3),), dynamic_shapes={"x": (A, A)})
    f = lambda x: (np.pad(x, 1), np.pad(x, (1, 2)), np.pad(x, ((1,), (2,))),  # noqa: E731
                   np.pad(x, ((1, 2),)), np.pad(x, ((1, 2), (3, 4))))
    ep = check(f, (arr(2, 3),), {"x": (A, A)}, (arr(4, 5),))
    assert [tuple(str(s) for s in o.shape) for o in ep.graph.outputs] == [
        ("s0 + 2", "s1 + 2"), ("s0 + 3", "s1 + 3"), ("s0 + 2", "s1 + 4"), ("s0 + 3", "s1 + 3"),
        ("s0 + 3", "s1 + 7")]


def test_flip_refuses_a_repeated_axis_as_numpy_does():
    # NumPy: ValueError: repeated axis (normalize_axis_tuple); -2 and 0 name one axis
    for axis in ((0, 0), (0, -2)):
        with pytest.raises(ValueError):
            np.flip(arr(2, 3), axis)
        with pytest.raises(ss.UserError, match=r"np.flip: axis 0 is named twice .*name each "
                           r"axis once at .*test_tracer_breadth.py:\d+"):
            ss.export(lambda x, a=axis: np.flip(x, a), (arr(2, 3),), dynamic_shapes={"x": (A, A)})
    check(lambda x: np.flip(x, (0, -1)), (arr(2, 3),), {"x": (A, A)}, (arr(4, 5),))


def test_roll_refuses_shifts_that_do_not_pair_with_the_axes_as_numpy_does():
    # NumPy broadcasts shift against axis, each a scalar or 1-D: (3,) against (2,) raises
    for shift, axis in (((1, 2, 3), (0, 1)), ((1, 2), ()), (((1, 2), (3, 4)), None)):
        with pytest.raises(ValueError):
            np.roll(arr(2, 3), shift, axis)
        with pytest.raises(ss.UserError, match=r"np.roll: the shifts .* do not pair with the "
                           r"axes .*give one shift, or one per axis at .*test_tracer_breadth"):
            ss.export(lambda x, s=shift, a=axis: np.roll(x, s, a), (arr(2, 3),),
                      dynamic_shapes={"x": (A, A)})
    for shift, axis in (((1, 2), (0, 0)), ((1,), (0, 1)), (1, (0, 1)), ((1, 2), None)):
        check(lambda x, s=shift, a=axis: np.roll(x, s, a), (arr(2, 3),), {"x": (A, A)},
              (arr(4, 5),))


def test_tril_triu_of_a_1d_array_is_square_as_in_numpy():
    # NumPy: mask = tri(*m.shape[-2:], k): a 1-D array of n gives an (n, n) result (the
    # engine refused 1-D before); a 0-d array is refused (tri() needs N)
    for fn in (np.tril, np.triu):
        ep = check(lambda x, f=fn: f(x, 1), (arr(3),), {"x": (A,)}, (arr(5),))
        assert shapes(ep)[-1] == ("s0", "s0")
        with pytest.raises(TypeError):
            fn(np.array(1.0))
        with pytest.raises(ss.UserError, match=r"needs an array of at least 1 dimension.*"
                           r"pass an array of 1 or more dimensions at .*test_tracer_breadth"):
            ss.export(lambda x, f=fn: f(x), (np.array(1.0),), dynamic_shapes={"x": ()})


def test_an_axis_that_is_no_integer_is_refused_as_numpy_does():
    # NumPy reads an axis with operator.index: a float or a string is a TypeError (the
    # engine took int(axis) before); a NumPy integer or a 0-d integer array is an axis
    for f in (lambda x: np.flip(x, 1.0), lambda x: np.sort(x, axis=1.0),
              lambda x: np.cumsum(x, axis=1.0), lambda x: np.roll(x, 1, axis=1.0),
              lambda x: np.flip(x, "1")):
        with pytest.raises(TypeError):
            f(arr(2, 3))
        with pytest.raises(ss.UserError, match=r"axis must be an int, got .* at "
                           r".*test_tracer_breadth"):
            ss.export(f, (arr(2, 3),), dynamic_shapes={"x": (A, A)})
    for f in (lambda x: np.flip(x, np.int64(1)), lambda x: np.flip(x, np.array(-1))):
        check(f, (arr(2, 3),), {"x": (A, A)}, (arr(4, 5),))


def test_split_equal_sections_adds_divisibility():
    ep = check(lambda x: np.split(x, 2, axis=1), (arr(3, 8),), {"x": (A, A)}, (arr(2, 6),))
    assert str(ep.input_shapes["x"][1]).startswith("2*")
    with pytest.raises(ss.UserError):
        ep.module()(arr(2, 5))


def test_array_split_lengths_are_exact():
    ep = check(lambda x: np.array_split(x, 3), (arr(7),), {"x": (A,)}, (arr(9),), (arr(2),),
               (arr(11),))
    assert [tuple(str(s) for s in o.shape) for o in ep.graph.outputs] == [
        ("(s0//3) + Min(1, Mod(s0, 3))",), ("(s0//3) + Max(0, Mod(s0, 3) - 1)",),
        ("(s0//3)",)]


def test_split_at_indices():
    check(lambda x: np.split(x, [1, 3], axis=1), (arr(2, 6),), {"x": (A, A)}, (arr(3, 9),))


def test_einsum_tensordot_outer_eye():
    f = lambda a, b: (np.einsum("ij,jk->ik", a, b), np.einsum("ij->ji", a),  # noqa: E731
                      np.einsum("ij,ij", a, a), np.tensordot(a, b, axes=([1], [0])),
                      np.outer(a, b), np.eye(a.shape[0], like=a))
    ep = check(f, (arr(3, 4), arr(4, 5)), {"a": (A, A), "b": (A, A)}, (arr(2, 7), arr(7, 3)))
    assert [tuple(str(s) for s in o.shape) for o in ep.graph.outputs] == [
        ("s0", "s3"), ("s1", "s0"), (), ("s0", "s3"), ("s0*s1", "s1*s3"), ("s0", "s0")]


def test_softmax_logsumexp_layernorm():
    def f(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        sm = e / e.sum(axis=-1, keepdims=True)
        m = x.max(axis=-1, keepdims=True)
        lse = np.log(np.exp(x - m).sum(axis=-1)) + m[..., 0]
        mu = x.mean(axis=-1, keepdims=True)
        ln = (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
        return sm, lse, ln, x.std(axis=0), x.argmax(axis=1), np.cumsum(x, axis=1), \
            (x > 0).any(axis=1), (x > -5).all()
    check(f, (arr(3, 5),), {"x": (A, A)}, (arr(6, 2),))


def test_unsupported_ufunc_kwarg_and_method_are_named():
    with pytest.raises(ss.UserError, match="where=.*not supported|not supported"):
        ss.export(lambda x: np.add(x, 1, where=x > 0), (arr(3),))
    with pytest.raises(ss.UserError, match="np.add.reduceat is not supported"):
        ss.export(lambda x: np.add.reduceat(x, [0, 2]), (arr(3),))


def test_ufunc_reduce_and_accumulate():
    check(lambda x: (np.add.reduce(x, axis=1), np.maximum.reduce(x), np.add.accumulate(x)),
          (arr(3, 4),), {"x": (A, A)}, (arr(2, 5),))


# --------------------------------------------------------------------------- indexing
def test_integer_array_indexing_and_take():
    f = lambda x, i: (x[i], x[:, [0, 1]], x[i, 0], np.take(x, i, axis=0),  # noqa: E731
                      np.take_along_axis(x, np.zeros_like(x, dtype=np.int64), axis=1))
    ep = check(f, (arr(4, 3), np.array([0, 2, 2])), {"x": (A, A), "i": (A,)},
               (arr(6, 2), np.array([5, 1])))
    outs = [tuple(str(s) for s in o.shape) for o in ep.graph.outputs]
    assert outs[0] == ("s2", "s1") and outs[1] == ("s0", "2") and outs[2] == ("s2",)


def test_boolean_mask_gives_unbacked_size():
    def f(x):
        y = x[x > 0]
        return y * 2, y.sum()

    ep = check(f, (np.array([1., -2, 3, 4]),), {"x": (A,)}, (np.array([-1., 2]),),
               (np.array([-1., -2, -3]),))
    assert shapes(ep)[1] == ("u0",)


def test_nonzero_unique_flatnonzero():
    def f(x):
        i, = np.nonzero(x)
        v = np.unique(x)
        vals, counts = np.unique(x, return_counts=True)
        return i, v, vals, counts, np.flatnonzero(x)
    check(f, (np.array([0, 3, 3, 0, 5]),), {"x": (A,)}, (np.array([1, 1, 2]),))


def test_mask_assignment_is_functional():
    def f(x):
        y = x * 1
        y[y < 0] = 0
        return y

    check(f, (arr(3, 4),), {"x": (A, A)}, (arr(5, 2),))


# --------------------------------------------------------------------------- seed 17
def test_17_unbacked_symbols_and_checks():
    def f(x):
        y = x[x > 0]
        n = y.shape[0]
        ss.check(n >= 2)
        return y[:2] + n

    ep = ss.export(f, (np.array([1., -2, 3]),), dynamic_shapes={"x": (A,)})
    same(ep.module()(np.array([5., 6, -1])), f(np.array([5., 6, -1])))
    with pytest.raises(ss.UserError, match=r"ss.check failed at run time: .* >= 2"):
        ep.module()(np.array([5., -6, -1]))

    def g(x):
        y = x[x > 0]
        if y.shape[0] > 3:
            return y
        return x

    # with a static input of 3 elements the range [0, 3] decides `u0 > 3`: no error
    ss.export(g, (np.array([1., -2, 3]),))
    with pytest.raises(ss.GuardOnDataDependentError) as e:
        ss.export(g, (np.array([1., -2, 3]),), dynamic_shapes={"x": (A,)})
    assert "if y.shape[0] > 3:" in str(e.value) and "ss.check(y.shape[0] >= 4)" in str(e.value)

    def h(x, i):
        k = i.sum().item()
        ss.check(k >= 0)
        return x[:k]

    ep = ss.export(h, (arr(5), np.array([1, 2])))
    x5 = arr(5)
    same(ep.module()(x5, np.array([1, 1])), h(x5, np.array([1, 1])))


# --------------------------------------------------------------------------- seeds 3-5
def test_03_mutation_is_functionalized():
    def f(x):
        x[0, 0] = 3
        return x * 2

    ep = ss.export(f, (np.ones((2, 3)),))
    assert all(not n.op.endswith("_") for n in ep.graph.nodes)
    assert ep.graph_signature.inputs_to_mutate
    assert "USER_INPUT_MUTATION" in str(ep)
    a = np.ones((2, 3))
    out = ep.module()(a)
    assert a[0, 0] == 3 and out[0, 0] == 6


def test_04_non_array_python_is_specialized():
    def f(x):
        return x + id(x) % 7

    ep = ss.export(f, (np.ones(3),))
    assert ep.module()(np.ones(3)).shape == (3,)

    def g(x):
        try:
            x = x + 1
            raise RuntimeError("boom")
        except RuntimeError:
            x = x + 2
        return x

    ep = ss.export(g, (np.ones(3),))
    same(ep.module()(np.ones(3)), np.ones(3) + 3)


def test_05_data_dependent_control_flow_and_cond():
    def f(x):
        if x.sum() > 0:
            return np.sin(x)
        return np.cos(x)

    with pytest.raises(ss.GuardOnDataDependentError) as e:
        ss.export(f, (arr(3),))
    msg = str(e.value)
    assert "test_tracer_breadth.py" in msg and "if x.sum() > 0:" in msg and "ss.cond" in msg

    def g(x):
        return ss.cond(x.sum() > 0, np.sin, np.cos, [x])

    ep = ss.export(g, (np.ones(3),), dynamic_shapes={"x": (A,)})
    same(ep.module()(np.array([1., 2])), np.sin([1., 2]))
    same(ep.module()(np.array([-1., -2, -4])), np.cos([-1., -2, -4]))
    with pytest.raises(ss.UserError) as e:
        ss.export(lambda x: ss.cond(x.sum() > 0, lambda x: x[:, :4], lambda x: x[:, :3], [x]),
                  (np.ones((6, 5), np.float32),))
    assert "true_fn: f32[6, 4]" in str(e.value) and "false_fn: f32[6, 3]" in str(e.value)
    assert ss.cond(True, np.sin, np.cos, [np.ones(2)])[0] == np.sin(1.0)


def test_nested_cond_with_closure_and_branch_guards_join_the_contract():
    def g(x, y):
        def t(x):
            return x + y, x * 2

        def fl(x):
            return x - 1, ss.cond(x.max() > 3, lambda z: z * 3, lambda z: z * 4, [x])

        return ss.cond(x.shape[0] > 4, t, fl, (x,))

    ep = check(g, (np.arange(6.), np.ones(6)), {"x": (A,), "y": (A,)},
               (np.arange(3.), np.ones(3)), (np.arange(5.) - 10, np.ones(5)))
    # x == y is needed by the true branch: it joins the contract (as with torch.cond), so
    # the input check rejects a mismatch before any branch runs, whichever would run
    assert ep.input_shapes["y"] == ep.input_shapes["x"]
    for x in (np.arange(3.), np.arange(6.)):
        with pytest.raises(ss.UserError, match="y.shape\\[0\\] must equal x.shape\\[0\\]"):
            ep.module()(x, np.ones(7))


# --------------------------------------------------------------------------- int inputs
def test_dynamic_int_input_becomes_a_symbol():
    def f(x, n):
        return x[:n] * n

    ep = check(f, (np.arange(10.), 4), {"x": (A,), "n": Dim.DYNAMIC}, (np.arange(7.), 3))
    assert "Sym(s1)" in str(ep)
    with pytest.raises(ss.UserError, match="expected a Python int"):
        ep.module()(np.arange(7.), 3.0)
    ep = ss.export(f, (np.arange(10.), 4))
    with pytest.raises(ss.UserError, match="exported with n = 4"):
        ep.module()(np.arange(10.), 3)


def test_symint_times_constant_array_is_traced():
    W = arr(3)

    def f(x):
        return x + W * x.shape[0]

    check(f, (arr(4, 3),), {"x": (A, None)}, (arr(7, 3),))


def test_map_body_guards_join_the_contract():
    def f(xs, w):
        return ss.map(lambda x, w: x @ w + x.sum(), xs, w)

    ep = check(f, (arr(3, 4, 5), arr(5, 2)), {"xs": (A, A, A), "w": (A, A)},
               (arr(2, 3, 6), arr(6, 4)))
    assert ep.input_shapes["w"][0] == ep.input_shapes["xs"][2]
    assert ss.map(lambda x: x * 2, np.ones((2, 3))).shape == (2, 3)


def test_while_loop():
    def g(x, n):
        return ss.while_loop(lambda x, n: n.sum() < 100, lambda x, n: (x * 2, n * 2), (x, n))

    check(g, (np.ones(3), np.ones(2)), {"x": (A,), "n": (A,)}, (np.ones(5), np.ones(3)))
    with pytest.raises(ss.UserError, match="same shapes and dtypes"):
        ss.export(lambda x: ss.while_loop(lambda x: x.sum() < 9, lambda x: (x[1:],), (x,)),
                  (np.ones(4),), dynamic_shapes={"x": (A,)})


# --------------------------------------------------------------------------- x[:n // k], k < 0
@pytest.mark.parametrize("k", [-1, -2, -3, -5])
@pytest.mark.parametrize("form", ["stop", "start"])
def test_slice_by_size_floordiv_negative_admits_what_eager_admits(k, form):
    if form == "stop":
        def f(x):
            return x[: x.shape[0] // k] * 2
    else:
        def f(x):
            return x[x.shape[0] // k:] * 2
    for n0 in (2, 3, 8):
        ep = ss.export(f, (np.ones((n0, 3), np.float32),),
                       dynamic_shapes={"x": (ss.Dim("n", min=0), None)})
        m = ep.module()
        for n in range(0, 13):
            x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
            np.testing.assert_array_equal(m(x), f(x))


def test_slice_whose_bound_is_zero_only_on_an_empty_axis_needs_no_guard():
    def f(x):
        return x[: x.shape[0] // -2]
    ep = ss.export(f, (np.ones((8, 3)),), dynamic_shapes={"x": (ss.Dim("n", min=0), None)})
    assert ep.guards == [] and str(ep.range_constraints[next(iter(ep.range_constraints))]) \
        == "VR[0, int_oo]"


def test_negative_zero_slice_bound_still_guards():
    # x[:-(n//2)] is x[:0] (empty) below n = 2 and x[:n - n//2] above: a real change
    def f(x):
        return x[: -(x.shape[0] // 2)]
    with pytest.raises(ss.ConstraintViolationError):
        ss.export(f, (np.ones((8, 3)),), dynamic_shapes={"x": (ss.Dim("n", min=0), None)})
