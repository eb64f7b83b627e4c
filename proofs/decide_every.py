"""``decide.box_exact`` for every linear relation, of any number of symbols: where the
ranges leave it open and ``box_exact`` vouches for the box, it is true at one point of the
box and false at another (leaving it open misses nothing).

The argument, each part on the engine's own code:

* ``box_exact`` (read from the code, as is ``Expr.is_linear``) vouches only for a relation
  whose expression is linear -- every term one symbol, so (the terms a dict's keys) each
  symbol once -- and, for ``==`` / ``!=``, only with every coefficient 1 or -1.
* ``bound()`` of such an expression is *attained*: every ``t`` at or above its lower end
  is at or above the expression's value at some point of the box (below every ``t`` when
  the end is infinite), every ``t`` at or below its upper end at or below it; with unit
  coefficients every integer between the ends is the value at some point.  By induction
  on ``bound()``'s loop over the terms (read alike from the code: ``proofs/alike.py``),
  its initial value ``point(const)`` attained by the empty sum, and its step (the code's
  own ``vr_add`` / ``vr_scale`` / ``_bound_term`` run along every path on an arbitrary
  attained total, a new symbol's range and coefficient symbolic) keeping it: a point of
  the earlier symbols and a value of the new symbol (a different one) make a point of the
  box, and the proof names both (``_step``).  What ``bound()`` does after the loop
  (``intersect`` / ``_meet`` with ``_bound_factored``, ``_divmod_split`` and
  ``_minmax_pushed``, each None or *any* range) is run along every path and only narrows
  the total (``_tail``), which keeps it attained.
* ``decide_ranges`` (run along every path on that range, any ends) answers None only
  where an attained range has a point on each side (``_open``).
"""
from __future__ import annotations

import inspect

import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG
from symshape.algebra import relations as R
from symshape.reasoning import decision
from symshape.algebra.ranges import ValueRange

from . import every, proves
from .alike import read_alike
from .code import prove_code
from .filters import read_form
from .pyint import prove, require, zmax, zmin
from .symexec import Explorer, Ext, inside, interval, patched, raise_on_paths, to_pair

#: the symbols of the linear forms
BOX = (E.Sym(983), E.Sym(984))

_BOX_EXACT = '''
def box_exact(c):
    if not isinstance(c, R.Rel) or not c.expr.is_linear():
        return False
    return c.op == R.LE or all(abs(k) == 1 for _, k in c.expr.terms)
'''

_IS_LINEAR = '''
def is_linear(self):
    return all(len(t) == 1 and type(t[0]) is Sym for t, _ in self.terms)
'''


def zabs(x):
    """``abs`` of a Z3 integer."""
    return z3.If(x < 0, -x, x)


def _at_least(end, t):
    """``end <= t`` for a lower end ``(s, v)`` (-oo: always)."""
    return z3.Or(end[0] != 0, end[1] <= t)


def _at_most(end, t):
    """``t <= end`` for an upper end ``(s, v)`` (+oo: always)."""
    return z3.Or(end[0] != 0, t <= end[1])


def _read() -> None:
    """``box_exact`` and ``is_linear`` are the forms above, over the engine's ``R`` and
    ``Sym``; ``bound()`` reads its terms alike (``proofs/alike.py``)."""
    read_form(decision.box_exact, _BOX_EXACT)
    read_form(E.Expr.is_linear, _IS_LINEAR)
    # (a rule function may be wrapped while coverage is traced: the function itself)
    require(inspect.unwrap(decision.box_exact).__globals__["R"] is R and
            inspect.unwrap(E.Expr.is_linear).__globals__["Sym"] is E.Sym,
            "box_exact / is_linear read other names")
    read_alike(RG.bound)


def _scaling_lemma() -> None:
    """The facts about products the step's far points use, for all integers, and the
    distribution of a product over the point's cases."""
    a, y, l_, h_ = z3.Ints("a y l h")
    c, w = z3.Bools("c w")
    prove(z3.And(z3.Implies(a >= 1, a * y >= y), z3.Implies(a <= -1, a * y <= -y)), y >= 0)
    prove(a * z3.If(c, z3.If(w, l_, h_), z3.If(w, -y, y))
          == z3.If(c, z3.If(w, a * l_, a * h_), z3.If(w, -(a * y), a * y)))


