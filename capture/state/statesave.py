"""Saving a program's Python state (capture/state/stateprog.py), and the store a loaded program
binds it in.

Saved: each state array's path (by its graph node), the guards that compare values
(``==`` on scalars, lengths, keys, key presence: identities and classes of the exporting
process mean nothing to another one), and every write in program order with its value
specs.  A loaded program has no user objects, so ``store_scope`` builds a store from the
paths: plain namespaces for attributes, dicts and lists for items, module dicts for
globals, holding the saved arrays and the traced scalars; the program reads and rebinds
state there, and ``ep.state`` shows it.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Dict

from .access import AccessPath, Root, Scope
from .objstate import Effect
from .stateprog import (AtStart, Const, Guard, New, Scalar, Slot, StateArray, StateProgram,
                        ViewOf)

#: guard kinds a saved program keeps (the others are about live objects)
SAVED_GUARDS = ("eq", "len", "keys", "has", "view", "same")


def encode(sp: StateProgram, value: Callable[[Any], Any]) -> dict:
    """``sp`` as JSON data (``value``: the serializer's encoder of scalars, nodes and
    size expressions)."""
    def spec(a):
        t = type(a)
        if t is Slot:
            return {"slot": a.index}
        if t is StateArray:
            return {"state_array": a.index}
        if t is ViewOf:
            return {"view_of": [a.index, [[k, value(x)] for k, x in a.chain]]}
        if t is AtStart:
            return {"at_start": a.path.to_json()}
        if t is Const:
            return {"const": value(a.value)}
        if t is Scalar:
            return {"scalar": expr(a.expr)}
        if t is New:
            items = [[value(k), spec(v)] for k, v in a.items] if a.kind == "dict" else \
                [spec(v) for v in a.items]
            return {"new": [a.kind, items, a.key]}
        return {"const": value(a)}      # plain arguments (an index, a key)

    def expr(e):
        if e[0] == "read":
            return ["read", e[1].to_json()]
        if e[0] == "const":
            return ["const", value(e[1])]
        if e[0] == "neg":
            return ["neg", expr(e[1])]
        if e[0] == "slot":
            return ["slot", e[1]]
        return ["op", e[1], expr(e[2]), expr(e[3])]

    return {
        "arrays": [[n.name, p.to_json()] for n, (p, _, _) in zip(sp.nodes, sp.arrays)],
        "guards": [[g.path.to_json(), g.kind,
                    [g.value[0].to_json(), value(g.value[1])] if g.kind == "view" else
                    g.value.to_json() if g.kind == "same" else
                    value(list(g.value) if g.kind in ("keys", "has") else g.value)]
                   for g in sp.guards if g.kind in SAVED_GUARDS],
        "effects": [[e.op, e.path.to_json(), [spec(a) for a in e.args]] for e in sp.effects],
        "slots": [value(v) for v in sp.slots],
        "arg_roots": list(sp.arg_roots),
        "initial": [[p.to_json(), value(x)] for p, x in sp.initial],
        # the state containers the function returns (given back as the store's own), and
        # each run-time check with the writes made before it (made when it fails)
        "returns": [[list(pos), spec(a)] for pos, a in sp.returns],
        "check_points": [[sorted(names), text, count] for names, text, count in
                         sp.check_points],
    }


def decode(v: dict, nodes: Dict[str, Any], value: Callable[[Any], Any]) -> StateProgram:
    """The StateProgram saved as ``v`` (``nodes``: the graph's nodes by name; ``value``:
    the deserializer's decoder of tagged values).  Its scope is set by ``store_scope``
    once the arrays are loaded."""
    def spec(a):
        if not isinstance(a, dict) or len(a) != 1:
            raise ValueError("a value spec is a one-key object")
        (k, b), = a.items()
        if k == "slot":
            return Slot(int(b))
        if k == "state_array":
            return StateArray(int(b))
        if k == "view_of":
            chain = tuple((str(kind), value(x)) for kind, x in b[1])
            if any(kind not in ("index", "reshape", "permute") for kind, _ in chain):
                raise ValueError("unknown view kind")
            return ViewOf(int(b[0]), chain)
        if k == "at_start":
            return AtStart(AccessPath.from_json(b))
        if k == "const":
            return Const(value(b))
        if k == "scalar":
            return Scalar(expr(b))
        if k == "new":
            kind, items, key = b
            if kind == "dict":
                return New(kind, tuple((value(x), spec(y)) for x, y in items), int(key))
            if kind not in ("list", "tuple"):
                raise ValueError("unknown container %r" % kind)
            return New(kind, tuple(spec(x) for x in items), int(key))
        raise ValueError("unknown value spec %r" % k)

    def expr(e):
        if e[0] == "read":
            return ("read", AccessPath.from_json(e[1]))
        if e[0] == "const":
            return ("const", value(e[1]))
        if e[0] == "neg":
            return ("neg", expr(e[1]))
        if e[0] == "op":
            return ("op", str(e[1]), expr(e[2]), expr(e[3]))
        if e[0] == "slot":
            return ("slot", int(e[1]))
        raise ValueError("unknown scalar expression %r" % (e[0],))

    state_nodes = []
    arrays = []
    for name, p in v["arrays"]:
        n = nodes[name]
        state_nodes.append(n)
        arrays.append((AccessPath.from_json(p), tuple(n.shape), n.dtype))
    guards = []
    for p, kind, val in v["guards"]:
        if kind not in SAVED_GUARDS:
            raise ValueError("unknown guard kind %r" % kind)
        if kind == "view":
            val = (AccessPath.from_json(val[0]), value(val[1]))
        elif kind == "same":
            val = AccessPath.from_json(val)
        else:
            val = value(val)
        guards.append(Guard(AccessPath.from_json(p), kind,
                            tuple(val) if kind in ("keys", "has") else val))
    effects = []
    for op, p, args in v["effects"]:
        a = [spec(x) for x in args]
        # plain arguments (names, keys, indices) are stored as constants
        if op in ("setattr", "delattr", "setitem", "delitem", "insert", "pop") and a and \
                type(a[0]) is Const:
            a[0] = a[0].value
        effects.append(Effect(str(op), AccessPath.from_json(p), tuple(a), None))
    sp = StateProgram(arrays, guards, effects, None, [str(x) for x in v["arg_roots"]])
    sp.nodes = state_nodes
    sp.slots = [value(x) for x in v["slots"]]
    sp.initial = [(AccessPath.from_json(p), value(x)) for p, x in v["initial"]]
    # absent from files written before they were saved: copies returned, no writes made
    # before a failing check (as those programs behaved)
    sp.give_back([(tuple(_position(k) for k in pos), spec(a))
                  for pos, a in v.get("returns", ())])
    sp.check_points = [(frozenset(str(n) for n in names), str(text), int(count))
                       for names, text, count in v.get("check_points", ())]
    return sp


def _position(k):
    """One step of a returned container's position: an index into a tuple or list, or a
    dict key (a string or an int)."""
    if type(k) not in (int, str):
        raise ValueError("a returned container's position holds %r" % (k,))
    return k


class _Held:
    """What a ``weakref.ref`` of a loaded program's store refers to (``self.parent()``):
    the store holds the object itself, so it never dies."""

    __slots__ = ("target",)

    def __init__(self, target=None) -> None:
        self.target = target

    def __call__(self):
        return self.target


def _fresh(step):
    """An empty holder for the step that reaches into it (None: no step)."""
    if step is None:
        return None
    if step.kind == "attr":
        return types.SimpleNamespace()
    if step.kind == "call":
        return _Held()
    return [] if isinstance(step.key, int) else {}


class _Store:
    """The roots of a loaded program's store and ``place``, which makes a path exist."""

    def __init__(self) -> None:
        self.roots: Dict[Root, Any] = {}
        self.holders: Dict[Root, Any] = {}

    def _root(self, path: AccessPath, leaf, overwrite: bool):
        """The object at the root of ``path`` (made when missing; ``leaf`` for a path with
        no steps)."""
        r = path.root
        bare = not path.steps
        start = leaf if bare else _fresh(path.steps[0])
        if r.kind == "global":
            d = self.holders.setdefault(r, {})
            if r.name not in d or (bare and overwrite):
                d[r.name] = start
            return d[r.name]
        if r.kind == "cell":
            cell = self.holders.get(r)
            if cell is None:
                cell = self.holders[r] = types.CellType(start)
            elif bare and overwrite:
                cell.cell_contents = leaf
            return cell.cell_contents
        if r not in self.roots or (bare and overwrite):
            self.roots[r] = start
        return self.roots[r]

    def place(self, path: AccessPath, leaf, overwrite: bool = True) -> None:
        """Make ``path`` exist, holding ``leaf`` (``overwrite`` False: keep what is there)."""
        if path.root.kind == "arg":
            return
        cur = self._root(path, leaf, overwrite)
        steps = path.steps
        for i, s in enumerate(steps):
            nxt = steps[i + 1] if i + 1 < len(steps) else None
            cur = _step(cur, s, nxt, leaf, overwrite)

    def scope(self) -> Scope:
        return Scope(self.roots, self.holders)


def _step(cur, s, nxt, leaf, overwrite: bool):
    """Through one step of a path in the store: the next holder (made when missing), or,
    at the last step (``nxt`` None), ``leaf`` placed there."""
    if s.kind == "call":
        if nxt is None:
            if overwrite or cur.target is None:
                cur.target = leaf
        elif cur.target is None:
            cur.target = _fresh(nxt)
        return cur.target
    if s.kind == "attr":
        if nxt is None:
            if overwrite or not hasattr(cur, s.key):
                setattr(cur, s.key, leaf)
            return leaf
        if not hasattr(cur, s.key) or getattr(cur, s.key) is None:
            setattr(cur, s.key, _fresh(nxt))
        return getattr(cur, s.key)
    if isinstance(cur, list):
        while len(cur) <= s.key:
            cur.append(None)
        present = True
    else:
        present = s.key in cur
    if nxt is None:
        if overwrite or not present or cur[s.key] is None:
            cur[s.key] = leaf
        return leaf
    if not present or cur[s.key] is None:
        cur[s.key] = _fresh(nxt)
    return cur[s.key]


def store_scope(sp: StateProgram) -> Scope:
    """A store of its own for a loaded program: every path it reads or writes exists,
    holding the saved arrays and the scalars it was traced with."""
    store = _Store()
    place = store.place
    roots, holders = store.roots, store.holders

    for e in sp.effects:          # what the writes reach exists, of its kind
        if e.op in ("append", "extend", "insert", "clear", "reverse") or \
                e.op == "pop" and e.args and isinstance(e.args[0], int):
            place(e.path, [], overwrite=False)
        elif e.op in ("add", "discard", "remove"):
            place(e.path, set(), overwrite=False)
        elif e.op in ("update", "setdefault") or e.op == "pop":
            place(e.path, {}, overwrite=False)
        elif e.op in ("setattr", "delattr"):
            place(e.path, types.SimpleNamespace(), overwrite=False)
        elif e.op in ("setitem", "delitem"):
            place(e.path, [] if isinstance(e.args[0], int) else {}, overwrite=False)
    for g in sp.guards:           # containers in the traced layout
        if g.kind == "len":
            try:
                cur = g.path.get(Scope(roots, holders))
            except (AttributeError, KeyError, IndexError, TypeError):
                cur = None
            if isinstance(cur, set):
                cur.update(object() for _ in range(g.value - len(cur)))
            else:
                place(g.path, [None] * g.value, overwrite=False)
        elif g.kind == "keys":
            place(g.path, dict.fromkeys(g.value), overwrite=False)
    for g in sp.guards:
        if g.kind == "eq":
            place(g.path, g.value)
        elif g.kind == "has" and not g.value[1]:
            place(g.path, {}, overwrite=False)
        elif g.kind == "has":
            place(g.path, {}, overwrite=False)
            cur = g.path.get(Scope(roots, holders))
            if isinstance(cur, set):
                cur.add(g.value[0])
            else:
                place(g.path.item(g.value[0]), None, overwrite=False)
    for p, x in sp.initial:
        place(p, x)
    for n, (p, _, _) in zip(sp.nodes, sp.arrays):
        place(p, n.meta["value"])
    scope = Scope(roots, holders)
    for g in sp.guards:           # views of other state arrays: views here too
        if g.kind == "view":
            place(g.path, g.value[0].get(scope)[g.value[1]])
        elif g.kind == "same":
            place(g.path, g.value.get(scope))
    return scope
