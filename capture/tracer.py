"""The array proxy NumPy accepts while tracing, and the Tracer that records the graph.

``TracedArray`` carries a node, a symbolic shape (ints and ``SymInt``) and a dtype.  NumPy
hands every ufunc to ``__array_ufunc__`` and every other public function to
``__array_function__``; operators, methods and indexing route to the same handlers in
``capture/ops``.  A handler computes the output shape with SymInts (so the guards it needs
fall out of ordinary comparisons), the dtype with NumPy's own rules, and records a node.
"""
from __future__ import annotations

import operator
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.algebra import relations as R
from symshape.reasoning.env import ShapeEnv
from symshape.errors import GuardOnDataDependentError, UserError, where
from symshape.sizes.symfloat import SymFloat
from symshape.sizes.symint import SymBool, SymInt, describe
from symshape.userframe import user_frame, user_site

from .ir import Graph, Node
from .methods import METHOD_OPS
from .ndarray_class import shows_ndarray
from .state.objstate import Tracked, active, materialize
from .state.binding import path_identifier
from .loop_convert import maybe_found
from .valuechecks import raising_branch
from .views import PERMUTES, RESHAPES, propagate, register_call

# numpy function -> handler(tracer, *args, **kwargs); filled by capture.ops
FUNCTIONS: Dict[Callable, Callable] = {}
# ufunc -> handler(tracer, ufunc, inputs, kwargs) for ufuncs that are not plain elementwise
UFUNC_OVERRIDES: Dict[Any, Callable] = {}
# NumPy functions routed to their handler in FUNCTIONS by name while a trace runs
# (capture/namespace.py), beside the creation functions it names itself: those that take
# sizes and no array (np.hanning(n), np.fft.fftfreq(n)), and those whose dispatcher iterates
# over an array argument before dispatching (np.concatenate(x) of one array's rows)
SIZE_FUNCTIONS: List[Callable] = []
# generic elementwise ufunc handler, set by capture.ops.elementwise
ELEMENTWISE: List[Callable] = []


def implements(*funcs: Callable):
    """Register a handler for NumPy functions reached through ``__array_function__``."""
    def deco(handler):
        for f in funcs:
            FUNCTIONS[f] = handler
        return handler
    return deco


