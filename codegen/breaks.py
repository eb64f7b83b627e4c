"""Graph breaks: running a function whose Python cannot be captured in one graph.

*Detection* (``with_break_detection``): the JIT first traces the whole function with export's tracer,
a ``breaker`` that raises ``GraphBreak`` at the first value-dependent conversion
(``if x.sum() > 0``, ``float(x)``, ``np.asarray(x)``) or call the tracer cannot record, and
``print`` hooked for the trace (NumPy never sees a ``print``, yet a function compiled
without it would print only once, while tracing).

*Running through breaks* (``LazyRun``): every call runs the function's Python with
traced arrays of static shapes; ops are recorded into the pending *segment*.  At a break
the segment is compiled (cached by its structure: the code of its nodes, and the shapes,
dtypes and constants they read) and run on the real values; the values still reachable
from Python (live proxies, tracked by weak references) become concrete, the break itself
runs eagerly (the branch is taken on the real value, ``print`` prints real values, the
unsupported call runs on NumPy arrays and its results re-enter the trace as inputs), and
recording resumes in a new segment.  Side effects therefore happen once per call, in
program order, with real values; pure array work between them runs as compiled code.
"""
from __future__ import annotations

import builtins
import inspect
import re
import sys
import threading
import weakref
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from symshape.specs import pytree
from symshape.reasoning.env import ShapeEnv
from symshape.errors import UserError
from symshape.userframe import UserFrame, is_internal, user_frame

from symshape.capture.ops import families
from symshape.capture.export import constant_names
from symshape.capture.ir import Node
from symshape.codegen.pycode import Renderer, emit_node
from symshape.capture.tracer import TracedArray, Tracer
from symshape.capture.state.leaks import materialize_in, reach_values

from .split import code_lines, in_with

families()          # every op's handler and op-table row, before any use

# a ``with`` in a function the compiled one calls, around traced work
HELPER_WITH = ("with statement in %s (its context manager would enter and exit once, while "
               "tracing): the call runs eagerly")

SEGMENT_CACHE = 64


class GraphBreak(UserError):
    """Tracing reached something it cannot capture in the graph."""

    def __init__(self, reason: str, frame: Optional[UserFrame]) -> None:
        self.reason = reason
        self.frame = frame
        super().__init__(describe_break(frame, reason))


def describe_break(frame: Optional[UserFrame], reason: str) -> str:
    """``'file:line: reason'``, the form ``explain`` reports."""
    if frame is None:                   # raised outside user code (an input's type)
        return reason
    return "%s: %s" % (frame.location, reason)


def break_detail(frame: Optional[UserFrame], reason: str) -> str:
    text = describe_break(frame, reason)
    code = frame.code if frame is not None else ""
    return text + ("\n    " + code if code else "")


# --------------------------------------------------------------------------- print hook
_tls = threading.local()
_hook_lock = threading.Lock()
_hook_users = 0
_saved_print = builtins.print        # the print in place when the hook was installed


def _real_print(*args, **kwargs):
    return _saved_print(*args, **kwargs)


def _print_hook(*args, **kwargs):
    handler = getattr(_tls, "print_handler", None)
    if handler is None or is_internal(sys._getframe(1).f_code.co_filename):
        return _saved_print(*args, **kwargs)
    return handler(args, kwargs, user_frame(2))


class print_hooked:
    """Route ``print`` calls of this thread's user code to ``handler`` while active."""

    def __init__(self, handler) -> None:
        self.handler = handler

    def __enter__(self):
        global _hook_users, _saved_print
        self.prev = getattr(_tls, "print_handler", None)
        _tls.print_handler = self.handler
        with _hook_lock:
            _hook_users += 1
            if _hook_users == 1 and builtins.print is not _print_hook:
                _saved_print = builtins.print
                builtins.print = _print_hook
        return self

    def __exit__(self, *exc):
        global _hook_users
        _tls.print_handler = self.prev
        with _hook_lock:
            _hook_users -= 1
            if _hook_users == 0 and builtins.print is _print_hook:
                builtins.print = _saved_print
        return False


