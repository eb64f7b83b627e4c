"""Proof of ``split.sizes`` for every number of sections, every list of split points,
every rank and every axis: the code's own piece bounds evaluated for a symbolic piece
index, its reads read from the code, one trace per code path.

NumPy (``numpy/lib/_shape_base_impl.py``): ``np.array_split(x, k)`` cuts the axis of size
``n`` into ``k`` pieces, the first ``n % k`` of ``n // k + 1`` elements, the rest of ``n //
k`` (``div_points``: the running sum of those sizes from 0); ``np.split(x, k)`` needs ``k``
to divide ``n`` (then ``k`` pieces of ``n // k``); ``np.split(x, [i1, ..., im])`` slices
``[0:i1], [i1:i2], ..., [im:]``; ``k <= 0`` is refused.

``_array_split`` / ``_split`` / ``_split_at`` (``capture/ops/shape.py``) compute every
piece alike from its index ``i`` (a loop or a comprehension over ``range(k)``, each piece
one slice of the normalised axis, every other axis a full slice) -- their reads are
pinned from the code (``READS``, ``read_alike``).  So the proof evaluates the code's own
expressions for a piece's bounds and length (the statements ``start = ...``, ``stop =
...``, ``length = ...``, the comprehensions' items) on Z3 integers ``n >= 0``, ``k >= 1``
and ``0 <= i < k`` -- every number of sections, every piece -- and proves them NumPy's:
the first piece starts at 0, each piece ends where the next starts, its length is
NumPy's size for it, the last ends at ``n``, all within ``[0, n]`` (so the slice has that
length).  ``norm_axis`` is proven for every integer (``concatenate_every``).  The real
tracer checks each code path once, every size symbolic, both directions: sections on a
symbolic and on a static axis, equal sections, and two split points of every sign pair
(the slices' sign cases).
"""
from __future__ import annotations

import ast
from typing import Dict

import numpy as np
import z3

from symshape.capture.ops import shape as SH

from . import every, proves
from . import numpy_shapes as N
from .alike import read_alike
from .code import prove_code
from .concatenate_every import norm_axis_every
from .op_shape_rules import _check_many, _shape
from .pyint import Py, require, zmax, zmin
from .reads import header, source_tree

_STARTS = "starts = [i * q + min(i, r) for i in range(k + 1)]"
_STATIC = "return _split_at(t, x, ax, [(starts[i], starts[i + 1]) for i in range(k)])"
_START = "start = i * q + sym_min(i, r)"
_STOP = "stop = (i + 1) * q + sym_min(i + 1, r)"
_LENGTH = "length = q + sym_min(1, sym_max(r - i, 0))"
_ITEMS = "items = [slice(None)] * ax + [slice(to_expr(start), to_expr(stop), None)]"
_SHAPE = "shape = tuple((length if j == ax else s for j, s in enumerate(x.shape)))"
_EMIT = "out.append(t.emit('getitem', (x.node,), {'index': IndexAttr(items)}, shape, x.dtype))"
_EQUAL = "return _split_at(t, x, ax, [(i * q, (i + 1) * q) for i in range(k)])"
_EDGES = "return _split_at(t, x, ax, list(zip(edges[:-1], edges[1:])))"
_PIECE = "out.append(getitem(t, x, (slice(None),) * ax + (slice(lo, hi),)))"

#: {function: {name: every statement of it mentioning the name}}
READS: Dict[str, Dict] = {
    "_array_split": {
        "k": ("k = int(indices_or_sections)", "if k <= 0", "q, r = (n // k, n % k)",
              "for i in range(k)", _STARTS, _STATIC),
        "n": ("n = x.shape[ax]", "q, r = (n // k, n % k)"),
        "q": ("q, r = (n // k, n % k)", _STARTS, _START, _STOP, _LENGTH),
        "r": ("q, r = (n // k, n % k)", "if type(r) is not SymInt", _STARTS, _START, _STOP,
              _LENGTH),
        "i": ("for i in range(k)", _STARTS, _STATIC, _START, _STOP, _LENGTH),
        "ax": ("ax = norm_axis(axis, x.ndim)", "n = x.shape[ax]",
               "return _split(t, x, indices_or_sections, ax)", _STATIC, _ITEMS, _SHAPE),
        "starts": (_STARTS, _STATIC),
        "start": (_START, _ITEMS),
        "stop": (_STOP, _ITEMS),
        "length": (_LENGTH, _SHAPE),
        "items": (_ITEMS, _EMIT),
        "shape": (_SHAPE, _EMIT),
        "out": ("out = []", "return out", _EMIT),
    },
    "_split": {
        "k": ("k = int(indices_or_sections)", "if k <= 0", "if not n % k == 0", "q = n // k",
              _EQUAL),
        "n": ("n = x.shape[ax]", "if not n % k == 0", "q = n // k"),
        "q": ("q = n // k", _EQUAL),
        "ax": ("ax = norm_axis(axis, x.ndim)", "n = x.shape[ax]", _EDGES, _EQUAL),
        "idx": ("idx = list(indices_or_sections)", "edges = [0] + idx + [None]"),
        "edges": ("edges = [0] + idx + [None]", _EDGES),
    },
    "_split_at": {
        "bounds": ("for (lo, hi) in bounds",),
        "lo": ("for (lo, hi) in bounds", _PIECE),
        "hi": ("for (lo, hi) in bounds", _PIECE),
        "ax": (_PIECE,),
        "out": ("out = []", "return out", _PIECE),
    },
}


def _statement(fn, text: str) -> ast.stmt:
    """The one statement of ``fn`` whose text is ``text``."""
    found = [n for n in ast.walk(source_tree(fn)) if isinstance(n, ast.stmt)
             and header(n) == text]
    require(len(found) == 1, "%s has no single statement `%s`", fn.__name__, text)
    return found[0]