class Tracer:
    def __init__(self, env: ShapeEnv, const_names: Dict[int, str]) -> None:
        self.env = env
        env.tracer = self
        env.ufunc_hook = lambda ufunc, method, inputs, kwargs: dispatch_ufunc(
            self, ufunc, method, inputs, kwargs)
        self.graph = Graph()
        self.const_names = const_names
        self._consts: Dict[int, Tuple[np.ndarray, Node]] = {}
        # Set by the JIT (codegen.jit) to run through graph breaks: an object with
        # ``value(arr, reason, frame) -> np.ndarray`` (materialise a traced value) and
        # ``call(func, args, kwargs, reason, frame)`` (run an untraceable call eagerly).
        # None during export, where a break is an error.
        self.breaker = None
        self.input_proxies: Dict[int, Node] = {}     # id(proxy of a user input) -> its node
        self.final: Dict[Node, Node] = {}            # input node -> its value after mutation
        # model state (capture/state/binding.py): id(array) -> its proxy, and the state nodes
        self.state: Dict[int, "TracedArray"] = {}
        self.state_nodes: List[Node] = []
        # id(root array) -> weak references to the views derived from it (capture/views.py)
        self.views: Dict[int, list] = {}
        # set while the trace runs (capture.namespace): route the names the module of a user
        # frame imported from NumPy, called with that frame's globals when it records an op
        self.enter_globals: Optional[Callable[[dict], None]] = None
        # input node -> the example's value (export's arguments): a value-dependent dtype
        # (np.linalg.eig) follows what eager NumPy gives on the example (capture/examples.py)
        self.examples: Dict[Node, Any] = {}

    def state_proxy(self, arr: np.ndarray, path: str) -> "TracedArray":
        """The traced stand-in of a state array, named by its path; writes to it are
        tracked like writes to user inputs (they become STATE_MUTATION outputs)."""
        node = self.graph.create("constant", (), {"target": path}, arr.dtype, arr.shape,
                                 None, name="c_" + path_identifier(path))
        node.meta["value"] = arr
        node.meta["state"] = path
        proxy = TracedArray(self, node, arr.shape, arr.dtype)
        self.input_proxies[id(proxy)] = node
        self.final[node] = node
        self.state[id(arr)] = proxy
        self.state_nodes.append(node)
        return proxy

    def rebind(self, target: "TracedArray", value: "TracedArray") -> None:
        """Functionalised mutation: ``target`` now stands for ``value``'s node, and so do
        its base and every other view of that base (capture/views.py)."""
        why = target.readonly
        if why is not None:     # a gather that stands for a view: a write would not reach x
            raise UserError("writing into %s is not supported while tracing%s; copy it first "
                            "(np.copy) and write into the copy" % (why, where(user_frame(3))))
        self.set_value(target, value)
        propagate(self, target)

    def set_value(self, target: "TracedArray", value: "TracedArray") -> None:
        """Point ``target`` at ``value`` (recording the final value of inputs and state)."""
        node = self.input_proxies.get(id(target))
        if node is not None:
            self.final[node] = value.node
        target.node = value.node
        target._shape = value.shape
        target.dtype = value.dtype

    def final_value(self, node: Node) -> Node:
        return self.final.get(node, node)

    # ------------------------------------------------------------------ values
    def wrap(self, node: Node, shape: tuple, dtype: np.dtype) -> "TracedArray":
        return TracedArray(self, node, shape, dtype)

    def emit(self, op: str, inputs: tuple, attrs: Dict[str, Any], shape: tuple,
             dtype, name: Optional[str] = None) -> "TracedArray":
        """Record a node whose output has ``shape`` (ints / SymInts) and ``dtype``."""
        frame, ns = user_site(2)
        if ns is not None and self.enter_globals is not None:
            self.enter_globals(ns)
        node = self.graph.create(op, inputs, attrs, np.dtype(dtype),
                                 tuple(to_expr(s) for s in shape), frame, name)
        return TracedArray(self, node, tuple(shape), np.dtype(dtype))

    def sym_shape(self, shape_exprs: tuple) -> tuple:
        env = self.env
        return tuple(s if type(s) is int else SymInt(s, env.hint_of(s), env)
                     for s in shape_exprs)

    def constant(self, arr: np.ndarray) -> "TracedArray":
        """Lift a NumPy array the program reached from outside (global, closure, literal)."""
        key = id(arr)
        state = self.state.get(key)
        if state is not None:           # the array is model state: its current value
            return state
        got = self._consts.get(key)
        if got is None and arr.base is not None and id(arr.base) in self.const_names \
                and _is_transpose_of(arr, arr.base):
            # W.T computed eagerly on a global: lift W itself and transpose in the graph
            return METHOD_OPS["transpose"](self, self.constant(arr.base), None)
        if got is None:
            name = self.const_names.get(key)
            if name is None:
                base = getattr(arr, "base", None)
                name = self.const_names.get(id(base)) if base is not None else None
                name = (name + "_view") if name else "_constant"
            node = self.graph.create("constant", (), {"target": name}, arr.dtype, arr.shape,
                                     user_frame(2), name="c_" + name.lstrip("_"))
            node.meta["value"] = arr
            got = self._consts[key] = (arr, node)
        arr, node = got
        return TracedArray(self, node, arr.shape, arr.dtype)

    def operand(self, x):
        """A traced array, or a scalar kept as a scalar (Python / NumPy scalar / SymInt)."""
        if type(x) is TracedArray:
            if x.tracer is not self:
                raise UserError("a traced array from another export was used here%s"
                                % where(user_frame(2)))
            return x
        if isinstance(x, np.ndarray):
            return self.constant(x)
        if isinstance(x, (bool, int, float, complex, np.generic)) or type(x) is SymInt \
                or type(x) is SymFloat:
            return x
        if type(x) is SymBool:
            return bool(x)
        if type(x) is Tracked:          # a Python number of state: its value, guarded
            return x.materialize()
        if isinstance(x, (list, tuple)):
            if holds_traced(x):
                return self.stack_list(x)
            try:
                arr = np.asarray(x)
            except Exception:
                arr = None
            if arr is not None and arr.dtype != object:
                return self.constant(arr)
            return self.stack_list(x)
        raise UserError("cannot use a %s as an array operand%s"
                        % (type(x).__name__, where(user_frame(2))))

    def call(self, func: Callable, *args, **kwargs):
        """``func(*args, **kwargs)`` (a NumPy function) traced by its handler."""
        return FUNCTIONS[func](self, *args, **kwargs)

    def stack_list(self, xs):
        return METHOD_OPS["array_from_list"](self, xs)


