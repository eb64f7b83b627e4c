"""``projection.project`` for every goal, every list of facts and every range: the code run
along every path with the solver and ``bound`` replaced by their specifications, and the
bisection of ``_extreme`` proven by induction on its step (``bisect``).

The goal, facts and ranges are read by ``project`` only through ``bound``, ``_feasible``
(the solver over them), the goal's type, ``is_linear`` and its number of terms; so a
*point* is an element of an uninterpreted sort, ``feasible(p)`` (the facts and the ranges
hold at ``p``) and ``goal(p)`` (the goal's value there) uninterpreted functions: every
goal, facts and ranges at once.  The specifications:

* the solver (``_Feasible.value(extra)``, ``z3bridge`` on Z3): unknown (None); False, and
  then no feasible point satisfies ``extra``; or a value, the goal's value at a feasible
  point satisfying ``extra`` (a witness);
* ``bound`` (``range.bound``): a range holding the goal's value at every feasible point;
  exact for an int and for a goal of one linear term without facts (each finite end
  attained, values beyond any number past an infinite one);
* the caller's ``hint``: a range holding the goal's value at every feasible point.

A statement for every point is instantiated at the claim's point ``q`` and at each
witness (any instance of a statement for all points holds).  The loop of ``_extreme`` is
an induction: ``bisect`` keeps the invariant (``best`` attained, ``end`` finite and on the
near side of ``best``, no feasible value beyond ``end``) and narrows the gap, for every
state (``_bisect_step``); so the loop, when it ends (``best == end``), leaves a state with
the invariant, and ``project`` is proven with ``bisect`` standing for that: the invariant
proven at the loop's entry, the exit state fresh with the invariant.
"""
from __future__ import annotations

from typing import List

import z3

from . import every, proves
from .bounds_folds import given_range
from .code import prove_code
from .pyint import ProofFailure, require
from .symexec import Ext, Explorer, TrackedPy, interval, inside, patched as ends, to_pair

POINT = z3.DeclareSort("Point")
FEASIBLE = z3.Function("feasible", POINT, z3.BoolSort())
GOAL = z3.Function("goal", POINT, z3.IntSort())
Q = z3.Const("q", POINT)
ANY = z3.Const("any!", POINT)        # the placeholder a statement for every point is built at


def _lift(x) -> Ext:
    """An end as an Ext (a real infinity or an int as well)."""
    s, v = to_pair(x)
    return Ext(s, v)


def _holds(op: str, m, v):
    """``v op m`` for an Ext ``m`` (an infinite ``m`` on the far side holds every ``v``)."""
    m = m if isinstance(m, Ext) else Ext(0, m)
    if op == "<=":
        return z3.Or(m.s == 1, z3.And(m.s == 0, v <= m.v))
    return z3.Or(m.s == -1, z3.And(m.s == 0, v >= m.v))


def _in(r, v):
    return inside(*to_pair(r.lower), *to_pair(r.upper), v)


def _le(a, b):
    """``a <= b`` for two ends (Ext, int or a real infinity)."""
    (as_, av), (bs, bv) = to_pair(a), to_pair(b)
    return z3.Or(as_ < bs, z3.And(as_ == bs, z3.Or(as_ != 0, av <= bv)))


def _same(a, b):
    (as_, av), (bs, bv) = to_pair(a), to_pair(b)
    return z3.And(as_ == bs, z3.Or(as_ != 0, av == bv))


