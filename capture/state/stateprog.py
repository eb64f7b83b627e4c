"""What a program does with Python state at run time: guards, state reads, replayed writes.

``StateProgram`` is built from one trace (``from_trace``: the ``Recorder`` of
capture/state/objstate.py and the ``StateBinding`` of capture/state/binding.py) and called
by generated code (``module()``, ``ep.compile()``, the JIT's variants):

* ``begin(args)`` checks every guard (a Python value the trace read: ``self.training ==
  True``, ``len(self.layers) == 2``, the keys of a dict, the type of an object, the
  identity of a callable), then reads each state array through its path and checks its
  shape and dtype; it returns the call's ``Call`` (``arrays``: the state arrays, in the
  graph's order; the objects and scalars the writes refer to, as they were when the call
  began);
* ``replay(call, values)`` performs the writes in program order with the run-time values
  (``values``: what the graph computed for them).

A loaded program has no user objects: ``store_scope`` builds a store of its own from the
paths (plain namespaces, dicts and lists), holding the saved arrays and the traced scalars,
so the same paths are read and rebound there.
"""
from __future__ import annotations

import copy
import dis
import functools
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.errors import StateGuardFailure, UserError
from symshape.algebra.expr import Expr
from symshape.sizes.symint import SymInt

from .. import STAGES

from .access import AccessPath, Root, Scope
from . import guardkinds
from .leaks import holds_traced
from .unrecorded import all_codes, is_container
from .opaque import is_opaque
from .objstate import (Effect, RecDict, RecList, RecSet, Recorder, Tracked, evaluate_expr,
                       expr_reads, SCALARS)


# --------------------------------------------------------------------------- values
@dataclass(frozen=True)
class Slot:
    """The ``index``-th value the graph computes for the writes."""
    index: int


@dataclass(frozen=True)
class StateArray:
    """The ``index``-th state array, as read when the call began (identity)."""
    index: int


@dataclass(frozen=True)
class ViewOf:
    """A view of the ``index``-th state array (``self.k = self.kv[0]``): ``chain`` of
    (``index`` / ``reshape`` / ``permute``, argument), applied at run time so the bound
    array aliases the state array as in NumPy."""
    index: int
    chain: tuple


@dataclass(frozen=True)
class AtStart:
    """The object at ``path`` when the call began (identity)."""
    path: AccessPath


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class Scalar:
    """Arithmetic over scalars read when the call began (``self.t + 1``)."""
    expr: tuple


@dataclass(frozen=True)
class New:
    """A list / tuple / dict the program created (``key``: one object per call, however
    often it is stored)."""
    kind: str
    items: tuple
    key: int


@dataclass(frozen=True)
class CopyOf:
    """A NumPy array the program created without tracing: a fresh copy per call."""
    array: Any


# --------------------------------------------------------------------------- guards
@dataclass(frozen=True)
class Guard:
    """A Python value the trace read, checked at ``path`` as its ``kind`` says (one of
    ``guardkinds.KINDS``: ``eq``, ``is``, ``type``, ``len``, ``keys``, ``has``, ``hasattr``,
    ``attrs``, ``same``, ``view``, ``fingerprint``)."""
    path: AccessPath
    kind: str
    value: Any
    frame: Any = field(default=None, compare=False)   # the user line that read it

    def failed(self, scope: Scope) -> Optional[str]:
        """None if the guard holds, else the reason in the user's terms (the kinds:
        capture/state/guardkinds.py)."""
        p = str(self.path)
        try:
            v = self.path.get(scope)
        except (AttributeError, KeyError, IndexError, TypeError):
            return "%s is gone (the program read it)" % p
        return guardkinds.failed(self.kind, p, v, self.value, lambda q: q.get(scope))

    def describe(self) -> str:
        return guardkinds.describe(self.kind, str(self.path), self.value)


# --------------------------------------------------------------------------- program
_NO_START: Dict[AccessPath, Any] = {}


class Call:
    """One call's view of state: the state arrays, the values writes refer to."""
    __slots__ = ("scope", "arrays", "at_start", "new")

    def __init__(self, scope: Scope, arrays: tuple, at_start: Dict[AccessPath, Any]) -> None:
        self.scope = scope
        self.arrays = arrays
        self.at_start = at_start
        self.new: Dict[int, Any] = {}