def holds_traced(v) -> bool:
    """``v`` is, or is a (nested) list or tuple holding, a traced array or a symbolic
    number."""
    if type(v) is TracedArray or type(v) is SymInt or type(v) is SymFloat:
        return True
    return isinstance(v, (list, tuple)) and any(holds_traced(b) for b in v)


def _is_transpose_of(a: np.ndarray, base) -> bool:
    return isinstance(base, np.ndarray) and a.ndim == base.ndim >= 2 and \
        a.shape == base.shape[::-1] and a.strides == base.strides[::-1] and \
        a.__array_interface__["data"][0] == base.__array_interface__["data"][0]


# registrations of handlers for functions of modules loaded late (capture.scipy_ops adds
# its own): run before a foreign ufunc is refused
LATE_FUNCTIONS: List[Callable[[], object]] = []
# NumPy's own ufuncs; any other (SciPy's) goes to its op or is refused by name
_NUMPY_UFUNCS = frozenset(v for v in vars(np).values() if isinstance(v, np.ufunc))


def dispatch_ufunc(t: Tracer, ufunc, method: str, inputs, kwargs):
    t.env.commit_pending()
    if not (getattr(ufunc, "__module__", None) or "").startswith("numpy") and \
            ufunc not in UFUNC_OVERRIDES:
        # a ufunc of another library (scipy.special.expit): the generated code could not
        # name it, and its loops are not NumPy's; refused rather than emitted as np.<name>
        raise UserError("%s is a ufunc of another library than NumPy, which symshape "
                        "cannot trace%s; write it with NumPy functions, or register it with "
                        "ss.custom_op" % (ufunc.__name__, where(user_frame(3))))
    if method != "__call__":
        return METHOD_OPS["ufunc_method"](t, ufunc, method, inputs, kwargs)
    handler = UFUNC_OVERRIDES.get(ufunc)
    if handler is not None:
        return handler(t, ufunc, inputs, kwargs)
    if ufunc not in _NUMPY_UFUNCS:
        return _foreign_ufunc(t, ufunc, inputs, kwargs)
    return ELEMENTWISE[0](t, ufunc, inputs, kwargs)


def _foreign_ufunc(t: Tracer, ufunc, inputs, kwargs):
    """A ufunc of another library (``scipy.special.expit``): its op when one is defined
    (``capture.scipy_ops``), else a clear refusal (never an op name NumPy does not have)."""
    from .ops.traits import traits_of     # (imported here: the ops build on this module)
    if ufunc not in FUNCTIONS:        # SciPy's modules may have been imported during the trace
        for register in LATE_FUNCTIONS:
            register()
    handler = FUNCTIONS.get(ufunc)
    if handler is not None:
        return handler(t, *inputs, **kwargs)
    if traits_of(ufunc.__name__) is not None:     # one of NumPy's inner ufuncs
        return ELEMENTWISE[0](t, ufunc, inputs, kwargs)
    raise UserError("the ufunc %s.%s is not NumPy's and has no op in the symshape tracer%s; "
                    "wrap its call in ss.custom_op with a fake (shape) function"
                    % (getattr(ufunc, "__module__", None) or "?", ufunc.__name__,
                       where(user_frame(3))))


def _as_view(t: Tracer, func, args, kwargs, result):
    if (func in RESHAPES or func in PERMUTES) and type(result) is TracedArray \
            and args and type(args[0]) is TracedArray:
        return register_call(t, func, args, kwargs, result)
    return result


def _not_operand(o) -> bool:
    """Values ``==`` should not broadcast against (``x == None``, ``x in [Ellipsis]``)."""
    return o is None or o is Ellipsis or isinstance(o, (str, slice, type))


def to_expr(s):
    t = type(s)
    return s.expr if t is SymInt else (s.fexpr if t is SymFloat else s)


def shape_repr(shape) -> str:
    return "(%s%s)" % (", ".join(describe(s) for s in shape), "," if len(shape) == 1 else "")


_UNTRACEABLE = object()


_LOOP_ADVICE = ("a Python loop over a dynamic size unrolls it for this size only; use "
                "ss.map(f, xs) or ss.while_loop(cond, body, init) to keep it dynamic, or "
                "vectorize the loop")


def _indexed_name(code: str) -> Optional[str]:
    """``table`` for a source line ``return table[x] * 2``: the array a line subscripts."""
    import ast
    text = code.strip()
    try:
        # a block header (``if table[x] > 0:``) parses with a body added
        tree = ast.parse(text + " pass" if text.endswith(":") else text)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            return ast.unparse(node.value)
    return None