def _narrowed_lemma() -> None:
    """``narrowed_by(interval, hint)`` for every two ranges (ends symbolic, finite or
    infinite), along every path: a value both hold, the result holds; and when ``hint``
    holds all of ``interval``, the result is ``interval``."""
    from symshape.reasoning import projection
    i_lo, i_hi, i_wf, v, _ = interval("interval")
    h_lo, h_hi, h_wf, _, _ = interval("hint")
    ex = Explorer(i_wf + h_wf)

    def run():
        return projection.narrowed_by(given_range(i_lo, i_hi), given_range(h_lo, h_hi))
    with _Patched(ex):
        paths = ex.paths(run)
    _raise_on(paths, "narrowed_by")
    outs, cases = [], []
    for pc, out in paths:
        outs.append(z3.And(z3.Implies(z3.And(inside(i_lo.s, i_lo.v, i_hi.s, i_hi.v, v),
                                             inside(h_lo.s, h_lo.v, h_hi.s, h_hi.v, v)),
                                      _in(out, v)),
                           z3.Implies(z3.And(_le(h_lo, i_lo), _le(i_hi, h_hi)),
                                      z3.And(_same(out.lower, i_lo), _same(out.upper, i_hi)))))
        cases.append(z3.And(*pc))
    prove_code(lambda *x: z3.And(*[z3.Implies(on, y) for y, on in zip(x, cases)]),
               outs, i_wf, h_wf, what="narrowed_by")


class World:
    """One path's points (``q`` and the witnesses) and statements for every point."""

    def __init__(self, ex: Explorer) -> None:
        self.ex, self.points, self.alls, self.n = ex, [Q], [], 0

    def witness(self, *holds, conditional=None) -> z3.ExprRef:
        """A fresh feasible point where each of ``holds`` (functions of its value) holds
        (with ``conditional``: feasible where that holds)."""
        self.n += 1
        w = z3.Const("w!%d" % self.n, POINT)
        self.points.append(w)
        feasible = FEASIBLE(w) if conditional is None else z3.Implies(conditional,
                                                                      FEASIBLE(w))
        self.ex.assume(feasible, *[h(GOAL(w)) for h in holds])
        return w

    def forall(self, f, memo=None, key=None) -> None:
        """``f(point)`` holds at every point (instantiated at each point of the path: built
        once at a placeholder, substituted; with ``memo``, built once per ``key`` for all
        paths of a run)."""
        if memo is None:
            self.alls.append(f(ANY))
            return
        if key not in memo:
            memo[key] = f(ANY)
        self.alls.append(memo[key])

    def instances(self) -> List:
        return [z3.substitute(f, (ANY, p)) for f in self.alls for p in self.points]


class Target:
    """``solver.target``: comparing it with a number gives the condition on the goal."""

    def __le__(self, m):
        return ("<=", m)

    def __ge__(self, m):
        return (">=", m)


class Solver:
    """``_Feasible`` as its specification: each answer unknown, infeasible (no feasible
    point satisfies the condition) or the value at a witness satisfying it."""

    def __init__(self, world: World) -> None:
        self.world, self.target, self.calls = world, Target(), 0

    def value(self, extra):
        self.calls += 1
        ex, i = self.world.ex, self.calls
        if not ex.fork(z3.Bool("known!%d" % i)):
            return None
        cond = (lambda v: z3.BoolVal(True)) if extra is None else \
            (lambda v: _holds(extra[0], extra[1], v))
        if not ex.fork(z3.Bool("sat!%d" % i)):
            self.world.forall(lambda p: z3.Implies(FEASIBLE(p), z3.Not(cond(GOAL(p)))))
            return False
        return Ext(0, GOAL(self.world.witness(cond)))


def _invariant(world: World, best, end, minimize: bool):
    """The loop's invariant: ``best`` the value at a witness, ``end`` finite, on the near
    side of ``best``, and no feasible value beyond it (at ``q``)."""
    beyond = (lambda v: v >= end.v) if minimize else (lambda v: v <= end.v)
    return z3.And(best.s == 0, end.s == 0,
                  z3.Or(*[best.v == GOAL(w) for w in world.points[1:]]),
                  end.v <= best.v if minimize else best.v <= end.v,
                  z3.Implies(FEASIBLE(Q), beyond(GOAL(Q))))


