"""The solver: what the environment learns from a guard.

A guard is a condition true at the example values that the program's contract keeps (or,
for a check on a data-dependent size, that run-time code checks).  ``learn`` turns it into
the cheapest knowledge that keeps exactly its solutions, by the first step that applies:

* an ``and`` is learnt part by part; an ``or`` is kept as a fact;
* ``Min(.., y, ..) == y`` is ``y <=`` every other argument (``minmax_equal``);
* an equation becomes a replacement (``solve_eq``): a unit-coefficient symbol is
  substituted (``solve_unit``: ``s4 -> s2 + 1``), a congruence gets a quotient symbol
  (``solve_congruence``: ``s0 % 4 == 2`` gives ``s0 -> 4*s5 + 2``), a product of split
  factors is matched pairwise (``solve_factor_pairs``), two coprime coefficients are
  parametrised (``solve_two_var``);
* a one-symbol ``<=`` / ``!=`` narrows that symbol's range (``le_to_range``,
  ``ne_to_range``); a one-symbol condition on its residues is split case by case
  (``split_residues``);
* anything else is kept as a fact; the ranges are then tightened to the exact projection
  of the facts (``tighten``), and facts the ranges imply are dropped.

Each replacement keeps the replaced symbol's range (``constrain``) and rewrites the facts
(``refresh_facts``).  A check on a data-dependent size is learnt by
``learn_data_dependent``: it never replaces, narrows or adds facts about input sizes.

Every step is a rule of ``symshape/rules.py`` (the tag on its function names it) with a Z3
proof in ``proofs/``.  The functions take the ``ShapeEnv`` as their first argument.
"""
from __future__ import annotations

import logging
import math
from functools import reduce
from typing import Dict, List, Optional

from symshape.algebra import relations as R
from symshape.reasoning.decision import decide_ranges, box_exact
from symshape.errors import InternalError, UserError, where
from symshape.algebra.expr import (Expr, IntLike, OpAtom, Sym, add, atom_expr, ceildiv, floordiv, mod, mul,
                   scale, subs)
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.logs import dynamic_log
from symshape.algebra.ranges import ValueRange, bound
from symshape.rules import rule
from symshape.reasoning.z3bridge import Budget, implies

# Which symbol an equation eliminates first: the freest kind, then the latest allocated.
ELIMINATE_FIRST = {"unbacked": 4, "intermediate": 3, "quotient": 2, "auto": 2, "dynamic": 2,
                   "named": 1}


@rule("solve.dispatch")
def learn(env, c) -> None:
    """Learn from a guard ``c`` (true at the example values): the first step that
    applies, else keep ``c`` as a fact."""
    c = env.subst_cond(c)
    if type(c) is bool:
        if not c:
            raise InternalError("a guard contradicts earlier guards")
        return
    if isinstance(c, R.BoolOp):
        if c.op == "and":
            for a in c.args:
                learn(env, a)
        else:
            add_fact(env, c)
        return
    e = c.expr
    if c.op == R.EQ:
        plain = minmax_equal(e)
        if plain is not None:                   # Min(x, n) == n is n <= x
            learn(env, plain)
            return
        if solve_eq(env, e):
            return
    else:
        lin = e.linear_coeffs()
        if lin is not None and len(lin) == 1:
            (s, a), = lin.items()
            if c.op == R.LE:
                refine(env, s, le_to_range(a, e.const))
                return
            narrowed = ne_to_range(a, e.const, env.ranges[s])
            if narrowed is not None:
                refine(env, s, narrowed)
                return
    if split_residues(env, c):
        return
    add_fact(env, c)