def _far(a, lo, hi, t, old, low):
    """A value ``x`` of the new symbol and ``a*x`` (distributed: ``_scaling_lemma``) for the
    threshold ``t``: the end of its range ``low`` picks where finite, else ``-Y`` / ``Y``
    for a ``Y`` past ``t``, the old total's end and the range's finite ends; and the
    facts ``a*Y >= Y`` / ``a*Y <= -Y`` it needs (instances of the lemma)."""
    big = 1 + zabs(t) + zabs(old) + zabs(lo.v) + zabs(hi.v)
    fin = z3.If(low, lo.s == 0, hi.s == 0)
    x = z3.If(fin, z3.If(low, lo.v, hi.v), z3.If(low, -big, big))
    ax = z3.If(fin, z3.If(low, a * lo.v, a * hi.v), z3.If(low, -(a * big), a * big))
    facts = [z3.Implies(a >= 1, a * big >= big), z3.Implies(a <= -1, a * big <= -big)]
    return x, ax, facts


def _step() -> None:
    """One pass of ``bound()``'s loop, ``vr_add(total, vr_scale(_bound_term((s,), ..),
    a))``, the code run along every path on any total, any range of ``s`` and any
    coefficient ``a != 0`` (symbolic): if the total is attained by the sum so far, the
    new one is by the sum with ``a*s`` -- for every ``t`` at or above the new lower end a
    value ``x`` of ``s`` (named) with ``t - a*x`` at or above the old one (and so for the
    upper end), and with ``a`` 1 or -1, for every ``w`` between the new ends an ``x`` with
    ``w - a*x`` between the old ones."""
    tlo, thi, twf, _, _ = interval("step.total")
    lo, hi, wf, _, _ = interval("step.s")
    a, t = z3.Int("step.a"), z3.Int("step.t")
    hyps = twf + wf + [a != 0]
    ex = Explorer(hyps)

    def run():
        rng = {BOX[0]: ValueRange(lo, hi)}.__getitem__
        return RG.vr_add(ValueRange(tlo, thi),
                         RG.vr_scale(RG._bound_term((BOX[0],), rng), Ext(0, a)))
    with patched(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, "bound()'s step")
    impl = [v for _, got in paths for v in (*to_pair(got.lower), *to_pair(got.upper))]
    old_lo, old_hi = (tlo.s, tlo.v), (thi.s, thi.v)

    def member(x):
        return z3.And(_at_least((lo.s, lo.v), x), _at_most((hi.s, hi.v), x))
    xb, axb, fb = _far(a, lo, hi, t, tlo.v, a > 0)        # a*x lowest
    xa, axa, fa = _far(a, lo, hi, t, thi.v, a < 0)        # a*x highest
    # with a unit coefficient: y = a*x in a*range(s), and in [w - old hi, w - old lo]
    w = z3.Int("step.w")
    slo_f, slo = z3.If(a > 0, lo.s == 0, hi.s == 0), z3.If(a > 0, lo.v, -hi.v)
    shi_f, shi = z3.If(a > 0, hi.s == 0, lo.s == 0), z3.If(a > 0, hi.v, -lo.v)
    plo_f, plo, phi_f, phi = thi.s == 0, w - thi.v, tlo.s == 0, w - tlo.v
    y = z3.If(z3.Or(slo_f, plo_f),
              z3.If(z3.And(slo_f, plo_f), zmax(slo, plo), z3.If(slo_f, slo, plo)),
              z3.If(z3.Or(shi_f, phi_f),
                    z3.If(z3.And(shi_f, phi_f), zmin(shi, phi), z3.If(shi_f, shi, phi)),
                    0))
    xu = z3.If(a > 0, y, -y)

    def claim(*v):
        out = []
        for n, (pc, _) in enumerate(paths):
            nlo, nhi = (v[4 * n], v[4 * n + 1]), (v[4 * n + 2], v[4 * n + 3])
            out.append(z3.Implies(z3.And(*pc), z3.And(
                z3.Implies(_at_least(nlo, t), z3.And(member(xb), _at_least(old_lo, t - axb))),
                z3.Implies(_at_most(nhi, t), z3.And(member(xa), _at_most(old_hi, t - axa))),
                z3.Implies(z3.And(z3.Or(a == 1, a == -1), _at_least(nlo, w), _at_most(nhi, w)),
                           z3.And(member(xu), _at_least(old_lo, w - y),
                                  _at_most(old_hi, w - y))))))
        return z3.And(*out)
    prove_code(claim, impl, hyps, fb, fa, P=ex.P,
               what="bound()'s step keeps the total attained (%d paths)" % len(paths))


