"""The shape environment: symbols, ranges, replacements, guards, and the decision tiers.

Every question about sizes ("is s0 == s4?") is answered by the cheapest tier that can:
  1. syntax: replacements substituted, the relation normalised (``relations.make``);
  2. value ranges (``ranges.bound``) and the exact list of recorded facts;
  3. Z3, only when recorded multi-symbol facts or non-linear terms could matter;
  4. otherwise the example values answer, and the answer is recorded as a guard.

Recording a guard teaches the environment (``_learn``): an equality becomes a replacement
(``s4 -> s2``, ``s0 -> 4*s5`` for divisibility, ``s1 -> 5``), a one-symbol inequality
narrows a range, and anything else is kept as a *fact*.  Invariants:
  * replacement targets mention only root symbols (never a replaced one);
  * ``ranges[s]`` is the range of a root symbol; replaced symbols keep their old range
    only for reporting;
  * every recorded fact is true at the example values (the hints).
"""
from __future__ import annotations

import logging
import math
from typing import Dict, List, Optional, Tuple

from . import relations as R
from .errors import GuardOnDataDependentError, InternalError, UserError, where
from .expr import Expr, IntLike, OpAtom, Sym, add, evaluate, floordiv, mul, scale, subs
from .expr import _minmax, atom_expr, mod
from .infinity import INT_OO, NEG_INT_OO, is_inf
from .logs import dynamic_log
from . import logs
from .ranges import ValueRange, bound
from .userframe import UserFrame, user_frame, user_stack

DEFAULT_RANGE = ValueRange(2, INT_OO)

# Which symbol an equality eliminates first: the freest kind, then the latest allocated.
_ELIMINATE_FIRST = {"unbacked": 4, "intermediate": 3, "quotient": 2, "auto": 2, "dynamic": 2,
                    "named": 1}


class SymInfo:
    """What the environment knows about where a symbol came from."""

    __slots__ = ("sym", "hint", "source", "kind", "dim", "declared", "frame", "parent")

    def __init__(self, sym: Sym, hint: Optional[int], source: str, kind: str, dim,
                 declared: ValueRange, frame: Optional[UserFrame]) -> None:
        self.sym = sym
        self.hint = hint
        self.source = source          # user-facing: "x.shape[1]", a Dim name, "nonzero(...)"
        self.kind = kind              # auto | dynamic | named | quotient | unbacked | intermediate
        self.dim = dim                # the Dim object for kind "named"
        self.declared = declared      # the range the spec promised
        self.frame = frame
        self.parent: Optional[Sym] = None   # for quotient symbols: the symbol divided


class Guard:
    """A recorded decision: ``cond`` held at the example values."""

    __slots__ = ("cond", "frame", "kind", "stack", "reason")

    def __init__(self, cond, frame: Optional[UserFrame], kind: str, stack=None,
                 reason: Optional[str] = None) -> None:
        self.cond = cond
        self.frame = frame
        self.kind = kind              # guard | check | specialize | range
        self.stack = stack
        # for a specialization: what needed a concrete value and how to keep it symbolic
        self.reason = reason


