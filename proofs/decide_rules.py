"""Proofs of the decision procedure as a whole (``symshape/reasoning/decision.py``) and of
the Z3 query it ends in (``z3bridge.implies``).

``decide.sound`` is over samples: for each of three environments (symbol ranges, recorded
guards: facts and replacements) and every other condition of ``conditions`` (linear forms
``a*x + b*y + c`` with every coefficient in ``COEFFS`` and constant in ``CONSTS``, and the
same with ``x // 2``, ``x % 3``, ``Min(x, y)``, ``Max(x, y)`` and ``x*y`` in place of
``y``; each compared with ``<=``, ``==`` and ``!=``), the answer ``decide`` gives is proven
right: ``True`` only when the knowledge implies the condition, ``False`` only when it
implies its negation (Z3, over every point).  Steps of it are proven along every path on
symbolic inputs in ``proofs/decide_every.py``.  ``implies`` is proven on every condition of
a grammar with symbolic coefficients, constants, divisors and range ends.  The
related-fact closure is checked against the transitive closure computed here.
"""
from __future__ import annotations

import itertools

import z3

from symshape.reasoning import decision
from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.infinity import INT_OO
from symshape.algebra.ranges import ValueRange

from . import bounded, samples, proves
from .code import Symbols, divisors, encode, encode_cond, prove_code
from .pyint import ProofFailure, Py, require
from .solver_rules import _in_ranges

COEFFS = (-1, 0, 1, 2)
CONSTS = (-3, 0, 2)


def conditions(x, y, products: bool = True) -> list:
    """The grammar: every ``a*x + b*t + c <op> 0`` for ``t`` among ``y`` and the atoms
    over ``x``, ``y`` (``x*y`` only with ``products``)."""
    terms = [y, E.floordiv(x, 2), E.mod(x, 3), E.smin(x, y), E.smax(x, y)]
    terms += [x * y] if products else []
    out = []
    for t in terms:
        for a, b, c in itertools.product(COEFFS, COEFFS, CONSTS):
            if a == b == 0:
                continue
            e = a * x + b * t + c
            for op in (R.LE, R.EQ, R.NE):
                r = R.make(op, e)
                if type(r) is not bool:
                    out.append(r)
    return list(dict.fromkeys(out))


def _environments():
    """(name, env, symbols): boxes with finite and infinite ends, without and with
    recorded guards (an inequality between the two, a divisibility, an equality)."""
    env_of = _fresh_env
    yield ("box", *env_of([(5, 2, INT_OO), (3, 0, 9)], []))
    yield ("x >= y + 2", *env_of([(6, 2, INT_OO), (3, 2, INT_OO)],
                                 [lambda x, y: R.ge(x, y + 2)]))
    yield ("x + y <= 12, x % 2 == 0", *env_of([(4, 2, INT_OO), (5, 1, INT_OO)],
                                              [lambda x, y: R.le(x + y, 12),
                                               lambda x, y: R.eq(E.mod(x, 2), 0)]))


def _knowledge(P_, env: ShapeEnv, zs) -> list:
    """What the environment knows, in Z3: root ranges, facts, replacements."""
    k = _in_ranges(env, zs, [s for s in env.ranges if s not in env.replacements])
    k += [encode_cond(P_, f, zs) for f in env.facts]
    k += [zs[s] == encode(P_, v, zs) for s, v in env.replacements.items()]
    return k


@proves("decide.sound",
        over=samples("every second condition of the grammar under three environments"))
def decide_sound():
    decided = 0
    for name, env, syms in _environments():
        x, y = (s.expr for s in syms)
        P_ = Py()
        zs = Symbols()
        know = _knowledge(P_, env, zs)
        cases, impl = [], []
        for c in conditions(x, y)[::2]:
            ans = decision.decide(env, c)
            if ans is None:
                continue
            want = encode_cond(P_, c, zs)
            defined = [d != 0 for d in divisors(P_, c, zs)]
            cases.append((want, defined))
            impl.append(z3.BoolVal(ans))
        decided += len(cases)

        def claim(*vs, cases=cases):
            return z3.And(*[z3.Implies(z3.And(*d), w == v) for (w, d), v in zip(cases, vs)])
        prove_code(claim, impl, know, P=P_,
                   what="decide on %d conditions under %s" % (len(cases), name))
    require(decided >= 150, "decide settled only %d conditions of the grammar", decided)


#: the symbols of ``decide_related_facts``'s fact sets, and their non-empty subsets
_FACT_SYMS = 3


