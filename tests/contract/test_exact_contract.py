"""One exact contract: ``range_constraints`` is the exact projection of every guard,
``ep.guards`` holds what ranges and shapes cannot say, a guard needed inside an
``ss.cond`` branch joins the contract, and the suggested fixes use a Dim form whenever
one exists (bounds, ``2*_d`` multiples), keeping what the user declared."""
import builtins

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.algebra.infinity import INT_OO

A = Dim.AUTO


def violation(f, args, spec) -> ss.ConstraintViolationError:
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(f, args, dynamic_shapes=spec)
    return e.value


def fixes(err):
    return [str(f) for f in err.suggested_fixes]


def apply_all(spec, err):
    for fix in err.suggested_fixes:
        spec = fix.apply(spec)
    return spec


def only_range(ep):
    (vr,) = [v for k, v in ep.range_constraints.items() if k.is_Symbol]
    return vr.lower, vr.upper


# --------------------------------------------------------------------------- cond
W16 = np.linspace(0.0, 1.0, 48).reshape(16, 3)


def head_matmul(x):
    """Both branches need x's rows to be 16 long: the contract must say so."""
    return ss.cond(x.sum() > 0, lambda x: x[:4] @ W16, lambda x: x[:4] @ W16 * 2.0, (x,))


def test_guard_inside_a_cond_branch_joins_the_contract():
    ep = ss.export(head_matmul, (np.ones((6, 16)),), dynamic_shapes={"x": (A, A)})
    assert ep.input_shapes["x"][1] == 16
    with pytest.raises(ss.UserError, match=r"x\.shape\[1\]"):
        ep.module()(np.ones((6, 17)))            # rejected by the input check
    np.testing.assert_allclose(ep.module()(-np.ones((5, 16))), head_matmul(-np.ones((5, 16))))


def test_broadcast_inside_one_branch_only_joins_the_contract():
    def f(x, y):
        return ss.cond(x.max() > 0, lambda x, y: x + y, lambda x, y: x * 2.0, (x, y))

    ep = ss.export(f, (np.ones(6), np.ones(6)), dynamic_shapes={"x": (A,), "y": (A,)})
    assert ep.input_shapes["x"] == ep.input_shapes["y"]
    with pytest.raises(ss.UserError, match=r"y\.shape\[0\]"):
        ep.module()(-np.ones(4), np.ones(5))     # the false branch would run: still refused


# --------------------------------------------------------------------------- tight ranges
def checked(pred):
    def f(x):
        ss.check(pred(x.shape[0]))
        return x * 2.0
    return f


