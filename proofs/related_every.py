"""``decision.related_facts`` for every environment: every list of facts and assumptions
(of any length, each mentioning any set of symbols) and every start set, by invariants of
the code's own loops over Z3 sets.

The function is read from the code (``read_form``: its syntax tree must be exactly the
worklist below, as must ``_index_facts``, which builds the per-symbol index, and
``ShapeEnv.fact_index``, which caches it until the knowledge changes), and each statement
is modelled as Python runs it, on sets over two uninterpreted sorts (so any number of
symbols and facts): a fact is read only by identity (dict / set membership, structural
equality) and through ``free_symbols`` (any set), the knowledge only as the list
``env.facts + env.assumptions`` (any membership).  A list is read as the set of its items
(``pop`` removes the last item, which may occur again; ``extend`` adds every item); a loop
over a list of any length is an induction on its items, each step proven for an arbitrary
item and state.

What the invariants give, at the loop's end (``todo`` empty): the facts returned (the
dict's keys, each once) are exactly the least set ``R`` of known facts closed under
sharing a symbol -- every known fact that mentions a start symbol or a symbol of a fact
of ``R`` is in ``R`` -- i.e. the facts reachable from the start symbols through shared
symbols.  Soundness: for every closed pair (``R``, ``Y``: ``Y`` holds the start symbols
and the symbols of ``R``'s facts, ``R`` every known fact meeting ``Y``) the loop keeps
``seen <= R`` and ``visited, todo <= Y``.  Completeness: it keeps the start symbols in
``visited | todo``, every symbol of a seen fact in ``visited | todo`` and every known
fact mentioning a visited symbol seen (while a symbol's index is walked: every fact
walked so far), so at the end (``seen``, ``visited``) is itself a closed pair.

Termination (not a Z3 claim): each pass pops ``todo``, which grows only when a fact
enters ``seen``, at most once for each of the finitely many facts.
"""
from __future__ import annotations

import z3

from symshape.reasoning import decision
from symshape.reasoning.env import ShapeEnv

from . import every, proves
from .contract_folds import SYMBOL
from .filters import read_form
from .pyint import prove, require

FACT = z3.DeclareSort("Fact")

_RELATED_FACTS = '''
def related_facts(env, syms):
    index = env.fact_index(lambda: INDEX_FACTS(env))
    seen: Dict[object, None] = {}
    todo = list(syms)
    visited = set()
    while todo:
        s = todo.pop()
        if s in visited:
            continue
        visited.add(s)
        for f in index.get(s, ()):
            if f not in seen:
                seen[f] = None
                todo.extend(f.free_symbols)
    return list(seen)
'''

_INDEX_FACTS = '''
def index_facts(env):
    index: Dict[object, list] = {}
    for f in env.facts + env.assumptions:
        for s in f.free_symbols:
            index.setdefault(s, []).append(f)
    return index
'''

_FACT_INDEX = '''
def fact_index(self, build):
    if self._fact_index is None:
        self._fact_index = build()
    return self._fact_index
'''

#: a fact's symbols (any set), and whether it is among env.facts + env.assumptions
MENTIONS = z3.Function("mentions", FACT, z3.SetSort(SYMBOL))
KNOWN = z3.Function("known", FACT, z3.BoolSort())


def _syms(name: str):
    return z3.Const(name, z3.SetSort(SYMBOL))


def _facts(name: str):
    return z3.Const(name, z3.SetSort(FACT))


def _has(x, a):
    return z3.IsMember(x, a)


def _read() -> None:
    """The three functions are the forms above (``INDEX_FACTS`` the module's
    ``_index_facts``); a ProofFailure when any differs."""
    got = read_form(decision.related_facts, _RELATED_FACTS)
    index_facts = got["INDEX_FACTS"]
    require(callable(index_facts), "related_facts indexes with %r", index_facts)
    read_form(index_facts, _INDEX_FACTS)
    read_form(ShapeEnv.fact_index, _FACT_INDEX)