@proves("decide.related_facts",
        over=bounded("every set of facts and assumptions over 3 symbols (each non-empty "
                     "symbol set absent, a fact or an assumption: 3^7 environments) and "
                     "every non-empty start set"))
def decide_related_facts():
    """The closure depends on the facts only through their symbol sets: over three symbols
    every hypergraph of symbol sets (each of the 7 non-empty sets holding no fact, a fact or
    an assumption), from every start set, ``related_facts`` returns exactly the facts
    reachable through shared symbols (the closure computed here)."""
    env = ShapeEnv()
    syms = [env.create_symbol(2, "r%d" % i, ValueRange(0, INT_OO)) for i in range(_FACT_SYMS)]
    subsets = [frozenset(s for i, s in enumerate(syms) if mask >> i & 1)
               for mask in range(1, 2 ** _FACT_SYMS)]
    # one distinct relation per symbol set: the sum of its symbols at most its index
    rel = [R.le(sum(s.expr for s in sub), k) for k, sub in enumerate(subsets)]
    checked = 0
    for kinds in itertools.product((None, "fact", "assumption"), repeat=len(subsets)):
        facts = [r for r, k in zip(rel, kinds) if k == "fact"]
        env.keep_facts(facts)
        env.assumptions = [r for r, k in zip(rel, kinds) if k == "assumption"]
        env.forget_caches()
        for start in subsets:
            got = decision.related_facts(env, start)
            require(len(got) == len(set(got)), "related facts of %s repeat one: %s",
                    start, got)
            want = _closure(facts + env.assumptions, start)
            require(set(got) == want, "facts %s, assumptions %s: related facts of %s are "
                    "%s, the closure is %s", facts, env.assumptions, set(start), got, want)
            checked += 1
    require(checked == 3 ** len(subsets) * len(subsets), "only %d closures checked", checked)
    from .code import STATS
    STATS["code_claims"] += 1


def _closure(facts, start) -> set:
    """The facts reachable from the symbols ``start`` through shared symbols."""
    reach, want, grew = set(start), set(), True
    while grew:
        grew = False
        for f in facts:
            if f not in want and f.free_symbols & reach:
                want.add(f)
                reach |= f.free_symbols
                grew = True
    return want


#: the symbols of the implies grammar
IX, IY = E.Sym(972), E.Sym(973)
_OPS = (R.EQ, R.NE, R.LE)


def _implies_grammar(tag: str) -> list:
    """Every relation ``c1*x + c2*t + k <op> 0`` of the grammar (``t`` among ``y``,
    ``x*y``, ``Min(x, y)``, ``Max(x, y)``, ``x // d``, ``x % d``; every op), and every
    ``and`` / ``or`` of two linear relations over ``x``, ``y``: coefficients, constants and
    divisors fresh symbolic integers (named with ``tag``), the non-zero coefficients of an
    ``Expr`` as hypotheses.  (builder, hypotheses) pairs; a builder runs under
    ``symcoeff.patched``."""
    from .symcoeff import sym_ints
    out = []

    def linear(name, t, op):
        c1, c2, k = sym_ints("%s.c1 %s.c2 %s.k" % ((name,) * 3))
        hyps = [c1.v != 0, c2.v != 0]
        return (lambda: R.Rel(op, E.Expr({(IX,): c1, t(): c2}, k))), hyps
    for op in _OPS:
        for kind in ("y", "x*y", "Min", "Max", "FloorDiv", "Mod"):
            name = "%s.%s%s" % (tag, kind, op)
            d, = sym_ints(name + ".d")
            terms = {"y": lambda: (IY,), "x*y": lambda: (IX, IY),
                     "Min": lambda: (E.OpAtom("Min", (IX.expr, IY.expr)),),
                     "Max": lambda: (E.OpAtom("Max", (IX.expr, IY.expr)),),
                     "FloorDiv": lambda d=d: (E.OpAtom("FloorDiv", (IX.expr, d)),),
                     "Mod": lambda d=d: (E.OpAtom("Mod", (IX.expr, d)),)}
            out.append(linear(name, terms[kind], op))
    for kind in ("and", "or"):
        for op in _OPS:
            for op2 in _OPS:
                (a, ha), (b, hb) = (linear("%s.%s%s%s.%d" % (tag, kind, op, op2, i),
                                           lambda: (IY,), o) for i, o in ((0, op), (1, op2)))
                out.append(((lambda a=a, b=b, kind=kind: R.BoolOp(kind, (a(), b()))),
                            ha + hb))
    return out


