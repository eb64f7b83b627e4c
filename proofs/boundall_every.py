"""``bound()`` (``symshape/algebra/ranges.py``, the rule ``range.bound``) for every
expression and every box, by structural induction: the code run on an expression with
symbolic coefficients and constant over symbols whose ranges have symbolic ends (finite or
infinite), along every path (``proofs/boundpaths.py``), each function it calls standing for
its proven specification.

``bound(x)`` reads ``x`` as its constant and its terms; it sums the terms' ranges with
``vr_add`` (``range.add``) after ``vr_scale`` by the coefficient (``range.scale``), each
term's range the product (``vr_mul``, ``range.mul``) of its runs of equal atoms, a run
``vr_pow`` of its atom's range (``range.pow``, every exponent); an atom's range is
``bound_atom``'s.  Over two terms it meets that sum with the three rewrites
``_bound_factored``, ``_divmod_split`` and ``_minmax_pushed`` (``range.factored``,
``range.divmod_split``, ``range.minmax_push``: each None or a range holding ``x``; here
either answer, a fresh sound range for the second) through ``ValueRange.intersect`` and
``_meet``, each proven here on every two ranges that hold one value and then standing for
that specification.

The induction: ``bound_atom`` is proven first for every kind of atom (a symbol, FloorDiv,
Mod, Min, Max), its arguments read only through ``bound()`` (the induction hypothesis:
sound on each smaller expression) and the transfer function of its kind (its proven rule);
then ``bound()`` with ``bound_atom`` as that specification.  Each loop of ``bound()`` is a
left fold whose step is a proven transfer function returning a *fresh* range, so an
expression of two terms, the first of two runs, covers every number of terms and runs: the
first iteration starts from the code's own initial value (``point(const)``, the first
run's range), the second from any range that holds the value so far (the step of the
induction).  A run's length is the count of equal atoms the code's while loop makes (a run
of two atoms ends the loop on both of its exits: another atom, the term's end) and goes to
``vr_pow``, proven for every exponent.
"""
from __future__ import annotations

import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG
from symshape.algebra.ranges import ValueRange

from . import every, proves
from .alike import read_alike
from . import symexec as SX
from .boundpaths import b_ints, prove_rewrite, recursion, running
from .code import prove_code
from .symcoeff import SInt, encode
from .symexec import Explorer, Ext, inside, interval, to_pair
from .pyint import zmax, zmin

S, T, A, B = E.Sym(0), E.Sym(1), E.Sym(2), E.Sym(3)

#: the transfer functions bound() and bound_atom call, each as its proven rule
_CONTRACTS = {"vr_add": lambda P, x, y: x + y, "vr_scale": lambda P, x, k: x * k,
              "vr_mul": lambda P, x, y: x * y, "vr_floordiv": lambda P, x, y: P.floordiv(x, y),
              "vr_mod": lambda P, x, y: P.mod(x, y), "vr_min": zmin, "vr_max": zmax}


def _power(P, x, n):
    """``x ** n`` for the exponent ``n >= 1`` the code counted."""
    out = x
    for _ in range(n - 1):
        out = out * x
    return out


def _pair(b):
    return (z3.IntVal(0), b.v) if isinstance(b, SInt) else to_pair(b)


def _holds(r: ValueRange, v):
    return inside(*_pair(r.lower), *_pair(r.upper), v)


def bound_atom_every() -> None:
    """``bound_atom`` on a symbol and on each op atom kind over two arguments (any
    expressions: read only through ``bound()``, the induction hypothesis; a Min / Max's
    argument ranges go to ``vr_min`` / ``vr_max`` in one comprehension, proven for every
    number of ranges), along every path: the range holds the atom's value."""
    prove_rewrite(lambda x, rng: RG.bound_atom(x.as_atom(), rng), lambda: S.expr, (S,),
                  "bound_atom(symbol)")
    for kind in ("FloorDiv", "Mod", "Min", "Max"):      # every kind, exhausted
        def build(kind=kind):
            return E.atom_expr(E.OpAtom(kind, (S.expr, T.expr)))
        prove_rewrite(lambda x, rng: RG.bound_atom(x.as_atom(), rng), build, (S, T),
                      "bound_atom(%s)" % kind, contracts=_CONTRACTS)


