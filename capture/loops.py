"""Python loops over a symbolic count kept as one ``for_loop`` node (issue 41).

How a loop gets here: capture/loop_convert.py rewrites the user's function so each ``for``
statement calls ``loop_helper(ITER, body_fn, carried, info)`` (bound as the builtin
``__symshape_loop__`` while a trace runs).  A concrete iterable runs as the Python loop it
was.  A symbolic one (``range`` over sizes, the rows of an array with a symbolic first axis,
``enumerate`` / ``zip`` of those) is traced once into a body subgraph:

- the loop index is a fresh data-dependent size ``i`` with the facts ``start <= i < stop``
  (so ``x[:, t]`` under ``range(x.shape[1])`` needs no check); guards of the body that do not
  mention ``i`` join the program's contract (the body is traced like ``ss.map``'s); the ones
  on ``i`` that the facts do not decide stay in the body;
- carried values (the names the body rebinds): traced arrays are subgraph inputs and
  outputs, which must keep their shape (a change is a ``UserError`` naming the loop's line
  and the name); Python numbers and sizes the body changes are promoted to 0-d arrays and
  the body is traced again (at most ``MAX_PASSES`` times) until the carried types settle;
  an array written in place (``y[:, t] = h``) is carried and the outer array rebound after
  the loop; values the body leaves alone pass through;
- lists the body appends to (``outs.append(h)``): each append is a per-iteration output,
  stacked by the loop node; the user's name is rebound to a ``LoopList`` that ``np.stack``,
  ``np.array``, ``np.asarray``, ``np.concatenate``, ``np.vstack``, ``sum``, ``len`` and
  indexing understand;
- object state the body writes (``self.x = ...``, also in the methods it calls; see
  ``_State``): carried like arrays and written once after the loop; constants it writes
  are written once too;
- the conditions on ``i`` that its facts leave open: when affine in ``i``, they hold for
  every iteration if they hold at the first and last index, a guard on the inputs
  (``_EveryIteration``, installed as ``env.loop_guard``); other conditions on ``i`` (``if
  t == 0``) stay ``GuardOnDataDependentError``.

``[F] * n`` with ``n`` a size is a ``RepeatedList`` (``env.repeat_hook``): a loop zips it,
indexes it by ``i`` and takes its ``len`` without pinning ``n``.  A ``while i < n: ...;
i += k`` statement reaches here as the for statement it is rewritten to.

Decisions: the body is traced once per pass, never unrolled; a body that cannot be one
function (``break``, ``return``, ``yield``, ``del``, ``global``) stays a Python loop, with
the reason in the specialization message (a ``ConstraintViolationError`` under a named
``Dim``); a value whose shape changes per iteration is refused, never specialized.

The node (for the backends; emitted by ``defop("for_loop")``):: (for the backends; emitted by ``defop("for_loop")``)::

    for_loop(start, stop, step, (carried...), (lifted...), (row_shape...))
        attrs: body=Subgraph, dtypes=(row dtype...)
    -> a tuple: the carried values after the loop, then one stacked (count, *row_shape)
       array per appended value

``start`` / ``stop`` / ``step`` are sizes (ints or expressions over the program's
symbols).  The body subgraph's inputs are ``(i, *carried, *lifted)``, its first input is
named after the index symbol (so its checks and sizes can use ``i``), and its outputs are
``(*carried, *rows)``.  ``symshape.runtime.for_loop`` runs it; with zero trips the stacked
outputs are empty arrays of shape ``(0, *row_shape)``.  The index is ``start + n * step``
for the ``n``-th iteration (ONNX: codegen/onnx/control.py binds it so).  The loop owns its
carried arrays (the runtime copies them once, before the first iteration): a write into
one that nothing else in the body reads is the op ``setitem_owned`` (``x[index] = v`` into
``x`` itself, returning it), which a backend may also run as a plain ``setitem``.
"""
from __future__ import annotations

import builtins
import sys
from typing import Optional

import numpy as np

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.algebra.ranges import ValueRange
from symshape.errors import UserError, where
from symshape.sizes.symint import SymInt, describe
from symshape.userframe import user_frame

from .control import annotation as _annot, trace_branch as _trace_branch
from .lenrange import SYMBOLIC_LISTS, SymRange
from .loop_convert import CALL_NAME, LOOP_HELPER, UNDEF_NAME, WHILE_END
from .ops.registry import defop
from .state.binding import user_code
from .state.objstate import active
from .tracer import FUNCTIONS, TracedArray, to_expr

MAX_PASSES = 3

defop("for_loop", emit=lambda a, k: "_rt.for_loop(%s, %s, %s, %s, %s, %s, %s, %s)" % (
    k["body"], a[0], a[1], a[2], a[3], a[4], a[5], k["dtypes"]),
    doc="run body(i, *carried, *lifted) for i in range(start, stop, step); the carried "
        "values after the loop, then the per-iteration rows stacked")


defop("setitem_owned", emit=lambda a, k: "_rt.setitem_owned(%s, np.s_[%s], %s)" % (
    a[0], k["index"], a[1]),
    doc="x[index] = value written into x itself (a loop's carried array that only this "
        "write reads; the loop owns it) and x returned")