TIGHT = [
    # (what, predicate, example, exact range, fix line for a named Dim 'n')
    ("(n + 1) // 2 >= 2", lambda n: (n + 1) // 2 >= 2, 5, (3, INT_OO), "n = Dim('n', min=3)"),
    ("n // 100 == 30", lambda n: n // 100 == 30, 3050, (3000, 3099),
     "n = Dim('n', min=3000, max=3099)"),
    ("n // 4 <= 4", lambda n: n // 4 <= 4, 8, (2, 19), "n = Dim('n', max=19)"),
    ("n * n <= 100", lambda n: n * n <= 100, 5, (2, 10), "n = Dim('n', max=10)"),
    ("n // 2 == 3", lambda n: n // 2 == 3, 6, (6, 7), "n = Dim('n', min=6, max=7)"),
    ("min(n, 5) == 5", lambda n: ss.sym_min(n, 5) == 5, 7, (5, INT_OO), "n = Dim('n', min=5)"),
    ("3 * n // 2 <= 12", lambda n: 3 * n // 2 <= 12, 4, (2, 8), "n = Dim('n', max=8)"),
]


@pytest.mark.parametrize("what,pred,example,exact,fix", TIGHT, ids=[t[0] for t in TIGHT])
def test_range_is_the_exact_projection_of_the_guard(what, pred, example, exact, fix):
    f = checked(pred)
    ep = ss.export(f, (np.ones(example),), dynamic_shapes={"x": (A,)})
    assert only_range(ep) == exact
    assert ep.guards == []                      # the range says it all
    lo, hi = exact
    ep.module()(np.ones(lo))                    # both ends are admitted ...
    if hi is not INT_OO:
        ep.module()(np.ones(hi))
        with pytest.raises(ss.UserError):
            ep.module()(np.ones(hi + 1))        # ... and nothing beyond them
    if lo > 2:
        with pytest.raises(ss.UserError):
            ep.module()(np.ones(lo - 1))
    err = violation(f, (np.ones(example),), {"x": (Dim("n"),)})
    assert fixes(err) == [fix]
    ss.export(f, (np.ones(example),), dynamic_shapes=apply_all({"x": (Dim("n"),)}, err))


def test_relation_between_inputs_tightens_the_range_and_is_a_guard():
    def f(x, y):
        ss.check(y.shape[0] <= x.shape[0] - 1)
        return x[:y.shape[0]] + y

    ep = ss.export(f, (np.ones(5), np.ones(3)), dynamic_shapes={"x": (A,), "y": (A,)})
    rc = {str(k): (v.lower, v.upper) for k, v in ep.range_constraints.items()}
    assert rc == {"s0": (3, INT_OO), "s1": (2, INT_OO)}
    assert ep.guards == ["y.shape[0] <= x.shape[0] - 1"]
    text = str(ep)
    assert text.index("Range constraints:") < text.index("Guards:\n    y.shape[0] <= "
                                                         "x.shape[0] - 1")
    ep.module()(np.ones(3), np.ones(2))
    with pytest.raises(ss.UserError, match="y.shape\\[0\\] <= x.shape\\[0\\] - 1"):
        ep.module()(np.ones(3), np.ones(3))


def test_sum_bound_is_a_guard_and_each_range_is_exact():
    def f(x, y):
        ss.check(x.shape[0] + y.shape[0] <= 100)
        return np.concatenate([x, y])

    ep = ss.export(f, (np.ones(5), np.ones(7)), dynamic_shapes={"x": (A,), "y": (A,)})
    assert sorted((v.lower, v.upper) for v in ep.range_constraints.values()) == \
        [(2, 98), (2, 98)]
    assert ep.guards == ["x.shape[0] + y.shape[0] <= 100"]
    ep.module()(np.ones(98), np.ones(2))


FREQS = np.linspace(0.0, 1.0, 256 * 4).reshape(256, 4)


def rope_step(x, pos):
    """One decoding step (two heads) reads row ``pos`` of a 256-row table: pos <= 255."""
    return x * FREQS[pos:pos + 1]


def test_kv_cache_position_gets_its_exact_bound():
    ep = ss.export(rope_step, (np.ones((2, 4)), 3), dynamic_shapes={"x": None, "pos": A})
    assert only_range(ep)[1] == 255
    err = violation(rope_step, (np.ones((2, 4)), 3), {"x": None, "pos": Dim("pos")})
    assert fixes(err) == ["pos = Dim('pos', max=255)"]


# --------------------------------------------------------------------------- divisibility
def patches(x):
    b, c, h, w = x.shape
    return x.reshape(b, c, h // 2, 2, w // 2, 2).mean((3, 5))


def test_reshape_factors_are_matched_pairwise():
    spec = {"x": (Dim("b"), 3, Dim("dh"), Dim("dw"))}
    x = np.ones((2, 3, 8, 6))
    err = violation(patches, (x,), spec)
    assert fixes(err) == ["_dh = Dim('_dh', min=1)", "dh = 2*_dh",
                          "_dw = Dim('_dw', min=1)", "dw = 2*_dw"]
    assert "Dim.AUTO" not in str(err)
    ep = ss.export(patches, (x,), dynamic_shapes=apply_all(spec, err))
    assert ep.input_shapes["x"][2] == 2 * ep.input_shapes["x"][2].free_symbols.pop()


def test_fix_keeps_the_users_bounds():
    spec = {"x": (Dim("b"), 3, Dim("dh", max=64), Dim("dw", min=4, max=30))}
    err = violation(patches, (np.ones((2, 3, 8, 6)),), spec)
    assert fixes(err) == ["_dh = Dim('_dh', min=1, max=32)", "dh = 2*_dh",
                          "_dw = Dim('_dw', max=15)", "dw = 2*_dw"]   # min 2 is the default


def two_downsamplings(x):
    b, h, c = x.shape
    x = x.reshape(b, h // 2, 2, c).mean(2)
    b, h, c = x.shape
    return x.reshape(b, h // 2, 2, c).mean(2)


def test_two_stride_two_downsamplings_need_a_multiple_of_four():
    err = violation(two_downsamplings, (np.ones((2, 8, 3)),), {"x": (Dim("b"), Dim("m"), 3)})
    assert fixes(err) == ["_m = Dim('_m', min=1)", "m = 4*_m"]


def test_halves_need_an_even_size():
    def f(x):
        h = x.shape[1] // 2
        return x[:, h:] * x[:, :h]

    err = violation(f, (np.ones((2, 8)),), {"x": (2, Dim("d"))})
    assert fixes(err) == ["_d = Dim('_d', min=1)", "d = 2*_d"]
    ep = ss.export(f, (np.ones((2, 8)),), dynamic_shapes={"x": (2, A)})
    with pytest.raises(ss.UserError):
        ep.module()(np.ones((2, 7)))


def pairs_then_triples(x):
    return x.reshape(-1, 2).sum(1).reshape(-1, 3)


def test_chained_reshapes_need_the_product_of_the_factors():
    ep = ss.export(pairs_then_triples, (np.ones(12),), dynamic_shapes={"x": (A,)})
    (d,) = ep.input_shapes["x"]
    assert d == 6 * d.free_symbols.pop()
    err = violation(pairs_then_triples, (np.ones(12),), {"x": (Dim("s"),)})
    assert fixes(err) == ["_s = Dim('_s', min=1)", "s = 6*_s"]


# --------------------------------------------------------------------------- messages
def test_specialized_dynamic_axis_says_why_and_how_to_keep_it_symbolic():
    # Python's own int (the traced code's ``int`` keeps a size symbolic)
    def f(x):
        return np.zeros(builtins.int(x.shape[0])) + x

    err = violation(f, (np.ones(5),), {"x": (Dim.DYNAMIC,)})
    text = str(err)
    assert "int() needs a concrete value" in text and "like=x" in text
    assert "return np.zeros(builtins.int(x.shape[0])) + x" in text


def test_no_false_violation_for_a_data_dependent_size_with_a_named_dim():
    def f(x):
        return x[x > 0]

    ep = ss.export(f, (np.arange(-2.0, 3.0),), dynamic_shapes={"x": (Dim("d"),)})
    assert ep.guards == []


def test_no_false_violation_for_a_named_dim_on_an_int():
    def f(x, n):
        return x[:n] * n

    ep = ss.export(f, (np.ones(6), 3), dynamic_shapes={"x": (A,), "n": Dim("n", max=8)})
    assert only_range_named(ep, 8)


def only_range_named(ep, hi):
    return any(v.upper == hi for v in ep.range_constraints.values())


def two_downsamplings_inferred(x):
    m = x.shape[0]
    a = x.reshape(m // 2, 2, -1).sum(1)          # -1: numel / (2*(m//2)) must divide
    return a.reshape(m // 4, 2, -1).sum(1)


def test_inferred_axis_divisibility_is_decided_case_by_case():
    err = violation(two_downsamplings_inferred, (np.ones((8, 3)),), {"x": (Dim("m"), 3)})
    assert fixes(err) == ["_m = Dim('_m', min=1)", "m = 4*_m"]
    spec = apply_all({"x": (Dim("m"), 3)}, err)
    ep = ss.export(two_downsamplings_inferred, (np.ones((8, 3)),), dynamic_shapes=spec)
    np.testing.assert_allclose(ep.module()(np.ones((12, 3))),
                               two_downsamplings_inferred(np.ones((12, 3))))


def test_relation_with_an_automatic_axis_is_a_guard_not_a_violation():
    def f(x, n):
        return np.arange(n) * x[:n]

    ep = ss.export(f, (np.ones(10), 3), dynamic_shapes={"x": (A,), "n": Dim("n", max=8)})
    assert ep.guards == ["n <= x.shape[0]"]
    assert sorted((v.lower, v.upper) for v in ep.range_constraints.values()) == \
        [(2, 8), (2, INT_OO)]
    np.testing.assert_allclose(ep.module()(np.ones(4), 4), f(np.ones(4), 4))
    with pytest.raises(ss.UserError, match=r"n <= x\.shape\[0\]"):
        ep.module()(np.ones(3), 4)


def test_guards_survive_save_and_load(tmp_path):
    def f(x, y):
        ss.check(y.shape[0] <= x.shape[0] - 1)
        return x[:y.shape[0]] + y

    ep = ss.export(f, (np.ones(5), np.ones(3)), dynamic_shapes={"x": (A,), "y": (A,)})
    ss.save(ep, str(tmp_path / "p.json"))
    loaded = ss.load(str(tmp_path / "p.json"))
    assert loaded.guards == ep.guards == ["y.shape[0] <= x.shape[0] - 1"]
    assert str(loaded).endswith("Guards:\n    y.shape[0] <= x.shape[0] - 1")
    with pytest.raises(ss.UserError):
        loaded.module()(np.ones(3), np.ones(3))
