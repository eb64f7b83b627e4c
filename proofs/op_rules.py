"""Proofs of op shape rules on the code's own output: real NumPy programs are traced with
symbolic sizes, and the output shapes the engine *computed* are proven equal to NumPy's
documented shape for every input the exported contract admits.

For each program: ``hyps`` are the contract (each root symbol in its range, every residual
guard), the input sizes are the contract's expressions for them, and the claim is that each
output size equals NumPy's formula over those input sizes -- and, for broadcasting, that
every input size admitted is broadcast-compatible (the contract rejects what NumPy would).
Advanced indexing is proven for every rank up to 4 and every placement of one to three
index arrays (adjacent or not), in both directions (``proofs/op_shape_rules.py``), not a
few hand-picked programs; ``np.stack`` / ``np.tile`` / ``np.repeat`` / ``np.pad`` and the
splits for every rank, axis and count (``proofs/pad_tile_every.py``,
``proofs/split_every.py``).
The formulas are stated here from NumPy's documentation, never from the engine's code; each
program is also run eagerly at its example inputs and at a second admitted point as a
sanity check of the formula itself.
"""
from __future__ import annotations

from typing import Callable, List

import numpy as np
import z3

import symshape as ss
from symshape.capture.export import trace_program

from . import numpy_shapes as N
from . import bounded, proves
from .code import STATS, Symbols, encode, encode_cond, prove_code
from .pyint import Py, require

A = ss.Dim.AUTO
DYN = ss.Dim.DYNAMIC


class Contract:
    """A traced program as Z3: input sizes, output sizes, and the contract's hypotheses."""

    def __init__(self, f, args, dynamic_shapes) -> None:
        tr = trace_program(f, args, None, dynamic_shapes)
        self.program = tr.program
        self.env = tr.env
        cs = tr.program.constraints
        self.P = Py()
        self.zs = Symbols()
        self.ins: List = []
        for d in cs.inputs:
            if d.is_array:
                self.ins.append(tuple(encode(self.P, e, self.zs) for e in d.dims))
            elif d.sym is not None:
                self.ins.append(encode(self.P, d.sym, self.zs))
            else:
                self.ins.append(d.value)
        self.outs = []
        for o in tr.program.graph.outputs:
            shape = getattr(o, "shape", None)
            self.outs.append(None if shape is None else
                             tuple(encode(self.P, e, self.zs) for e in shape))
        self.hyps = [encode_cond(self.P, f_, self.zs) for f_ in cs.facts]
        for s in list(self.zs):
            vr = cs.ranges.get(s)
            if vr is None:
                continue
            from symshape.algebra.infinity import is_inf
            if not is_inf(vr.lower):
                self.hyps.append(self.zs[s] >= vr.lower)
            if not is_inf(vr.upper):
                self.hyps.append(self.zs[s] <= vr.upper)

    def prove(self, spec: Callable, what: str) -> None:
        """``spec(P, ins)`` -> (expected shapes, extra claims): each output size is NumPy's,
        and each extra claim (broadcast compatibility ...) holds on the contract."""
        want, extra = spec(self.P, self.ins)
        require(len(want) == len(self.outs), "%s: %d outputs, expected %d", what,
                len(self.outs), len(want))
        impl, eqs = [], []
        for got, exp in zip(self.outs, want):
            require(len(got) == len(exp), "%s: rank %d, NumPy's is %d", what, len(got), len(exp))
            for g, w in zip(got, exp):
                eqs.append((len(impl), w))
                impl.append(g)

        def claim(*vals):
            return z3.And(*[vals[i] == w for i, w in eqs], *extra)
        prove_code(claim, impl, self.hyps, P=self.P, what=what)


def _run(f, args, what: str) -> None:
    """Eager NumPy at one admitted point must agree with the engine's program there."""
    ep = ss.export(f, args[0], dynamic_shapes=args[1])
    for point in args[2:]:
        want = f(*point)
        got = ep.module()(*point)
        want = want if isinstance(want, (tuple, list)) else (want,)
        got = got if isinstance(got, (tuple, list)) else (got,)
        require([np.shape(w) for w in want] == [np.shape(g) for g in got],
                "%s: NumPy gives %s, the program %s", what,
                [np.shape(w) for w in want], [np.shape(g) for g in got])


def _case(f, example, specs, spec, what: str, *more_points) -> None:
    Contract(f, example, specs).prove(spec, what)
    if more_points:
        _run(f, (example, specs) + more_points, what)


#: one axis broadcast (NumPy's rule): the size other than 1, and each size 1 or that one
_bcast = N.bcast