def _fresh_range(ex: Explorer, name: str, *facts) -> ValueRange:
    """A well-formed range with fresh symbolic ends, ``facts(ls, lv, hs, hv)`` assumed."""
    ls, lv, hs, hv = z3.Ints("%s.ls %s.lo %s.hs %s.hi" % ((name,) * 4))
    ex.assume(z3.Or(ls == 0, ls == -1), z3.Or(hs == 0, hs == 1),
              z3.Implies(ls != 0, lv == 0), z3.Implies(hs != 0, hv == 0),
              z3.Implies(z3.And(ls == 0, hs == 0), lv <= hv),
              *[f(ls, lv, hs, hv) for f in facts])
    return ValueRange(Ext(ls, lv), Ext(hs, hv))


class _Specs:
    """What ``bound()`` calls besides the transfer functions, each as its proof states it:
    ``_bound_factored``, ``_divmod_split`` and ``_minmax_pushed`` None or a range holding
    ``x``'s value at every member of the box (both answers explored); ``intersect`` /
    ``_meet`` of two ranges holding that value a range holding it."""

    def __init__(self, ex: Explorer) -> None:
        self.ex, self.n, self.value = ex, 0, None

    def alternative(self, x, sym_range):
        self.n += 1
        if not self.ex.branch(z3.Bool("alt%d.some" % self.n)):
            return None
        return _fresh_range(self.ex, "alt%d" % self.n,
                            lambda *e: inside(*e, self.value))

    def meet(self, a: ValueRange, b: ValueRange) -> ValueRange:
        self.n += 1
        both = z3.And(_holds(a, self.value), _holds(b, self.value))
        return _fresh_range(self.ex, "meet%d" % self.n,
                            lambda *e: z3.Implies(both, inside(*e, self.value)))


def meet_every() -> None:
    """``_meet`` of any two ranges that both hold a value v (ends symbolic, finite or
    infinite), along every path: the range it returns holds v."""
    alo, ahi, wa, x, xa = interval("meet2.a")
    blo, bhi, wb, y, yb = interval("meet2.b")
    hyps = wa + wb + xa + yb + [x == y]
    ex = Explorer(hyps)
    with SX.patched(ex):
        paths = ex.paths(lambda: RG._meet(ValueRange(alo, ahi), ValueRange(blo, bhi)))
    SX.raise_on_paths(paths, "_meet")
    impl = [t for _, got in paths for t in (*to_pair(got.lower), *to_pair(got.upper))]

    def claim(*t):
        return z3.And(*[z3.Implies(z3.And(*pc), inside(*t[4 * k:4 * k + 4], x))
                        for k, (pc, _) in enumerate(paths)])
    prove_code(claim, impl, hyps, P=ex.P, what="_meet (%d paths)" % len(paths))


def bound_every() -> int:
    """``bound()`` on ``x = c0 + c1*a*a*b + c2*s`` (coefficients and constant symbolic,
    ``c1 != 0``, ``c2`` zero included: then its term is absent) and on the int ``c0``,
    over every box of ``a``, ``b``, ``s`` (ends symbolic, finite or infinite), along every
    path, ``bound_atom`` and the transfer
    functions their proven rules, the three rewrites either answer: on every path the
    range returned holds ``x``'s value at every member of the box.  Returns the number of
    paths."""
    c0, c1, c2 = b_ints("c0 c1 c2")
    syms = (A, B, S)
    ivs = {s: interval("bound.%s" % s.name) for s in syms}
    box_hyps = [c for iv in ivs.values() for c in iv[2]]
    members = [c for iv in ivs.values() for c in iv[4]]
    zs = {s: iv[3] for s, iv in ivs.items()}
    ex = Explorer(box_hyps + members + [c1.v != 0])
    contracts = dict(_CONTRACTS, vr_pow=_power)

    def run():
        spec = _Specs(ex)
        saved = {"_bound_factored": RG._bound_factored, "_divmod_split": RG._divmod_split,
                 "_minmax_pushed": RG._minmax_pushed, "_meet": RG._meet}
        intersect = ValueRange.intersect
        with recursion(ex, ("bound_atom",), contracts) as rec:
            RG._bound_factored = RG._divmod_split = RG._minmax_pushed = spec.alternative
            RG._meet = spec.meet
            ValueRange.intersect = lambda a, b: spec.meet(a, b)    # a method: a function
            try:
                x = E.Expr({(A, A, B): c1, (S,): c2}, c0)      # c1 != 0: an expression
                spec.value = encode(ex.P, x, zs)
                rec.box = {s: ValueRange(iv[0], iv[1]) for s, iv in ivs.items()}
                rec.izs = dict(zs)
                # and an int expression, the constant alone
                return [(x, RG.bound(x, rec.box.__getitem__)),
                        (c0, RG.bound(c0, rec.box.__getitem__))]
            finally:
                for n, f in saved.items():
                    setattr(RG, n, f)
                ValueRange.intersect = intersect
    with running(ex):
        paths = ex.paths(run)
    SX.raise_on_paths(paths, "bound")
    P = ex.P
    impl, cases = [], []
    for pc, got in paths:
        for x, out in got:
            cases.append((z3.And(*pc), encode(P, x, zs), len(impl)))
            impl += [*_pair(out.lower), *_pair(out.upper)]

    def claim(*t):
        return z3.And(*[z3.Implies(cond, inside(t[k], t[k + 1], t[k + 2], t[k + 3], v))
                        for cond, v, k in cases])
    prove_code(claim, impl, box_hyps, members, P=P,
               what="bound() on symbolic boxes (%d paths)" % len(paths))
    return len(paths)


