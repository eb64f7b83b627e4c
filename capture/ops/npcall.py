"""NumPy functions computed by calling NumPy itself in the generated code, declared by a
shape rule.

Many NumPy functions (``np.percentile``, ``np.nanmean``, ``np.cov``, ``np.kron``,
``np.hanning``...) are written in Python that branches on array values (NaN checks, warnings)
or needs concrete ints, so tracing through NumPy's code fails; yet their result *shape* is a
function of the argument shapes and constants.  A :class:`Call` row declares that function:
which arguments are arrays, how the output shapes follow from the symbolic input shapes, and
optional argument checks.  The traced node calls the same NumPy function when the program
runs, so values are NumPy's, bit for bit.

The output dtypes (and whether NumPy returns a named tuple, ``EigResult`` and friends) are
read from eager NumPy itself: the function is called once at trace time on arrays of the
example shapes and dtypes (deterministic values), and the shape rule evaluated on the
example sizes must agree with what that call returns (a disagreement is a bug of the rule:
``InternalError``).  A function whose output dtype depends on the values gets a ``post``
conversion to one dtype (``np.linalg.eig``: complex, whose handler then takes the real
parts where the example's eigenvalues are real, ``linalg_calls.py``).
"""
from __future__ import annotations

import ast
import inspect
import warnings
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from symshape.errors import InternalError, UserError, where
from symshape.algebra.infinity import INT_OO
from symshape.algebra.ranges import ValueRange
from symshape.sizes.symfloat import SymFloat
from symshape.sizes.symint import SymInt
from symshape.userframe import user_frame

from ..tracer import FUNCTIONS, SIZE_FUNCTIONS, TracedArray, Tracer, implements, to_expr
from .registry import defop

_NOVALUE = getattr(np, "_NoValue", object())


class Args:
    """The bound arguments of one call, for shape rules and checks: ``arr(name)`` (a traced
    array or None), ``val(name)`` (the value, or the signature's default), ``what`` (the
    function's name as users write it, for messages)."""

    def __init__(self, t: Tracer, what: str, values: Dict[str, Any],
                 defaults: Dict[str, Any], frame) -> None:
        self.t = t
        self.what = what
        self.values = values
        self.defaults = defaults
        self.frame = frame
        self.fresh: List[SymInt] = []

    def given(self, name: str) -> bool:
        return name in self.values

    def val(self, name: str, default=None):
        v = self.values.get(name, self.defaults.get(name, default))
        return default if v is _NOVALUE else v

    def arr(self, name: str) -> Optional[TracedArray]:
        v = self.values.get(name)
        return v if type(v) is TracedArray else None

    def arrays(self, name: str) -> List[TracedArray]:
        v = self.values.get(name)
        return list(v) if isinstance(v, (list, tuple)) else []

    def new_size(self, source: str, lower: int = 0, upper=None) -> SymInt:
        """A data-dependent output size (``np.bincount``'s length) in ``[lower, upper]``: an
        unbacked symbol the node binds when the program runs."""
        env = self.t.env
        hi = INT_OO if upper is None else upper
        u = env.create_unbacked(source, ValueRange(lower, hi), self.frame)
        s = SymInt(u.expr, None, env)
        self.fresh.append(s)
        return s

    def fail(self, why: str) -> UserError:
        """A UserError naming the function, the reason and the user's line."""
        return UserError("%s: %s%s" % (self.what, why, where(self.frame)))


class Call(NamedTuple):
    """One NumPy function computed by a call to itself.

    ``shape(args)`` returns the output shape, or a list of them for a tuple result;
    ``check(args)`` (optional) raises for what eager NumPy refuses or the tracer cannot
    express; ``data`` names the parameters where a size or a tuple of sizes is data (an
    integer array, as ``np.asarray((n, m))`` gives); ``post`` (optional) maps the output dtypes NumPy gave on the example to the ones
    the node declares, with the generated code converting (value-dependent dtypes)."""
    func: Callable
    shape: Callable[[Args], Any]
    check: Optional[Callable[[Args], None]] = None
    post: Optional[Callable[[List[np.dtype]], List[np.dtype]]] = None
    name: Optional[str] = None
    data: Tuple[str, ...] = ()          # parameters that may be sizes used as data


def dotted(func: Callable) -> str:
    """``np.percentile`` / ``np.linalg.eig`` / ``np.fft.fftfreq``: the public spelling."""
    mod = getattr(func, "__module__", "numpy") or "numpy"
    name = func.__name__
    for sub in ("linalg", "fft"):
        if mod.startswith("numpy.%s" % sub) or mod.startswith("numpy._%s" % sub) or \
                getattr(getattr(np, sub), name, None) is func:
            return "np.%s.%s" % (sub, name)
    return "np." + name


