"""Proofs of the contract's loops over lists of any length, by induction on the code's
own fold step.

``shown_facts`` (which residual guards the printed contract lists) is two folds,
``functools.reduce(STEP, ITEMS, INIT)``: ``said_of_range`` over the printed ranges, then
``drop_if_implied`` over the guards.  ``captured_folds`` runs the engine's function with
its module's ``reduce`` (checked to be ``functools.reduce``, the left fold:
``reduce(f, [], a) == a`` and ``reduce(f, xs + [x], a) == f(reduce(f, xs, a), x)``)
replaced by a recorder, on an opaque contract, and returns the steps, lists and initial
values the function folds; the proof checks those are the module's steps over the
contract's own lists, proves each step for an arbitrary accumulator and item (the
induction step, every path), and the base case from the initial value, so the result
holds for lists of every length.

An accumulator or a list the code reads only by identity and hands to the solver is an
opaque guard (``Guard``: its truth at the point a free Boolean): the solver's
specification (``Implied``: ``projection.implied`` says True only when Z3 finds no point
of the facts where the goal fails) reads a list of guards as their conjunction, so one
opaque guard stands for every list.
"""
from __future__ import annotations

import functools
from typing import Callable, List, Tuple

import z3

from symshape.algebra import expr as E

from . import every, proves
from .code import Symbols, prove_code
from .contract_every import Ends, Guard, Implied, S, T, cond, int_like, proven_normal_form
from .pyint import ProofFailure, prove, require
from .symcoeff import encode, patched, sym_ints
from .symexec import Explorer, TrackedPy


class Folded:
    """What a captured ``reduce`` returned: a token the function may index (a tuple
    accumulator's part) and return."""

    def __init__(self, index: int, part=None) -> None:
        self.index, self.part = index, part

    def __getitem__(self, i):
        return Folded(self.index, i)


def captured_folds(module, fn: Callable, *args, answers=None) -> Tuple[list, object]:
    """``fn(*args)`` with ``module.reduce`` recording each call (step, items, initial
    value) and returning a ``Folded`` token (or, given ``answers``, the next of them): (the
    calls, what ``fn`` returned).  A ProofFailure when ``module.reduce`` is not
    ``functools.reduce``."""
    real = getattr(module, "reduce", None)
    require(real is functools.reduce, "%s.reduce is %r, not functools.reduce",
            module.__name__, real)
    calls: List[tuple] = []

    def record(step, items, *init):
        require(len(init) == 1, "%s folds without an initial value", fn.__name__)
        calls.append((step, items, init[0]))
        require(answers is None or len(calls) <= len(answers), "%s folds more than %d times",
                fn.__name__, len(answers or ()))
        return Folded(len(calls) - 1) if answers is None else answers[len(calls) - 1]
    module.reduce = record
    try:
        out = fn(*args)
    finally:
        module.reduce = real
    return calls, out


def _all_paths(ex: Explorer, run: Callable, what: str) -> list:
    """``run()`` on every path of ``ex`` (SInt arithmetic, ``relations.make`` as proven);
    a ProofFailure when a feasible path raises."""
    with patched(ex, inductive=False), int_like(), proven_normal_form():
        paths = ex.paths(run)
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s: raises %s: %s on the feasible path %s"
                               % (what, type(got).__name__, got, z3.And(*pc)))
    return paths


def _meaning(P, g, zs):
    return g.holds if isinstance(g, Guard) else cond(P, g, zs)


# ---------------------------------------------------------------------------- shown guards
class _Printed:
    """The printed ranges as ``shown_facts`` reads them: only through ``items()``."""

    def items(self):
        return self


class _Contract:
    """A constraint set as ``shown_facts`` reads it: its guards, root ranges and printed
    ranges, each handed on unread."""

    def __init__(self, facts) -> None:
        self.facts, self.ranges, self.printed = facts, object(), _Printed()

    def range_constraints(self):
        return self.printed


