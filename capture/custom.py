"""``ss.custom_op``: a user NumPy function that export keeps as one opaque node.

    @ss.custom_op("mylib::scale")
    def scale(x, factor=2.0):
        return x * factor

    @scale.register_fake
    def _(x, factor=2.0):
        return np.empty_like(x)

Called on real arrays, the op runs the function.  Called while tracing (any argument is a
traced array or a symbolic size), it runs the *fake* on the traced arguments to learn the
output shapes and dtypes (a fake computes with symbolic arrays: ``np.empty_like(x)``,
``np.zeros((x.shape[0], 3), like=x)``; the nodes and guards it needs for that are the op's
shape rule, the nodes themselves are dropped), then records ONE node whose ``.op`` is the
op's name and whose generated code calls the real function.  Several outputs (a tuple or
list from the fake) become one node plus one ``tuple_get`` per output.

``mutates_args`` names the parameters the function writes into.  The graph stays
functional: the node calls the function on copies of those arguments and returns their
new values, which become the arguments' values from then on (and input mutations in the
signature when the arguments are program inputs).

Ops are registered by name (``lookup``); a saved program stores the name, and loading it
needs the op registered in the loading process.
"""
from __future__ import annotations

import ast
import functools
import inspect
import logging
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.specs import pytree
from symshape.errors import UserError, where
from symshape.sizes.symint import SymBool, SymInt
from symshape.userframe import user_frame

from .ops.registry import defop
from .tracer import TracedArray, Tracer, to_expr

_log = logging.getLogger("symshape.custom_op")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")

# op name -> CustomOp
REGISTRY: Dict[str, "CustomOp"] = {}


def lookup(name: str) -> Optional["CustomOp"]:
    return REGISTRY.get(name)


def _emit(args, attrs) -> str:
    """``fn(a, b, *rest, alpha=c)`` from the node's call slots (see ``_slots``)."""
    slots = ast.literal_eval(attrs["params"])
    parts = []
    for slot, a in zip(slots, args):
        if slot == "":
            parts.append(a)
        elif slot == "*":
            parts.append("*" + a)
        else:
            parts.append("%s=%s" % (slot, a))
    return "%s(%s)" % (attrs["fn"], ", ".join(parts))


class Functionalized:
    """Runs a mutating function on copies of the arguments it mutates; returns the copies'
    new values followed by the function's outputs (flattened)."""

    def __init__(self, op: "CustomOp") -> None:
        self.op = op
        functools.update_wrapper(self, op._fn)

    def __call__(self, *args, **kwargs):
        op = self.op
        ba = op._signature.bind(*args, **kwargs)
        for name in op.mutates_args:
            if name in ba.arguments:
                ba.arguments[name] = np.array(ba.arguments[name], copy=True)
        result = op._fn(*ba.args, **ba.kwargs)
        mutated = tuple(ba.arguments[n] for n in op.mutates_args if n in ba.arguments)
        if result is None:
            return mutated
        leaves, _ = pytree.flatten(result)
        return mutated + tuple(v for _, v in leaves)

    def __repr__(self) -> str:
        return "<functionalized %s>" % self.op.name


