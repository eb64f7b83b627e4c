"""Proofs of the op shape rules in ``capture/ops``: slice length, broadcasting, reshape,
concatenate, matmul.

Each rule is proven for symbolic sizes against a reference stated from Python's / NumPy's
documented semantics (not from the code path under test); then NumPy programs using the op
are traced with symbolic sizes and the shapes the engine computed are proven equal to that
reference for every input their contract admits (``proofs/op_rules.Contract``), and the real
shape function is run on small integers against Python / NumPy themselves.
"""
from __future__ import annotations

import itertools
from typing import Optional

import numpy as np
import z3

from symshape.capture.ops import shape as SH
from symshape.capture.ops.elementwise import broadcast_pair
from symshape.capture.ops.indexing import slice_length
from symshape.capture.ops.linalg import matmul_shape
from symshape.errors import UserError

from . import bounded, samples, proves
from .code import prove_code
from .pyint import Py, prove, require, zmax, zmin

import symshape as _ss  # noqa: E402

A = _ss.Dim.AUTO
NONE = -1          # "cannot broadcast" / "rejected" as a size value (sizes are >= 0)


# ---------------------------------------------------------------------------- slicing
def _adjust(v, n, step_pos: bool, default):
    """CPython's ``PySlice_AdjustIndices`` for one bound, from the documented semantics:
    None is the end value for the step's sign; a negative index counts from the end
    (``+ n``) and, still negative, becomes 0 (step > 0) or -1 (step < 0); an index past
    the end becomes n (step > 0) or n - 1 (step < 0).  ``default``: the bound was None
    and this is its end value."""
    if default is not None:
        return default
    below = 0 if step_pos else -1
    past = n if step_pos else n - 1
    return z3.If(v < 0, z3.If(v + n < 0, below, v + n), z3.If(v >= n, past, v))


def _range_len_ok(L, start, stop, step, step_pos: bool):
    """``L == len(range(start, stop, step))`` by the docs' definition of a range: its
    items are ``start + step*i`` for i >= 0 while below stop (step > 0) / above stop
    (step < 0).  L items: the last is inside, the next is not."""
    if step_pos:
        return z3.And(L >= 0, z3.Or(L == 0, start + (L - 1) * step < stop),
                      start + L * step >= stop)
    return z3.And(L >= 0, z3.Or(L == 0, start + (L - 1) * step > stop),
                  start + L * step <= stop)


def _code_clamp(v, n, lo_neg: int, step_pos: bool):
    """``indexing._clamp``, re-stated: v < 0 -> max(v + n, lo_neg); else min(v, n or n-1)."""
    return z3.If(v < 0, zmax(v + n, lo_neg), zmin(v, n if step_pos else n - 1))


def _slice_proof(step_pos: bool) -> None:
    n, start, stop, step, L1, L2 = z3.Ints("n start stop step L1 L2")
    sign_ok = step > 0 if step_pos else step < 0
    # the characterisation of len(range(...)) names one length: unique
    prove(L1 == L2, sign_ok, _range_len_ok(L1, start, stop, step, step_pos),
          _range_len_ok(L2, start, stop, step, step_pos))
    for start_none, stop_none in itertools.product((False, True), repeat=2):
        P_ = Py()
        if step_pos:
            lo = 0 if start_none else _code_clamp(start, n, 0, True)
            hi = n if stop_none else _code_clamp(stop, n, 0, True)
            length = P_.floordiv(hi - lo + step - 1, step)
        else:
            lo = n - 1 if start_none else _code_clamp(start, n, -1, False)
            hi = -1 if stop_none else _code_clamp(stop, n, -1, False)
            length = P_.floordiv(lo - hi - step - 1, -step)
        code = zmax(length, 0)
        ref_start = _adjust(start, n, step_pos, (0 if step_pos else n - 1) if start_none
                            else None)
        ref_stop = _adjust(stop, n, step_pos, (n if step_pos else -1) if stop_none else None)
        P_.prove(_range_len_ok(code, ref_start, ref_stop, step, step_pos), n >= 0, sign_ok)
    # the real function, exhaustively on small ints, against Python itself
    bounds = list(range(-15, 16)) + [None]
    steps = range(1, 5) if step_pos else range(-4, 0)
    for n_ in range(13):
        r = range(n_)
        for st in steps:
            for a in bounds:
                for b in bounds:
                    got = slice_length(n_, a, b, st)
                    want = len(r[a:b:st])
                    if got != want:
                        require(False, "slice_length(%d, %s, %s, %d) = %s, but "
                                "len(range(%d)[%s:%s:%d]) = %d", n_, a, b, st, got, n_, a, b,
                                                                  st, want)
    if step_pos:   # a None step is 1
        for n_, a, b in itertools.product(range(6), bounds[::3], bounds[::3]):
            require(slice_length(n_, a, b, None) == len(range(n_)[a:b]),
                    "slice_length(%d, %s, %s, None) is wrong", n_, a, b)


