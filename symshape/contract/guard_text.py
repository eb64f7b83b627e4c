"""The parts of a program's contract that ranges and shapes cannot say, in user terms.

``range_constraints`` gives each root symbol its exact range and ``input_shapes`` the
relations and multiples that shapes spell (``(s0, 4*s1)``); what is left (``x.shape[0] +
y.shape[0] <= 100``, ``x.shape[0] % 3 == 0`` on an axis not written as a multiple) is a
residual guard.  ``guard_texts`` prints each one over the input axes that bind its symbols,
exactly as the input check evaluates it.
"""
from __future__ import annotations

from functools import reduce
from typing import Dict, List

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.algebra.expr import Expr, Sym
from symshape.algebra.infinity import is_inf
from symshape.reasoning.projection import implied
from symshape.rules import rule
from symshape.algebra.simplify import dominates_proven
from symshape.contract.writer import CheckWriter


def guard_texts(cs) -> List[str]:
    """One line per residual guard of the constraint set ``cs``, in the inputs' terms,
    leaving out each guard that the printed ranges already imply (``shown_facts``)."""
    if not cs.facts:
        return []
    writer = CheckWriter(cs)
    writer.emit()                     # binds every root to the axis that reads it
    axes: Dict[Sym, str] = {}

    def name(s: Sym) -> str:
        return axes[s] if s in axes else writer.user_name(s)

    return [in_axis_terms(readable_minmax(f, cs.ranges), writer.names.solved, axes)
            .format(name, py=True) for f in shown_facts(cs)]


