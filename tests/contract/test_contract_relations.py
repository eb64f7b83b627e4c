"""Relations between two named Dims get ranges that imply them (never a fix that drops
declared bounds); a Dim.AUTO axis the program pinned says so at run time; ep.guards leaves
out what the printed ranges imply; and the false violations of the issue stay fixed."""
import builtins

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

A = Dim.AUTO


def violation(f, args, spec) -> ss.ConstraintViolationError:
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(f, args, dynamic_shapes=spec)
    return e.value


def fixed_spec(spec, err):
    for fix in err.suggested_fixes:
        spec = fix.apply(spec)
    return spec


def prefix_sum(x, y):
    """Adds y onto the first rows of x: needs len(y) <= len(x)."""
    return x[:y.shape[0]] + y


def padded_prefix(x, y):
    """Two more rows of x than y has: needs len(y) + 2 <= len(x)."""
    return x[:y.shape[0] + 2] + np.concatenate([y, y[:2]])


# ----------------------------------------------------------------- relation fixes
def test_relation_narrows_one_dim_to_the_others_end_and_keeps_its_bounds():
    spec = {"x": (Dim("d", min=16, max=64),), "y": (Dim("n", min=2, max=32),)}
    err = violation(prefix_sum, (np.ones(20), np.ones(3)), spec)
    text = str(err)
    assert "`n <= d`" in text and "between d and n" in text
    assert "return x[:y.shape[0]] + y" in text
    assert [str(f) for f in err.suggested_fixes] == ["n = Dim('n', max=16)"]
    ep = ss.export(prefix_sum, (np.ones(20), np.ones(3)), dynamic_shapes=fixed_spec(spec, err))
    assert ep.guards == []
    m = ep.module()
    np.testing.assert_allclose(m(np.ones(16), np.ones(16)), prefix_sum(np.ones(16),
                                                                         np.ones(16)))
    with pytest.raises(ss.UserError, match=r"outside the range \[2, 16\]"):
        m(np.ones(64), np.ones(17))


def test_relation_splits_both_dims_around_the_example_when_one_is_not_enough():
    spec = {"x": (Dim("d", max=64),), "y": (Dim("n", max=64),)}
    err = violation(padded_prefix, (np.ones(8), np.ones(3)), spec)
    assert "`n <= d - 2`" in str(err)                 # not max(0, -d + n + 2) == 0
    fixes = [str(f) for f in err.suggested_fixes]
    assert fixes == ["n = Dim('n', max=6)", "d = Dim('d', min=8, max=64)"]
    ep = ss.export(padded_prefix, (np.ones(8), np.ones(3)),
                   dynamic_shapes=fixed_spec(spec, err))
    for d, n in ((8, 6), (64, 2), (40, 5)):
        x, y = np.arange(float(d)), np.arange(float(n))
        np.testing.assert_allclose(ep.module()(x, y), padded_prefix(x, y))


def test_relation_between_unbounded_dims_makes_only_one_of_them_auto():
    err = violation(prefix_sum, (np.ones(8), np.ones(3)),
                    {"x": (Dim("d"),), "y": (Dim("n"),)})
    assert [str(f) for f in err.suggested_fixes] == ["n = Dim.AUTO"]
    assert "n = Dim.AUTO (it has no declared bounds)" in str(err)
    ep = ss.export(prefix_sum, (np.ones(8), np.ones(3)),
                   dynamic_shapes=fixed_spec({"x": (Dim("d"),), "y": (Dim("n"),)}, err))
    assert ep.guards == ["y.shape[0] <= x.shape[0]"]


def test_relation_between_bounded_dims_without_ranges_never_drops_the_bounds():
    spec = {"x": (Dim("d", max=64),), "y": (Dim("n", max=64),)}
    err = violation(prefix_sum, (np.ones(2), np.ones(2)), spec)
    text = str(err)
    assert "between d and n" in text and "d in [2, 64], n in [2, 64]" in text
    assert "return x[:y.shape[0]] + y" in text
    assert not any("AUTO" in str(f) for f in err.suggested_fixes)


def test_a_sum_of_two_dims_is_implied_by_a_bound_on_one():
    def f(x, y):
        ss.check(x.shape[0] + y.shape[0] <= 100)
        return x.sum() + y.sum()

    spec = {"x": (Dim("d", max=64),), "y": (Dim("n", max=64),)}
    err = violation(f, (np.ones(8), np.ones(3)), spec)
    assert [str(x) for x in err.suggested_fixes] == ["n = Dim('n', max=36)"]