def _first_line(e: BaseException) -> str:
    text = str(e).splitlines()
    return ("%s: %s" % (type(e).__name__, text[0]) if text else type(e).__name__)[:300]

# NumPy functions whose Python implementation must not be traced through: they convert
# their arguments to plain arrays on purpose, or only wrap a C routine that has a handler
_OPAQUE = frozenset({"save", "savez", "savez_compressed", "savetxt", "array2string",
                     "array_repr", "array_str", "printoptions", "may_share_memory",
                     "shares_memory"})


def _through_numpy(t: Tracer, func, args, kwargs):
    """A NumPy function without a handler: trace NumPy's own Python implementation, which is
    written in terms of other NumPy calls (``np.isclose``, ``np.cov``, ``np.kron``...).
    Returns ``_UNTRACEABLE`` when there is none or when it reaches something the tracer
    cannot record; then the caller reports the function (or breaks the graph)."""
    impl = getattr(func, "_implementation", None)
    if impl is None or getattr(func, "__name__", "") in _OPAQUE:
        return _UNTRACEABLE
    depth = t.__dict__.get("_fallback_depth", 0)
    if depth > 8:
        return _UNTRACEABLE
    graph_size = len(t.graph.nodes)
    snap = t.env.save_state()
    t._fallback_depth = depth + 1
    breaker, t.breaker = t.breaker, None      # all of it traces, or none of it
    try:
        return impl(*args, **kwargs)
    except GuardOnDataDependentError as e:
        # the function only needed its arguments' values inside NumPy's own code: say which
        # function, rather than pointing at a branch the user did not write
        del t.graph.nodes[graph_size:]
        t.env.restore_state(snap)
        if depth:
            raise
        raise GuardOnDataDependentError(
            "%s cannot be traced%s: NumPy's own implementation of it needs array values "
            "(%s).\nCompute it with traced NumPy calls, run it outside the traced function, "
            "or wrap it in ss.custom_op with a fake (shape) function."
            % (_public_name(func), where(user_frame(3)),
               _first_line(e).split(" at ")[0].split(": ", 1)[-1])) from None
    except (UserError, TypeError, ValueError, AttributeError, IndexError, NotImplementedError,
            RecursionError) as e:
        # nothing of a failed attempt stays behind: its nodes and what it taught the sizes
        del t.graph.nodes[graph_size:]
        t.env.restore_state(snap)
        t.__dict__.setdefault("_fallback_failures", {})[func] = e
        return _UNTRACEABLE
    finally:
        t.breaker = breaker
        t._fallback_depth = depth


def _public_name(func) -> str:
    """``np.allclose`` / ``np.linalg.cond``: a NumPy function as users write it."""
    mod = (getattr(func, "__module__", None) or "numpy").replace("numpy._core", "numpy")
    for sub in ("linalg", "fft"):
        if sub in mod:
            return "np.%s.%s" % (sub, getattr(func, "__name__", "?"))
    return "np.%s" % getattr(func, "__name__", "?")


def _eager_instead(t: Tracer, e: UserError, func, args, kwargs):
    """With a JIT breaker, an operation the tracer cannot record runs eagerly (a break)."""
    reason = (str(e).splitlines() or [type(e).__name__])[0]
    return t.breaker.call(func, args, kwargs, reason.split(" at ")[0].rstrip(" ."),
                          user_frame(3))


def _numpy_function_running() -> Optional[str]:
    """``np.hanning`` when NumPy's own Python code of that function is running below the
    user's line (a function object the trace could not route), else None."""
    f = sys._getframe(2)
    name = None
    while f is not None:
        fn = f.f_code.co_filename.replace("\\", "/")
        if "/numpy/" in fn and not f.f_code.co_name.startswith("_"):
            name = f.f_code.co_name           # the outermost public NumPy function wins
        elif name is not None and "/numpy/" not in fn:
            break
        f = f.f_back
    return None if name is None else "np.%s" % name


def _data_dependent(what: str, suggestion: str) -> GuardOnDataDependentError:
    frame = user_frame(3)
    inside = _numpy_function_running()
    if inside is not None:
        what = "%s (inside NumPy's own code of %s, which needs the values here)" % (what,
                                                                                    inside)
    return GuardOnDataDependentError(
        "%s depends on array values, which are not known while tracing%s.\n%s"
        % (what, where(frame), suggestion))


