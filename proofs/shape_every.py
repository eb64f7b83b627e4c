"""Proofs of ``broadcast.pair`` and the ``reshape`` rules for every size (``reshape.explicit``
for every length of the target: ``proofs/reshape_every.py``, which runs ``reshape_claim``
below on two sizes): the engine's own
``broadcast_pair`` and ``reshape`` run with every size a Z3 integer whose kind (a literal
``int`` of the program or a symbolic ``SymInt``) is symbolic too, along every path
(``proofs/sized.py``), against NumPy's documented rule stated in Z3.

Both directions are proven: what the code admits NumPy accepts, with the shape NumPy gives,
and what the code refuses NumPy refuses too -- except where the rule documents a
restriction (a symbolic size in a reshape target is never inferred: the rule requires it
``>= 0``, so a symbolic size equal to -1 is refused where NumPy would infer it).

``reshape`` reads its input only through its element count (``prod(x.shape)``, and in
messages), so the input is one axis of ``numel`` elements, ``numel`` a Z3 integer >= 0.
"""
from __future__ import annotations

from typing import List

import z3

from symshape.capture.ops import elementwise as EW
from symshape.capture.ops import shape as SH
from symshape.errors import UserError

from . import every, proves
from .code import prove_code
from .pyint import RLIMIT, Py, ProofFailure, limited_solver
from .stubs import ShapeOnly, StubTracer
from .sized import Size, combine, run_paths, sizes, term
from .symcoeff import SInt

NONE = -1          # "cannot broadcast" as a size value (sizes are >= 0)


def _raises(paths, what: str) -> None:
    """A feasible path on which the code raised anything but ``UserError`` fails."""
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s: raises %s: %s on the feasible path %s"
                               % (what, type(got).__name__, got, z3.And(*pc)))


# ---------------------------------------------------------------------------- broadcasting
def np_broadcast(a, b):
    """NumPy's rule for two sizes: equal, or one of them 1 (the result is the other);
    ``NONE`` when they do not broadcast."""
    return z3.If(z3.Or(a == b, a == 1, b == 1), z3.If(a == 1, b, a), NONE)


@proves("broadcast.pair", over=every(
    "every two sizes a, b >= 0 (Z3 integers), each a literal int or a symbolic size "
    "(the kind symbolic too), along every path of broadcast_pair; both directions"))
def broadcast_pair_every():
    a, b = sizes("a b")
    hyps = [a.v >= 0, b.v >= 0]
    ex, paths = run_paths(lambda: EW.broadcast_pair(a, b), hyps, [EW])
    _raises(paths, "broadcast_pair")
    ok, out = combine(paths, lambda got: (got is not None, 0 if got is None else got))
    want = np_broadcast(a.v, b.v)
    prove_code(lambda ok, o: z3.And(ok == (want != NONE), z3.Implies(ok, o == want)),
               [ok, out], hyps, P=ex.P, what="broadcast_pair(a, b) against NumPy")


# ---------------------------------------------------------------------------- reshape


def _product(xs):
    out = z3.IntVal(1)
    for x in xs:
        out = out * x
    return out


