"""Which code paths of the rules the proofs exercise: a rule in the code without a proof.

Each rule of ``symshape/rules.py`` names the function that applies it (``where``).  While the
proofs run, ``Coverage`` records the lines those functions execute (a trace switched on only
inside them, so the proofs' own Z3 work is not slowed down); ``missed()`` lists every
``return`` of a rule function that no proof reached: a rewrite (or a way out of one) that the
code performs and no proof checks.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import sys
import textwrap
from typing import Dict, List, Set, Tuple

from symshape.rules import RULES


def resolve(where: str):
    """The function a rule's ``where`` (``module:function`` or ``module:Class.method``)
    names; ``(owner, attribute name, function)``."""
    mod, name = where.split(":")
    if mod.startswith("capture."):
        mod = "symshape." + mod
    owner = importlib.import_module(mod)
    parts = name.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    return owner, parts[-1], getattr(owner, parts[-1])


#: modules whose rule functions are traced (reached through their module or class
#: attributes); the op handlers are reached through the op registry instead: their proofs run
#: them on traced programs (``proofs/op_rules.py``)
TRACED = ("symshape.algebra.expr", "symshape.algebra.relations", "symshape.algebra.ranges", "symshape.algebra.simplify",
          "symshape.reasoning.decision", "symshape.reasoning.solver",
          "symshape.reasoning.z3bridge", "symshape.reasoning.projection")

#: returns that cannot run, named by their function and the source line just before them,
#: with the reason (kept short; each is checked to still exist)
UNREACHABLE = {
    # the loop runs over exactly one Min / Max term (checked just above it) and every way
    # through its body returns, so the return after the loop is never reached
    "symshape.algebra.ranges:_minmax_pushed": ('return vr_min(args) if kind == "Min" else '
                                       'vr_max(args)',),
}


class Coverage:
    """Records the lines the rule functions execute while active (``with Coverage() as c``)."""

    def __init__(self) -> None:
        self.targets: Dict[object, Tuple[str, object]] = {}
        self.hit: Set[Tuple[object, int]] = set()
        self._patched: List[tuple] = []
        self._sites: List[tuple] = []
        for r in RULES:
            if not r.where.startswith(TRACED):
                continue
            owner, attr, fn = resolve(r.where)
            code = getattr(inspect.unwrap(fn), "__code__", None)
            if code is None or code in self.targets:
                continue
            self.targets[code] = (r.where, inspect.unwrap(fn))
            self._sites.append((owner, attr, fn))

    def __enter__(self) -> "Coverage":
        for owner, attr, fn in self._sites:
            self._patch(owner, attr, fn)
        return self

    def __exit__(self, *exc) -> None:
        for owner, attr, fn in reversed(self._patched):
            setattr(owner, attr, fn)
        self._patched.clear()

    def _patch(self, owner, attr: str, fn) -> None:
        raw = owner.__dict__.get(attr, fn) if hasattr(owner, "__dict__") else fn
        if isinstance(raw, (staticmethod, classmethod)):
            return
        targets, hit = self.targets, self.hit

        def local(frame, event, arg):
            if event == "line":
                hit.add((frame.f_code, frame.f_lineno))
            return local

        def glob(frame, event, arg):
            return local if frame.f_code in targets else None

        def traced(*args, **kwargs):
            prev = sys.gettrace()
            sys.settrace(glob)
            try:
                return fn(*args, **kwargs)
            finally:
                sys.settrace(prev)
        traced.__wrapped__ = fn
        self._patched.append((owner, attr, fn))
        setattr(owner, attr, traced)

    @staticmethod
    def _unreachable(where: str, src: List[str], lineno: int) -> bool:
        return lineno >= 2 and src[lineno - 2].strip() in UNREACHABLE.get(where, ())

    def missed(self) -> List[str]:
        """``where:line: source`` of each ``return`` in a rule function never executed."""
        out = []
        for code, (where, fn) in self.targets.items():
            src, start = inspect.getsourcelines(fn)
            for node in ast.walk(ast.parse(textwrap.dedent("".join(src)))):
                if isinstance(node, ast.Return):
                    line = start + node.lineno - 1
                    if (code, line) not in self.hit and not self._unreachable(where, src,
                                                                              node.lineno):
                        out.append("%s:%d: %s" % (where, line, src[node.lineno - 1].strip()))
        return sorted(out)