def _shown_structure() -> None:
    """``shown_facts`` is ``reduce(drop_if_implied, cs.facts, (a copy of cs.facts,
    reduce(said_of_range, cs.range_constraints().items(), []), cs.ranges))[0]``."""
    from symshape.contract import guard_text
    cs = _Contract([Guard("base0"), Guard("base1")])
    calls, out = captured_folds(guard_text, guard_text.shown_facts, cs)
    require(len(calls) == 2, "shown_facts folds %d times, not twice", len(calls))
    (s1, items1, init1), (s2, items2, init2) = calls
    require(s1 is guard_text.said_of_range and items1 is cs.printed and init1 == [],
            "shown_facts does not fold said_of_range over the printed ranges from []")
    require(s2 is guard_text.drop_if_implied and items2 is cs.facts,
            "shown_facts does not fold drop_if_implied over its guards")
    kept, said, ranges = init2
    require(kept is not cs.facts and len(kept) == len(cs.facts)
            and all(a is b for a, b in zip(kept, cs.facts))
            and isinstance(said, Folded) and said.index == 0 and said.part is None
            and ranges is cs.ranges,
            "shown_facts starts its guard fold from %r, not (a copy of its guards, what "
            "the printed ranges say, the root ranges)", init2)
    require(isinstance(out, Folded) and out.index == 1 and out.part == 0,
            "shown_facts returns %r, not the guards its fold kept", out)


def _drop_step(present: bool) -> None:
    """``drop_if_implied((kept, said, ranges), f)`` for every state: ``kept`` the guards
    before ``f``, ``f`` (when ``present``) and those after (each part an opaque guard, any
    list), ``said`` any list, under every answer of ``implied``: ``said`` and ``ranges``
    are handed on, ``f`` is left out exactly when ``implied`` said it follows, and the
    kept guards with ``said`` hold exactly where the old ones do (within the ranges)."""
    from symshape.contract import guard_text
    before, f, after, said = (Guard("%s.%d" % (n, present))
                              for n in ("before", "f", "after", "said"))
    in_ranges = z3.Bool("in_ranges.%d" % present)
    kept = [before, f, after] if present else [before, after]
    state = (kept, [said], object())
    ex = Explorer([])
    real = guard_text.implied

    def run():
        ex.P = TrackedPy()
        oracle = guard_text.implied = Implied(ex, lambda g: g.holds, in_ranges)
        return guard_text.drop_if_implied(state, f), oracle
    try:
        paths = _all_paths(ex, run, "drop_if_implied")
    finally:
        guard_text.implied = real
    new, cases = [], []
    rest = [g for g in kept if g is not f]
    for pc, ((got, said_out, ranges_out), oracle) in paths:
        require(said_out is state[1] and ranges_out is state[2],
                "drop_if_implied changed what the printed ranges say or the ranges")
        require(len(oracle.answers) == 1 and oracle.answers[0][0] is f,
                "drop_if_implied asked implied %d times", len(oracle.answers))
        yes = oracle.answers[0][1]
        require((got == rest and all(a is b for a, b in zip(got, rest))) if yes
                else got is kept, "drop_if_implied kept %s where implied said %s", got, yes)
        new.append(z3.And(*[g.holds for g in got]))
        cases.append(z3.And(*pc))
    old = z3.And(in_ranges, said.holds, *[g.holds for g in kept])
    prove_code(lambda *v: z3.And(*[z3.Implies(on, z3.And(in_ranges, said.holds, x) == old)
                                   for x, on in zip(v, cases)]),
               new, what="drop_if_implied, f %s" % ("present" if present else "absent"))


def _said_step(zs: Symbols, compound: bool) -> None:
    """``said_of_range(said, (e, vr))`` for every ``said`` (an opaque guard: any list) and
    every printed range, each end finite (symbolic) or infinite, of ``e = c1*s + k``
    (a root when ``c1 == 1`` and ``k == 0``) or, with ``compound``, ``c1*s + c2*t + k``:
    the new list holds exactly where ``said`` and, for a compound ``e``, its printed
    range do."""
    from symshape.contract import guard_text
    from symshape.algebra.infinity import INT_OO, NEG_INT_OO
    c1, c2, k, lo, hi = sym_ints("c1 c2 k lo hi")
    lo_fin, hi_fin = z3.Bools("lo.finite hi.finite")
    said = Guard("said.%d" % compound)
    hyps = [c1.v != 0] + ([c2.v != 0] if compound else [])    # an Expr's terms
    ex = Explorer(hyps)

    def run():
        ex.P = TrackedPy()
        e = E.Expr({(S,): c1, (T,): c2}, k) if compound else E.Expr({(S,): c1}, k)
        vr = Ends(lo if ex.branch(lo_fin) else NEG_INT_OO,
                  hi if ex.branch(hi_fin) else INT_OO)
        return guard_text.said_of_range([said], (e, vr)), e, ex.P
    outs, cases, side = [], [], []
    for pc, (got, e, P) in _all_paths(ex, run, "said_of_range"):
        require(got[:1] == [said] and got[0] is said,
                "said_of_range dropped what was said before")
        outs.append(z3.And(*[_meaning(P, g, zs) for g in got]))
        v = encode(P, e, zs)
        printed = z3.And(z3.Implies(lo_fin, v >= lo.v), z3.Implies(hi_fin, v <= hi.v))
        root = z3.BoolVal(False) if compound else z3.And(c1.v == 1, k.v == 0)
        cases.append((z3.And(*pc), z3.And(said.holds, z3.Or(root, printed))))
        side += P.side
    prove_code(lambda *t: z3.And(*[z3.Implies(on, x == want)
                                   for x, (on, want) in zip(t, cases)]),
               outs, hyps, side, what="said_of_range%s" % (" (compound)" if compound else ""))


