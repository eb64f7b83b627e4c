"""The shape environment: symbols, ranges, replacements, guards, and what they teach.

``ShapeEnv`` holds the state and answers the engine's questions through three modules with
one job each:

* ``symshape/algebra/simplify.py``: expressions under the replacements, Min / Max / ``//`` / ``%``
  folded by the ranges (``simplify``, ``bound``);
* ``symshape/reasoning/decision.py``: is a condition implied by the ranges, facts and assumptions
  (``decide``; its docstring states the procedure, what it decides and where it is
  incomplete); when only the example values can answer, ``evaluate`` records a guard;
* ``symshape/reasoning/solver.py``: what a recorded guard teaches (``add_guard``): an equality
  becomes a replacement (``s4 -> s2``, ``s0 -> 4*s5`` for divisibility, ``s1 -> 5``), a
  one-symbol inequality narrows a range, anything else is kept as a *fact*.

Invariants:
  * replacement targets mention only root symbols (never a replaced one);
  * ``ranges[s]`` is the range of a root symbol; replaced symbols keep their old range
    only for reporting;
  * every recorded fact is true at the example values (the hints);
  * a check on a data-dependent size never replaces, narrows or adds facts about input
    sizes: what it implies about them is an *assumption*, used by decisions made where
    the check has run and never part of the contract.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Callable, Dict, List, Optional, Tuple

from symshape.reasoning import decision

from symshape.algebra import relations as R

from symshape.algebra import simplify as _simplify

from symshape.reasoning import solver
from symshape import logs
from symshape.rules import rule
from symshape.errors import GuardOnDataDependentError, InternalError, UserError, where
from symshape.algebra.expr import Expr, IntLike, Sym, evaluate, format_expr, subs
from symshape.algebra.infinity import INT_OO
from symshape.logs import dynamic_log
from symshape.algebra.ranges import ValueRange
from symshape.userframe import UserFrame, user_frame, user_stack

_MISSING = object()      # a cache's "not computed yet" (None is a result)
_LEARNING = object()     # record_fact's default: blame the guard being learnt

DEFAULT_RANGE = ValueRange(2, INT_OO)


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

    __slots__ = ("cond", "frame", "kind", "stack", "reason", "data_dependent")

    def __init__(self, cond, frame: Optional[UserFrame], kind: str, stack=None,
                 reason: Optional[str] = None, data_dependent: bool = False) -> None:
        self.cond = cond
        self.frame = frame
        self.kind = kind              # guard | check | specialize | range
        self.stack = stack
        # for a specialization: what needed a concrete value and how to keep it symbolic
        self.reason = reason
        # made on a data-dependent size (before any replacement): it is checked at run
        # time where that size is computed and never constrains the inputs
        self.data_dependent = data_dependent


class ShapeEnv:
    """The state of one trace's sizes, and the questions and lessons about them."""

    #: comparisons of sizes give a bool at once, never a symbolic one (``SymbolicEnv``,
    #: which has no example values, sets it, as JAX does)
    decides_comparisons: bool = False

    def __init__(self) -> None:
        self.infos: Dict[Sym, SymInfo] = {}
        self.ranges: Dict[Sym, ValueRange] = {}
        self.replacements: Dict[Sym, IntLike] = {}
        self.guards: List[Guard] = []
        self.facts: List[R.Cond] = []
        self.checks: List[Tuple[R.Cond, Optional[str], Optional[UserFrame]]] = []
        # conditions over input sizes that hold wherever a run-time check on a
        # data-dependent size has passed (``u0 -> s0 - 3`` with ``u0 >= 0`` gives
        # ``s0 >= 3``): decisions may use them, the contract never includes them
        self.assumptions: List[R.Cond] = []
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
        self._rewriting = False          # inside rewriting_facts(): one cache reset, at its end
        self._project_cache: Dict[object, dict] = {}
        self._implied_cache: Dict[object, Optional[bool]] = {}
        self._caches = {"subs": self._subs_cache, "bound": self._bound_cache,
                        "decide": self._decide_cache, "project": self._project_cache,
                        "implied": self._implied_cache}
        # set by the tracer (capture/tracer.py) while it traces with this environment:
        # the tracer itself (ss.cond / ss.map and NumPy functions called on sizes find it)
        self.tracer: Optional[object] = None
        # and how a NumPy ufunc applied to a size is traced (``np.maximum(n, 2)``)
        self.ufunc_hook: Optional[Callable] = None
        # exact bounds already computed by ``symbolic.bounds_expr`` (``SymbolicEnv`` keeps
        # one; None: no cache)
        self._exact_cache: Optional[Dict[object, ValueRange]] = None
        # how many ss.cond / ss.map / ss.while_loop bodies are being traced (set by
        # capture/control.py): a guard made there on a data-dependent size stays there
        self.branch_depth = 0
        # while a loop body over a symbolic count is traced (capture/loops.py): decides a
        # condition on the loop's index for every iteration (a guard on the inputs), or None
        self.loop_guard = None
        # ``[x] * n`` with ``n`` a size: a list of the tracer's that keeps ``n`` (None: the
        # list's own repetition, which specializes n)
        self.repeat_hook = None
        # called with every condition about to become a guard (capture/loop_convert.py: a
        # ``while i < n`` over a size aborts the trace to be converted)
        self.guard_hook = None

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

    def name_of(self, s: Sym) -> str:
        info = self.infos.get(s)
        return info.source if info is not None else s.name

    # ------------------------------------------------------------------ simplifier
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
            got = _simplify.simplify(self, x)
        return got

    def bound(self, x: IntLike) -> ValueRange:
        """The value range of ``x`` under the current ranges (cached until they change).

        Range layer 2 (``symshape.contract.exact_ranges``): interval arithmetic on the
        simplified expression, sound but not exact, no facts; for the tracer's hot path
        (deciding guards, folding atoms).  Nothing published may come from it."""
        got = self._bound_cache.get(x)
        if got is None:
            got = _simplify.bound_of(self, x)
        return got

    # ------------------------------------------------------------------ decision procedure
    # the two hottest questions are the decision procedure's own functions (no extra call)
    subst_cond = decision.subst_cond
    decide = decision.decide

    def related_facts(self, syms) -> list:
        """Every fact and assumption connected to ``syms`` through shared symbols."""
        return decision.related_facts(self, syms)

    @rule("env.evaluate")
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
        original = c
        c = self.subst_cond(c)
        if frame is None:
            frame = user_frame(2)
        if any(s.unbacked for s in c.free_symbols):
            got = None if self.loop_guard is None else self.loop_guard(c, frame, kind)
            if got is not None:
                return got
            raise self._data_dependent(c, frame)
        if hint is None:
            hint = self._hint_cond(c)
        if self.guard_hook is not None:
            self.guard_hook(c)
        if self.branch_depth and any(s.unbacked for s in original.free_symbols):
            # inside a branch, on a data-dependent size an ss.check tied to the inputs
            # (u0 -> s0 - 3): the path taken is checked where the branch computes that
            # size, never on the inputs (the other branch may take them)
            taken = original if hint else R.negate(original)
            self.checks.append((taken, None, frame))
            self.add_guard(taken, frame, kind, data_dependent=True)
            return hint
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
                list(self.checks), list(self.assumptions))

    def restore_state(self, snap: tuple) -> None:
        """Undo everything learnt since ``save_state``."""
        (self.replacements, self.ranges, self.facts, n, self.why, self.fact_guards,
         self.checks, self.assumptions) = (dict(snap[0]), dict(snap[1]), list(snap[2]),
                                           snap[3], snap[4], snap[5], list(snap[6]),
                                           list(snap[7]))
        del self.guards[n:]
        self._bump()

    def forget_data_dependent(self, snap: tuple) -> None:
        """Undo what the checks on data-dependent sizes taught since ``save_state`` (a
        ``cond`` / ``map`` branch that may not run: its checks run inside it), keeping what
        guards on the inputs taught.  Such checks only ever replace or narrow
        data-dependent sizes, add facts that mention them, and add ``assumptions``; so this
        restores those three and nothing else."""
        old_repl, old_ranges, old_facts = snap[0], snap[1], snap[2]
        for s in [s for s in self.replacements if s.unbacked and s in old_ranges]:
            del self.replacements[s]
        for s, v in old_repl.items():
            if s.unbacked:
                self.replacements[s] = subs(v, self.replacements) if type(v) is Expr else v
        for s, vr in old_ranges.items():
            if s.unbacked:
                self.ranges[s] = vr
        self.facts = [f for f in self.facts if f in old_facts or
                      not any(s.unbacked for s in f.free_symbols)]
        self.assumptions = list(snap[7])
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
        text = c.format(self.user_label, py=True)      # Python the user can paste
        return GuardOnDataDependentError(
            "Could not decide `%s`%s: %s.\n"
            "Add `ss.check(%s)` (or its negation) before this line if you know it holds, "
            "or use `ss.cond` to keep both branches." % (text, where(frame), "; ".join(made),
                                                         text))

    # ------------------------------------------------------------------ solver
    @rule("env.add_guard")
    def add_guard(self, c, frame: Optional[UserFrame], kind: str = "guard",
                  reason: Optional[str] = None, data_dependent: bool = False) -> None:
        """Record ``c`` (true at the example values) and learn from it.  A
        ``data_dependent`` guard is checked at run time where its size is computed: it
        may replace or narrow that size, never an input size (``solver.learn_data_dependent``)."""
        stack = None
        if logs.guard_stack_filter and logs.guard_stack_filter in c.format():
            stack = user_stack(2)
        guard = Guard(c, frame, kind, stack, reason, data_dependent)
        self.guards.append(guard)
        if dynamic_log.isEnabledFor(logging.INFO):
            dynamic_log.info("guard added %s%s", c.format(py=True), where(frame))
            if stack:
                dynamic_log.info("  user stack for guard %s:\n%s", c.format(), "\n".join(
                    "    %s" % f.describe() for f in stack))
        outer, self._learning = self._learning, guard
        try:
            if data_dependent:
                solver.learn_data_dependent(self, c)
            else:
                solver.learn(self, c)
        finally:
            self._learning = outer

    # ------------------------------------------------------------------ what learning changes
    # The solver (solver.py) decides what a guard teaches; the methods below are the only way
    # it, the simplifier and the decision procedure change this environment, so that every
    # change invalidates the caches and records which guard caused it.

    def learning(self) -> Optional[Guard]:
        """The guard being learnt from now (None outside ``add_guard``)."""
        return self._learning

    def set_range(self, s: Sym, vr: ValueRange) -> None:
        """``s``'s range becomes ``vr`` (the solver has checked it is narrower)."""
        self._note(s)
        self.ranges[s] = vr
        self._bump()

    def set_replacement(self, s: Sym, value: IntLike) -> None:
        """Record ``s -> value`` and substitute it into every earlier replacement."""
        self._note(s)
        one = {s: value}
        for k in list(self.replacements):
            self.replacements[k] = subs(self.replacements[k], one)
        self.replacements[s] = value
        self._bump()

    def set_parent(self, child: Sym, parent: Sym) -> None:
        """``child`` was made to express ``parent`` (a quotient ``q`` of ``s = k*q + r``)."""
        self.infos[child].parent = parent

    def record_fact(self, c, guard=_LEARNING) -> bool:
        """Keep ``c`` as a fact, blamed on ``guard`` (default: the guard being learnt; None:
        no guard); False when it was already one."""
        if c in self.facts:
            return False
        self.facts.append(c)
        guard = self._learning if guard is _LEARNING else guard
        if guard is not None:
            self.fact_guards.setdefault(c, guard)
        if not self._rewriting:
            self._bump()
        return True

    def record_assumption(self, c) -> bool:
        """Keep ``c`` as an assumption (holds where the run-time checks passed); False
        when it was already one."""
        if c in self.assumptions:
            return False
        self.assumptions.append(c)
        if not self._rewriting:
            self._bump()
        return True

    def keep_facts(self, facts: List[R.Cond]) -> None:
        """The facts become ``facts`` (a subset the ranges do not imply)."""
        self.facts = list(facts)
        self._bump()

    @contextmanager
    def rewriting_facts(self):
        """Yields the facts and the assumptions, emptied to be recorded anew inside the block
        (``record_fact`` / ``record_assumption``); what was derived from them is recomputed
        once, when the block ends, not after every fact recorded."""
        old = self.facts, self.assumptions
        self.facts, self.assumptions = [], []
        self._rewriting = True
        try:
            yield old
        finally:
            self._rewriting = False
            self._bump()

    def fact_guard(self, c) -> Optional[Guard]:
        """The guard that taught fact ``c``, if known."""
        return self.fact_guards.get(c)

    @contextmanager
    def tightening(self):
        """While the ranges are tightened to the facts' projections: yields False when a
        tightening is already under way (it is not re-entered)."""
        if self._tightening:
            yield False
            return
        self._tightening = True
        try:
            yield True
        finally:
            self._tightening = False

    @contextmanager
    def folding_by_facts(self):
        """While the simplifier folds Min / Max by the facts (so it does not recurse)."""
        outer, self._folding_by_facts = self._folding_by_facts, True
        try:
            yield
        finally:
            self._folding_by_facts = outer

    def is_folding_by_facts(self) -> bool:
        """Whether ``folding_by_facts`` is under way."""
        return self._folding_by_facts

    def memo(self, table: str, key, compute: Callable, *args):
        """``compute(*args)``, remembered in one of the environment's caches until what it
        knows changes (``subs``, ``bound``, ``decide``; ``project`` and ``implied`` are kept
        across changes: their keys hold the ranges they depend on).  On the hot path of
        every export: the arguments are passed, never a closure made per call."""
        cache = self._caches[table]
        got = cache.get(key, _MISSING)
        if got is _MISSING:
            got = cache[key] = compute(*args)
        return got

    def fact_index(self, build: Callable[[], Dict[Sym, list]]) -> Dict[Sym, list]:
        """The facts by symbol (``build()``), until the facts change."""
        if self._fact_index is None:
            self._fact_index = build()
        return self._fact_index

    def forget_caches(self) -> None:
        """Something outside the solver changed the guards or checks (a branch's own
        checks dropped from the outer program): what was derived from them is recomputed."""
        self._bump()

    @property
    def version(self) -> int:
        """A number that changes whenever what the environment knows changes."""
        return self._version

    def adopt(self, infos: Dict[Sym, "SymInfo"], ranges: Dict[Sym, ValueRange], facts) -> None:
        """Take over symbols made elsewhere (a program lowered again keeps its symbols):
        their records, ranges and facts; later symbols are numbered after them."""
        self.infos.update(infos)
        self.ranges.update(ranges)
        syms = list(infos)
        self._count[False] = 1 + max([s.index for s in syms if not s.unbacked], default=-1)
        self._count[True] = 1 + max([s.index for s in syms if s.unbacked], default=-1)
        self.facts = list(facts)
        self._bump()

    def _note(self, s: Sym) -> None:
        if self._learning is not None:
            got = self.why.setdefault(s, [])
            if self._learning not in got:
                got.append(self._learning)

    def replace(self, s: Sym, value: IntLike) -> None:
        """Record ``s -> value`` (value over root symbols), keeping every invariant."""
        solver.replace(self, s, value)

    def refine(self, s: Sym, vr: ValueRange) -> None:
        """Narrow the range of ``s`` to its intersection with ``vr``."""
        solver.refine(self, s, vr)

    def add_fact(self, c) -> None:
        """Learn ``c`` as a fact (it is true and stays in the contract), tightening ranges."""
        solver.add_fact(self, c)

    # ------------------------------------------------------------------ user-level
    @rule("env.check")
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
        data_dependent = any(s.unbacked for s in c.free_symbols)
        d = self.decide(c)
        if d is True:
            return
        said = c.format(self.user_label)
        if d is False or (hint is False):
            raise UserError("ss.check(%s) is false for the example inputs%s%s" % (
                said, where(frame), (": " + message) if message else ""))
        if data_dependent:
            # checked where the size is computed, over the size itself (never only the
            # replaced form, which an earlier replacement may make trivially true)
            self.checks.append((c, message, frame))
            self.add_guard(c, frame, "check", data_dependent=True)
            return
        c = self.subst_cond(c)
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
    return format_expr(x, name, py=True)