class _Undef:
    """A name the loop's body binds that was unbound before the loop."""

    def __repr__(self) -> str:
        return "<unbound>"


UNDEF = _Undef()

# --------------------------------------------------------------------------- the lists
class _Rows:
    """The one item a ``LoopList`` holds: NumPy finds it while dispatching ``np.stack`` /
    ``np.concatenate`` / ``np.vstack`` of the list and calls it with the list in place."""

    __slots__ = ("owner",)

    def __init__(self, owner) -> None:
        self.owner = owner

    def __array_function__(self, func, types, args, kwargs):
        return self.owner.numpy_call(func, args, kwargs)

    def __repr__(self) -> str:
        return "<rows of a loop>"


class LoopList(list):
    """The list a loop over a symbolic count appended to: its rows are one traced array of
    shape ``(count, *row)``."""

    def __init__(self, stacked: TracedArray, line: str) -> None:
        super().__init__([_Rows(self)])
        self.stacked = stacked
        self.line = line

    def symbolic_len(self):
        """``len(outs)`` (the routed ``len``): the loop's count."""
        return self.stacked.shape[0]

    def stacked_rows(self) -> TracedArray:
        """The rows as one ``(count, *row)`` array (the routed ``sum`` adds them up)."""
        return self.stacked

    def __len__(self):
        raise UserError("len() of a list built by a loop over a dynamic count is a size: "
                        "use len(np.stack(outs)) or the loop's count%s" % self.line)

    def __getitem__(self, i):
        return self.stacked[i]

    def numpy_call(self, func, args, kwargs):
        """``func(*args, **kwargs)`` with this list replaced by its stacked rows."""
        x = self.stacked
        axis = kwargs.get("axis", args[1] if len(args) > 1 else 0)
        name = getattr(func, "__name__", "")
        if name == "stack":
            return np.moveaxis(x, 0, axis) if axis else x
        if name in ("concatenate", "vstack", "row_stack"):
            if name != "concatenate" and x.ndim == 2:
                return x
            if axis is None:
                return x.reshape(-1)
            axis = axis % (x.ndim - 1)
            moved = np.moveaxis(x, 0, axis)
            shape = tuple(moved.shape[:axis]) + (moved.shape[axis] * moved.shape[axis + 1],) \
                + tuple(moved.shape[axis + 2:])
            return moved.reshape(shape)
        if name in ("array", "asarray", "asanyarray"):
            dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
            return x if dtype is None else x.astype(dtype)
        raise UserError("%s of a list built by a loop over a dynamic count is not supported; "
                        "stack it first (np.stack(outs))%s" % (name, self.line))


class RepeatedList(list):
    """``[F] * n`` with ``n`` a size, made by the user's code while a trace runs: the list
    holds its items as Python repeats them for the example's ``n``; indexing it (by a loop
    index too: ``Fs[k + 1]``), ``len`` and a loop over it (``zip(zs, Fs)``) keep ``n``
    symbolic.  Anything else first specializes ``n`` (a guard, as ``[F] * n`` did before),
    after which it is the plain list it holds."""

    def __init__(self, items: list, count: SymInt, hint: int) -> None:
        super().__init__(items * hint)
        self.items = list(items)
        self.count = count
        self.fixed = False

    def symbolic_len(self):
        """``len`` (the routed one): ``n`` while it is symbolic, None once specialized."""
        return None if self.fixed else self.count

    def stacked_rows(self):
        """None: ``sum`` adds the items one by one (which specializes ``n``)."""
        return None

    def specialize(self, why: str) -> None:
        """Pin ``n`` to the example's value (a guard naming the user's line)."""
        if not self.fixed:
            self.fixed = True
            self.count.env.specialize(self.count.expr, why, user_frame(3))

    def __len__(self):
        self.specialize("len() of a list repeated by a size")
        return list.__len__(self)

    def __iter__(self):
        self.specialize("iterating over a list repeated by a size")
        return list.__iter__(self)

    def __array__(self, dtype=None, copy=None):
        # NumPy reads a list's items in C: the repetition is pinned first, as before
        self.specialize("an array of a list repeated by a size")
        return np.array(list(list.__iter__(self)), dtype=dtype)

    def __array_function__(self, func, types, args, kwargs):
        self.specialize("%s of a list repeated by a size" % getattr(func, "__name__", "a call"))
        args = tuple(list(a) if type(a) is RepeatedList else a for a in args)
        return func(*args, **kwargs)

    def __getitem__(self, i):
        if not self.fixed and len(self.items) == 1 and type(i) in (int, SymInt):
            env = self.count.env
            n = self.count.expr
            if env.evaluate(R.lt(to_expr(i), n), None, user_frame(2)) and \
                    env.evaluate(R.ge(to_expr(i), E.neg(n)), None, user_frame(2)):
                return self.items[0]
            raise IndexError("list index out of range")
        self.specialize("indexing a list repeated by a size")
        return list.__getitem__(self, i)


def _specializing(name: str):
    def method(self, *a, **k):
        self.specialize("%s on a list repeated by a size" % name)
        return getattr(list, name)(self, *a, **k)
    method.__name__ = name
    return method