def _value(node: ast.expr, names: dict):
    """The code's own expression ``node`` evaluated on ``names`` (Z3 terms)."""
    return eval(compile(ast.Expression(node), "<split code>", "eval"), names)  # noqa: S307


def _names(P: Py, n, k, i) -> dict:
    q, r = P.floordiv(n, k), P.mod(n, k)
    return {"q": q, "r": r, "i": i, "min": zmin, "sym_min": zmin, "sym_max": zmax}


def _pieces_claim(n, k, i, P: Py, what: str, start_at, length=None) -> None:
    """The code's piece ``i`` (``start_at(j)``: where piece ``j`` starts, ``length``: its
    length) is NumPy's: piece 0 starts at 0, piece ``i`` is NumPy's size long and ends
    where piece ``i + 1`` starts, piece ``k`` starts at ``n``, all within ``[0, n]``."""
    q, r = P.floordiv(n, k), P.mod(n, k)
    size = z3.If(i < r, q + 1, q)              # NumPy: the first n % k pieces one longer
    impl = [start_at(0), start_at(i), start_at(i + 1), start_at(k)]
    impl += [length] if length is not None else []

    def claim(s0, si, s1, sk, *ln):
        ok = [s0 == 0, s1 - si == size, sk == n, 0 <= si, si <= s1, s1 <= n]
        return z3.And(*(ok + [ln[0] == size] if ln else ok))
    prove_code(claim, impl, [n >= 0, k >= 1, 0 <= i, i < k], P=P, what=what)


def section_bounds() -> None:
    """Every piece of every number of sections, from the code's own expressions."""
    n, k, i = z3.Ints("n k i")
    fn = SH._array_split
    P = Py()
    # the symbolic path: the loop's start / stop / length of piece i (stop: where i + 1
    # starts, the start's own expression at i + 1)
    start = _statement(fn, _START).value
    stop = _value(_statement(fn, _STOP).value, _names(P, n, k, i))
    length = _value(_statement(fn, _LENGTH).value, _names(P, n, k, i))
    _pieces_claim(n, k, i, P, "np.array_split, a symbolic axis: piece i of k",
                  lambda j: _value(start, _names(P, n, k, j)), length)
    prove_code(lambda a, b: a == b, [stop, _value(start, _names(P, n, k, i + 1))],
               [n >= 0, k >= 1, 0 <= i, i < k], P=P,
               what="np.array_split: piece i stops where piece i + 1 starts")
    # a static axis: the comprehension's starts, piece i the slice [starts[i], starts[i+1]]
    elt = _statement(fn, _STARTS).value.elt
    P2 = Py()
    _pieces_claim(n, k, i, P2, "np.array_split, a static axis: piece i of k",
                  lambda j: _value(elt, _names(P2, n, k, j)))
    # np.split into k equal sections: (i*q, (i+1)*q), k dividing n (the guard)
    lo, hi = _statement(SH._split, _EQUAL).value.args[3].elt.elts
    P3 = Py()
    vals = [_value(lo, _names(P3, n, k, i)), _value(hi, _names(P3, n, k, i))]
    q = P3.floordiv(n, k)
    prove_code(lambda a, b: z3.And(0 <= a, a <= b, b <= n, b - a == q), vals,
               [n >= 0, k >= 1, 0 <= i, i < k, P3.mod(n, k) == 0], P=P3,
               what="np.split into k equal sections: piece i")


@proves("split.sizes", over=every(
    "every number of sections k (k <= 0 refused), every list of split points (symbolic, "
    "every sign), every rank and every axis, every size symbolic, both directions: "
    "_array_split's, _split's and _split_at's reads read from their code (every piece "
    "alike from its index, one slice of the normalised axis); the code's own expressions "
    "for piece i's bounds and length evaluated for symbolic n >= 0, k >= 1, 0 <= i < k and "
    "proven NumPy's (contiguous from 0 to n, the first n % k one longer; np.split: k | n, "
    "n // k each); norm_axis proven for every integer; traced once per code path at rank "
    "3 (np.array_split into 3 on a symbolic and on a static axis, np.split into 3 on axis "
    "-1, np.split at two symbolic points of each sign pair ++, --, +-, past the end on "
    "axis -1); a "
    "piece's slice is getitem's (index.basic's proof, every rank and index)"))
def split_sizes():
    for name, reads in READS.items():
        read_alike(getattr(SH, name), reads)
    norm_axis_every()
    section_bounds()
    r3 = _shape(3)
    _check_many([
        (lambda x: tuple(np.array_split(x, 3, axis=1)), [r3],
         lambda P, ins, v: N.array_split_sections(P, ins[0], 3, 1), ()),
        (lambda x: tuple(np.array_split(x, 3, axis=1)), [((3, 7, 5), {1: 7})],
         lambda P, ins, v: N.array_split_sections(P, ins[0], 3, 1), ()),
        (lambda x: tuple(np.split(x, 3, axis=-1)), [((3, 4, 6), {})],
         lambda P, ins, v: N.split_sections(P, ins[0], 3, -1), ()),
    ], "np.array_split / np.split(k sections)")
    at = lambda x, i, j: tuple(np.split(x, [i, j], axis=-1))     # noqa: E731
    spec = lambda P, ins, v: N.split_indices(ins[0], v, -1)       # noqa: E731
    x = [((4, 5, 6), {})]
    _check_many([(at, x, spec, (2, 4)), (at, x, spec, (-4, -1)), (at, x, spec, (1, -2)),
                 (at, x, spec, (4, 9))], "np.split(x, [i, j]) (every sign pair)")
