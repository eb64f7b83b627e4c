"""Translation validation of the program (``SYMSHAPE_VALIDATE=1``; always on in the test
suite).  The contract's own views are validated in ``symshape.contract.validate``.

After every export, Z3 checks that
  (a) the final constraint set -- root ranges, residual facts, and each replaced symbol
      equal to its replacement -- implies every guard recorded while tracing;
  (b) (``symshape.contract.validate``) the input check, its records and its Python text,
      accepts exactly the inputs the contract's one meaning admits;
  (d) the run-time checks emitted for data-dependent sizes imply every ``ss.check`` made on
      them, with the data-dependent sizes free (never assuming a replacement the solver
      derived from the check itself), and none is left unemitted;
  (e) each branch's generated function (``ss.cond``, ``ss.map``, ``ss.while_loop``),
      executed in order, enforces every ``ss.check`` made inside the branch, and reads no
      size before the branch binds it;
and ``export`` checks (c) that applied suggested fixes leave no violation.
A failure is an ``InternalError`` that prints the expressions involved.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, Iterable, List

from symshape.algebra import relations as R
from symshape.contract.parse_check import CheckCode, parse
from symshape.errors import InternalError
from symshape.algebra.expr import Sym
from symshape.reasoning.z3bridge import RLIMIT, Encoder, serialized, z3mod


def enabled() -> bool:
    return os.environ.get("SYMSHAPE_VALIDATE", "") not in ("", "0")


@serialized
def validate_guards(env, cs) -> None:
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


@serialized
def validate_runtime_checks(env, cs, lines: List[str], bound: Iterable) -> None:
    """(d): the emitted run-time check lines (``if not (..): _rt.bad_check(..)`` as the
    program runs them once their sizes are computed; ``bound`` the data-dependent sizes the
    program binds) imply every ``ss.check`` on data-dependent sizes.  The data-dependent
    sizes are free; input roots range over the constraint set; replaced input symbols equal
    their replacement."""
    goals = [c for c, _, _ in env.checks if not isinstance(c, bool)]
    if not goals:
        return
    enc = Encoder()
    names = {}
    for s in set(bound) | set(env.ranges):
        if isinstance(s, Sym):
            names[s.name] = enc.sym(s)
    ex = CheckCode(names)
    ex.run(lines)
    _enforced(env, cs, goals, ex, enc, lines, "run-time checks")


@serialized
def validate_branch_checks(env, cs, sub, lines: List[str], outer: Dict[str, object]) -> None:
    """(e): the run-time checks a branch (``ss.cond``, ``ss.map``, ``ss.while_loop``) emits
    in its own function imply every ``ss.check`` made inside it (``sub.goals``).

    ``lines`` is the branch function as generated; its own body is executed in order: an
    ``if ...: _rt.bad_*(..)`` line rejects, a line binding a size the branch computes
    (``u0 = index.shape[0]``) makes that size a free variable from there on, and the lines
    computing arrays say nothing about sizes.  ``outer`` maps each name the enclosing code
    has bound to its symbol; a check that reads a size before anything binds it is an
    ``InternalError`` (it would be a ``NameError`` at run time)."""
    goals = [c for c in getattr(sub, "goals", ()) if not isinstance(c, bool)]
    inner = {s.name: s for s in branch_binds(sub)}
    enc = Encoder()
    ex = CheckCode({n: enc.sym(s) for n, s in outer.items()})
    for line in lines[1:]:
        if not line.startswith("    ") or line.startswith("     ") or \
                line.startswith("    def "):
            continue                       # a nested branch: validated on its own
        text = line[4:]
        st = parse(text)[0]
        if isinstance(st, ast.If) and len(st.body) == 1 and \
                isinstance(st.body[0], ast.Expr) and ex._rt_call(st.body[0].value):
            ex.run([text])
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0], ast.Name) and st.targets[0].id in inner:
            ex.env[st.targets[0].id] = enc.sym(inner[st.targets[0].id])
    if goals:
        _enforced(env, cs, goals, ex, enc, lines, "checks emitted in the branch %s" % sub.name)


@serialized
def branch_binds(sub) -> list:
    """The data-dependent sizes a branch computes and binds (``x[mask].shape[0]``)."""
    out = [sym for n in sub.graph.nodes for sym, _ in n.meta.get("binds", ())]
    out += [n.meta["binds_value"] for n in sub.graph.nodes if "binds_value" in n.meta]
    return out


def _enforced(env, cs, goals, ex, enc, lines, what: str) -> None:
    """Every goal holds whenever the executed check code ``ex`` accepts, data-dependent
    sizes free, input roots in range, replaced input symbols equal to their replacement."""
    z3 = z3mod()
    hyp = list(ex.accept) + list(ex.side)
    for f in cs.facts:
        hyp.append(enc.cond(f))
    for s, v in env.replacements.items():
        if not s.unbacked:
            hyp.append(enc.sym(s) == enc.expr(v))
    formulas = [(c, enc.cond(c)) for c in goals]
    for s in list(enc.vars):
        if s.unbacked or s in env.replacements:
            continue
        if s in cs.ranges:
            hyp += enc.range(s, cs.ranges[s])
    hyp += enc.side + ex.side
    for c, f in formulas:
        solver = z3.Solver()
        solver.set("rlimit", RLIMIT * 5)
        solver.add(*hyp)
        solver.add(z3.Not(f))
        if solver.check() == z3.sat:
            raise InternalError(
                "translation validation: the %s do not enforce ss.check(%s): "
                "it can fail while every emitted check passes.\n  emitted: %s\n  "
                "counterexample: %s" % (what, c.format(), lines, solver.model()))