def _slice_on_code(step_pos: bool) -> None:
    """The lengths the engine computes when tracing slices of a symbolic axis (constant and
    symbolic bounds), against ``len(range(n)[start:stop:step])`` as documented."""
    from .op_rules import DYN, Contract
    r = np.ones
    slices = ([(2, None, 1), (None, -3, 1), (1, -1, 2), (-4, None, 3), (3, 7, 2)] if step_pos
              else [(None, None, -1), (-2, None, -3), (5, 1, -2), (None, 2, -1)])
    for a, b, st in slices:
        tr = Contract(lambda x, a=a, b=b, st=st: x[a:b:st], (r(9),), {"x": (A,)})
        n = tr.ins[0][0]
        ref_a = _adjust(z3.IntVal(a if a is not None else 0), n, step_pos,
                        (0 if step_pos else n - 1) if a is None else None)
        ref_b = _adjust(z3.IntVal(b if b is not None else 0), n, step_pos,
                        (n if step_pos else -1) if b is None else None)
        prove_code(lambda L: _range_len_ok(L, ref_a, ref_b, st, step_pos), [tr.outs[0][0]],
                   tr.hyps, n >= 0, P=tr.P, what="x[%s:%s:%s] traced" % (a, b, st))
    if step_pos:         # symbolic bounds: an int input
        tr = Contract(lambda x, k: x[:k], (r(9), 4), {"x": (A,), "k": DYN})
        n, k = tr.ins[0][0], tr.ins[1]
        ref_b = _adjust(k, n, True, None)
        prove_code(lambda L: _range_len_ok(L, z3.IntVal(0), ref_b, 1, True), [tr.outs[0][0]],
                   tr.hyps, P=tr.P, what="x[:k] traced")


@proves("slice.length_step_pos", over=samples("an integer grid up to 12"))
def slice_length_step_pos():
    _slice_proof(True)
    _slice_on_code(True)


@proves("slice.length_step_neg", over=samples("an integer grid up to 12"))
def slice_length_step_neg():
    _slice_proof(False)
    _slice_on_code(False)


# ---------------------------------------------------------------------------- broadcasting
def _np_broadcast(a, b):
    """NumPy's rule for two sizes: equal, or one of them 1 (the result is the other)."""
    return z3.If(z3.Or(a == b, a == 1, b == 1), z3.If(a == 1, b, a), NONE)