def _range_cases(tag: str) -> list:
    """Every end case of a range: each end finite (a symbolic integer) or infinite; the
    (range, its meaning for a member v, well-formedness) triples."""
    from types import SimpleNamespace
    from symshape.algebra.infinity import NEG_INT_OO
    lo, hi = z3.Ints("%s.lo %s.hi" % (tag, tag))
    out = []
    for low in (lo, NEG_INT_OO):
        for high in (hi, INT_OO):
            fin = [low is lo, high is hi]
            out.append((SimpleNamespace(lower=low, upper=high),
                        lambda v, low=low, high=high, fin=fin: z3.And(
                            *([v >= low] if fin[0] else []), *([v <= high] if fin[1] else [])),
                        [lo <= hi] if all(fin) else []))
    return out


class _Recorder:
    """A solver standing in for Z3's inside ``implies``: it keeps what the code asserts
    and answers each ``check`` as the plan says (the plans cover every verdict)."""

    def __init__(self, plan: list) -> None:
        self.assertions, self.plan, self.verdict = [], plan, None

    def set(self, *args, **kwargs) -> None:
        """Limits: irrelevant to a planned verdict."""

    def add(self, *fs) -> None:
        """Record the assertions."""
        self.assertions += fs

    def check(self):
        """The planned verdict."""
        self.verdict = self.plan.pop(0)
        return self.verdict


class _Shim:
    """The ``z3`` module as ``implies`` sees it in the proof: Z3 itself, except that an
    integer constant may be a symbolic integer (its term) and a solver is a ``_Recorder``."""

    def __init__(self, plan) -> None:
        self.plan, self.solvers = list(plan), []

    def __getattr__(self, name):
        return getattr(z3, name)

    def IntVal(self, x):   # noqa: N802 (z3's name)
        """A coefficient: an int or a symbolic integer."""
        from .symcoeff import value
        return value(x)

    def Solver(self):      # noqa: N802
        """A recording solver."""
        s = _Recorder(self.plan)
        self.solvers.append(s)
        return s


#: every verdict pattern of the two queries (refuted at once; then proven; neither)
_PLANS = ((z3.unsat,), (z3.sat, z3.unsat), (z3.unknown, z3.sat))


def _means(P_, c, zs):
    """The Python meaning of a condition with symbolic coefficients, and where it is
    defined (its divisors non-zero)."""
    from .symcoeff import divisors_of, encode_cond as sym_cond
    if isinstance(c, R.BoolOp):
        parts = [_means(P_, a, zs) for a in c.args]
        val = z3.And(*[p for p, _ in parts]) if c.op == "and" else z3.Or(*[p for p, _ in parts])
        return val, [d for _, ds in parts for d in ds]
    return sym_cond(P_, c, zs), [d != 0 for d in divisors_of(P_, c.expr, zs)]


def _implies_on(premises, goal, rx, ry, what: str) -> int:
    """``implies`` run on premises and a goal of the grammar (builders with their
    hypotheses) and the ranges ``rx``, ``ry`` (``_range_cases``) under every verdict
    plan: where it answers True (False), the query whose refutation it read is
    satisfiable at every point of the ranges where the premises hold, everything is
    defined and the goal fails (holds) -- its quotients the Python ones -- so an
    unsatisfiable query means the implication (its negation) holds."""
    from symshape.reasoning import z3bridge as ZB
    from .symcoeff import encode as sym_encode, patched
    from .symexec import Explorer
    hyps = [h for _, hs in premises + [goal] for h in hs] + rx[2] + ry[2]
    ex = Explorer(hyps)
    made = []

    class Recording(ZB.Encoder):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    def run():
        out = []
        prem, g = [b() for b, _ in premises], goal[0]()   # built once: each build branches
        for plan in _PLANS:
            shim = _Shim(plan)
            saved = ZB._z3, ZB.Encoder
            ZB._z3, ZB.Encoder = shim, Recording
            try:
                ans = ZB.implies(prem, g, {IX: rx[0], IY: ry[0]})
            finally:
                ZB._z3, ZB.Encoder = saved
            out.append((prem, g, ans, shim.solvers, made[-1]))
        return out
    with patched(ex):
        paths = ex.paths(run)
    answers = set()
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s: implies raises %r on the path %s" % (what, got, pc))
        for prem, g, ans, solvers, enc in got:
            answers.add(ans)
            if ans is None:
                continue
            P_ = Py()
            zs = Symbols()
            read = [s for s in solvers if s.verdict == z3.unsat]
            require(len(read) == 1, "%s: answered %s reading %d refutations", what, ans,
                    len(read))
            divmods = [a for a in enc._atoms if a.kind in ("FloorDiv", "Mod")]
            witness = [(q, P_.floordiv(sym_encode(P_, a.args[0], zs),
                                       sym_encode(P_, a.args[1], zs)))
                       for a, q in zip(divmods, enc.fresh)]
            query = z3.substitute(z3.And(*read[0].assertions), *witness)
            gv, gd = _means(P_, g, zs)
            know = [rx[1](zs[IX]), ry[1](zs[IY])] + gd
            for p in prem:
                pv, pd = _means(P_, p, zs)
                know += [pv] + pd
            know.append(z3.Not(gv) if ans else gv)
            prove_code(lambda q: q, [query], hyps, pc, know, P=P_,
                       what="%s: the query behind answer %s" % (what, ans))
    require({True, False} <= answers, "%s: implies answered only %s", what, answers)
    return len(paths)


