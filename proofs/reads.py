"""Reading from the code how a function reads a name: every statement that mentions it is
one of a listed set of texts.

A proof run on a list of two or three items covers lists of *every* length only when the
code treats each item alike and the list as a whole: a comprehension or a loop over the
whole list, the list handed whole to a call (``f(*xs)``, ``None in xs``), extended
(``xs += ...``, ``xs.append(...)``).  A slice, an index past the items the proof built, a
filter, a ``break`` or a second pass would each break that, and each changes the text of
a statement that mentions the list.  So such a proof lists the exact statements (as
``ast.unparse`` writes them) through which the function reads the list, explains in its
docstring why each treats every item alike, and ``require_reads`` fails when the code
reads the list anywhere else -- a rewrite of those lines makes the proof be read again.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable, Iterable, Set

from .pyint import require

__all__ = ["source_tree", "body_and_params", "header", "mentions", "require_reads"]


def source_tree(fn: Callable) -> ast.FunctionDef:
    """The parsed definition of ``fn`` (unwrapped)."""
    fn = inspect.unwrap(fn)
    node = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    require(isinstance(node, ast.FunctionDef), "%s is no plain function", fn.__name__)
    return node


def body_and_params(node: ast.FunctionDef) -> tuple:
    """A definition's statements after its docstring, and its positional parameters' names."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]                          # the docstring
    return body, [a.arg for a in node.args.posonlyargs + node.args.args]


def header(node: ast.stmt) -> str:
    """A statement's text; for a loop or an ``if`` / ``while``, its header only."""
    if isinstance(node, ast.For):
        return "for %s in %s" % (ast.unparse(node.target), ast.unparse(node.iter))
    if isinstance(node, (ast.If, ast.While)):
        return "%s %s" % ("if" if isinstance(node, ast.If) else "while",
                          ast.unparse(node.test))
    return ast.unparse(node)


def mentions(node: ast.AST, name: str) -> bool:
    """Whether ``node`` mentions the variable ``name``."""
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def require_reads(tree: ast.AST, name: str, allowed: Iterable[str], who: str) -> Set[str]:
    """Require every statement of ``tree`` that mentions ``name`` (a loop's or an ``if``'s
    header only; a ``raise`` builds a message and is skipped) to be one of ``allowed``;
    the texts seen."""
    allowed = set(allowed)
    seen = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, (ast.FunctionDef, ast.Raise)):
            continue
        head = ([node.target, node.iter] if isinstance(node, ast.For) else
                [node.test] if isinstance(node, (ast.If, ast.While)) else [node])
        if any(mentions(h, name) for h in head):
            text = header(node)
            require(text in allowed, "%s reads %s in `%s`, which the proof for every "
                    "length does not cover", who, name, text)
            seen.add(text)
    return seen

