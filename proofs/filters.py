"""Reading from the code that a function filters a list one item at a time.

A proof of a rule over *every* list is an induction on the list: the step is proven on one
arbitrary item, and this module checks the other half, that the engine's function *is*
that filter.  ``filter_pred(fn, attr, setter)`` reads ``fn``'s source: its whole body (after
an optional docstring) must be

    KEEP = [X for X in ENV.<attr> if not PRED(ENV, X)]
    if len(KEEP) != len(ENV.<attr>):
        ENV.<setter>(KEEP)

``ENV`` the function's only parameter and ``PRED`` a name the function's module binds.  By
Python's list comprehension, ``KEEP`` is the items of ``ENV.<attr>``, in order, for which
``PRED`` answers false, ``PRED`` called once on each; when it dropped none, ``KEEP`` is the
list itself and nothing is set.  It returns ``PRED``, so the proof proves the very
predicate the filter calls; any other body (a slice, a second loop, a list cleared) is
refused.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable

from .pyint import require

_TEMPLATE = """
{keep} = [{x} for {x} in {env}.{attr} if not {pred}({env}, {x})]
if len({keep}) != len({env}.{attr}):
    {env}.{setter}({keep})
"""


def filter_pred(fn: Callable, attr: str, setter: str) -> Callable:
    """The predicate of which ``fn`` is exactly the filter of ``ENV.<attr>`` handed to
    ``ENV.<setter>`` (a ProofFailure when ``fn``'s body is anything else)."""
    fn = inspect.unwrap(fn)
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    require(len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef),
            "%s is no plain function", fn.__name__)
    node = tree.body[0]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]                          # the docstring
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    require(len(params) == 1 and not node.args.vararg and not node.args.kwonlyargs
            and not node.args.kwarg and not node.args.defaults,
            "%s does not take one environment", fn.__name__)
    # the names the body uses where the template has its placeholders
    first = body[0] if body else None
    comp = first.value if isinstance(first, ast.Assign) else None
    require(isinstance(comp, ast.ListComp) and len(first.targets) == 1
            and isinstance(first.targets[0], ast.Name) and len(comp.generators) == 1
            and isinstance(comp.elt, ast.Name) and len(comp.generators[0].ifs) == 1,
            "%s does not start with a filter of a list: %s", fn.__name__,
            "; ".join(ast.unparse(b) for b in body))
    test = comp.generators[0].ifs[0]
    call = test.operand if isinstance(test, ast.UnaryOp) else None
    require(isinstance(call, ast.Call) and isinstance(call.func, ast.Name),
            "%s filters by %s, not by a predicate's no", fn.__name__, ast.unparse(test))
    names = dict(keep=first.targets[0].id, x=comp.elt.id, env=params[0], attr=attr,
                 pred=call.func.id, setter=setter)
    want = ast.parse(_TEMPLATE.format(**names)).body
    require(ast.dump(ast.Module(body=body, type_ignores=[])) ==
            ast.dump(ast.Module(body=want, type_ignores=[])),
            "%s is not the filter of %s.%s by %s handed to %s: %s", fn.__name__,
            params[0], attr, names["pred"], setter, "; ".join(ast.unparse(b) for b in body))
    require(not fn.__code__.co_freevars, "%s reads names of an enclosing function",
            fn.__name__)                         # so the predicate is the module's
    pred = fn.__globals__.get(names["pred"])
    require(inspect.isfunction(pred), "%s filters by %s, which its module does not bind "
            "to a function", fn.__name__, names["pred"])
    return pred


def read_form(fn: Callable, template: str) -> dict:
    """``fn`` read against ``template`` (the source of a function): their bodies (after an
    optional docstring) and parameters must be the same syntax tree, except that each name
    of the template written in capitals (``STEP``) stands for one name of ``fn``'s, the
    same wherever it occurs.  Returns what each such name is bound to in ``fn``'s module (a
    ProofFailure when ``fn`` is anything else)."""
    fn = inspect.unwrap(fn)
    got = _definition(textwrap.dedent(inspect.getsource(fn)), fn.__name__)
    want = _definition(textwrap.dedent(template), "the template")
    names: dict = {}
    _same(got.args, want.args, names, fn.__name__)
    _same(got.body, want.body, names, fn.__name__)
    require(not fn.__code__.co_freevars, "%s reads names of an enclosing function",
            fn.__name__)                         # so each name below is the module's
    return {k: fn.__globals__.get(v) for k, v in names.items()}


def _definition(source: str, what: str) -> ast.FunctionDef:
    """The one function ``source`` defines, its docstring dropped."""
    tree = ast.parse(source)
    require(len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef),
            "%s is no plain function", what)
    node = tree.body[0]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        node.body = body[1:]
    return node


def _placeholder(name: str) -> bool:
    return name.isupper() and len(name) > 1


def _same(got, want, names: dict, fn_name: str) -> None:
    """``got`` is ``want`` up to the capital names (bound in ``names``)."""
    if isinstance(want, list):
        require(isinstance(got, list) and len(got) == len(want),
                "%s differs from its form: %s", fn_name, _text(got))
        for g, w in zip(got, want):
            _same(g, w, names, fn_name)
        return
    if isinstance(want, ast.AST):
        require(type(got) is type(want), "%s differs from its form at %s (%s wanted)",
                fn_name, _text(got), _text(want))
        if isinstance(want, ast.Name) and _placeholder(want.id):
            require(names.setdefault(want.id, got.id) == got.id,
                    "%s: %s stands for both %s and %s", fn_name, want.id,
                    names[want.id], got.id)
            return
        for field in want._fields:
            if field in ("type_comment", "returns", "annotation"):
                continue
            _same(getattr(got, field, None), getattr(want, field, None), names, fn_name)
        return
    require(got == want, "%s differs from its form: %r where %r", fn_name, got, want)


def _text(node) -> str:
    try:
        return ast.unparse(node)
    except Exception:
        return repr(node)
