"""The converse of an op shape proof: every input NumPy accepts, the traced contract admits.

``Contract.prove`` shows "admitted => NumPy's shape and NumPy's conditions"; a rule that
refuses inputs NumPy runs (a false refusal: an over-restrictive check, a size required
>= 1 that may be 0) passes that.  ``admits_numpy_inputs`` proves the other direction over
the same bound: for every input size (>= the proof's lower end) and every symbolic int
argument where NumPy's conditions (``proofs/numpy_shapes.py``) hold, some point of the
contract -- its root symbols in their ranges, every fact and guard true -- has exactly those
input values.  An int argument ranges over its example's sign (``k >= 0`` or ``k < 0``):
the trace specialises on the sign of a Python int (``x[a:b]`` counts from the end for a
negative ``b``), and each sign is its own example's trace.  Likewise, where a sweep
traces every size-1 axis of a broadcasting op as a static 1 of its own (``not_one``), the
symbolic sizes range over the sizes other than 1.

A refusal the engine makes and NumPy does not is listed in ``KNOWN_REFUSALS`` (a pattern
of the cases' ``what``, and why), like an expected failure: the case is still checked, and
``REFUSED`` counts the listed cases found refused, so ``tests/proofs/test_converse.py``
fails on an entry no case needs any more (fixed, remove it).
"""
from __future__ import annotations

import re
from typing import Dict, List, Sequence

import z3

from . import z3cache
from .pyint import RLIMIT, ProofFailure, Py, _model_text, limited_solver

#: a pattern of the cases' ``what`` -> why the contract is narrower than NumPy there
KNOWN_REFUSALS: Dict[str, str] = {
    r"^np\.einsum\(":
        "a false refusal: np.einsum broadcasts a size-1 operand axis against any size "
        "(np.einsum('i,i', ones(0), ones(1)) runs); the engine requires the sizes of a "
        "repeated subscript equal",
    r"^np\.argpartition / partition\(":
        "a false refusal on empty arrays: NumPy returns an empty array whatever kth, the "
        "engine requires kth in [-n, n) for n = 0 too",
    r"^np\.histogram":
        "refused on purpose: NumPy accepts an empty edges array (no counts), the engine "
        "requires one edge at least",
}
#: pattern -> how many cases it matched that the contract still refuses
REFUSED: Dict[str, int] = {p: 0 for p in KNOWN_REFUSALS}


def _consts(terms) -> List:
    """The uninterpreted integer constants the terms mention (in the order a depth-first
    walk meets them).  Each shared subterm is walked once (the terms are DAGs whose nested
    ``If`` chains a tree walk visits exponentially often), through Z3's C API: the Python
    wrappers of every node cost more than the proof's queries."""
    if not terms:
        return []
    ctx = terms[0].ctx
    c = ctx.ref()
    seen, out = set(), []
    todo = [t.as_ast() for t in terms]
    while todo:
        a = todo.pop()
        i = z3.Z3_get_ast_id(c, a)
        if i in seen:
            continue
        seen.add(i)
        kind = z3.Z3_get_ast_kind(c, a)
        if kind == z3.Z3_QUANTIFIER_AST:
            todo.append(z3.Z3_get_quantifier_body(c, a))
        elif kind == z3.Z3_APP_AST:
            n = z3.Z3_get_app_num_args(c, a)
            if n == 0:
                if z3.Z3_get_decl_kind(c, z3.Z3_get_app_decl(c, a)) == z3.Z3_OP_UNINTERPRETED:
                    out.append(z3.ExprRef(a, ctx))
            else:
                todo.extend(z3.Z3_get_app_arg(c, a, k) for k in range(n))
    # an ExprRef wrapping a borrowed pointer takes its own reference: as z3's own wrappers
    return [z3.Int(e.decl().name(), ctx) if e.sort_kind() == z3.Z3_INT_SORT else e
            for e in out]


def _substituted(terms: List, pairs: List) -> List:
    """Each term with ``pairs`` substituted, in one call to Z3 (``z3.substitute`` checks
    every pair's sorts on each call: per term, that cost grows with terms x pairs)."""
    if len(terms) < 2:
        return [z3.substitute(t, *pairs) for t in terms]
    return list(z3.substitute(z3.And(*terms), *pairs).children())


def _ask(accepted: List, inside: List, outer: set):
    """The solver and its answer to "NumPy accepts, and no value of the contract's inner
    symbols (those not in ``outer``) admits it"."""
    inner = [c for c in _consts(inside) if c.get_id() not in outer]
    admitted = z3.Exists(inner, z3.And(*inside)) if inner else z3.And(*inside)
    s = limited_solver(RLIMIT, *accepted, z3.Not(admitted))
    return s, z3cache.check(s, RLIMIT)