class _Steps:
    """``bound()``'s loop with its step as proven (``_step``): each ``vr_add`` a fresh
    range, recorded with the total it was handed."""

    def __init__(self, ex: Explorer) -> None:
        self.ex, self.calls = ex, []
        self.value = z3.Int("value")       # x at a point of the box

    def add(self, total, term):
        require(term == "the term's range" or total == "alternative",
                "bound()'s step adds %r", term)
        n = len(self.calls)
        ls, lv, hs, hv = z3.Ints("sum%d.ls sum%d.lo sum%d.hs sum%d.hi" % ((n,) * 4))
        self.ex.assume(z3.Or(ls == 0, ls == -1), z3.Or(hs == 0, hs == 1),
                       z3.Implies(ls != 0, lv == 0), z3.Implies(hs != 0, hv == 0),
                       z3.Implies(z3.And(ls == 0, hs == 0), lv <= hv))
        out = ValueRange(Ext(ls, lv), Ext(hs, hv))
        self.calls.append((total, out))
        return out

    def alternative(self, x, sym_range):
        """``_bound_factored`` / ``_divmod_split`` / ``_minmax_pushed``: None or a range
        holding the value of ``x`` at a point of the box (range.factored, range.divmod_split,
        range.minmax_push), which the loop's total holds too (range.bound): else any."""
        n = len(self.calls)
        if not self.ex.fork(z3.Bool("alt%d" % n)):
            return None
        last = [out for total, out in self.calls if total != "alternative"][-1]
        out = self.add("alternative", None)
        self.ex.assume(*[inside(*to_pair(r.lower), *to_pair(r.upper), self.value)
                         for r in (last, out)])
        return out


def _tail(terms: int) -> None:
    """``bound()`` on a linear form of ``terms`` terms (1: no meets; 2: the meets every
    longer sum takes too -- after the loop the code reads only ``len(x.terms) > 1`` and
    hands ``x`` whole to the alternatives), its loop's steps as proven, the alternatives
    any answer, ``intersect`` and ``_meet`` the code's own, along every path: the loop
    starts from ``point(const)``, each step from the last one's total, and the answer
    lies within the loop's last total (so it is attained where that is)."""
    coeffs = [z3.Int("tail%d.a%d" % (terms, i)) for i in range(terms)]
    k = z3.Int("tail%d.k" % terms)
    ex = Explorer([a != 0 for a in coeffs])
    steps = _Steps(ex)
    saved = (RG.vr_add, RG._bound_factored, RG._divmod_split, RG._minmax_pushed,
             RG.vr_scale, RG._bound_term)

    def run():
        steps.calls = []
        e = E.Expr({(s,): Ext(0, a) for s, a in zip(BOX, coeffs)}, Ext(0, k))
        return RG.bound(e, lambda s: ValueRange(Ext(-1, 0), Ext(1, 0))), list(steps.calls)
    RG.vr_add = steps.add
    RG._bound_factored = RG._divmod_split = RG._minmax_pushed = steps.alternative
    # the step's operand is _step's to prove: here a token
    RG.vr_scale = RG._bound_term = lambda *args: "the term's range"
    try:
        with patched(ex):
            paths = ex.paths(run)
    finally:
        (RG.vr_add, RG._bound_factored, RG._divmod_split, RG._minmax_pushed,
         RG.vr_scale, RG._bound_term) = saved
    raise_on_paths(paths, "bound() on %d terms" % terms)
    impl, cases = [], []
    for pc, (got, calls) in paths:
        loop = [(total, out) for total, out in calls if total != "alternative"]
        require(len(loop) == terms and all(loop[i + 1][0] is loop[i][1]
                                           for i in range(terms - 1)),
                "bound()'s loop over %d terms is not a chain of steps: %s", terms, loop)
        first, last = loop[0][0], loop[-1][1]
        base = len(impl)
        impl += [*to_pair(first.lower), *to_pair(first.upper),
                 *to_pair(got.lower), *to_pair(got.upper)]
        cases.append((z3.And(*pc), base, last))

    def claim(*v):
        out = []
        for pc, b, last in cases:
            fl, fh, gl, gh = (v[b:b + 2], v[b + 2:b + 4], v[b + 4:b + 6], v[b + 6:b + 8])
            out.append(z3.Implies(pc, z3.And(
                fl[0] == 0, fl[1] == k, fh[0] == 0, fh[1] == k,        # point(const)
                # the answer's ends within the last total's: attained where it is
                z3.Or(last.lower.s != 0, z3.And(gl[0] == 0, last.lower.v <= gl[1])),
                z3.Or(last.upper.s != 0, z3.And(gh[0] == 0, gh[1] <= last.upper.v)))))
        return z3.And(*out)
    prove_code(claim, impl, P=ex.P,
               what="bound() on %d terms within its loop's total (%d paths)" % (terms,
                                                                              len(paths)))