def reshape_claim(target: List[Size], what: str, holes: str) -> None:
    """``reshape`` of ``numel`` elements to ``target`` (symbolic sizes and kinds), along
    every path: admitted exactly where NumPy accepts the target (no symbolic size
    negative: the rule's restriction), with NumPy's shape -- the -1 ``numel // known``.
    ``holes``: "some" (a literal -1 somewhere: the targets of ``reshape.infer``) or
    "none" (no literal -1: ``reshape.explicit``)."""
    numel = z3.Int("numel")
    hole = [z3.And(t.lit, t.v == -1) for t in target]
    hyps = [numel >= 0, z3.Or(*hole) if holes == "some" else z3.Not(z3.Or(*hole))]

    def run():
        try:
            return SH.reshape(StubTracer(), ShapeOnly((SInt(numel),)), tuple(target)).shape
        except UserError:
            return None
    ex, paths = run_paths(run, hyps, [SH])
    _raises(paths, what)
    sized = z3.And(*[z3.If(t.lit, t.v >= -1, t.v >= 0) for t in target])
    impl, claims = [], []
    for pc, got in paths:        # one claim over every path (each its own -1 places)
        m = limited_solver(RLIMIT, *hyps, *pc)
        m.check()
        at = [z3.is_true(m.model().eval(h, model_completion=True)) for h in hole]
        np_ok, np_shape = _numpy_reshape(ex.P, numel, target, at, sized)
        out = [got is not None] + ([0] * len(target) if got is None else list(got))
        impl += [term(x) for x in out]
        claims.append((pc, at, np_ok, np_shape))

    def claim(*v):
        outs, k, n = [], 0, len(target) + 1
        for pc, at, np_ok, np_shape in claims:
            ok, o = v[k], v[k + 1:k + n]
            k += n
            # NumPy refuses every target with a size below -1 (or a symbolic one below 0,
            # the rule's restriction); else the path fixes where the -1 are
            exact = z3.And(*[h == a for h, a in zip(hole, at)],
                           z3.If(ok, z3.And(np_ok, *[x == y for x, y in zip(o, np_shape)]),
                                 z3.Not(np_ok)))
            outs.append(z3.Implies(z3.And(*pc), z3.Or(z3.And(z3.Not(sized), z3.Not(ok)),
                                                      exact)))
        return z3.And(*outs)
    prove_code(claim, impl, hyps, P=ex.P, what=what)


def _numpy_reshape(P: Py, numel, target: List[Size], holes: List[bool], sized):
    """NumPy's rule for reshaping ``numel`` elements to ``target`` whose -1 are at
    ``holes`` (documented, and ``_attempt_nocopy`` / ``_fix_unknown_dimension`` in
    NumPy's C code): every size >= 0 but one -1, whose size is ``numel // known`` when
    ``known`` (the product of the others) is >= 1 and divides ``numel``; without a -1 the
    product must be ``numel``.  A symbolic size must be >= 0 (the rule's restriction: it
    is never inferred).  Returns (accepted, shape)."""
    ts = [t.v for t in target]
    known = _product([t for t, h in zip(ts, holes) if not h])
    if sum(holes) > 1:
        return z3.BoolVal(False), ts
    if not any(holes):
        return z3.And(sized, numel == known), ts
    inferred = P.floordiv(numel, known)
    ok = z3.And(sized, known >= 1, P.mod(numel, known) == 0)
    return ok, [inferred if h else t for t, h in zip(ts, holes)]


@proves("reshape.infer", over=every(
    "every element count numel >= 0 and every target of one or three sizes holding a "
    "literal -1 (two sizes: reshape.divisibility), "
    "each size a Z3 integer, a literal int or a symbolic size (the kind symbolic), along "
    "every path: the -1 in each place, the sizes beside it any integers, so their product "
    "known takes every value (the code infers the -1 from numel and known alone: each "
    "other size is checked alone and multiplied into known); both directions"))
def reshape_infer():
    reshape_claim(sizes("t1"), "reshape to (t1,)", "some")     # known: the int 1
    reshape_claim(sizes("t1 t2 t3"), "reshape to (t1, t2, t3)", "some")


@proves("reshape.divisibility", over=every(
    "every numerator and known != 0 (Z3 integers); the code: every numel >= 0 and every "
    "target of two sizes (Z3 integers, literal or symbolic), so every known beside a -1, "
    "along every path"))
def reshape_divisibility():
    P_ = Py()
    numel, known, s = z3.Ints("numel known s")
    # numel % known == 0 => s = numel // known solves known*s == numel ...
    P_.prove(known * P_.floordiv(numel, known) == numel, known != 0, P_.mod(numel, known) == 0)
    # ... and any solution makes the remainder 0
    P_.prove(P_.mod(numel, known) == 0, known != 0, known * s == numel)
    reshape_claim(sizes("k1 k2"), "reshape to (k1, k2)", "some")