class ShapeEnv:
    def __init__(self) -> None:
        self.infos: Dict[Sym, SymInfo] = {}
        self.ranges: Dict[Sym, ValueRange] = {}
        self.replacements: Dict[Sym, IntLike] = {}
        self.guards: List[Guard] = []
        self.facts: List[R.Cond] = []
        self.checks: List[Tuple[R.Cond, Optional[str], Optional[UserFrame]]] = []
        self._count = {False: 0, True: 0}
        self._version = 0
        self._subs_cache: Dict[Expr, IntLike] = {}
        self._decide_cache: Dict[object, Optional[bool]] = {}
        self._bound_cache: Dict[IntLike, ValueRange] = {}
        self._fact_index: Optional[Dict[Sym, list]] = None
        self.z3_queries = 0
        self.pending: List[Tuple[IntLike, str, Optional[UserFrame]]] = []
        # why each symbol was replaced or had its range narrowed: the guards responsible
        self.why: Dict[Sym, List[Guard]] = {}
        self.fact_guards: Dict[object, Guard] = {}
        self._learning: Optional[Guard] = None
        self._tightening = False
        self._folding_by_facts = False
        self._project_cache: Dict[object, dict] = {}
        self._implied_cache: Dict[object, Optional[bool]] = {}

    # ------------------------------------------------------------------ symbols
    def create_symbol(self, hint: Optional[int], source: str, vr: ValueRange = DEFAULT_RANGE,
                      kind: str = "auto", dim=None, frame: Optional[UserFrame] = None) -> Sym:
        unbacked = hint is None
        sym = Sym(self._count[unbacked], unbacked)
        self._count[unbacked] += 1
        self.infos[sym] = SymInfo(sym, hint, source, kind, dim, vr, frame)
        self.ranges[sym] = vr
        if dynamic_log.isEnabledFor(logging.INFO):
            dynamic_log.info("create_symbol %s = %s for %s %s%s", sym.name,
                             "?" if unbacked else hint, source, vr, where(frame))
        return sym

    def create_unbacked(self, source: str, vr: ValueRange, frame=None) -> Sym:
        return self.create_symbol(None, source, vr, kind="unbacked", frame=frame)

    def hint_of(self, x: IntLike) -> Optional[int]:
        if type(x) is int:
            return x
        try:
            return evaluate(x, {s: self.infos[s].hint for s in x.free_symbols
                                if self.infos[s].hint is not None})
        except KeyError:
            return None

    def sym_range(self, s: Sym) -> ValueRange:
        return self.ranges[s]

    def name_of(self, s: Sym) -> str:
        info = self.infos.get(s)
        return info.source if info is not None else s.name

    # ------------------------------------------------------------------ simplify
    def _bump(self) -> None:
        self._version += 1
        self._subs_cache.clear()
        self._decide_cache.clear()
        self._bound_cache.clear()
        self._fact_index = None

    def simplify(self, x: IntLike) -> IntLike:
        """Replacements substituted and range-decided Min / Max / Mod / FloorDiv folded."""
        if type(x) is int:
            return x
        got = self._subs_cache.get(x)
        if got is None:
            got = subs(x, self.replacements) if self.replacements else x
            if type(got) is Expr and _has_op_atoms(got):
                got = self._range_fold(got)
            self._subs_cache[x] = got
        return got

    def _strip_positive_factors(self, e: IntLike) -> IntLike:
        """``b*(L - 4*(L//4)) <op> 0`` is ``Mod(L, 4) <op> 0`` when b >= 1: a factor common
        to every term whose range is positive changes no comparison with 0."""
        if type(e) is int or e.const or len(e.terms) < 1:
            return e
        common = set(e.terms[0][0])
        for t, _ in e.terms[1:]:
            common &= set(t)
        for atom in common:
            if type(atom) is Sym and self.ranges.get(atom, DEFAULT_RANGE).lower >= 1 \
                    and atom not in self.replacements:
                reduced = {}
                for t, c in e.terms:
                    lst = list(t)
                    lst.remove(atom)
                    reduced[tuple(lst)] = c
                const = reduced.pop((), 0)
                from .expr import _make
                inner = _make(reduced, const)
                return self._strip_positive_factors(self._range_fold(inner)) \
                    if type(inner) is Expr else inner
        return e

    def bound(self, x: IntLike) -> ValueRange:
        """The value range of ``x`` under the current ranges (cached until they change)."""
        got = self._bound_cache.get(x)
        if got is None:
            got = self._bound_cache[x] = bound(self.simplify(x), self.ranges.__getitem__)
        return got

    def _range_fold(self, x: IntLike) -> IntLike:
        if type(x) is int or not _has_op_atoms(x):
            return x
        total: IntLike = x.const
        for term, c in x.terms:
            prod: IntLike = c
            for atom in term:
                prod = mul(prod, atom.expr if type(atom) is Sym else self._fold_atom(atom))
            total = add(total, prod)
        total = _recombine_divmod(total)
        pushed = _push_into_minmax(total)
        if pushed is not None:
            return self._range_fold(pushed)
        return total

    def _fold_atom(self, atom: OpAtom) -> IntLike:
        args = [self._range_fold(a) for a in atom.args]
        kind = atom.kind
        rng = self.ranges.__getitem__
        if kind in ("Min", "Max"):
            flat = _minmax(kind, args)
            a = flat.as_atom() if type(flat) is Expr else None
            if type(a) is not OpAtom or a.kind != kind:
                return flat
            # compare only against arguments that are kept, so ties cannot drop each other
            keep = []
            dom = self._dominates
            for x in a.args:
                if any(dom(kind, y, x) for y in keep):
                    continue
                keep = [y for y in keep if not dom(kind, x, y)]
                keep.append(x)
            return _minmax(kind, keep)
        num, den = args
        if type(den) is int and den > 0:
            b = bound(num, rng)
            if b.lower >= 0 and b.upper < den:          # 0 <= num < den
                return 0 if kind == "FloorDiv" else num
        return floordiv(num, den) if kind == "FloorDiv" else mod(num, den)

    def _dominates(self, kind: str, y: IntLike, x: IntLike) -> bool:
        """y is always at least as good a pick as x: by the ranges, else (when facts
        relate them: ``a >= b + 2`` makes ``Max(a, b)`` just ``a``) by the facts."""
        if _dominates(kind, y, x, self.ranges.__getitem__):
            return True
        if not self.facts or self._folding_by_facts:
            return False
        syms = (y.free_symbols if type(y) is Expr else frozenset()) | \
            (x.free_symbols if type(x) is Expr else frozenset())
        if not any(s in self._fact_symbols() for s in syms):
            return False
        c = R.le(y, x) if kind == "Min" else R.ge(y, x)
        if type(c) is bool:
            return c
        self._folding_by_facts = True
        try:
            return self.decide(c) is True
        finally:
            self._folding_by_facts = False

    def _fact_symbols(self) -> frozenset:
        out: frozenset = frozenset()
        for f in self.facts:
            out |= f.free_symbols
        return out

    # ------------------------------------------------------------------ deciding
    def subst_cond(self, c):
        if type(c) is bool:
            return c
        if isinstance(c, R.Rel):
            e = self._strip_positive_factors(self.simplify(c.expr))
            return c if e is c.expr else R.make(c.op, e)
        return R.combine(c.op, [self.subst_cond(a) for a in c.args])

    def decide(self, c) -> Optional[bool]:
        """Tiers 1-3: the answer when the known facts settle it, else None."""
        c = self.subst_cond(c)
        if type(c) is bool:
            return c
        if c in self._decide_cache:
            return self._decide_cache[c]
        ans = self._decide_ranges(c)
        if ans is None:
            ans = self._decide_facts(c)
        self._decide_cache[c] = ans
        return ans

    def _decide_ranges(self, c) -> Optional[bool]:
        if isinstance(c, R.BoolOp):
            vals = [self._decide_ranges(a) for a in c.args]
            if c.op == "and":
                return False if False in vals else (True if all(v is True for v in vals) else None)
            return True if True in vals else (False if all(v is False for v in vals) else None)
        b = self._bound_cache.get(c.expr)
        if b is None:
            b = self._bound_cache[c.expr] = bound(c.expr, self.ranges.__getitem__)
        if c.op == R.LE:
            return True if b.upper <= 0 else (False if b.lower > 0 else None)
        known = True if (b.lower == 0 == b.upper) else (False if not (b.lower <= 0 <= b.upper)
                                                        else None)
        if known is None:
            return None
        return known if c.op == R.EQ else not known

    def _decide_facts(self, c) -> Optional[bool]:
        if not self.facts:
            related = []
        else:
            if c in self.facts:
                return True
            neg = R.negate(c)
            if neg in self.facts:
                return False
            related = self._related_facts(c.free_symbols)
        if not related and _box_exact(c):
            return None          # ranges are the whole truth here: undecidable for real
        if self._witnessed_undecidable(c, related):
            return None
        from .z3bridge import implies
        self.z3_queries += 1
        return implies(related, c, self.ranges)   # None past the budget: a guard decides

    def _related_facts(self, syms) -> list:
        """Every fact connected to ``syms`` through shared symbols (not only one hop:
        ``a <= b`` and ``b <= c`` both matter to ``a <= c``), via the per-symbol index."""
        index = self._fact_index
        if index is None:
            index = self._fact_index = {}
            for f in self.facts:
                for s in f.free_symbols:
                    index.setdefault(s, []).append(f)
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

    def _witnessed_undecidable(self, c, related) -> bool:
        """Cheap tier before Z3: the example point satisfies every fact; if moving one
        symbol to a nearby point that still satisfies the ranges and the related facts
        flips ``c``, then neither ``c`` nor its negation is implied."""
        syms = set(c.free_symbols)
        for f in related:
            syms |= f.free_symbols
        point = {}
        for t in syms:
            h = self.infos[t].hint
            if h is None:
                return False
            point[t] = h
        try:
            base = _holds(c, point)
        except ZeroDivisionError:
            return False
        for t in c.free_symbols:
            vr = self.ranges[t]
            h = point[t]
            for v in (h + 1, h - 1, 2 * h, vr.lower, vr.lower + 1, vr.upper):
                if is_inf(v) or v == h or v not in vr:
                    continue
                trial = dict(point)
                trial[t] = v
                try:
                    if _holds(c, trial) != base and all(_holds(f, trial) for f in related):
                        return True
                except ZeroDivisionError:
                    continue
        return False

    def evaluate(self, c, hint: Optional[bool] = None, frame: Optional[UserFrame] = None,
                 kind: str = "guard") -> bool:
        """Decide ``c``; if only the examples can, record a guard and learn from it."""
        if type(c) is bool:
            return c
        if self.pending:
            self.commit_pending()
        d = self.decide(c)
        if d is not None:
            return d
        c = self.subst_cond(c)
        if frame is None:
            frame = user_frame(2)
        if any(s.unbacked for s in c.free_symbols):
            raise self._data_dependent(c, frame)
        if hint is None:
            hint = self._hint_cond(c)
        self.add_guard(c if hint else R.negate(c), frame, kind)
        return hint

    def _hint_cond(self, c) -> bool:
        if isinstance(c, R.BoolOp):
            vals = [self._hint_cond(a) for a in c.args]
            return all(vals) if c.op == "and" else any(vals)
        v = self.hint_of(c.expr)
        if v is None:
            raise InternalError("no example value for %s" % c.format())
        return c.holds(v)

    def save_state(self) -> tuple:
        """What tracing may teach the environment, to undo it (a branch that may not run,
        a failed attempt).  Index 1 is the ranges, index 3 the number of guards."""
        return (dict(self.replacements), dict(self.ranges), list(self.facts), len(self.guards),
                {k: list(v) for k, v in self.why.items()}, dict(self.fact_guards),
                list(self.checks))

    def restore_state(self, snap: tuple) -> None:
        """Undo everything learnt since ``save_state``."""
        (self.replacements, self.ranges, self.facts, n, self.why, self.fact_guards,
         self.checks) = snap[0], snap[1], snap[2], snap[3], snap[4], snap[5], snap[6]
        del self.guards[n:]
        self._bump()

    def user_label(self, s: Sym) -> str:
        """How the user's code spells a symbol: ``x.shape[0]`` for an input axis; for a
        data-dependent size, ``m.shape[0]`` (or ``n`` for ``.item()``) when the line that
        made it assigns one name, else a description of that line."""
        info = self.infos.get(s)
        if info is None:
            return s.name
        if not s.unbacked:
            return info.source
        frame = info.frame
        target = _assigned_name(frame.code) if frame is not None else None
        if target is not None:
            return target if info.source.endswith(".item()") else "%s.shape[0]" % target
        if frame is not None and frame.code:
            return "(the size `%s` computes at line %d)" % (frame.code, frame.lineno)
        return s.name          # made through the engine's API: the caller named it

    def _data_dependent(self, c, frame) -> GuardOnDataDependentError:
        made = []
        for u in sorted((s for s in c.free_symbols if s.unbacked), key=lambda s: s.key):
            f = self.infos[u].frame
            made.append("%s is data-dependent (it is made by %s)" % (
                self.user_label(u), "`%s` at %s" % (f.code, f.location) if f is not None
                else "`%s`" % self.infos[u].source))
        text = c.format(self.user_label)
        return GuardOnDataDependentError(
            "Could not decide `%s`%s: %s.\n"
            "Add `ss.check(%s)` (or its negation) before this line if you know it holds, "
            "or use `ss.cond` to keep both branches." % (text, where(frame), "; ".join(made),
                                                         text))

    # ------------------------------------------------------------------ learning
    def add_guard(self, c, frame: Optional[UserFrame], kind: str = "guard",
                  reason: Optional[str] = None) -> None:
        stack = None
        if logs.guard_stack_filter and logs.guard_stack_filter in c.format():
            stack = user_stack(2)
        guard = Guard(c, frame, kind, stack, reason)
        self.guards.append(guard)
        if dynamic_log.isEnabledFor(logging.INFO):
            dynamic_log.info("guard added %s%s", c.format(py=True), where(frame))
            if stack:
                dynamic_log.info("  user stack for guard %s:\n%s", c.format(), "\n".join(
                    "    %s" % f.describe() for f in stack))
        outer, self._learning = self._learning, guard
        try:
            self._learn(c)
        finally:
            self._learning = outer

    def _note(self, s: Sym) -> None:
        if self._learning is not None:
            got = self.why.setdefault(s, [])
            if self._learning not in got:
                got.append(self._learning)

    def _learn(self, c) -> None:
        c = self.subst_cond(c)
        if type(c) is bool:
            if not c:
                raise InternalError("a guard contradicts earlier guards")
            return
        if isinstance(c, R.BoolOp):
            if c.op == "and":
                for a in c.args:
                    self._learn(a)
            else:
                self._add_fact(c)
            return
        e = c.expr
        if c.op == R.EQ:
            plain = _minmax_equal(e)
            if plain is not None:                   # Min(x, n) == n is n <= x
                self._learn(plain)
                return
            if self._solve_eq(e):
                return
        else:
            lin = e.linear_coeffs()
            if lin is not None and len(lin) == 1:
                (s, a), = lin.items()
                lo, hi = NEG_INT_OO, INT_OO
                k = e.const
                if c.op == R.LE:                # a*s + k <= 0 with a = +-1 after normalising
                    if a > 0:
                        hi = (-k) // a
                    else:
                        lo = _ceil_div(k, -a)
                    self.refine(s, ValueRange(lo, hi))
                    return
                v = -k // a if k % a == 0 else None          # a*s + k != 0
                r = self.ranges[s]
                if v is None:
                    return
                if v == r.lower:
                    self.refine(s, ValueRange(v + 1, r.upper))
                    return
                if v == r.upper:
                    self.refine(s, ValueRange(r.lower, v - 1))
                    return
        if self._split_residues(c):
            return
        self._add_fact(c)

    def _split_residues(self, c) -> bool:
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
        for k in _constant_divisors(c.expr, s):
            k_all = k_all * k // math.gcd(k_all, k)
        if k_all == 1 or k_all > 16:
            return False
        vr = self.ranges[s]
        holds = []
        for r in range(k_all):
            lo = _ceil_div(vr.lower - r, k_all) if not is_inf(vr.lower) else NEG_INT_OO
            hi = (vr.upper - r) // k_all if not is_inf(vr.upper) else INT_OO
            if lo > hi:
                continue                              # no value of s has this residue
            case = ShapeEnv()                         # the case alone: q's range, no facts
            q = case.create_symbol(lo if not is_inf(lo) else (hi if not is_inf(hi) else 0),
                                   "q", ValueRange(lo, hi), kind="intermediate")
            d = case.decide(subst_cond_value(c, s, add(scale(q.expr, k_all), r)))
            if d is None:
                return False
            if d:
                holds.append(r)
        if holds and len(holds) == sum(1 for r in range(k_all) if _has_residue(vr, r, k_all)):
            return True                               # true for every s in its range
        if len(holds) != 1:
            return False
        self._learn(R.make(R.EQ, add(mod(s.expr, k_all), -holds[0])))
        return True

    def _add_fact(self, c) -> None:
        if c not in self.facts:
            self.facts.append(c)
            if self._learning is not None:
                self.fact_guards.setdefault(c, self._learning)
            self._bump()
            self._tighten()

    def _tighten(self) -> None:
        """Make every root symbol's range the exact projection of the facts (the
        contract's ranges are then attained), and drop the facts the ranges now imply
        (``(n + 1) // 2 >= 2`` becomes ``n >= 3``; ``n // 100 == 30`` becomes
        ``[3000, 3099]``).  Data-dependent facts hold by construction and teach nothing
        about the inputs, so they are left out."""
        if self._tightening:
            return
        self._tightening = True
        try:
            for _ in range(4):                        # changes feed back; a few rounds
                if not self._tighten_once():
                    break
            self._drop_implied_facts()
        finally:
            self._tightening = False

    def _backed_facts(self) -> list:
        return [f for f in self.facts if not any(s.unbacked for s in f.free_symbols)]

    def _tighten_once(self) -> bool:
        from .projection import project
        changed = False
        for comp in _components(self._backed_facts()):
            syms = sorted({s for f in comp for s in f.free_symbols}, key=lambda s: s.key)
            key = (tuple(comp), tuple(self.ranges[s] for s in syms))
            got = self._project_cache.get(key)
            if got is None:
                got = self._project_cache[key] = {
                    s: project(s.expr, comp, self.ranges) for s in syms}
            for s, vr in got.items():
                if s in self.replacements or s not in self.ranges:
                    continue
                old = self.ranges[s]
                if vr.lower > old.lower or vr.upper < old.upper:
                    self.refine(s, vr)
                    changed = True
        return changed

    def _drop_implied_facts(self) -> None:
        """Facts that the ranges alone imply say nothing more: they leave the contract."""
        from .z3bridge import Budget
        from .z3bridge import implies
        keep = []
        for f in self.facts:
            if any(s.unbacked for s in f.free_symbols):
                keep.append(f)
                continue
            key = (f, tuple(self.ranges.get(s) for s in sorted(f.free_symbols,
                                                              key=lambda s: s.key)))
            got = self._implied_cache.get(key)
            if got is None:
                got = self._decide_ranges(f)
                if got is None and not _box_exact(f):
                    got = implies([], f, self.ranges, Budget())
                self._implied_cache[key] = got
            if got is not True:
                keep.append(f)
        if len(keep) != len(self.facts):
            self.facts = keep
            self._bump()

    def refine(self, s: Sym, vr: ValueRange) -> None:
        old = self.ranges[s]
        new = ValueRange(max(old.lower, vr.lower), min(old.upper, vr.upper)) \
            if max(old.lower, vr.lower) <= min(old.upper, vr.upper) else None
        if new is None:
            raise InternalError("range of %s became empty" % s.name)
        if new == old:
            return
        self._note(s)
        self.ranges[s] = new
        self._bump()
        if new.is_singleton:
            self.replace(s, new.lower)
        else:
            self._refresh_facts()

    def _solve_eq(self, e: Expr) -> bool:
        """Turn ``e == 0`` into a replacement when it has a clean solution."""
        candidates = []
        for term, c in e.terms:
            if len(term) == 1 and type(term[0]) is Sym and c in (1, -1):
                s = term[0]
                rest = add(e, scale(s.expr, -c))
                if type(rest) is int or s not in rest.free_symbols:
                    info = self.infos[s]
                    # freest kind first; then the largest example (s0 -> s2 + 2 rather
                    # than s2 -> s0 - 2); then the latest allocated (the later axis)
                    hint = info.hint if info.hint is not None else float("inf")
                    candidates.append(((_ELIMINATE_FIRST.get(info.kind, 2), hint, s.index),
                                       s, c, rest))
        if candidates:
            candidates.sort(key=lambda t: t[0], reverse=True)
            _, s, c, rest = candidates[0]
            self.replace(s, scale(rest, -c))          # c*s + rest == 0  =>  s = -rest/c
            return True
        return self._solve_congruence(e) or self._solve_factor_pairs(e) or \
            self._solve_two_var(e)

    def _solve_factor_pairs(self, e: Expr) -> bool:
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
            if any(self.bound(atom_expr(a)).lower < 1 for a in rest) or \
                    any(self.bound(x).lower < 1 for x, _ in pairs):
                continue
            for x, k in pairs:
                self._learn(R.make(R.EQ, mod(x, k)))
            return True
        return False

    def _solve_congruence(self, e: Expr) -> bool:
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
        info = self.infos[s]
        vr = self.ranges[s]
        lo = _ceil_div(vr.lower - r, k) if not is_inf(vr.lower) else vr.lower
        hi = (vr.upper - r) // k if not is_inf(vr.upper) else vr.upper
        q = self.create_symbol(None if info.hint is None else (info.hint - r) // k,
                               "(%s - %d)//%d" % (info.source, r, k) if r else
                               "%s//%d" % (info.source, k),
                               ValueRange(lo, hi), kind="quotient" if info.kind != "unbacked"
                               else "unbacked", frame=info.frame)
        self.infos[q].parent = s
        self.replace(s, add(scale(q.expr, k), r))
        return True

    def _solve_two_var(self, e: Expr) -> bool:
        """``a*x + b*y + c == 0`` with coprime |a|, |b| > 1: x = |b|*k + rx, y = ... ."""
        lin = e.linear_coeffs()
        if lin is None or len(lin) != 2:
            return False
        (x, a), (y, b) = sorted(lin.items(), key=lambda kv: kv[0].index)
        hx = self.infos[x].hint
        if hx is None:
            return False
        m = abs(b)
        rx = hx % m
        info = self.infos[x]
        vr = self.ranges[x]               # x = m*k + rx in x's range
        lo = _ceil_div(vr.lower - rx, m) if not is_inf(vr.lower) else NEG_INT_OO
        hi = (vr.upper - rx) // m if not is_inf(vr.upper) else INT_OO
        k = self.create_symbol(hx // m, "%s//%d" % (info.source, m), ValueRange(lo, hi),
                               kind="quotient", frame=info.frame)
        self.infos[k].parent = x
        x_val = add(scale(k.expr, m), rx)
        y_val = floordiv(add(scale(x_val, -a), -e.const), b)   # exact by construction
        self.replace(x, x_val)
        self.replace(y, y_val)
        return True

    def replace(self, s: Sym, value: IntLike) -> None:
        """Record ``s -> value`` (value over root symbols), keeping every invariant."""
        value = self.simplify(value)
        if type(value) is Expr and s in value.free_symbols:
            raise InternalError("cyclic replacement %s -> %s" % (s.name, value))
        hint = self.infos[s].hint
        if hint is not None:
            got = self.hint_of(value)
            if got is not None and got != hint:
                raise InternalError("replacement %s -> %s breaks the example value %s"
                                    % (s.name, value, hint))
        old_range = self.ranges[s]
        self._note(s)
        one = {s: value}
        for k in list(self.replacements):
            self.replacements[k] = subs(self.replacements[k], one)
        self.replacements[s] = value
        self._bump()
        if dynamic_log.isEnabledFor(logging.DEBUG):
            dynamic_log.debug("set_replacement %s = %s", s.name, value)
        # the value must stay inside the range the replaced symbol had
        self._constrain(value, old_range)
        self._refresh_facts()

    def _constrain(self, value: IntLike, vr: ValueRange) -> None:
        if type(value) is int:
            if value not in vr:
                raise InternalError("replacement value %s outside %s" % (value, vr))
            return
        b = bound(value, self.ranges.__getitem__)
        if b.issubset(vr):
            return
        lin = value.linear_coeffs()
        if lin is not None and len(lin) == 1:
            (t, a), = lin.items()
            k = value.const              # a*t + k in [lo, hi]
            lo, hi = vr.lower, vr.upper
            if a > 0:
                tlo = _ceil_div(lo - k, a) if not is_inf(lo) else NEG_INT_OO
                thi = (hi - k) // a if not is_inf(hi) else INT_OO
            else:
                tlo = _ceil_div(k - hi, -a) if not is_inf(hi) else NEG_INT_OO
                thi = (k - lo) // (-a) if not is_inf(lo) else INT_OO
            self.refine(t, ValueRange(tlo, thi))
            return
        if not is_inf(vr.lower) and b.lower < vr.lower:
            self._add_fact(R.ge(value, vr.lower))
        if not is_inf(vr.upper) and b.upper > vr.upper:
            self._add_fact(R.le(value, vr.upper))

    def _refresh_facts(self) -> None:
        old = self.facts
        self.facts = []
        for f in old:
            g = self.subst_cond(f)
            if type(g) is bool:
                continue
            if self._decide_ranges(g) is True:
                continue
            if g not in self.facts:
                self.facts.append(g)
                if f in self.fact_guards:
                    self.fact_guards.setdefault(g, self.fact_guards[f])
        self._bump()
        self._tighten()

    # ------------------------------------------------------------------ user-level
    def check(self, c, hint: Optional[bool], message: Optional[str] = None,
              frame: Optional[UserFrame] = None) -> None:
        """``ss.check``: the condition must hold; it becomes a guard (never a silent
        specialisation).  A check on data-dependent sizes is assumed and checked at run
        time instead."""
        if frame is None:
            frame = user_frame(2)
        if type(c) is bool:
            if not c:
                raise UserError("ss.check failed%s%s" % (
                    where(frame), (": " + message) if message else ""))
            return
        d = self.decide(c)
        if d is True:
            return
        c = self.subst_cond(c)
        if d is False or (hint is False):
            raise UserError("ss.check(%s) is false for the example inputs%s%s" % (
                c.format(self.name_of), where(frame), (": " + message) if message else ""))
        if any(s.unbacked for s in c.free_symbols):
            self.checks.append((c, message, frame))
        self.add_guard(c, frame, "check")

    def specialize_later(self, x: IntLike, why: str) -> int:
        """``operator.index``: answer the example value now, guard at the next operation."""
        frame = user_frame(2)
        x = self.simplify(x)
        if type(x) is int:
            return x
        if any(s.unbacked for s in x.free_symbols):
            return self.specialize(x, why, frame)
        self.pending.append((x, why, frame))
        return self.hint_of(x)

    def commit_pending(self) -> None:
        while self.pending:
            x, why, frame = self.pending.pop(0)
            self.specialize(x, why, frame)

    def cancel_pending(self, exprs) -> None:
        """Drop pending specialisations of these expressions (they stay symbolic)."""
        keep = set(exprs)
        self.pending = [p for p in self.pending if p[0] not in keep and
                        self.simplify(p[0]) not in keep]

    def specialize(self, x: IntLike, why: str, frame: Optional[UserFrame] = None,
                   advice: Optional[str] = None) -> int:
        """Concrete int for ``x`` (``int()``, ``len``, ``range``...): guarded, and logged;
        ``advice`` replaces the default hint on how to keep the size symbolic."""
        x = self.simplify(x)
        if type(x) is int:
            return x
        if frame is None:
            frame = user_frame(2)
        if any(s.unbacked for s in x.free_symbols):
            raise GuardOnDataDependentError(
                "%s needs a concrete value of the data-dependent size %s%s.\nKeep it "
                "symbolic (avoid int()/len()/range() on it), or add `ss.check(...)` bounds."
                % (why, _fmt(x, self.name_of), where(frame)))
        v = self.hint_of(x)
        advice = advice or ("pass the size symbolically (e.g. np.zeros(shape), or "
                            "np.zeros(n, like=x)) to keep it dynamic")
        dynamic_log.warning("%s specialized %s to %d%s; %s", why, _fmt(x, self.name_of), v,
                            where(frame), advice)
        self.add_guard(R.eq(x, v), frame, "specialize",
                       reason="%s needs a concrete value; %s" % (why, advice))
        return v


