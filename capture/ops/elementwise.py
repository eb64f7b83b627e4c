"""Elementwise ops: every ufunc, broadcasting, ``where``, ``clip``, ``astype``, ``out=``.

Broadcasting two sizes asks ``a == b`` *first*: when it holds, the result is ``a`` whatever
the value (even 1), so no guard about 1 is needed and intermediate sizes that merely could
be 1 carve no holes.  Only when the sizes differ does ``a == 1`` / ``b == 1`` get asked.
"""
from __future__ import annotations

import re
from typing import Any, List, Sequence

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symfloat import SymFloat
from symshape.algebra import relations as R
from symshape.sizes.symint import SymInt, describe
from symshape.userframe import user_frame
from symshape.rules import rule

from ..tracer import (ELEMENTWISE, METHOD_OPS, TracedArray, Tracer, implements, shape_repr,
                      to_expr)
from .registry import defop


# --------------------------------------------------------------------------- broadcasting
@rule("broadcast.pair")
def broadcast_pair(a, b):
    """The broadcast of two sizes, or None when they cannot broadcast."""
    if type(a) is int and type(b) is int:
        if a == b or b == 1:
            return a
        return b if a == 1 else None
    if type(a) is int and a == 1:
        return b
    if type(b) is int and b == 1:
        return a
    if a == b:
        return b if type(a) is int else a
    if a == 1:
        return b
    if b == 1:
        return a
    return None


@rule("broadcast.shapes")
def broadcast_shapes(shapes: Sequence[tuple], what: str = "operands") -> tuple:
    nd = max((len(s) for s in shapes), default=0)
    out: List[Any] = []
    for i in range(-nd, 0):
        size = 1
        for s in shapes:
            if len(s) >= -i:
                got = broadcast_pair(size, s[i])
                if got is None:
                    raise UserError("%s could not be broadcast together with shapes %s%s"
                                    % (what, " ".join(shape_repr(x) for x in shapes),
                                       where(user_frame(3))))
                size = got
        out.append(size)
    return tuple(out)


def weak_type(x):
    """What NumPy's dtype resolution sees for an operand (NEP 50: Python scalars are weak)."""
    if type(x) is TracedArray:
        return x.dtype
    if isinstance(x, (bool, np.bool_)):
        return np.dtype(bool)
    if isinstance(x, np.generic):
        return x.dtype
    if type(x) is SymInt or isinstance(x, int):
        return int
    if isinstance(x, float) or type(x) is SymFloat:
        return float
    if isinstance(x, complex):
        return complex
    raise UserError("unsupported operand %r%s" % (x, where(user_frame(3))))


def node_input(x):
    """How an operand appears among a node's inputs."""
    if type(x) is TracedArray:
        return x.node
    return to_expr(x)


def shape_of(x) -> tuple:
    return x.shape if type(x) is TracedArray else ()


# --------------------------------------------------------------------------- ufuncs
_UFUNC_KW = {"out", "dtype", "casting"}


def ufunc_call(t: Tracer, ufunc, inputs, kwargs):
    unknown = set(kwargs) - _UFUNC_KW
    if unknown:
        raise UserError("np.%s(..., %s=...) is not supported while tracing%s"
                        % (ufunc.__name__, sorted(unknown)[0], where(user_frame(2))))
    if ufunc.nout != 1:
        return multi_output(t, ufunc, inputs, kwargs)
    out = kwargs.get("out")
    dtype = kwargs.get("dtype")
    ops = [t.operand(x) for x in inputs]
    shape = broadcast_shapes([shape_of(x) for x in ops])
    res_dtype = resolve(ufunc, ops, dtype)
    sizes_fit(t, ufunc, ops, dtype)
    attrs = {"dtype": np.dtype(dtype)} if dtype is not None else {}
    _ensure_ufunc_op(ufunc)
    res = t.emit(ufunc.__name__, tuple(node_input(x) for x in ops), attrs, shape, res_dtype)
    if out is not None:
        out = out[0] if isinstance(out, tuple) else out
        return assign_out(t, out, res)
    return res


