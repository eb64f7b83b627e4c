"""The decision procedure: is a relation over sizes implied by what the environment knows?

What is decided.  A condition ``c`` is a relation ``e <op> 0`` (``op`` one of ``==``,
``!=``, ``<=``; ``relations.make`` normalises ``<``, ``>=``, ``>`` to these) or an
``and`` / ``or`` of such, where ``e`` is an integer polynomial over symbols and
``Min`` / ``Max`` / ``//`` / ``%`` atoms.  The knowledge ``K`` is: each root symbol ``s`` lies
in its range ``[l_s, h_s]`` (ends may be infinite); each replaced symbol equals its
replacement; the recorded facts (relations over the roots, each true at the example
values) hold; and the assumptions (relations over input sizes that hold wherever the checks
on data-dependent sizes have passed) hold.  ``decide(env, c)`` returns ``True`` when ``K``
implies ``c``, ``False`` when ``K`` implies ``not c``, and ``None`` when neither is shown
(the caller then asks the example values and records a guard).

The steps, cheapest first; each one is sound (it never answers True/False wrongly):

1. Substitution (``subst_cond``): replacements applied, ``Min`` / ``Max`` / ``//`` / ``%``
   folded by the ranges (``symshape/algebra/simplify.py``) and a factor common to every term with
   a positive range stripped (``b*e <op> 0  <=>  e <op> 0`` for ``b >= 1``).  A relation that
   becomes a constant is decided.
2. Interval arithmetic (``decide_ranges``): ``bound(e) = [lo, hi]`` from the ranges by the
   transfer functions of ``symshape/algebra/ranges.py``; ``hi <= 0`` decides ``e <= 0``, ``lo > 0``
   its negation; ``lo == hi == 0`` decides ``e == 0``; ``0`` outside ``[lo, hi]`` decides
   ``e != 0``.  ``and`` / ``or`` combine three-valued.
3. Syntactic facts (``decide_facts``): ``c`` or its negation among the facts / assumptions.
4. Completeness short cut (``box_exact``): with no related fact, a linear ``e <= 0`` in
   which each symbol occurs once attains both ends of its interval at corners of the box
   of ranges, so when step 2 left it open it is undecidable for real: ``None`` without a
   solver call.  For ``==`` / ``!=`` this holds only with unit coefficients (every integer of
   the interval is attained; ``2*s0 + 3*s1 == 11`` over ``s0, s1 >= 2`` is not).
5. Sums of facts (``decide_by_fact_sums``): for related facts ``f_i <= 0`` (an equality
   ``f == 0`` gives ``f <= 0`` and ``-f <= 0``), ``e = (e - f_1 - ... - f_k) + f_1 + ... +
   f_k``, so an interval upper end ``<= 0`` of ``e - f_1 - ... - f_k`` (``k <= 2``) proves
   ``e <= 0``; ``1 - e`` proves ``not e <= 0``.  ``a >= b + 2 => a >= b`` and the chain
   ``a <= b, b <= c => a <= c`` are decided here without a solver call.
6. A witness (``witnessed_undecidable``): a base point satisfies ``K`` (the example values;
   without them, as in ``symbolic_shape``, a point of the constraints found when they were
   checked for satisfiability, or the lower ends of the ranges, each verified against the
   ranges and the related facts); moving one symbol of ``c`` to a nearby point that still
   satisfies the ranges and the related facts and flips ``c`` proves neither ``c`` nor
   ``not c`` is implied: ``None``.
7. Z3 (``z3bridge.implies``): the related facts (those connected to ``c``'s symbols through
   shared symbols, ``related_facts``), the ranges and the exact encoding of ``//``, ``%``,
   ``Min``, ``Max`` as integer arithmetic; ``K => c`` and ``K => not c`` asked in turn.

What is complete and what is not.  Linear relations without facts are decided completely
by steps 2 and 4 (a box is a product of intervals).  With facts, step 7 is complete for
linear integer arithmetic (Presburger, which Z3 decides) when ``//`` and ``%`` have
constant divisors; with non-linear terms (products of symbols, symbolic divisors) Z3 may
answer unknown or exhaust its resource budget, and then ``decide`` returns ``None``: the
example values decide and a guard is recorded, which is sound (the contract then holds
exactly the guarded region) but may be narrower than the truth.  Interval arithmetic alone
is incomplete for non-linear terms and for symbols occurring more than once (``s - s``),
which is why steps 3 to 7 exist; steps 5 and 6 only save solver calls (a decided query in
``symbolic_shape`` takes tens of microseconds instead of milliseconds).
"""
from __future__ import annotations

