"""``symshape check --fix`` for exports whose spec is read from shape annotations.

The fixes are written into the annotation strings of the function's definition: a wrong
return annotation is replaced by the one that holds, a relation or a static size replaces the
name of a parameter axis (``m`` -> ``n``) wherever the annotations use it.  A bound has no
spelling in an annotation: it goes into the ``dims=`` of an export's own
``dynamic_shapes=ss.from_annotations(f, ...)``, else it is reported as not applied, saying what
to write instead.

The work is split the way ``symshape check`` runs: the child process, which imports the user's
module, describes the annotated function (``describe``: where it is defined and the annotation
strings it read); the parent, which has no function objects, finds that definition in the
file's syntax tree and plans each rewrite as exact edits of the string literals in it
(``fix_annotations``), through the same file patches as every other fix, so the edits are
verified (parse, re-check) and written atomically with the rest.
"""
from __future__ import annotations

import ast
import inspect
import os
import re
import typing
from typing import Dict, List, Optional, Sequence, Tuple

from symshape.specs.annotation_returns import ReturnAnnotationFix
from symshape.specs.annotations import AnnotatedShapes, call_target, eval_axis
from ..contract.fixes import DefineDim, Fix, SetDim, SetEntry
from symshape.specs.dims import Dim, Marker, format_linear


# --------------------------------------------------------------------------- the record
class AnnotatedSource(typing.NamedTuple):
    """What the parent needs to fix an export whose spec came from annotations: where the
    annotated function is defined (``file``, the line of its ``def`` or first decorator,
    its ``__code__`` name), and the dimension strings read from each parameter's annotation
    and from the return annotation (``(dtype kind, dim string)`` per returned array, None
    for a returned value that is not an annotated array).  ``error`` says why the source
    cannot be found (a function made by ``exec``, a builtin).  ``declared``: the export
    declares ``dynamic_shapes=ss.from_annotations(f, ...)`` itself, whose ``dims=`` can
    hold the bounds an annotation cannot."""
    function: str
    file: Optional[str]
    line: int
    name: str
    params: Dict[str, str]
    returns: Tuple[Optional[Tuple[str, str]], ...]
    error: Optional[str] = None
    declared: bool = False

    def to_json(self) -> dict:
        """A JSON-able form (for the child's report)."""
        d = self._asdict()
        d["returns"] = [list(r) if r is not None else None for r in self.returns]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "AnnotatedSource":
        """The record ``to_json`` wrote."""
        return cls(d["function"], d["file"], d["line"], d["name"], dict(d["params"]),
                   tuple(tuple(r) if r is not None else None for r in d["returns"]),
                   d.get("error"), bool(d.get("declared")))


def describe(fn, spec, declared: bool = False) -> Optional[AnnotatedSource]:
    """The ``AnnotatedSource`` of ``fn`` when ``spec`` was read from its annotations (run in
    the child, which has the function); None for any other spec.  ``declared``: the spec
    is the export's own ``dynamic_shapes=``."""
    if not isinstance(spec, AnnotatedShapes):
        return None
    params = {p: a.dim_str for p, a in spec.annotations.items()}
    returns = tuple((a.kind, a.dim_str) if a is not None else None
                    for a in (spec.returns or ()))
    try:
        target = inspect.unwrap(call_target(fn))
        target = getattr(target, "__func__", target)
        code = target.__code__
        path = inspect.getsourcefile(target)
        if path is None or not os.path.isfile(path):
            raise OSError("it was not defined in a file")
    except (AttributeError, TypeError, ValueError, OSError) as e:
        return AnnotatedSource(spec.function, None, 0, "", params, returns,
                               "the source of %s cannot be found (%s)" % (spec.function, e),
                               declared)
    return AnnotatedSource(spec.function, os.path.abspath(path), code.co_firstlineno,
                           code.co_name, params, returns, None, declared)


# --------------------------------------------------------------------------- the literals
class _Literal(typing.NamedTuple):
    """A string literal of an annotation whose text is a dimension string."""
    where: str                  # a parameter name, or "return"
    start: int                  # offsets of the string's contents (inside the quotes)
    end: int
    value: str
    kind_span: Optional[Tuple[int, int]]    # the ``Float`` of ``Float[np.ndarray, "..."]``


