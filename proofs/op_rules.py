"""Proofs of op shape rules on the code's own output: real NumPy programs are traced with
symbolic sizes, and the output shapes the engine *computed* are proven equal to NumPy's
documented shape for every input the exported contract admits.

For each program: ``hyps`` are the contract (each root symbol in its range, every residual
guard), the input sizes are the contract's expressions for them, and the claim is that each
output size equals NumPy's formula over those input sizes -- and, for broadcasting, that
every input size admitted is broadcast-compatible (the contract rejects what NumPy would).
Advanced indexing, ``np.stack`` and ``np.tile`` are proven for every rank up to 4, every
axis (negative ones included), every length of repetitions and every placement of one to
three index arrays (adjacent or not), in both directions (``proofs/op_shape_rules.py``),
not a few hand-picked programs.
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
from .pyint import Py, require, zmax

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


def _bshape(*shapes):
    """``np.broadcast_shapes`` of the shapes, and the claims that they broadcast."""
    (out,), extra = N.broadcast(*shapes)
    return out, extra


# ---------------------------------------------------------------------------- broadcasting
@proves("broadcast.shapes",
        over=bounded("two operands: every pair of ranks 0..4, every pattern of 1s; three "
                     "operands (np.where, np.clip, np.select, np.choose): every triple of "
                     "ranks 0..3 (np.where: every pattern of 1s up to rank 2, every subset "
                     "of operands set to 1 at every axis beyond); sizes symbolic"))
def broadcast_shapes():
    r = np.ones

    def spec_n(P, ins):
        shape, extra = _bshape(*ins)
        return [shape], extra
    _case(lambda x, y, z: x + y * z, (r((4, 3)), r((3,)), r((2, 1, 3))),
          {"x": (A, A), "y": (A,), "z": (A, 1, A)}, spec_n, "x + y*z",
          (r((5, 7)), r((7,)), r((3, 1, 7))))
    _case(lambda c, x, y: np.where(c > 0, x, y), (r((4, 1)), r((4, 5)), r((5,))),
          {"c": (A, 1), "x": (A, A), "y": (A,)}, spec_n, "np.where")
    _case(lambda x, lo, hi: np.clip(x, lo, hi), (r((3, 4)), r((4,)), r((3, 1))),
          {"x": (A, A), "lo": (A,), "hi": (A, 1)}, spec_n, "np.clip")

    def spec_to(P, ins):
        x, = ins
        shape, extra = _bshape(x, (x[0] * 0 + 6,) + tuple(x))
        return [shape], extra
    _case(lambda x: np.broadcast_to(x, (6,) + x.shape), (r((4, 3)),), {"x": (A, A)}, spec_to,
          "np.broadcast_to")

    def out_kw(x, y):
        o = np.empty((y.shape[0] * 0 + x.shape[0], y.shape[0]))
        np.add(x, y, out=o)
        return o
    _case(out_kw, (r((4, 1)), r((5,))), {"x": (A, 1), "y": (A,)}, spec_n, "np.add(out=)")
    # every rank up to 4, every axis and offset (proofs/op_shape_rules.py)
    from .op_shape_calls import meshgrid_sweep, select_choose_sweep
    from .op_shape_rules import broadcast3_sweep, broadcast_sweep
    broadcast_sweep()
    broadcast3_sweep()
    meshgrid_sweep()
    select_choose_sweep()


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


# ---------------------------------------------------------------------------- split
@proves("split.sizes",
        over=bounded("every rank 1..4, every axis: np.split into 1..3 equal sections and at "
                     "two symbolic points (sign pairs ++, --, +-), np.array_split into 1..4 "
                     "sections, sizes symbolic"))
def split_sizes():
    r = np.ones

    def spec_even(P, ins):
        n = ins[0][0]
        return [(P.floordiv(n, 3),)] * 3, [P.mod(n, 3) == 0]
    _case(lambda x: tuple(np.split(x, 3)), (r(9),), {"x": (A,)}, spec_even, "np.split(x, 3)",
          (r(12),))

    def spec_array(P, ins):
        n = ins[0][0]
        q, m = P.floordiv(n, 3), P.mod(n, 3)
        return [(q + z3.If(k < m, 1, 0),) for k in range(3)], []
    _case(lambda x: tuple(np.array_split(x, 3)), (r(8),), {"x": (A,)}, spec_array,
          "np.array_split(x, 3)", (r(10),), (r(4),))

    def spec_at(P, ins):
        n = ins[0][0]
        c2, c5 = _clamp(2, n), _clamp(5, n)
        return [(c2,), (zmax(c5 - c2, 0),), (zmax(n - c5, 0),)], []
    _case(lambda x: tuple(np.split(x, [2, 5])), (r(9),), {"x": (A,)}, spec_at,
          "np.split(x, [2, 5])", (r(6),))
    # every rank up to 4, every axis and offset (proofs/op_shape_rules.py)
    from .op_shape_rules import split_sweep
    split_sweep()


def _clamp(i: int, n):
    return z3.If(n < i, n, z3.IntVal(i))


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


@proves("shape.pad_tile_repeat_stack",
        over=bounded("np.stack every rank 0..4 and axis, np.tile ranks 1..4 with reps "
                     "tuples of every length 1..4, np.pad / np.repeat every rank 1..4, sizes "
                     "symbolic"))
def pad_tile_repeat_stack():
    r = np.ones
    _case(lambda x: np.pad(x, ((1, 2), (0, 3))), (r((4, 5)),), {"x": (A, A)},
          lambda P, ins: ([(ins[0][0] + 3, ins[0][1] + 3)], []), "np.pad")
    _case(lambda x: np.tile(x, (2, 3)), (r((4, 5)),), {"x": (A, A)},
          lambda P, ins: ([(2 * ins[0][0], 3 * ins[0][1])], []), "np.tile")
    _case(lambda x: np.tile(x, 3), (r((4, 5)),), {"x": (A, A)},
          lambda P, ins: ([(ins[0][0], 3 * ins[0][1])], []), "np.tile(x, 3)")
    _case(lambda x: np.repeat(x, 2), (r((4, 5)),), {"x": (A, A)},
          lambda P, ins: ([(2 * ins[0][0] * ins[0][1],)], []), "np.repeat (flat)")
    _case(lambda x: np.repeat(x, 3, axis=1), (r((4, 5)),), {"x": (A, A)},
          lambda P, ins: ([(ins[0][0], 3 * ins[0][1])], []), "np.repeat(axis=1)")

    def spec_stack(P, ins):
        (n, m), (n2, m2) = ins
        return [(2, n, m)], [n == n2, m == m2]
    _case(lambda x, y: np.stack([x, y]), (r((4, 5)), r((4, 5))), {"x": (A, A), "y": (A, A)},
          spec_stack, "np.stack")

    def spec_stack1(P, ins):
        (n, m), (n2, m2) = ins
        return [(n, 2, m)], [n == n2, m == m2]
    _case(lambda x, y: np.stack([x, y], axis=1), (r((4, 5)), r((4, 5))),
          {"x": (A, A), "y": (A, A)}, spec_stack1, "np.stack(axis=1)")

    # np.stack at every axis of every rank up to 4, np.tile of every rank up to 4 with
    # reps of every length up to 4, both directions (proofs/op_shape_rules.py)
    from .op_shape_rules import stack_tile_sweep
    stack_tile_sweep()

    def spec_cat(P, ins):
        (a, m), (b, m2), (c, m3) = ins
        return [(a + b + c, m)], [m == m2, m2 == m3]
    _case(lambda x, y, z: np.concatenate([x, y, z]), (r((2, 5)), r((3, 5)), r((4, 5))),
          {"x": (A, A), "y": (A, A), "z": (A, A)}, spec_cat, "np.concatenate of three")
    # every rank up to 4, every axis and offset (proofs/op_shape_rules.py)
    from .op_shape_rules import repeat_pad_sweep
    repeat_pad_sweep()


__all__ = ["Contract", "STATS"]