def resolve(ufunc, ops, dtype=None) -> np.dtype:
    try:
        # dtype= fixes the loop's output dtype (the signature), as in the eager call
        kw = {} if dtype is None else \
            {"signature": (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout}
        dts = ufunc.resolve_dtypes(tuple(weak_type(x) for x in ops) + (None,) * ufunc.nout,
                                   **kw)
    except Exception as e:   # NumPy's own message: no loop for these dtypes
        raise UserError("np.%s: %s%s" % (ufunc.__name__, e, where(user_frame(3)))) from None
    return dts[-1]


def sizes_fit(t: Tracer, ufunc, ops, dtype=None) -> None:
    """A size meeting an integer array is a weak Python int (NEP 50): NumPy converts it to
    the array's dtype and raises ``OverflowError`` when it does not fit
    (``x.astype(np.int8) * n`` for n > 127).  The program is defined only where it fits: a
    guard on the size (so every backend, CuPy's kernels included, refuses what eager NumPy
    refuses instead of wrapping around)."""
    if not any(type(x) is SymInt for x in ops):
        return
    kw = {} if dtype is None else \
        {"signature": (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout}
    try:
        dts = ufunc.resolve_dtypes(tuple(weak_type(x) for x in ops) + (None,) * ufunc.nout,
                                   **kw)
    except Exception:       # resolve() already reported what NumPy refuses
        return
    frame = user_frame(3)
    for x, dt in zip(ops, dts):
        if type(x) is not SymInt or dt.kind not in "iu":
            continue
        info = np.iinfo(dt)
        bounds = [R.ge(x.expr, int(info.min))]
        if dt.itemsize < 8:
            bounds.append(R.le(x.expr, int(info.max)))
        for c in bounds:
            if not t.env.evaluate(c, None, frame):
                raise UserError("np.%s: the size %s is out of bounds for %s for the example "
                                "inputs (NumPy raises OverflowError)%s"
                                % (ufunc.__name__, describe(x), dt, where(frame)))


def multi_output(t: Tracer, ufunc, inputs, kwargs):
    if kwargs.get("out") is not None:
        raise UserError("np.%s(..., out=...) is not supported while tracing%s"
                        % (ufunc.__name__, where(user_frame(2))))
    ops = [t.operand(x) for x in inputs]
    shape = broadcast_shapes([shape_of(x) for x in ops])
    dts = ufunc.resolve_dtypes(tuple(weak_type(x) for x in ops) + (None,) * ufunc.nout)
    _ensure_ufunc_op(ufunc)
    outs = []
    for i in range(ufunc.nout):
        name = "%s_%d" % (ufunc.__name__, i)
        if name not in _SEEN:
            _SEEN.add(name)
            defop(name, "np.%s(*{inputs})[%d]" % (ufunc.__name__, i),
                  doc="output %d of np.%s" % (i, ufunc.__name__))
        outs.append(t.emit(name, tuple(node_input(x) for x in ops), {}, shape,
                           dts[ufunc.nin + i]))
    return tuple(outs)


_SEEN = set()


# ufuncs emitted as Python operators: what eager code wrote, including NumPy's fast paths
# for scalar powers (x ** 2 runs np.square), so compiled results match eager bit for bit
_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/",
              "true_divide": "/", "floor_divide": "//", "remainder": "%", "power": "**",
              "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
              "equal": "==", "not_equal": "!="}


_ATOM = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_.]*|\d+(?:\.\d*)?(?:e[-+]?\d+)?)$")


def _operand(text: str) -> str:
    """An operand of a binary operator: sizes render as ``s1*s3``, which needs parentheses."""
    return text if _ATOM.match(text) or text.startswith("(") and text.endswith(")") and \
        text.count("(") == 1 else "(%s)" % text


def emit_ufunc(args, attrs, name):
    sym = _OPERATORS.get(name)
    if sym is not None and len(args) == 2 and not attrs:
        return "(%s %s %s)" % (_operand(args[0]), sym, _operand(args[1]))
    return "np.%s(%s)" % (name, ", ".join(list(args) + ["%s=%s" % kv for kv in attrs.items()]))