@proves("z3bridge.implies",
        over=bounded("every goal of the grammar c1*x + c2*t + k <op> 0 (t among y, x*y, "
                     "Min(x, y), Max(x, y), x // d, x % d; every op; and / or of two "
                     "linear ones) with no premise, every premise of it before a linear "
                     "goal, every finite / infinite end case of both ranges; coefficients, "
                     "constants, divisors and range ends symbolic; every solver verdict"))
def z3bridge_implies():
    """``implies``'s own code run on symbolic conditions and ranges (a solver that records
    the queries and answers as planned): wherever it answers, the query it read is
    satisfiable wherever the answer would be wrong (``_implies_on``), the quotients of the
    encoder there Python's (they exist and are unique for every non-zero divisor:
    ``z3bridge.divmod_encoding``).  The query is a conjunction of the premises', the
    goal's and the ranges' encodings, so the cases below (each goal, each premise, each
    range case, each on its own) make up every combination of them."""
    cases = _range_cases("x"), _range_cases("y")
    full = cases[0][0], cases[1][0]
    goals = _implies_grammar("g")
    runs = 0
    for goal in goals:
        runs += _implies_on([], goal, *full, "implies(%d)" % runs)
    linear = goals[0]
    for prem in _implies_grammar("p"):
        runs += _implies_on([prem], linear, *full, "implies(%d)" % runs)
    for rx in cases[0]:
        for ry in cases[1]:
            runs += _implies_on([], linear, rx, ry, "implies(%d)" % runs)
    require(runs >= 88, "implies ran on only %d inputs", runs)


def _fresh_env(specs, guards):
    env = ShapeEnv()
    syms = [env.create_symbol(h, "v%d" % i, ValueRange(lo, hi))
            for i, (h, lo, hi) in enumerate(specs)]
    for g in guards:
        env.add_guard(g(*(s.expr for s in syms)), None)
    return env, syms


#: environments (symbol (example, lower, upper) triples, guards) for evaluate / check
EVAL_ENVS = [([(5, 2, INT_OO), (3, 0, 9)], []),
             ([(6, 2, INT_OO), (3, 2, INT_OO)], [lambda x, y: R.ge(x, y + 2)])]


class _After:
    """Claims "on every point the environment now admits, ``c`` has the value ``answer``",
    one per environment, proven together (``prove``: one query for them all; each
    environment's knowledge is the hypothesis of its own claim)."""

    def __init__(self) -> None:
        self.P = Py()
        self.zs = Symbols()
        self.cases: list = []

    def add(self, env, c, answer) -> None:
        """The claim for ``env`` (as it is now), ``c`` and the code's ``answer``."""
        know = z3.And(*_knowledge(self.P, env, self.zs))
        want = encode_cond(self.P, c, self.zs)
        defined = z3.And(*[d != 0 for d in divisors(self.P, c, self.zs)])
        self.cases.append((know, defined, want, z3.BoolVal(answer)))

    def prove(self, what: str) -> None:
        """All the claims at once."""
        cases = self.cases
        prove_code(lambda *vs: z3.And(*[z3.Implies(z3.And(k, d), w == v)
                                        for (k, d, w, _), v in zip(cases, vs)]),
                   [a for _, _, _, a in cases], P=self.P,
                   what="%s on %d conditions" % (what, len(cases)))