# ---------------------------------------------------------------------------- indexing
@proves("index.advanced",
        over=bounded("every placement of 1-3 index arrays up to rank 4, sizes symbolic"))
def index_advanced():
    r = np.ones
    idx = np.array([0, 2, 1])
    _case(lambda x, i: x[i], (r((5, 4)), idx), {"x": (A, A), "i": (A,)},
          lambda P, ins: ([(ins[1][0], ins[0][1])], []), "x[i]")
    _case(lambda x, i: x[:, i], (r((5, 4)), idx), {"x": (A, A), "i": (A,)},
          lambda P, ins: ([(ins[0][0], ins[1][0])], []), "x[:, i]")

    def spec_pair(P, ins):
        b, extra = _bcast([ins[1][0], ins[2][0]])
        return [(b,)], extra
    _case(lambda x, i, j: x[i, j], (r((5, 4)), idx, np.array([1, 0, 3])),
          {"x": (A, A), "i": (A,), "j": (A,)}, spec_pair, "x[i, j]")

    # every placement of one to three index arrays among the axes of every rank up to 4,
    # both directions (proofs/op_shape_rules.py)
    from .op_shape_rules import advanced_sweep
    advanced_sweep()

    # a boolean mask selects a data-dependent count u, at most the mask's size
    tr = Contract(lambda x: x[x > 0], (np.array([1., -2, 3, 4]),), {"x": (A,)})
    u = tr.outs[0][0]
    prove_code(lambda v: z3.And(v >= 0, v <= tr.ins[0][0]), [u],
               tr.hyps + _unbacked_facts(tr), P=tr.P, what="x[mask] has at most len(x) items")


def _unbacked_facts(tr: "Contract") -> list:
    """What the environment knows about data-dependent sizes (their ranges and facts such as
    ``u0 <= s0``): true by construction of the op that made them."""
    from symshape.algebra.infinity import is_inf
    env = tr.env
    out = [encode_cond(tr.P, f_, tr.zs) for f_ in env.facts
           if any(s.unbacked for s in f_.free_symbols)]
    for s in list(tr.zs):
        if s.unbacked:
            vr = env.ranges[s]
            if not is_inf(vr.lower):
                out.append(tr.zs[s] >= vr.lower)
            if not is_inf(vr.upper):
                out.append(tr.zs[s] <= vr.upper)
    return out


# ---------------------------------------------------------------------------- contractions
@proves("linalg.contract", over=bounded("einsum operands up to rank 3, sizes symbolic"))
def linalg_contract():
    r = np.ones

    def spec_mm(P, ins):
        (n, k), (k2, m) = ins
        return [(n, m)], [k == k2]
    _case(lambda a, b: np.einsum("ij,jk->ik", a, b), (r((3, 4)), r((4, 5))),
          {"a": (A, A), "b": (A, A)}, spec_mm, "einsum ij,jk->ik")
    _case(lambda a, b: np.dot(a, b), (r((3, 4)), r((4, 5))), {"a": (A, A), "b": (A, A)},
          spec_mm, "np.dot")
    _case(lambda a, b: np.tensordot(a, b, axes=1), (r((3, 4)), r((4, 5))),
          {"a": (A, A), "b": (A, A)}, spec_mm, "np.tensordot(axes=1)")

    def spec_td2(P, ins):
        (n, k, l_), (k2, l2, m) = ins
        return [(n, m)], [k == k2, l_ == l2]
    _case(lambda a, b: np.tensordot(a, b, axes=2), (r((3, 4, 2)), r((4, 2, 5))),
          {"a": (A, A, A), "b": (A, A, A)}, spec_td2, "np.tensordot(axes=2)")

    def spec_outer(P, ins):
        (n, k), (m,) = ins
        return [(n * k, m)], []
    _case(lambda a, b: np.outer(a, b), (r((3, 4)), r((5,))), {"a": (A, A), "b": (A,)},
          spec_outer, "np.outer (flattens)")

    def spec_es(P, ins):
        (b, n, k), (b2, k2, m) = ins
        return [(b, n, m)], [b == b2, k == k2]
    _case(lambda a, b: np.einsum("bij,bjk->bik", a, b), (r((2, 3, 4)), r((2, 4, 5))),
          {"a": (A, A, A), "b": (A, A, A)}, spec_es, "einsum bij,bjk->bik")
    # every subscript form of operands up to rank 3 (proofs/op_shape_rules.py)
    from .op_shape_rules import einsum_sweep
    einsum_sweep()




__all__ = ["Contract", "STATS"]
