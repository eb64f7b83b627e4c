"""``symshape check --fix`` for exports whose spec is read from shape annotations.

The fixes are written into the annotation strings of the function's source: a wrong return
annotation is replaced by the one that holds, a relation or a static size replaces the name of
a parameter axis (``m`` -> ``n``).  A bound has no spelling in an annotation; it is reported as
not applied, saying why.
"""
from __future__ import annotations

import ast
import inspect
import typing
from typing import List, Optional, Sequence

from .annotation_returns import ReturnAnnotationFix
from .annotations import AnnotatedShapes, call_target, spec_for
from .constraints import Fix
from .dims import Dim
from .errors import UserError


def fix_annotations(plan, decl, fixes: Sequence[Fix]) -> bool:
    """``symshape check --fix`` for an export whose spec is read from annotations: rewrite
    the annotation strings in the function's source (a wrong return annotation; a relation
    or a static size on a parameter's axis).  A bound has no spelling in an annotation: it is
    reported as not applied, saying so.  Returns False when the spec is not from annotations
    (the ordinary fixer handles it)."""
    if getattr(decl, "dynamic_shapes", None) is not None or getattr(decl, "fn", None) is None:
        return False
    try:
        spec = spec_for(decl.fn, None)
    except UserError:
        return False
    if not isinstance(spec, AnnotatedShapes):
        return False
    from .constraints import DefineDim, SetDim
    try:
        patch, strings = _annotation_strings(plan, decl.fn)
    except (OSError, TypeError, SyntaxError, ValueError) as e:
        for fix in fixes:
            plan.skipped.append((decl.name, str(fix), "cannot read the source of %s: %s"
                                 % (spec.function, e)))
        return True
    defined = {f.dim.name for f in fixes if isinstance(f, DefineDim)}
    for fix in fixes:
        if isinstance(fix, DefineDim):
            continue
        if isinstance(fix, ReturnAnnotationFix):
            reason = _rewrite_returns(patch, strings, spec, fix)
        elif isinstance(fix, SetDim) and (fix.ref is not None or type(fix.value) is int) \
                and fix.ref not in defined:
            from .dims import format_linear
            new = str(fix.value) if fix.ref is None else \
                format_linear(fix.ref, fix.coeff, fix.offset).replace(" ", "")
            reason = _rename_axis(patch, strings, fix.name, new)
        elif isinstance(fix, SetDim) and isinstance(fix.value, Dim):
            reason = ("a bound cannot be written in a jaxtyping annotation: pass "
                      "dims={%r: %r} to ss.from_annotations, or declare dynamic_shapes"
                      % (fix.name, fix.value))
        else:
            reason = "this fix cannot be written in a jaxtyping annotation; declare " \
                     "dynamic_shapes for this export"
        if reason:
            plan.skipped.append((decl.name, str(fix), reason))
        else:
            plan.applied.append((decl.name, str(fix)))
    return True


class _Literal(typing.NamedTuple):
    where: str          # a parameter name, or "return"
    start: int          # character offsets of the string literal in the file
    end: int
    value: str


def _annotation_strings(plan, fn):
    """The file patch of ``fn``'s source file and the string literals of its annotations."""
    target = inspect.unwrap(call_target(fn))
    target = getattr(target, "__func__", target)
    path = inspect.getsourcefile(target)
    patch = plan.patch(path)
    source = patch.old
    code = target.__code__
    tree = ast.parse(source)
    node = None
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == code.co_name \
                and (n.lineno == code.co_firstlineno or any(
                    d.lineno == code.co_firstlineno for d in n.decorator_list)):
            node = n
            break
    if node is None:
        raise ValueError("the definition of %s was not found" % code.co_name)
    starts = [0]
    for line in source.splitlines(True):
        starts.append(starts[-1] + len(line))
    lines = source.splitlines(True)

    def offset(lineno: int, col: int) -> int:
        # ast columns count UTF-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col]
                                        .decode("utf-8", "replace"))

    out: List[_Literal] = []
    a = node.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs:
        if arg.annotation is not None:
            out += _literals(arg.annotation, arg.arg, offset)
    if node.returns is not None:
        out += _literals(node.returns, "return", offset)
    return patch, out


def _literals(ann: ast.expr, where: str, offset) -> List[_Literal]:
    return [_Literal(where, offset(n.lineno, n.col_offset), offset(n.end_lineno, n.end_col_offset),
                     n.value)
            for n in ast.walk(ann) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _replace(patch, lit: _Literal, new_value: str) -> bool:
    token = patch.old[lit.start:lit.end]
    i = token.find(lit.value)
    if i < 0 or not lit.value:
        return False
    return patch.add(lit.start, lit.end, token[:i] + new_value + token[i + len(lit.value):])


def _rewrite_returns(patch, strings: List[_Literal], spec: AnnotatedShapes,
                     fix: "ReturnAnnotationFix") -> Optional[str]:
    found = [s for s in strings if s.where == "return"]
    old = [a for a in (spec.returns or ()) if a is not None]
    new = [a for a in fix.returns if a is not None]
    done = False
    for o, n in zip(old, new):
        if o.dim_str == n.dim_str:
            continue
        lit = next((s for s in found if s.value == o.dim_str), None)
        if lit is None or not _replace(patch, lit, n.dim_str):
            return "the return annotation's string %r was not found in the source" % o.dim_str
        done = True
    if any(o.kind != n.kind for o, n in zip(old, new)):
        return "the dtype kind of the return annotation must change too; edit it by hand"
    return None if done else "nothing to rewrite"


def _rename_axis(patch, strings: List[_Literal], name: str, new: str) -> Optional[str]:
    """Write ``new`` for every axis spelled exactly ``name`` in the annotation strings."""
    changed = False
    for lit in strings:
        elems = lit.value.split()
        if name not in elems:
            continue
        text = " ".join(new if e == name else e for e in elems)
        if _replace(patch, lit, text):
            changed = True
    return None if changed else "no annotation axis is spelled %r" % name