class StateProgram:
    """Guards, state arrays (path, shape, dtype) and writes of one program."""

    def __init__(self, arrays: List[Tuple[AccessPath, tuple, np.dtype]], guards: List[Guard],
                 effects: List[Effect], scope: Optional[Scope], arg_roots: List[str]) -> None:
        self.arrays = arrays
        self.guards = guards
        self.effects = effects
        self.scope = scope
        self.arg_roots = arg_roots
        self.slots: List[Any] = []          # graph values (Node / size Expr) the writes use
        self.nodes: List[Any] = []          # the graph's node of each state array
        # scalars read as tracked numbers and never guarded: their values when traced (a
        # loaded program's store starts from them)
        self.initial: List[Tuple[AccessPath, Any]] = []
        # (position in the returned value, spec) of each state container the function
        # returns (``return self.hist``): given back as the user's object, not a copy
        self.returns: List[Tuple[tuple, Any]] = []
        # (names of the sizes a run-time check tests, its text, how many writes precede
        # it): when it fails, those writes happen before it raises, as in eager Python
        self.check_points: List[Tuple[frozenset, str, int]] = []
        self._at_start = sorted({p for e in effects for a in e.args for p in _start_paths(a)},
                                key=str)

    @property
    def empty(self) -> bool:
        return not (self.arrays or self.guards or self.effects or self.gives_back)

    def give_back(self, returns: List[Tuple[tuple, Any]], effects=None) -> None:
        """Return the state containers at ``returns`` (position, spec) as the run-time
        objects; each call then reads their paths at its start, as it does for the writes
        (``effects``: the writes whose paths are read, by default the program's)."""
        self.returns = list(returns)
        writes = self.effects if effects is None else effects
        self._at_start = sorted({p for e in writes for a in e.args for p in _start_paths(a)} |
                                {p for _, a in self.returns for p in _start_paths(a)}, key=str)

    @property
    def gives_back(self) -> bool:
        """Does the function return state containers (the user's objects, or a loaded
        program's store's)?"""
        return bool(getattr(self, "returns", ()))

    # ------------------------------------------------------------------ run time
    def failed(self, args: tuple = ()) -> Optional[str]:
        """The first guard that fails for this call, in the user's terms (None: all hold)."""
        if self._fast_check()(args) is not None:
            return None
        return self._slow_failed(args)

    def _slow_failed(self, args: tuple) -> Optional[str]:
        got = self._first_failure(args)
        return got[1] if got is not None else None

    def _first_failure(self, args: tuple):
        """(the guard, or None for a state array; the reason) of the first check that
        fails, walked one by one; None when all hold."""
        scope = self._scope(args)
        for g in self.guards:
            why = g.failed(scope)
            if why is not None:
                return g, why
        for path, shape, dtype in self.arrays:
            why = _array_failed(path, scope, shape, dtype)
            if why is not None:
                return None, why
        return None

    def _fast_check(self):
        """The straight-line check (codegen/state_guards.py), built on first use."""
        fast = self.__dict__.get("_fast")
        if fast is None:
            # written by the code generator, a layer above capture (codegen/state_guards.py)
            fast = self._fast = STAGES["state_guards"](self)
        return fast

    def _scope(self, args: tuple) -> Scope:
        if self.scope is None:
            raise UserError("this program's state is not bound to any object")
        return self.scope.with_args(dict(zip(self.arg_roots, args))) if self.arg_roots \
            else self.scope

    def begin(self, args: tuple = ()) -> Call:
        """Check the guards, read the state arrays (checked), and what the writes need."""
        arrays = self._fast_check()(args)
        if arrays is None:
            self._raise_failed(args)
        if not self.effects and not self.gives_back:
            return Call(None, arrays, _NO_START)
        scope = self._scope(args)
        start = {}
        for p in self._at_start:
            try:
                start[p] = p.get(scope)
            except (AttributeError, KeyError, IndexError, TypeError):
                raise UserError("the program writes using %s, which is gone" % p) from None
        return Call(scope, arrays, start)

    def _raise_failed(self, args: tuple) -> None:
        got = self._first_failure(args)
        if got is None:
            raise StateGuardFailure("the program's state changed since it was exported; "
                                    "export again")
        g, why = got
        if g is None:
            raise StateGuardFailure("state %s; export again with the new array" % why)
        raise StateGuardFailure("%s: the program was exported with %s%s; export again for the "
                                "new value (an exported program specializes on the Python "
                                "values of state it reads)" % (why, g.describe(), _at(g)))

    def replay(self, call: Call, values: tuple) -> None:
        """Perform the writes in program order (``values``: the graph's slot values)."""
        self._perform(call, values, self.effects)

    def slots_before(self, count: int) -> set:
        """The slot indices the first ``count`` writes use."""
        out: set = set()

        def go(a):
            if type(a) is Slot:
                out.add(a.index)
            elif type(a) is Scalar:
                out.update(_expr_slots(a.expr))
            elif type(a) is New:
                for v in a.items:
                    go(v[1] if a.kind == "dict" else v)
            elif isinstance(a, (list, tuple)):
                for v in a:
                    go(v)
        for e in self.effects[:count]:
            for a in e.args:
                go(a)
        return out

    @staticmethod
    def _perform(call: Call, values: tuple, effects) -> None:
        scope = call.scope
        for e in effects:
            args = [_value(a, call, values) for a in e.args]
            op = e.op
            if op == "setattr":
                setattr(e.path.get(scope), args[0], args[1])
            elif op == "delattr":
                delattr(e.path.get(scope), args[0])
            elif op == "setitem":
                e.path.get(scope)[args[0]] = args[1]
            elif op == "delitem":
                del e.path.get(scope)[args[0]]
            elif op == "setroot":
                e.path.set(scope, args[0])
            elif op == "delroot":
                e.path.delete(scope) if e.path.steps else _del_root(scope, e.path.root)
            else:
                getattr(e.path.get(scope), op)(*args)

    def returned(self, call: Call, out):
        """``out`` (what the graph returns) with the state containers the function
        returned put back as the run-time objects themselves, after the writes."""
        for pos, spec in self.returns:
            out = _put_at(out, pos, _value(spec, call, ()))
        return out

    def before_failure(self, call: Call, count: int, values: Optional[tuple],
                       where: str = "") -> None:
        """A run-time check fails: perform the first ``count`` writes (those eager Python
        makes before it raises) with ``values`` (the graph's slot values computed so far);
        ``values`` None: they are not all computed there, refused rather than dropped."""
        if values is None:
            raise UserError(
                "the run-time check %s failed, and the writes to Python state the program "
                "makes before it use values computed after it in the compiled code: they "
                "cannot be made as eager Python makes them; move the check before the writes"
                % where)
        self._perform(call, values, self.effects[:count])

    def keep_only(self, live_nodes, all_live=()) -> None:
        """Forget the state arrays whose nodes the finished graph dropped (renumbering the
        writes that refer to the others); guard the state views the program uses
        (``all_live``: every node of the finished graph)."""
        live = set(live_nodes)
        nodes = set(all_live)
        self.guards = self.guards + [Guard(a, "view", (b, idx))
                                     for a, b, idx, node in getattr(self, "views", ())
                                     if node in nodes]
        self.views = []
        old = list(zip(self.nodes, self.arrays))
        index = {}
        self.nodes, self.arrays = [], []
        for i, (n, a) in enumerate(old):
            if n in live:
                index[i] = len(self.nodes)
                self.nodes.append(n)
                self.arrays.append(a)

        def renum(a):
            if isinstance(a, StateArray):
                return StateArray(index[a.index])
            if isinstance(a, ViewOf):
                return ViewOf(index[a.index], a.chain)
            if isinstance(a, New):
                items = tuple((k, renum(v)) for k, v in a.items) if a.kind == "dict" else \
                    tuple(renum(v) for v in a.items)
                return New(a.kind, items, a.key)
            return a
        self.effects = [Effect(e.op, e.path, tuple(renum(a) for a in e.args), e.frame)
                        for e in self.effects]
        self.returns = [(pos, renum(a)) for pos, a in getattr(self, "returns", ())]

    def referenced_arrays(self) -> List[int]:
        """Indices of the state arrays the writes bind (their nodes must stay)."""
        out = []

        def go(a):
            if isinstance(a, (StateArray, ViewOf)):
                out.append(a.index)
            elif isinstance(a, New):
                for v in a.items:
                    go(v[1] if a.kind == "dict" else v)
        for e in self.effects:
            for a in e.args:
                go(a)
        return out

    # ------------------------------------------------------------------ describing
    def rebinds(self) -> List[Tuple[str, Any]]:
        """(path written, value spec) of each write that binds an array."""
        out = []
        for e in self.effects:
            if e.op in ("setattr", "setitem", "setroot"):
                v = e.args[-1]
                if isinstance(v, (Slot, StateArray, CopyOf, ViewOf)):
                    out.append((e.target(), v))
        return out

    def describe(self) -> List[str]:
        """One line per guard and write, for ``print(ep)``."""
        lines = ["guard: " + g.describe() for g in self.guards]
        lines += ["write: %s" % _effect_text(e, self.slots) for e in self.effects]
        return lines


