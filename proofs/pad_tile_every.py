"""Proof of ``shape.pad_tile_repeat_stack`` for every rank, every axis and every count /
width: the rules' reads read from the code, ``norm_axis`` for every integer, one trace per
code path with the counts and widths symbolic.

``_stack``, ``_tile``, ``_repeat`` and ``_pad`` (``capture/ops/shape.py``) read the input
shape, the rank and their count / width arguments only as ``READS`` lists, each statement
read from the code (``read_alike``):

* np.stack: every operand converted alike, every later one (``xs[1:]``) checked alike
  against the first (same rank, every pair of sizes equal), the count ``len(xs)``
  inserted at the axis normalised against ``nd + 1``; one array given alone is its rows
  (the axis normalised against its rank, axis 0 moved there);
* np.tile: every repetition checked alike (``>= 0``), the shape and the repetitions each
  padded with leading 1s to the longer, then multiplied axis by axis (a comprehension over
  the pairs);
* np.repeat: the count checked (``>= 0``); ``axis=None`` the product of the whole shape (the
  ``prod`` fold of ``reshape.explicit``) times it, else the normalised axis' size times it
  and every other size kept (a comprehension over the axes);
* np.pad: the widths brought to one (before, after) pair per axis (one pair for all axes,
  an entry of one width doubled), every entry of three or more refused, every width
  checked alike (``>= 0``), every axis the size plus its pair (a comprehension).

``norm_axis`` is proven for every integer axis and rank against NumPy's
``normalize_axis_index`` (``concatenate_every.norm_axis_every``).  So each shape is the
same function of (the sizes, the normalised axis, the counts) at every rank; the real
tracer checks each code path once, every size and every count / width symbolic (a count
or width a symbolic int input: every value), both directions (``_check_many``).
"""
from __future__ import annotations

import numpy as np

from symshape.capture.ops import shape as SH

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .concatenate_every import norm_axis_every
from .op_shape_rules import _check_many, _shape

_EMIT_STACK = ("return t.emit('stack', (tuple((x.node for x in xs)),), attrs, tuple(shape), "
               "_result_dtype(xs, dtype))")
_CMP = "if x.ndim != nd or not all((a == b for a, b in zip(x.shape, xs[0].shape)))"
_ROWS = "return _fresh(t, np.moveaxis(arrays, 0, norm_axis(axis, arrays.ndim)), dtype)"
_EMIT_TILE = ("return t.emit('tile', (x.node,), {'reps': tuple(map(to_expr, reps))}, out, "
              "x.dtype)")
_TILE_OUT = ("out = tuple((s if type(r) is int and r == 1 else s * r for s, r in "
             "zip(shape, reps_full)))")
_REP_R = ("r, = _sizes_or_ints(repeats, 'np.repeat counts (arrays of counts are "
          "data-dependent)') if not isinstance(repeats, (tuple, list)) or len(repeats) == 1 "
          "else (None,)")
_REP_AXIS = "shape = tuple((s * r if i == ax else s for i, s in enumerate(x.shape)))"
_EMIT_REP = ("return t.emit('repeat', (x.node,), {'repeats': to_expr(r), 'axis': ax}, shape, "
             "x.dtype)")
_EMIT_FLAT = ("return t.emit('repeat', (x.node,), {'repeats': to_expr(r), 'axis': None}, "
              "(prod(x.shape) * r,), x.dtype)")
_PAD_OUT = "shape = tuple((s + a + b for s, (a, b) in zip(x.shape, widths)))"
_PAD_AXES = "for (ax, (s, (a, b))) in enumerate(zip(x.shape, widths))"
_PAD_EMPTY = "if (a or b) and (not s >= 1)"
_PAD_EMIT = ("return t.emit('pad', (x.node,), dict({'pad_width': attr, 'mode': mode}, "
             "**kwargs), shape, x.dtype)")
_PAD_BAD = "if any((not isinstance(w, tuple) or len(w) not in (1, 2) for w in widths))"
_PAD_PAIR = "widths = tuple((w if len(w) == 2 else (w[0], w[0]) for w in widths))"
_PAD_ATTR = "attr = tuple((tuple((to_expr(v) for v in w)) for w in widths))"

