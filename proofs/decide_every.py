"""Proofs of steps of ``decide`` (``symshape/reasoning/decision.py``) with the code run along
every path on symbolic inputs, the steps it builds on opaque.

``decide.box_exact``: ``decide_ranges`` and ``box_exact`` run on a linear relation whose
coefficients, constant and range ends are symbolic (each end an integer or infinite), along
every path; where the ranges leave the relation open and ``box_exact`` vouches for the box,
explicit points of the box (the lowest and highest corner, or beyond ``Y`` where an end is
infinite; for ``==`` / ``!=`` a zero of the form) show it true at one and false at another:
leaving it open misses nothing.

(``decide.fact_sum`` is proven in ``proofs/factsum_every.py``, ``project.drop_implied`` in
``proofs/drop_every.py``.)
"""
from __future__ import annotations

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning import decision
from symshape.algebra.ranges import ValueRange

from . import bounded, proves
from .code import prove_code
from .pyint import prove, require, zmax, zmin

# ---------------------------------------------------------------------------- box_exact
#: the symbols of the linear forms of ``decide.box_exact``
BOX = (E.Sym(983), E.Sym(984))


class _Ranges:
    """The environment ``decide_ranges`` reads: its ranges, its memo (none)."""

    def __init__(self, ranges) -> None:
        self.ranges = ranges

        self.cache: dict = {}

    def memo(self, table, key, compute, *args):
        """``ShapeEnv.memo``: computed once per table and key."""
        if (table, key) not in self.cache:
            self.cache[table, key] = compute(*args)
        return self.cache[table, key]


def zabs(x):
    """``abs`` of a Z3 integer."""
    return z3.If(x < 0, -x, x)


def _inside(end, x):
    """``x`` in the range of ends ``(lo.s, lo.v, hi.s, hi.v)``."""
    ls, lv, hs, hv = end
    return z3.And(z3.Or(ls != 0, lv <= x), z3.Or(hs != 0, x <= hv))


def _far_points(coeffs, k, ends, sign: int):
    """The point of the ranges where the form is lowest (``sign`` -1; highest: +1), and
    the facts about products it needs: each symbol at the end its coefficient prefers, or,
    where that end is infinite, at ``-Y`` / ``Y`` for a ``Y`` above what the constant and
    the other symbols' finite ends contribute (and above its own finite end, so inside
    its range); the facts ``a*Y >= Y`` for ``a >= 1`` (``<= -Y`` for ``a <= -1``), instances
    of ``_scaling_lemma``; and the form's value there, its products distributed over
    the cases (equal by ``_scaling_lemma``'s distribution identity)."""
    low = [(a > 0) if sign < 0 else (a < 0) for a in coeffs]
    pref_fin = [z3.If(w, ls == 0, hs == 0) for w, (ls, lv, hs, hv) in zip(low, ends)]
    pref = [z3.If(w, lv, hv) for w, (ls, lv, hs, hv) in zip(low, ends)]
    point, lemmas, terms = [], [], []
    for i, (a, (ls, lv, hs, hv)) in enumerate(zip(coeffs, ends)):
        total = 1 + zabs(k) + zabs(lv) + zabs(hv)
        for j, (b, (_, lv_, _, hv_)) in enumerate(zip(coeffs, ends)):
            if j != i:       # at most what the other symbol adds at a finite end
                total = total + zabs(b * lv_) + zabs(b * hv_)
        big = total
        lemmas += [z3.Implies(a >= 1, a * big >= big), z3.Implies(a <= -1, a * big <= -big)]
        point.append(z3.If(pref_fin[i], pref[i], z3.If(low[i], -big, big)))
        # the term's value with the product distributed over the cases (linear in the
        # products a*l, a*h, a*Y that the lemmas and the code's own bound speak of)
        terms.append(z3.If(pref_fin[i], z3.If(low[i], a * lv, a * hv),
                           z3.If(low[i], -(a * big), a * big)))
    return point, lemmas, sum(terms) + k