def _quotients_outside(side: List, outer: set) -> List:
    """The contract's quotient definitions (``Py.floordiv``: ``q`` with ``b*q <= a < b*q +
    b``) to assume rather than to find, when they mention nothing but the outer values and
    quotients: then the definitions are returned, to be hypotheses with their quotients
    universally quantified, else nothing (an empty list).

    Sound: "for every outer point NumPy accepts and every q meeting its definition, the
    contract holds" gives "... some q meets its definition and the contract", because a
    definition is always met (a // b for b != 0; any q for b == 0, where the definition
    is empty), innermost quotient first.  It keeps an existential quantifier, which Z3
    answers slowly, out of the query."""
    if not side:
        return []
    consts = _consts(side)
    quotients = [c for c in consts if c.get_id() not in outer]
    if not all(c.decl().name().startswith("q!") for c in quotients):
        return []                   # an inner value other than a quotient: keep all inside
    if not all(_divisor_is_numeral(c) for c in side):
        return []                   # b * q nonlinear for every value assumed: Z3 gives up
    return side


def _divisor_is_numeral(c) -> bool:
    """``c`` is a ``Py.floordiv`` definition ``Implies(b > 0, ...)`` / ``Implies(b < 0,
    ...)`` whose divisor ``b`` is a number."""
    if not (z3.is_app_of(c, z3.Z3_OP_IMPLIES) and c.arg(0).num_args() == 2):
        return False
    return z3.is_int_value(z3.simplify(c.arg(0).arg(0)))


def admits_numpy_inputs(tr, arrays: Sequence, spec, ints: Sequence, lo: int,
                        what: str, not_one: bool = False) -> None:
    """Raise ``ProofFailure`` (with the input NumPy accepts and the contract refuses)
    unless every input NumPy accepts is admitted by the traced contract ``tr``
    (``op_rules.Contract``); ``arrays``, ``spec`` and ``lo`` as for
    ``op_shape_rules._check`` (``ints``: the int arguments' examples)."""
    n_ints = len(ints)
    P = Py()
    vs = []
    for k, (shape, static) in enumerate(arrays):
        static = static or {}
        vs.append(tuple(static[i] if i in static else z3.Int("numpy.%d.%d" % (k, i))
                        for i in range(len(shape))))
    ks = [z3.Int("numpy.k%d" % j) for j in range(n_ints)]
    _, ok = spec(P, [tuple(v) for v in vs], ks)
    ok = [z3.BoolVal(c) if isinstance(c, bool) else c for c in ok]
    free = [(tr.ins[k][i], v) for k, sh in enumerate(vs) for i, v in enumerate(sh)
            if not isinstance(v, int)]
    free += [(tr.ins[len(arrays) + j], kv) for j, kv in enumerate(ks)]
    accepted = [v >= lo for _, v in free[:len(free) - n_ints]] + ok + P.side
    accepted += [kv >= 0 if ex >= 0 else kv < 0 for kv, ex in zip(ks, ints)]
    if not_one:
        accepted += [v != 1 for _, v in free[:len(free) - n_ints]]
    # an input size that is a root symbol of its own is renamed to NumPy's value (no
    # quantifier over it); the others are equations under the existential
    # (the contract spells a root symbol ``0 + 1*s0``: simplified, it is ``s0``)
    rename, eqs = [], []
    for e, v in free:
        c = z3.simplify(e) if not z3.is_int_value(e) else e
        if z3.is_const(c) and c.decl().kind() == z3.Z3_OP_UNINTERPRETED and \
                all(not c.eq(r) for r, _ in rename):
            rename.append((c, v))
        else:
            eqs.append(e == v)
    inside = list(tr.hyps) + eqs
    side = list(tr.P.side)
    if rename:
        inside, side = _substituted(inside, rename), _substituted(side, rename)
    outer = {v.get_id() for _, v in free} | {c.get_id() for c in _consts(P.side + ok)}
    moved = _quotients_outside(side, set(outer))
    s, r = _ask(accepted + moved, inside + ([] if moved else side), outer | {
        c.get_id() for c in _consts(moved)})
    if r == z3.unknown and moved:
        # quotients of a symbolic divisor assumed make the query nonlinear for every value
        # (np.reshape's size // prod(others)): found instead, as the contract's own
        s, r = _ask(accepted, inside + side, outer)
    known = next((p for p in KNOWN_REFUSALS if re.search(p, what)), None)
    if known is not None:
        REFUSED[known] += r == z3.sat
        return
    if r == z3.sat:
        raise ProofFailure("%s: NumPy accepts an input the contract refuses: %s"
                           % (what, _model_text(z3cache.model(s))))
    if r == z3.unknown:
        raise ProofFailure("%s: could not show the contract admits every input NumPy accepts "
                           "within rlimit=%d (%s)" % (what, RLIMIT, s.reason_unknown()))