class CustomOp:
    """The object ``ss.custom_op`` returns: callable like the function it wraps."""

    def __init__(self, name: str, fn: Callable, mutates_args: Tuple[str, ...]) -> None:
        self.name = name
        self._fn = fn
        self._fake: Optional[Callable] = None
        self.mutates_args = mutates_args
        try:
            self._signature: Optional[inspect.Signature] = inspect.signature(fn)
        except (TypeError, ValueError):
            self._signature = None
        if mutates_args:
            if self._signature is None:
                raise UserError("custom_op(%r): mutates_args needs a function with an "
                                "inspectable signature" % name)
            unknown = [a for a in mutates_args if a not in self._signature.parameters]
            if unknown:
                raise UserError("custom_op(%r): mutates_args names %r, which is not a parameter "
                                "of %s%s" % (name, unknown[0], getattr(fn, "__name__", "fn"),
                                             self._signature))
        functools.update_wrapper(self, fn)
        # what generated code calls: the real function, or its functional form
        self.runtime: Callable = Functionalized(self) if mutates_args else fn

    # ------------------------------------------------------------------ registration
    def register_fake(self, fn: Callable) -> Callable:
        """Register the shape function: it receives symbolic arrays and returns arrays of
        the output's shape and dtype (``np.empty_like(x)``).  Usable as a decorator."""
        if not callable(fn):
            raise UserError("%s.register_fake expects a function, got %s"
                            % (self.name, type(fn).__name__))
        self._fake = fn
        return fn

    @property
    def fake(self) -> Optional[Callable]:
        return self._fake

    @property
    def fn(self) -> Callable:
        return self._fn

    def __repr__(self) -> str:
        return "<custom_op %s>" % self.name

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        t = _find_tracer(args, kwargs)
        if t is None:
            return self._fn(*args, **kwargs)
        return _trace_call(t, self, args, kwargs)


def custom_op(name: str, fn: Optional[Callable] = None, *, mutates_args=()):
    """``@ss.custom_op("lib::name", mutates_args=())``: register ``fn`` as an opaque op."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise UserError("custom_op: the name must look like 'namespace::opname' (Python "
                        "identifiers on both sides), got %r" % (name,))
    if isinstance(mutates_args, str):
        if mutates_args == "unknown":
            raise UserError("custom_op(%r): mutates_args='unknown' is not supported; list the "
                            "names of the parameters the function writes into (or () if none)"
                            % name)
        mutates_args = (mutates_args,)
    try:
        mutates = tuple(mutates_args)
    except TypeError:
        raise UserError("custom_op(%r): mutates_args must be a tuple of parameter names, got %r"
                        % (name, mutates_args)) from None
    for a in mutates:
        if not isinstance(a, str):
            raise UserError("custom_op(%r): mutates_args must hold parameter names (str), got %r"
                            % (name, a))

    def deco(f: Callable) -> CustomOp:
        if not callable(f):
            raise UserError("custom_op(%r) decorates a function, got %s"
                            % (name, type(f).__name__))
        op = CustomOp(name, f, mutates)
        old = REGISTRY.get(name)
        if old is not None:
            _log.warning("custom_op %r is defined again; the new definition replaces the old "
                         "one", name)
        REGISTRY[name] = op
        defop(name, emit=_emit, doc="custom op %s (%s)" % (name, getattr(f, "__qualname__", f)))
        return op

    if fn is not None:
        return deco(fn)
    return deco


# --------------------------------------------------------------------------- tracing
def _find_tracer(args, kwargs) -> Optional[Tracer]:
    leaves, _ = pytree.flatten((args, kwargs))
    for _, v in leaves:
        if type(v) is TracedArray:
            return v.tracer
        if type(v) in (SymInt, SymBool):
            t = getattr(v.env, "tracer", None)
            if t is not None:
                return t
    return None


def _slots(op: CustomOp, args: tuple, kwargs: dict, frame) -> Tuple[List[str], List[Any]]:
    """The call as (slot, value) pairs: '' positional, '*' star-args, a name for a keyword.

    Arguments go the way the caller passed them (by position or by keyword), so generated
    code calls the function as the program did, and omitted defaults stay the function's."""
    sig = op._signature
    if sig is None:
        for k in kwargs:
            if not k.isidentifier():
                raise UserError("%s: keyword argument %r is not a Python identifier%s"
                                % (op.name, k, where(frame)))
        return [""] * len(args) + list(kwargs), list(args) + list(kwargs.values())
    try:
        ba = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise UserError("%s%s: %s%s" % (op.name, sig, e, where(frame))) from None
    slots: List[str] = []
    values: List[Any] = []
    npos = len(args)
    i = 0
    for p in sig.parameters.values():
        if p.name not in ba.arguments:
            continue
        v = ba.arguments[p.name]
        if p.kind == p.VAR_POSITIONAL:
            if v:
                slots.append("*")
                values.append(tuple(v))
        elif p.kind == p.VAR_KEYWORD:
            for k, x in v.items():
                if not k.isidentifier():
                    raise UserError("%s: keyword argument %r is not a Python identifier%s"
                                    % (op.name, k, where(frame)))
                slots.append(k)
                values.append(x)
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and i < npos:
            slots.append("")
            values.append(v)
            i += 1
        else:
            slots.append(p.name)
            values.append(v)
    return slots, values