class StateCheck:
    """The JIT's guard record for a variant's Python state: every guard of ``program``
    and the shape and dtype of each state array (one test in the dispatcher; its failure
    is the first guard that fails, in the user's terms)."""

    fails = "bad_state"

    def __init__(self, program: StateProgram) -> None:
        self.program = program

    def py_test(self, r) -> Tuple[str, List[str]]:
        """(failure test, arguments of the failure call) as ``contract.render_python.PyRenderer`` asks."""
        k = r.const(self.program)
        roots = self.program.arg_roots
        args = "(%s%s)" % (", ".join(r.param(a) for a in roots), "," if len(roots) == 1 else "")
        return "%s.failed(%s) is not None" % (k, args), ["%s.failed(%s)" % (k, args)]

    def guard_text(self) -> str:
        p = self.program
        return ", ".join([g.describe() for g in p.guards] +
                         ["%s: ndarray %s %s" % (path, dt, list(shape))
                          for path, shape, dt in p.arrays])


def _effect_text(e: Effect, slots=()) -> str:
    args = ", ".join(_spec_text(a, slots) for a in e.args)
    if e.op in ("setattr", "setitem"):
        return "%s = %s" % (e.target(), _spec_text(e.args[1], slots))
    if e.op == "setroot":
        return "%s = %s" % (e.path, _spec_text(e.args[0], slots))
    if e.op in ("delattr", "delitem", "delroot"):
        return "del %s" % e.target()
    return "%s.%s(%s)" % (e.path, e.op, args)


