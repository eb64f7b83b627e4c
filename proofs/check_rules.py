"""Proofs of the generated checks, of substitution and replacement, and of the sympy bridge,
each on the code's own output.

* ``check.emitted``: representative programs (derived dims, divisibility, guards between
  inputs, int inputs, nested containers, data-dependent ``ss.check``) are traced; the input
  check records the writer builds (the ones its renderer writes as Python) are given their
  Z3 meaning (``symshape.contract.meaning.CheckMeaning``) and shown to accept exactly the admitted
  sizes, and the run-time check lines to imply every ``ss.check`` on data-dependent sizes.
  Dropping one size test is caught.
* ``subst.subs_replace``: ``subs`` output equals the simultaneous substitution in Z3; the
  environment's facts after a replacement say what they said before, given it.
* ``sympy.bridge``: the sympy expression ``to_sympy`` builds is read back into Z3 and shown
  equal to the expression; each symbol's sympy assumptions hold on its whole range.
"""
from __future__ import annotations

import numpy as np
import z3

import symshape as ss
from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning import validate as V
from symshape.contract import validate as CV
from symshape.capture.export import trace_program
from symshape.errors import InternalError
from symshape.contract.writer import CheckWriter

from . import samples, proves, z3cache
from .code import STATS, Symbols, divisors, encode, encode_cond, prove_code
from .pyint import Py, require, zmax, zmin

A = ss.Dim.AUTO


# ---------------------------------------------------------------------------- emitted checks
def _programs():
    d = ss.Dim("d", min=1, max=50)
    r = np.ones

    def guarded(x, y):
        ss.check(x.shape[0] + y.shape[0] <= 100)
        return x[: y.shape[0]] * 2

    def nested(batch):
        return batch["a"][0] @ batch["b"]

    def datadep(x):
        m = x[x > 0]
        ss.check(m.shape[0] == x.shape[0] - 3)
        return m + x[3:]

    def datadep_mod(x):
        m = x[x > 0]
        ss.check(m.shape[0] % 2 == 0)
        return m.reshape(-1, 2)

    def with_int(x, k):
        return x[:k] + 1

    return [
        (lambda x, y: x + y[1:], (r(7), r(8)), {"x": (3 * d + 1,), "y": (3 * d + 2,)}),
        (lambda x, y: x @ y, (r((8, 4)), r((4, 3))), {"x": (A, A), "y": (A, A)}),
        (guarded, (r(9), r(5)), {"x": (A,), "y": (A,)}),
        (nested, ({"a": [r((3, 4))], "b": r((4, 2))},), None),
        (lambda x: x.reshape(-1, 4), (r(12),), {"x": (A,)}),
        (datadep, (np.array([1., 2, 3, 4, 5, -1, -1, -1]),), {"x": (A,)}),
        (datadep_mod, (np.array([1., 2, 3, 4, -1, -1]),), {"x": (A,)}),
        (with_int, (r(9), 4), {"x": (A,), "k": ss.Dim.DYNAMIC}),
        # compound dims read before their symbols are bound: checked once both are
        (lambda z, w, x, y: (z + np.outer(x, y).reshape(-1),
                             w + np.concatenate([x, y])), (r(12), r(7), r(3), r(4)),
         {"z": (A,), "w": (A,), "x": (A,), "y": (A,)}),
        # a size read before its symbols with a coefficient: w.shape[0] == x + 2*y
        (lambda w, x, y: w + np.concatenate([x, y, y]), (r(10), r(4), r(3)),
         {"w": (A,), "x": (A,), "y": (A,)}),
        # a non-linear size read before its symbol: y.shape[0] == x.shape[0]**2
        (lambda y, x: y.reshape(x.shape[0], x.shape[0]) + x, (r(9), r(3)),
         {"y": (A,), "x": (A,)}),
        # a divisibility read after its partner: y.shape[0] == 2*x.shape[0] + 1
        (lambda y, x: y[1:].reshape(2, -1) + x, (r(9), r(4)), {"y": (A,), "x": (A,)}),
        # an int input with only an upper end ([-int_oo, 5]): its check must still exist
        (lambda x, k: x[:1] * 2 if k <= 5 else x[:1], (r(4), 3),
         {"x": (A,), "k": ss.Dim.DYNAMIC}),
    ]


def _runtime_lines(tr):
    from symshape.codegen.pycode import Renderer, ready_checks
    bound = set(tr.env.ranges)
    return ready_checks(list(tr.program.constraints.runtime_checks), bound,
                         Renderer({}, {})), bound


