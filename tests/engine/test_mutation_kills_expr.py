"""Tests that kill the surviving mutants of ``symshape/algebra/expr.py`` (the mutation gate,
``python -m proofs.mutation --only expr``; docs/mutation_report.md)."""
import math
from fractions import Fraction

import pytest

from symshape.algebra.expr import (OpAtom, Sym, ceildiv, evaluate, floordiv, format_expr, format_py,
                           mod, smin)


def test_as_atom_is_only_an_atom_with_coefficient_one():
    # -x, 2*x, 0*x + 3 are not atoms (mutant: `c <= 1` read -x as the atom x)
    s = Sym(0)
    x = s.expr
    assert x.as_atom() == s
    q = floordiv(x, 3)
    assert type(q.as_atom()) is OpAtom and q.as_atom().kind == "FloorDiv"
    for e in (-x, 2 * x, -q, -2 * q, x + 1, x * x, -smin(x, 4)):
        assert e.as_atom() is None, e


def test_as_symbol_is_only_a_lone_symbol():
    # x*y and x*x start with a symbol but are products (mutant: `len(term) >= 1`)
    x, y = Sym(0).expr, Sym(1).expr
    assert x.as_symbol() == Sym(0)
    for e in (x * y, x * x, 2 * x, x + 1, floordiv(x, 2)):
        assert e.as_symbol() is None, e


@pytest.mark.parametrize("build, text", [
    (lambda x, y: 3 * x * y, "3*s0*s1"),                 # the coefficient first
    (lambda x, y: 1 - 3 * x * y, "(-3*s0*s1 + 1)"),
    (lambda x, y: floordiv(2 * x, 3), "((2*s0) // 3)"),  # a product operand bracketed
    (lambda x, y: mod(2 * x * y, 5), "((2*s0*s1) % 5)"),
    (lambda x, y: floordiv(x, 2 * y), "(s0 // (2*s1))"),
    (lambda x, y: floordiv(x * y, 2 * y + 1), "((s0*s1) // (2*s1 + 1))"),
])
def test_python_source_reads_as_written(build, text):
    # the generated checks print these; each operand bracketed by its own shape (mutants:
    # the coefficient inserted before the last factor, the numerator bracketed by the
    # divisor's shape)
    x, y = Sym(0).expr, Sym(1).expr
    assert format_py(build(x, y)) == text
    assert eval(text, {"s0": 7, "s1": 3}) == evaluate(build(x, y), {Sym(0): 7, Sym(1): 3})


def test_ceildiv_of_plain_ints_is_the_ceiling():
    # the plain-int branch, against exact fractions (mutant: `(-a) - b` for `(-a) // b`)
    for a in range(-30, 31):
        for b in list(range(-7, 0)) + list(range(1, 8)):
            assert ceildiv(a, b) == math.ceil(Fraction(a, b)), (a, b)


def test_a_remainder_reads_as_python_or_as_sympy():
    x = Sym(0).expr
    assert format_expr(mod(x, 3), py=True) == "(s0 % 3)"
    assert format_expr(mod(x + 1, 4) + 2, py=True) == "((s0 + 1) % 4) + 2"
    assert format_expr(mod(x, 3)) == "Mod(s0, 3)"