def _scaling_lemma() -> None:
    """What ``_far_points``' facts instantiate, for all integers, and the identity its
    distributed value rests on (any conditions, any values)."""
    a, y, l_, h_ = z3.Ints("a y l h")
    c, w = z3.Bools("c w")
    prove(z3.And(z3.Implies(a >= 1, a * y >= y), z3.Implies(a <= -1, a * y <= -y)), y >= 0)
    prove(a * z3.If(c, z3.If(w, l_, h_), z3.If(w, -y, y))
          == z3.If(c, z3.If(w, a * l_, a * h_), z3.If(w, -(a * y), a * y)))


def _zero_point(coeffs, k, ends) -> list:
    """A point of the ranges where ``a_1*s_1 + ... + k`` (unit coefficients) is 0 when its
    interval holds 0: ``u + v = -k`` with ``u`` in ``a_1 * range(s_1)``, ``v`` in
    ``a_2 * range(s_2)``."""
    def scaled(a, end):                 # a * range: (low finite, low, high finite, high)
        ls, lv, hs, hv = end
        return (z3.If(a > 0, ls == 0, hs == 0), z3.If(a > 0, lv, -hv),
                z3.If(a > 0, hs == 0, ls == 0), z3.If(a > 0, hv, -lv))
    if len(coeffs) == 1:
        return [-coeffs[0] * k]
    (l0f, l0, h0f, h0), (l1f, l1, h1f, h1) = (scaled(a, e) for a, e in zip(coeffs, ends))
    v0 = z3.If(l1f, l1, z3.If(h1f, h1, 0))          # some value of the second term
    u = z3.If(h1f, z3.If(l0f, zmax(l0, -k - h1), -k - h1),
              z3.If(l0f, l0, z3.If(h0f, zmin(h0, -k - v0), -k - v0)))
    return [coeffs[0] * u, coeffs[1] * (-k - u)]


def _box_paths(n: int, ops) -> list:
    """``decide_ranges`` and ``box_exact`` run on ``a_1*s_1 + ... + a_n*s_n + k <op> 0``
    for each operator of ``ops`` (one expression: its bound computed once, as
    ``ShapeEnv.memo`` does), coefficients and constant symbolic (finite ``Ext``: the code does only integer
    arithmetic and comparisons on them), each range's ends symbolic (an integer or
    infinite), along every path.  Per path and operator: (what holds there, the
    statement that the relation holds at some point of the box and fails at another,
    the answer, box_exact's verdict)."""
    from .symexec import Explorer, Ext, interval, patched, raise_on_paths
    what = "box%d%s" % (n, ops[0])
    syms = BOX[:n]
    coeffs = [z3.Int("%s.a%d" % (what, i)) for i in range(n)]
    k = z3.Int("%s.k" % what)
    ivs = [interval("%s.%s" % (what, s.name)) for s in syms]
    hyps = [a != 0 for a in coeffs] + [c for iv in ivs for c in iv[2]]
    ex = Explorer(hyps)

    def run():
        e = E.Expr({(s,): Ext(0, a) for s, a in zip(syms, coeffs)}, Ext(0, k))
        env = _Ranges({s: ValueRange(iv[0], iv[1]) for s, iv in zip(syms, ivs)})
        return [(decision.decide_ranges(env, R.Rel(op, e)), decision.box_exact(R.Rel(op, e)))
                for op in ops]
    with patched(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, what)
    ends = [(iv[0].s, iv[0].v, iv[1].s, iv[1].v) for iv in ivs]
    (down, l1, lo), (up, l2, hi) = (_far_points(coeffs, k, ends, sign) for sign in (-1, 1))
    zero = _zero_point(coeffs, k, ends)
    given = z3.And(*hyps, *l1, *l2)

    def val(pt):
        return sum(a * x for a, x in zip(coeffs, pt)) + k
    inside = z3.And(*[_inside(e, x) for pt in (down, up) for e, x in zip(ends, pt)])
    zero_in = z3.And(*[_inside(e, x) for e, x in zip(ends, zero)])
    # <=: true at the low point, false at the high one; == / != (unit coefficients):
    # 0 at the zero point, not 0 at one of the ends.  Each claim also says what a
    # decided answer would have to satisfy there (so the claim depends on the answer)
    z = val(zero)
    at = {R.LE: (z3.And(inside, lo <= 0, hi > 0), hi <= 0, lo > 0),
          R.EQ: (z3.And(inside, zero_in, z == 0, z3.Or(lo != 0, hi != 0)),
                 z3.And(lo == 0, hi == 0), z != 0)}
    at[R.NE] = (at[R.EQ][0], at[R.EQ][2], at[R.EQ][1])

    def claim(op, pc, exact):
        made: list = []          # built on first use (only open paths' claims are)

        def build(v, x):
            if not made:
                open_, yes, no = at[op]
                fixed = _units(coeffs, pc) if op != R.LE and exact else []
                if fixed:   # the path fixes each coefficient to 1 or -1: the claim with them
                    open_, yes, no = (z3.substitute(f, *fixed) for f in (open_, yes, no))
                made.append(([a == c for a, c in fixed], open_, yes, no))
            pinned, open_, yes, no = made[0]
            return z3.And(*pinned, z3.Implies(z3.And(v == -1, x), open_),
                          z3.Implies(v == 1, yes), z3.Implies(v == 0, no))
        return build
    return [(z3.And(given, *pc), claim(op, pc, exact), ans, exact, op)
            for pc, got in paths for op, (ans, exact) in zip(ops, got)]