class _Patched:
    """``projection``'s callees replaced while a run goes: ``is_inf`` sees Ext ends, and
    each name in ``stubs`` is the given stand-in."""

    def __init__(self, ex: Explorer, **stubs) -> None:
        from symshape.reasoning import projection
        from symshape.algebra.infinity import is_inf
        self.module, self.saved = projection, {}
        self.stubs = dict(stubs, is_inf=lambda x: ex.branch(x.s != 0) if isinstance(x, Ext)
                          else is_inf(x))
        self.ends = ends(ex)

    def __enter__(self):
        self.ends.__enter__()
        for name, f in self.stubs.items():
            self.saved[name] = getattr(self.module, name)
            setattr(self.module, name, f)
        return self

    def __exit__(self, *exc):
        for name, f in self.saved.items():
            setattr(self.module, name, f)
        return self.ends.__exit__(*exc)


def _raise_on(paths, what: str) -> None:
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s: raises %s: %s on the feasible path %s"
                               % (what, type(got).__name__, got, z3.And(*pc)))


def _bisect_step(minimize: bool) -> None:
    """``bisect(solver, best, end, minimize)`` for every state with the invariant and
    ``best != end``, under every answer of the solver, along every path: None, or a state
    with the invariant and a smaller gap."""
    from symshape.reasoning import projection
    e = z3.Int("end")
    ex = Explorer([])
    side = "lower" if minimize else "upper"

    def run():
        ex.P = TrackedPy()
        world = World(ex)
        w0 = world.witness()
        best, end = Ext(0, GOAL(w0)), Ext(0, e)
        ex.assume(_invariant(world, best, end, minimize), GOAL(w0) != e)
        beyond = (lambda v: v >= e) if minimize else (lambda v: v <= e)
        world.forall(lambda p: z3.Implies(FEASIBLE(p), beyond(GOAL(p))))   # at every point
        with _Patched(ex):
            out = projection.bisect(Solver(world), best, end, minimize)
        return out, world, best, end, ex.P
    paths = ex.paths(run)
    _raise_on(paths, "bisect")
    outs, cases = [], []
    for pc, (out, world, best, end, P) in paths:
        if out is None:
            continue
        nb, ne = out
        gap = (lambda x, y: x.v - y.v) if minimize else (lambda x, y: y.v - x.v)
        outs.append(z3.And(_invariant(world, nb, ne, minimize),
                           gap(nb, ne) < gap(best, end)))
        cases.append(z3.And(*pc, *world.instances(), *P.side))
    require(outs, "bisect settled nothing")
    prove_code(lambda *v: z3.And(*[z3.Implies(on, x) for x, on in zip(v, cases)]),
               outs, what="bisect keeps the invariant (%s end)" % side)


def _loop(world: World, entries: list):
    """``bisect`` standing for the rest of ``_extreme``'s loop (the induction, proven by
    ``_bisect_step``): the invariant at the entry is recorded as a claim; the loop gives
    up (None) or ends in a fresh state ``(b, b)`` with the invariant."""
    ex = world.ex

    def bisect(solver, best, end, minimize):
        entries.append(_invariant(world, best, end, minimize))
        if not ex.fork(z3.Bool("loop.known!%d" % len(entries))):
            return None
        w = world.witness()
        done = Ext(0, GOAL(w))
        beyond = (lambda v: v >= done.v) if minimize else (lambda v: v <= done.v)
        world.forall(lambda p: z3.Implies(FEASIBLE(p), beyond(GOAL(p))))
        return done, done
    return bisect