def _find_def(src, info: AnnotatedSource):
    """The ``def`` of the annotated function in the parsed file ``src`` (``fixer._PyFile``)."""
    for n in ast.walk(src.tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == info.name \
                and (n.lineno == info.line or any(d.lineno == info.line
                                                  for d in n.decorator_list)):
            return n
    return None


_PREFIX = re.compile(r"[rRuU]?")


def _contents(src, node) -> Optional[Tuple[int, int]]:
    """The offsets of a string literal's contents, when the source spells its value exactly
    (one plain or raw literal, no escapes, no implicit concatenation)."""
    s, e = src.span(node)
    token = src.text[s:e]
    p = _PREFIX.match(token).end()
    for q in ('"""', "'''", '"', "'"):
        if token[p:].startswith(q) and token.endswith(q) and len(token) - p >= 2 * len(q):
            inner = token[p + len(q):len(token) - len(q)]
            if inner == node.value and "\\" not in inner:
                return s + p + len(q), e - len(q)
            return None
    return None


def _literals_in(src, ann: ast.expr, where: str) -> List[_Literal]:
    """The string literals of one annotation, in source order; a quoted annotation
    (``x: "Float[np.ndarray, 'n d']"``) is read inside its quotes."""
    out: List[_Literal] = []
    parents = {c: p for p in ast.walk(ann) for c in ast.iter_child_nodes(p)}
    for n in ast.walk(ann):
        if not (isinstance(n, ast.Constant) and isinstance(n.value, str)):
            continue
        span = _contents(src, n)
        if span is None:
            continue
        if n is ann:        # the whole annotation is a string: read the expression in it
            out += _quoted(src, n, where, span[0])
            continue
        tup = parents.get(n)
        sub = parents.get(tup)
        kind = src.span(sub.value) if isinstance(tup, ast.Tuple) and \
            isinstance(sub, ast.Subscript) and len(tup.elts) == 2 and tup.elts[1] is n \
            else None
        out.append(_Literal(where, span[0], span[1], n.value, kind))
    out.sort(key=lambda l: l.start)
    return out


def _quoted(src, node, where: str, base: int) -> List[_Literal]:
    """The literals inside a quoted annotation on one line (offsets into the file)."""
    text = node.value
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return []
    lead = len(text) - len(text.lstrip())

    # the quoted text parsed on its own, its nodes' positions mapped to offsets into the
    # file: it stands for ``src`` in ``_literals_in``
    class _Inner:
        def __init__(self) -> None:
            self.text = src.text
            self.tree = tree

        @staticmethod
        def span(n):
            if n.lineno != 1 or n.end_lineno != 1:
                raise ValueError
            b = text.strip().encode("utf-8")
            return (base + lead + len(b[:n.col_offset].decode("utf-8", "replace")),
                    base + lead + len(b[:n.end_col_offset].decode("utf-8", "replace")))

    try:
        return _literals_in(_Inner(), tree.body, where)
    except ValueError:
        return []


def _annotation_literals(src, node, info: AnnotatedSource) -> List[_Literal]:
    """The dimension-string literals of the def's annotations: a parameter's literal must
    read as the dimension string the child read for it (so a ``Literal["a"]`` or a string
    default is never touched)."""
    out: List[_Literal] = []
    a = node.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs:
        if arg.annotation is not None and arg.arg in info.params:
            out += [l for l in _literals_in(src, arg.annotation, arg.arg)
                    if l.value == info.params[arg.arg]]
    olds = {r[1] for r in info.returns if r is not None}
    if node.returns is not None:
        out += [l for l in _literals_in(src, node.returns, "return") if l.value in olds]
    return out


# --------------------------------------------------------------------------- fixing
def fix_annotations(plan, src, decl, info: AnnotatedSource, fixes: Sequence[Fix],
                    spec_file=None) -> None:
    """Plan ``fixes`` of an export whose spec was read from annotations: edits of the
    annotation strings of the function's ``def`` in ``src`` (the ``fixer._PyFile`` of
    ``info.file``; None when ``info.error`` says why there is none).  A bound goes to the
    ``dims=`` of the export's own ``dynamic_shapes=ss.from_annotations(f, ...)`` when it
    declares one (``spec_file()``: the ``_PyFile`` of the declaration's file).  Each fix is
    placed whole or not at all; a fix that cannot be written is listed in ``plan.skipped``
    with the reason."""
    def skip_all(why: str) -> None:
        for fix in fixes:
            if not isinstance(fix, DefineDim):
                plan.skipped.append((decl.name, str(fix), why))

    if info.error or src is None:
        skip_all(info.error or "cannot read the file that defines %s" % info.function)
        return
    node = _find_def(src, info)
    if node is None:
        skip_all("the definition of %s was not found in %s at line %d"
                 % (info.function, os.path.basename(info.file), info.line))
        return
    lits = _annotation_literals(src, node, info)
    new_dims = {f.dim.name: f for f in fixes if isinstance(f, DefineDim)}
    for fix in fixes:
        if isinstance(fix, DefineDim):
            continue        # placed with the relation that refers to it
        try:
            edits, bounds, reason = _edits(fix, lits, info, new_dims, src)
            edits = [_Edit(src.patch, s_, e_, t) for s_, e_, t in edits]
            if reason is None and bounds:
                more, reason = _dims_edits(spec_file, decl, bounds)
                edits += more
        except Exception as e:  # noqa: BLE001 - a fix not placed must not crash the check
            edits, reason = [], "internal: %s" % e
        if reason is None:
            reason = _add_all(edits)
        if reason:
            plan.skipped.append((decl.name, str(fix), reason))
            continue
        if isinstance(fix, SetDim) and fix.ref in new_dims:
            plan.applied.append((decl.name, str(new_dims[fix.ref])))
        plan.applied.append((decl.name, str(fix)))


class _Edit(typing.NamedTuple):
    """One text edit of a file patch (``key``: identical keyed edits merge)."""
    patch: typing.Any
    start: int
    end: int
    text: str
    key: Optional[str] = None


def _add_all(edits: List[_Edit]) -> Optional[str]:
    """Add every edit of one fix, or none of them."""
    if not edits:
        return "nothing to rewrite"
    kept = {id(e.patch): (e.patch, list(e.patch.edits)) for e in edits}
    for e in edits:
        if not e.patch.add(e.start, e.end, e.text, e.key):
            for patch, old in kept.values():
                patch.edits[:] = old
            return "conflicts with another fix of the same annotation"
    return None


def _edits(fix: Fix, lits: List[_Literal], info: AnnotatedSource, new_dims, src):
    """(edits of the annotation strings, Dims whose bounds go to ``dims=``, None) placing
    ``fix``, or ([], [], why it cannot be written)."""
    if isinstance(fix, ReturnAnnotationFix):
        edits, reason = _return_edits(fix, lits, info, src)
        return edits, [], reason
    if isinstance(fix, SetEntry):
        edits, reason = _entry_edits(fix, lits, info)
        return edits, [], reason
    if not isinstance(fix, SetDim):
        return [], [], "this fix cannot be written in a jaxtyping annotation; declare " \
            "dynamic_shapes for this export"
    v = fix.value
    bounds: List[Dim] = []
    if fix.ref is not None:
        d = new_dims.get(fix.ref)
        if d is not None and _bounded(d.dim):
            if not info.declared:
                return [], [], _new_root_reason(fix, d.dim, info)
            bounds.append(d.dim)
        new = format_linear(fix.ref, fix.coeff, fix.offset).replace(" ", "")
    elif type(v) is int:
        new = str(v)
    elif isinstance(v, Dim) and v.name == fix.name:
        if not info.declared:
            return [], [], _bound_reason(info, fix.name, v)
        return [], [v], None
    elif isinstance(v, Dim):
        if _bounded(v):
            if not info.declared:
                return [], [], _bound_reason(info, v.name, v)
            bounds.append(v)
        new = v.name
    elif isinstance(v, Marker):
        return [], [], ("%r has no spelling in a jaxtyping annotation: write `_` (any size) "
                        "or the size where the annotations of %s say %s"
                        % (v, info.function, fix.name))
    else:
        return [], [], "cannot write %r in a jaxtyping annotation" % (v,)
    if new.startswith("_") and new.isidentifier():
        return [], [], ("%s would read as an anonymous axis in a jaxtyping annotation; "
                        "rename the Dim" % new)
    edits, reason = _rename_edits(lits, info, fix.name, new)
    return edits, bounds if reason is None else [], reason


def _bounded(dim: Dim) -> bool:
    return (dim.min is not None and dim.min != 2) or dim.max is not None


def _callee(func) -> Optional[str]:
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else None


def _dims_edits(spec_file, decl, bounds: List[Dim]):
    """Edits writing ``bounds`` into the ``dims=`` of the export's
    ``dynamic_shapes=ss.from_annotations(f, dims={...})``: (edits, None) or ([], why)."""
    try:
        pf = spec_file()
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as e:
        return [], "cannot read %s: %s" % (decl.file, e)
    call = pf.spec_call(decl)
    spec = next((k.value for k in call.keywords if k.arg == "dynamic_shapes"), None) \
        if call is not None else None
    if not (isinstance(spec, ast.Call) and _callee(spec.func) == "from_annotations"):
        return [], ("the dynamic_shapes= of this export is not a from_annotations(...) call "
                    "in its source: write %s there by hand" % ", ".join(map(repr, bounds)))
    edits: List[_Edit] = []
    if pf.needs_import:
        last = [n for n in pf.tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        pos = pf.after_line(last[-1].end_lineno) if last else 0
        edits.append(_Edit(pf.patch, pos, pos, "from symshape import Dim" + pf.nl,
                           "import-Dim"))
    q = pf.quote
    kw = next((k for k in spec.keywords if k.arg == "dims"), None)
    items = [(d.name, pf.ctor_call(d)) for d in bounds]
    if kw is None:
        pos = max(pf.span(n)[1] for n in list(spec.args) + list(spec.keywords))
        edits.append(_Edit(pf.patch, pos, pos, ", dims={%s}" % ", ".join(
            "%s%s%s: %s" % (q, n, q, c) for n, c in items)))
        return edits, None
    if not isinstance(kw.value, ast.Dict) or None in kw.value.keys:
        return [], ("the dims= of from_annotations is not a dict literal: add %s to it by "
                    "hand" % ", ".join(map(repr, bounds)))
    d = kw.value
    new = []
    for n, c in items:
        hit = next((v for k, v in zip(d.keys, d.values)
                    if isinstance(k, ast.Constant) and k.value == n), None)
        if hit is not None:
            edits.append(_Edit(pf.patch, *pf.span(hit), c))
        else:
            new.append("%s%s%s: %s" % (q, n, q, c))
    if new and d.values:
        pos = pf.span(d.values[-1])[1]
        edits.append(_Edit(pf.patch, pos, pos, "".join(", " + t for t in new)))
    elif new:
        edits.append(_Edit(pf.patch, *pf.span(d), "{%s}" % ", ".join(new)))
    return edits, None


def _bound_reason(info: AnnotatedSource, name: str, dim: Dim) -> str:
    call = info.function.rsplit(".", 1)[-1]
    return ("a bound cannot be written in a jaxtyping annotation: declare "
            "dynamic_shapes=ss.from_annotations(%s, dims={%r: %r}) for this export"
            % (call, name, dim))


def _new_root_reason(fix: SetDim, root: Dim, info: AnnotatedSource) -> str:
    """Why ``n = 2*_n`` with ``_n = Dim('_n', min=1)`` cannot be written, and what to write:
    a name in an annotation is at least 2, so ``2*k`` alone would reject n = 2."""
    taken = {e for s in info.params.values() for e in _IDENT.findall(s)} | {fix.name}
    name = root.name.lstrip("_") or "k"
    i = 1
    while name in taken:
        name, i = "k%s" % (i if i > 1 else ""), i + 1
    rel = format_linear(name, fix.coeff, fix.offset).replace(" ", "")
    return ("%s needs a new size %s, and a name in a jaxtyping annotation is at least 2: "
            "write %s where the annotations of %s say %s and declare dynamic_shapes="
            "ss.from_annotations(%s, dims={%r: %r}) for this export"
            % (fix, _condition(root), rel, info.function, fix.name,
               info.function.rsplit(".", 1)[-1], name, Dim(name, min=root.min, max=root.max)))


def _condition(dim: Dim) -> str:
    """``_n >= 1``, ``1 <= _n <= 8``: a Dim's bounds as a condition."""
    lo = dim.min if dim.min is not None else 2
    return "%s >= %d" % (dim.name, lo) if dim.max is None else \
        "%d <= %s <= %d" % (lo, dim.name, dim.max)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _rename_elem(elem: str, name: str, new: str) -> str:
    """One axis of a dimension string with the Dim ``name`` written as ``new``."""
    if elem == name:
        return new
    if elem.startswith("#") and elem[1:] == name:       # broadcast: a name only
        return "#" + new if new.isidentifier() else elem
    if elem.startswith(("*", "_", "?")) or elem == "...":
        return elem         # variadic and anonymous axes bind no Dim
    head, eq, body = elem.rpartition("=")        # "rows=n": the size after the "="
    simple = new.isidentifier() or new.isdigit()
    repl = new if simple else "(%s)" % new
    out = _IDENT.sub(lambda m: repl if m.group(0) == name else m.group(0), body)
    return head + eq + _folded(out) if out != body else elem


def _folded(expr: str) -> str:
    """``4+1`` -> ``5``: an axis expression left with no names is written as its size."""
    try:
        tree = ast.parse(expr, mode="eval").body
        if any(isinstance(n, ast.Name) and n.id not in ("min", "max")
               for n in ast.walk(tree)):
            return expr
        value = eval_axis(tree, {})
    except Exception:  # noqa: BLE001 - not an expression symshape reads: leave it
        return expr
    return str(value) if type(value) is int and value >= 0 else expr


def _rename_dim_str(dim_str: str, name: str, new: str) -> str:
    """``dim_str`` with every use of ``name`` written as ``new``; spacing kept."""
    return re.sub(r"\S+", lambda m: _rename_elem(m.group(0), name, new), dim_str)


def _rename_edits(lits: List[_Literal], info: AnnotatedSource, name: str, new: str):
    uses = [p for p, s in info.params.items() if _rename_dim_str(s, name, new) != s]
    missing = [p for p in uses if not any(l.where == p for l in lits)]
    if missing:
        return [], ("the annotation of %s is not written in the def of %s (a type alias?): "
                    "write %s for %s there by hand" % (", ".join(missing), info.function,
                                                      new, name))
    edits = []
    for l in lits:
        text = _rename_dim_str(l.value, name, new)
        if text != l.value:
            edits.append((l.start, l.end, text))
    if not uses and not edits:
        return [], "no annotation axis of %s is spelled %r" % (info.function, name)
    return edits, None


def _entry_edits(fix: SetEntry, lits: List[_Literal], info: AnnotatedSource):
    """``dynamic_shapes['x'][1] = ...`` as axis 1 of x's annotation (an int, or ``_``)."""
    if len(fix.entry) != 2 or fix.entry[0] not in info.params or \
            not isinstance(fix.entry[1], int):
        return [], "this entry is not an axis of a parameter annotation of %s" % info.function
    pname, axis = fix.entry
    if type(fix.value) is int:
        text = str(fix.value)
    elif isinstance(fix.value, Marker) and fix.value.name == "AUTO":
        text = "_"
    else:
        return [], "%r has no spelling in a jaxtyping annotation" % (fix.value,)
    lit = next((l for l in lits if l.where == pname), None)
    if lit is None:
        return [], ("the annotation of %s is not written in the def of %s: write %s for "
                    "its axis %d by hand" % (pname, info.function, text, axis))
    elems = list(re.finditer(r"\S+", lit.value))
    if any(m.group(0) == "..." or m.group(0).startswith("*") for m in elems[:axis + 1]) \
            or axis >= len(elems):
        return [], ("axis %d of %s cannot be told apart in its annotation %r (a variadic "
                    "axis comes first)" % (axis, pname, lit.value))
    m = elems[axis]
    return [(lit.start + m.start(), lit.start + m.end(), text)], None


def _return_edits(fix: ReturnAnnotationFix, lits: List[_Literal], info: AnnotatedSource,
                  src):
    """The return annotation's strings (and dtype kinds) replaced by the ones that hold."""
    found = [l for l in lits if l.where == "return"]
    old = [r for r in info.returns]
    new = list(fix.returns)
    present = [o for o in old if o is not None]
    if len(found) != len(present) or any(l.value != o[1] for l, o in zip(found, present)):
        return [], ("the return annotation of %s is not written in its def (a type alias?): "
                    "write %s by hand" % (info.function, fix.line))
    edits = []
    it = iter(found)
    for o, n in zip(old, new):
        if o is None:
            continue
        lit = next(it)
        if n is None:
            continue
        if o[1] != n.dim_str:
            edits.append((lit.start, lit.end, n.dim_str))
        if o[0] != n.kind:
            ks = lit.kind_span
            kind_text = src.text[ks[0]:ks[1]] if ks else ""
            if not kind_text.endswith(o[0]) or not _kind_available(src, kind_text, n.kind):
                return [], ("the dtype of the return annotation must change from %s to %s, "
                            "and %s is not imported here: write %s by hand"
                            % (o[0], n.kind, n.kind, fix.line))
            edits.append((ks[1] - len(o[0]), ks[1], n.kind))
    return edits, None


def _kind_available(src, kind_text: str, kind: str) -> bool:
    """Whether writing ``kind`` where ``kind_text`` stands resolves: ``jt.Float`` ->
    ``jt.Int`` always does; a bare ``Float`` -> ``Int`` when ``Int`` is imported from
    jaxtyping under its own name."""
    if "." in kind_text:
        return True
    for n in ast.walk(src.tree):
        if isinstance(n, ast.ImportFrom) and n.module == "jaxtyping" and any(
                a.name == kind and a.asname in (None, kind) for a in n.names):
            return True
    return False