for _m in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "copy",
           "index", "count", "__setitem__", "__delitem__", "__iadd__", "__imul__", "__add__",
           "__mul__", "__rmul__", "__contains__", "__reversed__", "__eq__", "__ne__"):
    setattr(RepeatedList, _m, _specializing(_m))
RepeatedList.__hash__ = None


SYMBOLIC_LISTS.update((LoopList, RepeatedList))      # the routed len / sum know them


def repeated_list(items: list, n: SymInt):
    """``env.repeat_hook``: ``items * n`` for the user's code (a ``RepeatedList``); the
    list's own repetition elsewhere."""
    hint = n.hint if n.hint is not None else n.env.hint_of(n.expr)
    if hint is None or not user_code(sys._getframe(2).f_code):
        return list.__mul__(items, n.env.specialize(n.expr, "repeating a list by a size",
                                                     user_frame(2)))
    return RepeatedList(items, n, hint)


# --------------------------------------------------------------------------- the helper
def loop_helper(it, body, carried: tuple, info: tuple):
    """``for TARGET in it: BODY`` as rewritten by capture/loop_convert.py."""
    src = _symbolic_source(it)
    if src is None:
        if type(it) is _Call:
            it = it.concrete()
        if type(it) is SymRange:
            it = it._concrete()
        for v in it:
            carried = body(v, *carried)
        return carried
    return _traced_loop(src, body, carried, info)


def _tracer_of(v):
    if type(v) is TracedArray:
        return v.tracer
    if type(v) is SymInt:
        return getattr(v.env, "tracer", None)
    return None


class _Source:
    """What a symbolic loop iterates: ``range(start, stop, step)`` over the index and the
    items made from it (``make(i)``)."""

    def __init__(self, tracer, start, stop, step, make, uppers) -> None:
        self.tracer, self.start, self.stop, self.step = tracer, start, stop, step
        self.make = make
        self.uppers = uppers          # sizes the index stays below (zip: every length)


def _symbolic_source(it) -> Optional[_Source]:
    if type(it) is SymRange:
        if type(it.step) is not int or it.step == 0:
            return None
        t = next((_tracer_of(v) for v in (it.start, it.stop) if _tracer_of(v)), None)
        if t is None:
            return None
        return _Source(t, it.start, it.stop, it.step, lambda i: i, [it.stop])
    if type(it) is TracedArray and it.ndim and type(it.shape[0]) is SymInt:
        n = it.shape[0]
        return _Source(it.tracer, 0, n, 1, lambda i: it[i], [n])
    if type(it) is _Call:
        return it.source()
    if type(it) is RepeatedList and not it.fixed and len(it.items) == 1:
        item = it.items[0]
        return _Source(it.count.env.tracer, 0, it.count, 1, lambda i: item, [it.count])
    return None