def op_name(func: Callable) -> str:
    return "np_" + dotted(func)[3:].replace(".", "_")


# --------------------------------------------------------------------------- generated code
def _emit_call(path: str, order: Tuple[str, ...], posonly: int, post: Optional[str]):
    def emit(args, attrs) -> str:
        parts = []
        for i, name in enumerate(order):
            key = "input_" + name
            if key in attrs:
                v = _inputs_text(attrs[key], args)
            elif name in attrs:
                v = attrs[name]
            else:
                continue
            parts.append(v if i < posonly else "%s=%s" % (name, v))
        call = "%s(%s)" % (path, ", ".join(parts))
        return call if post is None else post % call
    return emit


def _inputs_text(index: str, args) -> str:
    """``"3"`` -> the 4th input; ``"(1, 2)"`` -> a list of inputs (``multi_dot``)."""
    idx = ast.literal_eval(index)               # rendered by the Renderer: an int or a tuple
    if isinstance(idx, tuple):
        return "[%s]" % ", ".join(args[i] for i in idx)
    return args[idx]


# --------------------------------------------------------------------------- the example call
def _values(shape: tuple, salt: int) -> np.ndarray:
    """Deterministic, irregular example values (no random generator: the trace routes
    NumPy's random functions to recorded draws)."""
    n = 1
    for s in shape:
        n *= s
    # in (0, 1): valid quantiles, probabilities, non-negative counts once rounded up
    return ((np.cos(np.arange(n) * 1.37 + 0.3 * salt + 0.1) + 1.1) / 2.2).reshape(shape)


def _example(v, salt: int = 0):
    """A concrete stand-in of an argument at the example sizes."""
    if type(v) is TracedArray:
        known = v.node.meta.get("value") if v.node.op == "constant" else None
        if isinstance(known, np.ndarray):
            return known                # a constant of the program (q=[10, 90], edges)
        shape = tuple(_hint(s) for s in v.shape)
        base = _values(shape, salt)
        k = v.dtype.kind
        if k == "b":
            return base > 0
        if k in "iu":
            return np.round(base * 4).astype(v.dtype)
        if k == "c":
            return (base + 1j * _values(shape, salt + 7)).astype(v.dtype)
        return base.astype(v.dtype)
    if type(v) is SymInt:
        return _hint(v)
    if type(v) is SymFloat:
        return v.hint if v.hint is not None else 0.5
    if isinstance(v, (list, tuple)):
        return type(v)(_example(x, salt + i) for i, x in enumerate(v))
    return v


#: the example stand-in of a traced argument (also used by capture/random_arrays.py)
example_value = _example


def _hint(s) -> int:
    if type(s) is SymInt:
        return s.hint if s.hint is not None else 2
    return int(s)


def _leaves(out) -> Tuple[list, Optional[type]]:
    if isinstance(out, tuple):
        return list(out), (type(out) if type(out) is not tuple else None)
    return [out], None


def _sorted(v):
    """Example values sorted along their last axis (bins, coefficients NumPy wants
    monotonic)."""
    if isinstance(v, np.ndarray) and v.ndim and v.dtype.kind in "fiu":
        return np.sort(v, axis=-1)
    if isinstance(v, list):
        return [_sorted(x) for x in v]
    return v


def _zero_ints(v):
    """Integer example values set to 0 (valid indices and choices everywhere)."""
    if isinstance(v, np.ndarray) and v.dtype.kind in "iu":
        return np.zeros_like(v)
    if isinstance(v, list):
        return [_zero_ints(x) for x in v]
    return v


def _probe(row: Call, what: str, values: Dict[str, Any], frame):
    args = {k: _example(v, i) for i, (k, v) in enumerate(values.items())}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                return _call(row.func, args)
            except ValueError:
                pass
            try:
                return _call(row.func, {k: _sorted(v) for k, v in args.items()})
            except ValueError:
                return _call(row.func, {k: _zero_ints(v) for k, v in args.items()})
    except Exception as e:
        raise UserError("%s raises for the example inputs: %s: %s%s"
                        % (what, type(e).__name__, (str(e).splitlines() or [""])[0],
                           where(frame)))


# --------------------------------------------------------------------------- the handler
def _bind(row: Call, args, kwargs, what: str, frame) -> Dict[str, Any]:
    try:
        bound = inspect.signature(row.func).bind(*args, **kwargs)
    except TypeError as e:
        raise UserError("%s: %s%s" % (what, e, where(frame)))
    return dict(bound.arguments)


