"""Op shape rules that keep the shape, over every rank and every axis argument: the axis
handling run on a symbolic rank and symbolic axes, the shape read from the code to pass
through whole, in three parts:

* (a) ``read_alike`` (``proofs/alike.py``) with this module's own tables: every statement of
  the rule that mentions the input, its shape, the axis argument or the normalised axes is
  one of the listed texts -- the shape handed whole to ``t.emit`` (so its length, the rank,
  enters nowhere else), each axis normalised alike in one comprehension, the repeat test a
  loop over the whole tuple testing each axis against those before it only.
* (b) the rule's axis handling run with a stand-in tracer whose operand has a *symbolic*
  rank ``n >= 0`` (``proofs/intpaths.py``: every path of every comparison), on axis None,
  one symbolic int and a tuple of two symbolic ints; on each path, both directions against
  NumPy's acceptance rule stated in Z3 (``normalize_axis_tuple``: each axis in ``[-n, n)``,
  no two equal after normalisation): a path that returns is one NumPy accepts, with the
  axes NumPy's ``a mod n``, and a path that refuses (a ``UserError``) one NumPy refuses.
  Two symbolic axes stand for any number because (a) pins the reads alike.
* (c) the op traced once with the real tracer (``op_shape_rules._check_all``: contract,
  NumPy's shapes on every point of it, the converse) at one rank.

The rules: ``shape.flip`` (no axis repeated), ``shape.roll`` (shifts paired with the axes
by ``_broadcast_pair``, proven for every pair of lengths), ``reduce.flat_or_axis`` (its
four callers read; reshape to ``(-1,)`` replaced by ``reshape.infer``'s proven
specification), ``stats.scan`` (an ``npcall.Args`` stand-in; ``prod``, the fold
``reshape.explicit`` proves) and ``creation.triangle`` (the mask's sizes ``x.shape[-2:]``
and ``np.where``'s broadcasting read alike axis by axis, ``broadcast.pair`` proven for every
pair of sizes; traced at ranks 1 and 3).  ``select.partition`` stays a bounded sweep
(``proofs/op_shape_calls.py``): its rule indexes a shape tuple by ``len(shape)``, which
no symbolic rank can run.
"""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import traceback
from contextlib import contextmanager

import numpy as np
import z3

from symshape.capture.ops import shape as SH
from symshape.capture.tracer import FUNCTIONS
from symshape.errors import UserError

from . import every, proves
from .axisargs import norm_axis_every
from . import numpy_shapes as N
from .alike import read_alike
from .intpaths import int_module, int_paths, prove_int_paths
from .op_shape_rules import _bind1, _check_all, _shape
from .pyint import ProofFailure, require
from .reads import source_tree
from .symcoeff import sym_ints


# ---------------------------------------------------------------------------- stand-ins
class _Shape:
    """The operand's shape: the rule may hand it on whole and nothing else."""

    def __getattr__(self, name):
        raise ProofFailure("the rule reads the shape (%s), not hands it on whole" % name)

    def __iter__(self):
        raise ProofFailure("the rule iterates over the shape, not hands it on whole")

    def __len__(self):
        raise ProofFailure("the rule reads the shape's length, not hands it on whole")

    def __getitem__(self, k):
        raise ProofFailure("the rule indexes the shape, not hands it on whole")


class _Operand:
    """A traced array of symbolic rank ``ndim`` (an SInt) and an opaque shape."""

    def __init__(self, ndim) -> None:
        self.ndim = ndim
        self.shape = _Shape()
        self.node = "x"
        self.dtype = np.dtype(float)


class _Tracer:
    """``operand`` hands back the stand-in, ``emit`` the attributes and the shape given."""

    def __init__(self, x: _Operand) -> None:
        self.x = x

    def operand(self, m):
        """The stand-in operand."""
        return self.x

    def emit(self, op, args, attrs, shape, dtype):
        """What the rule emitted: its attributes and its output shape."""
        return attrs, shape


class Refusal(ValueError):
    """A ``UserError`` the rule raised, as the explorer records it (it records
    ``ValueError`` / ``TypeError`` / ``ArithmeticError`` as a path's result)."""