def _units(coeffs, pc) -> list:
    """``(a, c)`` for each coefficient the path condition fixes to ``c`` (1 or -1): the
    unit coefficients box_exact checked (substituted, the claim is linear; the claim
    keeps ``a == c`` itself)."""
    out = []
    for a in coeffs:
        for c in (1, -1):
            s = z3.Solver()
            s.add(*pc)
            s.add(a != c)
            if s.check() == z3.unsat:
                out.append((a, z3.IntVal(c)))
                break
    return out


def _vouched(mine, n: int, op) -> None:
    """The claims of the open, box-exact paths ``mine`` of one operator, in one query."""
    require(bool(mine), "box_exact never vouched for an open %s over %d symbols", op, n)
    impl = [v for _, _, exact in mine for v in (z3.IntVal(-1), z3.BoolVal(exact))]

    def claim(*vs):
        return z3.And(*[z3.Implies(pc, c(vs[2 * i], vs[2 * i + 1]))
                        for i, (pc, c, _) in enumerate(mine)])
    prove_code(claim, impl, what="box_exact of %d symbols vouching for %s on %d paths"
               % (n, op, len(mine)))


@proves("decide.box_exact",
        over=bounded("every linear relation a_1*s_1 + ... + a_n*s_n + k <op> 0 over n <= 2 "
                     "symbols (op <=, ==, !=; coefficients, constant and range ends "
                     "symbolic, each end finite or infinite), along every path of "
                     "decide_ranges and box_exact"))
def decide_box_exact():
    """Every end case of every range (each end a symbolic integer or infinite), every
    operator, one and two symbols: ``_box_paths``."""
    _scaling_lemma()
    vouched = 0
    for n in (1, 2):
        # == and != take the same paths (decide_ranges and box_exact treat them alike);
        # <= apart: run with them it would take the product of their paths
        for ops in ((R.LE,), (R.EQ, R.NE)):
            # decide_ranges' answers are decide.by_range's; box_exact's no is always sound
            cases = _box_paths(n, ops)
            for op in ops:          # a claim per operator (smaller queries)
                _vouched([(pc, claim, exact) for pc, claim, ans, exact, o in cases
                          if o == op and ans is None and exact], n, op)
                vouched += 1
    require(vouched > 0, "box_exact never vouched for a relation the ranges leave open")
    # what it never vouches for: a product, a sum of two relations
    s0, s1 = (s.expr for s in BOX)
    require(not decision.box_exact(R.make(R.LE, s0 * s1 - 20)) and
            not decision.box_exact(R.combine("or", [R.le(s0, 3), R.le(s1, 1)])),
            "a product or a disjunction counted as box-exact")