def _assigned_name(code: str) -> Optional[str]:
    """``m`` for a source line ``m = x[x > 0]``; None for anything else."""
    import ast
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:
        return None
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assign):
        targets = tree.body[0].targets
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            return targets[0].id
    return None


def _fmt(x: IntLike, name) -> str:
    from .expr import format_expr
    return format_expr(x, name)


def _size(x: IntLike) -> int:
    if type(x) is int:
        return 1
    n = len(x.terms) + (1 if x.const else 0)
    for term, _ in x.terms:
        for a in term:
            if type(a) is OpAtom:
                n += sum(_size(b) for b in a.args)
    return n


def _recombine_divmod(x: IntLike) -> IntLike:
    """``c*k*(r//k) + c*Mod(r, k) == c*r`` (Python's division identity)."""
    if type(x) is int:
        return x
    coeffs = dict(x.terms)
    floors = {}
    for t, c in x.terms:
        if len(t) == 1 and type(t[0]) is OpAtom and t[0].kind == "FloorDiv":
            floors[t[0].args] = (t, c)
    for t, c in x.terms:
        if len(t) == 1 and type(t[0]) is OpAtom and t[0].kind == "Mod":
            r, k = t[0].args
            hit = floors.get((r, k))
            if hit is not None and type(k) is int and hit[1] == c * k and t in coeffs:
                del coeffs[t]
                del coeffs[hit[0]]
                rest = _rebuild(coeffs, x.const)
                return _recombine_divmod(add(rest, scale(r, c)))
    # c*r - c*k*(r//k) == c*Mod(r, k): L - 4*(L//4) is Mod(L, 4)
    for (r, k), (t, d) in floors.items():
        if type(k) is int and k > 0 and d % k == 0:
            c = -d // k
            cand = add(add(add(x, scale(r, -c)), scale(atom_expr(t[0]), -d)),
                       scale(mod(r, k), c))
            if _size(cand) < _size(x):
                return _recombine_divmod(cand)
    return x