def _said_of_other() -> None:
    """An item whose key is no expression: ``said`` unchanged (the code reads only its
    type)."""
    from symshape.contract import guard_text
    said = [Guard("said.other")]
    require(guard_text.said_of_range(said, (object(), object())) is said,
            "said_of_range added guards for a key that is no expression")


@proves("contract.shown_guards", over=every(
    "every list of guards of any length and every map of printed ranges of any length "
    "(by induction on the two folds shown_facts is, read from the code: its reduce "
    "captured on an opaque contract), each guard an arbitrary condition (the code reads "
    "it only by identity and through projection.implied: its truth a free Boolean; a "
    "list handed to implied as the conjunction, an opaque guard), each printed range "
    "of a root, of a key that is no expression, or of a compound dim c1*s + c2*t + k or "
    "c1*s + k (symbolic; the code reads e only through its type, as_symbol and e - end, "
    "which acts termwise) with every end finite (symbolic) or infinite, under every "
    "answer of implied (True only where the guard follows: Z3 found no point where it "
    "fails), along every path of each step; relations.make as proven by "
    "rel.le_gcd_ceil"))
def contract_shown_guards():
    """Induction: ``said`` holds exactly where every printed range of a compound dim does
    (base ``[]``; step ``said_of_range``); the kept guards with ``said`` hold exactly where
    all guards with ``said`` do, within the root ranges (base: a copy of the guards; step
    ``drop_if_implied``), a guard left out exactly when ``implied`` said it follows.  So,
    the printed ranges holding wherever the contract admits, the printed guards and ranges
    hold exactly where the contract admits (the last lemma, for every truth value)."""
    _shown_structure()
    zs = Symbols()
    _drop_step(True)
    _drop_step(False)
    _said_step(zs, False)
    _said_step(zs, True)
    _said_of_other()
    # the two inductions give kept & said & r == all & said & r and said == printed;
    # the printed ranges hold wherever the contract admits: kept & printed & r == all & r
    kept, every_guard, said, printed, r = z3.Bools("kept all said printed in_ranges")
    prove(z3.Implies(z3.And(z3.And(kept, said, r) == z3.And(every_guard, said, r),
                            said == printed, z3.Implies(z3.And(every_guard, r), printed)),
                     z3.And(kept, printed, r) == z3.And(every_guard, r)))


# ---------------------------------------------------------------------------- exact range
SYMBOL = z3.DeclareSort("Symbol")


class ZSet:
    """A set of symbols, any set (a Z3 set over an uninterpreted sort: any number of
    symbols): ``&`` and ``|`` as Z3's; a truth test (non-empty) branches."""

    def __init__(self, a, ex: Explorer) -> None:
        self.a, self.ex = a, ex

    def __and__(self, o):
        return ZSet(z3.SetIntersect(self.a, o.a), self.ex)

    def __or__(self, o):
        return ZSet(z3.SetUnion(self.a, o.a), self.ex)

    def __bool__(self) -> bool:
        return self.ex.branch(self.a != z3.EmptySet(SYMBOL))


def _zset(name: str):
    return z3.Const(name, z3.SetSort(SYMBOL))


class Listed:
    """A list of guards as ``absorb_connected`` reads it: through ``in`` (whether the
    guard is among them: a free Boolean, so any list) and ``+`` (recorded)."""

    def __init__(self, ex: Explorer, head=None, tail=None) -> None:
        self.ex, self.head, self.tail = ex, head, tail

    def __contains__(self, f) -> bool:
        return self.ex.branch(z3.Bool("listed"))

    def __add__(self, more):
        return Listed(self.ex, self, more)


