"""Every published view of the contract means what the program does (issue 34): the input
check names an infinite range end as text (never a bare ``int_oo``), ``range_constraints``
of a compound input dim is the exact projection, and the sympy values in
``input_shapes`` / ``range_constraints`` evaluate to the engine's sizes whatever sympy's
simplifier does."""
import numpy as np
import pytest
import sympy

import symshape as ss
from symshape import Dim
from symshape.algebra import expr as E
from symshape.algebra.infinity import INT_OO, NEG_INT_OO
from symshape.algebra.ranges import ValueRange
from symshape.contract import sympy_form as B

A = Dim.AUTO


def _upper_bounded_int():
    return ss.export(lambda x, k: x[:1] * 2 if k <= 5 else x[:1], (np.ones(4), 3),
                     dynamic_shapes={"x": (A,), "k": Dim.DYNAMIC})


def test_int_input_above_its_upper_end_is_a_user_error_naming_it():
    ep = _upper_bounded_int()
    with pytest.raises(ss.UserError, match=r"k = 100 is outside the range \[-int_oo, 5\]"):
        ep.module()(np.ones(4), 100)
    np.testing.assert_array_equal(ep.module()(np.ones(4), -7), np.ones(1) * 2)


def test_int_input_above_its_upper_end_is_a_user_error_compiled():
    with pytest.raises(ss.UserError, match="k = 100"):
        _upper_bounded_int().compile()(np.ones(4), 100)


def test_the_check_text_names_no_infinity():
    src = _upper_bounded_int().module_source
    assert "'-int_oo'" in src and " int_oo" not in src.replace("'-int_oo'", "")


def test_compound_dim_range_is_the_exact_projection():
    def f(x, y):
        n = x.shape[0]
        return y.reshape(n - 3, n - 3)
    ep = ss.export(f, (np.ones(6), np.ones(9)), dynamic_shapes={"x": (A,), "y": (A,)})
    (y,) = ep.input_shapes["y"]
    assert ep.range_constraints[y] == ValueRange(4, INT_OO)      # n >= 5: (n - 3)**2 >= 4
    assert [str(k) for k in ep.range_constraints] == ["s0", "s0**2 - 6*s0 + 9"]
    assert ep.range_constraints[next(iter(ep.range_constraints))] == ValueRange(5, INT_OO)
    assert ep.guards == []


def test_compound_dim_range_without_guards_goes_through_the_projection():
    s0 = E.Sym(0)
    from symshape.contract.constraint_set import ConstraintSet, InputDesc
    n = s0.expr
    cs = ConstraintSet([InputDesc("x", "x", dims=(n,), dtype=np.float64),
                        InputDesc("y", "y", dims=(n * n - 6 * n + 9,), dtype=np.float64)],
                       {s0: ValueRange(5, INT_OO)}, [], {}, {})
    assert cs.range_constraints()[n * n - 6 * n + 9] == ValueRange(4, INT_OO)
    assert cs.exact_range(n * n - 6 * n + 9) == ValueRange(4, INT_OO)


def _mod_program():
    def g(x, y):
        a = np.repeat(x[:x.shape[0] % 5], 2)
        return y + a[:a.shape[0] % 3]
    return g, ss.export(g, (np.ones(9), np.ones(2)), dynamic_shapes={"x": (A,), "y": (A,)})


def test_published_mod_evaluates_to_the_programs_size():
    g, ep = _mod_program()
    (y,) = ep.input_shapes["y"]
    (s0,) = y.free_symbols
    assert y.xreplace({s0: 7}) == 1                # the program: 2*(7 % 5) % 3 == 1
    assert y.xreplace({s0: 9}) == 2
    for n in range(4, 30):
        assert y.xreplace({s0: n}) == (2 * (n % 5)) % 3
    assert y in ep.range_constraints


def test_public_values_agree_with_the_engine_on_corner_points():
    s0, s1 = E.Sym(0), E.Sym(1)
    n, m = s0.expr, s1.expr
    ranges = {s0: ValueRange(2, INT_OO), s1: ValueRange(NEG_INT_OO, 7)}
    exprs = [E.mod(2 * E.mod(n, 5), 3), E.floordiv(E.mod(n, 7) * 3, 4) + m,
             E.smin(E.mod(n, 4), m) - E.smax(E.floordiv(n, 3), 2), n * n - 6 * n + 9,
             E.mod(E.mod(n, 6) * E.mod(n, 6), 5)]
    for x in exprs:
        got = B.public(x, ranges)
        for pt in B.corner_points([s0, s1], ranges):
            vals = dict(zip((s0, s1), pt))
            sub = {B.symbol(s, ranges): v for s, v in vals.items()}
            assert got.xreplace(sub) == E.evaluate(x, vals), (x, got, pt)


def test_public_falls_back_to_the_unevaluated_form(monkeypatch):
    # sympy's arithmetic rewriting a sum wrongly is caught on the corner points
    s0 = E.Sym(0)
    x = 2 * E.mod(s0.expr, 5) + 1
    real = B.to_sympy

    def wrong(x, ranges=None, plain=False):
        got = real(x, ranges, plain)
        return got if plain else got + 1
    monkeypatch.setattr(B, "to_sympy", wrong)
    got = B.public(x, {s0: ValueRange(2, INT_OO)})
    (s,) = got.free_symbols
    assert all(got.xreplace({s: v}) == 2 * (v % 5) + 1 for v in range(2, 40))


def test_plain_ints_and_symbols_are_published_as_before():
    s0 = E.Sym(0)
    assert B.public(5) == 5
    assert B.public(s0.expr, {s0: ValueRange(2, INT_OO)}) == \
        B.to_sympy(s0.expr, {s0: ValueRange(2, INT_OO)})


def test_public_raises_an_internal_error_when_no_form_evaluates_to_the_size(monkeypatch):
    from symshape.errors import InternalError
    s0 = E.Sym(0)
    real = B.to_sympy
    monkeypatch.setattr(B, "to_sympy", lambda x, ranges=None, plain=False:
                        real(x, ranges, plain) + 1)
    with pytest.raises(InternalError, match="does not evaluate to it"):
        B.public(2 * E.mod(s0.expr, 5), {s0: ValueRange(2, INT_OO)})


def test_a_size_read_before_its_symbols_is_named_by_the_axes_that_bind_them():
    ep = ss.export(lambda x, y, z: x + np.concatenate([y, z]), (np.ones(7), np.ones(3),
                                                                np.ones(4)),
                   dynamic_shapes={"x": (A,), "y": (A,), "z": (A,)})
    with pytest.raises(ss.UserError) as e:
        ep.module()(np.ones(7), np.ones(3), np.ones(5))
    assert "z.shape[0] must equal (x.shape[0] - (y.shape[0]))" in str(e.value)


def test_a_root_read_with_an_offset_is_named_with_it():
    ep = ss.export(lambda y, x: y + x[3:], (np.ones(4), np.ones(7)),
                   dynamic_shapes={"y": (A,), "x": (A,)})
    with pytest.raises(ss.UserError) as e:
        ep.module()(np.ones(4), np.ones(9))
    assert "x.shape[0] must equal (y.shape[0] + 3)" in str(e.value)