def _rebuild(coeffs, const) -> IntLike:
    total: IntLike = const
    for t, c in coeffs.items():
        prod: IntLike = c
        for a in t:
            prod = mul(prod, atom_expr(a))
        total = add(total, prod)
    return total


def _push_into_minmax(x: IntLike) -> Optional[IntLike]:
    """``r + Min(a, b) == Min(r + a, r + b)`` and ``r - Max(a, b) == Min(r - a, r - b)``
    (and dually), applied only when it makes the expression smaller:
    ``s0 - Max(0, s0 - 3)`` becomes ``Min(3, s0)``."""
    if type(x) is int:
        return None
    hits = [(t, c) for t, c in x.terms if c in (1, -1) and len(t) == 1
            and type(t[0]) is OpAtom and t[0].kind in ("Min", "Max")]
    if len(hits) != 1:
        return None
    (atom,), c = hits[0]
    rest = add(x, scale(atom_expr(atom), -c))
    kind = atom.kind if c == 1 else ("Max" if atom.kind == "Min" else "Min")
    cand = _minmax(kind, [add(rest, scale(a, c)) for a in atom.args])
    return cand if _size(cand) < _size(x) else None


def _minmax_equal(e: Expr):
    """``Min(a1, .., y, ..) - y == 0`` is ``y <= a_i`` for every other argument (``Max``:
    ``y >= a_i``): the relation the user meant, not an equation no Dim can say."""
    if e.const or len(e.terms) != 2:
        return None
    for (t1, c1), (t2, c2) in ((e.terms[0], e.terms[1]), (e.terms[1], e.terms[0])):
        if len(t1) != 1 or type(t1[0]) is not OpAtom or t1[0].kind not in ("Min", "Max") \
                or c1 not in (1, -1) or c2 != -c1:
            continue
        y = atom_expr(t2[0]) if len(t2) == 1 else None
        if y is None:
            for a in t2:
                y = atom_expr(a) if y is None else mul(y, atom_expr(a))
        args = t1[0].args
        if y not in args:
            continue
        rel = R.le if t1[0].kind == "Min" else R.ge
        return R.combine("and", [rel(y, a) for a in args if a != y])
    return None


