"""``solve.factor_pairs`` for every equation of two terms: monomials of any number of
atoms, any number of split factors ``x_i // k_i`` and of common atoms, by invariants of the
code's own loops.

``solve_factor_pairs`` is read from the code (``read_form``: its syntax tree must be
exactly the form below, its names the engine's), and each statement is modelled as
Python runs it, an atom read only through its value at the point (``val``, any integer)
and, for ``x // k`` with ``k`` a positive int and ``x`` one atom, through ``x``'s atom and
``k``.  Where it returns True, for one order of the two terms (``ta``, ``ca``), (``tb``,
``cb``):

* the loop over ``tb``'s atoms (any number) keeps ``prod(ta) == prod(rest) * PX`` and
  ``prod(tb so far) == prod(other) * PQ`` (``PX`` the product of the paired atoms ``x_i``,
  ``PQ`` of their quotients ``x_i // k_i``): proven for an arbitrary item of each kind
  (paired: ``rest.remove(na)`` takes one item equal to ``na``, so divides the product by
  its value; other: appended) on an arbitrary state (``_loop_step``);
* ``sorted(keys of rest) == sorted(keys of other)``: the same atoms (a key names one
  atom), so ``prod(rest) == prod(other) == C``; ``k_all`` is ``prod(k_i)`` (its loop
  multiplies each), ``ca * k_all == -cb``; every atom of ``rest`` and every ``x_i`` has
  ``env.bound(..).lower >= 1``, so (a bound holds the value: range.bound) each is at
  least 1 and ``C >= 1`` (``_positive``, by induction on the product);
* so ``e == ca*C*(PX - k_all*PQ)``, zero exactly when ``PX == k_all * PQ``, which by
  induction on the pairs (``_pairs_lemma``: each ``0 <= k*(x//k) <= x``, ``x >= 1``) is
  exactly when every ``x_i % k_i == 0`` -- the congruences the loop hands to ``learn``,
  one per pair, each ``R.make(R.EQ, mod(x, k))`` meaning ``x % k == 0`` (run on every
  divisor: ``_congruence``).  Where it returns False it has learnt nothing.
"""
from __future__ import annotations

import inspect

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning import solver

from . import every, proves
from .code import prove_code
from .filters import read_form
from .pyint import Py, prove, require
from .solve_explore import Enc, both_paths, enc_cond, opaque_mod

_FACTOR_PAIRS = '''
def solve_factor_pairs(env, e):
    if e.const or len(e.terms) != 2:
        return False
    (t1, c1), (t2, c2) = e.terms
    if c1 * c2 >= 0:
        return False
    for (ta, ca), (tb, cb) in (((t1, c1), (t2, c2)), ((t2, c2), (t1, c1))):
        rest = list(ta)
        pairs, other = [], []
        for atom in tb:
            if type(atom) is OpAtom and atom.kind == "FloorDiv" and \\
                    type(atom.args[1]) is int and atom.args[1] > 0 and \\
                    type(atom.args[0]) is Expr:
                na = atom.args[0].as_atom()
                if na is not None and na in rest:
                    rest.remove(na)
                    pairs.append((atom.args[0], atom.args[1]))
                    continue
            other.append(atom)
        if not pairs or sorted(a.key for a in rest) != sorted(a.key for a in other):
            continue
        k_all = 1
        for _, k in pairs:
            k_all *= k
        if ca * k_all != -cb:
            continue
        if any(env.bound(atom_expr(a)).lower < 1 for a in rest) or \\
                any(env.bound(x).lower < 1 for x, _ in pairs):
            continue
        for x, k in pairs:
            learn(env, R.make(R.EQ, mod(x, k)))
        return True
    return False
'''

#: the atom of a pair's ``x`` (any atom) and the module's names the form reads
X = E.Sym(995)