@proves("broadcast.pair", over=samples("sizes 0..5 and three traced programs"))
def broadcast_pair_rule():
    a, b = z3.Ints("a b")
    sizes = [a >= 0, b >= 0]
    # both ints: a == b or b == 1 -> a; a == 1 -> b; else None
    ints = z3.If(z3.Or(a == b, b == 1), a, z3.If(a == 1, b, NONE))
    prove(ints == _np_broadcast(a, b), sizes)
    # symbolic: int 1 on either side first, then the guarded a == b, a == 1, b == 1; each
    # comparison answers as the values do (it is decided or guarded on the example)
    for lit_a, lit_b in itertools.product((False, True), repeat=2):
        code = z3.If(a == b, a, z3.If(a == 1, b, z3.If(b == 1, a, NONE)))
        if lit_b:
            code = z3.If(b == 1, a, code)
        if lit_a:
            code = z3.If(a == 1, b, code)
        prove(code == _np_broadcast(a, b), sizes)
    for x, y in itertools.product(range(6), repeat=2):
        try:
            want: Optional[int] = np.broadcast_shapes((x,), (y,))[0]
        except ValueError:
            want = None
        got = broadcast_pair(x, y)
        require(got == want, "broadcast_pair(%d, %d) = %s, NumPy: %s", x, y, got, want)
    _symbolic_broadcast_check()
    # traced: the size the engine gives x + y for symbolic sizes, on the admitted inputs
    from .op_rules import Contract, _bcast
    for ex in ((np.ones(4), np.ones(4)), (np.ones((3, 1)), np.ones(5)),
               (np.ones((2, 5)), np.ones((1, 5)))):
        specs = {"x": tuple(1 if s == 1 else A for s in ex[0].shape),
                 "y": tuple(1 if s == 1 else A for s in ex[1].shape)}
        tr = Contract(lambda x, y: x + y, ex, specs)
        (xs, ys), out = tr.ins, tr.outs[0]
        nd = len(out)
        want, extra = [], []
        for i in range(-nd, 0):
            sz = [sh[i] for sh in (xs, ys) if len(sh) >= -i]
            w, ok = _bcast(sz)
            want.append(w)
            extra += ok
        prove_code(lambda *v: z3.And(*[a == b for a, b in zip(v, want)], *extra), list(out),
                   tr.hyps, P=tr.P, what="x + y with shapes %s, %s traced"
                   % (ex[0].shape, ex[1].shape))


def _symbolic_broadcast_check() -> None:
    """broadcast_pair on SymInts: the example values broadcast like NumPy's."""
    from symshape.reasoning.env import ShapeEnv
    from symshape.algebra.ranges import ValueRange
    from symshape.algebra.infinity import INT_OO
    from symshape.sizes.symint import SymInt
    for x, y in itertools.product((1, 2, 3, 5), repeat=2):
        env = ShapeEnv()
        sa = env.create_symbol(x, "a", ValueRange(1, INT_OO))
        sb = env.create_symbol(y, "b", ValueRange(1, INT_OO))
        A, B = SymInt(sa.expr, x, env), SymInt(sb.expr, y, env)
        try:
            want: Optional[int] = np.broadcast_shapes((x,), (y,))[0]
        except ValueError:
            want = None
        for p, q, vp, vq in ((A, B, x, y), (A, y, x, y), (x, B, x, y)):
            got = broadcast_pair(p, q)
            hint = got if got is None or type(got) is int else got.hint
            require(hint == want, "broadcast_pair on sizes with examples %d, %d gives %s, "
                    "NumPy %s", vp, vq, got, want)


# ---------------------------------------------------------------------------- reshape
class _Arr:
    def __init__(self, shape) -> None:
        self.shape = tuple(shape)
        self.ndim = len(self.shape)
        self.node = None
        self.dtype = np.dtype(np.float64)


class _Tracer:
    """Just enough of a Tracer for the shape functions: ``emit`` returns the result."""

    def emit(self, op, inputs, attrs, shape, dtype, name=None):
        return _Arr(shape)

    def operand(self, a):
        return a


def _engine_reshape(numel: int, target) -> Optional[tuple]:
    try:
        return SH.reshape(_Tracer(), _Arr((numel,)), target).shape
    except UserError:
        return None


def _numpy_reshape(numel: int, target) -> Optional[tuple]:
    """NumPy as documented: one -1 may be inferred; every other size must be >= 0."""
    if any(s < 0 and s != -1 for s in target):
        return None
    try:
        return np.empty(numel).reshape(target).shape
    except ValueError:
        return None


def _reshape_grid() -> None:
    sizes = [-3, -2, -1, 0, 1, 2, 3, 4, 6]
    for numel in range(0, 13):
        for rank in (1, 2, 3):
            for target in itertools.product(sizes, repeat=rank):
                got, want = _engine_reshape(numel, target), _numpy_reshape(numel, target)
                require(got == want, "reshape of %d elements to %s: the rule gives %s, NumPy "
                        "%s", numel, target, got, "an error" if want is None else want)


