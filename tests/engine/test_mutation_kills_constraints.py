"""Tests that kill the surviving mutants of ``symshape/specs/constraints.py`` (the fixes a
``ConstraintViolationError`` suggests; the mutation gate, ``python -m proofs.mutation
--only constraints``; docs/mutation_report.md).  Each message is compared whole: the
user's names, the guard that decided, the suggested fix."""
import types

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.algebra import relations as R
from symshape.specs import constraints
from symshape.specs.constraints import _lost, _readable, specialized_axes
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.expr import OpAtom, Sym, atom_expr
from symshape.algebra.infinity import int_oo
from symshape.algebra.ranges import ValueRange


def f32(*shape):
    return np.zeros(shape, np.float32)


def _violation(fn, args, spec):
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(fn, args, dynamic_shapes=spec)
    lines = str(e.value).splitlines()
    return [l[4:] for l in lines if l.startswith("  - ")], [str(f) for f in
                                                          e.value.suggested_fixes]


def _two_guards(x, y):
    if x.shape[1] > 3:
        if x.shape[1] < 5:
            return x + y + np.ones(4, np.float32)
    return x


def test_a_specialized_dim_names_the_last_guard_and_the_static_axis_it_must_equal():
    # the guard that pinned d1 is the second one (d1 <= 4), in the user's names (mutants:
    # guards[0], the namer's symbol fallback inverted, the message built with `-` / `//`)
    dx, dy, d1 = ss.dims("dx", "dy", "d1")
    lines, fixes = _violation(_two_guards, (f32(6, 4), f32(6, 4)),
                              {"x": (dx, d1), "y": (dy, 4)})
    line = __file__.rsplit("/", 1)[-1]
    assert lines[0].startswith("d1 was marked dynamic, but the program specialized it to 4 "
                               "(guard `d1 <= 4` at ")
    assert line in lines[0]
    assert lines[0].endswith("; it must equal y.shape[1], which is marked static")
    assert lines[1].startswith("dy must equal dx, a relation the spec does not declare "
                               "(guard `dx == dy` at ")
    assert fixes == ["d1 = 4", "dy = dx"]


def test_a_multiple_is_a_derived_dim():
    # n % 2 == 0: n = 2*_n (mutant: the derived name built with `//`)
    lines, fixes = _violation(lambda x: x.reshape(-1, 2), (f32(8),), {"x": (Dim("n"),)})
    assert len(lines) == 1 and lines[0].startswith(
        "n must be 2*_n for the program (guard `n % 2 == 0` at ")
    assert lines[0].endswith("; the spec allows any value in its range")
    assert fixes == ["_n = Dim('_n', min=1)", "n = 2*_n"]


@pytest.mark.parametrize("fn, sizes, line, fix", [
    (lambda x, y: x[1:] + y, (7, 6), "dx must equal dy + 1", "dx = dy + 1"),
    (lambda x, y: np.concatenate([x, x]) + y, (3, 6), "dy must equal 2*dx", "dy = 2*dx"),
])
def test_a_relation_between_named_dims_is_a_fix(fn, sizes, line, fix):
    # (mutant: the named-dim test of the other symbol inverted)
    dx, dy = ss.dims("dx", "dy")
    lines, fixes = _violation(fn, tuple(f32(n) for n in sizes), {"x": (dx,), "y": (dy,)})
    assert len(lines) == 1 and lines[0].startswith(
        line + ", a relation the spec does not declare (guard `")
    assert fixes == [fix]


def test_only_max_of_zero_equal_to_zero_reads_as_an_upper_bound():
    # max(0, X) == 0 is X <= 0; min(0, X) == 0 is X >= 0, left as it is (mutant: `or`
    # let a Min with a 0 argument through)
    x = Sym(0).expr
    for kind, args in (("Min", (0, x - 3)), ("Min", (x - 3, 0)), ("Max", (x - 3, x))):
        c = R.Rel(R.EQ, atom_expr(OpAtom(kind, args)))
        assert _readable(c) is c
    c = R.Rel(R.EQ, atom_expr(OpAtom("Max", (0, x - 3))))
    assert _readable(c) == R.le(x, 3)


def test_a_box_keeps_the_number_of_size_pairs_it_admits():
    # _lost's third entry is minus the number of points of a finite box (a tie-break:
    # the balanced cut wins) (mutant: widths without the + 1)
    s, t = Sym(0), Sym(1)
    base = {s: ValueRange(2, int_oo), t: ValueRange(2, 10)}
    assert _lost(base, {s: ValueRange(2, 5), t: ValueRange(3, 10)}) == (1, 1, -32)
    assert _lost(base, {s: ValueRange(2, int_oo), t: ValueRange(2, 10)}) == (0, 0, 0)
    assert _lost(base, {s: ValueRange(4, 4), t: ValueRange(2, 2)}) == (1, 10, -1)


def _not_five(x):
    if x.shape[0] != 5:
        return x * 2
    return x


def test_a_hole_in_a_named_dim_is_reported_with_its_dim_name():
    # n != 5 over [2, oo): a hole no Dim range can express (mutant: the Dim name of a
    # known symbol not looked up, which dropped the violation)
    lines, fixes = _violation(_not_five, (f32(7),), {"x": (Dim("n"),)})
    assert len(lines) == 1
    assert lines[0].startswith("n must not be 5 (guard `n != 5` at ")
    assert lines[0].endswith("; its feasible set [2, int_oo] minus {5} has a hole that no "
                             "Dim range can express: restrict the range to one side of 5, "
                             "or use Dim.AUTO")
    assert fixes == ["n = Dim.AUTO"]


def test_an_automatic_axis_pinned_without_a_guard_accepts_no_other_size():
    # specialized_axes explains each Dim.AUTO axis the program pinned; with no guard on
    # record it says only that (mutant: the message built with `*`, a TypeError)
    env = ShapeEnv()
    s = env.create_symbol(4, "x.shape[0]", ValueRange(2, int_oo))
    t = env.create_symbol(6, "x.shape[1]", ValueRange(2, int_oo))
    env.replace(s, 4)                       # no guard being learnt: nothing on record
    axes = [types.SimpleNamespace(kind="auto"), types.SimpleNamespace(kind="auto")]
    leaf = types.SimpleNamespace(axes=axes, axis_name=lambda ax: "x.shape[%d]" % ax)
    got = specialized_axes(env, [leaf], {(0, 0): s, (0, 1): t})
    assert got == {"x.shape[0]": "the program specialized this axis to 4: it accepts no "
                                 "other size"}


@pytest.mark.parametrize("tries, found", [(3, False), (4, True)])
def test_relation_box_tries_exactly_its_budget_of_narrowings(monkeypatch, tries, found):
    # a + b + c <= 30 at (10, 10, 10): no single Dim narrowed, nor one split and one
    # narrowed, holds it; two split next to the example and the third narrowed does, on
    # the fourth narrowing tried (the cuts [10, oo) come first).  MAX_BOX_TRIES bounds the
    # narrowings (mutant: one more than the budget)
    monkeypatch.setattr(constraints, "MAX_BOX_TRIES", tries)
    env = ShapeEnv()
    a, b, c = (env.create_symbol(10, n, ValueRange(2, int_oo)) for n in "abc")
    box = constraints.relation_box(env, (a, b, c), [R.le(a.expr + b.expr + c.expr, 30)])
    if found:
        assert box == {s: ValueRange(2, 10) for s in (a, b, c)}
    else:
        assert box is None
