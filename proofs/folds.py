"""Reading from the code that an n-ary function is a left fold of a two-argument step.

A proof of an n-ary rule for *every* arity is an induction on the fold: the step is proven
on an arbitrary (symbolic) accumulator and argument, and this module checks the other half,
that the engine's n-ary function *is* that fold.  ``fold_step(fn)`` reads ``fn``'s source:
its whole body (after an optional docstring) must be ``return reduce(STEP, ARGS)`` (or
``functools.reduce(STEP, ARGS)``), the standard library's ``functools.reduce``, whose
definition is the left fold (``reduce(f, [a0]) == a0`` and ``reduce(f, xs + [x]) ==
f(reduce(f, xs), x)``); ``ARGS`` the function's only parameter and ``STEP`` a name the
function's module binds.  It returns that step, so the proof proves the very function the
fold calls; any other body (a loop over ``args[:4]``, a slice, a second statement) is
refused.
"""
from __future__ import annotations

import ast
import functools
import inspect
from typing import Callable, Optional, Tuple

from .pyint import require
from .reads import body_and_params, source_tree


def _resolve(node: ast.expr, scope: dict) -> object:
    """What the name ``reduce`` or the attribute ``functools.reduce`` is bound to in
    ``scope`` (a module's globals); None for any other expression."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return getattr(scope.get(node.value.id), node.attr, None)
    return None


def fold_step(fn: Callable) -> Callable:
    """The two-argument step of which ``fn`` is exactly ``functools.reduce`` (a ProofFailure
    when ``fn``'s body is anything else)."""
    return _fold(fn, start=False)[0]


def fold_from(fn: Callable) -> Tuple[Callable, int]:
    """(step, start) of which ``fn`` is exactly ``functools.reduce(STEP, ARGS, START)``,
    ``START`` an int literal (a ProofFailure otherwise)."""
    return _fold(fn, start=True)


def _fold(fn: Callable, start: bool) -> Tuple[Callable, Optional[int]]:
    fn = inspect.unwrap(fn)
    node = source_tree(fn)
    body, params = body_and_params(node)
    require(len(params) == 1 and not node.args.vararg and not node.args.kwonlyargs
            and not node.args.kwarg and not node.args.defaults,
            "%s does not take one argument list", fn.__name__)
    ret = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    call = ret if isinstance(ret, ast.Call) else None
    arity = 3 if start else 2
    require(call is not None and not call.keywords and len(call.args) == arity
            and all(isinstance(a, ast.Name) for a in call.args[:2])
            and call.args[1].id == params[0]
            and (not start or (isinstance(call.args[2], ast.Constant)
                               and type(call.args[2].value) is int)),
            "%s is not `return reduce(step, %s%s)`: %s", fn.__name__, params and params[0],
            ", start" if start else "", "; ".join(ast.unparse(b) for b in body))
    require(not fn.__code__.co_freevars, "%s reads names of an enclosing function",
            fn.__name__)                         # so each name below is the module's
    scope = fn.__globals__
    require(_resolve(call.func, scope) is functools.reduce,
            "%s calls %s, not functools.reduce", fn.__name__, ast.unparse(call.func))
    step = scope.get(call.args[0].id)
    require(callable(step), "%s folds %s, which its module does not bind", fn.__name__,
            call.args[0].id)
    return step, (call.args[2].value if start else None)
