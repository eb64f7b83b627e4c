"""Symbolic sizes outside export: ``symbolic_shape`` and ``bounds``.

``symbolic_shape("a, b", constraints=("a >= b + 2", "b <= 64"))`` returns one ``SymInt``
per name, all in a fresh ``SymbolicEnv``: the shape environment export uses, with the
same decision procedure (ranges, every connected fact, Z3 within the half-second budget)
and the same exact projection of the constraints onto each symbol's range.  The one
difference is that there are no example values to fall back on: a comparison the
constraints do not settle raises ``UserError`` saying so, instead of becoming a guard.

``bounds(e)`` is the tightest ``(lo, hi)`` the engine can prove for a size expression:
interval arithmetic when the expression's symbols take part in no constraint (then the
symbols' ranges are already exact), else the exact projection of the constraints.
"""
from __future__ import annotations

import ast
import itertools
from functools import reduce
import math
from typing import Dict, Iterable, Optional, Tuple, Union

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning.decision import holds as _holds
from symshape.reasoning.env import ShapeEnv, SymInfo
from symshape.errors import InternalError, UserError
from symshape.algebra.expr import Sym
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.algebra.ranges import ValueRange, bound
from symshape.sizes.symint import SymInt, sym_max, sym_min
from symshape.reasoning.z3bridge import Budget, Encoder, configure, serialized, z3mod
from symshape.rules import rule

SYMBOL_RANGE = ValueRange(1, INT_OO)


class SymbolicEnv(ShapeEnv):
    """A shape environment without example values: undecided comparisons are errors."""

    # comparisons of its sizes give bool at once (``a >= b`` is ``True``), as in JAX
    decides_comparisons = True

    def __init__(self, constraint_text: Tuple[str, ...] = ()) -> None:
        super().__init__()
        self.constraint_text = constraint_text
        self._exact_cache: Dict[object, ValueRange] = {}
        #: a point satisfying the constraints (symbol -> value), found when they are checked
        self.example_point: Dict[Sym, int] = {}

    def create_symbol(self, hint, source, vr=SYMBOL_RANGE, kind="auto", dim=None,
                      frame=None) -> Sym:
        # backed (no data dependence), but with no example value
        sym = Sym(self._count[False], False)
        self._count[False] += 1
        self.infos[sym] = SymInfo(sym, None, source, kind, dim, vr, frame)
        self.ranges[sym] = vr
        return sym

    def evaluate(self, c, hint=None, frame=None, kind="guard") -> bool:
        if type(c) is bool:
            return c
        d = self.decide(c)
        if d is not None:
            return d
        c = self.subst_cond(c)
        raise UserError(self._inconclusive(c))

    def _inconclusive(self, c) -> str:
        names = sorted({self.name_of(s) for s in c.free_symbols})
        ranges = ", ".join("%s in [%s, %s]" % (n, *self._range_of(n)) for n in names)
        under = ("under the constraints %s" % ", ".join(
            "`%s`" % t for t in self.constraint_text)) if self.constraint_text else \
            "with no constraints (each symbol >= 1)"
        return ("cannot decide `%s`: it holds for some values and not for others %s (%s). "
                "Add a constraint to symbolic_shape(..., constraints=...) that settles it, or "
                "use sym_max / sym_min to keep both cases" % (c.format(self.name_of), under,
                                                              ranges))

    def _range_of(self, name: str):
        for s, info in self.infos.items():
            if info.source == name:
                vr = self.ranges.get(s)
                if vr is None or s in self.replacements:
                    vr = bounds_expr(self, s.expr)
                return vr.lower, vr.upper
        return "?", "?"

    def show(self, x) -> str:
        """A size as its simplest formula in the user's symbol names."""
        return E.format_expr(self.simplify(x), self.name_of)

    def specialize(self, x, why, frame=None, advice=None) -> int:
        x = self.simplify(x)
        if type(x) is int:
            return x
        raise UserError("%s of the symbolic size `%s`: it has no concrete value (use "
                        "symshape.bounds() for its range)" % (why, E.format_expr(x, self.name_of, py=True)))

    def specialize_later(self, x, why) -> int:
        return self.specialize(x, why)

    def check(self, c, hint=None, message=None, frame=None) -> None:
        d = self.decide(c)
        if d is True:
            return
        if d is False:
            raise UserError("check(%s) is false under the constraints" % (
                self.subst_cond(c).format(self.name_of)))
        raise UserError(self._inconclusive(self.subst_cond(c)))