def _ensure_ufunc_op(ufunc) -> None:
    name = ufunc.__name__
    if name not in _SEEN:
        _SEEN.add(name)
        defop(name, emit=lambda args, attrs, n=name: emit_ufunc(args, attrs, n),
              doc="np.%s, elementwise with broadcasting" % name)


def assign_out(t: Tracer, out, res: TracedArray):
    """``out=`` / in-place operators, functionalised: ``out`` now names a new value."""
    if type(out) is not TracedArray:
        raise UserError("writing into a NumPy array that is not traced (out=, or an in-place "
                        "operator on a constant)%s; make it an input or compute a new array"
                        % where(user_frame(3)))
    shape = broadcast_shapes([out.shape, res.shape], "the result and out=")
    if len(shape) != len(out.shape) or not all(_same(a, b) for a, b in zip(shape, out.shape)):
        raise UserError("a result of shape %s cannot be written into out= of shape %s%s"
                        % (shape_repr(res.shape), shape_repr(out.shape), where(user_frame(3))))
    if not np.can_cast(res.dtype, out.dtype, "same_kind"):
        raise UserError("cannot cast the result from %s to the out= dtype %s with casting "
                        "rule 'same_kind'%s" % (res.dtype, out.dtype, where(user_frame(3))))
    if res.dtype != out.dtype:
        res = astype(t, res, out.dtype)
    if tuple(map(to_expr, res.shape)) != tuple(map(to_expr, out.shape)):
        res = broadcast_to(t, res, out.shape)
    t.rebind(out, res)
    return out


def _same(a, b) -> bool:
    return a is b or to_expr(a) == to_expr(b) or bool(a == b)


ELEMENTWISE.append(ufunc_call)


# --------------------------------------------------------------------------- functions
defop("astype", "{0}.astype({dtype})", doc="cast to dtype")
defop("where", "np.where({0}, {1}, {2})", doc="select elementwise")
defop("clip", "np.clip({0}, {1}, {2})", doc="clamp elementwise")
defop("broadcast_to", "np.broadcast_to({0}, {shape})", doc="broadcast to a shape (a view)")
defop("copy", "np.copy({0})", doc="copy")


def astype(t: Tracer, x: TracedArray, dtype) -> TracedArray:
    dt = np.dtype(dtype)
    return t.emit("astype", (x.node,), {"dtype": dt}, x.shape, dt)


def broadcast_to(t: Tracer, x: TracedArray, shape) -> TracedArray:
    shape = tuple(shape)
    got = broadcast_shapes([x.shape, shape], "np.broadcast_to: the array and the shape")
    if len(got) != len(shape):
        raise UserError("np.broadcast_to: cannot broadcast shape %s to %s%s"
                        % (shape_repr(x.shape), shape_repr(shape), where(user_frame(2))))
    return t.emit("broadcast_to", (x.node,), {"shape": tuple(map(to_expr, shape))}, shape,
                  x.dtype)


@implements(np.broadcast_to)
def _broadcast_to(t, array, shape, subok=False):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    t.env.cancel_pending([to_expr(s) for s in shape])
    return broadcast_to(t, t.operand(array), shape)


@implements(np.copyto)
def _copyto(t, dst, src, casting="same_kind", where=True):
    """``np.copyto(dst, src, where=mask)``: ``dst`` now holds the selected values."""
    d = t.operand(dst)
    if type(d) is not TracedArray:
        raise UserError("np.copyto into a plain array while tracing: the destination must be "
                        "a traced value%s" % _line(2))
    new = t.operand(src if where is True else np.where(where, src, d))
    if type(new) is not TracedArray:
        new = t.constant(np.asarray(new, dtype=d.dtype))
    t.rebind(d, broadcast_to(t, astype(t, new, d.dtype), d.shape))


def _line(depth: int) -> str:
    return where(user_frame(depth + 1))