def square_tiles(x, y):
    """x holds len(y)**2 values: an equality no Dim form states."""
    return x.reshape(-1) + np.ones(y.shape[0] * y.shape[0])


def test_no_fix_drops_declared_bounds_for_an_inexpressible_equality():
    err = violation(square_tiles, (np.ones(9), np.ones(3)),
                    {"x": (Dim("d", max=100),), "y": (Dim("n", max=9),)})
    assert "d must equal n**2" in str(err) and "would drop the bounds" in str(err)
    assert err.suggested_fixes == []
    err = violation(square_tiles, (np.ones(9), np.ones(3)), {"x": (Dim("d"),), "y": (Dim("n"),)})
    assert [str(f) for f in err.suggested_fixes] == ["d = Dim.AUTO"]


# ----------------------------------------------------------------- run-time messages
def pinned_by_int(x):      # Python's own int (the traced code's int keeps sizes symbolic)
    return np.zeros(builtins.int(x.shape[0])) + x


def pinned_by_branch(x):
    if x.shape[0] == 5:
        return x * 2.0
    return x


@pytest.mark.parametrize("f,says", [
    (pinned_by_int, r"int\(\) needs a concrete value; pass the size symbolically"),
    (pinned_by_branch, r"other sizes need that line to work for them"),
])
def test_a_pinned_auto_axis_says_the_program_specialized_it(f, says, tmp_path):
    ep = ss.export(f, (np.ones(5),), dynamic_shapes={"x": (A,)})
    for m in (ep.module(), ss.load(_saved(ep, tmp_path)).module()):
        with pytest.raises(ss.UserError) as e:
            m(np.ones(6))
        text = str(e.value)
        assert "the program specialized this axis to 5" in text
        assert "test_contract_relations.py" in text and "did not mark it dynamic" not in text
        assert __import__("re").search(says, text)


def _saved(ep, tmp_path):
    path = str(tmp_path / "p.json")
    ss.save(ep, path)
    return path


def test_a_static_spec_axis_keeps_the_static_message():
    ep = ss.export(lambda x: x * 2.0, (np.ones(5),), dynamic_shapes={"x": (5,)})
    with pytest.raises(ss.UserError, match="did not mark it dynamic"):
        ep.module()(np.ones(6))


# ----------------------------------------------------------------- implied guards
def concat_add(x, y, z):
    ss.check(z.shape[0] <= 20)
    return np.concatenate([x, y]) + z


def test_guard_implied_by_a_compound_dims_range_is_not_listed_but_still_checked():
    ep = ss.export(concat_add, (np.ones(3), np.ones(4), np.ones(7)),
                   dynamic_shapes={"x": (A,), "y": (A,), "z": (A,)})
    ranges = {str(k): (v.lower, v.upper) for k, v in ep.range_constraints.items()}
    assert ranges["s0 + s1"] == (4, 20)
    assert ep.guards == [] and "Guards:" not in str(ep)
    with pytest.raises(ss.UserError, match=r"x\.shape\[0\] \+ y\.shape\[0\] <= 20"):
        ep.module()(np.ones(10), np.ones(11), np.ones(21))


def test_guard_the_ranges_do_not_imply_stays_listed():
    def f(x, y):
        ss.check(y.shape[0] <= x.shape[0] - 1)
        return x[:y.shape[0]] + y

    ep = ss.export(f, (np.ones(5), np.ones(3)), dynamic_shapes={"x": (A,), "y": (A,)})
    assert ep.guards == ["y.shape[0] <= x.shape[0] - 1"]


# ----------------------------------------------------------------- false violations
def test_int_times_array_with_a_bounded_named_dim():
    def f(x, n):
        return x * n

    ep = ss.export(f, (np.ones(6), 3), dynamic_shapes={"x": (A,), "n": Dim("n", max=8)})
    np.testing.assert_allclose(ep.module()(np.ones(4), 8), np.ones(4) * 8)
    with pytest.raises(ss.UserError, match="outside the range"):
        ep.module()(np.ones(4), 9)


def test_named_dim_on_an_int_argument_used_as_a_size():
    def f(x, n):
        return np.zeros(n) + x.sum() * n

    ep = ss.export(f, (np.ones(6), 3), dynamic_shapes={"x": (A,), "n": Dim("n")})
    np.testing.assert_allclose(ep.module()(np.ones(4), 7), f(np.ones(4), 7))


