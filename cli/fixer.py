"""``symshape check --fix`` / ``--diff``: plan the edits that apply suggested fixes to the
user's source, and write them.

Every change is a targeted text edit at exact syntax-tree positions -- never a
re-serialization -- so formatting, comments, encoding (BOM, coding cookie) and line endings
outside the edited span survive.  Each edit belongs to the export whose fix made it, so a
caller can drop every edit of an export (``symshape.cli.command.plan_verified`` does when an edit does
not parse or does not pass the re-check).

Python (``@exportable`` declarations), per fix object of ``ConstraintViolationError``.  The
spec is the ``dynamic_shapes=`` of the call at the declaration's line; the definitions it uses
are found by scope (``symshape.cli.pyscope``), so only the binding the spec reads is edited:

* ``SetDim(name, ...)`` edits the definition of the Dim called ``name``: a bound changes only
  the keywords of ``Dim(...)``; a relation, marker or int replaces the value (comments inside
  it are kept above the line); a definition that must follow its reference moves below it
  only when nothing in between uses it.  A name defined by ``a, b = ss.dims("a", "b", ...)``
  leaves that statement and gets its own line after it (or is re-bound after it when the
  call holds comments).  A Dim written inline in the spec is replaced where it stands.  Two
  exports bounding one definition get the intersection.
* ``DefineDim(dim)`` inserts ``_d = Dim('_d', ...)`` right before the definition using it.
* ``SetEntry(entry, value)`` replaces exactly the spec element at ``entry``.

TOML (``[[tool.symshape.exports]]`` entries): bounds are collected per file and merged, then
written to ``[tool.symshape.dims]`` (``finish_toml``; tomlkit for dotted keys, inline tables
and sub-tables); relations, static values and markers rewrite the axis strings of that
entry's ``dynamic_shapes``; ``SetEntry`` replaces the element at ``entry``.

Exports whose spec is read from shape annotations: the fixes rewrite the annotation strings
of the function's ``def`` (``symshape.cli.annotation_fixer``), as edits of the same file patches.

A fix that cannot be placed exactly is reported as not applied, with the reason.  ``Plan.write``
replaces files atomically (``symshape.cli.safe_write``).
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from ..contract.fixes import DefineDim, Fix, MarkAxis, SetDim, SetEntry
from symshape.specs.dims import Dim, Marker, format_linear
from .exportable import Declaration
from .check_worker import decl_key
from .annotation_fixer import fix_annotations
from .pyscope import Scopes
from .fix_plan import MARK_BY_HAND, Plan
from .toml_fixer import TomlFixer, finish_toml

if TYPE_CHECKING:  # pragma: no cover
    from .annotation_fixer import AnnotatedSource


def plan_fixes(items: List[Tuple[Declaration, List[Fix]]],
               base: Optional[Dict[str, str]] = None,
               annotated: Optional[Dict[str, "AnnotatedSource"]] = None) -> Plan:
    """The edits that apply each declaration's fixes (in order) to its source file (or to
    its edited text in ``base``).  ``annotated`` maps the key of each export whose spec was
    read from shape annotations to where that function is defined: its fixes rewrite the
    annotation strings (``symshape.cli.annotation_fixer``)."""
    plan = Plan(base)
    py: Dict[str, _PyFile] = {}

    def py_file(path: str) -> _PyFile:
        pf = py.get(path)
        if pf is None:
            pf = py[path] = _PyFile(plan, path)
        return pf

    for decl, fixes in items:
        if not fixes:
            continue
        plan.owner = decl_key(decl)
        for p in plan.patches.values():
            p.owner = plan.owner
        ann = (annotated or {}).get(plan.owner)
        if decl.origin == "toml" and ann is None:
            TomlFixer(plan, decl).run(fixes)
            continue
        if ann is not None and not ann.file:     # its source cannot be found: say why
            fix_annotations(plan, None, decl, ann, fixes)
            continue
        path = ann.file if ann is not None else decl.file
        try:
            pf = py_file(path)
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as e:
            for f in fixes:
                plan.skipped.append((decl.name, str(f), "cannot read %s: %s" % (path, e)))
            continue
        if ann is not None:
            fix_annotations(plan, pf, decl, ann, fixes, lambda: py_file(decl.file))
            continue
        pf.run(decl, fixes)
    for pf in py.values():
        pf.finish()
    finish_toml(plan)
    return plan


# --------------------------------------------------------------------------- python
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _str_const(node) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def _linear_over(node, var: str) -> bool:
    """``node`` is ``a*var + b`` written with +, -, * over ``var`` and int literals."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _linear_over(node.operand, var)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        return _linear_over(node.left, var) and _linear_over(node.right, var)
    return False