#: {rule function: {name: every statement of it mentioning the name}}
READS = {
    "_stack": {
        "xs": ("xs = [t.operand(a) for a in arrays]", "if not xs", "nd = xs[0].ndim",
               "for x in xs[1:]", "shape = list(xs[0].shape)", "shape.insert(ax, len(xs))",
               _EMIT_STACK, _CMP),
        "x": ("for x in xs[1:]", _EMIT_STACK, _CMP),
        "nd": ("nd = xs[0].ndim", "ax = norm_axis(axis, nd + 1)", _CMP),
        "ax": ("ax = norm_axis(axis, nd + 1)", "shape.insert(ax, len(xs))",
               "attrs = {'axis': ax} if dtype is None else {'axis': ax, 'dtype': "
               "np.dtype(dtype)}"),
        "shape": ("shape = list(xs[0].shape)", "shape.insert(ax, len(xs))", _EMIT_STACK),
        "axis": ("ax = norm_axis(axis, nd + 1)", _ROWS),
        "arrays": ("if type(arrays) is TracedArray", "xs = [t.operand(a) for a in arrays]",
                   "_some_rows(arrays)", "if arrays.ndim == 0", _ROWS),
    },
    "_tile": {
        "x": ("x = t.operand(A)", "nd = max(x.ndim, len(reps))",
              "shape = (1,) * (nd - x.ndim) + tuple(x.shape)", _EMIT_TILE),
        "reps": ("reps = _sizes_or_ints(reps, 'np.tile reps')", "for r in reps",
                 "nd = max(x.ndim, len(reps))", "reps_full = (1,) * (nd - len(reps)) + reps",
                 _EMIT_TILE),
        "nd": ("nd = max(x.ndim, len(reps))", "shape = (1,) * (nd - x.ndim) + tuple(x.shape)",
               "reps_full = (1,) * (nd - len(reps)) + reps"),
        "shape": ("shape = (1,) * (nd - x.ndim) + tuple(x.shape)", _TILE_OUT),
        "reps_full": ("reps_full = (1,) * (nd - len(reps)) + reps", _TILE_OUT),
        "out": (_TILE_OUT, _EMIT_TILE),
        "r": ("for r in reps", _TILE_OUT, "if type(r) is SymInt",
              "nonnegative(r, 'np.tile reps', user_frame(3))", "if r < 0"),
    },
    "_repeat": {
        "x": ("x = t.operand(a)", "ax = norm_axis(axis, x.ndim)", _REP_AXIS, _EMIT_REP,
              "return METHOD_OPS['repeat_counts'](t, x, repeats, axis)", _EMIT_FLAT),
        "r": (_REP_R, "if r is None", "if type(r) is SymInt", _REP_AXIS, _EMIT_REP,
              "nonnegative(r, 'np.repeat count', user_frame(3))", "if r < 0", _EMIT_FLAT),
        "ax": ("ax = norm_axis(axis, x.ndim)", _REP_AXIS, _EMIT_REP),
        "shape": (_REP_AXIS, _EMIT_REP),
        "axis": ("if axis is None", "ax = norm_axis(axis, x.ndim)",
                 "return METHOD_OPS['repeat_counts'](t, x, repeats, axis)"),
    },
    "_pad": {
        "x": ("x = t.operand(array)", "if len(widths) != x.ndim", _PAD_OUT, _PAD_EMIT,
              "widths = widths * x.ndim", _PAD_AXES),
        "widths": ("widths = _sizes_or_ints(pad_width, 'np.pad widths')",
                   "if widths and (not isinstance(widths[0], tuple))", _PAD_BAD,
                   "if len(widths) == 1", _PAD_PAIR, "if len(widths) != x.ndim",
                   "for w in widths", _PAD_OUT, _PAD_ATTR, "widths = (widths,)",
                   "widths = widths * x.ndim", _PAD_AXES),
        "w": (_PAD_BAD, _PAD_PAIR, "for w in widths", _PAD_ATTR, "for v in w"),
        "shape": (_PAD_OUT, _PAD_EMIT),
        "s": (_PAD_OUT, _PAD_AXES, _PAD_EMPTY),
        "a": (_PAD_OUT, _PAD_AXES, _PAD_EMPTY),
        "b": (_PAD_OUT, _PAD_AXES, _PAD_EMPTY),
    },
    # the conversion of counts and widths: every item alike, nested ones recursively
    "_sizes_or_ints": {
        "vals": ("vals = tuple(v) if isinstance(v, (tuple, list)) else (v,)", "for x in vals"),
        "out": ("out = []", "return tuple(out)", "out.append(_sizes_or_ints(x, what))",
                "out.append(x)", "out.extend(_static_ints(x, what))"),
    },
}


def _stack(axis):
    return lambda P, ins, v: N.stack(list(ins), axis)