def require_kth(n, kth, what: str, frame) -> None:
    """np.partition / np.argpartition along an axis of size ``n``: NumPy raises unless every
    ``kth`` is in ``[-n, n)`` (an empty array takes any); each bound is a guard, so the
    contract admits only sizes above every kth (empty arrays excluded too: narrower than
    NumPy, never wider)."""
    ks = kth if isinstance(kth, (list, tuple)) else \
        (np.ravel(kth).tolist() if isinstance(kth, np.ndarray) else [kth])
    for k in ks:
        if not (-n <= k) or not (k < n):
            raise UserError("%s: kth=%s is out of bounds for an axis of size %s%s"
                            % (what, k, describe(n), where(frame)))


def _checked(x: "TracedArray", branch) -> bool:
    """The truth value that goes on along the side of a branch that does not raise; the
    program checks when it runs that ``x`` still gives it (``capture.valuechecks``)."""
    t = x.tracer
    ok = METHOD_OPS["item"](t, x.astype(bool) == branch.safe, ())
    t.env.check(R.eq(to_expr(ok), 1), None, branch.text, user_frame(3))
    rec = active()
    if rec is not None:
        # the writes made so far happen, in eager Python, also when this check raises
        rec.check_point(to_expr(ok), branch.text)
    return branch.safe


