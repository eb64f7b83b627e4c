"""Tests that kill the surviving mutants of ``symshape/contract/guard_text.py`` (how the printed
contract reads a guard; the mutation gate, ``python -m proofs.mutation --only contract``;
docs/mutation_report.md)."""
from symshape.algebra import relations as R
from symshape.contract.guard_text import readable_minmax
from symshape.algebra.expr import OpAtom, Sym, atom_expr
from symshape.algebra.infinity import int_oo
from symshape.algebra.ranges import ValueRange
from symshape.algebra.simplify import dominates_proven


def test_max_dominance_asks_for_greater_or_equal():
    # x*x >= x on [1, oo): the interval bound cannot show it, Z3 on the ranges does; for
    # Max that is "x*x dominates x", for Min the other way round (mutant: `kind <= "Min"`
    # asked Max for <=)
    s = Sym(0)
    x = s.expr
    ranges = {s: ValueRange(1, int_oo)}
    assert dominates_proven("Max", x * x, x, ranges) is True
    assert dominates_proven("Max", x, x * x, ranges) is False
    assert dominates_proven("Min", x, x * x, ranges) is True
    assert dominates_proven("Min", x * x, x, ranges) is False


def test_a_min_with_a_coefficient_is_left_as_it_is():
    # 2*min(x, 2*y) == y is not "min(x, 2*y) == 2*y" (mutant: `abs(k) >= 1` took the
    # coefficient 2 for a unit one)
    sx, sy = Sym(0), Sym(1)
    x, y = sx.expr, sy.expr
    ranges = {sx: ValueRange(2, int_oo), sy: ValueRange(2, int_oo)}
    c = R.Rel(R.EQ, 2 * atom_expr(OpAtom("Min", (x, 2 * y))) - y)
    assert readable_minmax(c, ranges) is c
    # with a unit coefficient the same shape is read as what it means: 2*y <= x
    c = R.Rel(R.EQ, atom_expr(OpAtom("Min", (x, 2 * y))) - 2 * y)
    assert readable_minmax(c, ranges) == R.le(2 * y, x)
