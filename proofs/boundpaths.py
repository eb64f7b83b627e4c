"""``bound()`` and its rewrites (``symshape/algebra/ranges.py``) run on expressions with
*symbolic coefficients* over boxes with *symbolic ends*: proofs for every coefficient and
every box (finite or infinite ends), along every path of the code.

Two kinds of symbolic value meet here: the box's ends are ``symexec.Ext`` (an integer or an
infinity) and the expression's coefficients, constant and divisors are ``BInt`` (a
``symcoeff.SInt`` that also combines with ``Ext``: ``c * lo`` where the code scales a
range).  Both branch through one ``symexec.Explorer``, so the code runs once per feasible
outcome of every test it makes.

A rewrite that calls ``bound()`` again on the rewritten expression is proven by induction:
each such call returns a *fresh* range (``Recursion``), and the induction hypothesis --
``bound()`` is sound on that smaller expression -- is instantiated at the point the proof
picks (``inst``: the stand-in quotient of a divmod split at ``s // k``, ...): if every
symbol's value there lies in the range the code gave it, the expression's value there lies
in the fresh range.  The claim is then that the range the rewrite *returns* holds the input
expression's value for every member of the box.  The induction is on the call tree of a run
that returns (a recursion that never ends returns no range at all), so any expression may
be a recursive call's: ``bound()``'s soundness is stated for every one.
"""
from __future__ import annotations

import builtins
from contextlib import contextmanager
from typing import Callable, Dict, List

import z3

from symshape.algebra import expr as E
from symshape.algebra import ranges as RG
from symshape.algebra.ranges import ValueRange

from . import symcoeff as SC
from . import symexec as SX
from .code import prove_code
from .symcoeff import SInt, divisors_of, encode
from .symexec import (Explorer, Ext, inside, interval, monotone_quotients, prove_monotone,
                      to_pair)

__all__ = ["BInt", "b_ints", "Recursion", "running", "prove_rewrite"]


class BInt(SInt):
    """A symbolic coefficient that also meets symbolic range ends (``Ext``)."""

    __slots__ = ()

    def ext(self) -> Ext:
        """This integer as a finite ``Ext``."""
        return Ext(0, self.v)

    __hash__ = SInt.__hash__

    def __eq__(self, o):
        if isinstance(o, Ext):
            return self.ext() == o
        return SInt.__eq__(self, o)

    def __ne__(self, o):
        return not self.__eq__(o)

    def __neg__(self):
        return BInt(-self.v)


def _binary(name: str) -> Callable:
    base = getattr(SInt, name)

    def op(self, o):
        if isinstance(o, Ext):
            return getattr(self.ext(), name)(o)
        got = base(self, o)
        return BInt(got.v) if isinstance(got, SInt) else got
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__",
              "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(BInt, _name, _binary(_name))


def b_ints(names: str) -> List[BInt]:
    """Fresh symbolic coefficients, one per name."""
    return [BInt(z3.Int(n)) for n in names.split()]


def _lift(x):
    return Ext(0, x.v) if isinstance(x, SInt) else None


def _type(x):
    return int if isinstance(x, SInt) else builtins.type(x)


@contextmanager
def running(ex: Explorer):
    """``expr`` and ``ranges`` see BInts as ints and symbolic infinities while ``ex`` runs
    them (``symcoeff.patched``, ``symexec.patched``); an ``Ext`` takes a BInt operand."""
    with SC.patched(ex, inductive=False), SX.patched(ex):
        RG.type = _type
        SX.LIFTS.append(_lift)
        try:
            yield ex
        finally:
            SX.LIFTS.remove(_lift)
            del RG.type