def _node_value(t: Tracer, v, what: str, frame):
    """How an argument appears among the node's inputs."""
    if type(v) is TracedArray:
        if v.tracer is not t:
            raise UserError("%s: a traced array from another export was passed%s"
                            % (what, where(frame)))
        return v.node
    if isinstance(v, np.ndarray):
        return t.constant(v).node
    if type(v) is SymInt:
        return to_expr(v)
    if type(v) is SymBool:
        return bool(v)
    if v is None or isinstance(v, (bool, int, float, complex, str, np.generic, np.dtype)):
        return v
    if type(v) in (tuple, list):
        items = [_node_value(t, x, what, frame) for x in v]
        return type(v)(items)
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v)
    raise UserError("%s: cannot pass a %s to a custom op while tracing%s; custom op arguments "
                    "are arrays, sizes, Python / NumPy scalars, strings, dtypes and lists / "
                    "tuples of them" % (what, type(v).__name__, where(frame)))


def _check_output(op: CustomOp, v, frame):
    if type(v) is TracedArray or isinstance(v, np.ndarray):
        if v.dtype == object or v.dtype.fields is not None:
            raise UserError("the fake function of custom op %r returned an array of dtype %s; "
                            "outputs must have a numeric or bool dtype%s"
                            % (op.name, v.dtype, where(frame)))
        return v
    raise UserError("the fake function of custom op %r returned a %s%s; it must return an "
                    "array (e.g. np.empty_like(x)) or a tuple / list of arrays with the "
                    "outputs' shapes and dtypes" % (op.name, type(v).__name__, where(frame)))