def linear_exact_every() -> int:
    """``bound()`` of one linear term ``c*s + k`` (``c != 0``; coefficient and constant
    symbolic) over every range of ``s`` (ends symbolic, finite or infinite), the code's own
    transfer functions run along every path: the range is *exact* -- a finite end is the
    value at the box's end that gives it (``lo`` for the lower end when ``c > 0``, ``hi``
    when ``c < 0``, so it is attained) and an end is infinite only where that box end is
    (so values go past every bound).  ``project.exact`` stands on this.  Returns the
    number of paths."""
    c, k = b_ints("lin.c lin.k")
    lo, hi, wf, _, _ = interval("lin.s")
    ex = Explorer(wf + [c.v != 0])

    def run():
        x = E.Expr({(S,): c}, k)
        return RG.bound(x, {S: ValueRange(lo, hi)}.__getitem__)
    with running(ex):
        paths = ex.paths(run)
    SX.raise_on_paths(paths, "bound(c*s + k)")
    impl = [t for _, got in paths for t in (*_pair(got.lower), *_pair(got.upper))]
    cv, kv = c.v, k.v

    def end_ok(es, ev, box_low, box_high):
        # the end the coefficient's sign picks, of the box: its value there when finite,
        # infinite exactly when it is
        pick_s = z3.If(cv > 0, box_low.s, box_high.s)
        pick_v = z3.If(cv > 0, box_low.v, box_high.v)
        return z3.If(pick_s == 0, z3.And(es == 0, ev == cv * pick_v + kv), es != 0)

    def claim(*t):
        return z3.And(*[z3.Implies(z3.And(*pc), z3.And(
            end_ok(t[4 * n], t[4 * n + 1], lo, hi), end_ok(t[4 * n + 2], t[4 * n + 3], hi, lo)))
            for n, (pc, _) in enumerate(paths)])
    prove_code(claim, impl, wf, [cv != 0], P=ex.P,
               what="bound(c*s + k) exact on every range (%d paths)" % len(paths))
    return len(paths)


@proves("range.bound", over=every(
    "every expression over every box (ends symbolic, finite or infinite), by structural "
    "induction: bound_atom for every kind of atom (a symbol, FloorDiv, Mod, Min, Max), its "
    "arguments through bound() (the induction hypothesis); then bound() on c0 + c1*a*a*b "
    "+ c2*s (coefficients and constant symbolic; c2 zero or not: one term or two) and on "
    "the int c0, along every path, which covers every number of terms and of runs of equal atoms (each loop a fold whose "
    "proven step returns a fresh range: the second iteration starts from any range); "
    "bound_atom and the transfer functions (range.add, range.scale, range.mul, range.pow "
    "for every exponent, range.floordiv_*, range.mod_*, range.min, range.max) as proven; "
    "_bound_factored, _divmod_split and _minmax_pushed None or a sound range "
    "(range.factored, range.divmod_split, range.minmax_push), met through intersect "
    "and _meet, each proven here on every two ranges holding one value; and exact on one "
    "linear term c*s + k (the code's own transfer functions, every range of s: each "
    "finite end attained, an end infinite only where the box's is)"))
def range_bound():
    for fn in (RG.bound, RG._bound_term, RG.bound_atom):
        read_alike(fn)
    from .bound_every import intersect_every
    intersect_every()
    meet_every()
    bound_atom_every()
    bound_every()
    linear_exact_every()