from typing import Dict, Optional

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.algebra import simplify as _simplify
from symshape.algebra.infinity import is_inf
from symshape.algebra.ranges import bound
from symshape.algebra.expr import evaluate
from symshape.rules import rule
from symshape.reasoning.z3bridge import implies


def subst_cond(env, c):
    """``c`` under the replacements, folded by the ranges (step 1)."""
    if type(c) is bool:
        return c
    if isinstance(c, R.Rel):
        e = _simplify.strip_positive_factors(env, env.simplify(c.expr))
        return c if e is c.expr else R.make(c.op, e)
    return R.combine(c.op, [subst_cond(env, a) for a in c.args])


@rule("decide.sound")
def decide(env, c) -> Optional[bool]:
    """Steps 1-7: the answer when the known facts settle it, else None."""
    c = subst_cond(env, c)
    if type(c) is bool:
        return c
    return env.memo("decide", c, _decide_now, env, c)


def _decide_now(env, c) -> Optional[bool]:
    ans = decide_ranges(env, c)
    return decide_facts(env, c) if ans is None else ans


@rule("decide.by_range")
def decide_ranges(env, c) -> Optional[bool]:
    """Step 2: interval arithmetic over the ranges, three-valued over ``and`` / ``or``."""
    if isinstance(c, R.BoolOp):
        vals = [decide_ranges(env, a) for a in c.args]
        if c.op == "and":
            return False if False in vals else (True if all(v is True for v in vals) else None)
        return True if True in vals else (False if all(v is False for v in vals) else None)
    b = env.memo("bound", c.expr, bound, c.expr, env.ranges.__getitem__)
    if c.op == R.LE:
        return True if b.upper <= 0 else (False if b.lower > 0 else None)
    known = True if (b.lower == 0 == b.upper) else (False if not (b.lower <= 0 <= b.upper)
                                                    else None)
    if known is None:
        return None
    return known if c.op == R.EQ else not known


def decide_facts(env, c) -> Optional[bool]:
    """Steps 3-7 for a relation the ranges left open."""
    if not env.facts and not env.assumptions:
        related = []
    else:
        if c in env.facts or c in env.assumptions:
            return True
        neg = R.negate(c)
        if neg in env.facts or neg in env.assumptions:
            return False
        related = related_facts(env, c.free_symbols)
    if not related and box_exact(c):
        return None          # ranges are the whole truth here: undecidable for real
    if related:
        ans = decide_by_fact_sums(env, c, related)
        if ans is not None:
            return ans
    if witnessed_undecidable(env, c, related):
        return None
    env.z3_queries += 1
    return implies(related, c, env.ranges)   # None past the budget: a guard decides


def _index_facts(env) -> Dict[object, list]:
    """The facts and assumptions by each symbol they mention."""
    index: Dict[object, list] = {}
    for f in env.facts + env.assumptions:
        for s in f.free_symbols:
            index.setdefault(s, []).append(f)
    return index


@rule("decide.related_facts")
def related_facts(env, syms) -> list:
    """Every fact (and assumption) connected to ``syms`` through shared symbols (not only
    one hop: ``a <= b`` and ``b <= c`` both matter to ``a <= c``), via the per-symbol
    index."""
    index = env.fact_index(lambda: _index_facts(env))
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


#: at most this many ``<= 0`` forms of related facts are summed pairwise (step 5)
FACT_SUM_LIMIT = 10


@rule("decide.fact_sum")
def decide_by_fact_sums(env, c, related) -> Optional[bool]:
    """Step 5: ``c`` (or its negation) as a related fact, or a sum of two, plus a remainder
    whose interval is ``<= 0``.  Sound for any facts (the interval bound is); complete only
    for what a sum of at most two facts shows, so ``None`` goes on to the later steps."""
    if not isinstance(c, R.Rel):
        return None
    les = le_forms_of(related)
    if not les or len(les) > FACT_SUM_LIMIT:
        return None
    e = c.expr
    if c.op == R.LE:
        if sum_proves(env, e, les):
            return True
        return False if sum_proves(env, E.sub(1, e), les) else None
    if sum_proves(env, e, les) and sum_proves(env, E.neg(e), les):
        known = True
    elif sum_proves(env, E.add(e, 1), les) or sum_proves(env, E.sub(1, e), les):
        known = False
    else:
        return None
    return known if c.op == R.EQ else not known


