"""Translation validation (``SYMSHAPE_VALIDATE=1``; always on in the test suite).

After every export, Z3 checks that
  (a) the final constraint set -- root ranges, residual facts, and each replaced symbol
      equal to its replacement -- implies every guard recorded while tracing;
  (b) the generated input check accepts exactly the inputs the constraint set admits: the
      check's recorded semantics (bindings, equalities, ranges, guards) is equivalent to
      "every input size equals its expression for some root values in range satisfying
      the facts";
and ``export`` checks (c) that applied suggested fixes leave no violation.
A failure is an ``InternalError`` that prints the expressions involved.
"""
from __future__ import annotations

import os

from . import relations as R
from .errors import InternalError


def enabled() -> bool:
    return os.environ.get("SYMSHAPE_VALIDATE", "") not in ("", "0")


def validate_guards(env, cs) -> None:
    from .z3bridge import Encoder, RLIMIT, z3mod
    z3 = z3mod()
    enc = Encoder()
    hyp = []
    for s, v in env.replacements.items():
        if s.unbacked:
            continue
        hyp.append(enc.cond(R.eq(s.expr, v)))
    for f in cs.facts:
        hyp.append(enc.cond(f))
    goals = [g for g in env.guards if not any(s.unbacked for s in g.cond.free_symbols)]
    if not goals:
        return
    goal_formulas = [(g, enc.cond(g.cond)) for g in goals]
    for s in list(enc.vars):
        if s in env.replacements or s.unbacked:
            continue
        hyp += enc.range(s, env.ranges[s])
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT * 5)
    solver.add(*hyp)
    solver.add(*enc.side)
    for g, formula in goal_formulas:
        solver.push()
        solver.add(z3.Not(formula))
        res = solver.check()
        solver.pop()
        if res == z3.sat:
            raise InternalError(
                "translation validation: the constraint set does not imply the guard %s "
                "recorded at %s.\n  replacements: %s\n  ranges: %s\n  facts: %s"
                % (g.cond.format(), g.frame.location if g.frame else "?",
                   {k.name: str(v) for k, v in env.replacements.items()},
                   {k.name: str(v) for k, v in cs.ranges.items()},
                   [f.format() for f in cs.facts]))


def validate_check(cs, writer) -> None:
    """(b): the emitted check's semantics against the constraint set's."""
    from .z3bridge import Encoder, RLIMIT, z3mod
    z3 = z3mod()
    enc = Encoder()
    sizes = {}

    def size_var(name):
        v = sizes.get(name)
        if v is None:
            v = sizes[name] = z3.Int("in_" + name)
        return v

    # admitted: exists roots in range with facts, every input size equal to its expression
    adm = []
    for d in cs.inputs:
        dims = d.dims if d.is_array else ((d.sym,) if d.sym is not None else ())
        for k, e in enumerate(dims):
            name = "%s.shape[%d]" % (d.path, k) if d.is_array else d.path
            adm.append(size_var(name) == enc.expr(e))
    for f in cs.facts:
        adm.append(enc.cond(f))
    roots = [s for s in enc.vars]
    for s in roots:
        adm += enc.range(s, cs.ranges[s])
    adm += enc.side
    # accepted: what the writer emitted, over its own copies of the roots
    acc_enc = Encoder()
    acc = []
    for kind, axis, payload in writer.semantics:
        if kind not in ("static", "eq", "bind"):
            continue
        x = size_var(axis)
        if kind == "static":
            acc.append(x == payload)
        elif kind == "eq":
            acc.append(x == acc_enc.expr(payload))
        elif kind == "bind":
            s, a, rest = payload
            acc.append(x == a * acc_enc.sym(s) + acc_enc.expr(rest))
    for kind, axis, payload in writer.semantics:
        if kind == "range":
            acc += acc_enc.range(payload[0], payload[1])
        elif kind == "fact":
            acc.append(acc_enc.cond(payload))
    acc += acc_enc.side
    # rename the accepted side's roots apart from the admitted side's
    acc_vars = {s: z3.Int("acc_" + s.name) for s in acc_enc.vars}
    subst = [(acc_enc.vars[s], acc_vars[s]) for s in acc_enc.vars]
    acc_f = z3.substitute(z3.And(*acc), *subst) if subst else z3.And(*acc)
    adm_f = z3.And(*adm) if adm else z3.BoolVal(True)
    missing = set(sizes) - {a for _, a, _ in writer.semantics}
    if missing:
        raise InternalError("translation validation: the input check never looks at %s"
                            % sorted(missing))
    for premise, goal, what in ((acc_f, adm_f, "accepts inputs the constraint set rejects"),
                                (adm_f, acc_f, "rejects inputs the constraint set admits")):
        solver = z3.Solver()
        solver.set("rlimit", RLIMIT * 5)
        # goal's roots are existential: assert premise and "no roots make goal true" is a
        # quantified query; instead we use the deterministic bindings: both sides' roots
        # are determined by the sizes, so premise /\ not goal must be unsat for some roots
        solver.add(premise)
        goal_vars = list(acc_vars.values()) + acc_enc.fresh if goal is acc_f else \
            [enc.vars[s] for s in enc.vars] + enc.fresh
        if goal_vars:
            solver.add(z3.ForAll(goal_vars, z3.Not(goal)))
        else:
            solver.add(z3.Not(goal))
        if solver.check() == z3.sat:
            raise InternalError("translation validation: the generated input check %s:\n"
                                "  counterexample sizes: %s" % (what, solver.model()))