def _extreme_paths(minimize: bool) -> None:
    """``_extreme(solver, best, end, minimize)`` for every feasible ``best`` and every
    ``end`` (finite, on the near side of ``best`` with nothing feasible beyond it, or
    infinite on the far side), under every answer of the solver and of the loop, along
    every path: None, an infinity on the far side (only from an infinite ``end``), or a
    value attained at a feasible point with nothing feasible beyond it."""
    from symshape.reasoning import projection
    e_s, e_v = z3.Ints("end.s end.v")
    far = -1 if minimize else 1
    hyps = [z3.Or(e_s == 0, e_s == far), z3.Implies(e_s != 0, e_v == 0)]
    ex = Explorer(hyps)

    def run():
        ex.P = TrackedPy()
        world, entries = World(ex), []
        w0 = world.witness()
        best, end = Ext(0, GOAL(w0)), Ext(e_s, e_v)
        beyond = (lambda v: v >= e_v) if minimize else (lambda v: v <= e_v)
        ex.assume(z3.Implies(e_s == 0, beyond(GOAL(w0))))
        world.forall(lambda p: z3.Implies(z3.And(FEASIBLE(p), e_s == 0), beyond(GOAL(p))))
        with _Patched(ex, bisect=_loop(world, entries)):
            out = projection._extreme(Solver(world), best, end, minimize)
        return out, world, entries, ex.P
    paths = ex.paths(run)
    _raise_on(paths, "_extreme")
    outs, cases = [], []
    for pc, (out, world, entries, P) in paths:
        claims = list(entries)
        if out is not None:
            s, v = to_pair(out)
            beyond = (lambda x: x >= v) if minimize else (lambda x: x <= v)
            claims.append(z3.If(s == 0, z3.And(z3.Or(*[v == GOAL(w) for w in world.points[1:]]),
                                              z3.Implies(FEASIBLE(Q), beyond(GOAL(Q)))),
                                z3.And(s == far, e_s == far)))
        if claims:
            outs.append(z3.And(*claims))
            cases.append(z3.And(*pc, *world.instances(), *P.side))
    prove_code(lambda *x: z3.And(*[z3.Implies(on, y) for y, on in zip(x, cases)]),
               outs, hyps, what="_extreme (%s end)" % ("lower" if minimize else "upper"))


class Goal:
    """A goal as ``project`` reads it: not an int, ``is_linear`` and its number of terms
    free (branches)."""

    def __init__(self, ex: Explorer) -> None:
        self.ex = ex

    def is_linear(self) -> bool:
        return self.ex.branch(z3.Bool("linear"))

    @property
    def terms(self) -> list:
        return [self] if self.ex.branch(z3.Bool("one_term")) else [self, self]


class Constant(Ext):
    """An int goal (its value symbolic): ``type`` reads it as an int."""


class Facts:
    """The facts as ``project`` reads them: iterated (empty or not: a branch), the list
    handed on."""

    def __init__(self, ex: Explorer) -> None:
        self.ex, self.items = ex, None

    def __iter__(self):
        self.items = ["a fact"] if self.ex.branch(z3.Bool("has_facts")) else []
        return iter(self.items)


def _attained(world: World, end):
    """A finite ``end`` is the goal's value at a feasible point of the path."""
    s, e = to_pair(end)
    return z3.Implies(s == 0, z3.Or(*[z3.And(FEASIBLE(w), e == GOAL(w))
                                      for w in world.points]))


