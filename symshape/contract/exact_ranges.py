"""The contract's one range service: every range the contract publishes comes from here.

The engine has several "range of an expression" entry points, each a named layer with its
own exactness and its own users; only the last two may feed anything published:

1. ``ranges.bound`` -- interval arithmetic over the symbols' ranges.  Sound, not exact
   (``s0**2 - 6*s0 + 9`` is ``[-int_oo, int_oo]``), no facts, no solver: the tracer's hot
   path (deciding guards, folding atoms).  Never published.
2. ``env.bound`` / ``simplify.bound_of`` -- layer 1 on the environment's simplified
   expression, cached per environment version.  Same exactness, same users.
3. ``simplify.range_fold`` / ``env._range_fold`` -- not a range: a rewrite that folds each
   Min / Max / FloorDiv / Mod atom decided by layer 1.
4. ``symbolic.univariate_range`` -- exact for a polynomial in one symbol with no facts (a
   step of layer 5).
5. ``symbolic.bounds_expr`` -- ``ss.bounds`` while tracing: the environment's ranges and
   facts; exact when the solver finishes (layers 1 and 4, sampled points, then 6).
6. ``projection.project`` / ``projection.extreme`` -- the exact primitive: Z3's optimiser
   over ranges and facts, each end checked and attained; the sound interval end when the
   solver does not finish within its budget.
7. ``exact_range`` below -- layer 6 on the contract: the root ranges and the residual
   guards connected to the expression.  What ``range_constraints`` prints; each end is
   proven attained by ``validate.validate_ranges`` against ``meaning.admitted``.
"""
from __future__ import annotations

from functools import reduce
from typing import Dict, List

from symshape.algebra.expr import Expr, IntLike
from symshape.algebra.ranges import ValueRange
from symshape.rules import rule


def connected_facts(cs, e: IntLike) -> List:
    """The residual guards of ``cs`` connected to ``e``'s symbols (directly or through
    other guards): the only ones that can narrow ``e``'s range."""
    state = ([], set(e.free_symbols) if type(e) is Expr else set(), True)
    while state[2]:           # a pass over the guards, as a fold: proofs induct on its step
        state = reduce(absorb_connected, cs.facts, (state[0], state[1], False))
    return state[0]


def absorb_connected(state: tuple, f) -> tuple:
    """A step of ``connected_facts``: ``state`` is (the guards taken so far, their symbols
    and ``e``'s, whether this pass took one); ``f`` is taken when it is new and shares a
    symbol with them."""
    facts, syms, _ = state
    if f not in facts and f.free_symbols & syms:
        return facts + [f], syms | f.free_symbols, True
    return state


@rule("contract.exact_range")
def exact_range(cs, e: IntLike) -> ValueRange:
    """The exact range of ``e`` over the inputs the contract ``cs`` admits: the projection
    of the root ranges and the residual guards connected to ``e`` (``s0**2 - 6*s0 + 9``
    with ``s0 >= 5`` is ``[4, int_oo]``, where interval arithmetic says ``[-int_oo,
    int_oo]``); each end is attained, or, when the solver does not settle it in time, the
    sound interval end (``projection.project``).  Cached per expression on ``cs``."""
    cache = cs.__dict__.setdefault("_exact_cache", {})
    got = cache.get(e)
    if got is None:
        from symshape.reasoning import projection  # looked up per call: tests replace project
        got = cache[e] = projection.project(e, connected_facts(cs, e), cs.ranges)
    return got


@rule("contract.range_constraints")
def published_ranges(cs) -> Dict[IntLike, ValueRange]:
    """``range_constraints``: each root symbol of ``cs`` and each compound input-dim
    expression, with its range from ``exact_range`` (a root without connected guards is
    its own range at no cost; with guards, the projection: a hand-built or loaded set
    need not have its root ranges narrowed to the guards, as tracing does)."""
    # folds over the roots and the inputs: proofs induct on each step
    out: Dict[IntLike, ValueRange] = {}
    state = reduce(with_root_range, sorted(cs.roots(), key=lambda s: s.key), (out, cs))
    return reduce(with_input_ranges, cs.inputs, state)[0]


def with_root_range(state: tuple, s) -> tuple:
    """A step of ``published_ranges``: ``state`` is (the ranges listed, the contract);
    the root ``s`` listed with its exact range."""
    state[0][s.expr] = exact_range(state[1], s.expr)
    return state


def with_input_ranges(state: tuple, d) -> tuple:
    """A step of ``published_ranges``: each compound dim of the input ``d`` (an array)
    listed with its exact range."""
    return reduce(with_dim_range, d.dims, state) if d.is_array else state


def with_dim_range(state: tuple, e) -> tuple:
    """A step of ``with_input_ranges``: the dim ``e`` listed with its exact range when it
    is a compound expression not listed yet."""
    out, cs = state
    if type(e) is Expr and e.as_symbol() is None and e not in out:
        out[e] = exact_range(cs, e)
    return state