def _index_lemma() -> None:
    """``_index_facts``: by induction on the outer loop (facts processed so far ``P``) and
    the inner one (symbols of ``f`` processed so far ``Q``), the index maps each symbol to
    the processed facts mentioning it; at the end ``index.get(s, ())`` holds exactly the
    known facts mentioning ``s`` (a missing key: none)."""
    idx = z3.Array("index", SYMBOL, z3.SetSort(FACT))
    f, g = z3.Const("f", FACT), z3.Const("g", FACT)
    x, t = z3.Const("x", SYMBOL), z3.Const("t", SYMBOL)
    done, q = _facts("P"), _syms("Q")
    holds = z3.And(_has(g, idx[x]) == z3.And(_has(g, done), _has(x, MENTIONS(g))))
    # the base: an empty dict, every key missing (get gives ())
    prove(holds, idx == z3.K(SYMBOL, z3.EmptySet(FACT)), done == z3.EmptySet(FACT),
          what="index base")
    # the inner step: setdefault(t, []).append(f) adds f to t's list (a new one if missing)
    inner = z3.And(_has(g, idx[x]) == z3.Or(
        z3.And(_has(g, done), _has(x, MENTIONS(g))),
        z3.And(g == f, _has(x, q))))
    step = z3.Store(idx, t, z3.SetAdd(idx[t], f))
    inner_after = z3.substitute(inner, (idx, step), (q, z3.SetAdd(q, t)))
    hyp = z3.ForAll([g, x], inner)
    prove(inner_after, hyp, what="index inner step")
    # the inner loop's base (Q empty) is the outer invariant; its end (Q = f's symbols)
    # is the outer invariant with P + {f}
    outer = z3.ForAll([g, x], holds)
    prove(z3.substitute(inner, (q, z3.EmptySet(SYMBOL))), outer, what="index inner base")
    prove(z3.substitute(holds, (done, z3.SetAdd(done, f))),
          z3.ForAll([g, x], z3.substitute(inner, (q, MENTIONS(f)))), what="index inner end")
    # the outer loop's end: every known fact processed
    prove(_has(g, idx[x]) == z3.And(KNOWN(g), _has(x, MENTIONS(g))),
          z3.substitute(outer, (done, z3.Lambda([f], KNOWN(f)))), what="index end")


def _sound() -> None:
    """For every closed pair (``R``, ``Y``), every pass keeps ``seen <= R`` and
    ``visited | todo <= Y``."""
    r, y, s0 = _facts("R"), _syms("Y"), _syms("S0")
    v, tq, t0, seen = _syms("V"), _syms("T"), _syms("T0"), _facts("F")
    f, g = z3.Const("f", FACT), z3.Const("g", FACT)
    s, x = z3.Const("s", SYMBOL), z3.Const("x", SYMBOL)
    closed = [z3.IsSubset(s0, y),
              z3.ForAll([g], z3.Implies(_has(g, r), z3.IsSubset(MENTIONS(g), y))),
              z3.ForAll([g, x], z3.Implies(z3.And(KNOWN(g), _has(x, MENTIONS(g)),
                                                  _has(x, y)), _has(g, r)))]

    def inv(vv, tt, ff):
        return z3.And(z3.IsSubset(ff, r), z3.IsSubset(vv, y), z3.IsSubset(tt, y))
    empty = z3.EmptySet(SYMBOL)
    prove(inv(empty, s0, z3.EmptySet(FACT)), *closed, what="sound base")
    # a pop: s from todo, the rest T0 (T - {s} <= T0 <= T); s visited now either way
    popped = [_has(s, tq), z3.IsSubset(z3.SetDel(tq, s), t0), z3.IsSubset(t0, tq)]
    prove(inv(z3.SetAdd(v, s), t0, seen), *closed, inv(v, tq, seen), *popped,
          what="sound pop")
    # a fact of s's index (known, mentioning s), s visited: seen or taken with its symbols
    walked = [_has(s, v), KNOWN(f), _has(s, MENTIONS(f))]
    prove(inv(v, z3.SetUnion(tq, MENTIONS(f)), z3.SetAdd(seen, f)), *closed,
          inv(v, tq, seen), *walked, what="sound take")


