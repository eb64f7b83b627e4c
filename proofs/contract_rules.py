"""Proofs of the rules behind the exact contract: the projection of facts onto ranges
(``symshape/reasoning/projection.py``, ``solver.tighten``), the rewrites that let interval
arithmetic see through ``s - s // k`` and ``Max(a, b) - a`` (``symshape/algebra/ranges.py``), the
pairwise matching of reshape factors (``solver.solve_factor_pairs``), the case split on
residues (``solver.split_residues``) and Min / Max folding by facts.

Every proof is about the engine's own output (``proofs/code.py``; ``project`` and the
slack substitution are proven for every input in ``proofs/project_every.py`` and
``proofs/bounds_folds.py``): the ranges ``_divmod_split`` / ``_minmax_pushed`` return are proven to hold the
expression for every member of the box; after the environment learns a guard, what it
admits (replacements, root ranges, facts) is proven to be exactly the guard's solutions;
and a Min / Max the environment folds by its facts is proven equal to the original on every
point of the facts.
"""
from __future__ import annotations


import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.infinity import INT_OO, is_inf
from symshape.algebra.ranges import ValueRange

from . import samples, proves
from .code import Symbols, divisors, encode, encode_cond, prove_code
from .pyint import Py, prove, require, zmax
from .range_rules import _member


def _env(*specs):
    env = ShapeEnv()
    syms = [env.create_symbol(h, "v%d" % i, ValueRange(lo, hi))
            for i, (h, lo, hi) in enumerate(specs)]
    return (env,) + tuple(syms)



# ---------------------------------------------------------------------------- projection
def _check_projection(goal, facts, ranges, got: ValueRange, what: str) -> None:
    """The code's ``got`` bounds ``goal`` on every point of ``facts`` and ``ranges`` (Z3:
    nothing beyond it), and each finite end is attained (Z3: a point on it)."""
    for side, end in (("lower", got.lower), ("upper", got.upper)):
        if is_inf(end):
            continue
        P_ = Py()
        zs = Symbols()
        g = encode(P_, goal, zs)
        hyp = [encode_cond(P_, f, zs) for f in facts]
        for f in facts:
            hyp += [d != 0 for d in divisors(P_, f, zs)]
        hyp += [c for s in list(zs) for c in _member(ranges[s], zs[s])]
        prove_code(lambda v: g >= v if side == "lower" else g <= v, [z3.IntVal(end)], hyp,
                   P=P_, what="%s: %s bound %s of %s" % (what, side, end, goal))
        solver = z3.Solver()
        solver.add(*hyp)
        solver.add(*P_.side)
        solver.add(g == end)
        require(solver.check() == z3.sat, "%s: %s bound %s of %s is not attained",
                what, side, end, goal)


# ---------------------------------------------------------------------------- contract

@proves("contract.relation_box", over=samples("hand-picked relations and boxes"))
def contract_relation_box():
    from symshape.specs.constraints import relation_box
    from symshape.specs.dims import Dim
    cases = [
        # (example, declared range) of each Dim, the relation
        [(8, 4, 64), (3, 2, 16)], lambda d, n: [R.le(n, d)],
        [(20, 2, 64), (3, 2, 100)], lambda d, n: [R.le(n, d)],
        [(8, 2, 64), (3, 2, 64)], lambda d, n: [R.eq(E.smax(0, n + 2 - d), 0)],
        [(6, 2, INT_OO), (7, 2, INT_OO)], lambda d, n: [R.ge(d + n, 11)],
        [(10, 2, 64), (3, 2, 64)], lambda d, n: [R.le(2 * n, d), R.le(d + n, 40)],
        # three Dims: one narrowed; one split and one narrowed; two split and one narrowed
        [(5, 2, 14), (6, 2, 64), (20, 2, 100)], lambda a, b, c: [R.le(a + b, c)],
        [(5, 2, 64), (6, 2, 64), (20, 2, 100)], lambda a, b, c: [R.le(a + b, c)],
        [(5, 4, 64), (6, 4, 64), (20, 2, 20)], lambda a, b, c: [R.le(a + b, c)],
        [(3, 2, 64), (4, 2, 64), (5, 2, 64), (30, 2, 64)],
        lambda a, b, c, d: [R.le(a + b + c, d)],
    ]
    for specs, rel in zip(cases[::2], cases[1::2]):
        env = ShapeEnv()
        syms = tuple(env.create_symbol(h, "d%d" % i, ValueRange(lo, hi), kind="named",
                                       dim=Dim("d%d" % i, min=lo,
                                               max=None if is_inf(hi) else hi))
                     for i, (h, lo, hi) in enumerate(specs))
        group = rel(*(t.expr for t in syms))
        box = relation_box(env, syms, group)
        require(box is not None, "no box for %s", group)
        P_ = Py()
        zs = Symbols()
        for t in syms:
            require(box[t].issubset(env.ranges[t]) and env.infos[t].hint in box[t] and
                    box[t].lower < box[t].upper,
                    "%s: box %s of %s leaves the ranges %s or the example", group, box[t],
                    t, env.ranges[t])
        hyp = [c for t in syms for c in _member(box[t], zs[t])]
        holds = z3.And(*[encode_cond(P_, f, zs) for f in group])
        prove_code(lambda v: v, [holds], hyp, P=P_,
                   what="every point of the box %s satisfies %s" % (box, group))
    # no box: every split leaves a violating point, or a single size
    env = ShapeEnv()
    syms = tuple(env.create_symbol(h, "d%d" % i, ValueRange(lo, hi), kind="named",
                                   dim=Dim("d%d" % i, min=lo, max=hi))
                 for i, (h, lo, hi) in enumerate([(5, 5, 6), (6, 6, 7), (11, 11, 12)]))
    a, b, c = (t.expr for t in syms)
    require(relation_box(env, syms, [R.le(a + b, c)]) is None, "a box for a + b <= c "
            "holding 5, 6, 11 with two sizes each")