class Recursion:
    """Stands in for ``bound()`` inside a rewrite, and for the proven transfer functions it
    calls (``contracts``: name -> the operation, as ``op(P, x, y)``): each call returns a
    fresh range.  A ``bound()`` call remembers (expression, the range the code gave each
    of its symbols, the fresh ends) and a transfer function's call (its operand ranges, the
    operation, the fresh range); each assumes, on its path, the instance of its induction
    hypothesis / proven rule at the point the proof picked (``izs``), so the paths those
    rule out are not explored (``intersect`` of two ranges that both hold the value)."""

    def __init__(self, ex: Explorer) -> None:
        self.ex = ex
        self.calls: List = []
        self.ops: List = []
        self.lists: List = []
        self.box: Dict = {}         # symbol -> its range (the box the proof gave the code)
        self.izs: Dict = {}         # symbol -> the value the hypotheses are instantiated at

    def _fresh(self) -> ValueRange:
        n = len(self.calls) + len(self.ops) + len(self.lists)
        ls, lv, hs, hv = z3.Ints("ih%d.ls ih%d.lo ih%d.hs ih%d.hi" % ((n,) * 4))
        self.ex.assume(z3.Or(ls == 0, ls == -1), z3.Or(hs == 0, hs == 1),
                       z3.Implies(ls != 0, lv == 0), z3.Implies(hs != 0, hv == 0),
                       z3.Implies(z3.And(ls == 0, hs == 0), lv <= hv))
        return ValueRange(Ext(ls, lv), Ext(hs, hv))

    def bound(self, e, sym_range):
        """A fresh range for ``bound(e, sym_range)`` (its induction hypothesis)."""
        if isinstance(e, (int, SInt)):
            return RG.point(e)
        if not isinstance(e, E.Expr):           # bound_atom(atom, ...): the atom's value
            e = E.atom_expr(e)
        out = self._fresh()
        ranges = {a: sym_range(a) for a in sorted(e.free_symbols, key=lambda a: a.key)}
        self.calls.append((e, ranges, out.lower, out.upper))
        P, izs = self.ex.P, self.izs
        self.ex.assume(z3.Implies(z3.And(*[_in(r, izs[a]) for a, r in ranges.items()]),
                                  _in(out, encode(P, e, izs))))
        return out

    def contract(self, op: Callable, divides: bool) -> Callable:
        """A transfer function ``f(a, b)`` as its proven rule: a fresh range holding
        ``op(P, x, y)`` for x in a, y in b (y != 0 when it ``divides``)."""
        def call(a, b):
            out = self._fresh()
            self.ops.append((a, b, op, out, divides))
            self.ex.assume(_rule_instance(self.ex.P, a, b, op, out, divides, self))
            return out
        return call



    def contract_list(self, op: Callable) -> Callable:
        """``vr_min`` / ``vr_max`` (a list of ranges) as its proven rule: a fresh range
        holding ``op(*values)`` when each value lies in its range."""
        def call(args):
            args = list(args)
            out = self._fresh()
            vals = [value_of(self.ex.P, a, self) for a in args]
            if all(v is not None for v in vals):
                self.ex.assume(z3.Implies(z3.And(*[_in(a, v) for a, v in zip(args, vals)]),
                                          _in(out, op(*vals))))
            self.lists.append((args, op, out))
            return out
        return call


@contextmanager
def recursion(ex: Explorer, names=("bound",), contracts=None):
    """``RG.bound`` (and the other ``names`` of ``ranges``) answered by a ``Recursion``;
    ``contracts``: ``ranges`` functions answered by their proven rule."""
    rec = Recursion(ex)
    stubs = {n: rec.bound for n in names}
    for n, op in (contracts or {}).items():
        stubs[n] = (rec.contract_list(op) if n in ("vr_min", "vr_max") else
                    rec.contract(op, n in ("vr_floordiv", "vr_mod")))
    saved = {n: vars(RG)[n] for n in stubs}
    for n, f in stubs.items():
        setattr(RG, n, f)
    try:
        yield rec
    finally:
        for n, f in saved.items():
            setattr(RG, n, f)


def _pair(b):
    """A range end the code returned (Ext, BInt, int or an infinity) as (s, v) terms."""
    return (z3.IntVal(0), b.v) if isinstance(b, SInt) else to_pair(b)


def _in(r: ValueRange, v):
    return inside(*_pair(r.lower), *_pair(r.upper), v)