# --------------------------------------------------------------------------- detection
class _RaiseAtBreak:
    """The breaker of a full-graph trace: the first break ends it.  Every break raised is
    kept (``raised``), with the stack it was raised on: a user's ``except Exception``
    around the step may swallow it, and the trace must not be used then."""

    def __init__(self) -> None:
        self.raised: List[GraphBreak] = []

    def _break(self, reason, frame) -> GraphBreak:
        brk = GraphBreak(reason, frame)
        f, stack = sys._getframe(2), []
        while f is not None:
            stack.append((f.f_code, f.f_lineno))
            f = f.f_back
        brk.stack = stack[::-1]           # outermost first, like a traceback
        self.raised.append(brk)
        return brk

    def value(self, arr, reason, frame):
        raise self._break(reason, frame)

    def call(self, func, args, kwargs, reason, frame):
        raise self._break(reason, frame)

    def swallowed(self) -> None:
        """The traced function returned although a break was raised in it: user code
        caught it (``try: float(x.sum()) except Exception: ...``); the trace took a path
        eager code does not take, so the break is raised again, past the user's handler."""
        if self.raised:
            first = self.raised[0]
            brk = GraphBreak(first.reason, first.frame)
            brk.stack = first.stack
            raise brk


def _find_tracer(args, kwargs):
    leaves, _ = pytree.flatten((args, kwargs))
    for _, v in leaves:
        if type(v) is TracedArray:
            return v.tracer
    return None


def with_break_detection(f):
    """``f`` wrapped so that, traced by export, every graph break raises GraphBreak (also
    one that the user's own ``except`` swallowed)."""
    def traced(*args, **kwargs):
        t = _find_tracer(args, kwargs)
        breaker = _RaiseAtBreak()
        if t is not None:
            t.breaker = breaker

        def print_break(args, kwargs, frame):
            raise breaker._break("call to print (a side effect: it runs eagerly, on every "
                                 "call)", frame)
        with print_hooked(print_break):
            out = f(*args, **kwargs)
        breaker.swallowed()
        return out
    traced.__wrapped__ = f
    traced.__name__ = getattr(f, "__name__", "f")
    traced.__qualname__ = getattr(f, "__qualname__", traced.__name__)
    return traced


_AT = re.compile(r" at (\S+):(\d+)")


def as_break(e: BaseException) -> GraphBreak:
    """A tracing error (data-dependent size, unsupported feature) seen as a graph break."""
    if isinstance(e, GraphBreak):
        return e
    first = (str(e).splitlines() or [type(e).__name__])[0]
    m = _AT.search(first)
    frame = None
    if m:
        frame = UserFrame(m.group(1), int(m.group(2)), "?")
        first = first[:m.start()]
    return GraphBreak(first.rstrip(" ."), frame)