@proves("reshape.infer", over=samples("a grid of targets"))
def reshape_infer():
    P_ = Py()
    numel, t1, t2 = z3.Ints("numel t1 t2")
    known = t1 * t2                # the sizes next to the -1 (neither the literal -1)
    out = P_.floordiv(numel, known)
    # the rule rejects sizes below -1 and symbolic sizes that may be negative, requires
    # the product next to the -1 to be >= 1, then divisibility
    accepted = z3.And(t1 >= 0, t2 >= 0, known >= 1, P_.mod(numel, known) == 0)
    P_.prove(z3.And(t1 >= 0, t2 >= 0, out >= 0, known * out == numel),
             numel >= 0, t1 != -1, t2 != -1, accepted,
             what="a target (-1, t1, t2) the rule accepts is a valid NumPy shape")
    # the size is the only one: known*s == numel has no other solution
    s, = z3.Ints("s")
    P_.prove(s == out, numel >= 0, t1 > 0, t2 > 0, accepted, known * s == numel)
    _reshape_grid()
    _reshape_on_code()
    # every input and target rank up to 3, symbolic target sizes, -1 anywhere or nowhere
    from .op_shape_rules import reshape_sweep
    reshape_sweep()


def _reshape_on_code() -> None:
    """Traced reshapes with a -1: the inferred size times the known ones is the element
    count (so it is the one NumPy infers), and the contract admits only divisible counts."""
    from .op_rules import Contract
    for shape, target in (((12,), (-1, 4)), ((6, 4), (3, -1)), ((6, 4), (-1,)),
                          ((2, 6, 2), (2, -1, 3))):
        tr = Contract(lambda x, t=target: x.reshape(t), (np.ones(shape),),
                      {"x": tuple(A for _ in shape)})
        numel = z3.IntVal(1)
        for d in tr.ins[0]:
            numel = numel * d
        out = tr.outs[0]
        known = [o for o, t in zip(out, target) if t != -1]
        prove_code(lambda *v: z3.And(_prod(v) == numel, *[x >= 0 for x in v],
                                     *[v[i] == t for i, t in enumerate(target) if t != -1]),
                   list(out), tr.hyps, P=tr.P,
                   what="reshape %s to %s traced" % (shape, target))
        require(len(known) == len(target) - 1, "reshape target %s lost a size", target)


def _prod(vs):
    out = z3.IntVal(1)
    for v in vs:
        out = out * v
    return out


@proves("reshape.divisibility", over=samples("numel 0..24, known 1..6"))
def reshape_divisibility():
    P_ = Py()
    numel, known, s = z3.Ints("numel known s")
    # numel % known == 0 => s = numel // known solves known*s == numel ...
    P_.prove(known * P_.floordiv(numel, known) == numel, known != 0, P_.mod(numel, known) == 0)
    # ... and any solution makes the remainder 0
    P_.prove(P_.mod(numel, known) == 0, known != 0, known * s == numel)
    for numel_, known_ in itertools.product(range(0, 25), range(1, 7)):
        got = _engine_reshape(numel_, (known_, -1))
        require((got is not None) == (numel_ % known_ == 0),
                "reshape(%d elements, (%d, -1)) %s", numel_, known_,
                                                       "rejected" if got is None else got)
    # traced: every input the contract admits has a count divisible by the known sizes
    from .op_rules import Contract
    for k in (3, 4):
        tr = Contract(lambda x, k=k: x.reshape(k, -1), (np.ones(12),), {"x": (A,)})
        n = tr.ins[0][0]
        P_ = tr.P
        prove_code(lambda v: z3.And(P_.mod(n, k) == 0, v * k == n), [tr.outs[0][1]],
                   tr.hyps, P=P_, what="reshape(%d, -1) admits only multiples of %d" % (k, k))