def _project_prefix() -> None:
    """``project(goal, facts, ranges, budget, hint)`` returns what ``projected`` returns,
    handing it its arguments and an interval that holds the goal at every feasible point
    and, when ``bound`` is exact (an int, or one linear term without facts: ``exact``),
    has each finite end attained; with or without a hint (``narrowed_by`` as its
    specification), every interval and hint, along every path."""
    from symshape.reasoning import projection
    ex = Explorer([])
    exact = z3.Bool("exact")
    b_lo, b_hi, b_wf, _, _ = interval("bound")
    h_lo, h_hi, h_wf, _, _ = interval("hint")
    r_lo, r_hi, r_wf, _, _ = interval("narrowed")
    p_lo, p_hi, p_wf, _, _ = interval("projected")
    goal, facts, ranges, budget = object(), object(), {}, object()

    def run():
        ex.P = TrackedPy()
        world, handed = World(ex), []

        def bound(x, rng):
            require(x is goal, "project bounds %r, not its goal", x)
            ex.assume(*b_wf)
            world.forall(lambda p: z3.Implies(FEASIBLE(p), inside(b_lo.s, b_lo.v, b_hi.s,
                                                                   b_hi.v, GOAL(p))))
            # exact: each finite end attained; beyond an infinite end values as far as any
            # number (instantiated at the hint's ends)
            for end, far, past in ((b_lo, h_lo, lambda v, m: v < m),
                                   (b_hi, h_hi, lambda v, m: v > m)):
                world.witness(lambda v, end=end, far=far, past=past: z3.Implies(
                    exact, z3.If(end.s == 0, v == end.v,
                                 z3.Implies(far.s == 0, past(v, far.v)))), conditional=exact)
            return given_range(b_lo, b_hi)

        def narrowed_by(interval_, hint_):
            ex.assume(*r_wf, z3.Implies(z3.And(_le(hint_.lower, interval_.lower),
                                               _le(interval_.upper, hint_.upper)),
                                        z3.And(_same(r_lo, interval_.lower),
                                               _same(r_hi, interval_.upper))))
            world.forall(lambda p: z3.Implies(z3.And(_in(interval_, GOAL(p)),
                                                     _in(hint_, GOAL(p))),
                                              inside(r_lo.s, r_lo.v, r_hi.s, r_hi.v,
                                                     GOAL(p))))
            return given_range(r_lo, r_hi)

        def projected(*args):
            handed.append(args)
            ex.assume(*p_wf)
            return given_range(p_lo, p_hi)     # what projected returns (_projected_paths)
        hint = None
        if ex.fork(z3.Bool("hinted")):
            ex.assume(*h_wf)
            world.forall(lambda p: z3.Implies(FEASIBLE(p), inside(h_lo.s, h_lo.v, h_hi.s,
                                                                   h_hi.v, GOAL(p))))
            hint = given_range(h_lo, h_hi)
        with _Patched(ex, bound=bound, narrowed_by=narrowed_by, projected=projected):
            out = projection.project(goal, facts, ranges, budget, hint)
        return out, world, handed, ex.P
    paths = ex.paths(run)
    _raise_on(paths, "project")
    outs, cases = [], []
    for pc, (out, world, handed, P) in paths:
        require(len(handed) == 1 and handed[0][:4] == (goal, facts, ranges, budget),
                "project does not hand its arguments to projected: %s", handed)
        iv = handed[0][4]
        outs.append(z3.And(_same(out.lower, p_lo), _same(out.upper, p_hi),   # its answer
                           z3.Implies(FEASIBLE(Q), _in(iv, GOAL(Q))),
                           z3.Implies(exact, z3.And(_attained(world, iv.lower),
                                                    _attained(world, iv.upper)))))
        cases.append(z3.And(*pc, *world.instances(), *P.side))
    prove_code(lambda *x: z3.And(*[z3.Implies(on, y) for y, on in zip(x, cases)]),
               outs, what="project's interval")


