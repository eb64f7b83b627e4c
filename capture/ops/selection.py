"""Selection, packing and set functions with symbolic sizes, computed by NumPy itself
(``ops/npcall.py``): ``argpartition``, ``lexsort``, ``choose``, ``select``, ``compress`` and
``setdiff1d`` (data-dependent lengths), ``delete`` / ``insert`` of one index, ``cross``,
``packbits`` / ``unpackbits``, ``isin``, ``column_stack``, ``asarray_chkfinite``,
``ascontiguousarray`` / ``asfortranarray``, ``roll`` by traced shifts.
"""
from __future__ import annotations

import numpy as np

from symshape.rules import rule
from symshape.sizes.symint import describe, sym_ceildiv

from ..tracer import FUNCTIONS, SIZE_FUNCTIONS, TracedArray, implements, require_kth
from .elementwise import broadcast_shapes
from .npcall import Args, Call, register, traced_call
from .shape import norm_axis, prod


def _shape_of(a: Args, name: str) -> tuple:
    x = a.arr(name)
    return tuple(x.shape) if x is not None else np.shape(a.val(name))


def _same(name: str):
    def rule(a: Args) -> tuple:
        return _shape_of(a, name)
    return rule


def _along(name: str, default_axis=-1):
    """Same shape along an axis; the flattened size for ``axis=None``."""
    def rule(a: Args) -> tuple:
        shape = _shape_of(a, name)
        if a.given("axis") and a.val("axis") is None or (default_axis is None
                                                          and not a.given("axis")):
            return (prod(shape),)
        return shape
    return rule


@rule("select.partition")
def _argpartition(a: Args) -> tuple:
    """np.argpartition: the array's shape (flattened for ``axis=None``); every kth within
    the partitioned axis."""
    shape = _along("a")(a)
    axis = a.val("axis", -1)
    if axis is None:
        n = shape[0]
    elif shape:
        n = shape[int(axis) % len(shape)]
    else:
        n = 1
    require_kth(n, a.val("kth"), a.what, a.frame)
    return shape


def _lexsort(a: Args) -> tuple:
    keys = a.arr("keys")
    if keys is None or keys.ndim < 1:
        raise a.fail("keys must be an array of at least one dimension while tracing")
    if keys.ndim == 1:
        return tuple(keys.shape)
    return tuple(keys.shape[1:])


def _choices_shapes(a: Args, name: str) -> list:
    x = a.arr(name)
    if x is not None:
        return [tuple(x.shape[1:])]
    return [tuple(c.shape) if type(c) is TracedArray else np.shape(c) for c in a.val(name)]


def _choose(a: Args) -> tuple:
    return broadcast_shapes([_shape_of(a, "a")] + _choices_shapes(a, "choices"), a.what)


def _select(a: Args) -> tuple:
    shapes = _choices_shapes(a, "condlist") + _choices_shapes(a, "choicelist")
    return broadcast_shapes(shapes + [np.shape(a.val("default", 0))], a.what)


def _compress(a: Args) -> tuple:
    cond = a.arr("condition")
    n = prod(cond.shape) if cond is not None else len(a.val("condition"))
    shape = _shape_of(a, "a")
    axis = a.val("axis")
    # how many conditions are true is known only when the program runs
    u = a.new_size("compress length", 0, n if isinstance(n, int) else None)
    if axis is None:
        return (u,)
    ax = norm_axis(axis, len(shape))
    return tuple(shape[:ax]) + (u,) + tuple(shape[ax + 1:])


def _setdiff1d(a: Args) -> tuple:
    n = prod(_shape_of(a, "ar1"))
    return (a.new_size("setdiff1d length", 0, n if isinstance(n, int) else None),)


def _one_index(a: Args, what: str) -> None:
    obj = a.val("obj")
    if type(obj) is TracedArray or not isinstance(obj, (int, np.integer)) or \
            isinstance(obj, bool):
        raise a.fail("only a single int index is traced (%s=%r); a list or a slice of "
                     "indices can name an element twice or depend on the size" % (what, obj))


def _delete(a: Args) -> tuple:
    _one_index(a, "obj")
    shape = _shape_of(a, "arr")
    axis = a.val("axis")
    if axis is None:
        return (prod(shape) - 1,)
    ax = norm_axis(axis, len(shape))
    return tuple(shape[:ax]) + (shape[ax] - 1,) + tuple(shape[ax + 1:])


def _insert(a: Args) -> tuple:
    _one_index(a, "obj")
    if np.ndim(a.val("values")) != 0 or a.arr("values") is not None:
        raise a.fail("only a scalar value is traced (values=%r)" % (a.val("values"),))
    shape = _shape_of(a, "arr")
    axis = a.val("axis")
    if axis is None:
        return (prod(shape) + 1,)
    ax = norm_axis(axis, len(shape))
    return tuple(shape[:ax]) + (shape[ax] + 1,) + tuple(shape[ax + 1:])