class _Def:
    """Where a Dim is made: ``v = Dim("n", ...)`` (call) or ``a, v = dims(...)`` (dims)."""

    def __init__(self, kind: str, var: str, stmt, call, index: int = 0) -> None:
        self.kind, self.var, self.stmt, self.call, self.index = kind, var, stmt, call, index

    @property
    def name(self) -> Optional[str]:
        return _str_const(self.call.args[self.index]) if len(self.call.args) > self.index \
            else None


class _Rewrite:
    """The planned new value of one Dim definition, merged over the exports that fix it."""

    def __init__(self, fix: SetDim, rhs: str, pre: List[str], after, var: str) -> None:
        self.fix, self.rhs, self.pre, self.after, self.var = fix, rhs, pre, after, var
        self.owners: set = set()


class _PyFile:
    """Places fixes in one Python file, editing exactly the definitions an export's spec
    uses (found by scope, see ``symshape.cli.pyscope``)."""

    def __init__(self, plan: Plan, path: str) -> None:
        self.plan = plan
        self.path = path
        self.patch = plan.patch(path)
        self.text = self.patch.old
        self.tree = ast.parse(self.text, filename=path)
        self.sc = Scopes(self.tree)
        self.parents = self.sc.parent
        # the lines as Python's tokenizer sees them (str.splitlines also splits at \f etc.)
        self.lines = _LINES.findall(self.text)
        self.nl = "\r\n" if "\r\n" in self.text else "\n"
        self._line_starts = [0]
        for ln in self.lines:
            self._line_starts.append(self._line_starts[-1] + len(ln))
        self.comments = self._comment_offsets()
        self.dim_names, self.dims_names, self.mod_names = self._aliases()
        self.ctor, self.needs_import = self._module_ctor()
        self.quote = "'"
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and self.is_ctor(node.func, "Dim") and node.args:
                lit = self.seg(node.args[0])
                if lit[:1] in "'\"":
                    self.quote = lit[0]
                    break
        self.call_rewrites: Dict[ast.stmt, _Rewrite] = {}
        self.dims_removals: Dict[ast.stmt, Dict[int, _Rewrite]] = {}
        self.inline_done: Dict[ast.Call, str] = {}

    # ---------------------------------------------------------------- positions
    def off(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self._line_starts[lineno - 1] + len(line.encode("utf-8")[:col].decode(
            "utf-8", "replace"))

    def span(self, node) -> Tuple[int, int]:
        return self.off(node.lineno, node.col_offset), self.off(node.end_lineno,
                                                                node.end_col_offset)

    def seg(self, node) -> str:
        s, e = self.span(node)
        return self.text[s:e]

    def line_start(self, lineno: int) -> int:
        return self._line_starts[lineno - 1]

    def after_line(self, lineno: int) -> int:
        return self._line_starts[min(lineno, len(self.lines))]

    def insert_after(self, lineno: int, lines: List[str]) -> None:
        """Insert ``lines`` after line ``lineno`` (which may be the last, unterminated one)."""
        pos = self.after_line(lineno)
        last = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else "\n"
        lead = "" if last.endswith(("\n", "\r")) else self.nl
        self.patch.add(pos, pos, lead + "".join(l + self.nl for l in lines))

    def indent(self, lineno: int) -> str:
        line = self.lines[lineno - 1]
        return line[:len(line) - len(line.lstrip())]

    def trailing_comment(self, stmt) -> str:
        line = self.lines[stmt.end_lineno - 1]
        rest = line.encode("utf-8")[stmt.end_col_offset:].decode("utf-8", "replace")
        rest = rest.rstrip("\r\n")
        return rest if rest.strip().startswith("#") else ""

    def alone(self, stmt) -> bool:
        """``stmt`` occupies its lines alone (nothing but indentation and a comment)."""
        first = self.lines[stmt.lineno - 1]
        before = first.encode("utf-8")[:stmt.col_offset].decode("utf-8", "replace")
        last = self.lines[stmt.end_lineno - 1]
        after = last.encode("utf-8")[stmt.end_col_offset:].decode("utf-8", "replace").strip()
        return not before.strip() and (not after or after.startswith("#"))

    def _comment_offsets(self) -> List[Tuple[int, str]]:
        import io
        import tokenize
        out = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if tok.type == tokenize.COMMENT:
                    out.append((self.off(tok.start[0], len(self.lines[tok.start[0] - 1][
                        :tok.start[1]].encode("utf-8"))), tok.string))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
        return out

    def comments_in(self, node) -> List[str]:
        s, e = self.span(node)
        return [c for pos, c in self.comments if s <= pos < e]

    # ---------------------------------------------------------------- names
    def _aliases(self) -> Tuple[set, set, set]:
        dim_names, dims_names, mods = set(), set(), set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.split(".")[0] == "symshape":
                for a in node.names:
                    if a.name == "Dim":
                        dim_names.add(a.asname or "Dim")
                    elif a.name == "dims":
                        dims_names.add(a.asname or "dims")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "symshape":
                        mods.add(a.asname or "symshape")
        return dim_names or {"Dim"}, dims_names or {"dims"}, mods

    def is_ctor(self, func, what: str) -> bool:
        names = self.dim_names if what == "Dim" else self.dims_names
        if isinstance(func, ast.Name):
            return func.id in names
        if isinstance(func, ast.Attribute) and func.attr == what:
            return not self.mod_names or (isinstance(func.value, ast.Name) and
                                          func.value.id in self.mod_names) or \
                not isinstance(func.value, ast.Name)
        return False

    def _module_ctor(self) -> Tuple[str, bool]:
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "symshape":
                for a in node.names:
                    if a.name == "Dim":
                        return a.asname or "Dim", False
        for node in self.tree.body:
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "symshape":
                        return (a.asname or "symshape") + ".Dim", False
        return "Dim", True

    def def_of_binding(self, b) -> Optional[_Def]:
        """The Dim definition a binding is, if it is one."""
        v = b.value
        if not isinstance(v, ast.Call):
            return None
        if b.tuple_index is None and self.is_ctor(v.func, "Dim") and v.args and \
                _str_const(v.args[0]) is not None:
            return _Def("call", b.name, b.stmt, v)
        if b.tuple_index is not None and self.is_ctor(v.func, "dims"):
            tgt = b.stmt.targets[0]
            names = [_str_const(a) for a in v.args]
            if None in names or len(names) != len(tgt.elts) or any(
                    isinstance(a, ast.Starred) for a in v.args):
                return None
            return _Def("dims", b.name, b.stmt, v, b.tuple_index)
        return None

    # ---------------------------------------------------------------- the spec
    def spec_call(self, decl: Declaration) -> Optional[ast.Call]:
        """The call whose ``dynamic_shapes=`` declares ``decl``: the innermost call with that
        keyword spanning the declaration's line (or its ``exportable(...)`` line)."""
        lines = [l for l in (getattr(decl, "call_line", None), decl.line) if l]
        for line in lines:
            best = None
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Call) and node.lineno <= line <= node.end_lineno and \
                        any(k.arg == "dynamic_shapes" for k in node.keywords):
                    if best is None or (node.lineno, -node.end_lineno) > (best.lineno,
                                                                          -best.end_lineno):
                        best = node
            if best is not None:
                return best
        return None

    def reach(self, spec) -> Tuple[List[ast.AST], List[_Def]]:
        """Every node the spec expression is built from (through the variables it names,
        resolved by scope) and the Dim definitions it uses."""
        nodes: List[ast.AST] = []
        defs: List[_Def] = []
        seen: set = set()
        stack = [spec]
        while stack:
            root = stack.pop()
            for sub in ast.walk(root):
                nodes.append(sub)
                if not (isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)):
                    continue
                b = self.sc.lookup(sub.id, sub)
                if b is None or b.value is None or id(b.stmt) in seen and \
                        b.tuple_index is None:
                    continue
                d = self.def_of_binding(b)
                if d is not None:
                    if all(x.stmt is not d.stmt or x.index != d.index for x in defs):
                        defs.append(d)
                    continue
                if b.tuple_index is None and id(b.stmt) not in seen:
                    seen.add(id(b.stmt))
                    stack.append(b.value)
        return nodes, defs

    # ---------------------------------------------------------------- texts
    def ctor_call(self, dim: Dim, ctor: Optional[str] = None, name_lit: Optional[str] = None
                  ) -> str:
        args = [name_lit or "%s%s%s" % (self.quote, dim.name, self.quote)]
        if dim.min is not None and dim.min != 2:
            args.append("min=%d" % dim.min)
        if dim.max is not None:
            args.append("max=%d" % dim.max)
        return "%s(%s)" % (ctor or self.ctor, ", ".join(args))

    def marker(self, m: Marker, ctor: Optional[str] = None) -> str:
        return "%s.%s" % (ctor or self.ctor, m.name)

    # ---------------------------------------------------------------- applying
    def run(self, decl: Declaration, fixes: List[Fix]) -> None:
        call = self.spec_call(decl)
        spec = None
        if call is not None:
            spec = next(k.value for k in call.keywords if k.arg == "dynamic_shapes")
        if spec is None:
            for fix in fixes:
                self.plan.skipped.append((decl.name, str(fix), "cannot find the "
                                          "dynamic_shapes= of this export in its source"))
            return
        nodes, defs = self.reach(spec)
        new_dims = {f.dim.name: f for f in fixes if isinstance(f, DefineDim)}
        for fix in fixes:
            if isinstance(fix, DefineDim):
                continue     # placed with the SetDim that refers to it
            try:
                if isinstance(fix, SetEntry):
                    reason = self._set_entry(fix, spec)
                elif isinstance(fix, SetDim):
                    reason = self._set_dim(fix, nodes, defs, new_dims, call)
                elif isinstance(fix, MarkAxis):
                    reason = MARK_BY_HAND
                else:
                    reason = "unknown fix kind"
            except Exception as e:  # a fix the fixer cannot place must not crash the check
                reason = "internal: %s" % e
            if reason:
                self.plan.skipped.append((decl.name, str(fix), reason))
            else:
                for d in new_dims.values():
                    if isinstance(fix, SetDim) and fix.ref == d.dim.name:
                        self.plan.applied.append((decl.name, str(d)))
                self.plan.applied.append((decl.name, str(fix)))

    def _set_entry(self, fix: SetEntry, spec) -> Optional[str]:
        node = spec
        for k in fix.entry:
            node = self._deref(node)
            nxt = None
            if isinstance(node, ast.Dict):
                for kn, vn in zip(node.keys, node.values):
                    if kn is not None and isinstance(kn, ast.Constant) and kn.value == k:
                        nxt = vn
            elif isinstance(node, (ast.Tuple, ast.List)) and isinstance(k, int) and not any(
                    isinstance(e, ast.Starred) for e in node.elts) and -len(node.elts) <= k \
                    < len(node.elts):
                nxt = node.elts[k]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id == "dict":
                for kw in node.keywords:
                    if kw.arg == k:
                        nxt = kw.value
            if nxt is None:
                return "cannot find %s in the spec's source" % fix.line.split(" = ")[0]
            node = nxt
        v = fix.value
        text = self.marker(v) if isinstance(v, Marker) else repr(v)
        if self.needs_import and isinstance(v, Marker):
            self._add_import()
        s, e = self.span(node)
        if not self.patch.add(s, e, text):
            return "conflicts with another fix"
        return None

    def _deref(self, node):
        for _ in range(8):
            if not isinstance(node, ast.Name):
                return node
            b = self.sc.lookup(node.id, node)
            if b is None or b.value is None or b.tuple_index is not None:
                return node
            node = b.value
        return node

    def _add_import(self) -> None:
        last = None
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                last = node
        pos = self.after_line(last.end_lineno) if last is not None else 0
        self.patch.add(pos, pos, "from symshape import Dim" + self.nl, key="import-Dim")

    def _visible(self, ref: _Def, stmt) -> Optional[str]:
        """Why the definition ``stmt`` cannot refer to ``ref``'s variable, or None."""
        chain = self.sc.chain(stmt)
        rscope = self.sc.scope_of.get(ref.stmt)
        if rscope not in chain:
            return ("%s is defined inside another scope (line %d) that line %d cannot see"
                    % (ref.var, ref.stmt.lineno, stmt.lineno))
        if rscope is chain[0] and ref.stmt.lineno >= stmt.lineno:
            return "later"
        b = self.sc.lookup(ref.var, stmt)
        if b is None or b.stmt is not ref.stmt:
            return ("at line %d the name %s does not refer to the Dim defined at line %d"
                    % (stmt.lineno, ref.var, ref.stmt.lineno))
        return None

    def _can_move_below(self, stmt, after, var: str, rebind: bool = False) -> Optional[str]:
        """Why ``stmt`` (or, ``rebind``, a new binding of ``var``) cannot move right below
        ``after`` (same block), or None."""
        body = self.sc.body_of(stmt)
        if body is None or after not in body or not (rebind or self.alone(stmt)) or \
                not self.alone(after):
            return "%s is defined after it, and the lines cannot be reordered safely; " \
                   "move the definition of %s below line %d by hand" % (
                       getattr(after, "lineno", "?") and "its reference", var,
                       after.end_lineno)
        i, j = body.index(stmt), body.index(after)
        for between in body[i + 1:j + 1]:
            for n in ast.walk(between):
                if isinstance(n, ast.Name) and n.id == var:
                    return ("line %d uses %s between its definition and line %d; move the "
                            "definition by hand" % (n.lineno, var, after.end_lineno))
        return None

    def _rhs(self, fix: SetDim, defs, nodes, new_dims, ctor=None, name_lit=None
             ) -> Tuple[Optional[str], Optional[_Def], List[str], Optional[str]]:
        """(text, definition it refers to, lines to insert before it, why not)."""
        pre: List[str] = []
        if fix.ref is not None:
            refs = [d for d in defs if d.name == fix.ref]
            if len({id(d.stmt) for d in refs}) > 1:
                return None, None, pre, "Dim %r is defined more than once" % fix.ref
            if refs:
                return format_linear(refs[0].var, fix.coeff, fix.offset), refs[0], pre, None
            if fix.ref in new_dims:
                pre.append("%s = %s" % (fix.ref, self.ctor_call(new_dims[fix.ref].dim, ctor)))
                return format_linear(fix.ref, fix.coeff, fix.offset), None, pre, None
            calls = self.inline_calls(fix.ref, nodes)
            if calls:
                return format_linear(self.seg(calls[0]), fix.coeff, fix.offset), None, pre, \
                    None
            return None, None, pre, "cannot find where %s is defined" % fix.ref
        v = fix.value
        if isinstance(v, Marker):
            return self.marker(v, ctor), None, pre, None
        if isinstance(v, Dim):
            return self.ctor_call(v, ctor, name_lit if v.name == fix.name else None), None, \
                pre, None
        if isinstance(v, int):
            return repr(v), None, pre, None
        return None, None, pre, "cannot write %r in Python" % (v,)

    def inline_calls(self, name: str, nodes) -> List[ast.Call]:
        defs = {id(b.value) for bs in self.sc.bindings.values() for b in bs
                if b.value is not None}
        return [n for n in nodes if isinstance(n, ast.Call) and self.is_ctor(n.func, "Dim")
                and n.args and _str_const(n.args[0]) == name and id(n) not in defs]

    def _set_dim(self, fix: SetDim, nodes, defs, new_dims, call) -> Optional[str]:
        mine = [d for d in defs if d.name == fix.name]
        if len({(id(d.stmt), d.index) for d in mine}) > 1:
            return ("Dim %r is defined more than once (lines %s); edit the one this export "
                    "uses by hand" % (fix.name, ", ".join(str(d.stmt.lineno) for d in mine)))
        if not mine:
            return self._set_inline(fix, nodes, defs, new_dims, call)
        d = mine[0]
        ctor = self.seg(d.call.func) if d.kind == "call" else None
        if ctor is None and isinstance(d.call.func, ast.Attribute):
            ctor = self.seg(d.call.func.value) + ".Dim"
        name_lit = self.seg(d.call.args[0]) if d.kind == "call" else None
        rhs, ref, pre, why = self._rhs(fix, defs, nodes, new_dims, ctor, name_lit)
        if rhs is None:
            return why
        after, why = self._placement(d, ref) if ref is not None else (None, None)
        if why:
            return why
        if ctor is None and self.needs_import and (isinstance(fix.value, (Dim, Marker))
                                                   or pre):
            self._add_import()
        table = self.call_rewrites if d.kind == "call" else \
            self.dims_removals.setdefault(d.stmt, {})
        slot = d.stmt if d.kind == "call" else d.index
        prev = table.get(slot)
        if prev is not None:
            return self._join(prev, fix, ctor, name_lit)
        rw = _Rewrite(fix, rhs, pre, after, d.var)
        rw.owners.add(self.patch.owner)
        table[slot] = rw
        if isinstance(fix.value, Marker):
            self._marker_uses(d.var, rhs, nodes)
        return None

    def _placement(self, d: _Def, ref: _Def):
        """(statement the definition of ``d`` must move below, or None; why it cannot be
        edited, or None) when its new value refers to the Dim ``ref`` defines."""
        vis = self._visible(ref, d.stmt)
        if vis == "later" and ref.stmt is d.stmt:
            if d.kind != "dims":
                return None, ("%s and %s are defined in one statement; split it by hand"
                              % (d.var, ref.var))
            return None, None
        if vis == "later":
            why = self._can_move_below(d.stmt, ref.stmt, d.var, d.kind == "dims")
            return (None, why) if why else (ref.stmt, None)
        return None, vis or None

    def _join(self, prev: _Rewrite, fix: SetDim, ctor, name_lit) -> Optional[str]:
        """A second export's fix of a definition already rewritten: the same fix joins it,
        two bounds intersect, anything else conflicts."""
        if self.patch.owner in prev.owners and prev.fix.line != fix.line:
            return "conflicts with the fix `%s`" % prev.fix.line
        if prev.fix.line != fix.line:
            merged = _merge_bounds(prev.fix, fix)
            if merged is None:
                return "conflicts with the fix `%s` of another export" % prev.fix.line
            prev.fix = merged
            prev.rhs = self.ctor_call(merged.value, ctor, name_lit)
        prev.owners.add(self.patch.owner)
        return None

    def _marker_uses(self, var: str, text: str, nodes) -> None:
        """``2*d + 1`` in the spec (or a spec variable ``d2 = 2*d``) becomes the marker too:
        a marker has no arithmetic."""
        for node in nodes:
            if not isinstance(node, ast.BinOp) or isinstance(self.parents.get(node),
                                                             ast.BinOp):
                continue
            if _linear_over(node, var) and any(isinstance(n, ast.Name) and n.id == var
                                               for n in ast.walk(node)):
                s, e = self.span(node)
                self.patch.add(s, e, text)

    def _set_inline(self, fix: SetDim, nodes, defs, new_dims, call) -> Optional[str]:
        calls = self.inline_calls(fix.name, nodes)
        if not calls:
            return "cannot find where Dim %r is defined in this module" % fix.name
        ctor = self.seg(calls[0].func)
        rhs, ref, pre, why = self._rhs(fix, defs, nodes, new_dims, ctor,
                                       self.seg(calls[0].args[0]))
        if rhs is None:
            return why
        if ref is not None:
            vis = self._visible(ref, call)
            if vis and vis != "later":
                return vis
        for c in calls:
            target = c
            if isinstance(fix.value, Marker):
                while isinstance(self.parents.get(target), ast.BinOp):
                    target = self.parents[target]
            s, e = self.span(target)
            text = rhs
            if isinstance(self.parents.get(target), ast.BinOp) and " " in rhs:
                text = "(%s)" % rhs
            if not self.patch.add(s, e, text):
                return "conflicts with another fix"
        if pre and call is not None:
            stmt = call
            while stmt in self.parents and not isinstance(stmt, ast.stmt):
                stmt = self.parents[stmt]
            first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list",
                                                                   [])])
            pos = self.line_start(first)
            ind = self.indent(first)
            self.patch.add(pos, pos, "".join(ind + p + self.nl for p in pre),
                           key=("pre", pre[0]))
        return None

    def _edit_call(self, stmt, rw: _Rewrite) -> None:
        """Replace the value of ``v = Dim(...)``; bounds only change the keywords, so the
        rest of the call (comments included) stays."""
        val = stmt.value
        v = rw.fix.value
        if rw.fix.ref is None and isinstance(v, Dim) and v.name == rw.fix.name and \
                not rw.pre and not any(isinstance(a, ast.Starred) for a in val.args) and \
                all(k.arg for k in val.keywords) and len(val.args) == 1:
            kws = {k.arg: k for k in val.keywords}
            want = {"min": v.min if v.min not in (None, 2) else None, "max": v.max}
            edits = []
            for key in ("min", "max"):
                if key in kws:
                    new = want[key] if want[key] is not None else (2 if key == "min" else None)
                    if new is None:
                        break       # removing a keyword: rewrite the call below
                    edits.append((self.span(kws[key].value), str(new)))
                elif want[key] is not None:
                    last = (val.keywords or val.args)[-1]
                    pos = self.span(last)[1]
                    edits.append(((pos, pos), ", %s=%d" % (key, want[key])))
            else:
                for (s, e), text in edits:
                    self.patch.add(s, e, text)
                return
        ind = self.indent(stmt.lineno)
        kept = ["%s%s" % (ind, c) for c in self.comments_in(val)]
        if rw.after is not None and rw.after.lineno > stmt.lineno:
            comment = self.trailing_comment(stmt)
            self.patch.add(self.line_start(stmt.lineno), self.after_line(stmt.end_lineno), "")
            body = kept + [ind + p for p in rw.pre] + ["%s%s = %s%s" % (ind, rw.var, rw.rhs,
                                                                        comment)]
            self.insert_after(rw.after.end_lineno, body)
            return
        self.patch.add(*self.span(val), rw.rhs)
        before = kept + [ind + p for p in rw.pre]
        if before:
            pos = self.line_start(stmt.lineno)
            self.patch.add(pos, pos, "".join(b + self.nl for b in before))

    def finish(self) -> None:
        for stmt, rw in self.call_rewrites.items():
            self.patch.owner = set(rw.owners)
            self._edit_call(stmt, rw)
        for stmt, removed in self.dims_removals.items():
            self.patch.owner = set().union(*[r.owners for r in removed.values()])
            self._edit_dims(stmt, removed)

    def _edit_dims(self, stmt, removed: Dict[int, _Rewrite]) -> None:
        tgt = stmt.targets[0]
        call = stmt.value
        keep = [i for i in range(len(tgt.elts)) if i not in removed]
        ind = self.indent(stmt.lineno)
        new_lines = []
        last = stmt
        for i in sorted(removed):
            rw = removed[i]
            new_lines += [ind + p for p in rw.pre]
            new_lines.append(ind + "%s = %s" % (tgt.elts[i].id, rw.rhs))
            if rw.after is not None and rw.after.end_lineno > last.end_lineno:
                last = rw.after
        if self.comments_in(call) or not self.alone(stmt):
            # keep the statement (and its comments) as written: rebind the names after it
            self.insert_after(last.end_lineno, new_lines)
            return
        if keep:
            args = [self.seg(call.args[i]) for i in keep] + [self.seg(k) for k in
                                                             call.keywords]
            s, e = self.span(tgt)
            if len(keep) == 1:
                # one name left: ``a = Dim("a", max=64)`` rather than ``a, = dims(...)``
                self.patch.add(s, e, self.seg(tgt.elts[keep[0]]))
                if isinstance(call.func, ast.Attribute):
                    ctor = self.seg(call.func.value) + ".Dim"
                else:
                    ctor = self.ctor
                    if self.needs_import:
                        self._add_import()
                self.patch.add(*self.span(call), "%s(%s)" % (ctor, ", ".join(args)))
            else:
                tseg = self.seg(tgt)
                names = ", ".join(self.seg(tgt.elts[i]) for i in keep)
                if tseg.startswith("("):
                    names = "(%s)" % names
                elif tseg.startswith("["):
                    names = "[%s]" % names
                self.patch.add(s, e, names)
                self.patch.add(self.span(call.func)[1], self.span(call)[1],
                               "(%s)" % ", ".join(args))
            self.insert_after(last.end_lineno, new_lines)
        else:
            comment = self.trailing_comment(stmt)
            if last is stmt:
                new_lines[-1] += comment
                s = self.line_start(stmt.lineno)
                e = self.after_line(stmt.end_lineno)
                ending = self.lines[stmt.end_lineno - 1][len(
                    self.lines[stmt.end_lineno - 1].rstrip("\r\n")):]
                self.patch.add(s, e, self.nl.join(new_lines) + ending)
            else:
                s, e = self.span(stmt)
                self.patch.add(s, e, "")
                self.insert_after(last.end_lineno, new_lines)


def _merge_bounds(a: SetDim, b: SetDim) -> Optional[SetDim]:
    """Bounds two exports both accept (the intersection), or None when the fixes are not
    both bounds of the same Dim or the ranges do not meet."""
    va, vb = a.value, b.value
    if a.ref is not None or b.ref is not None or not isinstance(va, Dim) or \
            not isinstance(vb, Dim) or va.name != vb.name or va.name != a.name:
        return None
    lo = max(va.min if va.min is not None else 2, vb.min if vb.min is not None else 2)
    his = [m for m in (va.max, vb.max) if m is not None]
    hi = min(his) if his else None
    if hi is not None and hi < lo:
        return None
    return SetDim(a.name, Dim(a.name, min=lo if lo != 2 else None, max=hi))