class _Memo:
    """The environment ``decide_ranges`` reads: its memo gives the bound, any range."""

    def __init__(self, b: ValueRange) -> None:
        self.b, self.ranges = b, {}

    def memo(self, table, key, compute, *args):
        require(table == "bound" and compute is decision.bound,
                "decide_ranges memoizes %s", table)
        return self.b


def _open() -> None:
    """``decide_ranges`` on ``e <op> 0`` for each operator, its bound any range (ends
    symbolic, finite or infinite), along every path: None only where an attained range
    has a point on each side -- for ``<=`` a value ``<= 0`` and one ``>= 1`` within it;
    for ``==`` / ``!=`` 0 and a value ``w != 0`` (named) between its ends."""
    lo, hi, wf, _, _ = interval("open.b")
    ex = Explorer(wf)
    e = BOX[0].expr
    for op in (R.LE, R.EQ, R.NE):
        with patched(ex):
            paths = ex.paths(lambda: decision.decide_ranges(_Memo(ValueRange(lo, hi)),
                                                            R.Rel(op, e)))
        raise_on_paths(paths, "decide_ranges")
        opened = [z3.And(*pc) for pc, got in paths if got is None]
        require(opened, "decide_ranges never leaves %s open", op)
        ends = (lo.s, lo.v), (hi.s, hi.v)
        nonzero = z3.If(z3.And(lo.s == 0, lo.v != 0), lo.v,
                        z3.If(z3.And(hi.s == 0, hi.v != 0), hi.v,
                              z3.If(lo.s != 0, -1, 1)))
        sides = z3.And(_at_least(ends[0], 0), _at_most(ends[1], 1)) if op == R.LE else \
            z3.And(_at_least(ends[0], 0), _at_most(ends[1], 0), nonzero != 0,
                   _at_least(ends[0], nonzero), _at_most(ends[1], nonzero))
        verdicts = [z3.BoolVal(got is None) for _, got in paths]
        prove_code(lambda *v: z3.And(*[z3.Implies(z3.And(z3.And(*pc), x), sides)
                                       for (pc, _), x in zip(paths, v)]),
                   verdicts, wf, what="decide_ranges leaves %s open (%d paths)"
                   % (op, len(opened)))


@proves("decide.box_exact", over=every(
    "every linear relation a_1*s_1 + ... + a_n*s_n + k <op> 0 of any number n of symbols "
    "(op <=, ==, !=; coefficients, constant and range ends symbolic, each end finite or "
    "infinite): box_exact and is_linear read from the code; bound() by induction on its "
    "loop over the terms (read alike), its step run along every path on any attained "
    "total and any new symbol's range and coefficient, what follows the loop run along "
    "every path with _bound_factored, _divmod_split and _minmax_pushed any answer; "
    "decide_ranges run along every path on any range: where it answers None and "
    "box_exact vouches, the relation holds at a point of the box and fails at another"))
def decide_box_exact():
    """``_read``, ``_step``, ``_tail`` for one term and for more, ``_open``: together,
    every relation box_exact vouches for that the ranges leave open is open on the box."""
    _read()
    _scaling_lemma()
    _step()
    _tail(1)
    _tail(2)
    _open()