def _vector_len(a: Args, shape: tuple) -> int:
    """2 or 3 (NumPy's output shape depends on which: a guard for a symbolic size)."""
    if shape:
        for n in (3, 2):
            if shape[-1] == n:
                return n
    raise a.fail("the vectors' last axis must have size 2 or 3, got %s"
                 % (describe(shape[-1]) if shape else "a scalar"))


def _cross(a: Args) -> tuple:
    if any(a.val(k, -1) != -1 for k in ("axisa", "axisb", "axisc")) or \
            a.val("axis") not in (None, -1):
        raise a.fail("axis arguments are not supported while tracing (vectors on the last "
                     "axis)")
    sa, sb = _shape_of(a, "a" if a.given("a") else "x1"), _shape_of(a, "b" if a.given("b")
                                                                    else "x2")
    na, nb = _vector_len(a, sa), _vector_len(a, sb)
    rest = broadcast_shapes([sa[:-1], sb[:-1]], a.what)
    return rest if na == nb == 2 else rest + (3,)


def _packbits(a: Args) -> tuple:
    shape = _shape_of(a, "a")
    axis = a.val("axis")
    if axis is None:
        return (sym_ceildiv(prod(shape), 8),)
    ax = norm_axis(axis, len(shape))
    return tuple(shape[:ax]) + (sym_ceildiv(shape[ax], 8),) + tuple(shape[ax + 1:])


def _unpackbits(a: Args) -> tuple:
    if a.val("count") is not None:
        raise a.fail("count= is not supported while tracing")
    shape = _shape_of(a, "a")
    axis = a.val("axis")
    if axis is None:
        return (prod(shape) * 8,)
    ax = norm_axis(axis, len(shape))
    return tuple(shape[:ax]) + (shape[ax] * 8,) + tuple(shape[ax + 1:])


def _column_stack(a: Args) -> tuple:
    tup = a.val("tup")
    if type(tup) is TracedArray:                # the rows of one array
        n, row = tup.shape[0], tuple(tup.shape[1:])
        if len(row) == 1:
            return (row[0], n)
        if len(row) < 1:
            raise a.fail("the rows must have at least one dimension")
        return (row[0], row[1] * n) + tuple(row[2:])
    shapes = [tuple(x.shape) if type(x) is TracedArray else np.shape(x) for x in tup]
    shapes = [(s[0], 1) if len(s) == 1 else s for s in shapes]
    width = 0
    for s in shapes:
        width = width + s[1]
    return (shapes[0][0], width) + tuple(shapes[0][2:])


@implements(np.astype)
def _astype(t, x, dtype, /, *, copy=True, device=None):
    """``np.astype(x, dtype)``: the method's op."""
    return t.operand(x).astype(dtype, copy=copy)


def _broadcast_shapes_of(t, *shapes):
    """``np.broadcast_shapes`` of shapes holding sizes: a tuple of sizes, no arrays."""
    as_tuples = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in shapes]
    return broadcast_shapes(as_tuples, "np.broadcast_shapes: shapes")


FUNCTIONS[np.broadcast_shapes] = _broadcast_shapes_of
_broadcast_shapes_of.takes_sizes = True
SIZE_FUNCTIONS.append(np.broadcast_shapes)


def _roll(a: Args) -> tuple:
    return _shape_of(a, "a")


ROWS = [
    Call(np.argpartition, _argpartition),
    Call(np.lexsort, _lexsort),
    Call(np.choose, _choose),
    Call(np.select, _select),
    Call(np.compress, _compress),
    Call(np.setdiff1d, _setdiff1d),
    Call(np.delete, _delete),
    Call(np.insert, _insert),
    Call(np.cross, _cross),
    Call(np.linalg.cross, _cross),
    Call(np.packbits, _packbits),
    Call(np.unpackbits, _unpackbits),
    Call(np.isin, _same("element")),
]

register(ROWS)
# routed by name: column_stack's dispatcher iterates over its argument (a traced array's
# rows); ascontiguousarray / asfortranarray are not dispatched to __array_function__ at all
# (and asarray_chkfinite is plain Python that branches on the values)
register([Call(np.column_stack, _column_stack), Call(np.ascontiguousarray, _same("a")),
          Call(np.asfortranarray, _same("a")), Call(np.asarray_chkfinite, _same("a"))],
         sizes=True)

_ROLL = Call(np.roll, _roll)
register([_ROLL], implement=False)
_static_roll = FUNCTIONS[np.roll]


@implements(np.roll)
def _roll_any(t, a, shift, axis=None):
    """``np.roll``: by constant shifts (shape.py); by traced shifts, NumPy's own call."""
    if type(shift) is TracedArray or isinstance(shift, np.ndarray):
        return traced_call(t, _ROLL, (a, shift, axis), {})
    return _static_roll(t, a, shift, axis)
