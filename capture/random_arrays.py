"""Draws that take arrays or return them shuffled: ``choice``, ``permutation``, ``shuffle``
(in place), ``multinomial``, ``multivariate_normal`` and ``dirichlet`` of a ``Generator``,
a ``RandomState`` or NumPy's global functions.

As the other draws (``capture/randomness.py``), each is a node whose generated code calls the
same method of the same generator, so a program seeded as the eager code is seeded gives
eager NumPy's numbers; here the array arguments (traced or constant) are inputs of the node.
``shuffle(x)`` draws on a copy of ``x`` and rebinds ``x`` to it (the program's in-place
write, as for any traced write).
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, Optional

import numpy as np

from symshape.errors import UserError, where
from symshape.sizes.symint import SymInt
from symshape.userframe import user_frame

from .ops.creation import nonnegative
from .ops.npcall import example_value
from .ops.registry import defop
from .tracer import TracedArray, Tracer, to_expr

ARRAY_DRAWS = ("choice", "permutation", "shuffle", "multinomial", "multivariate_normal",
               "dirichlet")

# NumPy's own, kept before any trace routes the names to recorders
_Generator = np.random.Generator
_RandomState = np.random.RandomState
_default_rng = np.random.default_rng


def _param_order(method: str) -> tuple:
    return tuple(inspect.signature(getattr(_default_rng(0), method)).parameters)


def _emit(receiver: Optional[str], method: str):
    order = _param_order(method)

    def emit(args, attrs) -> str:
        first = 0
        if receiver is not None:
            src = receiver
        elif "source" in attrs:
            src = attrs["source"]
        else:
            src, first = args[0], 1          # a generator the program made: input 0
        parts = []
        for name in order:
            if "input_" + name in attrs:
                v = args[first + int(attrs["input_" + name])]
            elif name in attrs:
                v = attrs[name]
            else:
                continue
            parts.append("%s=%s" % (name, v))
        if method == "shuffle":              # on a copy, which is the result
            x = parts.pop(0).split("=", 1)[1]
            return "(lambda _v: (%s.shuffle(_v%s), _v)[1])(np.array(%s, copy=True))" % (
                src, "".join(", " + p for p in parts), x)
        return "%s.%s(%s)" % (src, method, ", ".join(parts))
    return emit


for _m in ARRAY_DRAWS:
    defop("random_%s" % _m, emit=_emit(None, _m), doc="%s of a generator the program "
          "reaches, when the program runs" % _m)
    defop("global_random_%s" % _m, emit=_emit("np.random", _m),
          doc="%s from NumPy's global generator when the program runs" % _m)
    defop("drawn_%s" % _m, emit=_emit(None, _m), doc="%s from a generator the program makes"
          % _m)


def _len(x) -> Any:
    return x.shape[0] if type(x) is TracedArray else len(x)


def draw_size(t: Tracer, size) -> Optional[tuple]:
    """A draw's ``size=``: None, or a tuple of ints and sizes (kept symbolic)."""
    if size is None:
        return None
    dims = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    for d in dims:
        if type(d) is TracedArray or not isinstance(d, (int, np.integer, SymInt)):
            raise UserError("random draw: size must hold ints or sizes, got %r%s"
                            % (d, where(user_frame(3))))
    t.env.cancel_pending([to_expr(d) for d in dims if type(d) is SymInt])
    for d in dims:                          # NumPy: negative dimensions are not allowed
        nonnegative(d, "random draw size", user_frame(3))
    return tuple(int(d) if isinstance(d, np.integer) else d for d in dims)


def _size_shape(t: Tracer, size) -> tuple:
    return draw_size(t, size) or ()


def _shape(t: Tracer, method: str, b: Dict[str, Any]) -> tuple:
    size = _size_shape(t, b.get("size"))
    if method == "choice":
        a = b["a"]
        if type(a) is TracedArray:
            axis = b.get("axis", 0)
            if a.ndim == 0:
                raise UserError("choice: a must be 1-dimensional or an integer%s"
                                % where(user_frame(4)))
            ax = axis % a.ndim
            return tuple(a.shape[:ax]) + size + tuple(a.shape[ax + 1:])
        return size
    if method in ("permutation", "shuffle"):
        x = b["x"]
        return tuple(x.shape) if type(x) is TracedArray else (x,)
    if method == "multinomial":
        return size + (_len(b["pvals"]),)
    if method == "multivariate_normal":
        return size + (_len(b["mean"]),)
    return size + (_len(b["alpha"]),)                    # dirichlet


