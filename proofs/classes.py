"""What a proof quantifies over: the class each proof declares (``@proves(rule, over=...)``).

* ``every(domain)``: every input of the rule's domain -- operands as Z3 integers, symbolic
  range ends run along every path of the code, a Z3 ``forall``, or a finite domain
  exhausted (every operator, every kind).  Such a proof may enumerate code alternatives
  but never sample values: ``tests/proofs/test_proof_classes.py`` reads its source (and
  the helpers it calls) and fails on a loop over literal numbers or built expressions, a
  ``range`` of constants, a product / combination sweep, a stepped slice or a call to a
  ``*sample*`` / ``*grid*`` helper.
* ``bounded(bound)``: every input up to the stated bound (every rank up to 4, every arity
  up to 8, every expression of the grammar up to depth 2), sizes symbolic.
* ``samples(which)``: the code's output on chosen inputs (each proven for every value of
  its symbols, but the inputs themselves are picked).
"""
from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import textwrap
from typing import Callable, List, NamedTuple, Set

EVERY = "every input"
BOUNDED = "bounded"
SAMPLES = "samples"
KINDS = (EVERY, BOUNDED, SAMPLES)


class Over(NamedTuple):
    kind: str      # one of KINDS
    what: str      # the domain, the bound, or the samples, in words


def every(domain: str) -> Over:
    """The proof covers every input of ``domain`` (the rule's whole domain)."""
    return Over(EVERY, domain)


def bounded(bound: str) -> Over:
    """The proof covers every input up to ``bound`` (stated as the proof enforces it)."""
    return Over(BOUNDED, bound)


def samples(which: str) -> Over:
    """The proof covers the chosen inputs ``which`` only."""
    return Over(SAMPLES, which)


# ---------------------------------------------------------------------------- the check
#: calls that sweep a product of value lists (a bound or a sample, never "every input")
_SWEEPS = ("product", "combinations", "combinations_with_replacement", "permutations")
_SAMPLE_NAME = re.compile(r"sample|grid", re.I)


def sample_enumerations(fn: Callable) -> List[str]:
    """Where the proof ``fn``, or a helper of ``proofs/`` (or of ``fn``'s own module) it
    calls by name (transitively), enumerates samples: a loop over a literal list holding numbers or built expressions, a
    ``range`` of constants, a module-level list of values, an ``itertools`` sweep, a
    stepped slice (``conditions()[::2]``) or a call to a ``*sample*`` / ``*grid*``
    function.  Empty for a proof that may be declared "every input"."""
    out: List[str] = []
    seen: Set[Callable] = set()
    todo = [inspect.unwrap(fn)]
    home = todo[0].__module__
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        lines, first = inspect.getsourcelines(f)
        tree = ast.parse(textwrap.dedent("".join(lines)))
        names = dict(vars(sys.modules[f.__module__]))
        names.update(_local_imports(tree, f.__module__))
        where = "%s.%s" % (f.__module__, f.__qualname__)
        for node in ast.walk(tree):
            why = _why_sampled(node, names)
            if why:
                line = getattr(node, "lineno", None) or node.iter.lineno   # a comprehension
                out.append("%s line %d: %s" % (where, first + line - 1, why))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                target = names.get(node.func.id)
                if inspect.isfunction(target) and (target.__module__ == home or
                                                   target.__module__.startswith("proofs.")):
                    todo.append(target)
    return out


def _local_imports(tree: ast.AST, module: str) -> dict:
    """Names a function imports inside itself (``from .op_shape_rules import x``)."""
    out = {}
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            mod = importlib.import_module("%s.%s" % (package, node.module))
            for alias in node.names:
                out[alias.asname or alias.name] = getattr(mod, alias.name, None)
    return out


def _why_sampled(node: ast.AST, names: dict) -> str:
    if isinstance(node, (ast.For, ast.comprehension)):
        return _iterates_values(node.iter, names)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) \
            and node.slice.step is not None:
        return "a stepped slice (every k-th item)"
    if isinstance(node, ast.Call):
        name = _callee(node.func)
        if name and _SAMPLE_NAME.search(name):
            return "calls %s" % name
        if name in _SWEEPS:
            return "sweeps itertools.%s" % name
    return ""


def _callee(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_value(node: ast.AST) -> bool:
    """A literal number, a built expression (arithmetic, a call) or a tuple holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call)):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return any(_is_value(e) for e in node.elts)
    return False


def _constant(node: ast.AST, names: dict) -> bool:
    """A number known before the proof runs: a literal, a module-level int (``MAX_RANK``)
    or arithmetic on those."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    if isinstance(node, ast.Name):
        return type(names.get(node.id)) is int
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand, names)
    if isinstance(node, ast.BinOp):
        return _constant(node.left, names) and _constant(node.right, names)
    return False


def _iterates_values(it: ast.AST, names: dict) -> str:
    if isinstance(it, (ast.List, ast.Tuple, ast.Set)) and any(_is_value(e) for e in it.elts):
        return "loops over a literal list of values"
    if isinstance(it, ast.Call):
        name = _callee(it.func)
        if name == "range" and all(_constant(a, names) for a in it.args):
            return "loops over a range of constants"
    if isinstance(it, ast.Name):
        v = names.get(it.id)
        if isinstance(v, range) or (isinstance(v, (list, tuple, set, frozenset)) and v
                                    and not any(callable(x) for x in v)):
            return "loops over the module-level values %s" % it.id
    return ""