@proves("check.emitted", over=samples("13 traced programs"))
def check_emitted():
    for f, args, specs in _programs():
        tr = trace_program(f, args, None, specs)
        cs = tr.program.constraints
        w = CheckWriter(cs)
        w.emit()
        CV.validate_check(cs, w)                       # the records' meaning, in Z3
        STATS["code_claims"] += 1
        # the validation is not vacuous: dropping any one size test is caught
        tests = [i for i, rec in enumerate(w.checks) if type(rec).__name__ in _SIZE_TESTS]
        for i in tests:
            mutated = w.checks[:i] + w.checks[i + 1:]
            caught = False
            try:
                CV.validate_check(cs, w, mutated)
            except InternalError:
                caught = True
            require(caught or _redundant(w.checks, i),
                    "dropping the emitted check %r goes unnoticed", w.lines[i])
        lines, bound = _runtime_lines(tr)
        if tr.env.checks:
            V.validate_runtime_checks(tr.env, cs, lines, bound)
            STATS["code_claims"] += 1
            caught = False
            try:
                V.validate_runtime_checks(tr.env, cs, [], bound)
            except InternalError:
                caught = True
            require(caught, "dropping the run-time checks of %s goes unnoticed", f)


def _text_validated(cs, w) -> None:
    """Translation validation of the *text*: the Python lines the writer rendered (what
    ``module()`` runs) parsed back and proven to accept exactly the contract; not vacuous:
    dropping any line that tests a size, or writing an infinite end as a bare name, is
    caught."""
    CV.validate_check_text(cs, w.lines)
    STATS["code_claims"] += 1
    for i, line in enumerate(w.lines):
        if type(w.checks[i]).__name__ not in _SIZE_TESTS or _redundant(w.checks, i):
            continue
        caught = False
        try:
            CV.validate_check_text(cs, w.lines[:i] + w.lines[i + 1:])
        except InternalError:
            caught = True
        require(caught, "dropping the check line %r goes unnoticed", line)
    for i, line in enumerate(w.lines):
        for lit in ("'-int_oo'", "'int_oo'"):
            if lit in line:
                caught = False
                try:
                    CV.validate_check_text(cs, w.lines[:i] + [line.replace(lit, lit[1:-1])] +
                                          w.lines[i + 1:])
                except InternalError:
                    caught = True
                require(caught, "a bare %s in %r goes unnoticed", lit[1:-1], line)


@proves("check.text", over=samples("the 13 programs' check text"))
def check_text():
    for f, args, specs in _programs():
        tr = trace_program(f, args, None, specs)
        w = CheckWriter(tr.program.constraints)
        w.emit()
        _text_validated(tr.program.constraints, w)


#: the check records that test sizes (the others check types, layouts and scalars)
_SIZE_TESTS = ("IntValue", "StaticDim", "CongruenceCheck", "RangeCheck", "RelationCheck",
               "GuardCheck")


def _redundant(records, i) -> bool:
    """A test implied by the others (a range already forced by a later equality) may go."""
    return type(records[i]).__name__ == "RangeCheck" and \
        any(type(r).__name__ == "RelationCheck" for r in records)