def _read() -> None:
    """The code is the form; its names are the engine's (a wrapped rule: the function)."""
    read_form(solver.solve_factor_pairs, _FACTOR_PAIRS)
    scope = inspect.unwrap(solver.solve_factor_pairs).__globals__
    want = {"OpAtom": E.OpAtom, "Expr": E.Expr, "R": R, "mod": E.mod,
            "atom_expr": E.atom_expr, "learn": solver.learn}
    wrong = [n for n, v in want.items()
             if inspect.unwrap(scope.get(n)) is not inspect.unwrap(v)]
    require(not wrong, "solve_factor_pairs reads other names: %s", wrong)


def _loop_step() -> None:
    """The loop over ``tb``'s atoms, for an arbitrary state and item: a paired item
    (``x // k`` whose atom ``na`` is in ``rest``: ``prod(rest) == prod(rest') * val(na)``)
    and any other item keep both invariants."""
    pta, prest, prest2, px, ptb, pother, pq, v, vna, k = z3.Ints(
        "pta prest prest2 px ptb pother pq v vna k")
    inv = [pta == prest * px, ptb == pother * pq]
    q = Py()
    quot = q.floordiv(vna, k)
    prove(z3.And(pta == prest2 * (px * vna), ptb * quot == pother * (pq * quot)),
          *inv, prest == prest2 * vna, k >= 1, *q.side, what="factor_pairs paired item")
    prove(z3.And(pta == prest * px, ptb * v == (pother * v) * pq), *inv,
          what="factor_pairs other item")
    # the base: rest = ta, no pair, nothing of tb yet
    prove(z3.And(pta == pta * 1, 1 == 1 * 1))


def _positive() -> None:
    """A product of values at least 1 is at least 1 (its loop's step; the base 1)."""
    p, v = z3.Ints("p v")
    prove(p * v >= 1, p >= 1, v >= 1, what="product of positives")


def _pairs_lemma() -> None:
    """By induction on the pairs: ``PX == K*PQ`` exactly when every ``x_i % k_i == 0``,
    with ``0 <= K*PQ <= PX`` and ``PX >= 1`` (the base ``1 == 1*1``); the step for an
    arbitrary pair ``(x, k)``, ``x >= 1``, ``k >= 1`` (Python's ``//`` and ``%``)."""
    px, kk, pq, x, k = z3.Ints("PX K PQ x k")
    allk = z3.Bool("all_so_far")
    # two products of bounded factors (the lemma the step instantiates), for all integers
    xb, yb, xv, yv = z3.Ints("B b X x1")
    bounded_ = [0 <= xb, xb <= xv, xv >= 1, 0 <= yb, yb <= yv, yv >= 1]
    lemma = z3.And((xv * yv == xb * yb) == z3.And(xb == xv, yb == yv),
                   0 <= xb * yb, xb * yb <= xv * yv, xv * yv >= 1)
    prove(lemma, *bounded_, what="equal products of bounded factors")
    q = Py()
    quot, rem = q.floordiv(x, k), q.mod(x, k)
    hyp = [(px == kk * pq) == allk, 0 <= kk * pq, kk * pq <= px, px >= 1, x >= 1, k >= 1]
    b, bb = kk * pq, k * quot
    q.prove(z3.And(0 <= bb, bb <= x, (bb == x) == (rem == 0)), *hyp,
            what="factor_pairs one pair")
    inst = z3.substitute(z3.Implies(z3.And(*bounded_), lemma),
                         (xb, b), (xv, px), (yb, bb), (yv, x))
    new_b = (kk * k) * (pq * quot)
    q.prove(z3.And((px * x == new_b) == z3.And(allk, rem == 0),
                   0 <= new_b, new_b <= px * x, px * x >= 1),
            *hyp, inst, 0 <= bb, bb <= x, (bb == x) == (rem == 0),
            what="factor_pairs pairs step")