def _spec_text(a, slots=()) -> str:
    if isinstance(a, Slot):
        v = slots[a.index] if a.index < len(slots) else None
        return getattr(v, "name", None) or (str(v) if v is not None else "<computed>")
    if isinstance(a, StateArray):
        return "<state array %d>" % a.index
    if isinstance(a, ViewOf):
        return "<view of state array %d>" % a.index
    if isinstance(a, AtStart):
        return str(a.path)
    if isinstance(a, Const):
        return repr(a.value)
    if isinstance(a, Scalar):
        return _expr_text(a.expr, slots)
    if isinstance(a, New):
        inner = ", ".join(_spec_text(x, slots) if a.kind != "dict" else
                          "%r: %s" % (x[0], _spec_text(x[1], slots)) for x in a.items)
        return {"list": "[%s]", "tuple": "(%s)", "dict": "{%s}"}[a.kind] % inner
    if isinstance(a, CopyOf):
        return "<array>"
    return repr(a)


_OP_TEXT = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
            "mod": "%", "pow": "**"}


def _expr_text(e, slots=()) -> str:
    if e[0] == "read":
        return str(e[1])
    if e[0] == "slot":
        return str(slots[e[1]]) if e[1] < len(slots) else "a size"
    if e[0] == "const":
        return repr(e[1])
    if e[0] == "neg":
        return "-(%s)" % _expr_text(e[1], slots)
    return "(%s %s %s)" % (_expr_text(e[2], slots), _OP_TEXT[e[1]], _expr_text(e[3], slots))


def _at(g: Guard) -> str:
    return " (read at %s)" % g.frame.location if g.frame is not None else ""


def _del_root(scope: Scope, root: Root) -> None:
    holder = scope.holder(root)
    if isinstance(holder, dict):
        holder.pop(root.name, None)


def _array_failed(path: AccessPath, scope: Scope, shape, dtype) -> Optional[str]:
    try:
        a = path.get(scope)
    except (AttributeError, KeyError, IndexError, TypeError):
        return "%s is gone (the program reads it)" % path
    if not isinstance(a, np.ndarray):
        return "%s is a %s, the program was exported with a NumPy array" % (
            path, type(a).__name__)
    if a.shape != shape or a.dtype != dtype:
        return "%s has shape %s and dtype %s, the program was exported with shape %s and " \
            "dtype %s" % (path, a.shape, a.dtype, shape, dtype)
    return None


def _start_paths(a) -> List[AccessPath]:
    if isinstance(a, AtStart):
        return [a.path]
    if isinstance(a, Scalar):
        return expr_reads(a.expr)
    if isinstance(a, New):
        out = []
        for x in a.items:
            out += _start_paths(x[1] if a.kind == "dict" else x)
        return out
    return []


def _value(a, call: Call, values: tuple):
    t = type(a)
    if t is Slot:
        return values[a.index]
    if t is StateArray:
        return call.arrays[a.index]
    if t is ViewOf:
        v = call.arrays[a.index]
        for kind, arg in a.chain:
            v = v[arg] if kind == "index" else v.reshape(arg) if kind == "reshape" else \
                v.transpose(arg)
        return v
    if t is AtStart:
        return call.at_start[a.path]
    if t is Const:
        return a.value
    if t is Scalar:
        return evaluate_expr(a.expr, call.at_start.__getitem__, values)
    if t is CopyOf:
        return a.array.copy()
    if t is New:
        got = call.new.get(a.key)
        if got is None:
            if a.kind == "dict":
                got = call.new[a.key] = {}
                got.update((k, _value(v, call, values)) for k, v in a.items)
            elif a.kind == "list":
                got = call.new[a.key] = []
                got.extend(_value(v, call, values) for v in a.items)
            else:
                got = call.new[a.key] = tuple(_value(v, call, values) for v in a.items)
        return got
    if isinstance(a, (list, tuple)):         # the key list of dict.update
        return type(a)(_value(x, call, values) for x in a)
    return a