def _complete() -> None:
    """Every pass keeps the start symbols and each seen fact's symbols in ``visited |
    todo``, the seen facts known, and every known fact mentioning a visited symbol seen
    (the symbol being walked: every fact of its index walked so far); at the end
    (``todo`` empty) ``seen`` with ``visited`` is a closed pair."""
    s0, v, tq, t0, seen = _syms("S0"), _syms("V"), _syms("T"), _syms("T0"), _facts("F")
    done = _facts("P")
    f, g = z3.Const("f", FACT), z3.Const("g", FACT)
    s, x = z3.Const("s", SYMBOL), z3.Const("x", SYMBOL)

    def inv(vv, tt, ff, walking=None, walked=None):
        seen_all = z3.Implies(z3.And(KNOWN(g), _has(x, vv), _has(x, MENTIONS(g))),
                              _has(g, ff))
        if walking is not None:          # the symbol walked: its facts walked so far
            seen_all = z3.And(
                z3.Implies(z3.And(KNOWN(g), _has(x, vv), _has(x, MENTIONS(g)),
                                  x != walking), _has(g, ff)),
                z3.Implies(_has(g, walked), _has(g, ff)))
        return z3.And(z3.IsSubset(s0, z3.SetUnion(vv, tt)),
                      z3.ForAll([g], z3.Implies(_has(g, ff), z3.And(
                          KNOWN(g), z3.IsSubset(MENTIONS(g), z3.SetUnion(vv, tt))))),
                      z3.ForAll([g, x], seen_all))
    empty = z3.EmptySet(SYMBOL)
    prove(inv(empty, s0, z3.EmptySet(FACT)), what="complete base")
    popped = [_has(s, tq), z3.IsSubset(z3.SetDel(tq, s), t0), z3.IsSubset(t0, tq)]
    # a pop of a visited symbol: nothing else happens
    prove(inv(v, t0, seen), inv(v, tq, seen), _has(s, v), *popped,
          what="complete pop visited")
    # a pop of a new symbol: visited, its walk starts with nothing walked
    prove(inv(z3.SetAdd(v, s), t0, seen, s, z3.EmptySet(FACT)), inv(v, tq, seen),
          z3.Not(_has(s, v)), *popped, what="complete pop new")
    # a fact of s's index: taken with its symbols unless seen; walked either way
    index_item = [_has(s, v), KNOWN(f), _has(s, MENTIONS(f))]
    hyp = [inv(v, tq, seen, s, done), *index_item]
    prove(inv(v, z3.SetUnion(tq, MENTIONS(f)), z3.SetAdd(seen, f), s, z3.SetAdd(done, f)),
          *hyp, z3.Not(_has(f, seen)), what="complete take")
    prove(inv(v, tq, seen, s, z3.SetAdd(done, f)), *hyp, _has(f, seen),
          what="complete seen")
    # the walk's end: every fact of s's index walked (the known facts mentioning s)
    index_of_s = z3.ForAll([g], _has(g, done) == z3.And(KNOWN(g), _has(s, MENTIONS(g))))
    prove(inv(v, tq, seen), inv(v, tq, seen, s, done), _has(s, v), index_of_s,
          what="complete walk end")
    # the end: todo empty, so (seen, visited) is closed (the soundness hypotheses)
    prove(z3.And(
        z3.IsSubset(s0, v),
        z3.ForAll([g], z3.Implies(_has(g, seen), z3.IsSubset(MENTIONS(g), v))),
        z3.ForAll([g, x], z3.Implies(z3.And(KNOWN(g), _has(x, MENTIONS(g)), _has(x, v)),
                                     _has(g, seen)))), inv(v, empty, seen),
          what="complete end")


@proves("decide.related_facts", over=every(
    "every environment and start set: every list of facts and assumptions of any length, "
    "each fact read by identity and through its free symbols (any set: Z3 sets over "
    "uninterpreted sorts of symbols and facts, so any number of each), every start set of "
    "symbols; the code's worklist loop, its index (_index_facts) and cache (fact_index: "
    "cleared whenever the knowledge changes, ShapeEnv._bump) read from the code as they "
    "are, each loop by an invariant proven for an arbitrary "
    "item and state: the result is exactly the facts reachable from the start symbols "
    "through shared symbols, each once"))
def decide_related_facts():
    """``related_facts`` returns each fact once (a dict's keys) and exactly the least set
    of known facts closed under sharing a symbol with the start symbols or a taken fact,
    for every environment and start set (the invariants above)."""
    _read()
    _index_lemma()
    _sound()
    _complete()
    from .code import STATS
    STATS["code_claims"] += 1          # the claims are on the code read just above