@implements(np.broadcast_arrays)
def _broadcast_arrays(t, *args, subok=False):
    xs = [t.operand(a) for a in args]
    # Python and NumPy scalars and plain arrays among them (numpy-financial's ipmt) are
    # broadcast as the arrays NumPy makes of them
    xs = [x if type(x) is TracedArray else t.constant(np.asarray(x)) for x in xs]
    shape = broadcast_shapes([x.shape for x in xs], "np.broadcast_arrays")
    # NumPy returns a list (a tuple before 2.0): keep its type.  An array already of the
    # broadcast shape is kept as it is: the shapes compared as expressions, which records
    # no guard (comparing the sizes would: (n,) against (m, n) compares n with m, and the
    # export then refused m == n, which NumPy accepts)
    want = tuple(map(to_expr, shape))
    return type(np.broadcast_arrays(np.zeros(1)))(
        x if tuple(map(to_expr, x.shape)) == want else broadcast_to(t, x, shape) for x in xs)


defop("real", "{0}.real", doc="real part (a view for complex input)")
defop("imag", "{0}.imag", doc="imaginary part")


def real_part(t: Tracer, x: TracedArray) -> TracedArray:
    """``x.real``: ``x`` itself for a real dtype (NumPy returns the array), else the part."""
    if x.dtype.kind != "c":
        return x
    return t.emit("real", (x.node,), {}, x.shape, _part(x.dtype))


def imag_part(t: Tracer, x: TracedArray) -> TracedArray:
    """``x.imag``: zeros of ``x``'s dtype for a real dtype, else the imaginary part."""
    if x.dtype.kind != "c":
        return np.zeros_like(x)
    return t.emit("imag", (x.node,), {}, x.shape, _part(x.dtype))


def _part(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)


@implements(np.real)
def _real(t, val):
    return real_part(t, t.operand(val))


@implements(np.imag)
def _imag(t, val):
    return imag_part(t, t.operand(val))


@implements(np.where)
def _where(t, condition, x=None, y=None):
    if x is None and y is None:
        return np.nonzero(condition)
    ops = [t.operand(v) for v in (condition, x, y)]
    shape = broadcast_shapes([shape_of(v) for v in ops])
    dts = [weak_type(v) for v in ops[1:]]
    dt = np.result_type(*[_probe(d) for d in dts])
    return t.emit("where", tuple(node_input(v) for v in ops), {}, shape, dt)


def _probe(d):
    """A value with d's dtype behaviour for np.result_type (weak Python scalars stay weak)."""
    if d is int:
        return 0
    if d is float:
        return 0.0
    if d is complex:
        return 0j
    return np.dtype(d)


@implements(np.clip)
def _clip(t, a, a_min=None, a_max=None, out=None, **kw):
    if kw.get("min") is not None:
        a_min = kw.pop("min")
    if kw.get("max") is not None:
        a_max = kw.pop("max")
    x = t.operand(a)
    lo = t.operand(a_min) if a_min is not None else None
    hi = t.operand(a_max) if a_max is not None else None
    if lo is None and hi is None:           # NumPy 2: a copy
        return t.emit("copy", (x.node,), {}, x.shape, x.dtype)
    parts = [v for v in (x, lo, hi) if v is not None]
    shape = broadcast_shapes([shape_of(v) for v in parts])
    dt = np.result_type(*[_probe(weak_type(v)) for v in parts])
    res = t.emit("clip", (x.node, None if lo is None else node_input(lo),
                          None if hi is None else node_input(hi)), {}, shape, dt)
    return assign_out(t, out[0] if isinstance(out, tuple) else out, res) \
        if out is not None else res


@implements(np.copy)
def _copy(t, a, order="K", subok=False):
    x = t.operand(a)
    return t.emit("copy", (x.node,), {}, x.shape, x.dtype)


@implements(np.round, np.around)
def _round(t, a, decimals=0, out=None):
    x = t.operand(a)
    res = t.emit("round", (x.node,), {"decimals": decimals}, x.shape, x.dtype)
    return assign_out(t, out, res) if out is not None else res


defop("round", "np.round({0}, {decimals})", doc="round to decimals")


METHOD_OPS.update(astype=astype, real=real_part, imag=imag_part)