@pytest.mark.parametrize("dim", [Dim("d"), Dim("d", max=64), Dim("d", min=3)])
def test_boolean_mask_with_a_named_dim(dim):
    def f(x):
        return x[x > 0] * 2.0

    x = np.arange(-2.0, 3.0)
    ep = ss.export(f, (x,), dynamic_shapes={"x": (dim,)})
    assert ep.guards == []
    np.testing.assert_allclose(ep.module()(np.arange(-3.0, 5.0)), f(np.arange(-3.0, 5.0)))


# ------------------------------------------------ relations among three or more named Dims
def joined(x, y, z):
    """Both inputs laid end to end, added onto the first rows of z: needs a + b <= c."""
    return np.concatenate([x, y]) + z[:x.shape[0] + y.shape[0]]


EXAMPLE3 = (np.ones(5), np.ones(6), np.ones(20))


def test_three_dim_relation_narrows_the_bounded_dims_and_keeps_their_bounds():
    spec = {"x": (Dim("a", max=64),), "y": (Dim("b", max=64),), "z": (Dim("c", max=100),)}
    err = violation(joined, EXAMPLE3, spec)
    text = str(err)
    assert "`a + b <= c`" in text and "a relation between a, b and c" in text
    assert "return np.concatenate([x, y]) + z[:x.shape[0] + y.shape[0]]" in text
    fixes = [str(f) for f in err.suggested_fixes]
    assert fixes == ["a = Dim('a', max=14)", "b = Dim('b', max=6)",
                     "c = Dim('c', min=20, max=100)"]
    ep = ss.export(joined, EXAMPLE3, dynamic_shapes=fixed_spec(spec, err))
    assert ep.guards == []
    m = ep.module()
    for a, b, c in ((14, 6, 20), (2, 2, 100), (9, 3, 57)):
        args = (np.ones(a), np.ones(b), np.arange(float(c)))
        np.testing.assert_allclose(m(*args), joined(*args))
    with pytest.raises(ss.UserError):
        m(np.ones(15), np.ones(6), np.ones(100))


def test_three_dim_relation_splits_around_the_example_within_declared_minimums():
    spec = {"x": (Dim("a", min=4, max=64),), "y": (Dim("b", min=4, max=64),),
            "z": (Dim("c", max=20),)}
    err = violation(joined, EXAMPLE3, spec)
    fixed = fixed_spec(spec, err)
    for name, (lo, hi) in (("x", (4, 64)), ("y", (4, 64)), ("z", (2, 20))):
        d = fixed[name][0]
        assert d.min >= lo and d.max <= hi, d     # never wider than declared
    assert fixed["x"][0].min == 4 and fixed["y"][0].min == 4
    ep = ss.export(joined, EXAMPLE3, dynamic_shapes=fixed)
    assert ep.guards == []
    rc = {str(k): (v.lower, v.upper) for k, v in ep.range_constraints.items()}
    (a_lo, a_hi), (b_lo, b_hi), (c_lo, c_hi) = rc["s0"], rc["s1"], rc["s2"]
    assert a_hi + b_hi <= c_lo                    # every size the ranges allow is fine


def test_three_dim_relation_without_bounds_leaves_the_last_dim_to_tracing():
    spec = {"x": (Dim("a"),), "y": (Dim("b"),), "z": (Dim("c"),)}
    err = violation(joined, EXAMPLE3, spec)
    assert "c = Dim.AUTO (it has no declared bounds)" in str(err)
    assert [str(f) for f in err.suggested_fixes][-1] == "c = Dim.AUTO"
    ep = ss.export(joined, EXAMPLE3, dynamic_shapes=fixed_spec(spec, err))
    assert ep.guards == ["x.shape[0] + y.shape[0] <= z.shape[0]"]
    lo = {str(k): v.lower for k, v in ep.range_constraints.items()}
    assert lo["s0"] == 2 and lo["s1"] == 2                 # a and b keep their ranges


def test_three_dim_relation_with_no_box_names_every_dim_its_range_and_the_line():
    spec = {"x": (Dim("a", min=5, max=64),), "y": (Dim("b", min=6, max=64),),
            "z": (Dim("c", max=12),)}
    err = violation(joined, (np.ones(5), np.ones(6), np.ones(11)), spec)
    text = str(err)
    assert "a relation between a, b and c" in text
    assert "a in [5, 64], b in [6, 64], c in [2, 12]" in text
    assert "declare ranges for a, b and c that imply it" in text
    assert "return np.concatenate([x, y]) + z[:x.shape[0] + y.shape[0]]" in text
    assert not any("AUTO" in str(f) for f in err.suggested_fixes)