class TracedArray:
    """A symbolic stand-in for a NumPy array during tracing."""

    __slots__ = ("tracer", "node", "_shape", "dtype", "view", "readonly", "__weakref__")
    __array_priority__ = 1000
    _ss_shows_ndarray = True        # type(x) in the user's code (capture/ndarray_class.py)

    @property
    def __class__(self):
        """``np.ndarray`` for the user's code, so ``isinstance(x, np.ndarray)`` takes the
        branch eager NumPy takes; the real class for symshape's, NumPy's and the standard
        library's code (capture/ndarray_class.py)."""
        return np.ndarray if shows_ndarray(sys._getframe(1).f_code) else TracedArray

    def __init__(self, tracer: Tracer, node: Node, shape: tuple, dtype: np.dtype) -> None:
        self.tracer = tracer
        self.node = node
        self._shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.view = None        # capture.views.View when NumPy would return a view
        self.readonly = None    # why a write is refused (a gather standing for a view)

    # ------------------------------------------------------------------ protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        t = self.tracer
        if any(type(x) is Tracked for x in inputs):
            inputs = tuple(materialize(x) for x in inputs)
        if t.breaker is not None:
            try:
                return dispatch_ufunc(t, ufunc, method, inputs, kwargs)
            except UserError as e:
                f = ufunc if method == "__call__" else getattr(ufunc, method)
                return _eager_instead(t, e, f, inputs, kwargs)
        return dispatch_ufunc(t, ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        t = self.tracer
        if any(type(x) is Tracked for x in args) or \
                any(type(x) is Tracked for x in kwargs.values()):
            # a Python number of state used as an operand: its value, guarded
            args = tuple(materialize(x) for x in args)
            kwargs = {k: materialize(x) for k, x in kwargs.items()}
        handler = FUNCTIONS.get(func)
        if handler is None:
            t.env.commit_pending()
            traced = _through_numpy(t, func, args, kwargs)
            if traced is not _UNTRACEABLE:
                return traced
            if t.breaker is not None:
                return t.breaker.call(func, args, kwargs, "call to %s.%s" % (
                    getattr(func, "__module__", "numpy"), getattr(func, "__name__", "?")),
                    user_frame(2))
            name = getattr(func, "__module__", "numpy") + "." + getattr(func, "__name__", "?")
            why = t.__dict__.get("_fallback_failures", {}).get(func)
            raise UserError("%s is not supported by the symshape tracer%s%s.\nRewrite the line "
                            "with supported NumPy calls (the core op set: python -m symshape "
                            "docs core_ops), or wrap it in "
                            "ss.custom_op with a fake (shape) function."
                            % (name.replace("numpy._core", "numpy"), where(user_frame(2)),
                               "" if why is None else " (NumPy's own implementation of it was "
                               "traced and failed: %s)" % _first_line(why)))
        # creation functions with like= get their sizes converted by NumPy *before* this
        # dispatch; they cancel those pending specialisations themselves
        if not getattr(handler, "takes_sizes", False):
            t.env.commit_pending()
        if t.breaker is not None:
            try:
                return _as_view(t, func, args, kwargs, handler(t, *args, **kwargs))
            except UserError as e:
                return _eager_instead(t, e, func, args, kwargs)
        return _as_view(t, func, args, kwargs, handler(t, *args, **kwargs))

    def _concrete(self, reason: str):
        """The real value when the JIT runs through graph breaks, else None."""
        b = self.tracer.breaker
        if b is None:
            return None
        return b.value(self, reason, user_frame(3))

    def __array__(self, dtype=None, copy=None):
        v = self._concrete("conversion to a NumPy array")
        if v is not None:
            return v if dtype is None else v.astype(dtype)
        frame = user_frame(2)
        target = _indexed_name(frame.code) if frame is not None else None
        if target is not None:
            raise UserError("`%s` is a plain NumPy array indexed by a traced array%s: NumPy "
                            "cannot hand that indexing to the tracer. Make `%s` model state "
                            "(create it outside the function: a global, a closure variable or "
                            "an attribute), or trace it: np.asarray(%s, like=<a traced array>)"
                            "[...]" % (target, where(frame), target, target))
        raise UserError("a traced array cannot be converted to a NumPy array%s (np.asarray / "
                        "np.array on a traced value, or mixing it with a non-NumPy library).\n"
                        "Use NumPy functions on it directly, pass like=x to creation functions, "
                        "or make the data an input." % where(user_frame(2)))

    # ------------------------------------------------------------------ attributes
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self):
        out = 1
        for s in self.shape:
            out = out * s
        return out

    @property
    def flags(self):
        """``ndarray.flags``: the layout NumPy would give this value (``ops.memory``)."""
        return METHOD_OPS["flags"](self)

    @property
    def strides(self) -> tuple:
        """``ndarray.strides`` in bytes, symbolic with the sizes (C order for an array the
        program computed or an input; a transpose's reversed)."""
        f = self.flags
        shape = self.shape[::-1] if f.fortran else self.shape
        out, step = [], self.dtype.itemsize
        for s in reversed(shape):
            out.append(step)
            step = step * s
        return tuple(out) if f.fortran else tuple(reversed(out))

    def __copy__(self):
        # copy.copy / copy.deepcopy of an ndarray copy its data: a traced copy
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def T(self):
        return np.transpose(self)

    # the array API standard: code that asks the array for its namespace traces too
    def __array_namespace__(self, *, api_version=None):
        return METHOD_OPS["namespace"](api_version)

    @property
    def device(self) -> str:
        return "cpu"

    def to_device(self, device, /, *, stream=None):
        if device != "cpu":
            raise UserError("to_device(%r): traced arrays live on 'cpu'%s"
                            % (device, where(user_frame(2))))
        return self

    @property
    def flat(self):
        """``x.flat``: reads and writes of the flattened array (capture/ops/flat.py)."""
        return METHOD_OPS["flatiter"](self)

    @property
    def mT(self):
        return np.swapaxes(self, -1, -2)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return operator.index(self.shape[0]) if type(self.shape[0]) is SymInt else self.shape[0]

    def __iter__(self):
        n = self.shape[0] if self.shape else None
        if n is None:
            raise TypeError("iteration over a 0-d array")
        if type(n) is SymInt:
            # a for statement over the rows becomes a loop node (capture/loops.py); any
            # other Python loop over them unrolls for this size only: say what keeps it
            why = maybe_found(2)
            n = self.tracer.env.specialize(n.expr, "iterating over an array", user_frame(2),
                                           advice=_LOOP_ADVICE if why is None else
                                           "%s (symshape keeps a for loop over a dynamic "
                                           "count as a loop, but not this one: %s)"
                                           % (_LOOP_ADVICE, why))
        for i in range(n):
            yield self[i]

    def __repr__(self) -> str:
        # what a user reads in an error: shape in their input terms and the line that made
        # it, never a graph node's name
        made = self.node.frame
        return "<traced %s array of shape %s%s>" % (
            self.dtype, shape_repr(self.shape),
            " from %s" % made.location if made is not None else "")

    def __getattr__(self, name: str):
        # only reached for names TracedArray lacks: an ndarray method we do not trace
        if hasattr(np.ndarray, name) and not name.startswith("_"):
            raise UserError("ndarray.%s is not supported by the symshape tracer%s; use the "
                            "np.%s function form if it exists, or a supported equivalent"
                            % (name, where(user_frame(2)), name))
        raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))

    def sort(self, axis=-1, kind=None, order=None):
        self.tracer.rebind(self, np.sort(self, axis=axis, kind=kind, order=order))

    def argsort(self, axis=-1, kind=None, order=None):
        return np.argsort(self, axis=axis, kind=kind, order=order)

    # ------------------------------------------------------------------ values
    def __bool__(self):
        branch = raising_branch(sys._getframe(1))
        if branch is not None:        # validation: the side that goes on, checked at run time
            return _checked(self, branch)
        v = self._concrete('data-dependent branch on array values')
        if v is not None:
            return bool(v)
        raise _data_dependent("bool() of a traced array (an `if`, `while`, `and`, `or` or "
                              "`assert` on array values)",
                              "Use ss.cond(pred, true_fn, false_fn, operands) to keep both "
                              "branches, or ss.check(...) on sizes.")

    def __int__(self):
        v = self._concrete('int() of array values')
        if v is not None:
            return int(v)
        raise _data_dependent("int() of a traced array",
                              "Use x.item() for a symbolic value, ss.check(...) to assert a "
                              "fact, or ss.cond to branch on it.")

    def __float__(self):
        v = self._concrete('float() of array values')
        if v is not None:
            return float(v)
        raise _data_dependent("float() of a traced array",
                              "Keep the value as an array (0-d arrays broadcast), or use "
                              "ss.cond to branch on it.")

    def __index__(self):
        v = self._concrete('array values used as an index')
        if v is not None:
            return operator.index(v)
        raise _data_dependent("using a traced array as an index or size",
                              "Use x.item() for a symbolic size, or integer-array indexing "
                              "(np.take) to index with array values.")

    __complex__ = __float__

    def __round__(self, ndigits=None):
        return np.round(self, 0 if ndigits is None else ndigits)

    def __hash__(self):
        return id(self)

    def __getitem__(self, idx):
        self.tracer.env.commit_pending()
        getitem = METHOD_OPS["getitem"]
        if self.tracer.breaker is not None:
            try:
                return getitem(self.tracer, self, idx)
            except UserError as e:
                return _eager_instead(self.tracer, e, operator.getitem, (self, idx), {})
        return getitem(self.tracer, self, idx)

    def __setitem__(self, idx, value):
        self.tracer.env.commit_pending()
        setitem = METHOD_OPS["setitem"]
        if self.tracer.breaker is not None:
            try:
                return setitem(self.tracer, self, idx, value)
            except UserError as e:
                return _eager_instead(self.tracer, e, operator.setitem, (self, idx, value), {})
        setitem(self.tracer, self, idx, value)

    # ------------------------------------------------------------------ methods
    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return np.reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return np.transpose(self, axes if axes else None)

    def flatten(self, order="C"):
        out = np.ravel(self, order=order)     # a copy in NumPy: never a view
        if out is self or out.view is not None:
            out = self.tracer.wrap(out.node, out.shape, out.dtype)
        return out

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return METHOD_OPS["astype"](self.tracer, self, dtype)

    def copy(self, order="C"):
        return np.copy(self)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis=axis)

    def swapaxes(self, a, b):
        return np.swapaxes(self, a, b)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        return np.max(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        return np.min(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def argmax(self, axis=None, out=None, keepdims=False):
        return np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, keepdims=False):
        return np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return np.any(self, axis=axis, out=out, keepdims=keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        return np.all(self, axis=axis, out=out, keepdims=keepdims)

    @property
    def shape(self) -> tuple:
        return self._shape

    @shape.setter
    def shape(self, value) -> None:
        # ``a.shape = (1, -1)`` reshapes ``a`` itself in place (NumPy's meshgrid does it)
        if id(self) in self.tracer.input_proxies:
            raise UserError("assigning .shape of an input or state array is not supported "
                            "while tracing; write `x = x.reshape(...)`%s" % where(user_frame(2)))
        new = np.reshape(self, value)
        self.node, self._shape, self.view = new.node, new.shape, new.view

    @property
    def real(self):
        return METHOD_OPS["real"](self.tracer, self)

    @property
    def imag(self):
        return METHOD_OPS["imag"](self.tracer, self)

    def conj(self):
        return np.conjugate(self)

    conjugate = conj

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return np.diagonal(self, offset, axis1, axis2).sum(axis=-1, dtype=dtype, out=out)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        # a full sort is a valid partition for every kth; NumPy's median and percentile
        # read only the partitioned positions, so their values are the same
        if order is not None:
            raise UserError("ndarray.partition(order=...) is not supported while tracing%s"
                            % where(user_frame(2)))
        if axis is not None:
            a = int(axis) % self.ndim if self.ndim else 0
            require_kth(self.shape[a] if self.ndim else 1, kth, "np.partition",
                        user_frame(2))
        self.tracer.rebind(self, np.sort(self, axis=axis))

    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, side=side, sorter=sorter)

    def cumsum(self, axis=None, dtype=None, out=None):
        return np.cumsum(self, axis=axis, dtype=dtype, out=out)

    def clip(self, min=None, max=None, out=None):
        return np.clip(self, min, max, out=out)

    def dot(self, other):
        return np.dot(self, other)

    def round(self, decimals=0):
        return np.round(self, decimals)

    def nonzero(self):
        return np.nonzero(self)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None):
        return np.take(self, indices, axis=axis)

    def fill(self, value):
        self[...] = value

    def item(self, *args):
        v = self._concrete("item() of array values")
        if v is not None:
            return v.item(*args)
        return METHOD_OPS["item"](self.tracer, self, args)

    def tolist(self):
        v = self._concrete("tolist() of array values")
        if v is not None:
            return v.tolist()
        raise _data_dependent("tolist() of a traced array",
                              "Keep the values as an array, or make them an input.")

    # ------------------------------------------------------------------ operators
    def __add__(self, o): return np.add(self, o)
    def __radd__(self, o): return np.add(o, self)
    def __sub__(self, o): return np.subtract(self, o)
    def __rsub__(self, o): return np.subtract(o, self)
    def __mul__(self, o): return np.multiply(self, o)
    def __rmul__(self, o): return np.multiply(o, self)
    def __truediv__(self, o): return np.true_divide(self, o)
    def __rtruediv__(self, o): return np.true_divide(o, self)
    def __floordiv__(self, o): return np.floor_divide(self, o)
    def __rfloordiv__(self, o): return np.floor_divide(o, self)
    def __mod__(self, o): return np.remainder(self, o)
    def __rmod__(self, o): return np.remainder(o, self)
    def __pow__(self, o): return np.power(self, o)
    def __rpow__(self, o): return np.power(o, self)
    def __matmul__(self, o): return np.matmul(self, o)
    def __rmatmul__(self, o): return np.matmul(o, self)
    def __and__(self, o): return np.bitwise_and(self, o)
    def __rand__(self, o): return np.bitwise_and(o, self)
    def __or__(self, o): return np.bitwise_or(self, o)
    def __ror__(self, o): return np.bitwise_or(o, self)
    def __xor__(self, o): return np.bitwise_xor(self, o)
    def __rxor__(self, o): return np.bitwise_xor(o, self)
    def __lshift__(self, o): return np.left_shift(self, o)
    def __rshift__(self, o): return np.right_shift(self, o)
    def __neg__(self): return np.negative(self)
    def __pos__(self): return np.positive(self)
    def __abs__(self): return np.absolute(self)
    def __invert__(self): return np.invert(self)
    def __eq__(self, o):
        return NotImplemented if _not_operand(o) else np.equal(self, o)

    def __ne__(self, o):
        return NotImplemented if _not_operand(o) else np.not_equal(self, o)

    def __lt__(self, o): return np.less(self, o)
    def __le__(self, o): return np.less_equal(self, o)
    def __gt__(self, o): return np.greater(self, o)
    def __ge__(self, o): return np.greater_equal(self, o)

    # in-place operators: functional update of this proxy (see ops.elementwise.inplace)
    def _inplace(self, ufunc, o):
        return ufunc(self, o, out=self)

    def __iadd__(self, o): return self._inplace(np.add, o)
    def __isub__(self, o): return self._inplace(np.subtract, o)
    def __imul__(self, o): return self._inplace(np.multiply, o)
    def __itruediv__(self, o): return self._inplace(np.true_divide, o)
    def __ifloordiv__(self, o): return self._inplace(np.floor_divide, o)
    def __imod__(self, o): return self._inplace(np.remainder, o)
    def __ipow__(self, o): return self._inplace(np.power, o)
    def __imatmul__(self, o): return self._inplace(np.matmul, o)
    def __iand__(self, o): return self._inplace(np.bitwise_and, o)
    def __ior__(self, o): return self._inplace(np.bitwise_or, o)
    def __ixor__(self, o): return self._inplace(np.bitwise_xor, o)