def _probe_dtype(t: Tracer, real, method: str, b: Dict[str, Any], frame) -> np.dtype:
    """The draw's dtype: one draw of NumPy's own on example values of the same kinds."""
    probe_args = {k: (example_value(v) if type(v) in (TracedArray, SymInt) else v)
                  for k, v in b.items()}
    for k in ("p", "pvals"):                 # probabilities that sum to one
        if type(b.get(k)) is TracedArray:
            n = np.size(probe_args[k])
            probe_args[k] = np.full(n, 1.0 / n)
    if "size" in probe_args and probe_args["size"] is not None:
        probe_args["size"] = tuple(1 for _ in _size_shape(t, b["size"]))
    if method in ("permutation", "shuffle") and type(b["x"]) is TracedArray:
        probe_args["x"] = np.asarray(probe_args["x"]).copy()
    try:
        out = getattr(real, method)(**probe_args)
        if method == "shuffle":
            out = probe_args["x"]
    except (TypeError, ValueError) as e:
        raise UserError("%s: %s%s" % (method, e, where(frame))) from None
    return np.asarray(out).dtype


def _inputs_attrs(t: Tracer, method: str, b: Dict[str, Any], frame) -> tuple:
    """(the node's inputs, its attributes): traced arguments are inputs (their position in
    ``input_<name>``), sizes and plain values attributes."""
    inputs: list = []
    attrs: Dict[str, Any] = {}
    for name, v in b.items():
        if type(v) is TracedArray:
            inputs.append(v.node)
            attrs["input_" + name] = len(inputs) - 1
        elif type(v) is SymInt:
            attrs[name] = to_expr(v)
        elif name == "size" and v is not None:
            attrs[name] = tuple(to_expr(d) for d in _size_shape(t, v))
        elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
            attrs[name] = v.item() if isinstance(v, np.generic) else v
        else:
            raise UserError("%s(%s=%r) is not supported while tracing%s"
                            % (method, name, v, where(frame)))
    return inputs, attrs


def _generator_kind(source):
    """RandomState for the global functions and legacy generators, else Generator."""
    if source is None or isinstance(source, _RandomState) or (
            type(source) is TracedArray and source.node.attrs.get("kind") == "RandomState"):
        return _RandomState
    return _Generator


def draw(t: Tracer, source, method: str, args: tuple, kwargs: dict, path: str = ""):
    """Record ``source.method(*args, **kwargs)`` (``source`` None: the global functions; a
    traced value: a generator the program made)."""
    t.env.commit_pending()
    frame = user_frame(3)
    kind = _generator_kind(source)
    real = _RandomState(0) if kind is _RandomState else _default_rng(0)
    try:
        b = inspect.signature(getattr(real, method)).bind(*args, **kwargs).arguments
    except TypeError as e:
        raise UserError("%s: %s%s" % (method, e, where(frame))) from None
    b = {k: (t.operand(v) if type(v) is TracedArray or isinstance(v, np.ndarray) else
             t.constant(np.asarray(v)) if isinstance(v, (list, tuple)) and k != "size" else v)
         for k, v in b.items()}
    shape = _shape(t, method, b)
    dtype = _probe_dtype(t, real, method, b, frame)
    inputs, attrs = _inputs_attrs(t, method, b, frame)
    if source is None:
        op = "global_random_%s" % method
    elif type(source) is TracedArray:
        op = "drawn_%s" % method
        inputs.insert(0, source.node)
    else:
        op = "random_%s" % method
        attrs["source"] = source
        attrs["path"] = path
    node = t.emit(op, tuple(inputs), attrs, shape, dtype)
    node.node.meta["effect"] = True
    if method == "shuffle":
        x = b["x"]
        if type(x) is not TracedArray:
            raise UserError("shuffle: x must be an array%s" % where(frame))
        t.rebind(x, node)
        return None
    return node