def _expr_slots(e) -> List[int]:
    """The slot indices a tracked expression reads."""
    if e[0] == "slot":
        return [e[1]]
    if e[0] == "neg":
        return _expr_slots(e[1])
    if e[0] == "op":
        return _expr_slots(e[2]) + _expr_slots(e[3])
    return []


def _put_at(tree, pos: tuple, v):
    """``tree`` with the value at ``pos`` (keys and indices from the top) replaced by ``v``;
    tuples are rebuilt, lists and dicts (fresh per call) changed in place."""
    if not pos:
        return v
    k, rest = pos[0], pos[1:]
    if type(tree) is tuple:
        items = list(tree)
        items[k] = _put_at(items[k], rest, v)
        return tuple(items)
    tree[k] = _put_at(tree[k], rest, v)
    return tree


def _returned_containers(rec: Recorder, out, new_keys, pos=()) -> List[Tuple[tuple, Any]]:
    """(position, spec) of each list, dict or set of the user's state (or one the program
    stored there) in what the function returned."""
    t = type(out)
    if t in (RecList, RecDict, RecSet) and rec.path_of(out) is not None:
        return [(pos, AtStart(rec.path_of(out)))]
    if t in (list, dict) and id(out) in new_keys:
        return [(pos, new_keys[id(out)])]
    found = []
    if t is tuple or isinstance(out, tuple) and hasattr(out, "_fields") or t is list:
        for i, x in enumerate(out):
            found += _returned_containers(rec, x, new_keys, pos + (i,))
    elif t is dict:
        for k, x in out.items():
            found += _returned_containers(rec, x, new_keys, pos + (k,))
    return found


# --------------------------------------------------------------------------- building
def _state_arrays(rec: Recorder, binding, tracer):
    """``(arrays, state_index, same)``: each state array's path, shape and dtype in the
    order of ``tracer.state_nodes``; id(its proxy) -> its index; the guards that keep the
    other paths it was read at on the same array."""
    from ..tracer import TracedArray
    arrays = []
    state_index: Dict[int, int] = {}         # id(state proxy) -> index
    # the paths through which the program read each state array (one array may sit at
    # several: ``self.w`` and ``self.params[0]``); the first is where it is read at run time,
    # the others are guarded to still hold the same array
    read_at: Dict[int, List[AccessPath]] = {}
    for r in rec.reads:
        if r.kind == "value" and type(r.value) is TracedArray:
            read_at.setdefault(id(r.value), []).append(r.path)
    same = []
    for node in tracer.state_nodes:
        arr = node.meta["value"]
        proxy = tracer.state[id(arr)]
        paths = read_at.get(id(proxy)) or [binding.array_paths[id(arr)]]
        state_index[id(proxy)] = len(arrays)
        arrays.append((paths[0], arr.shape, arr.dtype))
        same += [Guard(p, "same", paths[0]) for p in paths[1:]]
    return arrays, state_index, same


def _sizes_as_slots(e, slot: Callable[[Any], int]):
    """A tracked expression with each size (``("size", SymInt)``) a slot of the program's
    run-time values (``slot(expr)``: its index)."""
    if e[0] == "size":
        return ("slot", slot(e[1].expr))
    if e[0] == "neg":
        return ("neg", _sizes_as_slots(e[1], slot))
    if e[0] == "op":
        return ("op", e[1], _sizes_as_slots(e[2], slot), _sizes_as_slots(e[3], slot))
    return e


def _function_const(v, e: Effect) -> Const:
    """A function (or another callable) the program stores in state, replayed as that
    object; refused when it holds a value the program computed (a closure over a traced
    array)."""
    inner = holds_traced(v)
    if inner is not None:
        at = "" if e.frame is None else " at %s" % e.frame.location
        raise UserError(
            "the program stores at %s%s a function that holds a value it computed (%s%s): "
            "an exported program cannot rebuild that function on each call, and the stored "
            "one would hold a traced value; store the arrays themselves (self.saved = y) "
            "and compute with them in a method" % (e.target(), at, e.target(), inner))
    return Const(v)