def _projected_paths(constant: bool) -> int:
    """``projected(goal, facts, ranges, budget, interval)`` along every path, for every
    interval that holds the goal at every feasible point (each finite end attained when
    the goal is an int, or one linear term without facts): the range it returns holds the
    goal's value at every feasible point, and each finite end is the value at a feasible
    point unless the solver left that side unsettled."""
    from symshape.reasoning import projection
    import builtins
    ex = Explorer([])
    i_lo, i_hi, i_wf, _, _ = interval("interval")
    sound = z3.Implies(FEASIBLE(ANY), inside(i_lo.s, i_lo.v, i_hi.s, i_hi.v, GOAL(ANY)))

    def run():
        ex.P = TrackedPy()
        world = World(ex)
        settled, facts = {}, Facts(ex)
        goal = Constant(0, z3.Int("g")) if constant else Goal(ex)
        if constant:
            world.forall(lambda p: GOAL(p) == goal.v)
            exact = z3.BoolVal(True)
        else:
            exact = z3.And(z3.Not(z3.Bool("has_facts")), z3.Bool("linear"),
                           z3.Bool("one_term"))
        ex.assume(*i_wf)
        world.alls.append(sound)
        for end in (i_lo, i_hi):                # exact: each finite end attained
            world.witness(lambda v, end=end: z3.Implies(z3.And(exact, end.s == 0),
                                                        v == end.v), conditional=exact)

        def feasible(g, fs, ranges, budget):
            require(g is goal and fs == facts.items, "projected hands the solver %r", fs)
            solver = Solver(world)
            first = solver.value(None)
            if first is None:                # unknown: neither end is settled
                settled[True] = settled[False] = False
            return solver, first

        def extreme(solver, best, end, minimize):
            """``_extreme`` as its specification (``_extreme_paths``)."""
            n = len(settled) + 1
            settled[minimize] = ex.fork(z3.Bool("extreme.known!%d" % n))
            if not settled[minimize]:
                return None
            far = -1 if minimize else 1
            if ex.branch(z3.And(z3.Bool("extreme.far!%d" % n), _lift(end).s != 0)):
                return Ext(far, 0)
            w = world.witness()
            m = GOAL(w)
            beyond = (lambda v: v >= m) if minimize else (lambda v: v <= m)
            world.forall(lambda p: z3.Implies(FEASIBLE(p), beyond(GOAL(p))))
            return Ext(0, m)
        projection.type = lambda x: int if isinstance(x, Constant) else builtins.type(x)
        try:
            with _Patched(ex, _feasible=feasible, _extreme=extreme):
                out = projection.projected(goal, facts, {}, None, given_range(i_lo, i_hi))
        finally:
            del projection.type
        return out, world, settled, ex.P
    paths = ex.paths(run)
    _raise_on(paths, "projected")
    outs, cases = [], []
    for pc, (out, world, settled, P) in paths:
        attained = [_attained(world, end) for minimize, end in ((True, out.lower),
                                                                 (False, out.upper))
                    if settled.get(minimize, True)]      # unknown: sound only
        outs.append(z3.And(_in(out, GOAL(Q)), *attained))
        cases.append(z3.And(*pc, *world.instances(), FEASIBLE(Q), *P.side))
    prove_code(lambda *x: z3.And(*[z3.Implies(on, y) for y, on in zip(x, cases)]),
               outs, what="projected%s" % (" of a constant" if constant else ""))
    return len(paths)


@proves("project.exact", over=every(
    "every goal, list of facts and ranges (the code reads them only through bound, the "
    "solver over them, the goal's type, is_linear and number of terms: a point is an "
    "element of an uninterpreted sort, the facts' truth and the goal's value at it "
    "uninterpreted functions), with and without a hint (any sound range), under every "
    "answer of the solver (unknown, infeasible, a value at a witness), every interval "
    "(ends symbolic, finite or infinite), along every path; the bisection by induction on "
    "its step (bisect, every state with the invariant), _extreme and narrowed_by proven "
    "for every state and used as specifications; bound as its specification "
    "(range.bound: sound; exact for an int and for one linear term: each finite end "
    "attained, an infinite end unbounded): the range holds the goal at every feasible "
    "point and each finite end the solver settled is attained"))
def project_exact():
    """The bisection step for both ends, ``_extreme`` and ``narrowed_by``, then
    ``project``'s interval (with and without a hint) and ``projected`` (with and without
    facts: a branch) on a goal and on a constant."""
    _bisect_step(True)
    _bisect_step(False)
    _extreme_paths(True)
    _extreme_paths(False)
    _narrowed_lemma()
    _project_prefix()
    _projected_paths(False)
    _projected_paths(True)