def untraceable_break(e: BaseException) -> GraphBreak:
    """An error raised while tracing as a graph break at the user's line: a symshape
    error as itself (``as_break``); any other (a library call that needs a real array,
    ``zlib.crc32(x)`` raising TypeError) as a call that must run on real arrays."""
    if isinstance(e, UserError):
        return as_break(e)
    frame = None
    tb = e.__traceback__
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if not is_internal(fn):
            frame = UserFrame(fn, tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    text = str(e).splitlines()[0] if str(e) else ""
    return GraphBreak("a call the tracer cannot see into needs real arrays (%s%s)"
                      % (type(e).__name__, ": " + text if text else ""), frame)


# --------------------------------------------------------------------------- lazy runs
_NUMBERED = re.compile(r"_\d+$")     # the suffix Graph.fresh_name adds to a repeated name


class Segment:
    """One captured graph: its nodes (in order) and its code."""

    def __init__(self, nodes: List[Node], source: str) -> None:
        self.nodes = nodes
        self.source = source

    @property
    def ops(self) -> List[str]:
        """Each node's op as the graph's code names it (``transpose``, the name of the
        call, for the core op ``permute_dims``), without the number that keeps names
        apart (``sum_1``)."""
        return [_NUMBERED.sub("", n.name) for n in self.nodes]

    @property
    def core_ops(self) -> List[str]:
        """Each node's core op (``permute_dims``; docs/core_ops.md)."""
        return [n.op for n in self.nodes]

    @property
    def op_count(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return "Segment(%d ops: %s)" % (len(self.nodes), ", ".join(self.ops))


class BreakRecord:
    def __init__(self, frame: Optional[UserFrame], reason: str) -> None:
        self.frame = frame
        self.reason = reason

    def __str__(self) -> str:
        return describe_break(self.frame, self.reason)


class _DataDependentSize(UserError):
    """Raised in lazy runs where an op would create a data-dependent size: the tracer then
    runs that op eagerly, so the size is a concrete int from there on."""


class _ConcreteSizesEnv(ShapeEnv):
    def create_unbacked(self, source: str, vr, frame=None):
        raise _DataDependentSize("data-dependent output size (%s)" % source)


class _LazyTracer(Tracer):
    """Export's tracer, remembering every proxy it hands out (to know what is live).
    ``runs_eagerly``: the values exist, so ``ss.cond`` runs the one branch its predicate
    picks, as eager Python does (tracing both would run both branches' side effects)."""

    runs_eagerly = True

    def __init__(self, env, const_names, run: "LazyRun") -> None:
        super().__init__(env, const_names)
        self.run = run
        self.breaker = run

    def emit(self, *args, **kwargs):
        p = self.run.track(super().emit(*args, **kwargs))
        if type(p) is TracedArray:
            self.run.in_context(p.node)
        return p

    def wrap(self, *args, **kwargs):
        return self.run.track(super().wrap(*args, **kwargs))

    def constant(self, arr):
        return self.run.track(super().constant(arr))


class SegmentCache:
    """Compiled segments by structure, shared by all calls of one compiled function."""

    def __init__(self) -> None:
        self.fns: Dict[tuple, Any] = {}
        self.hits = 0
        self.misses = 0
        self.signature = None           # of the function, read once

    def get(self, key, build):
        fn = self.fns.get(key)
        if fn is None:
            self.misses += 1
            fn = build()
            if len(self.fns) >= SEGMENT_CACHE:
                del self.fns[next(iter(self.fns))]
            self.fns[key] = fn
        else:
            self.hits += 1
        return fn


class LazyRun:
    """One call of a function through its graph breaks (see the module docstring)."""

    def __init__(self, f, cache: SegmentCache, record: bool = False) -> None:
        self.f = f
        self.cache = cache
        self.record = record
        self.env = _ConcreteSizesEnv()
        self.tracer = _LazyTracer(self.env, constant_names(f), self)
        self.graph = self.tracer.graph
        self.vals: Dict[Node, Any] = {}
        self.start = 0
        self._refs: List[weakref.ref] = []
        self.segments: List[Segment] = []
        self.breaks: List[BreakRecord] = []
        self.side_effects = 0          # prints run so far (a failed run must not repeat them)
        self.skip_prints = 0           # prints a previous attempt ran (``explain``)
        self.failed: Optional[BaseException] = None     # raised by a compiled segment
        self._context = None           # the helper's ``with`` the last op ran in
        self._own_lines = None

    # ------------------------------------------------------------------ with blocks
    def in_context(self, node: Node) -> None:
        """Work traced inside a ``with`` of a function that ``f`` calls (``np.errstate``,
        a user's context): run it now, while that context is entered, and report the
        ``with`` as a break once per entry (``f``'s own ``with`` statements are split)."""
        fr = node.frame
        line = None if fr is None or self._own(fr) else in_with(fr.filename, fr.lineno)
        if line is None:
            self._context = None
            return
        if self._context != (fr.filename, line):
            self._context = (fr.filename, line)
            self.breaks.append(BreakRecord(UserFrame(fr.filename, line, fr.function),
                                           HELPER_WITH % (fr.function or "a function "
                                                          "it calls")))
        self.flush([node])

    def _own(self, fr) -> bool:
        code = getattr(getattr(self.f, "__func__", self.f), "__code__", None)
        if code is None:
            return False
        if self._own_lines is None:
            self._own_lines = code_lines(code)
        return fr.filename == code.co_filename and fr.lineno in self._own_lines

    # ------------------------------------------------------------------ tracking
    def track(self, p):
        if type(p) is TracedArray:
            self._refs.append(weakref.ref(p))
        return p

    def _live_nodes(self) -> set:
        live = set()
        refs = []
        for r in self._refs:
            p = r()
            if p is not None:
                live.add(p.node)
                refs.append(r)
        self._refs = refs
        live.update(self.tracer.final.values())
        return live

    def new_input(self, arr: np.ndarray, path: str) -> TracedArray:
        node = self.graph.create("input", (), {"path": path}, arr.dtype, tuple(arr.shape),
                                 None, name=path)
        self.vals[node] = arr
        proxy = TracedArray(self.tracer, node, tuple(arr.shape), arr.dtype)
        return self.track(proxy)

    # ------------------------------------------------------------------ running
    def __call__(self, args: tuple, kwargs: dict):
        f = self.f
        try:
            sig = self.cache.signature
            if sig is None:
                sig = self.cache.signature = inspect.signature(f)
            bound = sig.bind(*args, **kwargs)
            names = list(bound.arguments)
            values = [bound.arguments[n] for n in names]
        except (TypeError, ValueError):
            sig, bound = None, None
            names = ["arg%d" % i for i in range(len(args))]
            values = list(args)
        new_values, inputs = self.enter(names, values)
        if bound is not None:
            for n, v in zip(names, new_values):
                bound.arguments[n] = v
            call_args, call_kwargs = bound.args, bound.kwargs
        else:
            call_args, call_kwargs = tuple(new_values), dict(kwargs)
        with print_hooked(self._print):
            out = f(*call_args, **call_kwargs)
        result = self.leave(out, inputs)
        # a traced value the run stored where the user sees it (a returned dataclass, an
        # attribute, a closure, a dict entry): its concrete array instead
        fix = self._leak_fix
        box = [result]
        left = materialize_in(box, fix, "output") + [
            p for name, v in reach_values(f) + list(zip(names, values))
            for p in materialize_in(v, fix, name)]
        if left:
            raise UserError("a value computed by the compiled function is left in %s, which "
                            "symshape cannot replace (a tuple or a default value); return it "
                            "or store it in a list, dict or attribute" % left[0])
        return box[0]

    def _leak_fix(self, v: TracedArray) -> np.ndarray:
        self.flush([v.node])
        return self.concrete(v.node)

    def enter(self, names: List[str], values: list):
        """The array leaves of ``values`` (named ``names``) as traced inputs: (the values
        with proxies in their place, the input records ``leave`` writes back through)."""
        inputs: List[Tuple[Node, TracedArray]] = []
        new_values = []
        for name, v in zip(names, values):
            leaves, spec = pytree.flatten(v, name)
            out = []
            for path, leaf in leaves:
                if type(leaf) is np.ndarray:
                    self.graph.reserve(name)
                    p = self.new_input(leaf, path)
                    self.tracer.input_proxies[id(p)] = p.node
                    self.tracer.final[p.node] = p.node
                    inputs.append((p.node, p))
                    out.append(p)
                else:
                    out.append(leaf)
            new_values.append(pytree.unflatten(out, spec))
        return new_values, inputs

    def leave(self, out, inputs):
        """Run what is pending; ``out`` with real arrays for proxies, the inputs written in
        place holding their new values."""
        leaves, spec = pytree.flatten(out)
        traced = [v.node for _, v in leaves if type(v) is TracedArray]
        self.flush(traced)
        result = pytree.unflatten([self.concrete(v.node) if type(v) is TracedArray else v
                                   for _, v in leaves], spec)
        for node, _ in inputs:
            final = self.tracer.final.get(node, node)
            if final is not node:
                self.vals[node][...] = self.concrete(final)
        return result

    def concrete(self, node: Node):
        if node.op == "constant":
            return node.meta["value"]
        if node not in self.vals:
            self.flush([node])
        return self.vals[node]

    def _concretize(self, v):
        leaves, spec = pytree.flatten(v)
        if not any(type(x) is TracedArray for _, x in leaves):
            return v
        return pytree.unflatten([self.concrete(x.node) if type(x) is TracedArray else x
                                 for _, x in leaves], spec)

    # ------------------------------------------------------------------ breaker protocol
    def value(self, arr: TracedArray, reason: str, frame) -> np.ndarray:
        self.breaks.append(BreakRecord(frame, reason))
        self.flush([arr.node])
        return self.concrete(arr.node)

    def call(self, func, args, kwargs, reason: str, frame):
        self.breaks.append(BreakRecord(frame, reason))
        leaves, _ = pytree.flatten((args, kwargs))
        self.flush([x.node for _, x in leaves if type(x) is TracedArray])
        res = func(*self._concretize(tuple(args)), **self._concretize(dict(kwargs)))
        return self._reenter(res)

    def _reenter(self, res):
        leaves, spec = pytree.flatten(res)
        if not any(type(x) is np.ndarray for _, x in leaves):
            return res
        return pytree.unflatten([self.new_input(x, "eager") if type(x) is np.ndarray else x
                                 for _, x in leaves], spec)

    def _print(self, args, kwargs, frame):
        self.breaks.append(BreakRecord(frame, "call to print (a side effect: it runs "
                                              "eagerly, on every call)"))
        self.flush([])
        self.side_effects += 1
        if self.side_effects <= self.skip_prints:
            return None
        return _real_print(*self._concretize(tuple(args)), **self._concretize(dict(kwargs)))

    # ------------------------------------------------------------------ segments
    def flush(self, extra: List[Node]) -> None:
        """Compile and run the pending segment; its live values become concrete."""
        g = self.graph
        pending = [n for n in g.nodes[self.start:] if n.op not in ("input", "constant")]
        self.start = len(g.nodes)
        if not pending:
            return
        live = self._live_nodes()
        live.update(extra)
        pset = set(pending)
        outs = [n for n in pending if n in live]
        # only what the live values need (a failed op may have left dead nodes behind)
        need = set()
        stack = list(outs)
        while stack:
            n = stack.pop()
            if n in need or n not in pset:
                continue
            need.add(n)
            stack.extend(n.input_nodes())
        seg = [n for n in pending if n in need]
        if not seg:
            return
        ext: List[Node] = []
        seen = set()
        for n in seg:
            for i in n.input_nodes():
                if i not in need and i not in seen:
                    seen.add(i)
                    ext.append(i)
        key, text = self._key(seg, ext, outs)
        fn = self.cache.get(key, lambda: self._build(seg, ext, outs))
        args = [self.concrete(i) for i in ext if i.op != "constant"]
        try:
            res = fn(*args)
        except Exception as e:
            # the array work itself raised (LinAlgError), not the tracing: ``explain``
            # then runs that stretch eagerly, as ``ss.compile`` does
            self.failed = e
            raise
        for o, v in zip(outs, res):
            self.vals[o] = v
        # forget concrete values nobody can reach any more
        keep = live
        self.vals = {n: v for n, v in self.vals.items() if n.op == "input" or n in keep}
        self.segments.append(Segment(seg, text))

    def close_pending(self) -> None:
        """Record the ops traced since the last segment as a (never run) segment: what a
        failed run had captured when it stopped."""
        pending = [n for n in self.graph.nodes[self.start:]
                   if n.op not in ("input", "constant")]
        self.start = len(self.graph.nodes)
        if pending:
            r = Renderer({}, {})
            self.segments.append(Segment(pending, "\n".join(
                "%s = %s" % (n.name, emit_node(n, r)) for n in pending)))

    def _key(self, seg, ext, outs):
        ns: Dict[str, Any] = {}
        r = Renderer({}, ns)
        lines = ["%s = %s" % (n.name, emit_node(n, r)) for n in seg]
        sig = []
        for i in ext:
            if i.op == "constant":
                sig.append((i.name, "const", id(i.meta["value"])))
            else:
                v = self.concrete(i)
                sig.append((i.name, getattr(v, "shape", None),
                            getattr(v, "dtype", type(v))))
        consts = tuple((k, type(v).__name__, repr(v)) for k, v in ns.items())
        key = (tuple(lines), tuple(sig), tuple(o.name for o in outs), consts)
        return key, "\n".join(lines)

    def _build(self, seg, ext, outs):
        from .numpy_backend import generate  # looked up per call: tests replace it
        params = [i.name for i in ext if i.op != "constant"]
        consts = [i for i in ext if i.op == "constant"]
        spec = ("tuple", tuple(pytree.LEAF for _ in outs))
        cp = generate(consts + seg, list(outs), spec, [], None, [], None,
                      "segment", lambda e: e if type(e) is int else 1024, params=params)
        return cp.full


# --------------------------------------------------------------------------- advice
_ADVICE = (
    ("call to print", "To compile it whole, drop the print or move it outside the "
                      "compiled function."),
    ("data-dependent branch", "To compile it whole, use ss.cond(pred, true_fn, false_fn, "
                              "operands), which keeps both branches in the graph, or compute "
                              "both sides and pick with np.where(cond, a, b)."),
    ("data-dependent output size", "To compile it whole, keep the shape fixed: "
                                   "np.where(mask, x, 0) instead of x[mask]."),
    ("of array values", "To compile it whole, keep the value an array (x.sum() rather "
                        "than float(x.sum())) and convert it after the compiled call."),
    ("Could not decide", "The condition reads a size computed from array values "
                         "(np.nonzero, x[mask]); to compile it whole, keep sizes fixed with "
                         "np.where."),
    ("needs real arrays", "To compile it whole, do that call outside the compiled function "
                          "or with NumPy operations."),
)


def break_advice(reason: str) -> str:
    """What the user can change to remove a graph break of this kind."""
    for key, text in _ADVICE:
        if key in reason:
            return text
    return "To compile it whole, express that step with NumPy array operations."
