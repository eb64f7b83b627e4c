"""Proofs of what the implementation computes, not of a restatement of it.

A proof here runs the engine's own function on *symbolic* inputs (expressions over size
symbols, relations, shapes traced with symbolic dimensions) and translates the output it
returns into Z3 (``encode``): the claim is then about that output, universally quantified
over every symbol value, so a change to the code changes what is proven.

``prove_code(claim, impl, hyps)`` proves ``hyps => claim(*impl)`` where ``impl`` are the Z3
terms of the code's output, and refuses two kinds of vacuous proof:
  * hypotheses that contradict each other (``prove`` reports them);
  * a claim that holds *whatever the code computed*: the same claim with fresh, unconstrained
    values in place of ``impl`` must not be provable, else the proof says nothing about the
    rule (``a0 + a1 + a2 == a0 + a1 + a2``).
Every call is counted (``STATS``) so that ``python -m proofs`` and the tests can tell which
rules are proven on the code's output.
"""
from __future__ import annotations

import itertools
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R

from . import z3cache
from .pyint import (RLIMIT, ProofFailure, Py, _flat, _model_text, _short, limited_solver, zmax,
                    zmin)

#: per rule run (reset by ``proofs.run_one``): claims proven on the code's own output
STATS: Dict[str, int] = {"code_claims": 0}

_FRESH = itertools.count(1)


class Symbols(dict):
    """``Sym -> z3.Int``, creating a variable named like the symbol on first use."""

    def __missing__(self, s: E.Sym):
        v = self[s] = z3.Int(s.name)
        return v


def encode(P: Py, x, zs: Optional[Symbols] = None):
    """An ``Expr`` (or int) as a Z3 term read off its structure, with Python's ``//``,
    ``%``, ``min`` and ``max`` (the quotients' defining constraints go to ``P.side``)."""
    zs = Symbols() if zs is None else zs
    return E.fold(x, z3.IntVal, zs.__getitem__, lambda a: _encode_atom(P, a, zs))


def _encode_atom(P: Py, atom, zs):
    args = [encode(P, a, zs) for a in atom.args]
    if atom.kind == "FloorDiv":
        return P.floordiv(*args)
    if atom.kind == "Mod":
        return P.mod(*args)
    return (zmin if atom.kind == "Min" else zmax)(*args)


def encode_cond(P: Py, c, zs: Optional[Symbols] = None):
    """A relation (``Rel`` / ``BoolOp`` / bool) as a Z3 formula."""
    zs = Symbols() if zs is None else zs
    if type(c) is bool:
        return z3.BoolVal(c)
    if isinstance(c, R.BoolOp):
        args = [encode_cond(P, a, zs) for a in c.args]
        return z3.And(*args) if c.op == "and" else z3.Or(*args)
    e = encode(P, c.expr, zs)
    return e == 0 if c.op == "==" else (e != 0 if c.op == "!=" else e <= 0)


def divisors(P: Py, x, zs: Symbols) -> List:
    """Every divisor occurring in ``x`` as a Z3 term: ``x`` is defined where none is 0."""
    out = []
    atoms = E.atoms_of(x) if not isinstance(x, (R.Rel, R.BoolOp)) else set().union(
        *(E.atoms_of(a.expr) for a in _rels(x)))
    for atom in atoms:
        if type(atom) is E.OpAtom and atom.kind in ("FloorDiv", "Mod"):
            out.append(encode(P, atom.args[1], zs))
    return out


def _rels(c) -> List:
    if isinstance(c, R.BoolOp):
        return [r for a in c.args for r in _rels(a)]
    return [c] if isinstance(c, R.Rel) else []


def restart_names() -> None:
    """Number the free stand-ins from 1 again (see ``pyint.restart_names``)."""
    global _FRESH
    _FRESH = itertools.count(1)


def _fresh_like(t):
    n = next(_FRESH)
    if z3.is_bool(t):
        return z3.Bool("free_%d" % n)
    return z3.Int("free_%d" % n)


def prove_code(claim: Callable[..., z3.BoolRef], impl: Sequence, *hyps, P: Optional[Py] = None,
               rlimit: int = RLIMIT, what: str = "") -> None:
    """Prove ``hyps => claim(*impl)``, ``impl`` being Z3 terms of the code's output, and that
    the proof is not vacuous (see the module docstring).

    Two queries: "hyps and not claim(fresh)" must be satisfiable -- which also shows the
    hypotheses consistent -- and "hyps and not claim(impl)" must not be."""
    impl = list(impl)
    hyps = _flat(hyps)
    lead = (what + ": ") if what else ""
    fresh = [_fresh_like(t) for t in impl]
    with_fresh, with_impl = claim(*fresh), claim(*impl)   # may add quotients to P.side
    side = list(P.side) if P is not None else []
    s = limited_solver(rlimit, *hyps, *side, z3.Not(with_fresh))
    r = z3cache.check(s, rlimit)
    if r == z3.unknown:
        # finding a model of nonlinear integer constraints is where Z3's search varies
        # most with the query's form; this query only shows the proof is not vacuous (a
        # model found with more effort shows that just as well), so it gets a second try
        s = limited_solver(4 * rlimit, *hyps, *side, z3.Not(with_fresh))
        r = z3cache.check(s, 4 * rlimit)
    if r == z3.unsat:
        if z3cache.check(limited_solver(rlimit, *hyps, *side), rlimit) == z3.unsat:
            raise ProofFailure("%svacuous: the hypotheses contradict each other\n  claim: %s"
                               % (lead, _short(with_impl)))
        raise ProofFailure("%svacuous: the claim holds whatever the code computes\n  claim: %s"
                           % (lead, _short(with_impl)))
    if r == z3.unknown:
        raise ProofFailure("%scould not show the claim depends on the code within rlimit=%d"
                           % (lead, rlimit))
    s = limited_solver(rlimit, *hyps, *side, z3.Not(with_impl))
    r = z3cache.check(s, rlimit)
    if r == z3.sat:
        raise ProofFailure("%scounterexample: %s\n  claim: %s"
                           % (lead, _model_text(z3cache.model(s)), _short(with_impl)))
    if r == z3.unknown:
        raise ProofFailure("%snot proven within rlimit=%d (%s)\n  claim: %s"
                           % (lead, rlimit, s.reason_unknown(), _short(with_impl)))
    STATS["code_claims"] += 1


def prove_expr_equal(got, want_fn: Callable[[Py, Symbols], object], *, hyps_fn=None,
                     what: str = "") -> None:
    """The code's output expression ``got`` equals ``want_fn`` (the operation's Python
    meaning, built in Z3) for every value of the symbols where ``hyps_fn`` holds and every
    divisor in ``got`` is non-zero is *implied* (a rewrite may not create a division that the
    input did not have)."""
    P = Py()
    zs = Symbols()
    want = want_fn(P, zs)
    hyps = list(hyps_fn(P, zs)) if hyps_fn is not None else []
    impl = encode(P, got, zs)
    # a division the output performs must be one the input performed (defined there)
    defined = [d != 0 for d in divisors(P, got, zs)]
    prove_code(lambda v: z3.And(v == want, *defined), [impl], hyps, P=P, what=what)


def same_meaning(P: Py, c, want, zs: Symbols, hyps: Iterable = (), what: str = "") -> None:
    """A normalised relation ``c`` (the code's output) holds exactly where ``want`` does."""
    impl = encode_cond(P, c, zs)
    prove_code(lambda v: v == want, [impl], list(hyps), P=P, what=what)