class Taken:
    """A guard as ``absorb_connected`` reads it: by ``in`` and through its free symbols
    (any set)."""

    def __init__(self, ex: Explorer) -> None:
        self.ex, self.mentions = ex, _zset("mentions")

    @property
    def free_symbols(self) -> ZSet:
        return ZSet(self.mentions, self.ex)


def _exact_structure() -> None:
    """``exact_range(cs, e)`` is ``projection.project(e, connected_facts(cs, e),
    cs.ranges)``, and ``connected_facts`` folds ``absorb_connected`` over ``cs.facts``
    from ``([], e's symbols, False)``, then again from each pass's guards and symbols
    while a pass took one, and returns the guards of the first pass that took none."""
    from symshape.contract import exact_ranges
    from symshape.reasoning import projection
    cs = type("Contract", (), {})()
    cs.facts, cs.ranges = [Guard("g0")], object()
    e = S.expr + T.expr
    real_project, real_connected = projection.project, exact_ranges.connected_facts
    handed: list = []
    projection.project = lambda *a, **k: handed.append(a) or "the projection"
    exact_ranges.connected_facts = lambda c, x: ("connected", c, x)
    try:
        got = exact_ranges.exact_range(cs, e)
    finally:
        projection.project, exact_ranges.connected_facts = real_project, real_connected
    require(got == "the projection" and handed == [(e, ("connected", cs, e), cs.ranges)],
            "exact_range is not the projection of its connected guards: %s", handed)
    passes = [(["first"], {"s"}, True), (["second"], {"t"}, False)]
    calls, out = captured_folds(exact_ranges, exact_ranges.connected_facts, cs, e,
                                answers=passes)
    (s1, items1, init1), (s2, items2, init2) = calls
    require(s1 is s2 is exact_ranges.absorb_connected and items1 is items2 is cs.facts
            and init1 == ([], e.free_symbols, False)
            and init2 == (passes[0][0], passes[0][1], False) and out is passes[1][0],
            "connected_facts is not the fold of absorb_connected repeated while it grows")
    # an int has no symbols (the code reads only its type)
    calls, out = captured_folds(exact_ranges, exact_ranges.connected_facts, cs, 0,
                                answers=passes[1:])
    require(calls == [(exact_ranges.absorb_connected, cs.facts, ([], set(), False))]
            and out is passes[1][0], "connected_facts of an int: %s", calls)


def _absorb_step() -> None:
    """``absorb_connected((facts, syms, grew), f)`` for every list, every symbol set and
    every guard (its symbols any set): it takes ``f`` exactly when ``f`` is not in the list
    and shares a symbol with the set, then adds ``f`` and its symbols and says it grew;
    otherwise the state is returned unchanged."""
    from symshape.contract import exact_ranges
    ex = Explorer([])
    syms_a = _zset("syms")

    def run():
        f = Taken(ex)
        state = (Listed(ex), ZSet(syms_a, ex), False)
        return exact_ranges.absorb_connected(state, f), state, f
    paths = _all_paths(ex, run, "absorb_connected")
    listed, mentions = z3.Bool("listed"), _zset("mentions")
    takes = z3.And(z3.Not(listed), z3.SetIntersect(mentions, syms_a) != z3.EmptySet(SYMBOL))
    member = z3.Const("member", SYMBOL)
    new, cases = [], []
    for pc, (out, state, f) in paths:
        if out is state:
            cases.append((z3.And(*pc), None))
            continue
        facts, syms, grew = out
        require(grew is True and isinstance(facts, Listed) and facts.head is state[0]
                and len(facts.tail) == 1 and facts.tail[0] is f,
                "absorb_connected took a guard as %r", out)
        new.append(z3.IsMember(member, syms.a))   # for every symbol: the sets are equal
        cases.append((z3.And(*pc), len(new) - 1))
    require(new, "absorb_connected took no guard on any path")
    prove_code(lambda *v: z3.And(*[z3.Implies(on, z3.Not(takes) if i is None else
                                              z3.And(takes, v[i] == z3.IsMember(
                                                  member, z3.SetUnion(syms_a, mentions))))
                                   for on, i in cases]),
               new, what="absorb_connected")