def refusing(fn):
    """``fn`` with a ``UserError`` it raises passed on as a ``Refusal``."""
    def call(*args):
        try:
            return fn(*args)
        except UserError as e:
            raise Refusal(str(e)) from e
    return call


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` is the rule refusing: a ``UserError``, or the ``TypeError`` of
    formatting its message (``%d`` of a symbolic axis) raised inside a ``raise
    UserError(...)`` or ``raise a.fail(...)`` statement of the engine (read from the
    innermost frame's source)."""
    if isinstance(exc, (UserError, Refusal)):
        return True
    if not isinstance(exc, TypeError) or exc.__traceback__ is None:
        return False
    frame, line = traceback.extract_tb(exc.__traceback__)[-1][:2]
    if "/proofs/" in frame:
        return False
    return any(lo <= line <= hi for lo, hi in _refusals(frame))


@functools.lru_cache(maxsize=None)
def _refusals(path: str) -> tuple:
    """The line spans of the ``raise UserError(...)`` / ``raise a.fail(...)`` statements of
    the source file ``path`` (parsed once)."""
    tree = ast.parse("".join(linecache.getlines(path)))
    return tuple((node.lineno, node.end_lineno) for node in ast.walk(tree)
                 if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                 and ast.unparse(node.exc.func) in ("UserError", "a.fail"))


def _raises(accept):
    """A refusing path must be one NumPy refuses; any other exception fails the proof."""
    return lambda e: z3.Not(accept) if refused(e) else z3.BoolVal(False)


def in_range(a, n):
    """NumPy's ``normalize_axis_index`` accepts ``a`` for rank ``n``."""
    return z3.And(-n <= a, a < n)


def normal(a, n):
    """The axis NumPy names by ``a`` (for ``-n <= a < n``): ``a mod n``."""
    return z3.If(a < 0, a + n, a)


# ---------------------------------------------------------------------------- norm_axis
# ---------------------------------------------------------------------------- np.flip
#: every statement of ``_flip`` / ``_once`` that mentions the operand, the axis argument or
#: the normalised axes: the shape handed whole to emit, each axis normalised alike, each
#: axis tested against the ones before it only
FLIP_READS = {
    "x": ("x = t.operand(m)",
          "ax = None if axis is None else _once(tuple((norm_axis(a, x.ndim) for a in "
          "_sizes(axis))), 'np.flip')",
          "return t.emit('flip', (x.node,), {'axis': ax}, x.shape, x.dtype)"),
    "axis": ("ax = None if axis is None else _once(tuple((norm_axis(a, x.ndim) for a in "
             "_sizes(axis))), 'np.flip')",),
    "ax": ("ax = None if axis is None else _once(tuple((norm_axis(a, x.ndim) for a in "
           "_sizes(axis))), 'np.flip')",
           "return t.emit('flip', (x.node,), {'axis': ax}, x.shape, x.dtype)"),
}
ONCE_READS = {
    "axes": ("for a in axes", "return axes"),
    "seen": ("seen: list = []", "if a in seen", "seen.append(a)"),
    "a": ("for a in axes", "if a in seen", "seen.append(a)"),
}


def _returns(fn, text: str) -> None:
    """``fn``'s body (after a docstring) is the one statement ``text``."""
    body = source_tree(fn).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    require([ast.unparse(b) for b in body] == [text], "%s is no longer `%s`", fn.__name__, text)


def kept(call, n, want_axes, accept, what: str) -> None:
    """``call(t)`` (the rule on an operand of rank ``n``) hands the shape on whole and
    emits the axes ``want_axes`` exactly when ``accept`` (NumPy's rule), refuses otherwise."""
    x = _Operand(n)
    if not want_axes:                       # axis None: nothing symbolic to claim
        unread_axes(call, x, what)
        return

    def run():
        attrs, shape = refusing(call)(_Tracer(x))
        if shape is not x.shape:
            raise ProofFailure("%s: the output shape is not the input's" % what)
        ax = attrs["axis"]
        got = () if ax is None else ax if isinstance(ax, tuple) else (ax,)
        if len(got) != len(want_axes):
            raise ProofFailure("%s: %d axes emitted, %d named" % (what, len(got),
                                                                 len(want_axes)))
        return tuple(got)

    def ok(*got):
        return z3.And(accept, *[g == w for g, w in zip(got, want_axes)])
    prove_int_paths(run, ok, [n.v >= 0], SH, what, raises=_raises(accept))


def _returns_last(fn, text: str) -> None:
    """``fn`` ends in the statement ``text`` after one ``if`` that returns (a dispatch)."""
    body = source_tree(fn).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    require(len(body) == 2 and isinstance(body[0], ast.If) and not body[0].orelse
            and [type(b) for b in body[0].body] == [ast.Return]
            and ast.unparse(body[1]) == text,
            "%s is no longer a dispatch ending in `%s`", fn.__name__, text)


def flip_axes(rule, axes, n, want_axes, accept, what: str) -> None:
    """``rule(t, m, axis=axes)`` on an operand of rank ``n``: ``kept``."""
    kept(lambda t: rule(t, "m", axes), n, want_axes, accept, what)


def unread_axes(call, x: _Operand, what: str) -> None:
    """``call(t)`` with axis None on the operand ``x`` of a symbolic rank: one path, no
    test of the rank, the shape handed on whole and axis None emitted."""
    ex, paths = int_paths(lambda: call(_Tracer(x)), [x.ndim.v >= 0], SH)
    require(len(paths) == 1, "%s: %d paths, the rank tested", what, len(paths))
    got = paths[0][1]
    require(not isinstance(got, BaseException), "%s raises %r", what, got)
    attrs, shape = got
    require(shape is x.shape and attrs["axis"] is None, "%s emits %r, %r", what, attrs, shape)


@proves("shape.flip", over=every(
    "every rank and every axis argument (None, an int, a tuple or list of any length, "
    "either sign): the shape handed whole to emit and each axis normalised alike and "
    "tested against those before it only, read from the code (_flip, _once; fliplr / "
    "flipud read to be _flip with axis 1 / 0); norm_axis proven for every integer and "
    "rank; _flip run on a symbolic rank n >= 0 with axis None, one symbolic int and two "
    "symbolic ints, both directions against NumPy's normalize_axis_tuple (each axis in "
    "[-n, n), none repeated); traced at rank 3"))
def shape_flip():
    """np.flip keeps the shape and admits exactly NumPy's axis arguments (a repeated axis
    refused: NumPy's "repeated axis")."""
    read_alike(SH._flip, FLIP_READS)
    read_alike(SH._once, ONCE_READS)
    _returns(SH._fliplr, "return _flip(t, m, 1)")
    _returns(SH._flipud, "return _flip(t, m, 0)")
    norm_axis_every()
    n, a, b = sym_ints("n a b")
    flip_axes(SH._flip, None, n, (), z3.BoolVal(True), "np.flip(x) of rank n")
    flip_axes(SH._flip, a, n, (normal(a.v, n.v),), in_range(a.v, n.v),
              "np.flip(x, a) of rank n")
    flip_axes(SH._flip, (a, b), n, (normal(a.v, n.v), normal(b.v, n.v)),
              z3.And(in_range(a.v, n.v), in_range(b.v, n.v),
                     normal(a.v, n.v) != normal(b.v, n.v)),
              "np.flip(x, (a, b)) of rank n")
    same = lambda P, ins, v: ([tuple(ins[0])], [])      # noqa: E731
    _check_all([(_bind1(np.flip), same), (_bind1(np.flip, axis=(0, -1)), same),
                (_bind1(np.fliplr), same), (_bind1(np.flipud), same)], [_shape(3)],
               "np.flip / fliplr / flipud(rank 3)")


# ---------------------------------------------------------------------------- np.roll
_ROLL_AX = ("ax = None if axis is None else tuple((norm_axis(v, x.ndim) for v in axis)) if "
            "isinstance(axis, (tuple, list)) else norm_axis(axis, x.ndim)")
_ROLL_SHIFT = ("shift = _static_ints(shift, 'np.roll shift') if isinstance(shift, (tuple, "
               "list)) else shift.expr if type(shift) is SymInt else int(shift)")
_ROLL_TEST = ("if isinstance(shift, tuple) and (tuple in map(type, shift) or not "
              "_broadcast_pair(len(shift), len(ax) if isinstance(ax, tuple) else None))")
_ROLL_EMIT = "return t.emit('roll', (x.node,), {'shift': shift, 'axis': ax}, x.shape, x.dtype)"
#: every statement of ``_roll`` that mentions the operand, the axes or the shifts: the shape
#: handed whole to emit, each axis normalised alike, the shifts read as a whole (their
#: kinds and their count against the axes') and otherwise only emitted
ROLL_READS = {
    "x": ("x = t.operand(a)", _ROLL_AX, _ROLL_EMIT),
    "axis": (_ROLL_AX,),
    "ax": (_ROLL_AX, _ROLL_TEST, _ROLL_EMIT),
    "shift": (_ROLL_SHIFT, _ROLL_TEST, _ROLL_EMIT),
}


def broadcast_pair_every() -> None:
    """``_broadcast_pair(n, m)`` for every ``n, m >= 0`` (and ``m`` None, a scalar) is
    NumPy's rule for broadcasting two 1-D sequences: equal lengths or either of length 1."""
    k, m = sym_ints("k m")

    def pair(other, want, what):
        prove_int_paths(lambda: 1 if SH._broadcast_pair(k, other) else 0,
                        lambda got: got == z3.If(want, 1, 0), [k.v >= 0, m.v >= 0], SH,
                        what)
    pair(m, z3.Or(k.v == m.v, k.v == 1, m.v == 1), "_broadcast_pair(k, m)")
    pair(None, z3.BoolVal(True), "_broadcast_pair(k, None)")


@proves("shape.roll", over=every(
    "every rank, every axis argument (None, an int, a tuple or list of any length, either "
    "sign, repeats allowed as NumPy does) and every shift (an int, a tuple or list of any "
    "length; a traced int shift traced; np.roll read to hand every shift but an array to "
    "shape._roll): the shape handed whole to emit, each axis "
    "normalised alike, the shifts read as a whole (their count paired with the axes' by "
    "_broadcast_pair), read from the code; norm_axis proven for every integer and rank, "
    "_broadcast_pair for every pair of lengths; _roll run on a symbolic rank n >= 0 with "
    "symbolic shifts and axes (one int, two ints, None), both directions against NumPy's "
    "rule (each axis in [-n, n), shifts and axes broadcast to 1-D); traced at rank 3"))
def shape_roll():
    """np.roll keeps the shape and admits exactly NumPy's shift and axis arguments (shifts
    that do not pair with the axes refused: NumPy's broadcasting error)."""
    from symshape.capture.ops import selection as SEL
    require(FUNCTIONS[np.roll] is SEL._roll_any and SEL._static_roll is SH._roll,
            "np.roll is no longer _roll_any handing static shifts to shape._roll")
    _returns_last(SEL._roll_any, "return _static_roll(t, a, shift, axis)")
    read_alike(SH._roll, ROLL_READS)
    norm_axis_every()
    broadcast_pair_every()
    n, a, b, s, u = sym_ints("n a b s u")
    ra, rb = in_range(a.v, n.v), in_range(b.v, n.v)
    na, nb = normal(a.v, n.v), normal(b.v, n.v)
    cases = ((s, a, (na,), ra), ((s, u), (a, b), (na, nb), z3.And(ra, rb)),
             ((s, u), None, (), z3.BoolVal(True)), (s, (a, b), (na, nb), z3.And(ra, rb)),
             ((s, u), a, (na,), ra))
    for shift, axis, want, accept in cases:
        kept(lambda t, shift=shift, axis=axis: SH._roll(t, "m", shift, axis), n, want, accept,
             "np.roll(x, %r, %r) of rank n" % (shift, axis))
    same = lambda P, ins, v: ([tuple(ins[0])], [])      # noqa: E731
    _check_all([(_bind1(np.roll, 3), same), (_bind1(np.roll, (1, -2), axis=(0, -1)), same)],
               [_shape(3)], "np.roll(rank 3)")
    _check_all([(lambda x, k: np.roll(x, k, axis=-1), same)], [_shape(3)],
               "np.roll(rank 3, k, -1)", ints=(-2,))


# ---------------------------------------------------------------------------- sort & cum
_FLAT_CALL = "x, ax = _flat_or_axis(t, t.operand(a), axis)"
#: every statement of each caller of ``_flat_or_axis`` that mentions the operand or the
#: axis: the axis handed to ``_flat_or_axis`` alone, its array's shape handed whole to emit
#: (``_dtype`` reads the rank for the output dtype only)
CALLER_READS = {
    "_sort": {"axis": (_FLAT_CALL,),
              "x": (_FLAT_CALL, "return t.emit('sort', (x.node,), {'axis': ax}, x.shape, "
                                "x.dtype)")},
    "_argsort": {"axis": (_FLAT_CALL,),
                 "x": (_FLAT_CALL, "return t.emit('argsort', (x.node,), {'axis': ax, 'kind': "
                                   "kind, 'stable': stable}, x.shape, np.dtype(np.intp))")},
    "handler": {"axis": (_FLAT_CALL,),
                "x": (_FLAT_CALL, "dt = _dtype(name, x.dtype, x.ndim, ax, False, None if "
                                  "dtype is None else np.dtype(dtype), ())",
                      "return t.emit(name, (x.node,), attrs, x.shape, dt)")},
}
FLAT_READS = {
    "axis": ("if axis is None", "return (x, norm_axis(axis, x.ndim))"),
    "x": ("return (reshape(t, x, (-1,)), 0)", "return (x, norm_axis(axis, x.ndim))"),
}


@contextmanager
def _reshape_spec(module, x: _Operand):
    """``module.reshape`` replaced by ``reshape.infer``'s proven specification for the
    target ``(-1,)``: the array flattened (a marker), any other call a failure."""
    saved = module.reshape
    flat = object()

    def spec(t, arr, target):
        require(arr is x and tuple(target) == (-1,), "reshape(%r, %r), not the operand to "
                "(-1,)", arr, target)
        return flat
    module.reshape = spec
    try:
        yield flat
    finally:
        module.reshape = saved


@proves("reduce.flat_or_axis", over=every(
    "every rank and every axis argument (None or an int, either sign) of np.cumsum, "
    "np.cumprod, np.sort and np.argsort: each caller read from the code to hand the axis to "
    "_flat_or_axis alone and its array's shape whole to emit, _flat_or_axis read to be "
    "norm_axis or reshape to (-1,); norm_axis proven for every integer and rank, reshape "
    "to (-1,) replaced by its proven specification (reshape.infer: the size flattened); "
    "_flat_or_axis run on a symbolic rank n >= 0 and a symbolic axis, both directions "
    "against NumPy's normalize_axis_index; traced at rank 3"))
def reduce_flat_or_axis():
    """np.cumsum / cumprod / sort / argsort keep the shape along any axis NumPy accepts and
    flatten for None."""
    from symshape.capture.ops import reduction as RD
    for fn in (RD._sort, RD._argsort, FUNCTIONS[np.cumsum], FUNCTIONS[np.cumprod]):
        read_alike(fn, CALLER_READS[inspect.unwrap(fn).__name__])
    read_alike(RD._flat_or_axis, FLAT_READS)
    norm_axis_every()
    n, a = sym_ints("n a")
    x = _Operand(n)
    with _reshape_spec(RD, x) as flat:
        ex, paths = int_paths(lambda: RD._flat_or_axis(None, x, None), [n.v >= 0], RD)
        require([got for _, got in paths] == [(flat, 0)], "axis None: %r, not the operand "
                "flattened along axis 0", [got for _, got in paths])
    ok = in_range(a.v, n.v)

    def run():
        arr, ax = RD._flat_or_axis(None, x, a)
        require(arr is x, "an int axis: not the operand itself")
        return ax
    with int_module(SH):                      # norm_axis's int(axis)
        prove_int_paths(run, lambda ax: z3.And(ok, ax == normal(a.v, n.v)), [n.v >= 0], RD,
                        "_flat_or_axis(x, a) of rank n", raises=_raises(ok))
    flat_spec = lambda P, ins, v: N.along_axis(ins[0], None)     # noqa: E731
    same = lambda P, ins, v: ([tuple(ins[0])], [])               # noqa: E731
    _check_all([(_bind1(np.cumsum), flat_spec), (_bind1(np.sort, axis=None), flat_spec),
                (_bind1(np.argsort, axis=-2), same), (_bind1(np.cumprod, axis=1), same),
                (_bind1(np.sort), same)], [_shape(3)], "cumsum / sort / argsort / cumprod")


# ---------------------------------------------------------------------------- nancumsum
_SCAN_TEST = "if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)"
#: every statement of ``_scan`` that mentions the operand or the axis: the axis tested for
#: its kind and its range only, the shape handed on whole or to ``prod`` whole
SCAN_READS = {
    "x": ("x = a.arr('a')", "if not -x.ndim <= axis < x.ndim", "return tuple(x.shape)",
          "return (prod(x.shape),)"),
    "axis": ("axis = a.val('axis')", "if axis is None", _SCAN_TEST,
             "if not -x.ndim <= axis < x.ndim"),
}


class _Args:
    """``npcall.Args`` as ``_scan`` reads it: the operand, the axis, the failure."""

    what = "np.nancumsum"
    frame = None

    def __init__(self, x: _Operand, axis) -> None:
        self.x, self.axis = x, axis

    def arr(self, name):
        """The operand (the one array argument)."""
        require(name == "a", "_scan reads the array %r", name)
        return self.x

    def val(self, name, default=None):
        """The axis (the one value argument)."""
        require(name == "axis", "_scan reads the argument %r", name)
        return self.axis

    def fail(self, why: str) -> UserError:
        """The refusal."""
        return UserError(why)


def _scan_refuses(ST, x: _Operand, axis) -> None:
    """``_scan`` refuses the axis ``axis`` (not an int) on every path."""
    ex, paths = int_paths(lambda: refusing(ST._scan)(_Args(x, axis)), [x.ndim.v >= 0], ST)
    require(all(refused(got) for _, got in paths if isinstance(got, BaseException))
            and all(isinstance(got, BaseException) for _, got in paths),
            "np.nancumsum(axis=%r) is admitted: %r", axis, paths)


@proves("stats.scan", over=every(
    "every rank and every axis argument of np.nancumsum / np.nancumprod: None (the size "
    "flattened by prod, the fold reshape.explicit proves), every int of either sign "
    "(both directions against NumPy's normalize_axis_index, run on a symbolic rank n >= 0 "
    "and a symbolic axis along every path), and every other kind refused as NumPy's "
    "operator.index does (the code's isinstance test; a tuple, a float and a bool run); "
    "_scan's reads of the operand and the axis read from the code, the shape handed on "
    "whole; traced at rank 3"))
def stats_scan():
    """np.nancumsum / np.nancumprod keep the shape along any axis NumPy accepts and flatten
    for None."""
    from symshape.capture.ops import statistics as ST
    read_alike(ST._scan, SCAN_READS)
    require(ST.prod is SH.prod, "_scan's prod is not shape.prod (the proven fold)")
    n, a = sym_ints("n a")
    x = _Operand(n)
    x.shape = ("<the shape>",)                # a tuple: tuple() of it is itself
    saved = ST.prod
    flat = object()
    ST.prod = lambda shape: flat if shape is x.shape else None
    try:
        ex, paths = int_paths(lambda: ST._scan(_Args(x, None)), [n.v >= 0], ST)
    finally:
        ST.prod = saved
    require([got for _, got in paths] == [(flat,)], "axis None: %r, not the prod of the "
            "shape", [got for _, got in paths])
    ok = in_range(a.v, n.v)

    def run():
        return 1 if refusing(ST._scan)(_Args(x, a)) is x.shape else 0
    prove_int_paths(run, lambda whole: z3.And(ok, whole == 1), [n.v >= 0], ST,
                    "np.nancumsum(x, a) of rank n", raises=_raises(ok))
    _scan_refuses(ST, x, (a,))
    _scan_refuses(ST, x, 1.5)
    _scan_refuses(ST, x, True)
    flat_spec = lambda P, ins, v: N.along_axis(ins[0], None)     # noqa: E731
    same = lambda P, ins, v: ([tuple(ins[0])], [])               # noqa: E731
    _check_all([(_bind1(np.nancumsum), flat_spec), (_bind1(np.nancumprod, axis=-1), same),
                (_bind1(np.nancumsum, axis=1), same)], [_shape(3)],
               "nancumsum / nancumprod(rank 3)")


# ---------------------------------------------------------------------------- tril / triu
_TRI_KEEP = "keep = _tri(t, *x.shape[-2:], k=k if lower else k - 1, dtype=bool)"
_TRI_WHERE = "return np.where(keep, x, zero) if lower else np.where(keep, zero, x)"
#: every statement of the np.tril / np.triu handler, of ``_tri``, of ``np.where``'s rule and
#: of ``broadcast_shapes`` that mentions what the result's shape comes from: the rank read
#: by one test, the last two sizes (one for a 1-D array) as the mask's, the offset only
#: added to the mask's values, and broadcasting each axis from the right alike
TRIANGLE_READS = {
    "x": ("x = t.operand(m)", "if x.ndim < 1", _TRI_KEEP,
          "zero = np.zeros((), dtype=x.dtype)", _TRI_WHERE),
    "k": (_TRI_KEEP,),
    "keep": (_TRI_KEEP, _TRI_WHERE),
}
TRI_READS = {
    "N": ("_sizes_only(t, N, M)", "M = N if M is None else M", "rows = _arange(t, N)"),
    "M": ("_sizes_only(t, N, M)", "M = N if M is None else M", "cols = _arange(t, M)"),
    "k": ("mask = np.greater_equal(rows[:, None] + int(k), cols[None, :])",),
}
WHERE_READS = {
    "ops": ("ops = [t.operand(v) for v in (condition, x, y)]",
            "shape = broadcast_shapes([shape_of(v) for v in ops])",
            "dts = [weak_type(v) for v in ops[1:]]",
            "return t.emit('where', tuple((node_input(v) for v in ops)), {}, shape, dt)"),
    "shape": ("shape = broadcast_shapes([shape_of(v) for v in ops])",
              "return t.emit('where', tuple((node_input(v) for v in ops)), {}, shape, dt)"),
}
BROADCAST_READS = {
    "i": ("for i in range(-nd, 0)", "if len(s) >= -i", "got = broadcast_pair(size, s[i])"),
    "s": ("nd = max((len(s) for s in shapes), default=0)", "for s in shapes",
          "if len(s) >= -i", "got = broadcast_pair(size, s[i])"),
    "size": ("size = 1", "got = broadcast_pair(size, s[i])", "size = got", "out.append(size)"),
    "out": ("out: List[Any] = []", "out.append(size)", "return tuple(out)"),
}


@proves("creation.triangle", over=every(
    "every rank and every offset k of np.tril / np.triu: rank 0 refused (NumPy's tri() "
    "needs N), a 1-D array of n giving (n, n) and rank r >= 2 its shape, both directions; "
    "read from the code: the rank tested once, the mask built from x.shape[-2:] (the last "
    "two sizes, or the one), k only added to the mask's values, np.where's shape the "
    "broadcast of the mask's, x's and a 0-d zero's shapes, broadcast_shapes handling each "
    "axis from the right alike by broadcast_pair (proven for every pair of sizes: "
    "broadcast.pair), so the axes before the last two are x's and the rank enters nowhere "
    "else; traced at ranks 1 and 3, rank 0 exported and refused"))
def creation_triangle():
    """np.tril / np.triu keep the shape of a 2-D or higher array and square a 1-D one, as
    NumPy's ``where(tri(*m.shape[-2:], k), m, 0)`` does."""
    from symshape.capture.ops import creation as CR
    from symshape.capture.ops import elementwise as EW
    import symshape as ss
    for fn in (FUNCTIONS[np.tril], FUNCTIONS[np.triu]):
        read_alike(fn, TRIANGLE_READS)
    read_alike(CR._tri, TRI_READS)
    require(FUNCTIONS[np.where] is EW._where, "np.where is not elementwise._where")
    read_alike(EW._where, WHERE_READS)
    read_alike(EW.broadcast_shapes, BROADCAST_READS)
    square = lambda P, ins, v: ([(ins[0][0], ins[0][0])], [])   # noqa: E731
    same = lambda P, ins, v: ([tuple(ins[0])], [])               # noqa: E731
    _check_all([(_bind1(np.tril, k=1), square), (_bind1(np.triu, k=-2), square)], [_shape(1)],
               "np.tril / np.triu(rank 1)")
    _check_all([(_bind1(np.tril, k=-1), same), (_bind1(np.triu, k=2), same)], [_shape(3)],
               "np.tril / np.triu(rank 3)")
    for fn in (np.tril, np.triu):
        try:
            ss.export(lambda x, f=fn: f(x), (np.array(1.0),), dynamic_shapes={"x": ()})
        except UserError:
            continue
        raise ProofFailure("np.%s of a 0-d array is admitted; NumPy raises" % fn.__name__)
