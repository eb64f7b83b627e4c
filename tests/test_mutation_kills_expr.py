"""Tests that kill the surviving mutants of ``symshape/expr.py`` (the mutation gate,
``python -m proofs.mutation --only expr``; docs/mutation_report.md)."""
from symshape.expr import OpAtom, Sym, floordiv, smin


def test_as_atom_is_only_an_atom_with_coefficient_one():
    # -x, 2*x, 0*x + 3 are not atoms (mutant: `c <= 1` read -x as the atom x)
    s = Sym(0)
    x = s.expr
    assert x.as_atom() == s
    q = floordiv(x, 3)
    assert type(q.as_atom()) is OpAtom and q.as_atom().kind == "FloorDiv"
    for e in (-x, 2 * x, -q, -2 * q, x + 1, x * x, -smin(x, 4)):
        assert e.as_atom() is None, e