# ---------------------------------------------------------------------------- subs / replace
@proves("subst.subs_replace", over=samples("hand-picked expressions and substitutions"))
def subst_subs_replace():
    s0, s1, s2 = E.Sym(940), E.Sym(941), E.Sym(942)
    S0, S1, S2 = s0.expr, s1.expr, s2.expr
    exprs = [3 * S0 * S1 + S2 - 4, E.floordiv(S0 + 2 * S1, 3) + E.mod(S2, 5),
             E.smin(S0, S1 + 1) * S2, E.floordiv(S0 * S1, S2), E.mod(S0 - S1, S1),
             E.smax(E.floordiv(S1, 2), S0 - S2)]
    maps = [{s0: S1 + 1}, {s0: S1, s1: S0}, {s1: 2 * S2 + 1, s2: 3}, {s2: S0 * S1},
            {s0: E.floordiv(S2, 2), s1: S2 - 1}]
    for x in exprs:
        for m in maps:
            got = E.subs(x, m)                    # the code's output
            P_ = Py()
            zs = Symbols()
            # x read with each mapped symbol standing for its value, all at once
            zs_sub = Symbols(zs)
            for s, v in m.items():
                zs_sub[s] = encode(P_, v, zs)
            want = encode(P_, x, zs_sub)
            # the inputs are defined: x's divisors after substitution, and m's own
            defined = [d != 0 for d in divisors(P_, x, zs_sub)]
            for v in m.values():
                defined += [d != 0 for d in divisors(P_, v, zs)] if type(v) is E.Expr else []
            prove_code(lambda v: v == want, [encode(P_, got, zs)], defined, P=P_,
                       what="subs(%s, %s) -> %s" % (x, m, got))
    # nothing to substitute: an int, an empty mapping, or a mapping of other symbols gives
    # its input back unchanged
    for x, m in [(7, maps[0]), (exprs[0], {}), (E.floordiv(S2, 3), {s0: S1 + 1})]:
        require(E.subs(x, m) is x, "subs(%s, %s) changed its input", x, m)
    # replacement: what the environment keeps after learning an equality (its facts and its
    # ranges: a fact can become a range once a symbol is replaced, a + b <= 20 with
    # a == b + 2 is b <= 9) says, given the equality, exactly what it said before
    from symshape.reasoning.env import ShapeEnv
    from symshape.algebra.infinity import INT_OO, is_inf
    from symshape.algebra.ranges import ValueRange

    def state(P_, zs, facts, ranges):
        out = [encode_cond(P_, f, zs) for f in facts]
        for s, r in ranges.items():
            out += ([] if is_inf(r.lower) else [zs[s] >= r.lower]) + \
                ([] if is_inf(r.upper) else [zs[s] <= r.upper])
        return z3.And(*out) if out else z3.BoolVal(True)
    for first, then in (((lambda a, b, c: R.le(a + b, 20)), (lambda a, b, c: R.eq(a, b + 2))),
                        ((lambda a, b, c: R.ne(a * b, 12)), (lambda a, b, c: R.eq(b, c + 1))),
                        ((lambda a, b, c: R.le(E.floordiv(a, b) + c, 9)),
                         (lambda a, b, c: R.eq(a, 2 * c)))):
        env = ShapeEnv()
        a, b, c = (env.create_symbol(h, n, ValueRange(2, INT_OO))
                   for h, n in ((6, "a"), (4, "b"), (3, "c")))
        env.add_guard(first(a.expr, b.expr, c.expr), None)
        before, before_ranges = list(env.facts), dict(env.ranges)
        g = then(a.expr, b.expr, c.expr)
        env.add_guard(g, None)
        P_ = Py()
        zs = Symbols()
        repl = [zs[s] == encode(P_, v, zs) for s, v in env.replacements.items()]
        for s, v in env.replacements.items():
            require(type(v) is int or not any(t in env.replacements for t in v.free_symbols),
                    "replacement %s -> %s mentions a replaced symbol", s, v)
        old = state(P_, zs, before, before_ranges)
        new = state(P_, zs, env.facts, env.ranges)
        prove_code(lambda v: v == old, [new], repl, encode_cond(P_, g, zs),
                   [d != 0 for d in divisors(P_, first(a.expr, b.expr, c.expr), zs)],
                   P=P_, what="facts and ranges refreshed after %s" % g)


# ---------------------------------------------------------------------------- sympy
def _from_sympy(P_: Py, e, names):
    """A sympy expression as built by ``to_sympy``, read back into Z3 (Python semantics)."""
    import sympy
    if isinstance(e, sympy.Integer):
        return z3.IntVal(int(e))
    if isinstance(e, sympy.Symbol):
        return names[e.name]
    if isinstance(e, sympy.Add):
        out = z3.IntVal(0)
        for a in e.args:
            out = out + _from_sympy(P_, a, names)
        return out
    if isinstance(e, sympy.Mul):
        num, den = e.as_numer_denom()
        if den != 1:
            raise AssertionError("a fraction outside floor(): %s" % e)
        out = z3.IntVal(1)
        for a in e.args:
            out = out * _from_sympy(P_, a, names)
        return out
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) > 0:
        base = _from_sympy(P_, e.base, names)
        out = base
        for _ in range(int(e.exp) - 1):
            out = out * base
        return out
    if isinstance(e, sympy.floor):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        return P_.floordiv(_from_sympy(P_, sympy.expand(num), names),
                           _from_sympy(P_, sympy.expand(den), names))
    if isinstance(e, sympy.Mod):
        return P_.mod(_from_sympy(P_, e.args[0], names), _from_sympy(P_, e.args[1], names))
    if isinstance(e, (sympy.Min, sympy.Max)):
        args = [_from_sympy(P_, a, names) for a in e.args]
        return (zmin if isinstance(e, sympy.Min) else zmax)(*args)
    raise AssertionError("unexpected sympy node %s (%s)" % (e, type(e).__name__))


def _never(inr, cond) -> bool:
    """No value of the range satisfies ``cond``."""
    sol = z3.Solver()
    sol.add(*inr)
    sol.add(cond)
    return z3cache.check(sol) == z3.unsat