def _conclusion() -> None:
    """``e = ca*prod(ta) + cb*prod(tb)`` with the invariants at the loop's end: zero
    exactly when ``PX == k_all*PQ``."""
    ca, cb, c, px, pq, kall = z3.Ints("ca cb C PX PQ k_all")
    prove((ca * (c * px) + cb * (c * pq) == 0) == (px == kall * pq),
          ca * kall == -cb, ca != 0, c >= 1, what="factor_pairs conclusion")


def _congruence() -> None:
    """``R.make(R.EQ, mod(x, k))`` for every divisor ``k >= 1`` (symbolic; ``mod`` its own
    atom, Python's ``%``: its rewrites are the mod.* rules), along every path: it means
    ``x % k == 0``."""
    from .symcoeff import SInt
    k = z3.Int("fp.k")
    made: list = []

    def run():
        made.clear()
        c = R.make(R.EQ, opaque_mod(X.expr, SInt(k)))
        made.append(c)
        return c
    ex, paths = both_paths([k >= 1], run, "R.make(mod(x, k) == 0)", mod=opaque_mod)
    xv = z3.Int("fp.x")
    enc = Enc(ex.P, {X: xv})
    impl = [enc_cond(enc, got) for _, got in paths]
    prove_code(lambda *v: z3.And(*[z3.Implies(z3.And(*pc), m == (ex.P.mod(xv, k) == 0))
                                   for (pc, _), m in zip(paths, v)]),
               impl, [k >= 1], *enc.finite, P=ex.P,
               what="the congruence learnt (%d paths)" % len(paths))


def _runs() -> None:
    """The code read above is the code that runs: the real ``solve_factor_pairs`` on a real
    environment at each of its exits -- like-signed terms (no), the reshape split
    ``s*t == 4*(s // 2)*(t // 2)`` with ``s, t >= 1`` (yes: ``s % 2 == 0`` and
    ``t % 2 == 0`` learnt, so the environment then admits only even sizes) and a split
    whose factors' product is not the coefficient (no)."""
    from symshape.algebra.infinity import INT_OO
    from symshape.algebra.ranges import ValueRange
    from symshape.reasoning.env import ShapeEnv
    env = ShapeEnv()
    s = env.create_symbol(6, "s", ValueRange(1, INT_OO)).expr
    t = env.create_symbol(8, "t", ValueRange(1, INT_OO)).expr
    st = E.mul(s, t)
    halves = E.mul(E.floordiv(s, 2), E.floordiv(t, 2))
    require(solver.solve_factor_pairs(env, E.add(st, t)) is False,
            "solve_factor_pairs took s*t + t == 0 for a split")
    require(solver.solve_factor_pairs(env, E.sub(st, E.scale(halves, 3))) is False,
            "solve_factor_pairs took s*t == 3*(s // 2)*(t // 2) for a split")
    require(solver.solve_factor_pairs(env, E.sub(st, E.scale(halves, 4))) is True,
            "solve_factor_pairs refused s*t == 4*(s // 2)*(t // 2)")
    for x in (s, t):
        require(env.decide(R.make(R.EQ, E.mod(x, 2))) is True,
                "solve_factor_pairs did not learn %s %% 2 == 0", x)


@proves("solve.factor_pairs", over=every(
    "every equation of two terms c1*ta + c2*tb == 0 (no constant), the monomials of any "
    "number of atoms, any number of split factors x_i // k_i (k_i a positive int, x_i one "
    "atom) and of common atoms, coefficients, divisors and values symbolic: the code "
    "read from its form, each atom read through its value and its key, the loops over "
    "tb's atoms, over the pairs (k_all, bounds, learn) by induction on an arbitrary item; "
    "env.bound sound (range.bound); the congruence R.make(R.EQ, mod(x, k)) run on every "
    "divisor along every path: where it returns True the learnt congruences hold "
    "together exactly where the equation does (every atom within its bound)"))
def solve_factor_pairs():
    """The parts above; together they give the claim for every equation."""
    _read()
    _loop_step()
    _positive()
    _pairs_lemma()
    _conclusion()
    _congruence()
    _runs()