def from_trace(rec: Recorder, binding, tracer, global_reads=(), views=(),
               returned=None) -> StateProgram:
    """The StateProgram of one trace (call after the function returned, before
    ``restore``): state arrays in the order of ``tracer.state_nodes``, the guards of what
    was read, the writes with their values made replayable."""
    from ..tracer import TracedArray
    arrays, state_index, same = _state_arrays(rec, binding, tracer)
    prog = StateProgram(arrays, [], [], None, [])
    prog.nodes = list(tracer.state_nodes)
    prog.slots = []
    slot_of: Dict[Any, int] = {}
    new_keys: Dict[int, New] = {}

    def slot(expr) -> int:
        if expr not in slot_of:
            slot_of[expr] = len(prog.slots)
            prog.slots.append(expr)
        return slot_of[expr]

    def spec(v, e: Effect):
        t = type(v)
        if t is TracedArray:
            k = state_index.get(id(v))
            if k is not None:
                return StateArray(k)
            view = _view_of(v, state_index)
            if view is not None:
                return view
            node = v.node
            if node not in slot_of:
                slot_of[node] = len(prog.slots)
                prog.slots.append(node)
            return Slot(slot_of[node])
        if t is Tracked:
            return Scalar(_sizes_as_slots(v.expr, slot))
        if t in SCALARS or isinstance(v, (np.generic, np.dtype, type, types.ModuleType,
                                           types.BuiltinFunctionType)):
            return Const(v)
        if isinstance(v, types.FunctionType) or callable(v) and rec.path_of(v) is None:
            return _function_const(v, e)
        if isinstance(v, (SymInt, Expr)):     # a size: its run-time value
            return Slot(slot(v.expr if isinstance(v, SymInt) else v))
        path = rec.path_of(v)
        if path is not None:
            return AtStart(path)
        if t in (list, tuple, dict):
            got = new_keys.get(id(v))
            if got is None:
                items = tuple((k, spec(x, e)) for k, x in v.items()) if t is dict else \
                    tuple(spec(x, e) for x in v)
                got = new_keys[id(v)] = New(t.__name__, items, len(new_keys))
            return got
        if isinstance(v, np.ndarray):
            return CopyOf(v.copy())
        rec_where = "" if e.frame is None else " at %s" % e.frame.location
        raise UserError("the program stores a new %s object at %s%s: an exported program "
                        "cannot create Python objects of your classes on each call; keep the "
                        "object outside the program (create it once, write arrays into it)"
                        % (type(v).__name__, e.target(), rec_where))

    # state that is an argument's object: arguments are roots of their own
    def key(k):
        """A key as the run time uses it: a size the program hashed (and so pinned) is
        its int."""
        if isinstance(k, SymInt):
            return int(k)
        if type(k) is tuple:
            return tuple(key(x) for x in k)
        return k

    effects = []
    for e in rec.effects:
        if e.op in ("setitem", "delitem", "pop", "setdefault") and e.args:
            e = Effect(e.op, e.path, (key(e.args[0]),) + tuple(e.args[1:]), e.frame)
        elif e.op == "update" and e.args and isinstance(e.args[0], dict):
            e = Effect(e.op, e.path, ({key(k): v for k, v in e.args[0].items()},), e.frame)
        effects.append(Effect(e.op, e.path, _effect_args(e, spec, len(effects)), e.frame))
    barriers = {k for _, _, k in rec.check_points}
    kept = _coalesce(effects, barriers)
    prog.effects = [effects[i] for i in kept]
    # each run-time check: the writes before it (kept ones), replayed when it fails
    prog.check_points = [(frozenset(s.name for s in size.free_symbols), text,
                          sum(1 for i in kept if i < k))
                         for size, text, k in rec.check_points if k]
    prog.give_back(_returned_containers(rec, returned, {k: v for k, v in new_keys.items()
                                                        if v.kind != "tuple"}), effects)
    prog.guards = _guards(rec, global_reads, binding.stood_in) + same + \
        [Guard(p, "same", first) for p, first in rec.aliases] + \
        _fingerprint_guards(binding.fingerprinted, rec.unrecorded.codes)
    prog.views = list(views)
    prog.initial = [(p, v) for text, (p, v) in sorted(rec.tracked_reads.items())
                    if text not in rec.tracked_guarded]
    prog.scope = Scope(binding.roots, binding.holders)
    prog.arg_roots = sorted(r.name for r in binding.roots if r.kind == "arg")
    return prog


_SETS = ("setattr", "setitem", "setroot")