def _stack_rows(axis):
    """NumPy's ``np.stack(x, axis)`` of one array: its ``shape[0]`` rows (at least one)."""
    def spec(P, ins, v):
        count, row = ins[0][0], list(ins[0][1:])
        row.insert(N.norm(axis, len(row) + 1), count)
        return [tuple(row)], [count >= 1]
    return spec


def _counted(spec):
    """``spec`` with NumPy's refusal of a negative count (the symbolic int inputs)."""
    def full(P, ins, v):
        out, ok = spec(P, ins, v)
        return out, ok + [k >= 0 for k in v]
    return full


def _edge(P, ins, v):
    """``np.pad(x, ((1, 0), (0, 0)), mode='edge')``: NumPy raises on an empty axis it pads."""
    (n, m), = ins
    return [(n + 1, m)], [n >= 1]


@proves("shape.pad_tile_repeat_stack", over=every(
    "every rank, every axis (every integer) and None, every count / width (symbolic ints) "
    "and every number of stacked arrays, every size symbolic, both directions: _stack's, "
    "_tile's, _repeat's, _pad's and _sizes_or_ints' reads of the shape, rank, axis and "
    "counts read from their code (every axis, operand, repetition and width alike), "
    "norm_axis proven for every integer against NumPy's normalize_axis_index; traced once "
    "per code path at rank 2 (np.stack of two and three arrays on axis 0, 1, -1, of one, "
    "of rank-0 arrays, the rows of a rank-3 array; np.tile with an int, a pair holding a "
    "1, more repetitions than axes and a symbolic count; np.repeat with axis None, 1 and -1 "
    "and a symbolic count; np.pad with one width, one pair, a pair per axis (symbolic) and "
    "mode='edge'); the rows path's np.moveaxis is the engine's transpose (shape.permute's "
    "proof, for every rank); refused while tracing, as before: out=, np.repeat with a "
    "list of several counts"))
def pad_tile_repeat_stack():
    for name, reads in READS.items():
        read_alike(getattr(SH, name), reads)
    norm_axis_every()
    r2 = _shape(2)
    _check_many([
        (lambda x, y: np.stack([x, y]), [r2, r2], _stack(0), ()),
        (lambda x, y, z: np.stack([x, y, z], axis=1), [r2, r2, r2], _stack(1), ()),
        (lambda x, y: np.stack([x, y], axis=-1), [r2, r2], _stack(-1), ()),
        (lambda x: np.stack([x], axis=-3), [r2], _stack(-3), ()),
        (lambda x, y: np.stack([x, y]), [_shape(0), _shape(0)], _stack(0), ()),
        (lambda x: np.stack(x, axis=-1), [_shape(3)], _stack_rows(-1), ()),
        (lambda x: np.stack(x), [_shape(3)], _stack_rows(0), ()),
    ], "np.stack(every code path)")
    _check_many([
        (lambda x: np.tile(x, 2), [r2], lambda P, ins, v: N.tile(ins[0], (2,)), ()),
        (lambda x: np.tile(x, (1, 3)), [r2], lambda P, ins, v: N.tile(ins[0], (1, 3)), ()),
        (lambda x: np.tile(x, (2, 1, 3)), [r2], lambda P, ins, v: N.tile(ins[0], (2, 1, 3)),
         ()),
        (lambda x, k: np.tile(x, (k, 2)), [r2],
         _counted(lambda P, ins, v: N.tile(ins[0], (v[0], 2))), (3,)),
        (lambda x, k: np.repeat(x, k), [r2],
         _counted(lambda P, ins, v: N.repeat(ins[0], v[0], None)), (2,)),
        (lambda x, k: np.repeat(x, k, axis=1), [r2],
         _counted(lambda P, ins, v: N.repeat(ins[0], v[0], 1)), (3,)),
        (lambda x, k: np.repeat(x, k, axis=-1), [r2],
         _counted(lambda P, ins, v: N.repeat(ins[0], v[0], -1)), (2,)),
    ], "np.tile / np.repeat(every code path)")
    _check_many([
        (lambda x, w: np.pad(x, w), [r2], lambda P, ins, v: N.pad(ins[0], v[0]), (2,)),
        (lambda x, a, b: np.pad(x, (a, b)), [r2], lambda P, ins, v: N.pad(ins[0], tuple(v)),
         (1, 3)),
        (lambda x, a, b, c, d: np.pad(x, ((a, b), (c, d))), [r2],
         lambda P, ins, v: N.pad(ins[0], ((v[0], v[1]), (v[2], v[3]))), (1, 0, 2, 3)),
        (lambda x: np.pad(x, ((1, 0), (0, 0)), mode="edge"), [r2], _edge, ()),
    ], "np.pad(every code path)")