@rule("solve.le_to_range")
def le_to_range(a: int, k: int) -> ValueRange:
    """The values of ``s`` with ``a*s + k <= 0``."""
    if a > 0:
        return ValueRange(NEG_INT_OO, (-k) // a)
    return ValueRange(ceildiv(k, -a), INT_OO)


@rule("solve.ne_to_range")
def ne_to_range(a: int, k: int, r: ValueRange) -> Optional[ValueRange]:
    """``s`` in ``r`` with ``a*s + k != 0`` (``a`` = +-1 after normalising, so the excluded
    value is ``-k // a``): the narrower range when it is an end of ``r``, else None."""
    v = -k // a
    if v == r.lower:
        return ValueRange(v + 1, r.upper)
    if v == r.upper:
        return ValueRange(r.lower, v - 1)
    return None


def learn_data_dependent(env, c) -> None:
    """Learn from a check on a data-dependent size: it holds only where the program
    has computed that size and checked it (in a ``cond`` branch: only when the branch
    runs), so it never becomes a replacement, a narrower range or a fact of an input
    size.  An equality with a unit coefficient on a data-dependent size replaces that
    size (``u0 -> s0 - 3``; what the replacement implies about the inputs, ``s0 >= 3``,
    is kept as an assumption); a one-symbol bound narrows it; anything else (``u0 % 2
    == 0``, ``2*u0 + 3*s0 == 34``) stays a fact that mentions it."""
    c = env.subst_cond(c)
    if type(c) is bool:
        if not c:
            raise InternalError("a check contradicts earlier checks")
        return
    if not any(s.unbacked for s in c.free_symbols):
        assume(env, c)
        return
    if isinstance(c, R.BoolOp):
        if c.op == "and":
            for a in c.args:
                learn_data_dependent(env, a)
        else:
            add_fact(env, c)
        return
    e = c.expr
    lin = e.linear_coeffs()
    if c.op == R.EQ:
        plain = minmax_equal(e)
        if plain is not None:
            learn_data_dependent(env, plain)
            return
        if solve_unit(env, e, data_dependent=True):
            return
    elif lin is not None and len(lin) == 1:
        learn(env, c)                     # a bound on the size alone
        return
    add_fact(env, c)


def assume(env, c) -> None:
    """``c`` (over input sizes only) holds wherever the checks made so far on
    data-dependent sizes have passed."""
    if decide_ranges(env, c) is True:
        return
    env.record_assumption(c)


@rule("solve.residue_split")
def split_residues(env, c) -> bool:
    """A condition on one size ``s`` that divides it by constants (``Mod(3*m,
    2*(m//2)) == 0`` from reshaping by ``m // 2``) decided case by case: with ``K`` the
    lcm of the divisors, ``s == K*q + r`` for each residue ``r``; when the engine
    decides every case and exactly one holds, the condition is ``s % K == r`` (a
    multiple ``m = 2*_m`` a Dim can say); when all hold, it says nothing."""
    syms = c.free_symbols
    if len(syms) != 1:
        return False
    (s,) = syms
    if s.unbacked:
        return False
    k_all = 1
    for k in constant_divisors(c.expr, s):
        k_all = k_all * k // math.gcd(k_all, k)
    if k_all == 1 or k_all > 16:
        return False
    verdicts = residue_verdicts(env, c, s, k_all)
    if verdicts is None:
        return False                              # a case left undecided
    holds = [r for r, d in enumerate(verdicts) if d is True]
    present = [r for r, d in enumerate(verdicts) if d is not ABSENT]
    return residue_outcome(env, s, k_all, holds, present)


#: the verdict of a residue case no value of the symbol has (its range holds none)
ABSENT = "absent"


# residue_verdicts is exactly a loop over the residues, one case at a time (and nothing
# else): proofs/residue_every.py reads that from this code, so solve.residue_split holds for
# every lcm the code splits.
def residue_verdicts(env, c, s: Sym, k: int):
    """``decide``'s verdict on ``c`` in each residue case of ``s`` modulo ``k``, in order
    (``residue_case``); None as soon as one case is undecided."""
    verdicts = []
    for r in range(k):
        d = residue_case(env, c, s, k, r)
        if d is None:
            return None
        verdicts.append(d)
    return verdicts


def residue_case(env, c, s: Sym, k: int, r: int):
    """``decide``'s verdict on ``c`` where ``s == k*q + r``, ``q`` in the range that keeps
    ``s`` in its own (the case alone: q's range, no facts); ``ABSENT`` when no value of ``s``
    in its range has residue ``r``."""
    vr = env.ranges[s]
    lo = ceildiv(vr.lower - r, k) if not is_inf(vr.lower) else NEG_INT_OO
    hi = (vr.upper - r) // k if not is_inf(vr.upper) else INT_OO
    if lo > hi:
        return ABSENT                             # no value of s has this residue
    case = type(env)()
    q = case.create_symbol(lo if not is_inf(lo) else (hi if not is_inf(hi) else 0),
                           "q", ValueRange(lo, hi), kind="intermediate")
    return case.decide(subst_cond_value(c, s, add(scale(q.expr, k), r)))


def residue_outcome(env, s: Sym, k: int, holds: list, present: list) -> bool:
    """What the decided cases say: ``c`` true in every case a value has (``holds`` is
    ``present``): True, nothing learnt; true in one case ``r`` alone: ``s % k == r`` is
    learnt; else nothing (False)."""
    if holds and len(holds) == len(present):
        return True                               # true for every s in its range
    if len(holds) != 1:
        return False
    learn(env, R.make(R.EQ, add(mod(s.expr, k), -holds[0])))
    return True


def add_fact(env, c) -> None:
    """Keep ``c`` as a fact (and tighten the ranges it bounds)."""
    if env.record_fact(c):
        tighten(env)


def tighten(env) -> None:
    """Make every root symbol's range the exact projection of the facts (the
    contract's ranges are then attained), and drop the facts the ranges now imply
    (``(n + 1) // 2 >= 2`` becomes ``n >= 3``; ``n // 100 == 30`` becomes
    ``[3000, 3099]``).  Data-dependent facts hold by construction and teach nothing
    about the inputs, so they are left out."""
    with env.tightening() as first:
        if not first:
            return
        for _ in range(4):                        # changes feed back; a few rounds
            if not tighten_once(env):
                break
        drop_implied_facts(env)


def backed_facts(env) -> list:
    """The facts over input sizes only: the ones the contract holds."""
    return [f for f in env.facts if not any(s.unbacked for s in f.free_symbols)]


def tighten_once(env) -> bool:
    """One round of projecting each group of related facts onto its symbols."""
    from symshape.reasoning.projection import project  # looked up per call: tests replace it
    changed = False
    for comp in components(backed_facts(env)):
        syms = sorted({s for f in comp for s in f.free_symbols}, key=lambda s: s.key)
        key = (tuple(comp), tuple(env.ranges[s] for s in syms))
        got = env.memo("project", key, lambda: {
            s: project(s.expr, comp, env.ranges) for s in syms})
        for s, vr in got.items():
            if s in env.replacements or s not in env.ranges:
                continue
            old = env.ranges[s]
            if vr.lower > old.lower or vr.upper < old.upper:
                refine(env, s, vr)
                changed = True
    return changed


# A filter of the facts, one fact at a time by implied_fact (and nothing else):
# proofs/filters.py reads that from this code, so project.drop_implied holds for every list.
@rule("project.drop_implied")
def drop_implied_facts(env) -> None:
    """Facts that the ranges alone imply say nothing more: they leave the contract."""
    keep = [f for f in env.facts if not implied_fact(env, f)]
    if len(keep) != len(env.facts):
        env.keep_facts(keep)


def implied_fact(env, f) -> bool:
    """The ranges alone imply fact ``f`` (one over a data-dependent size always stays: its
    symbol's range is no input's); remembered per fact and the ranges of its symbols."""
    if any(s.unbacked for s in f.free_symbols):
        return False
    key = (f, tuple(env.ranges.get(s) for s in sorted(f.free_symbols,
                                                      key=lambda s: s.key)))
    return env.memo("implied", key, implied_by_ranges, env, f) is True


def implied_by_ranges(env, f) -> Optional[bool]:
    """Whether the ranges alone decide fact ``f`` (None: they do not)."""
    got = decide_ranges(env, f)
    if got is None and not box_exact(f):
        got = implies([], f, env.ranges, Budget())
    return got


def refine(env, s: Sym, vr: ValueRange) -> None:
    """Narrow the range of ``s`` to its intersection with ``vr``; a single value
    becomes a replacement."""
    old = env.ranges[s]
    new = ValueRange(max(old.lower, vr.lower), min(old.upper, vr.upper)) \
        if max(old.lower, vr.lower) <= min(old.upper, vr.upper) else None
    if new is None:
        raise InternalError("range of %s became empty" % s.name)
    if new == old:
        return
    env.set_range(s, new)
    if new.is_singleton:
        replace(env, s, new.lower)
    else:
        refresh_facts(env)


def solve_eq(env, e: Expr) -> bool:
    """Turn ``e == 0`` into a replacement when it has a clean solution: the first of the
    solver's steps that applies."""
    return solve_unit(env, e) or solve_congruence(env, e) or solve_factor_pairs(env, e) or \
        solve_two_var(env, e)


@rule("solve.unit_substitution")
def solve_unit(env, e: Expr, data_dependent: bool = False) -> bool:
    """``c*s + R == 0`` with ``c`` = +-1 and ``R`` free of ``s``: ``s -> -c*R``, for the
    freest such symbol (``data_dependent``: only a data-dependent size is replaced)."""
    candidates = []
    for term, c in e.terms:
        if len(term) == 1 and type(term[0]) is Sym and c in (1, -1) and \
                (term[0].unbacked or not data_dependent):
            s = term[0]
            rest = add(e, scale(s.expr, -c))
            if type(rest) is int or s not in rest.free_symbols:
                info = env.infos[s]
                # freest kind first; then the largest example (s0 -> s2 + 2 rather
                # than s2 -> s0 - 2); then the latest allocated (the later axis)
                hint = info.hint if info.hint is not None else float("inf")
                candidates.append(((ELIMINATE_FIRST.get(info.kind, 2), hint, s.index),
                                   s, c, rest))
    if candidates:
        candidates.sort(key=lambda t: t[0], reverse=True)
        _, s, c, rest = candidates[0]
        replace(env, s, scale(rest, -c))          # c*s + rest == 0  =>  s = -rest/c
        return True
    return False


@rule("solve.factor_pairs")
def solve_factor_pairs(env, e: Expr) -> bool:
    """``C*x1*x2 == K*C*(x1//k1)*(x2//k2)`` with ``K = k1*k2`` (a reshape that splits
    several axes by constant factors): as ``0 <= k*(x//k) <= x`` for ``x >= 0``, the
    products are equal exactly when each factor is, so with every ``x_i`` and the
    common factors ``C`` at least 1 it is ``x1 % k1 == 0 and x2 % k2 == 0``, matched
    pairwise (``dh = 2*_dh``, ``dw = 2*_dw``) rather than one relation no Dim can say."""
    if e.const or len(e.terms) != 2:
        return False
    (t1, c1), (t2, c2) = e.terms
    if c1 * c2 >= 0:
        return False
    for (ta, ca), (tb, cb) in (((t1, c1), (t2, c2)), ((t2, c2), (t1, c1))):
        rest = list(ta)
        pairs, other = [], []
        for atom in tb:
            if type(atom) is OpAtom and atom.kind == "FloorDiv" and \
                    type(atom.args[1]) is int and atom.args[1] > 0 and \
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
        if any(env.bound(atom_expr(a)).lower < 1 for a in rest) or \
                any(env.bound(x).lower < 1 for x, _ in pairs):
            continue
        for x, k in pairs:
            learn(env, R.make(R.EQ, mod(x, k)))
        return True
    return False


@rule("solve.congruence")
def solve_congruence(env, e: Expr) -> bool:
    """``Mod(s, k) == r`` (as ``Mod(s, k) - r == 0``): s -> k*q + r with a new q."""
    if len(e.terms) != 1:
        return False
    (term, c), = e.terms
    if c != 1 or len(term) != 1 or type(term[0]) is not OpAtom or term[0].kind != "Mod":
        return False
    x, k = term[0].args
    r = -e.const
    s = x.as_symbol() if type(x) is Expr else None
    if s is None or type(k) is not int or not 0 <= r < k:
        return False
    info = env.infos[s]
    vr = env.ranges[s]
    lo = ceildiv(vr.lower - r, k) if not is_inf(vr.lower) else vr.lower
    hi = (vr.upper - r) // k if not is_inf(vr.upper) else vr.upper
    q = env.create_symbol(None if info.hint is None else (info.hint - r) // k,
                           "(%s - %d)//%d" % (info.source, r, k) if r else
                           "%s//%d" % (info.source, k),
                           ValueRange(lo, hi), kind="quotient" if info.kind != "unbacked"
                           else "unbacked", frame=info.frame)
    env.set_parent(q, s)
    replace(env, s, add(scale(q.expr, k), r))
    return True


@rule("solve.two_var")
def solve_two_var(env, e: Expr) -> bool:
    """``a*x + b*y + c == 0`` with coprime |a|, |b| > 1: x = |b|*k + rx, y = ... ."""
    lin = e.linear_coeffs()
    if lin is None or len(lin) != 2:
        return False
    (x, a), (y, b) = sorted(lin.items(), key=lambda kv: kv[0].index)
    hx = env.infos[x].hint
    if hx is None:
        return False
    m = abs(b)
    rx = hx % m
    info = env.infos[x]
    vr = env.ranges[x]               # x = m*k + rx in x's range
    lo = ceildiv(vr.lower - rx, m) if not is_inf(vr.lower) else NEG_INT_OO
    hi = (vr.upper - rx) // m if not is_inf(vr.upper) else INT_OO
    k = env.create_symbol(hx // m, "%s//%d" % (info.source, m), ValueRange(lo, hi),
                           kind="quotient", frame=info.frame)
    env.set_parent(k, x)
    x_val = add(scale(k.expr, m), rx)
    y_val = floordiv(add(scale(x_val, -a), -e.const), b)   # exact by construction
    replace(env, x, x_val)
    replace(env, y, y_val)
    return True


@rule("solve.replacement_range")
def replace(env, s: Sym, value: IntLike) -> None:
    """Record ``s -> value`` (value over root symbols), keeping every invariant."""
    value = env.simplify(value)
    if type(value) is Expr and s in value.free_symbols:
        raise InternalError("cyclic replacement %s -> %s" % (s.name, value))
    hint = env.infos[s].hint
    if hint is not None:
        got = env.hint_of(value)
        if got is not None and got != hint:
            raise InternalError("replacement %s -> %s breaks the example value %s"
                                % (s.name, value, hint))
    old_range = env.ranges[s]
    env.set_replacement(s, value)
    if dynamic_log.isEnabledFor(logging.DEBUG):
        dynamic_log.debug("set_replacement %s = %s", s.name, value)
    # the value must stay inside the range the replaced symbol had
    if s.unbacked and learning_data_dependent(env):
        constrain_data_dependent(env, value, old_range)
    else:
        constrain(env, value, old_range)
    refresh_facts(env)


def learning_data_dependent(env) -> bool:
    """Whether the guard being learnt is a check on a data-dependent size."""
    guard = env.learning()
    return guard is not None and guard.data_dependent


def constrain_data_dependent(env, value: IntLike, vr: ValueRange) -> None:
    """``value`` replaced a data-dependent size whose range was ``vr``: a bound on one
    data-dependent size narrows it; over input sizes only, it is an assumption; else a
    fact that mentions a data-dependent size."""
    conds = []
    if not is_inf(vr.lower):
        conds.append(R.ge(value, vr.lower))
    if not is_inf(vr.upper):
        conds.append(R.le(value, vr.upper))
    for c in conds:
        if type(c) is bool:
            if not c:
                raise InternalError("replacement value %s outside %s" % (value, vr))
            continue
        if not any(t.unbacked for t in c.free_symbols):
            assume(env, c)
        elif decide_ranges(env, c) is not True:
            lin = c.expr.linear_coeffs()
            if lin is not None and len(lin) == 1:
                learn(env, c)
            else:
                add_fact(env, c)


@rule("solve.constrain_linear")
def constrain(env, value: IntLike, vr: ValueRange) -> None:
    """``value`` replaced a symbol whose range was ``vr``: keep ``value`` inside ``vr``
    (a one-symbol linear value narrows that symbol, anything else becomes facts)."""
    if type(value) is int:
        if value not in vr:
            raise InternalError("replacement value %s outside %s" % (value, vr))
        return
    b = bound(value, env.ranges.__getitem__)
    if b.issubset(vr):
        return
    lin = value.linear_coeffs()
    if lin is not None and len(lin) == 1:
        (t, a), = lin.items()
        k = value.const              # a*t + k in [lo, hi]
        lo, hi = vr.lower, vr.upper
        if a > 0:
            tlo = ceildiv(lo - k, a) if not is_inf(lo) else NEG_INT_OO
            thi = (hi - k) // a if not is_inf(hi) else INT_OO
        else:
            tlo = ceildiv(k - hi, -a) if not is_inf(hi) else NEG_INT_OO
            thi = (k - lo) // (-a) if not is_inf(lo) else INT_OO
        refine(env, t, ValueRange(tlo, thi))
        return
    if not is_inf(vr.lower) and b.lower < vr.lower:
        add_fact(env, R.ge(value, vr.lower))
    if not is_inf(vr.upper) and b.upper > vr.upper:
        add_fact(env, R.le(value, vr.upper))


@rule("solve.refresh_facts")
def refresh_facts(env) -> None:
    """The facts and assumptions rewritten under the current replacements and ranges.
    A fact on a data-dependent size that now mentions input sizes only becomes an
    assumption (it still holds only where the size was checked); one that became
    false means the guards or checks contradict each other."""
    with env.rewriting_facts() as (old, old_assumed):
        for f in old:
            g = env.subst_cond(f)
            if type(g) is not bool and decide_ranges(env, g) is True:
                g = True
            if g is False or (type(g) is not bool and decide_ranges(env, g) is False):
                contradiction(env, f)
            if type(g) is bool:
                continue
            if any(s.unbacked for s in f.free_symbols) and learning_data_dependent(env) \
                    and not any(s.unbacked for s in g.free_symbols):
                env.record_assumption(g)
                continue
            env.record_fact(g, env.fact_guard(f))
        for f in old_assumed:
            g = env.subst_cond(f)
            if g is False or (type(g) is not bool and decide_ranges(env, g) is False):
                contradiction(env, f)
            if type(g) is not bool:
                env.record_assumption(g)
    tighten(env)


def contradiction(env, f) -> None:
    """A recorded fact became false: on a data-dependent size, the user's checks can
    never all hold; otherwise a guard true at the examples contradicts another one,
    which is the engine's fault."""
    guard = env.fact_guards.get(f, env.learning())
    if any(s.unbacked for s in f.free_symbols):
        frame = guard.frame if guard is not None else None
        raise UserError("ss.check(%s) can never hold together with the checks before "
                        "it%s" % (f.format(env.user_label), where(frame)))
    raise InternalError("the fact %s contradicts the guards recorded after it"
                        % f.format())


@rule("solve.minmax_equal")
def minmax_equal(e: Expr):
    """``Min(a1, .., y, ..) - y == 0`` is ``y <= a_i`` for every other argument (``Max``:
    ``y >= a_i``): the relation the user meant, not an equation no Dim can say."""
    if e.const or len(e.terms) != 2:
        return None
    for (t1, c1), (t2, c2) in ((e.terms[0], e.terms[1]), (e.terms[1], e.terms[0])):
        if len(t1) != 1 or type(t1[0]) is not OpAtom or t1[0].kind not in ("Min", "Max") \
                or c1 not in (1, -1) or c2 != -c1:
            continue
        y = term_value(t2)
        args = t1[0].args
        if y not in args:
            continue
        rel = R.le if t1[0].kind == "Min" else R.ge
        return all_of(bounds_against(y, args, rel))
    return None


# term_value, bounds_against and all_of are each exactly a form over a list, one item at a
# time (and nothing else): proofs/minmax_equal_every.py reads that from this code, so
# solve.minmax_equal holds for every Min / Max arity and every term.
def term_value(term: tuple) -> IntLike:
    """The product of a term's atoms, as an expression."""
    return reduce(term_step, [atom_expr(a) for a in term])


def term_step(y: IntLike, x: IntLike) -> IntLike:
    """One more factor of ``term_value``."""
    return mul(y, x)


def bounds_against(y: Expr, args: tuple, rel) -> list:
    """``rel(y, a)`` for every argument ``a`` but ``y`` itself."""
    return [rel(y, a) for a in args if a != y]


def all_of(conds: list):
    """The conjunction of ``conds`` (relations or bools), as ``R.combine("and", conds)``
    builds it: False if one is False, the others once each, True if none is left."""
    out = reduce(and_step, conds, [])
    if out is False:
        return False
    if not out:
        return True
    return out[0] if len(out) == 1 else R.BoolOp("and", tuple(out))


def and_step(out, c):
    """One more condition of ``all_of``: ``out`` (a list, or False once one was False)."""
    if out is False or c is False:
        return False
    if c is True or c in out:
        return out
    return out + [c]


def constant_divisors(e: IntLike, s: Sym) -> List[int]:
    """The constant divisors ``k >= 2`` of the FloorDiv / Mod atoms of ``e`` whose
    numerator involves ``s``."""
    out: List[int] = []
    if type(e) is int:
        return out
    for term, _ in e.terms:
        for a in term:
            if type(a) is OpAtom:
                num, den = a.args[0], a.args[-1]
                if a.kind in ("FloorDiv", "Mod") and type(den) is int and den >= 2 and \
                        type(num) is Expr and s in num.free_symbols and den not in out:
                    out.append(den)
                for b in a.args:
                    for k in constant_divisors(b, s):
                        if k not in out:
                            out.append(k)
    return out


def subst_cond_value(c, s: Sym, value: IntLike):
    """``c`` with ``s`` replaced by ``value`` (normalised; may be a bool)."""
    if isinstance(c, R.BoolOp):
        return R.combine(c.op, [subst_cond_value(a, s, value) for a in c.args])
    return R.make(c.op, subs(c.expr, {s: value}))


def components(facts: list) -> List[list]:
    """The facts grouped by shared symbols (each group in the facts' order)."""
    parent: Dict[Sym, Sym] = {}

    def find(s):
        while parent.setdefault(s, s) != s:
            s = parent[s]
        return s

    for f in facts:
        syms = list(f.free_symbols)
        for t in syms[1:]:
            a, b = find(syms[0]), find(t)
            if a != b:
                parent[a] = b
    groups: Dict[Sym, list] = {}
    for f in facts:
        groups.setdefault(find(next(iter(f.free_symbols))), []).append(f)
    return list(groups.values())