@proves("reshape.explicit", over=samples("a grid of targets"))
def reshape_explicit():
    # the rule on concrete targets, against NumPy itself (sizes below 0 rejected, counts
    # equal), then on a traced symbolic target
    _reshape_grid()
    # traced: an explicit symbolic target is admitted only when the counts agree
    from .op_rules import Contract
    tr = Contract(lambda x, a, b: x.reshape(a.shape[0], b.shape[0]),
                  (np.ones(12), np.ones(3), np.ones(4)), {"x": (A,), "a": (A,), "b": (A,)})
    (n,), (a_,), (b_,) = tr.ins
    prove_code(lambda p, q: z3.And(p == a_, q == b_, p * q == n), list(tr.outs[0]), tr.hyps,
               P=tr.P, what="x.reshape(a, b) traced")


# ---------------------------------------------------------------------------- concatenate
def _engine_concat(shapes, axis) -> Optional[tuple]:
    try:
        return SH._concatenate(_Tracer(), [_Arr(s) for s in shapes], axis=axis).shape
    except UserError:
        return None


@proves("concatenate.shape",
        over=bounded("two and three operands of every rank 1..4, every axis and None, sizes "
                     "symbolic"))
def concatenate_shape():
    # the fold shape[ax] = shape[ax] + x.shape[ax] over the inputs is the sum; the other
    # axes are the first input's, equal to every input's by the guards
    # traced: the shape the engine gives, for every admitted input, is NumPy's: the sum along
    # the axis, and equal sizes off it (the contract admits nothing else)
    from .op_rules import Contract
    for axis, shapes in ((0, ((2, 5), (3, 5), (4, 5))), (1, ((3, 2), (3, 4))),
                         (-1, ((2, 3, 1), (2, 3, 4), (2, 3, 2)))):
        names = "abc"[:len(shapes)]
        f = eval("lambda %s: np.concatenate([%s], axis=%d)" % (", ".join(names),
                                                              ", ".join(names), axis),
                 {"np": np})
        tr = Contract(f, tuple(np.ones(s) for s in shapes),
                      {n: tuple(A for _ in s) for n, s in zip(names, shapes)})
        ins = tr.ins
        ax = axis % len(shapes[0])
        want = [sum((sh[ax] for sh in ins[1:]), ins[0][ax]) if i == ax else ins[0][i]
                for i in range(len(shapes[0]))]
        same = [sh[i] == ins[0][i] for sh in ins[1:] for i in range(len(shapes[0])) if i != ax]
        prove_code(lambda *v: z3.And(*[a == b for a, b in zip(v, want)], *same),
                   list(tr.outs[0]), tr.hyps, P=tr.P,
                   what="concatenate %s on axis %d traced" % (shapes, axis))
    shapes = [s for r in (1, 2) for s in itertools.product(range(3), repeat=r)]
    for k in (1, 2, 3):
        for combo in itertools.product(shapes, repeat=k):
            if k == 3 and len({len(s) for s in combo}) > 1:
                continue
            for axis in (-2, -1, 0, 1, None):
                got = _engine_concat(combo, axis)
                try:
                    want: Optional[tuple] = np.concatenate(
                        [np.empty(s) for s in combo], axis=axis).shape
                except (ValueError, np.exceptions.AxisError):
                    want = None
                require(got == want, "concatenate %s on axis %s: the rule gives %s, NumPy %s",
                        combo, axis, got, want)
    # every rank up to 4, every axis and offset (proofs/op_shape_rules.py)
    from .op_shape_rules import concatenate_sweep
    concatenate_sweep()


# ---------------------------------------------------------------------------- matmul
def _np_matmul_shape(a, b):
    """NumPy's documented matmul shapes, over symbolic sizes (lists of Z3 ints): returns
    (shape, conditions for validity).  1-D operands are promoted and the added axis
    removed; batch axes broadcast."""
    pa = [1] + list(a) if len(a) == 1 else list(a)
    pb = list(b) + [1] if len(b) == 1 else list(b)
    ok = [pa[-1] == pb[-2]]
    ba, bb = pa[:-2], pb[:-2]
    nd = max(len(ba), len(bb))
    ba = [1] * (nd - len(ba)) + ba
    bb = [1] * (nd - len(bb)) + bb
    batch = [_np_broadcast(_z(x), _z(y)) for x, y in zip(ba, bb)]
    ok += [s != NONE for s in batch]
    out = batch + [pa[-2], pb[-1]]
    if len(a) == 1:
        out.pop(-2)
    if len(b) == 1:
        out.pop(-1)
    return out, ok


