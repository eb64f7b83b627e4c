"""Straight-line guard code for a program's Python state (as Dynamo's guard manager).

``fast_check(program)`` generates and compiles one function ``check(args) -> arrays or
None``: every access path is read once (a shared prefix such as ``self.layers[3]`` is
read once for all the guards below it), each guard is one ``if`` on a local variable, and
the state arrays are read, type-, shape- and dtype-checked and returned in the graph's
order.  Any failure, or a path that no longer resolves, returns None; only then does the
caller walk the guards one by one for the reason in the user's terms
(``StateProgram.failed``), so the passing call pays for nothing else.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List

import numpy as np

from symshape.capture.state.access import AccessPath, Root
from symshape.capture.state.guardkinds import failure_code


class _Writer:
    def __init__(self, program) -> None:
        self.program = program
        self.ns: Dict[str, Any] = {"_nd": np.ndarray}
        self.lines: List[str] = []
        self.vars: Dict[tuple, str] = {}         # (root, steps prefix) -> variable

    def const(self, v) -> str:
        name = "_k%d" % len(self.ns)
        self.ns[name] = v
        return name

    def root(self, r: Root) -> str:
        key = (r, ())
        got = self.vars.get(key)
        if got is not None:
            return got
        sp = self.program
        if r.kind == "arg":
            expr = "_args[%d]" % sp.arg_roots.index(r.name)
        elif r.kind == "global":
            expr = "%s[%r]" % (self.const(sp.scope.holder(r)), r.name)
        elif r.kind == "cell":
            expr = "%s.cell_contents" % self.const(sp.scope.holder(r))
        else:
            expr = self.const(sp.scope.root(r))
        return self._bind(key, expr)

    def _bind(self, key, expr: str) -> str:
        name = "_p%d" % len(self.vars)
        self.vars[key] = name
        self.lines.append("%s = %s" % (name, expr))
        return name

    def path(self, p: AccessPath) -> str:
        var = self.root(p.root)
        for i, s in enumerate(p.steps):
            key = (p.root, p.steps[:i + 1])
            got = self.vars.get(key)
            if got is None:
                if s.kind == "attr":
                    expr = "%s.%s" % (var, s.key) if s.key.isidentifier() else \
                        "getattr(%s, %r)" % (var, s.key)
                elif s.kind == "call":          # a weakref.ref (dead: None, which fails)
                    expr = "%s()" % var
                else:
                    k = s.key
                    expr = "%s[%s]" % (var, repr(k) if isinstance(k, (int, str)) else
                                       self.const(k))
                got = self._bind(key, expr)
            var = got
        return var

    def guard(self, g) -> None:
        test = failure_code(g.kind, self.path(g.path), g.value, self)
        self.lines.append("if %s: return None" % test)

    def array(self, p: AccessPath, shape, dtype) -> str:
        v = self.path(p)
        self.lines.append("if type(%s) is not _nd or %s.shape != %r or %s.dtype != %s: "
                          "return None" % (v, v, tuple(shape), v, self.const(dtype)))
        return v


def fast_check(program) -> Callable[[tuple], Any]:
    """The compiled straight-line check of ``program``: ``check(args)`` returns the tuple
    of state arrays when every guard holds, else None."""
    w = _Writer(program)
    for g in program.guards:
        w.guard(g)
    arrays = [w.array(p, shape, dt) for p, shape, dt in program.arrays]
    body = w.lines + ["return (%s%s)" % (", ".join(arrays), "," if len(arrays) == 1 else "")]
    src = "def _check(_args):\n    try:\n%s\n    except (AttributeError, KeyError, " \
        "IndexError, TypeError, ValueError):\n        return None\n" % "\n".join(
            "        " + x for x in body)
    ns = dict(w.ns)
    exec(compile(src, "<symshape state guards>", "exec"), ns)
    fn = ns["_check"]
    fn.source = src
    return fn