# ------------------------------------------------------------------------------ parsing
_BINOPS = {ast.Add: E.add, ast.Sub: E.sub, ast.Mult: E.mul, ast.FloorDiv: E.floordiv,
           ast.Mod: E.mod}
_CMPS = {ast.GtE: R.ge, ast.LtE: R.le, ast.Eq: R.eq, ast.Gt: R.gt, ast.Lt: R.lt,
         ast.NotEq: R.ne}


def _parse(text: str, table: Dict[str, E.IntLike]):
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise UserError("constraint %r is not a comparison of size expressions (use >=, <=, "
                        "==, >, < over +, -, *, //, %%, max(a, b), min(a, b))" % text) from None

    def term(n) -> E.IntLike:
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in table:
                raise UserError("constraint %r names %r, which is not one of the symbols %s"
                                % (text, n.id, sorted(table)))
            return table[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            a, b = term(n.left), term(n.right)
            if type(n.op) in (ast.FloorDiv, ast.Mod) and b == 0:
                raise UserError("constraint %r divides by zero" % text)
            return _BINOPS[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = term(n.operand)
            return E.neg(v) if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                n.func.id in ("max", "min") and len(n.args) >= 2 and not n.keywords:
            args = [term(a) for a in n.args]
            return E.smax(*args) if n.func.id == "max" else E.smin(*args)
        raise UserError("constraint %r: %r is not a size expression (ints, symbols, +, -, *, "
                        "//, %%, max, min)" % (text, ast.unparse(n)))

    if not isinstance(tree, ast.Compare):
        raise UserError("constraint %r is not a comparison (>=, <=, ==, >, <)" % text)
    conds = []
    left = term(tree.left)
    for op, right_node in zip(tree.ops, tree.comparators):
        if type(op) not in _CMPS:
            raise UserError("constraint %r: use >=, <=, ==, >, < (or !=)" % text)
        right = term(right_node)
        conds.append(_CMPS[type(op)](left, right))
        left = right
    return R.combine("and", conds)


def symbolic_shape(names: str, *, constraints: Iterable[str] = ()) -> Tuple[SymInt, ...]:
    """Symbolic sizes named by ``names`` (``"a, b"``), each in ``[1, int_oo]`` narrowed by
    ``constraints`` (strings of comparisons).  Returns a tuple of ``SymInt``; comparisons
    between them are decided by the constraints or raise ``UserError``."""
    if not isinstance(names, str):
        raise UserError("symbolic_shape takes the names as one string (\"a, b\"), got %r"
                        % (names,))
    parts = [p.strip() for p in names.split(",") if p.strip()]
    if not parts or not all(p.isidentifier() for p in parts):
        raise UserError("symbolic_shape(%r): give comma-separated identifiers, like \"a, b\""
                        % names)
    if len(set(parts)) != len(parts):
        raise UserError("symbolic_shape(%r) names a symbol twice" % names)
    if isinstance(constraints, str):
        constraints = (constraints,)
    text = tuple(constraints)
    env = SymbolicEnv(text)
    table = {}
    for p in parts:
        table[p] = env.create_symbol(None, p).expr
    for t in text:
        if not isinstance(t, str):
            raise UserError("constraints must be strings like \"a >= b + 2\", got %r" % (t,))
        c = _parse(t, table)
        if c is False:
            raise UserError("constraint %r is false for every value" % t)
        if c is True:
            continue
        if env.decide(c) is False:
            raise UserError("constraint %r contradicts the constraints before it" % t)
        try:
            env.add_guard(env.subst_cond(c), None, "check")
        except InternalError:
            raise UserError("constraint %r contradicts the constraints before it" % t) from None
    _check_satisfiable(env, text)
    return tuple(SymInt(table[p], None, env) for p in parts)


@serialized
def _check_satisfiable(env: SymbolicEnv, text) -> None:
    if not env.facts:
        return
    z3 = z3mod()
    enc = Encoder()
    hyp = [enc.cond(f) for f in env.facts]
    for s in list(enc.vars):
        hyp += enc.range(s, env.ranges[s])
    solver = z3.Solver()
    configure(solver, Budget())
    solver.add(*hyp, *enc.side)
    if solver.check() == z3.unsat:
        raise UserError("the constraints %s admit no values" % ", ".join(
            "`%s`" % t for t in text))
    # a point of the constraints: the decision procedure's base point for showing a
    # comparison undecidable without a solver call (it checks the point itself)
    model = solver.model()
    for s, v in enc.vars.items():
        val = model.eval(v, model_completion=True)
        if z3.is_int_value(val):
            env.example_point[s] = val.as_long()


@rule("bounds.pipeline")
def bounds_expr(env: ShapeEnv, e: E.IntLike) -> ValueRange:
    """The tightest range the engine proves for ``e`` under ``env``'s ranges and facts.

    Range layer 5 (``symshape.contract.exact_ranges``): ``ss.bounds`` while tracing; exact
    when the solver finishes (layers 1 and 4, sampled points, then the projection, layer
    6).  A program's published contract uses layer 7 instead, on the final constraint
    set."""
    e = env.simplify(e)
    if type(e) is int:
        return ValueRange(e, e)
    cache = env._exact_cache
    key = (e, env.version)
    if cache is not None and key in cache:
        return cache[key]
    interval = env.bound(e)
    facts = [f for f in env.related_facts(e.free_symbols)
             if not any(s.unbacked for s in f.free_symbols)]
    sampled = None
    if not facts and (interval.lower == interval.upper or _each_symbol_once(e)):
        got = interval               # interval arithmetic is exact here: no solver needed
    elif not facts and (poly := univariate_range(e, env)) is not None:
        got = poly                   # a polynomial in one symbol: exact by its derivative
    elif (sampled := _sampled(env, e, facts, hint := _sound_hint(e, facts, env, interval))) \
            is not None:
        got = sampled                # decided by points, no solver needed
    else:
        from symshape.reasoning.projection import project     # looked up at call time: tests replace it
        got = project(e, facts, env.ranges, hint=hint)
        got = got.intersect(interval) if got.lower <= interval.upper and \
            interval.lower <= got.upper else got
    if cache is not None:
        cache[key] = got
    return got


def _sound_hint(e: E.Expr, facts, env: ShapeEnv, interval: ValueRange) -> ValueRange:
    """A sound range for ``e``, usually tighter than interval arithmetic: the meet of the
    interval, the bounds from chains of facts (``_fact_chains``) and the floor-division
    relaxation (``_divided_out``).  Cheap (no solver); ``_sampled`` or the projection
    then only has to show that its ends are attained."""
    hint = _fact_chains(e, facts, env, interval)
    for relaxed in (_divided_out(e, env), minmax_cases(e, facts, env),
                    slack_substituted(e, facts, env)):
        if relaxed is not None and relaxed.lower <= hint.upper and \
                hint.lower <= relaxed.upper:
            hint = hint.intersect(relaxed)
    return hint


# The slack symbol of ``slack_substituted``: an index no environment hands out.
_SLACK = Sym(1 << 40)


@rule("bounds.slack")
def slack_substituted(e: E.IntLike, facts, env: ShapeEnv) -> Optional[ValueRange]:
    """A sound range of a non-linear ``e`` from a linear fact ``b - a - c >= 0`` over two
    symbols: on the fact's points ``b == a + c + t`` with ``t >= 0``, so interval
    arithmetic on ``e`` with that substitution, expanded, bounds ``e`` (``b*b - a*a``
    under ``a <= b`` is ``2*a*t + t*t >= 0``).  The meet over the facts; None when no
    fact applies."""
    if type(e) is int or e.is_linear():
        return None
    return reduce(slack_meet, facts, (None, e, env))[0]      # a fold: proofs induct on it


def slack_meet(state: tuple, f) -> tuple:
    """A step of ``slack_substituted``: ``state`` is (the meet so far or None, ``e``, the
    environment); a linear fact ``f`` over two of ``e``'s symbols narrows the meet."""
    got, e, env = state
    if not isinstance(f, R.Rel) or f.op != R.LE or type(f.expr) is int:
        return state
    lin = f.expr.linear_coeffs()
    if lin is None or len(lin) != 2 or not (set(lin) <= e.free_symbols):
        return state
    for b, cb in lin.items():
        if cb != -1:
            continue
        # f: rest - b <= 0, so b == rest + t with t >= 0
        rest = E.add(f.expr, b.expr)
        x = E.subs(e, {b: E.add(rest, _SLACK.expr)})
        if type(x) is int:
            r = ValueRange(x, x)
        else:
            r = bound(x, lambda t: ValueRange(0, INT_OO) if t == _SLACK else
                      env.ranges[t])
        got = meet(got, r)
    return got, e, env


def meet(got: Optional[ValueRange], r: ValueRange) -> ValueRange:
    """``r`` narrowed by ``got`` (the sound ranges met so far; None: none yet) when they
    overlap; ``got`` when they do not (the facts admit no point: any range is sound)."""
    if got is None:
        return r
    if r.lower <= got.upper and got.lower <= r.upper:
        return got.intersect(r)
    return got


# Min / Max atoms split into cases per expression (each case picks one argument of each),
# and how deep a picked argument's own Min / Max are split again.
MINMAX_ATOMS = 2
MINMAX_DEPTH = 2


@rule("bounds.minmax_cases")
def minmax_cases(e: E.IntLike, facts, env: ShapeEnv, depth: int = MINMAX_DEPTH
                 ) -> Optional[ValueRange]:
    """A sound range of ``e`` by cases on its Min / Max atoms: in the case where
    ``Max(x, y)`` is ``x`` (``x >= y``), ``e`` equals ``e`` with ``x`` in its place, and
    that case's condition joins the facts for ``_fact_chains``; the union over the cases
    bounds ``e``.  ``max(a, b) + min(a, b) - a - b`` is 0 in both cases, ``max(a, b) -
    min(a, b)`` is ``a - b`` under ``a >= b`` or ``b - a`` under ``b >= a``, so ``>= 0``.
    None when ``e`` has no Min / Max atom or too many."""
    if type(e) is int:
        return ValueRange(e, e)
    atoms = list(dict.fromkeys(a for term, _ in e.terms for a in term
                               if type(a) is not Sym and a.kind in ("Min", "Max")))
    if not atoms or len(atoms) > MINMAX_ATOMS or depth == 0:
        return None
    rels = [f for f in facts if isinstance(f, R.Rel) and f.op != R.NE]
    lo, hi = INT_OO, NEG_INT_OO
    for choice in itertools.product(*[range(len(a.args)) for a in atoms]):
        case = _minmax_case(e, atoms, choice)
        if case is None:
            continue                          # this argument never wins
        got = _case_range(case[0], rels + [c for c in case[1] if isinstance(c, R.Rel)], env,
                          depth)
        if got is None:
            continue                          # the case's conditions admit no point
        lo, hi = min(lo, got.lower), max(hi, got.upper)
    return ValueRange(lo, hi) if lo <= hi else None


def _minmax_case(e: E.Expr, atoms: list, choice: tuple) -> Optional[tuple]:
    """(``e`` with each atom replaced by its picked argument, the conditions under which
    each pick is the atom's value), or None when a pick can never be the value."""
    conds, x = [], e
    for a, i in zip(atoms, choice):
        pick = a.args[i]
        for j, other in enumerate(a.args):
            c = R.ge(pick, other) if a.kind == "Max" else R.le(pick, other)
            if j == i or c is True:
                continue
            if c is False:
                return None
            conds.append(c)
        x = _with_atom(x, a, pick)
    return x, conds


def _case_range(x: E.IntLike, case_facts: list, env: ShapeEnv, depth: int
                ) -> Optional[ValueRange]:
    """The range of one case's expression under its facts (interval, fact chains, and the
    case's own Min / Max split once more), or None when the facts admit no point."""
    if type(x) is int:
        return ValueRange(x, x)
    depth_ = next((d for most, d in CHAIN_DEPTHS if len(case_facts) <= most), 1)
    rng = env.ranges.__getitem__
    interval = env.bound(x)
    c_lo = max(interval.lower, _chain_lower(x, case_facts, rng, depth_))
    c_hi = min(interval.upper, -_chain_lower(E.neg(x), case_facts, rng, depth_))
    if c_lo > c_hi:
        return None
    got = ValueRange(c_lo, c_hi)
    inner = minmax_cases(x, case_facts, env, depth - 1)
    if inner is not None and inner.lower <= got.upper and got.lower <= inner.upper:
        got = got.intersect(inner)
    return got


def _with_atom(e: E.Expr, atom, value: E.IntLike) -> E.IntLike:
    """``e`` with every occurrence of the operation ``atom`` replaced by ``value``."""
    total: E.IntLike = e.const
    for term, c in e.terms:
        prod: E.IntLike = c
        for a in term:
            prod = E.mul(prod, value if a == atom else E.Expr({(a,): 1}, 0))
        total = E.add(total, prod)
    return total


# Integer points of a polynomial's range enumerated before its monotone tail takes over.
UNIVARIATE_POINTS = 4096


def cauchy_turn(d: Dict[int, int], top: int) -> int:
    """``ceil(1 + max |d_i / d_top|)`` over the coefficients ``d_i`` (``i != top``) of a
    polynomial of degree ``top`` (Cauchy's bound, rounded up, as integers: ``ceil(1 + x)
    == 1 + ceil(x)`` and the ceiling of a maximum is the maximum of the ceilings); every
    real root lies below it, so from it on the polynomial has its leading sign."""
    lead = abs(d[top])
    return 1 + max([E.ceildiv(abs(c), lead) for k, c in d.items() if k != top] or [0])


@rule("bounds.univariate")
def univariate_range(e: E.Expr, env: ShapeEnv) -> Optional[ValueRange]:
    """The exact range of a polynomial ``p`` in one symbol ``s`` (``a*a - 5*a + 6``) over
    ``s``'s range ``[lo, hi]`` (``lo`` finite): every real root of ``p'`` lies below
    Cauchy's bound ``R = 1 + max |d_i / d_n|`` (``d`` the coefficients of ``p'``), so
    ``p`` is monotone on ``[ceil(R), hi]`` in the direction of its leading coefficient;
    the integers of ``[lo, ceil(R)]`` are enumerated, and the tail adds ``p(hi)`` or an
    infinite end.  None for anything else (or too many points).  Range layer 4
    (``symshape.contract.exact_ranges``): exact, one symbol and no facts; a step of
    ``bounds_expr``."""
    syms = e.free_symbols
    if len(syms) != 1:
        return None
    (s,) = syms
    coeffs: Dict[int, int] = {0: e.const}
    for term, c in e.terms:
        if any(a != s for a in term):
            return None
        coeffs[len(term)] = coeffs.get(len(term), 0) + c
    deg = max(k for k, c in coeffs.items() if c)
    vr = env.ranges[s]
    if deg < 2 or is_inf(vr.lower):
        return None
    deriv = {k - 1: k * c for k, c in coeffs.items() if k >= 1 and c}
    turn = max(vr.lower, cauchy_turn(deriv, deg - 1))
    last = turn if is_inf(vr.upper) else min(vr.upper, turn)
    if last - vr.lower >= UNIVARIATE_POINTS:
        return None

    def p(v: int) -> int:
        return sum(c * v ** k for k, c in coeffs.items())

    vals = [p(v) for v in range(vr.lower, last + 1)]
    if not is_inf(vr.upper):
        vals.append(p(vr.upper))
        return ValueRange(min(vals), max(vals))
    if coeffs[deg] > 0:
        return ValueRange(min(vals), INT_OO)
    return ValueRange(NEG_INT_OO, max(vals))


# How many facts one bound may chain (``c - a`` under ``a <= b``, ``b <= c`` takes two),
# by the number of facts: the search takes about len(facts) ** depth small steps, so
# larger fact sets chain fewer (the projection still makes every answer exact).
CHAIN_DEPTHS = ((4, 3), (8, 2))


def _fact_chains(e: E.Expr, facts, env: ShapeEnv, interval: ValueRange) -> ValueRange:
    """Sound bounds from facts added to ``e`` to cancel its terms: with ``f <= 0`` and
    ``lam >= 0``, ``e >= lower(e + lam*f)`` and ``e <= upper(e - lam*f)`` (``f == 0``:
    either sign), ``lam`` chosen to cancel a term (a symbol, a product or an operation:
    ``a - b`` under ``a >= b + 2`` is ``>= 2``; ``a*b`` under ``a*b <= 64`` is ``<= 64``),
    and the result cancelled again by further facts (``CHAIN_DEPTHS``)."""
    rels = [f for f in facts if isinstance(f, R.Rel) and f.op != R.NE]
    depth = next((d for most, d in CHAIN_DEPTHS if len(rels) <= most), 1)
    rng = env.ranges.__getitem__
    lo = max(interval.lower, _chain_lower(e, rels, rng, depth))
    hi = min(interval.upper, -_chain_lower(E.neg(e), rels, rng, depth))
    if lo > hi:
        return interval
    return ValueRange(lo, hi)


def _chain_lower(e: E.IntLike, rels, rng, depth: int):
    """A lower bound of ``e`` from its interval and facts added to it (see
    ``_fact_chains``); each fact is used at most once along a chain."""
    best = bound(e, rng).lower
    if depth == 0 or type(e) is int:
        return best
    coeffs = dict(e.terms)
    for i, f in enumerate(rels):
        if type(f.expr) is int:
            continue
        rest = rels[:i] + rels[i + 1:]
        for t, cf in f.expr.terms:
            cg = coeffs.get(t)
            if not cg:
                continue
            if f.op == R.LE and cg * cf > 0:
                continue                     # adding f <= 0 lowers e: cancel opposite signs
            p, q = abs(cg), abs(cf)          # e*q + lam*f, lam = p, cancels t
            g = math.gcd(p, q)
            p, q = p // g, q // g
            sign = -1 if cg * cf > 0 else 1  # (an equality may be subtracted too)
            got = _chain_lower(E.add(E.scale(e, q), E.scale(f.expr, sign * p)), rest, rng,
                               depth - 1)
            if not is_inf(got):
                best = max(best, E.ceildiv(got, q))
    return best


def _divided_out(e: E.Expr, env: ShapeEnv) -> Optional[ValueRange]:
    """A sound range of ``e`` with each ``L // k`` (``k`` a positive int) written as
    ``(L - r) / k``, ``r`` in ``[0, k - 1]``: the symbols of ``L`` then merge with their
    other occurrences, so ``-a + a // 2`` is ``-a/2 - r/2 <= -1/2``, hence ``<= -1``.
    None when ``e`` has no such term or is not linear in its atoms."""
    from fractions import Fraction
    coeffs: Dict[object, Fraction] = {}
    spread = [Fraction(0), Fraction(0)]      # the remainders' contribution: [lower, upper]
    divided = False
    for term, c in e.terms:
        if len(term) != 1:
            return None
        atom = term[0]
        if type(atom) is not Sym and atom.kind == "FloorDiv" and type(atom.args[1]) is int \
                and atom.args[1] > 0 and type(atom.args[0]) is E.Expr:
            num, k = atom.args
            share = Fraction(c, k)
            for t, cn in num.terms:
                coeffs[t] = coeffs.get(t, 0) + share * cn
            spread[0] += share * num.const
            spread[1] += share * num.const
            # -share * r with r in [0, k - 1]
            spread[0 if share > 0 else 1] -= share * (k - 1)
            divided = True
        else:
            coeffs[term] = coeffs.get(term, 0) + c
    if not divided:
        return None
    lo, hi = e.const + spread[0], e.const + spread[1]
    for t, c in coeffs.items():
        if not c:
            continue
        vr = env.bound(E.Expr({t: 1}, 0))
        low_end, high_end = (vr.lower, vr.upper) if c > 0 else (vr.upper, vr.lower)
        # a lower end is never +int_oo (nor an upper one -int_oo): infinities absorb
        lo = NEG_INT_OO if is_inf(low_end) or is_inf(lo) else lo + c * low_end
        hi = INT_OO if is_inf(high_end) or is_inf(hi) else hi + c * high_end
    lo = lo if is_inf(lo) else math.ceil(lo)
    hi = hi if is_inf(hi) else math.floor(hi)
    return ValueRange(lo, hi) if lo <= hi else None


def _sampled(env: ShapeEnv, e: E.Expr, facts, interval: ValueRange):
    """The exact range when points settle it without a solver, else None.  ``interval``
    must be a sound range of ``e`` under the facts.  First a few points near the corners
    of the symbols' ranges are tried: when they attain both ends of ``interval`` (a finite
    end is the value of ``e`` at a point of the ranges that satisfies every fact; an
    infinite end is approached, a value beyond 2**19 in its direction), it is exact.
    Otherwise a box of at most 4096 points is enumerated whole (the answer is then exact),
    or the ends are confirmed by a sparse sample as above."""
    syms = sorted(set(e.free_symbols).union(*[f.free_symbols for f in facts]),
                  key=lambda t: t.key)
    if len(syms) > 3:
        return None
    ranges = [env.ranges[t] for t in syms]
    if any(is_inf(vr.lower) for vr in ranges):
        return None
    run = 8 if len(syms) == 1 else 3          # one symbol: every residue mod 2, 4, 8
    corners = [sorted({v for v in (vr.lower, vr.lower + 1, vr.lower + 2, vr.upper - 1,
                                   vr.upper) if not is_inf(v) and v in vr})
               if not is_inf(vr.upper) and vr.upper - vr.lower < 64 else _sparse(vr, run)
               for vr in ranges]
    seen = _extremes_at(syms, corners, e, facts)
    if seen is not None and _attains(interval, *seen):
        return interval
    axes = []
    whole = True
    for vr in ranges:
        if not is_inf(vr.upper) and vr.upper - vr.lower < 64:
            axes.append(range(vr.lower, vr.upper + 1))
        else:
            whole = False
            axes.append(_sparse(vr, run))
    if whole and all(len(c) == len(a) for c, a in zip(corners, axes)):
        return None if seen is None else ValueRange(*seen)   # the corners were the box
    total = 1
    for ax in axes:
        total *= len(ax)
    if total > 4096:
        return None
    seen = _extremes_at(syms, axes, e, facts)
    if seen is None:
        return None
    if whole:
        return ValueRange(*seen)
    return interval if _attains(interval, *seen) else None


def _sparse(vr: ValueRange, run: int = 3) -> list:
    """Sample values of a wide range: its low end (``run`` values in a row, so that a
    remainder or a rounding meets each of its cases), and far along it."""
    lo, hi = vr.lower, vr.upper
    pts = set(range(lo, lo + run)) | {lo + (1 << 10), lo + (1 << 20), lo + (1 << 21)}
    if not is_inf(hi):
        pts = {v for v in pts if v <= hi} | {hi, hi - 1}
    return sorted(pts)


def _extremes_at(syms, axes, e: E.Expr, facts):
    """The least and greatest value of ``e`` over the grid ``axes`` at points that satisfy
    every fact; None when no grid point does."""
    lo_seen = hi_seen = None
    for vals in itertools.product(*axes):
        point = dict(zip(syms, vals))
        try:
            if not all(_holds(f, point) for f in facts):
                continue
            v = E.evaluate(e, point)
        except ZeroDivisionError:
            continue
        lo_seen = v if lo_seen is None or v < lo_seen else lo_seen
        hi_seen = v if hi_seen is None or v > hi_seen else hi_seen
    return None if lo_seen is None else (lo_seen, hi_seen)


def _attains(interval: ValueRange, lo_seen: int, hi_seen: int) -> bool:
    """Whether values seen at feasible points reach both ends of the sound ``interval``."""
    ok_lo = lo_seen == interval.lower or (is_inf(interval.lower) and lo_seen < -(1 << 19))
    ok_hi = hi_seen == interval.upper or (is_inf(interval.upper) and hi_seen > (1 << 19))
    return ok_lo and ok_hi


def _each_symbol_once(e: E.IntLike) -> bool:
    """Whether interval arithmetic is exact for ``e``: every symbol occurs once (inside
    operations included), so each operand takes its whole range independently, and every
    operation attains the ends of its interval (floor division by a constant is monotone;
    ``Mod`` is not: ``(2*n) % 5`` for n in [1, 3] never takes 0)."""
    seen = set()

    def walk(x) -> bool:
        if type(x) is int:
            return True
        for term, _ in x.terms:
            for a in term:
                if type(a) is Sym:
                    if a in seen:
                        return False
                    seen.add(a)
                elif a.kind == "Mod" or (a.kind == "FloorDiv" and type(a.args[1]) is not int):
                    return False
                elif not all(walk(b) for b in a.args):
                    return False
        return True

    return walk(e)


def bounds(e: Union[int, SymInt]) -> Tuple[object, object]:
    """``(lo, hi)``: the tightest bounds the engine can prove for a size (ints, or
    ``-int_oo`` / ``int_oo``); never a wrong bound."""
    if type(e) is int:
        return e, e
    if not isinstance(e, SymInt):
        raise UserError("bounds() takes a size (an int or a symbolic size), got %s"
                        % type(e).__name__)
    vr = bounds_expr(e.env, e.expr)
    return vr.lower, vr.upper


__all__ = ["symbolic_shape", "bounds", "sym_max", "sym_min", "SymbolicEnv"]