def _trace_call(t: Tracer, op: CustomOp, args: tuple, kwargs: dict):
    frame = user_frame(3)
    t.env.commit_pending()
    if op._fake is None:
        fn_name = getattr(op._fn, "__name__", "op")
        raise UserError(
            "custom op %r has no fake (shape) function, so export cannot know the shape and "
            "dtype of its output%s.\nRegister one that computes them from symbolic inputs:\n"
            "    @%s.register_fake\n    def _(*args, **kwargs):\n"
            "        return np.empty_like(x)   # an array with the output's shape and dtype"
            % (op.name, where(frame), fn_name))
    slots, values = _slots(op, args, kwargs, frame)
    inputs = tuple(_node_value(t, v, "custom op %r" % op.name, frame) for v in values)

    # mutated arguments must be traced arrays: their new values replace them
    mutated: List[TracedArray] = []
    if op.mutates_args:
        ba = op._signature.bind(*args, **kwargs)
        for name in op.mutates_args:
            if name not in ba.arguments:
                continue
            v = ba.arguments[name]
            if type(v) is not TracedArray:
                raise UserError("custom op %r mutates %r, so that argument must be an array "
                                "computed by the program or one of its inputs, got %s%s"
                                % (op.name, name, type(v).__name__, where(frame)))
            mutated.append(v)

    # run the fake; what it records is only the op's shape rule
    graph = t.graph
    start = len(graph.nodes)
    traced_args = [v for _, v in pytree.flatten((args, kwargs))[0] if type(v) is TracedArray]
    before = [(a, a.node, a.shape) for a in traced_args]
    try:
        out = op._fake(*args, **kwargs)
    except UserError:
        raise
    except Exception as e:
        raise UserError("the fake function of custom op %r raised %s: %s%s"
                        % (op.name, type(e).__name__, e, where(frame))) from e
    if t.graph is not graph:
        raise UserError("the fake function of custom op %r left the tracer in a branch%s"
                        % (op.name, where(frame)))
    for a, node, shape in before:
        if a.node is not node:
            raise UserError("the fake function of custom op %r wrote into its argument%s; a "
                            "fake only computes output shapes (declare writes with "
                            "mutates_args and return new arrays from the fake)"
                            % (op.name, where(frame)))
    _drop_nodes(t, graph, start)

    if out is None:
        leaves, spec = [], None
    else:
        raw, spec = pytree.flatten(out)
        leaves = [_check_output(op, v, frame) for _, v in raw]
        if not leaves:
            raise UserError("the fake function of custom op %r returned no arrays%s"
                            % (op.name, where(frame)))
    if not leaves and not mutated:
        raise UserError("the fake function of custom op %r returned None; return an array "
                        "with the output's shape and dtype (or declare mutates_args for an "
                        "op that only writes into its arguments)%s" % (op.name, where(frame)))
    attrs = {"fn": op.runtime, "params": tuple(slots)}
    short = op.name.split("::")[-1].replace(".", "_")
    outs_meta = [(tuple(m.shape), m.dtype) for m in mutated] + \
        [(tuple(v.shape), v.dtype) for v in leaves]
    if len(outs_meta) == 1 and not mutated and spec == pytree.LEAF:
        shape, dtype = outs_meta[0]
        res = t.emit(op.name, inputs, attrs, shape, dtype, name=short)
        results = [res]
    else:
        whole = t.emit(op.name, inputs, attrs, (len(outs_meta),), np.dtype(object), name=short)
        results = [t.emit("tuple_get", (whole.node,), {"index": i}, shape, dtype,
                          name="%s_%d" % (short, i))
                   for i, (shape, dtype) in enumerate(outs_meta)]
    _bind_unbacked(t, op, results, frame)
    for m, new in zip(mutated, results):
        t.rebind(m, new)
    results = results[len(mutated):]
    if out is None:
        return None
    return pytree.unflatten(results, spec)


def _drop_nodes(t: Tracer, graph, start: int) -> None:
    """Forget the nodes the fake recorded (and the constants it lifted)."""
    dropped = graph.nodes[start:]
    if not dropped:
        return
    del graph.nodes[start:]
    gone = set(dropped)
    for key, (arr, node) in list(t._consts.items()):
        if node in gone:
            del t._consts[key]


def _bound_symbols(t: Tracer) -> set:
    out = set()
    for n in t.graph.nodes:
        for sym, _ in n.meta.get("binds", ()):
            out.add(sym)
        if "binds_value" in n.meta:
            out.add(n.meta["binds_value"])
    return out


def _bind_unbacked(t: Tracer, op: CustomOp, results: List[TracedArray], frame) -> None:
    """A data-dependent output size of the fake is bound by this node at run time."""
    bound = None
    for r in results:
        for axis, s in enumerate(r.shape):
            if type(s) is not SymInt:
                continue
            e = t.env.simplify(s.expr)
            if type(e) is int or not any(x.unbacked for x in e.free_symbols):
                continue
            if bound is None:
                bound = _bound_symbols(t)
            sym = e.as_symbol()
            if sym is not None:
                if sym not in bound:
                    r.node.meta.setdefault("binds", []).append((sym, axis))
                    bound.add(sym)
                continue
            missing = [x for x in e.free_symbols if x.unbacked and x not in bound]
            if missing:
                raise UserError("the fake function of custom op %r gave output axis %d the "
                                "size %s, which mentions data-dependent sizes no other value "
                                "determines; give the axis a size of its own%s"
                                % (op.name, axis, e, where(frame)))