def _graded(every: int, envs=None, one_symbol: bool = False):
    """(fresh environment, condition, its value at the example) for every ``every``-th
    condition of the grammar under each of ``envs`` (default ``EVAL_ENVS``; only those
    defined at the example; ``one_symbol``: of the conditions over one symbol only)."""
    from symshape.algebra.expr import evaluate as value_at
    for specs, guards in envs or EVAL_ENVS:
        env0, syms0 = _fresh_env(specs, guards)
        grammar = conditions(*(s.expr for s in syms0))
        if one_symbol:
            grammar = [c for c in grammar if len(c.free_symbols) == 1]
        for c in grammar[::every]:
            env, syms = _fresh_env(specs, guards)
            point = {s: h for s, (h, _, _) in zip(syms, specs)}
            try:
                ex = value_at(c.expr, point)
            except ZeroDivisionError:
                continue
            yield env, c, (ex == 0 if c.op == R.EQ else (ex != 0 if c.op == R.NE else ex <= 0))


@proves("env.evaluate", over=samples("graded environments"))
def env_evaluate():
    """For every twentieth condition of the grammar, in a fresh environment: the bool
    ``evaluate`` returns is the condition's value on every point the environment admits
    afterwards (decided, or the guard it recorded), and its value at the example."""
    after = _After()
    for env, c, truth in _graded(20):
        got = env.evaluate(c, truth)
        require(got == truth, "evaluate(%s) is %s at the example, where it is %s",
                c, got, truth)
        after.add(env, c, got)
    after.prove("evaluate")


@proves("env.check", over=samples("graded environments"))
def env_check():
    """``check`` on every tenth condition of the grammar true at the example: afterwards
    every point the environment admits satisfies it; on one false at the example it
    raises a UserError."""
    from symshape.errors import UserError
    raised = 0
    after = _After()
    for env, c, truth in _graded(10):
        try:
            env.check(c, truth)
        except UserError:
            require(not truth, "check(%s) raised where the example satisfies it", c)
            raised += 1
            continue
        require(truth, "check(%s) passed where the example violates it", c)
        after.add(env, c, True)
    after.prove("check")
    require(raised > 0, "no condition of the grammar was false at the example")


def expressions(x, y) -> list:
    """The sizes of the grammar: ``a*x + b*t + c`` for every ``t`` of ``conditions``."""
    terms = [y, E.floordiv(x, 2), E.mod(x, 3), E.smin(x, y), E.smax(x, y), x * y]
    out = []
    for t in terms:
        for a, b, c in itertools.product(COEFFS, COEFFS, CONSTS):
            e = a * x + b * t + c
            if type(e) is not int:
                out.append(e)
    return list(dict.fromkeys(out))


@proves("bounds.pipeline", over=samples("the grammar under three environments"))
def bounds_pipeline():
    """``ss.bounds`` (``bounds_expr``) on every tenth size of the grammar under each
    environment: the range holds the size on every admitted point (Z3), and each finite
    end is attained by an admitted point (Z3: a model)."""
    from symshape.algebra.infinity import is_inf
    from symshape.reasoning.symbolic import bounds_expr
    finite = 0
    for name, env, syms in _environments():
        x, y = (s.expr for s in syms)
        for e in expressions(x, y)[::10]:
            got = bounds_expr(env, e)
            P_ = Py()
            zs = Symbols()
            know = _knowledge(P_, env, zs)
            v = encode(P_, e, zs)
            know += [d != 0 for d in divisors(P_, e, zs)]
            ends = [(b, low) for b, low in ((got.lower, True), (got.upper, False))
                    if not is_inf(b)]
            if not ends:
                continue
            prove_code(lambda *bs: z3.And(*[v >= b if low else v <= b
                                            for b, (_, low) in zip(bs, ends)]),
                       [z3.IntVal(b) for b, _ in ends], know, P=P_,
                       what="bounds(%s) = %s under %s" % (e, got, name))
            for b, _ in ends:
                s = z3.Solver()
                s.add(*know, *P_.side, v == b)
                require(s.check() == z3.sat, "bounds(%s) end %s under %s is not attained",
                        e, b, name)
                finite += 1
    require(finite >= 30, "only %d finite ends", finite)


@proves("env.add_guard", over=samples("the grammar under fixed environments"))
def env_add_guard():
    """Every eighth condition of the grammar true at the example, learnt by a fresh
    environment over a box (one symbol's range finite, one not): whatever the solver
    makes of it (a replacement, a narrowed range, a divisibility quotient, a fact), the
    points admitted afterwards are exactly the guard's solutions in the box."""
    from .solver_rules import _solutions_kept
    specs = EVAL_ENVS[0][0]
    learnt = 0
    for env, c, truth in _graded(8, [(specs, [])]):
        if not truth:
            continue
        syms = [s for s in env.ranges][:len(specs)]
        old = dict(env.ranges)
        env.add_guard(c, None)
        _solutions_kept(old, c, env, syms, "add_guard")
        learnt += 1
    require(learnt >= 20, "only %d guards learnt", learnt)