def _exact_lemma() -> None:
    """What the two steps give, for every symbol set, point and guard: the invariant (``e``'s
    symbols and each taken guard's within the set) is kept by a step that takes ``f``; at
    the end every guard is taken or shares no symbol with the set, so a point ``near`` the
    taken guards admit, with ``e`` at a settled end, and a point ``some`` all guards admit
    mix into a point all guards admit with ``e`` at that end (each guard's truth, each
    root range and ``e`` a function of the symbols they mention: ``restrict``); and a point
    all guards admit the taken ones admit (they are among the guards)."""
    s = z3.Const("s", SYMBOL)
    syms, mentions, old, es, m_g = (_zset(n) for n in ("S", "Mf", "Mold", "E", "Mg"))
    near, some = (z3.Array(n, SYMBOL, z3.IntSort()) for n in ("near", "some"))
    held = z3.Function("held", z3.ArraySort(SYMBOL, z3.IntSort()), z3.BoolSort())
    value = z3.Function("value", z3.ArraySort(SYMBOL, z3.IntSort()), z3.IntSort())
    in_range = z3.Function("in_range", SYMBOL, z3.IntSort(), z3.BoolSort())

    def restrict(p, m):
        return z3.Lambda([s], z3.If(z3.IsMember(s, m), p[s], 0))
    grown = z3.SetUnion(syms, mentions)
    prove(z3.Implies(z3.And(z3.IsSubset(es, syms), z3.IsSubset(old, syms)),
                     z3.And(z3.IsSubset(es, grown), z3.IsSubset(old, grown),
                            z3.IsSubset(mentions, grown))))
    taken = z3.Bool("taken")
    mix = z3.Lambda([s], z3.If(z3.IsMember(s, syms), near[s], some[s]))
    closed = z3.And(z3.IsSubset(es, syms),
                    z3.Implies(taken, z3.IsSubset(m_g, syms)),
                    z3.Implies(z3.Not(taken),
                               z3.SetIntersect(m_g, syms) == z3.EmptySet(SYMBOL)))
    prove(z3.Implies(z3.And(closed, z3.Implies(taken, held(restrict(near, m_g))),
                            held(restrict(some, m_g))),
                     z3.And(held(restrict(mix, m_g)),
                            value(restrict(mix, es)) == value(restrict(near, es)))))
    prove(z3.Implies(z3.And(in_range(s, near[s]), in_range(s, some[s])),
                     in_range(s, z3.Select(mix, s))))


@proves("contract.exact_range", over=every(
    "every contract: every list of guards of any length (by induction on the fold of "
    "absorb_connected that connected_facts repeats while a pass grows, read from the code "
    "by capturing its reduce), each guard read by identity and through its free symbols "
    "(any set of symbols: a Z3 set over an uninterpreted sort, so any number of symbols; "
    "its truth any function of the symbols it mentions), every expression e (its "
    "symbols any set, its value any function of them), every root range, along every "
    "path of the step; projection.project as its specification (project.exact): every "
    "point all guards admit lies in the range, each settled end is attained by one"))
def contract_exact_range():
    """The range ``exact_range`` returns is the projection of the connected guards
    (``_exact_structure``); by induction on the passes and the step (``_absorb_step``) the
    symbol set holds ``e``'s and each taken guard's symbols, and the last pass took none,
    so every other guard shares no symbol with it; then the projection's range is exact
    for all the guards (``_exact_lemma``, for every point and guard)."""
    _exact_structure()
    _absorb_step()
    _exact_lemma()


# ---------------------------------------------------------------------------- range list
class Listing(dict):
    """The ranges listed so far, any listing: ``in`` a free Boolean (``listed``), each
    assignment recorded."""

    def __init__(self, ex: Explorer) -> None:
        super().__init__()
        self.ex, self.set = ex, []

    def __contains__(self, e) -> bool:
        return self.ex.branch(z3.Bool("listed"))

    def __setitem__(self, e, v) -> None:
        self.set.append((e, v))


def _exact_stub(module):
    """``module.exact_range`` replaced by its specification's name: a token per call."""
    real = module.exact_range
    module.exact_range = lambda cs, e: ("exact_range", cs, e)
    return real


