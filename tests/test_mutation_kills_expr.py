"""Tests that kill the surviving mutants of ``symshape/expr.py`` (the mutation gate,
``python -m proofs.mutation --only expr``; docs/mutation_report.md)."""
import pytest

from symshape.expr import OpAtom, Sym, evaluate, floordiv, format_py, mod, smin


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