def _constant_divisors(e: IntLike, s: Sym) -> List[int]:
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
                    for k in _constant_divisors(b, s):
                        if k not in out:
                            out.append(k)
    return out


def _has_residue(vr: ValueRange, r: int, k: int) -> bool:
    lo = _ceil_div(vr.lower - r, k) if not is_inf(vr.lower) else NEG_INT_OO
    hi = (vr.upper - r) // k if not is_inf(vr.upper) else INT_OO
    return lo <= hi


def subst_cond_value(c, s: Sym, value: IntLike):
    """``c`` with ``s`` replaced by ``value`` (normalised; may be a bool)."""
    if isinstance(c, R.BoolOp):
        return R.combine(c.op, [subst_cond_value(a, s, value) for a in c.args])
    return R.make(c.op, subs(c.expr, {s: value}))


def _components(facts: list) -> List[list]:
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


def _holds(c, point) -> bool:
    if isinstance(c, R.BoolOp):
        vals = [_holds(a, point) for a in c.args]
        return all(vals) if c.op == "and" else any(vals)
    return c.holds(evaluate(c.expr, point))


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _has_op_atoms(x: Expr) -> bool:
    return any(type(a) is not Sym for t, _ in x.terms for a in t)


def _box_exact(c) -> bool:
    """Interval evaluation decides a linear ``<=`` exactly when each symbol appears once.
    For ``==`` / ``!=`` the interval may contain 0 while no integer point hits it
    (2*s0 + 3*s1 == 11 with s0, s1 >= 2), so only unit coefficients qualify."""
    if not isinstance(c, R.Rel) or not c.expr.is_linear():
        return False
    return c.op == R.LE or all(abs(k) == 1 for _, k in c.expr.terms)


def _dominates(kind: str, y: IntLike, x: IntLike, rng) -> bool:
    """y is always at least as good a pick as x (Min: y <= x; Max: y >= x)."""
    d = bound(add(x, scale(y, -1)) if kind == "Min" else add(y, scale(x, -1)), rng)
    return d.lower >= 0