@rule("contract.axis_terms")
def in_axis_terms(c, solved, axes: Dict[Sym, str]):
    """``c`` with each root read off an axis as ``axis == a*s + rest`` written back as that
    axis wherever it appears as a multiple of ``a`` (``y.shape[0] + 4*s <= 20`` with ``x.shape[0]
    == 4*s`` reads ``y.shape[0] + x.shape[0] <= 20``, not ``4*x.shape[0]/4``).  The same
    points: ``k*a*s == k*(axis - rest)``.  ``axes`` collects the stand-in symbols' names."""
    if isinstance(c, R.BoolOp):
        return R.BoolOp(c.op, tuple(in_axis_terms(a, solved, axes) for a in c.args))
    if not isinstance(c, R.Rel) or type(c.expr) is not Expr:
        return c
    e = c.expr
    lin = e.linear_coeffs()
    if lin is None:
        return c
    for s, coeff in lin.items():
        if s in solved and coeff % solved[s][0] == 0:
            a, rest, axis = solved[s]
            stand_in = Sym(10 ** 9 + len(axes))     # named by the axis text, never emitted
            axes[stand_in] = axis
            e = e - s.expr * coeff + (stand_in.expr - rest) * (coeff // a)
    return R.Rel(c.op, e) if e is not c.expr else c


@rule("contract.shown_guards")
def shown_facts(cs) -> list:
    """The residual guards the printed contract must list: each guard that follows from
    the root ranges, the exact ranges of the compound input dims (``z.shape[0] = s0 + s1``
    in ``[4, 20]``, part of ``range_constraints``) and the other guards still listed is
    dropped, proved by the solver (a guard it cannot settle in time stays).  The input
    check still enforces every guard: only the text leaves out what the ranges say."""
    cached = cs.__dict__.get("_shown_facts")
    if cached is not None:
        return cached
    # what range_constraints prints about compound dims, then each guard in turn: two
    # folds, so a proof covers every length by induction on the step
    said = reduce(said_of_range, cs.range_constraints().items(), [])
    kept = reduce(drop_if_implied, cs.facts, (list(cs.facts), said, cs.ranges))[0]
    cs.__dict__["_shown_facts"] = kept
    return kept


def said_of_range(said: list, item) -> list:
    """A step of ``shown_facts``: ``said`` and the guards that the printed range of
    ``item`` (an expression and its range) states about a compound dim (none for a root
    symbol: its range is the root's own)."""
    e, vr = item
    if type(e) is not Expr or e.as_symbol() is not None:
        return said
    ends = [R.ge(e, vr.lower)] if not is_inf(vr.lower) else []
    ends += [R.le(e, vr.upper)] if not is_inf(vr.upper) else []
    return said + [c for c in ends if not isinstance(c, bool)]


def drop_if_implied(state: tuple, f) -> tuple:
    """A step of ``shown_facts``: ``state`` is (the guards kept so far, what the printed
    ranges say, the root ranges); ``f`` is left out when the solver proves it follows from
    the other kept guards, the printed ranges and the root ranges."""
    kept, said, ranges = state
    rest = [g for g in kept if g is not f]
    return (rest if implied(f, rest + said, ranges) else kept), said, ranges


def _kept_args(atom, ranges) -> list:
    """The arguments of a ``Min`` / ``Max`` that can be its value (``expr.undominated``,
    with dominance decided on the ranges)."""
    return E.undominated(atom.args,
                         lambda v, u: dominates_proven(atom.kind, v, u, ranges))


def _minmax_atom(term):
    atom = term[0] if len(term) == 1 else None
    if atom is None or type(atom) is Sym or atom.kind not in ("Min", "Max"):
        return None
    return atom


@rule("contract.readable_minmax")
def readable_minmax(c, ranges):
    """A guard equating a ``Min`` (or ``Max``) with another or with a size, as what it
    means on the ranges:
    ``min(20, m // 3) == min(x, y, m // 3)`` with ``m = min(x, y)`` drops the arguments
    that cannot be the minimum (``x`` and ``y``, never below ``m // 3``), leaving ``min(20,
    m // 3) == m // 3``, which is ``m // 3 <= 20``, which is ``m <= 62``.  Anything else
    is returned unchanged."""
    if not (isinstance(c, R.Rel) and c.op == R.EQ and type(c.expr) is Expr):
        return c
    atoms = [(a, k) for a, k in ((_minmax_atom(t), k) for t, k in c.expr.terms)
             if a is not None and abs(k) == 1]
    try:
        if len(atoms) == 2 and len(c.expr.terms) == 2 and c.expr.const == 0 and \
                atoms[0][0].kind == atoms[1][0].kind and atoms[0][1] == -atoms[1][1]:
            kind = atoms[0][0].kind
            left, right = _kept_args(atoms[0][0], ranges), _kept_args(atoms[1][0], ranges)
        elif len(atoms) == 1:
            # k*Min(A) + rest == 0: Min(A) == y with y = -rest / k
            (atom, k), = atoms
            kind = atom.kind
            whole = E.smin(*atom.args) if kind == "Min" else E.smax(*atom.args)
            rest = E.sub(c.expr, E.mul(k, whole))
            left, right = _kept_args(atom, ranges), [E.mul(-k, rest)]
        else:
            return c
    except KeyError:          # a symbol without a range: leave the guard as it is
        return c
    for whole, one in ((left, right), (right, left)):
        if len(one) != 1 or one[0] not in whole:
            continue
        y = one[0]
        # Min(args) == y with y among the args <=> y <= every other argument (Max: >=)
        parts = [(R.le(y, a) if kind == "Min" else R.ge(y, a)) for a in whole if a != y]
        got = R.combine("and", [_undivided(p) for p in parts])
        return c if type(got) is bool else got
    return c


def _undivided(c):
    """``X // k <= q`` as ``X <= k*q + k - 1`` and ``X // k >= q`` as ``X >= k*q`` (``k >
    0``): the bound on the size itself."""
    if not isinstance(c, R.Rel) or c.op != R.LE or type(c.expr) is not Expr or \
            len(c.expr.terms) != 1:
        return c
    (term, coeff), = c.expr.terms
    atom = term[0] if len(term) == 1 else None
    if atom is None or type(atom) is Sym or atom.kind != "FloorDiv" or abs(coeff) != 1:
        return c
    x, k = atom.args
    if type(k) is not int or k <= 0:
        return c
    q = -c.expr.const * coeff          # coeff*(X // k) + const <= 0
    got = R.le(x, k * q + k - 1) if coeff == 1 else R.ge(x, k * q)
    return c if type(got) is bool else got