@proves("sympy.bridge", over=samples("hand-picked expressions"))
def sympy_bridge():
    from symshape.algebra.infinity import INT_OO, NEG_INT_OO
    from symshape.algebra.ranges import ValueRange
    from symshape.contract.sympy_form import assumptions, to_sympy
    s0, s1, s2 = E.Sym(950), E.Sym(951), E.Sym(952)
    S0, S1, S2 = s0.expr, s1.expr, s2.expr
    ranges = {s0: ValueRange(2, INT_OO), s1: ValueRange(0, 9), s2: ValueRange(NEG_INT_OO, -1)}
    exprs = [3 * S0 * S1 - S2 + 4, E.floordiv(S0 + 1, 2), E.mod(S0 * S1, 7) - 1,
             E.smin(S0, S1 + 3), E.smax(S2, -S0) * 2, E.floordiv(S1, S0) + E.mod(S2, S0),
             E.floordiv(2 * S0 - 1, 4) + E.floordiv(S1, 3), S0 * S0 * S1]
    for x in exprs:
        P_ = Py()
        zs = Symbols()
        names = {s.name: zs[s] for s in (s0, s1, s2)}
        want = encode(P_, x, zs)
        got = _from_sympy(P_, to_sympy(x, ranges), names)
        defined = [d != 0 for d in divisors(P_, x, zs)]
        prove_code(lambda v: v == want, [got], defined, P=P_,
                   what="to_sympy(%s) = %s" % (x, to_sympy(x, ranges)))
    # the assumptions the bridge attaches hold on the whole range (and only those)
    preds = {"positive": lambda v: v > 0, "nonnegative": lambda v: v >= 0,
             "negative": lambda v: v < 0, "nonpositive": lambda v: v <= 0,
             "integer": lambda v: z3.BoolVal(True)}
    for lo in (NEG_INT_OO, -3, -1, 0, 1, 2):
        for hi in (-2, -1, 0, 1, 5, INT_OO):
            if not (lo <= hi):
                continue
            flags = assumptions(ValueRange(lo, hi))
            v = z3.Int("v")
            inr = ([v >= lo] if lo != NEG_INT_OO else []) + ([v <= hi] if hi != INT_OO else [])
            for name, pred in preds.items():
                sol = z3.Solver()
                sol.add(*inr)
                sol.add(z3.Not(pred(v)))
                holds = z3cache.check(sol) == z3.unsat
                if name in flags:
                    # declared True: holds on the whole range; declared False: never holds
                    require(holds if flags[name] else _never(inr, pred(v)),
                            "[%s, %s] is declared %s=%s but admits a value that is not",
                            lo, hi, name, flags[name])
                elif name in ("positive", "negative"):
                    require(not holds, "[%s, %s] is always %s but the symbol is not declared "
                            "so", lo, hi, name)
                elif name in ("nonnegative", "nonpositive"):
                    # the strongest sign is declared: nonpositive unless negative is
                    stronger = "positive" if name == "nonnegative" else "negative"
                    require(not holds or stronger in flags, "[%s, %s] is always %s but the "
                            "symbol is declared neither so nor %s", lo, hi, name, stronger)
            STATS["code_claims"] += 1


@proves("sympy.public", over=samples("hand-picked expressions"))
def sympy_public():
    """What users read (``public``) denotes the size at every point, not only on the
    corner points it is checked on: read back into Z3 and proven equal, for the sizes
    whose sympy evaluation is wrong (``Mod(2*Mod(s0, 5), 3)``) among others; and the fully
    unevaluated fallback denotes it too."""
    from symshape.algebra.infinity import INT_OO, NEG_INT_OO
    from symshape.algebra.ranges import ValueRange
    from symshape.contract.sympy_form import public, to_sympy
    s0, s1 = E.Sym(953), E.Sym(954)
    S0, S1 = s0.expr, s1.expr
    ranges = {s0: ValueRange(2, INT_OO), s1: ValueRange(NEG_INT_OO, 9)}
    exprs = [E.mod(2 * E.mod(S0, 5), 3), E.mod(E.mod(S0, 6) * E.mod(S0, 6), 5),
             E.floordiv(3 * E.mod(S0, 7), 4) - S1, E.smin(E.mod(S0, 4), S1) * 2 + 1,
             E.smax(E.floordiv(S0, 3), S1 - S0) - 6 * S0 + S0 * S0,
             E.mod(S1, S0) + E.floordiv(S1 + 1, S0)]
    for x in exprs:
        for form in (public(x, ranges), to_sympy(x, ranges, plain=True)):
            P_ = Py()
            zs = Symbols()
            names = {s.name: zs[s] for s in (s0, s1)}
            want = encode(P_, x, zs)
            got = _from_sympy(P_, form, names)
            defined = [d != 0 for d in divisors(P_, x, zs)]
            prove_code(lambda v: v == want, [got], defined, P=P_,
                       what="public(%s) = %s" % (x, form))