def _z(v):
    return z3.IntVal(v) if isinstance(v, int) else v


def _code_matmul_shape(a, b):
    """``linalg.matmul_shape`` re-stated over symbolic sizes."""
    a1, b1 = len(a) == 1, len(b) == 1
    aa = [1] + list(a) if a1 else list(a)
    bb = list(b) + [1] if b1 else list(b)
    ok = [aa[-1] == bb[-2]]
    xa, xb = aa[:-2], bb[:-2]
    nd = max(len(xa), len(xb))
    batch = []
    for i in range(-nd, 0):          # broadcast_shapes: fold broadcast_pair from size 1
        size = _z(1)
        for s in (xa, xb):
            if len(s) >= -i:
                got = z3.If(z3.Or(size == s[i], s[i] == 1), size,
                            z3.If(size == 1, _z(s[i]), NONE))
                ok.append(got != NONE)
                size = z3.If(size == NONE, NONE, got)
        batch.append(size)
    out = list(batch)
    if not a1:
        out.append(aa[-2])
    if not b1:
        out.append(bb[-1])
    return out, ok


@proves("matmul.shape",
        over=bounded("every pair of ranks 1..4, every pattern of 1s in the aligned batch "
                     "axes (traced, both directions), sizes symbolic"))
def matmul_shape_rule():
    for ra, rb in itertools.product((1, 2, 3, 4), repeat=2):
        a = list(z3.Ints(" ".join("a%d" % i for i in range(ra))))
        b = list(z3.Ints(" ".join("b%d" % i for i in range(rb))))
        sizes = [v >= 0 for v in a + b]
        ref, ref_ok = _np_matmul_shape(a, b)
        code, code_ok = _code_matmul_shape(a, b)
        require(len(ref) == len(code), "matmul ranks %d, %d: %d axes, NumPy %d",
                ra, rb, len(code), len(ref))
        prove(z3.And(z3.And(*code_ok) == z3.And(*ref_ok),
                     z3.Implies(z3.And(*ref_ok), z3.And(*[x == y for x, y in zip(code, ref)]))),
              sizes)
    shapes = [s for r in (1, 2, 3) for s in itertools.product((0, 1, 2, 3), repeat=r)]
    for sa, sb in itertools.product(shapes, repeat=2):
        try:
            got: Optional[tuple] = matmul_shape(sa, sb)
        except UserError:
            got = None
        try:
            want: Optional[tuple] = np.matmul(np.empty(sa), np.empty(sb)).shape
        except ValueError:
            want = None
        require(got == want, "matmul_shape(%s, %s) = %s, NumPy %s", sa, sb, got, want)
    # traced: x @ y on symbolic sizes (1-D, 2-D, batched and broadcast batches)
    from .op_rules import Contract
    for sa, sb in (((4,), (4, 3)), ((5, 4), (4,)), ((2, 5, 4), (4, 3)),
                   ((2, 1, 5, 4), (3, 4, 6))):
        tr = Contract(lambda x, y: x @ y, (np.ones(sa), np.ones(sb)),
                      {"x": tuple(1 if s == 1 else A for s in sa),
                       "y": tuple(1 if s == 1 else A for s in sb)})
        ref, ok = _np_matmul_shape(list(tr.ins[0]), list(tr.ins[1]))
        prove_code(lambda *v: z3.And(*[a == b for a, b in zip(v, ref)], *ok),
                   list(tr.outs[0]), tr.hyps, P=tr.P, what="%s @ %s traced" % (sa, sb))
    # traced: every pair of ranks 1..4, every pattern of 1s in the batch axes, both
    # directions (proofs/op_shape_rules.py)
    from .op_shape_rules import matmul_sweep
    matmul_sweep()