def _effect_args(e: Effect, spec: Callable, n: int) -> tuple:
    """The arguments of the ``n``-th write ``e`` as replayable specs (``spec(value, e)``)."""
    if e.op in _SETS:
        return e.args[:-1] + (spec(e.args[-1], e),)
    if e.op in ("append", "add", "discard", "remove"):
        return (spec(e.args[0], e),)
    if e.op == "extend":
        return (New("list", tuple(spec(x, e) for x in e.args[0]), -1 - n),)
    if e.op == "insert":
        return (e.args[0], spec(e.args[1], e))
    if e.op == "update" and isinstance(e.args[0], dict):
        return (New("dict", tuple((k, spec(x, e)) for k, x in e.args[0].items()), -1 - n),)
    if e.op == "update":                  # set.update(...): the items, as a list
        return tuple(New("list", tuple(spec(x, e) for x in a), -1 - 100 * n - i)
                     for i, a in enumerate(e.args))
    return tuple(e.args)


def _static(x) -> bool:
    if x is None or x is Ellipsis or type(x) is int:
        return True
    if type(x) is slice:
        return all(_static(p) for p in (x.start, x.stop, x.step))
    if type(x) is tuple:
        return all(_static(p) for p in x)
    return False


def _view_of(v, state_index) -> Optional[ViewOf]:
    """``v`` as a view of a state array, when it is one with a static derivation."""
    chain = []
    a = v
    while a.view is not None:
        if not _static(a.view.arg):
            return None
        chain.append((a.view.kind, a.view.arg))
        a = a.view.parent
    k = state_index.get(id(a))
    if k is None or not chain:
        return None
    return ViewOf(k, tuple(reversed(chain)))


def _coalesce(effects: List[Effect], barriers=frozenset()) -> List[int]:
    """The indices of the writes to keep: drop a rebind that a later rebind of the same
    path overwrites before anything reaches through that path (``self.x = F @ self.x;
    ...; self.x = self.x + K @ y``): the end state is the same, and the intermediate value
    need not live to the end.  ``barriers``: a run-time check sits before the write of
    each index (the writes before it must all be there when it fails)."""
    out = []
    for i, e in enumerate(effects):
        if e.op in _SETS:
            t = e.target()
            later = None
            for j in range(i + 1, len(effects)):
                f = effects[j]
                if j in barriers:
                    break
                if f.op in _SETS and f.target() == t:
                    later = f
                    break
                ft = str(f.path)
                if ft == t or ft.startswith(t + ".") or ft.startswith(t + "[") or \
                        f.op not in _SETS and f.target() == t:
                    break
            if later is not None:
                continue
        out.append(i)
    return out


def _guards(rec: Recorder, global_reads, stood_in=None) -> List[Guard]:
    """The guards of what one trace read (``stood_in``: the tracer's stand-ins, by id, for
    the objects they replace)."""
    from ..tracer import TracedArray
    out: Dict[Tuple[str, str, Any], Guard] = {}

    def add(g: Optional[Guard]):
        if g is not None:
            key = (str(g.path), g.kind, g.value[0] if g.kind == "has" else None)
            out.setdefault(key, g)

    for r in rec.reads:
        v = r.value
        if r.kind in ("len", "keys", "has", "hasattr", "attrs"):
            add(Guard(r.path, r.kind, v, r.frame))
        elif r.kind == "items":               # a set iterated: its items, by value
            add(Guard(r.path, "eq", v, r.frame))
        elif stood_in and id(v) in stood_in:
            add(Guard(r.path, "is", stood_in[id(v)], r.frame))   # a random generator
        elif not (type(v) is TracedArray or isinstance(v, np.ndarray) or
                  (type(v).__module__ or "").startswith("symshape.") or
                  r.path.root.kind == "arg" and all(s.kind == "item" for s in r.path.steps)):
            # (not arrays, sizes or the tracer's own stand-ins; an input leaf: the input
            # check compares it)
            add(_value_guard(r.path, v, r.frame, rec))
    for text in sorted(rec.tracked_guarded):
        got = rec.tracked_reads.get(text)
        if got is not None:
            add(Guard(got[0], "eq", got[1]))
    for path, v in global_reads:
        if str(path) in rec.tracked and str(path) not in rec.tracked_guarded:
            continue
        if type(v) in SCALARS or isinstance(v, (np.generic, np.dtype)):
            add(Guard(path, "eq", v))
        elif is_opaque(v) and not isinstance(v, (TracedArray, np.ndarray)):
            add(Guard(path, "is", v))       # an Enum member, a C extension object
    return list(out.values())