def _listing_structure() -> None:
    """``published_ranges(cs)`` folds ``with_root_range`` over the roots in key order
    from (an empty dict, cs), then ``with_input_ranges`` over the inputs, and returns the
    dict; ``with_input_ranges`` folds ``with_dim_range`` over an array input's dims and
    passes any other input by."""
    from symshape.contract import exact_ranges as X
    cs = type("Contract", (), {})()
    first, second = E.Sym(971), E.Sym(970)
    cs.roots, cs.inputs = (lambda: [first, second]), object()
    calls, out = captured_folds(X, X.published_ranges, cs)
    (s1, items1, init1), (s2, items2, init2) = calls
    require(s1 is X.with_root_range and items1 == [second, first]
            and type(init1[0]) is dict and not init1[0] and init1[1] is cs
            and s2 is X.with_input_ranges and items2 is cs.inputs
            and isinstance(init2, Folded) and init2.index == 0 and init2.part is None
            and isinstance(out, Folded) and out.index == 1 and out.part == 0,
            "published_ranges is not the two folds over the roots and the inputs: %s", calls)
    for array in (True, False):        # every input: an array or not
        d = type("Input", (), {})()
        d.is_array, d.dims, state = array, object(), object()
        calls, out = captured_folds(X, X.with_input_ranges, state, d)
        require(calls == [(X.with_dim_range, d.dims, state)] and isinstance(out, Folded)
                if array else not calls and out is state,
                "with_input_ranges of %s input: %s", "an array" if array else "another",
                calls)


def _root_step() -> None:
    """``with_root_range((listing, cs), s)`` for every listing and root: lists ``s`` with
    ``exact_range(cs, s)``, nothing else."""
    from symshape.contract import exact_ranges as X
    out, cs = Listing(Explorer([])), type("Contract", (), {})()
    cs.ranges = {S: "the declared range"}      # what a wrong step might list instead
    state = (out, cs)
    real = _exact_stub(X)
    try:
        got = X.with_root_range(state, S)
    finally:
        X.exact_range = real
    require(got is state and out.set == [(S.expr, ("exact_range", cs, S.expr))],
            "with_root_range listed %s", out.set)


def _dim_step(form: str) -> None:
    """``with_dim_range((listing, cs), e)`` for every listing and every dim ``e``: no
    expression (an int: read only through its type), ``c1*s + k`` (a root when ``c1 ==
    1`` and ``k == 0``) or ``c1*s + c2*t + k`` (symbolic): lists ``e`` with
    ``exact_range(cs, e)`` exactly when ``e`` is compound and not listed yet."""
    from symshape.contract import exact_ranges as X
    c1, c2, k = sym_ints("c1 c2 k")
    hyps = [c1.v != 0, c2.v != 0]
    ex, cs = Explorer(hyps), object()

    def run():
        ex.P = TrackedPy()
        e = {"other": object(), "one": E.Expr({(S,): c1}, k),
             "two": E.Expr({(S,): c1, (T,): c2}, k)}[form]
        state = (Listing(ex), cs)
        return X.with_dim_range(state, e), state, e
    real = _exact_stub(X)
    try:
        paths = _all_paths(ex, run, "with_dim_range")
    finally:
        X.exact_range = real
    compound = {"other": z3.BoolVal(False), "one": z3.Not(z3.And(c1.v == 1, k.v == 0)),
                "two": z3.BoolVal(True)}[form]
    listed, cases = [], []
    for pc, (got, state, e) in paths:
        out = state[0]
        require(got is state and out.set in ([], [(e, ("exact_range", cs, e))]),
                "with_dim_range listed %s", out.set)
        listed.append(z3.BoolVal(bool(out.set)))
        cases.append(z3.And(*pc))
    prove_code(lambda *v: z3.And(*[z3.Implies(on, x == z3.And(compound,
                                                                z3.Not(z3.Bool("listed"))))
                                   for x, on in zip(v, cases)]),
               listed, hyps, what="with_dim_range of %s dim" % form)


@proves("contract.range_constraints", over=every(
    "every contract: every list of roots and of inputs of any length, every input an "
    "array or not with every list of dims (by induction on the folds published_ranges "
    "and with_input_ranges are, read from the code by capturing their reduce), every "
    "listing so far (its membership a free Boolean), each dim no expression (read only "
    "through its type), c1*s + k or c1*s + c2*t + k (symbolic: the code reads a dim "
    "only through its type, as_symbol and dict membership), along every path of each "
    "step; exact_range as its specification (contract.exact_range)"))
def contract_range_constraints():
    """``range_constraints`` lists every root and every compound dim of an array input,
    once (a dict; a dim already listed is not listed again), and nothing else, each with
    its ``exact_range`` (proven exact by ``contract.exact_range``): by induction on the
    folds, each step proven for every listing so far."""
    _listing_structure()
    _root_step()
    for form in ("other", "one", "two"):     # every kind of dim the code tells apart
        _dim_step(form)