def value_of(P, r: ValueRange, rec: Recursion):
    """The value the proof instantiates a transfer function's rule at, for operand ``r``:
    the member of the box whose range object the code passed, the value of the expression
    an induction hypothesis' range stands for, the value of a proven rule's operation, or
    a singleton's value; None when the proof can name none.  A scalar operand (a scale
    factor, an exponent) is its own value."""
    if not isinstance(r, ValueRange):
        return r if isinstance(r, int) else SC.value(r)
    for s_, b in rec.box.items():
        if b is r:
            return rec.izs[s_]
    for e, _, lo, _ in rec.calls:
        if lo is r.lower:
            return encode(P, e, rec.izs)
    for a, b, op, got, _ in rec.ops:
        if got is r:
            x, y = value_of(P, a, rec), value_of(P, b, rec)
            return None if x is None or y is None else op(P, x, y)
    for args, op, got in rec.lists:
        if got is r:
            vals = [value_of(P, a, rec) for a in args]
            return None if any(v is None for v in vals) else op(*vals)
    if isinstance(r.lower, (int, SInt)) and r.upper is r.lower:
        return SC.value(r.lower)
    return None


def _rule_instance(P, a, b, op, got: ValueRange, divides: bool, rec):
    x, y = value_of(P, a, rec), value_of(P, b, rec)
    if x is None or y is None:
        return z3.BoolVal(True)             # no instance the proof can name: nothing known
    defined = [y != 0] if divides else []
    known = [_in(r, v) for r, v in ((a, x), (b, y)) if isinstance(r, ValueRange)]
    return z3.Implies(z3.And(*known, *defined), _in(got, op(P, x, y)))


def prove_rewrite(rewrite: Callable, build: Callable, syms, what: str,
                  inst: Callable = None, hyps=(), names=("bound",), contracts=None,
                  per_path: bool = False) -> int:
    """``rewrite(x, sym_range)`` (the code) on ``x = build()`` (an expression over ``syms``
    with BInt coefficients), each symbol's range a box with symbolic ends, along every
    path; on each path its output (None: no rewrite) holds ``x``'s value for every member
    of the box, given the induction hypothesis on each recursive ``bound()`` call
    (instantiated at ``inst(P, zs)``: values of stand-in symbols, by ``Sym``) and on
    each transfer function of ``contracts`` (its proven rule, instantiated at the member of
    the box whose range the code passed, or at a singleton range's value).  ``hyps``: Z3
    facts on the coefficients; ``per_path``: one query per path (smaller for Z3).  Returns
    the number of paths."""
    ivs = {s: interval("%s.%s" % (what, s.name)) for s in syms}
    box_hyps = [c for iv in ivs.values() for c in iv[2]] + list(hyps)
    zs: Dict = {s: iv[3] for s, iv in ivs.items()}
    members = [c for iv in ivs.values() for c in iv[4]]
    ex = Explorer(box_hyps + members)

    def run():
        with recursion(ex, names, contracts) as rec:
            x = build()
            rec.box = {s: ValueRange(iv[0], iv[1]) for s, iv in ivs.items()}
            rec.izs = dict(zs)
            rec.izs.update(inst(ex.P, zs) if inst is not None else {})
            ex.assume(*[d != 0 for d in divisors_of(ex.P, x, zs)])  # where x is defined
            return x, rewrite(x, rec.box.__getitem__)
    with running(ex):
        paths = ex.paths(run)
    SX.raise_on_paths(paths, what)
    P = ex.P
    impl, cases = [], []
    for pc, (x, out) in paths:   # pc holds each hypothesis instance the path assumed
        if out is None:
            continue
        cases.append((z3.And(*pc), encode(P, x, zs), len(impl)))
        impl += [*_pair(out.lower), *_pair(out.upper)]

    lemmas = monotone_quotients(P)          # x // m monotone in x (proven below)
    if lemmas:
        prove_monotone()
    if per_path:
        for n, (cond, v, k) in enumerate(cases):      # one query per path: small for Z3
            prove_code(lambda *t: z3.Implies(cond, inside(*t, v)), impl[k:k + 4], box_hyps,
                       members, lemmas, P=P, what="%s on symbolic boxes, path %d of %d"
                       % (what, n + 1, len(paths)))
        return len(paths)

    def claim(*t):
        return z3.And(*[z3.Implies(cond, inside(t[k], t[k + 1], t[k + 2], t[k + 3], v))
                        for cond, v, k in cases])
    prove_code(claim, impl, box_hyps, members, lemmas, P=P,
               what="%s on symbolic boxes (%d paths)" % (what, len(paths)))
    return len(paths)