def _value_guard(path: AccessPath, v, at, rec: Recorder) -> Guard:
    """The guard on a value the program read: by value (scalars, strings, tuples of them,
    a library container of them), by identity (code, modules, classes, opaque objects),
    else by type."""
    if type(v) in SCALARS or isinstance(v, (np.generic, np.dtype)) or type(v) is set \
            or guardkinds.is_plain(v):
        return Guard(path, "eq", v, at)          # tuples and named tuples of scalars too
    if is_container(v) and _plain_items(v):
        # an OrderedDict / deque / Counter of scalars: its items, as they were
        return Guard(path, "eq", copy.copy(v), at)
    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                      type, types.ModuleType)) or callable(v) and \
            rec.path_of(v) is None or is_opaque(v):
        return Guard(path, "is", v, at)
    if type(v) in (RecList, RecDict, RecSet):
        return Guard(path, "type", {RecList: list, RecDict: dict, RecSet: set}[type(v)], at)
    return Guard(path, "type", getattr(v, "__class__", type(v)), at)


_CONSTRUCTORS = ("__init__", "__new__", "__post_init__")


@functools.lru_cache(maxsize=4096)
def _attribute_names(code) -> Tuple[frozenset, frozenset]:
    """The attribute names ``code`` loads and those it stores or deletes."""
    loads, stores = set(), set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            loads.add(ins.argval)
        elif ins.opname in ("STORE_ATTR", "DELETE_ATTR"):
            stores.add(ins.argval)
    return frozenset(loads), frozenset(stores)


def _fingerprint_guards(objects, codes) -> List[Guard]:
    """The conservative guard: for each class and module the trace reached, the plain
    values of the attributes its code loads (``Model.lr``, ``config.SCALE``, ``type(self)
    .n``), reads the recorder cannot see.  A name the code also stores is left out: a
    counter written eagerly between compiled segments would fail it on every call."""
    loads, stores = set(), set()
    for c in all_codes(codes):
        a, b = _attribute_names(c)
        loads |= a
        if c.co_name not in _CONSTRUCTORS:      # a constructor sets what others read
            stores |= b
    names = sorted(loads - stores)
    out = []
    for path, obj in objects:
        mine = tuple(n for n in names if not n.startswith("__") and
                     guardkinds.is_plain(getattr(obj, n, None)) and hasattr(obj, n))
        if mine:
            out.append(Guard(path, "fingerprint", (mine, guardkinds.fingerprint(obj, mine))))
    return out


def _plain_items(v) -> bool:
    items = list(v.items()) if isinstance(v, dict) else list(v)
    return len(items) <= 256 and all(guardkinds.is_plain(x) for x in items)


def scalar_writes(rec: Recorder, global_reads=()) -> frozenset:
    """Paths of Python numbers the trace both read and wrote (``self.t += 1``): a second
    trace reads them as ``Tracked`` numbers, so the writes replay the arithmetic."""
    read = {str(r.path) for r in rec.reads if r.kind == "value" and
            type(r.value) in (int, float, complex)}
    read |= {str(p) for p, v in global_reads if type(v) in (int, float, complex)}
    written = set()
    numbers = (int, float, complex, SymInt)        # a size too: self.count += n
    for e in rec.effects:
        if e.op in ("setattr", "setitem") and type(e.args[-1]) in numbers:
            written.add(e.target())
        elif e.op == "setroot" and type(e.args[0]) in numbers:
            written.add(str(e.path))
    return frozenset(read & written)


def state_guards(ep) -> List[StateCheck]:
    """The JIT's guard records for the Python state of ``ep`` (none when it uses none)."""
    sp = getattr(ep, "state_program", None)
    return [StateCheck(sp)] if sp is not None and (sp.guards or sp.arrays) else []


def refuse_writes(ep, backend: str) -> None:
    """A backend that cannot replay writes to Python state (``dask``, ``cupy``: their
    arrays are not what eager code binds) refuses a program that makes any, naming the
    first, rather than dropping it."""
    sp = getattr(ep, "state_program", None)
    if sp is None or not sp.effects:
        return
    e = sp.effects[0]
    at = " at %s" % e.frame.location if e.frame is not None else ""
    raise UserError("backend=%r cannot replay the program's writes to Python state (%s%s); "
                    "use backend='numpy' or ep.module(), or keep the write out of the "
                    "exported function" % (backend, _effect_text(e, sp.slots), at))


def append_only_arguments(ep) -> List[str]:
    """The list arguments of ``ep`` that the program only appends to (``history``): no
    read of their length or items, no state array in them.  The JIT traces such an
    argument as ``AppendOnly``, so a growing list compiles once."""
    sp = getattr(ep, "state_program", None)
    if sp is None:
        return []
    out = []
    for name in sp.arg_roots:
        root = Root("arg", name)
        effects = [e for e in sp.effects if e.path.root == root]
        if effects and all(e.op in ("append", "extend") and not e.path.steps
                           for e in effects) and \
                not any(g.path.root == root for g in sp.guards) and \
                not any(p.root == root for p, _, _ in sp.arrays):
            out.append(name)
    return out