def _call(func, values: Dict[str, Any]):
    """``func(**values)``, with positional-only parameters passed by position."""
    params = inspect.signature(func).parameters
    pos = [values[k] for k, p in params.items()
           if p.kind is inspect.Parameter.POSITIONAL_ONLY and k in values]
    kw = {k: v for k, v in values.items()
          if params[k].kind is not inspect.Parameter.POSITIONAL_ONLY}
    return func(*pos, **kw)


def _attr(t: Tracer, name: str, v, what: str, frame, inputs: list):
    """(attr key, attr value) of one argument; arrays join ``inputs``."""
    if isinstance(v, np.ndarray):
        v = t.constant(v)
    if type(v) is TracedArray:
        inputs.append(t.operand(v).node)
        return "input_" + name, len(inputs) - 1
    if isinstance(v, (list, tuple)) and any(type(x) is TracedArray for x in v):
        idx = []
        for x in v:
            x = t.operand(x) if type(x) is TracedArray else t.constant(np.asarray(x))
            inputs.append(x.node)
            idx.append(len(inputs) - 1)
        return "input_" + name, tuple(idx)
    return name, _plain(v, name, what, frame)


def _plain(v, name: str, what: str, frame):
    if type(v) is SymInt:
        return to_expr(v)
    if type(v) is SymFloat:
        return v.fexpr
    if v is None or isinstance(v, (bool, int, float, complex, str)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return np.dtype(v)
    if isinstance(v, type) and v in (int, float, complex, bool):
        return np.dtype(v)
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x, name, what, frame) for x in v)
    raise UserError("%s: the argument %s=%r cannot be traced (pass arrays, numbers, strings "
                    "or sizes)%s" % (what, name, v, where(frame)))


def _shape_hints(shape) -> Optional[tuple]:
    out = []
    for s in shape:
        if type(s) is SymInt:
            if s.hint is None:
                return None
            out.append(s.hint)
        else:
            out.append(int(s))
    return tuple(out)


def _sizes_as_data(v):
    """A size, or a list / tuple holding sizes, as the integer array NumPy makes of it."""
    if type(v) is SymInt or (isinstance(v, (list, tuple)) and any(type(x) is SymInt
                                                                   for x in v)):
        return np.asarray(v)            # routed while tracing: a traced integer array
    return v


def _probed_dtypes(row: Call, what: str, values: Dict[str, Any], frame, shapes: list,
                   single: bool) -> tuple:
    """(NumPy's result on the example values, its leaves' container kind, the leaves'
    dtypes): the shape rule's outputs checked against NumPy's on the example."""
    out = _probe(row, what, values, frame)
    leaves, kind = _leaves(out)
    if (len(leaves) != len(shapes)) or (single and len(leaves) != 1):
        raise InternalError("%s: the shape rule gives %d outputs, NumPy %d"
                            % (what, len(shapes), len(leaves)))
    dtypes = [np.asarray(v).dtype for v in leaves]
    for v, s in zip(leaves, shapes):
        hints = _shape_hints(s)
        if hints is not None and hints != np.shape(v):
            raise InternalError("%s: the shape rule gives %s on the example, NumPy %s"
                                % (what, hints, np.shape(v)))
    if row.post is not None:
        dtypes = row.post(dtypes)
    return out, kind, dtypes


def _emit_parts(t: Tracer, op: str, inputs: list, attrs: Dict[str, Any], shapes: list,
                dtypes: list, one: bool) -> tuple:
    """The call's node, or (several results) its object node and one ``tuple_get`` per
    result."""
    if one:
        return (t.emit(op, tuple(inputs), attrs, shapes[0], dtypes[0]),)
    whole = t.emit(op, tuple(inputs), attrs, (len(shapes),), np.dtype(object))
    return tuple(t.emit("tuple_get", (whole.node,), {"index": i}, s, d, name="getitem")
                 for i, (s, d) in enumerate(zip(shapes, dtypes)))


def _bind_fresh(a: Args, parts: tuple) -> None:
    """The node that computes a data-dependent size binds it (the first result showing
    it, on its first such axis)."""
    for size in a.fresh:
        for p in parts:
            axes = [i for i, s in enumerate(p.shape) if s is size]
            if axes:
                p.node.meta.setdefault("binds", []).append((size.expr.as_symbol(), axes[0]))
                break