# ---------------------------------------------------------------------------- bounds
@proves("bounds.univariate",
        over=samples("seven polynomials (the root bound: every polynomial of degree <= 2)"))
def bounds_univariate():
    from symshape.reasoning.symbolic import univariate_range
    # the root bound the rule rests on, for a quadratic derivative d2*x^2 + d1*x + d0
    x, d0, d1, d2 = z3.Reals("x d0 d1 d2")
    R_ = z3.Real("R")
    prove(z3.Implies(z3.And(d2 != 0, R_ >= 1, R_ * z3.If(d2 > 0, d2, -d2) >=
                            z3.If(d2 > 0, d2, -d2) + z3.If(d1 > 0, d1, -d1),
                            R_ * z3.If(d2 > 0, d2, -d2) >= z3.If(d2 > 0, d2, -d2) +
                            z3.If(d0 > 0, d0, -d0), x >= R_),
                     d2 * (d2 * x * x + d1 * x + d0) > 0))
    # the code's own root bound, for *every* integer polynomial of degree 1 and 2 (the
    # derivative of a quadratic or a cubic): run on symbolic coefficients, on every path of
    # its branches the bound T it returns has the leading sign from T on (Z3, reals)
    _cauchy_turn_symbolic()
    # the code's own output: exact ranges of polynomials over their symbol's range
    cases = [
        (lambda a: a * a - 2 * a + 1, (1, INT_OO)),
        (lambda a: a * a - 5 * a + 6, (1, INT_OO)),
        (lambda a: a * a * a - a * a, (1, INT_OO)),
        (lambda a: a * a - a, (1, 10)),
        (lambda a: 7 * a - a * a, (1, INT_OO)),
        (lambda a: a * a * a - 12 * a * a + 20 * a, (2, 40)),
        (lambda a: -(a * a * a) + 30 * a, (1, INT_OO)),
    ]
    for fn, (lo, hi) in cases:
        env, s = _env((lo, lo, hi))
        goal = fn(s.expr)
        got = univariate_range(goal, env)
        require(got is not None, "no range for %s", goal)
        _check_projection(goal, [], env.ranges, got, "univariate range of %s" % goal)


#: the degrees of p' the root bound is proven for on symbolic coefficients (p' of degree 3
#: takes Z3 over ten seconds; the polynomials of the cases below go beyond it)
CAUCHY_DEGREES = (1, 2)


def _cauchy_turn_symbolic() -> None:
    from symshape.reasoning.symbolic import cauchy_turn
    from .symexec import Ext, Explorer, patched, raise_on_paths
    for top in CAUCHY_DEGREES:
        ds = z3.Ints(" ".join("d%d_%d" % (k, top) for k in range(top + 1)))
        ex = Explorer([ds[top] != 0])
        with patched(ex):
            paths = ex.paths(lambda: cauchy_turn({k: Ext(0, d) for k, d in enumerate(ds)},
                                                 top))
        raise_on_paths(paths, "cauchy_turn")
        x = z3.Real("x_%d" % top)
        deriv = sum(z3.ToReal(d) * x ** k for k, d in enumerate(ds))
        for pc, got in paths:
            t = got.v if isinstance(got, Ext) else z3.IntVal(got)
            prove_code(lambda v: z3.Implies(x >= z3.ToReal(v), z3.ToReal(ds[top]) * deriv > 0),
                       [t], ds[top] != 0, *pc, P=ex.P,
                       what="Cauchy bound of a degree-%d polynomial" % top)


@proves("bounds.minmax_cases", over=samples("hand-picked Min / Max goals"))
def bounds_minmax_cases():
    from symshape.reasoning.symbolic import minmax_cases
    x, y, e1, e2 = z3.Ints("x y e1 e2")
    prove(z3.Implies(z3.And(x >= y), zmax(x, y) == x))
    prove(z3.Implies(z3.And(y >= x), zmax(x, y) == y))
    prove(z3.Or(x >= y, y >= x))
    env, a, b = _env((5, 1, INT_OO), (3, 1, INT_OO))
    A, B = a.expr, b.expr
    cases = [
        (E.smax(A, B) + E.smin(A, B) - A - B, []),
        (E.smax(A, B) - E.smin(A, B), []),
        (E.smax(0, E.smin(256, A + 1) - E.smin(256, A)), []),
        (E.smax(A, B) - A, [R.ge(A, B + 2)]),
        (E.smin(A, 4) + E.smax(B, 4) - A, [R.le(A, 3)]),
    ]
    for goal, facts in cases:
        got = minmax_cases(goal, facts, env)
        require(got is not None, "no case range for %s", goal)
        P_ = Py()
        zs = Symbols()
        g = encode(P_, goal, zs)
        hyp = [encode_cond(P_, f, zs) for f in facts]
        hyp += [c for s in list(zs) for c in _member(env.ranges[s], zs[s])]
        ends = [v for v in (got.lower, got.upper) if not is_inf(v)]
        require(ends, "%s: no finite end in %s", goal, got)
        for side, end in (("lower", got.lower), ("upper", got.upper)):
            if is_inf(end):
                continue
            prove_code(lambda v: g >= v if side == "lower" else g <= v, [z3.IntVal(end)],
                       hyp, P=P_, what="case range %s of %s" % (got, goal))