class _Call:
    """``enumerate(...)`` / ``zip(...)`` / ``reversed(...)`` as the loop's iterable (the
    rewrite passes the call unevaluated, so a symbolic one is not iterated)."""

    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn, args, kwargs) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def source(self) -> Optional[_Source]:
        """The symbolic loop this call stands for, or None (then it is called as it is)."""
        fn, args, kw = self.fn, self.args, self.kwargs
        if fn is builtins.enumerate and len(args) == 1 and set(kw) <= {"start"} or \
                fn is builtins.enumerate and len(args) == 2 and not kw:
            inner = _symbolic_source(args[0])
            if inner is None:
                return None
            k = kw.get("start", args[1] if len(args) == 2 else 0)
            a, s, make = inner.start, inner.step, inner.make
            counter = (lambda i: i - a + k) if s == 1 else (lambda i: (i - a) // s + k)
            return _Source(inner.tracer, a, inner.stop, s,
                           lambda i: (counter(i), make(i)), inner.uppers)
        if fn is builtins.zip and args and not kw:
            return _zip_source(args)
        if fn is builtins.reversed and len(args) == 1 and not kw:
            inner = _symbolic_source(args[0])
            if inner is None or type(args[0]) is not SymRange or inner.step != 1:
                return None
            return _Source(inner.tracer, inner.stop - 1, inner.start - 1, -1, inner.make,
                           [inner.start])
        return None

    def concrete(self):
        """The iterable itself (a concrete loop)."""
        return self.fn(*[a.concrete() if type(a) is _Call else a for a in self.args],
                       **self.kwargs)


def iter_call(fn, *args, **kwargs) -> _Call:
    """What the rewritten for statement passes for ``enumerate(...)`` / ``zip(...)``."""
    return _Call(fn, args, kwargs)


def _zip_source(args) -> Optional[_Source]:
    """``zip`` of ranges, arrays and lists repeated by a size, one of them over a symbolic
    count: the index runs to the shortest."""
    counts, makers, tracer = [], [], None
    for a in args:
        if type(a) is list and len(a) <= 1:         # [] or [x]: a plain Python zip
            return None
        if isinstance(a, range):
            a = SymRange(a.start, a.stop, a.step)
        if type(a) is SymRange:
            if type(a.step) is not int or a.step <= 0:
                return None
            src = _symbolic_source(a) if any(type(v) is SymInt for v in (a.start, a.stop)) \
                else None
            st, sp = a.start, a.step
            n = (a.stop - st + sp - 1) // sp
            makers.append(lambda i, st=st, sp=sp: st + i * sp)
            counts.append(n)
            tracer = tracer or (src.tracer if src else None)
        elif type(a) is RepeatedList and not a.fixed and len(a.items) == 1:
            counts.append(a.count)
            makers.append(lambda i, v=a.items[0]: v)
            tracer = tracer or a.count.env.tracer
        elif (type(a) is TracedArray or isinstance(a, np.ndarray)) and a.ndim:
            counts.append(a.shape[0])
            makers.append(lambda i, a=a: _row(a, i))
            tracer = tracer or _tracer_of(a.shape[0]) or (
                a.tracer if type(a) is TracedArray else None)
        else:
            return None
    if tracer is None or not any(type(n) is SymInt for n in counts):
        return None
    ns = [to_expr(n) for n in counts]
    stop = ns[0] if len(ns) == 1 else E.smin(*ns)
    stop = SymInt(stop, None, tracer.env) if type(stop) is not int else stop
    return _Source(tracer, 0, stop, 1, lambda i: tuple(m(i) for m in makers), counts)


def _row(a, i):
    if type(a) is not TracedArray:
        a = _tracer_of(i).constant(a)
    return a[i]


def _traced_loop(src: _Source, body, carried: tuple, info: tuple):
    t = src.tracer
    env = t.env
    env.commit_pending()
    frame = user_frame(3)
    line_no, names, kinds = info
    carried = list(carried)
    promoted: dict = {}
    state = _State(t, [v for v in carried], frame)
    for _ in range(MAX_PASSES + 1):
        got = _trace_pass(t, src, body, carried, names, kinds, frame, promoted, state)
        if got is not None:
            return got
    raise UserError("the loop's carried values did not settle after %d passes%s"
                    % (MAX_PASSES, where(frame)))


def _initial(t, v, kind):
    """How a carried value enters a pass: ('array', traced) / ('list', None) /
    ('value', v)."""
    if kind == "list" and type(v) in (list, LoopList):
        return "list", v            # (its items before the loop come first after it)
    if type(v) is TracedArray:
        return "array", v
    if isinstance(v, np.ndarray):
        return "array", t.constant(v)
    return "value", v


def _trace_pass(t, src: _Source, body, carried: list, names, kinds, frame, promoted,
                state: "_State"):
    env = t.env
    slots = [_initial(t, promoted.get(j, v), kinds[j]) for j, v in enumerate(carried)]
    arrays = [v for k, v in slots if k == "array"]
    n_arrays = len(arrays)
    arrays += state.initial()
    index_stub = TracedArray(t, None, (), np.dtype(np.int64))
    made: dict = {}

    def run(idx_proxy, *proxies):
        i = _index_symbol(env, src, frame)
        made["sym"] = i
        it = iter(proxies)
        args, lists = [], {}
        for j, (k, v) in enumerate(slots):
            if k == "array":
                p = next(it)
                args.append(p)
                made.setdefault("proxies", {})[j] = (p, p.node)
            elif k == "list":
                lists[j] = []
                args.append(lists[j])
            else:
                args.append(v)
        state.enter(proxies[n_arrays:])
        every = _EveryIteration(env)
        last = E.add(to_expr(src.start), E.scale(E.sub(_count(env, src), 1), src.step))
        every.indices[i] = (_no_trips(src), to_expr(src.start), env.simplify(last))
        env.loop_guard = every
        try:
            out = body(src.make(SymInt(i.expr, None, env)), *args)
            finals = state.leave()
        finally:
            env.loop_guard = every.outer
            state.restore()
        made["out"], made["lists"] = out, lists
        flat = []
        for j, (k, v) in enumerate(slots):
            if k == "array":
                o = out[j]
                if isinstance(o, (np.ndarray, np.generic)) and type(o) is not TracedArray:
                    o = t.operand(np.asarray(o))
                if type(o) is not TracedArray:
                    raise UserError("the loop's body makes %s a %s (it was an array)%s"
                                    % (names[j], type(o).__name__, where(frame)))
                flat.append(o)
        flat.extend(finals)
        rows = []
        made["per_list"] = {}
        for j, lst in lists.items():
            got = []
            for v in lst:
                if type(v) is not TracedArray:
                    v = t.operand(np.asarray(v)) if isinstance(v, (np.ndarray, np.generic)) \
                        else _as_array(t, v)
                got.append(v)
            if any(g.dtype != got[0].dtype or not _same_shape(env, g, got[0]) for g in got):
                raise UserError("the loop's body appends values of different shapes or dtypes "
                                "to %s (%s)%s" % (names[j], ", ".join(_annot(g) for g in got),
                                                  where(frame)))
            made["per_list"][j] = len(got)
            rows.extend(got)
        made["rows"] = rows
        return tuple(flat) + tuple(rows)

    sub, outs, _, _ = _trace_branch(t, run, [index_stub] + arrays,
                                    "for_body_%d" % _next_count(t), local=False)
    # an array first lifted inside the body is a constant of the body's graph: the outer
    # program (a later pass, the code after the loop) lifts it again for itself
    own = set(sub.graph.nodes)
    for key in [k for k, v in t._consts.items() if v[1] in own]:
        del t._consts[key]
    out, sym = made["out"], made["sym"]
    if state.grew:
        return None
    # what changed: numbers promoted, arrays whose dtype moved; then trace again
    again = False
    for j, (k, v) in enumerate(slots):
        o = out[j]
        if k == "value" and not _same_value(v, o):
            if type(v) is _Undef or v is UNDEF or type(o) is not TracedArray and \
                    not _numberlike(o):
                if type(v) is _Undef and type(o) is TracedArray:
                    promoted[j] = _zeros_like(t, o, sym, names[j], frame)
                    again = True
                continue
            promoted[j] = _promote(t, v, o, names[j], frame)
            again = True
        elif k == "array":
            a = v
            if type(o) is TracedArray and o.dtype != a.dtype and o.ndim == a.ndim:
                promoted[j] = a.astype(np.result_type(a.dtype, o.dtype))
                again = True
    if again:
        return None
    return _emit(t, src, sub, outs, slots, made, names, frame, state)


class _State:
    """Object state the loop's body writes (``self.x = self.F @ self.x``, also inside a
    method it calls): each (object, attribute) written with an array is carried -- set to
    the body's input before the body runs, read back as its output after, and written
    with the loop's result after the loop, so the write is replayed once per iteration as
    the state rules say.  Found on a first pass (``grew``), then traced again."""

    def __init__(self, t, carried: list, frame) -> None:
        self.t = t
        self.rec = active()
        self.frame = frame
        self.slots: list = []           # (object, attribute, value before the loop)
        self.consts: list = []          # (object, attribute, value): constants written
        self.needs_trip = False         # the objects end as in eager Python only if it runs
        self.grew = False
        self.objects = [v for v in carried if self.rec is not None and
                        hasattr(v, "__dict__") and self.rec.path_of(v) is not None]

    def initial(self) -> list:
        """The carried attributes' values before the loop (in the outer graph)."""
        for k, (o, a, v) in enumerate(self.slots):
            if type(v) is tuple:
                self.slots[k] = (o, a, FUNCTIONS[np.zeros](self.t, v[1], v[2]))
        return [v for _, _, v in self.slots]

    def labels(self) -> list:
        return ["%s.%s" % (self.rec.path_of(o), a) for o, a, _ in self.slots]

    def enter(self, proxies) -> None:
        self.grew = False
        self.mark = len(self.rec.effects) if self.rec is not None else 0
        self.saved = [(o, dict(vars(o))) for o in self.objects]
        for (o, a, _), p in zip(self.slots, proxies):
            vars(o)[a] = p              # the body's input (not a write of the program)

    def leave(self) -> list:
        """The body's final value of each carried attribute; finds new ones."""
        if self.rec is None:
            return []
        finals = [vars(o)[a] for o, a, _ in self.slots]
        known = {(id(o), a) for o, a, _ in self.slots}
        paths = {str(self.rec.path_of(o)): o for o in self.objects}
        for e in self.rec.effects[self.mark:]:
            o = paths.get(str(e.path)) if e.op == "setattr" else None
            if o is None:
                raise UserError("the body of a loop over a dynamic count makes a change to "
                                "Python state that cannot be replayed per iteration (%s)%s; "
                                "a loop may write into attributes of the objects its "
                                "function holds" % (e.target(), where(e.frame or self.frame)))
            name, v = e.args[0], vars(o).get(e.args[0])
            if (id(o), name) in known:
                continue
            known.add((id(o), name))
            before = next(d for x, d in self.saved if x is o).get(name, UNDEF)
            if not (type(v) is TracedArray or isinstance(v, np.ndarray)):
                self._constant(o, name, v, before, e)
                continue
            self._new_slot(o, name, self.t.operand(v), before)
        return [self.t.operand(v) if isinstance(v, np.ndarray) else v for v in finals]

    def _constant(self, o, name: str, v, before, e) -> None:
        """A Python value the body writes (``self._likelihood = None``): the same in every
        iteration, written once after the loop (a loop that may not run needs one trip
        when the value differs from the one before it)."""
        if not (v is None or type(v) in (bool, int, float, str)) or \
                any(x is o and a == name and not _same_value(w, v) for x, a, w in self.consts):
            raise UserError("the body of a loop over a dynamic count sets %s to %s, which "
                            "is not an array; only arrays and constants can be replayed per "
                            "iteration%s" % (e.target(), type(v).__name__,
                                             where(e.frame or self.frame)))
        if not any(x is o and a == name for x, a, _ in self.consts):
            self.consts.append((o, name, v))
        if before is UNDEF or not _same_value(before, v):
            self.needs_trip = True

    def _new_slot(self, o, name: str, v: TracedArray, before) -> None:
        """An attribute the body writes an array into is carried.  One the body writes
        before it reads it may have held anything before the loop: then it starts as
        zeros of its loop shape, and the loop must run once for the object to end as in
        eager Python."""
        read = type(before) is TracedArray and any(
            before.node in n.input_nodes() for n in self.t.graph.nodes)
        if type(before) is not TracedArray and isinstance(before, np.ndarray):
            before = self.t.operand(before)
        fits = type(before) is TracedArray and before.dtype == v.dtype and \
            _same_shape(self.t.env, before, v)
        if not fits:
            if read or any(type(s) is SymInt and _mentions_index(s) for s in v.shape):
                raise UserError("the body of a loop over a dynamic count makes %s.%s %s "
                                "(it was %s before the loop); a value carried by the loop "
                                "keeps its shape and dtype%s"
                                % (self.rec.path_of(o), name, _annot(v), _annot(before)
                                   if type(before) is TracedArray else type(before).__name__,
                                   where(self.frame)))
            before = ("zeros", v.shape, v.dtype)      # made in the outer graph: initial()
            self.needs_trip = True
        self.slots.append((o, name, before))
        self.grew = True

    def restore(self) -> None:
        """Undo the body's writes: the recorder forgets them, the objects hold what they
        held before the loop."""
        if self.rec is None:
            return
        del self.rec.effects[self.mark:]
        for o, d in self.saved:
            vars(o).clear()
            vars(o).update(d)

    def write_back(self, results) -> None:
        """After the loop: each carried attribute is written with the loop's result, each
        constant once."""
        for (o, a, _), r in zip(self.slots, results):
            setattr(o, a, r)
        for o, a, v in self.consts:
            setattr(o, a, v)


def _next_count(t) -> int:
    t.__dict__.setdefault("_cond_count", [0])
    k = t._cond_count[0]
    t._cond_count[0] += 1
    return k


def _no_trips(src: _Source):
    """The condition under which the loop does not run."""
    a, b = to_expr(src.start), to_expr(src.stop)
    return R.le(b, a) if src.step > 0 else R.ge(b, a)


def _index_symbol(env, src: _Source, frame):
    """The loop index: a data-dependent size in ``[start, stop)`` (step > 0) or
    ``(stop, start]`` (step < 0), with those facts."""
    lo, hi = env.bound(to_expr(src.start)), env.bound(to_expr(src.stop))
    if src.step > 0:
        vr = ValueRange(lo.lower, hi.upper - 1)
    else:
        vr = ValueRange(hi.lower + 1, lo.upper)
    if vr.lower > vr.upper:
        vr = ValueRange(vr.lower, vr.lower)
    i = env.create_unbacked("the index of the loop", vr, frame)
    ie = i.expr
    if src.step > 0:
        env.add_fact(R.ge(ie, to_expr(src.start)))
        for u in src.uppers:
            env.add_fact(R.lt(ie, to_expr(u)))
    else:
        env.add_fact(R.le(ie, to_expr(src.start)))
        env.add_fact(R.gt(ie, to_expr(src.stop)))
    return i


class _EveryIteration:
    """``env.loop_guard`` while a body traces: a condition affine in a loop index that the
    index's facts do not decide holds in every iteration when it holds at the first and the
    last index; that is a guard on the inputs (joining the contract with the user's line),
    recorded when the example inputs satisfy it (``y[t]`` under ``range(len(x))`` needs
    ``len(x) <= len(y)``).  A condition that differs between iterations (``if t < 3``) stays
    data-dependent."""

    def __init__(self, env) -> None:
        self.env = env
        self.indices: dict = {}        # index symbol -> (no trips, first, last)
        self.outer = env.loop_guard

    def __call__(self, c, frame, kind):
        got = self._every(c, frame, kind)
        if got is None and self.outer is not None:
            return self.outer(c, frame, kind)
        return got

    def _every(self, c, frame, kind):
        env = self.env
        if not isinstance(c, R.Rel) or c.op != R.LE:
            return None
        syms = [s for s in c.free_symbols if s in self.indices]
        if len(syms) != 1 or any(s.unbacked and s not in self.indices for s in c.free_symbols):
            return None
        i = syms[0]
        none, first, last = self.indices[i]
        e = c.expr
        at = [E.subs(e, {i: k}) for k in (0, 1, 2)]
        if env.simplify(E.sub(E.add(at[2], at[0]), E.scale(at[1], 2))) != 0 or \
                type(env.simplify(E.sub(at[1], at[0]))) is not int:
            return None                                   # not affine in the index
        for want, cond in ((True, c), (False, c.negate())):
            if not isinstance(cond, R.Rel):
                continue
            every = R.combine("and", [R.make(R.LE, E.subs(cond.expr, {i: first})),
                                      R.make(R.LE, E.subs(cond.expr, {i: last}))])
            if type(every) is bool:
                if every:
                    return want
                continue
            guard = R.combine("or", [none, every])
            if type(guard) is bool:
                if guard:
                    return want
                continue
            if any(s.unbacked for s in guard.free_symbols):
                return None
            if env._hint_cond(guard):
                env.evaluate(guard, True, frame, kind)
                return want
        return None


def _same_value(a, b) -> bool:
    if a is b:
        return True
    if type(a) is SymInt or type(b) is SymInt:
        return type(a) is type(b) and E.sub(a.expr, b.expr) == 0 if type(a) is SymInt \
            and type(b) is SymInt else False
    if type(a) is TracedArray or type(b) is TracedArray:
        return False
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _numberlike(v) -> bool:
    return isinstance(v, (bool, int, float, complex, np.generic)) or type(v) is SymInt


def _as_array(t, v):
    """A Python number or size as a 0-d traced array (NumPy's dtype for it)."""
    if type(v) is SymInt:
        return FUNCTIONS[np.asarray](t, v)
    if _numberlike(v):
        return t.constant(np.asarray(v))
    raise UserError("a loop over a dynamic count can carry arrays and numbers, not %s"
                    % type(v).__name__)


def _promote(t, v, o, name: str, frame):
    """A Python number the body changes, as a 0-d array of the dtype it ends up with."""
    if type(o) is TracedArray and o.ndim:
        raise UserError("the loop's body makes %s an array of shape %s (it was the number "
                        "%s before the loop): a carried value keeps its shape%s"
                        % (name, _annot(o), describe(v) if type(v) is SymInt else repr(v),
                           where(frame)))
    init = _as_array(t, v)
    od = o.dtype if type(o) is TracedArray else np.asarray(o).dtype if \
        type(o) is not SymInt else np.dtype(np.int64)
    dt = np.result_type(init.dtype, od)
    return init.astype(dt) if dt != init.dtype else init


def _zeros_like(t, o, sym, name: str, frame):
    """The value before the first iteration of an array the body makes from scratch."""
    for s in o.shape:
        if type(s) is SymInt and sym in to_expr(s).free_symbols:
            raise UserError("the shape of %s changes from one iteration to the next (%s)%s"
                            % (name, _annot(o), where(frame)))
    return FUNCTIONS[np.zeros](t, o.shape, o.dtype)


def _count(env, src: _Source):
    """The trip count of ``range(start, stop, step)`` as a size."""
    a, b, s = to_expr(src.start), to_expr(src.stop), src.step
    if s > 0:
        n = E.sub(b, a) if s == 1 else E.floordiv(E.add(E.sub(b, a), s - 1), s)
    else:
        n = E.floordiv(E.add(E.sub(a, b), -s - 1), -s)
    if env.decide(R.ge(n, 0)) is not True:
        n = E.smax(n, 0)
    for u in src.uppers[1:]:
        n = E.smin(n, to_expr(u))
    return n


def _emit(t, src: _Source, sub, outs, slots, made, names, frame, state):
    """The ``for_loop`` node of a settled pass, and the values the user's names get back."""
    env = t.env
    sym = made["sym"]
    n_carried = sum(1 for k, _ in slots if k == "array") + len(state.slots)
    carried_outs, rows = outs[:n_carried], outs[n_carried:]
    inits = [v for k, v in slots if k == "array"] + state.initial()
    labels = [names[j] for j, (k, _) in enumerate(slots) if k == "array"] + state.labels()
    carried_in = _carried_inputs(env, labels, inits, carried_outs, sym, frame)
    row_shapes = _row_shapes(made, names, rows, sym, frame)
    _writes_in_place(sub, len(carried_in))
    sub.graph.nodes[0].name = sym.name
    sub.inputs[0].name = sym.name
    lifted = list(sub.graph.lifted)
    sub.inputs = sub.inputs + [n for n in sub.graph.nodes if n.op == "input"][len(sub.inputs):]
    count = _simplified(env, SymInt(_count(env, src), None, env))
    inputs = (to_expr(src.start), to_expr(src.stop), src.step, tuple(carried_in),
              tuple(lifted), tuple(row_shapes))
    whole = t.emit("for_loop", inputs, {"body": sub, "dtypes": tuple(r.dtype for r in rows)},
                   (len(outs),), np.dtype(object))
    results = [t.emit("tuple_get", (whole.node,), {"index": q}, o.shape, o.dtype,
                      name="getitem") for q, o in enumerate(carried_outs)]
    stacked = [t.emit("tuple_get", (whole.node,), {"index": n_carried + q},
                      (count,) + tuple(r.shape), r.dtype, name="getitem")
               for q, r in enumerate(rows)]
    back = _given_back(t, slots, made, results, stacked, count, frame)
    if state.needs_trip and env.evaluate(R.ge(to_expr(count), 1), None, frame) is not True:
        raise UserError("a loop over a dynamic count that does not run here writes object "
                        "state as no iteration would%s" % where(frame))
    state.write_back(results[len(results) - len(state.slots):])
    return tuple(back)


def _carried_inputs(env, labels, inits, carried_outs, sym, frame) -> list:
    """The carried values' nodes before the loop; a shape the body changes is refused."""
    carried_in = []
    for name, v, o in zip(labels, inits, carried_outs):
        if o.ndim != v.ndim or any(_differs(env, a, b, sym) for a, b in zip(o.shape, v.shape)):
            raise UserError("the shape of %s changes from one iteration to the next: %s "
                            "before the loop, %s after one iteration%s; a value carried by a "
                            "loop over a dynamic count keeps its shape (preallocate it, or "
                            "collect per-iteration values in a list and stack it after the "
                            "loop)" % (name, _annot(v), _annot(o), where(frame)))
        carried_in.append(v.node)
    return carried_in


def _row_shapes(made, names, rows, sym, frame) -> list:
    """Each appended value's shape (the same in every iteration)."""
    row_shapes = []
    owners = [j for j, k in made["per_list"].items() for _ in range(k)]
    for j, r in zip(owners, rows):
        for s in r.shape:
            if type(s) is SymInt and sym in to_expr(s).free_symbols:
                raise UserError("the shape of the values appended to %s changes from one "
                                "iteration to the next (%s)%s" % (names[j], _annot(r),
                                                                  where(frame)))
        row_shapes.append(tuple(to_expr(s) for s in r.shape))
    return row_shapes


def _given_back(t, slots, made, results, stacked, count, frame) -> list:
    """What each carried name holds after the loop."""
    proxies = made.get("proxies", {})
    out = made["out"]
    back, it_res, it_rows = [], iter(results), iter(stacked)
    for j, (k, v) in enumerate(slots):
        if k == "array":
            res = next(it_res)
            p = proxies.get(j)
            if p is not None and out[j] is p[0] and type(v) is TracedArray:
                t.rebind(v, res)        # written in place (y[:, t] = h): the same array
                back.append(v)
            else:
                back.append(res)
        elif k == "list":
            back.append(_appended(t, [next(it_rows) for _ in range(made["per_list"][j])],
                                  count, v, frame))
        else:
            back.append(v)
    return back


def _appended(t, stacked: list, count, before, frame):
    """The list after the loop: its rows (``k`` appends per iteration interleave)."""
    if not stacked:
        return before
    if len(stacked) == 1:
        rows = stacked[0]
    else:
        both = np.stack(stacked, axis=1)
        rows = both.reshape((count * len(stacked),) + tuple(stacked[0].shape[1:]))
    if type(before) is LoopList or list.__len__(before):
        rows = np.concatenate([_prefix(t, before, rows, frame), rows])
    return LoopList(rows, where(frame))


def _prefix(t, before, rows, frame):
    """The items a list held before the loop appended to it, stacked like its rows."""
    if type(before) is LoopList:
        head = before.stacked
    else:
        items = [x if type(x) is TracedArray else t.operand(np.asarray(x)) for x in before]
        if any(type(x) is not TracedArray for x in items):
            raise UserError("a list a loop over a dynamic count appends to held values that "
                            "are not arrays before the loop%s" % where(frame))
        head = np.stack(items)
    if head.ndim != rows.ndim or head.shape[1:] != rows.shape[1:] and any(
            _differs(t.env, a, b, None) for a, b in zip(head.shape[1:], rows.shape[1:])):
        raise UserError("a loop over a dynamic count appends values of shape %s to a list "
                        "that held %s before it%s" % (_annot(rows[0]), _annot(head[0]),
                                                       where(frame)))
    return head.astype(np.result_type(head.dtype, rows.dtype))


def _mentions_index(s) -> bool:
    return any(x.unbacked for x in to_expr(s).free_symbols)


def _same_shape(env, a, b) -> bool:
    return a.ndim == b.ndim and not any(_differs(env, x, y, None)
                                        for x, y in zip(a.shape, b.shape))


def _writes_in_place(sub, n_carried: int) -> None:
    """``y[t] = h`` on a carried array that nothing else in the body reads, whose result is
    only the carried value out: the write goes into the array itself (the loop copies its
    carried arrays once, before the first iteration, so it owns them), not into a copy of
    it per iteration (which makes filling a T-row array O(T^2))."""
    carried = sub.inputs[1:1 + n_carried]
    users: dict = {}
    for n in sub.graph.nodes:
        for x in n.input_nodes():
            users.setdefault(x, []).append(n)
    outs = list(sub.graph.outputs)
    for pos, p in enumerate(carried):
        u = users.get(p, [])
        if len(u) != 1 or u[0].op != "setitem" or u[0].inputs[0] is not p or p in outs:
            continue
        w = u[0]
        if users.get(w) or outs.count(w) != 1 or outs.index(w) != pos:
            continue
        w.op = "setitem_owned"


def _simplified(env, count: SymInt) -> SymInt:
    e = env.simplify(count.expr)
    return e if type(e) is int else SymInt(e, env.hint_of(e), env)


def _differs(env, a, b, sym) -> bool:
    ea, eb = to_expr(a), to_expr(b)
    if ea == eb:
        return False
    return env.decide(R.eq(ea, eb)) is not True


# the names the rewritten code calls, bound in ``builtins`` while a trace runs
def while_end(i0, end, k: int):
    """``i`` after ``while i < end: ...; i += k`` (converted to a for statement): the first
    value from ``i0`` on, in steps of ``k``, that is not below ``end``."""
    if type(i0) is not SymInt and type(end) is not SymInt:
        return i0 + max(0, -(-(end - i0) // k)) * k
    env = (i0 if type(i0) is SymInt else end).env
    trips = E.smax(E.floordiv(E.add(E.sub(to_expr(end), to_expr(i0)), k - 1), k), 0)
    e = env.simplify(E.add(to_expr(i0), E.scale(trips, k)))
    return e if type(e) is int else SymInt(e, env.hint_of(e), env)


LOOP_BUILTINS = {LOOP_HELPER: loop_helper, UNDEF_NAME: UNDEF, CALL_NAME: iter_call,
                 WHILE_END: while_end}