# le_forms_of and sum_proves are each exactly a form over a list, one item (or pair) at a
# time (and nothing else): proofs/filters.py reads that from this code, so decide.fact_sum
# holds for every list of facts.
def le_forms_of(facts: list) -> list:
    """The ``<= 0`` forms of ``facts``, fact by fact (``le_forms``)."""
    return [x for f in facts for x in le_forms(f)]


def le_forms(f) -> list:
    """The ``<= 0`` forms of fact ``f``: ``f <= 0`` gives ``f``, ``f == 0`` gives ``f`` and
    ``-f``, any other fact (``!=``, an and / or) none."""
    if isinstance(f, R.Rel):
        if f.op == R.LE:
            return [f.expr]
        if f.op == R.EQ:
            return [f.expr, E.neg(f.expr)]
    return []


def sum_proves(env, g, les) -> bool:
    """``g <= 0`` follows from facts ``f_i <= 0``: ``g - f_i`` (or ``g - f_i - f_j``) has an
    interval upper end ``<= 0`` on the ranges."""
    rng = env.ranges.__getitem__
    rests = [E.sub(g, f) for f in les]
    return any(bound(r, rng).upper <= 0 for r in rests) or \
        any(bound(E.sub(r, f), rng).upper <= 0
            for i, r in enumerate(rests) for f in les[i + 1:])


def _base_points(env, c, related) -> list:
    """Points satisfying ``K`` on the symbols of ``c`` and ``related``: the example values;
    without them (as in ``symbolic_shape``) the environment's recorded point of its
    constraints and the lower corner of the ranges, each kept only if it satisfies the
    ranges and the related facts."""
    syms = set(c.free_symbols)
    for f in related:
        syms |= f.free_symbols
    hints = {t: env.infos[t].hint for t in syms}
    if all(h is not None for h in hints.values()):
        return [hints]
    out = []
    known = getattr(env, "example_point", None) or {}
    for pick in (known.get, lambda t: None):
        point = {}
        for t in syms:
            h = hints[t]
            if h is None:
                h = pick(t)
            if h is None:
                h = env.ranges[t].lower
            point[t] = h
        if point in out or any(is_inf(v) or v not in env.ranges[t] for t, v in point.items()):
            continue
        try:
            if all(holds(f, point) for f in related):
                out.append(point)
        except ZeroDivisionError:
            continue
    return out


def witnessed_undecidable(env, c, related) -> bool:
    """Step 6: a base point satisfies every fact; if moving one symbol to a nearby
    point that still satisfies the ranges and the related facts flips ``c``, then neither
    ``c`` nor its negation is implied."""
    return any(_flips(env, c, related, point) for point in _base_points(env, c, related))


def _flips(env, c, related, point) -> bool:
    try:
        base = holds(c, point)
    except ZeroDivisionError:
        return False
    for t in c.free_symbols:
        vr = env.ranges[t]
        h = point[t]
        for v in (h + 1, h - 1, 2 * h, vr.lower, vr.lower + 1, vr.upper):
            if is_inf(v) or v == h or v not in vr:
                continue
            trial = dict(point)
            trial[t] = v
            try:
                if holds(c, trial) != base and all(holds(f, trial) for f in related):
                    return True
            except ZeroDivisionError:
                continue
    return False


@rule("decide.box_exact")
def box_exact(c) -> bool:
    """Step 4: interval evaluation decides a linear ``<=`` exactly when each symbol
    appears once.  For ``==`` / ``!=`` the interval may contain 0 while no integer point
    hits it (2*s0 + 3*s1 == 11 with s0, s1 >= 2), so only unit coefficients qualify."""
    if not isinstance(c, R.Rel) or not c.expr.is_linear():
        return False
    return c.op == R.LE or all(abs(k) == 1 for _, k in c.expr.terms)


def holds(c, point) -> bool:
    """``c`` at a point (every symbol given a value)."""
    if isinstance(c, R.BoolOp):
        vals = [holds(a, point) for a in c.args]
        return all(vals) if c.op == "and" else any(vals)
    return c.holds(evaluate(c.expr, point))