def traced_call(t: Tracer, row: Call, args, kwargs):
    """Trace one call of ``row.func`` (see the module docstring)."""
    what = row.name or dotted(row.func)
    frame = user_frame(3)
    values = _bind(row, args, kwargs, what, frame)
    values = {k: (t.operand(v) if type(v) is TracedArray or isinstance(v, np.ndarray) else
                  _sizes_as_data(v) if k in row.data else v)
              for k, v in values.items() if v is not _NOVALUE}
    sig = inspect.signature(row.func)
    defaults = {k: p.default for k, p in sig.parameters.items()
                if p.default is not inspect.Parameter.empty}
    t.env.cancel_pending([to_expr(v) for v in values.values() if type(v) is SymInt])
    t.env.commit_pending()
    a = Args(t, what, values, defaults, frame)
    if row.check is not None:
        row.check(a)
    shapes = row.shape(a)
    single = not isinstance(shapes, list)
    shapes = [tuple(shapes)] if single else [tuple(s) for s in shapes]
    out, kind, dtypes = _probed_dtypes(row, what, values, frame, shapes, single)
    inputs: list = []
    attrs: Dict[str, Any] = {}
    for name, v in values.items():
        key, val = _attr(t, name, v, what, frame, inputs)
        attrs[key] = val
    one = len(shapes) == 1 and kind is None and not isinstance(out, tuple)
    parts = _emit_parts(t, op_name(row.func), inputs, attrs, shapes, dtypes, one)
    _bind_fresh(a, parts)
    if len(parts) == 1 and kind is None and not isinstance(out, tuple):
        return parts[0]
    return kind(*parts) if kind is not None else parts


def register(rows: Sequence[Call], post_code: Optional[Dict[str, str]] = None,
             sizes: bool = False, implement: bool = True) -> None:
    """Define the op of each row and route its NumPy function to it.  ``post_code`` maps an
    op name to a ``%s`` pattern wrapping the call (the conversion ``Call.post`` declares);
    every function is also routed by name (``capture/namespace.py``); ``sizes``: the
    functions take sizes and no array (``np.hanning(n)``), never dispatched by NumPy;
    ``implement=False``: only the op (a handler of its own calls ``traced_call``)."""
    for row in rows:
        sig = inspect.signature(row.func)
        params = tuple(sig.parameters)
        posonly = sum(1 for p in sig.parameters.values()
                      if p.kind is inspect.Parameter.POSITIONAL_ONLY)
        op = op_name(row.func)
        defop(op, emit=_emit_call(dotted(row.func), params, posonly,
                                  (post_code or {}).get(op)),
              doc="%s, computed by NumPy (shape rule in capture/ops)" % dotted(row.func))
        if not implement:
            continue
        implements(row.func)(_handler(row))
        # also routed by name: a call that holds a size or a traced array reaches the
        # handler even where NumPy would not dispatch it first (a C function converting a
        # size, a dispatcher iterating over an array's rows)
        SIZE_FUNCTIONS.append(row.func)
        if sizes:
            FUNCTIONS[row.func].takes_sizes = True


def _handler(row: Call):
    def handler(t, *args, **kwargs):
        return traced_call(t, row, args, kwargs)
    handler.__name__ = "_" + op_name(row.func)
    return handler


# --------------------------------------------------------------------------- shape helpers
def reduced_shape(x: TracedArray, axis, keepdims: bool, what: str, frame) -> tuple:
    """The shape of a reduction of ``x`` over ``axis`` (None, an int or a tuple)."""
    if axis is None:
        return (1,) * x.ndim if keepdims else ()
    norm = reduced_axes(x, axis, what, frame)
    if keepdims:
        return tuple(1 if i in norm else s for i, s in enumerate(x.shape))
    return tuple(s for i, s in enumerate(x.shape) if i not in norm)


def reduced_axes(x: TracedArray, axis, what: str, frame) -> list:
    """The axes a reduction over ``axis`` (an int or a tuple of ints, either sign) removes,
    normalised and sorted; an axis out of range or named twice is refused, as NumPy's
    ``normalize_axis_tuple`` refuses it.  Apart, so that a proof runs it on a symbolic
    rank (proofs/stats_axes_every.py)."""
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    norm = set()
    for ax in axes:
        if not isinstance(ax, (int, np.integer)) or isinstance(ax, bool):
            raise UserError("%s: axis must be an int or a tuple of ints, got %r%s"
                            % (what, ax, where(frame)))
        a = int(ax) + x.ndim if ax < 0 else int(ax)
        if not 0 <= a < x.ndim:
            raise UserError("%s: axis %d is out of bounds for array of dimension %d%s"
                            % (what, ax, x.ndim, where(frame)))
        norm.add(a)
    if len(norm) != len(axes):
        # NumPy raises; the set would reduce the axis once instead
        raise UserError("%s: axis=%r names an axis twice (NumPy raises: duplicate value in "
                        "'axis'); name each axis once%s" % (what, axis, where(frame)))
    return sorted(norm)
