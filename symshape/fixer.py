"""``symshape check --fix`` / ``--diff``: apply suggested fixes to the user's source text.

Every change is a targeted text edit found from node positions -- never a re-serialization --
so formatting and comments outside the edited span survive.

Python (``@exportable`` declarations), per fix object of ``ConstraintViolationError``:

* ``SetDim(name, ...)`` rewrites the assignment that defines the Dim called ``name``:
  ``tokens = Dim("tokens")  # comment`` -> ``tokens = Dim("tokens", max=128)  # comment``
  (only the right-hand side changes), or ``mask_tokens = tokens``.  A name defined by
  ``a, b = ss.dims("a", "b", ...)`` is taken out of that statement and gets its own line
  right after it.  A Dim written inline in the spec (``{"x": (Dim("n"),)}``) is replaced
  where it stands.
* ``DefineDim(dim)`` inserts ``_d = Dim('_d', ...)`` right before the line that uses it.
* ``SetEntry(entry, value)`` replaces exactly the spec element at ``entry`` inside the
  decorator call (or inside the module-level variable the call names).

TOML (``[[tool.symshape.exports]]`` entries): bounds go to ``[tool.symshape.dims]``
(the value of the key is rewritten, or a key line is added); relations, static values and
markers rewrite the axis strings of that entry's ``dynamic_shapes``; ``SetEntry`` replaces
the element at ``entry``.

A fix that cannot be placed (a spec built at run time, a Dim defined in another module...)
is reported as "apply by hand" with its copy-pasteable line.
"""
from __future__ import annotations

import ast
import difflib
import os
import re
from typing import Dict, List, Optional, Tuple

from .constraints import DefineDim, Fix, SetDim, SetEntry
from .dims import Dim, _Marker, format_linear
from .exportable import Declaration
from . import project


class Edit:
    __slots__ = ("start", "end", "text", "seq", "key", "owners")

    def __init__(self, start: int, end: int, text: str, seq: int, key=None,
                 owner: Optional[str] = None) -> None:
        self.start, self.end, self.text, self.seq, self.key = start, end, text, seq, key
        self.owners = {owner} if owner else set()


class FilePatch:
    """The edits planned for one file, over the text read from it (``raw``: its bytes)."""

    def __init__(self, path: str, raw: bytes, text: str, encoding: str) -> None:
        self.path = path
        self.raw = raw
        self.old = text
        self.encoding = encoding
        self.edits: List[Edit] = []
        self._seq = 0
        self.owner: Optional[str] = None      # the export whose fixes are being placed

    def add(self, start: int, end: int, text: str, key=None) -> bool:
        """Add an edit; False if it overlaps a different edit (identical ones merge)."""
        for e in self.edits:
            if (e.start, e.end, e.text) == (start, end, text) and start != end:
                e.owners.add(self.owner)
                return True
            if key is not None and e.key == key:
                if e.text == text:
                    e.owners.add(self.owner)
                return e.text == text
            if start < e.end and e.start < end:
                return False
        self._seq += 1
        self.edits.append(Edit(start, end, text, self._seq, key, self.owner))
        return True

    def new(self) -> str:
        out, pos = [], 0
        for e in sorted(self.edits, key=lambda e: (e.start, e.seq)):
            out.append(self.old[pos:e.start])
            out.append(e.text)
            pos = max(pos, e.end)
        out.append(self.old[pos:])
        return "".join(out)


def read_text(path: str) -> Tuple[bytes, str, str]:
    """(bytes, text, encoding) of a user file: Python files by their coding cookie (a UTF-8
    BOM is kept as ``utf-8-sig``), TOML as UTF-8.  Line endings are kept as they are."""
    with open(path, "rb") as fh:
        raw = fh.read()
    if path.endswith(".py"):
        import io
        import tokenize
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    else:
        encoding = "utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else "utf-8"
    return raw, raw.decode(encoding), encoding


def parse_problem(path: str, text: str) -> Optional[str]:
    """Why ``text`` is not a valid file of its kind (Python or TOML), or None."""
    if path.endswith(".py"):
        try:
            compile(text, path, "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
        except SyntaxError as e:
            return "line %s: %s" % (e.lineno, e.msg)
        except ValueError as e:
            return str(e)
        return None
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        tomllib.loads(text)
    except Exception as e:  # noqa: BLE001 - tomllib.TOMLDecodeError
        return str(e)
    return None


class Plan:
    def __init__(self) -> None:
        self.patches: Dict[str, FilePatch] = {}
        self.applied: List[Tuple[str, str]] = []        # (export name, fix line)
        self.skipped: List[Tuple[str, str, str]] = []   # (export name, fix line, reason)
        self.owner: Optional[str] = None

    def patch(self, path: str) -> FilePatch:
        if path not in self.patches:
            raw, text, encoding = read_text(path)
            self.patches[path] = FilePatch(path, raw, text, encoding)
        p = self.patches[path]
        p.owner = self.owner
        return p

    def changed(self) -> Dict[str, Tuple[str, str]]:
        out = {}
        for path in sorted(self.patches):
            p = self.patches[path]
            new = p.new()
            if new != p.old:
                out[path] = (p.old, new)
        return out

    def owners_of(self, path: str) -> set:
        p = self.patches.get(path)
        return set().union(*[e.owners for e in p.edits]) - {None} if p and p.edits else set()

    def owner_files(self) -> Dict[str, set]:
        """Each export with an edit -> the files its edits touch."""
        out: Dict[str, set] = {}
        for path, p in self.patches.items():
            for e in p.edits:
                for o in e.owners:
                    if o:
                        out.setdefault(o, set()).add(path)
        return out

    def unparsable(self) -> Dict[str, str]:
        """Edited files that would not parse: {path: why}."""
        out = {}
        for path, (_, new) in self.changed().items():
            why = parse_problem(path, new)
            if why:
                out[path] = why
        return out

    def diff(self, rel=lambda p: p) -> str:
        chunks = []
        for path, (old, new) in self.changed().items():
            r = rel(path)
            chunks.extend(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                               "a/" + r, "b/" + r))
        text = "".join(chunks)
        if text and not text.endswith("\n"):
            text += "\n"
        return text

    def write(self) -> Tuple[List[str], List[Tuple[str, str]]]:
        """Replace each changed file atomically: (written, [(path, why not)]).  Every file
        is checked (unchanged since read, writable) before the first is replaced; a failure
        while writing stops there, leaving the rest untouched."""
        import linecache
        from .safe_write import NotWritten, preflight, replace_file
        changed = self.changed()
        blocked = []
        for path in changed:
            try:
                preflight(path, self.patches[path].raw)
            except NotWritten as e:
                blocked.append((path, str(e)))
        if blocked:
            return [], blocked + [(p, "not written: another file of this fix could not be")
                                  for p in changed if p not in dict(blocked)]
        written: List[str] = []
        for path, (_, new) in changed.items():
            p = self.patches[path]
            try:
                replace_file(path, new.encode(p.encoding), p.raw)
            except NotWritten as e:
                rest = [(q, "not written: stopped at the failure above") for q in changed
                        if q not in written and q != path]
                return written, [(path, str(e))] + rest
            written.append(path)
            linecache.checkcache(path)
        return written, []


def plan_fixes(items: List[Tuple[Declaration, List[Fix]]]) -> Plan:
    """The edits that apply each declaration's fixes (in order) to its source file."""
    from .check_worker import decl_key
    plan = Plan()
    py: Dict[str, _PyFile] = {}
    for decl, fixes in items:
        if not fixes:
            continue
        plan.owner = decl_key(decl)
        for p in plan.patches.values():
            p.owner = plan.owner
        if decl.origin == "toml":
            _TomlFixer(plan, decl).run(fixes)
            continue
        try:
            pf = py.get(decl.file)
            if pf is None:
                pf = py[decl.file] = _PyFile(plan, decl.file)
        except (OSError, SyntaxError, UnicodeDecodeError) as e:
            for f in fixes:
                plan.skipped.append((decl.name, str(f), "cannot read %s: %s" % (decl.file, e)))
            continue
        pf.run(decl, fixes)
    for pf in py.values():
        pf.finish()
    return plan


# --------------------------------------------------------------------------- python
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _is_dim_func(node, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (
        isinstance(node, ast.Attribute) and node.attr == name)


def _str_const(node) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


class _Def:
    """Where a Dim name is defined: ``v = Dim("n", ...)`` (call) or ``a, v = dims(...)``."""

    def __init__(self, kind: str, var: str, stmt, call, index: int = 0) -> None:
        self.kind, self.var, self.stmt, self.call, self.index = kind, var, stmt, call, index


class _PyFile:
    def __init__(self, plan: Plan, path: str) -> None:
        self.plan = plan
        self.path = path
        self.patch = plan.patch(path)
        self.text = self.patch.old
        self.tree = ast.parse(self.text, filename=path)
        # the lines as Python's tokenizer sees them (str.splitlines also splits at \f etc.)
        self.lines = _LINES.findall(self.text)
        self.nl = "\r\n" if "\r\n" in self.text else "\n"
        self._line_starts = [0]
        for ln in self.lines:
            self._line_starts.append(self._line_starts[-1] + len(ln))
        self.parents: Dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for ch in ast.iter_child_nodes(node):
                self.parents[ch] = node
        self.defs: Dict[str, List[_Def]] = {}
        self.assigns: Dict[str, List[ast.Assign]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                self._scan_assign(node)
        self.ctor, self.needs_import = self._module_ctor()
        self.quote = "'"
        for ds in sorted(self.defs.values(), key=lambda ds: ds[0].stmt.lineno):
            lit = self.seg(ds[0].call.args[ds[0].index])
            if lit[:1] in "'\"":
                self.quote = lit[0]
            break
        # statement rewrites, merged per statement and turned into edits in finish()
        # call_rewrites: stmt -> (rhs, lines before, stmt it must follow, variable)
        # dims_removals: stmt -> {index in the tuple: (rhs, lines before, stmt to follow)}
        self.call_rewrites: Dict[ast.stmt, tuple] = {}
        self.dims_removals: Dict[ast.stmt, Dict[int, tuple]] = {}
        self.done: Dict[str, str] = {}

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

    # ---------------------------------------------------------------- scanning
    def _scan_assign(self, node: ast.Assign) -> None:
        tgt, val = node.targets[0], node.value
        if isinstance(tgt, ast.Name):
            self.assigns.setdefault(tgt.id, []).append(node)
        if not isinstance(val, ast.Call):
            return
        if isinstance(tgt, ast.Name) and _is_dim_func(val.func, "Dim") and val.args:
            name = _str_const(val.args[0])
            if name is not None:
                self.defs.setdefault(name, []).append(_Def("call", tgt.id, node, val))
        elif isinstance(tgt, (ast.Tuple, ast.List)) and _is_dim_func(val.func, "dims"):
            names = [_str_const(a) for a in val.args]
            if None in names or len(names) != len(tgt.elts) or not all(
                    isinstance(t, ast.Name) for t in tgt.elts):
                return
            for i, (n, t) in enumerate(zip(names, tgt.elts)):
                self.defs.setdefault(n, []).append(_Def("dims", t.id, node, val, i))

    def _module_ctor(self) -> Tuple[str, bool]:
        alias = None
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "symshape":
                for a in node.names:
                    if a.name == "Dim":
                        return a.asname or "Dim", False
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "symshape" and alias is None:
                        alias = (a.asname or "symshape") + ".Dim"
        if alias:
            return alias, False
        return "Dim", True

    def decorator(self, decl: Declaration) -> Optional[ast.Call]:
        short = decl.qualname.rsplit(".", 1)[-1]
        best = None
        for node in ast.walk(self.tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                    node.name != short:
                continue
            for d in node.decorator_list:
                if not isinstance(d, ast.Call):
                    continue
                if d.lineno <= decl.line <= d.end_lineno:
                    return d
                if _is_dim_func(d.func, "exportable") and best is None:
                    best = d
        return best

    def spec_node(self, call: Optional[ast.Call]):
        if call is None:
            return None
        for kw in call.keywords:
            if kw.arg == "dynamic_shapes":
                return kw.value
        return None

    def resolve(self, node, before_line: int):
        """A module-level ``NAME = <expr>`` that a Name in the spec refers to."""
        seen = 0
        while isinstance(node, ast.Name) and seen < 8:
            cands = [a for a in self.assigns.get(node.id, [])
                     if a.lineno < before_line and self.parents.get(a) is self.tree]
            if not cands:
                return node
            node = cands[-1].value
            seen += 1
        return node

    def spec_nodes(self, spec, line: int) -> List[ast.AST]:
        """The spec expression and the module-level spec variables it refers to."""
        out, stack = [], [spec] if spec is not None else []
        while stack:
            n = stack.pop()
            out.append(n)
            for sub in ast.walk(n):
                if isinstance(sub, ast.Name):
                    r = self.resolve(sub, line)
                    if r is not sub and r not in out and isinstance(
                            r, (ast.Dict, ast.Tuple, ast.List)):
                        stack.append(r)
        return out

    def def_of(self, name: str, line: int) -> Optional[_Def]:
        ds = self.defs.get(name) or []
        before = [d for d in ds if d.stmt.lineno < line]
        return (before or ds or [None])[-1]

    def inline_calls(self, name: str, roots: List[ast.AST]) -> List[ast.Call]:
        calls = []
        for r in roots:
            for n in ast.walk(r):
                if isinstance(n, ast.Call) and _is_dim_func(n.func, "Dim") and n.args and \
                        _str_const(n.args[0]) == name and self.parents.get(n) is not None \
                        and not self._is_def_call(n):
                    calls.append(n)
        return calls

    def _is_def_call(self, call) -> bool:
        return any(d.call is call for ds in self.defs.values() for d in ds)

    # ---------------------------------------------------------------- texts
    def ctor_call(self, dim: Dim, ctor: Optional[str] = None, name_lit: Optional[str] = None
                  ) -> str:
        args = [name_lit or "%s%s%s" % (self.quote, dim.name, self.quote)]
        if dim.min is not None and dim.min != 2:
            args.append("min=%d" % dim.min)
        if dim.max is not None:
            args.append("max=%d" % dim.max)
        return "%s(%s)" % (ctor or self.ctor, ", ".join(args))

    def marker(self, m: _Marker, ctor: Optional[str] = None) -> str:
        return "%s.%s" % (ctor or self.ctor, m.name)

    # ---------------------------------------------------------------- applying
    def run(self, decl: Declaration, fixes: List[Fix]) -> None:
        call = self.decorator(decl)
        spec = self.spec_node(call)
        line = call.lineno if call is not None else decl.line
        roots = self.spec_nodes(spec, line)
        new_dims = {f.dim.name: f for f in fixes if isinstance(f, DefineDim)}
        for fix in fixes:
            if isinstance(fix, DefineDim):
                continue     # placed with the SetDim that refers to it
            try:
                if isinstance(fix, SetEntry):
                    reason = self._set_entry(fix, spec, line)
                elif isinstance(fix, SetDim):
                    reason = self._set_dim(fix, line, roots, new_dims, call)
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

    def _set_entry(self, fix: SetEntry, spec, line: int) -> Optional[str]:
        if spec is None:
            return "no dynamic_shapes= in the decorator call"
        node = self.resolve(spec, line)
        for k in fix.entry:
            node = self.resolve(node, line)
            nxt = None
            if isinstance(node, ast.Dict):
                for kn, vn in zip(node.keys, node.values):
                    if kn is not None and isinstance(kn, ast.Constant) and kn.value == k:
                        nxt = vn
            elif isinstance(node, (ast.Tuple, ast.List)) and isinstance(k, int) and not any(
                    isinstance(e, ast.Starred) for e in node.elts) and -len(node.elts) <= k \
                    < len(node.elts):
                nxt = node.elts[k]
            elif isinstance(node, ast.Call) and _is_dim_func(node.func, "dict"):
                for kw in node.keywords:
                    if kw.arg == k:
                        nxt = kw.value
            if nxt is None:
                return "cannot find %s in the spec's source" % fix.line.split(" = ")[0]
            node = nxt
        v = fix.value
        text = self.marker(v) if isinstance(v, _Marker) else repr(v)
        if self.needs_import and isinstance(v, _Marker):
            self._add_import()
        s, e = self.span(node)
        if not self.patch.add(s, e, text):
            return "conflicts with another fix"
        return None

    def _add_import(self) -> None:
        last = None
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                last = node
        pos = self.after_line(last.end_lineno) if last is not None else 0
        self.patch.add(pos, pos, "from symshape import Dim" + self.nl, key="import-Dim")

    def _ref_text(self, ref: str, line: int, roots, new_dims
                  ) -> Tuple[Optional[str], Optional[ast.stmt]]:
        d = self.def_of(ref, line)
        if d is not None:
            return d.var, d.stmt
        if ref in new_dims:
            return ref, None
        calls = self.inline_calls(ref, roots)
        if calls:
            return self.seg(calls[0]), None
        return None, None

    def _rhs(self, fix: SetDim, line: int, roots, new_dims, ctor=None, name_lit=None
             ) -> Tuple[Optional[str], Optional[ast.stmt], List[str]]:
        """(text, statement it must follow, lines to insert before it)."""
        pre: List[str] = []
        if fix.ref is not None:
            base, after = self._ref_text(fix.ref, line, roots, new_dims)
            if base is None:
                return None, None, pre
            if fix.ref in new_dims and self.def_of(fix.ref, line) is None:
                pre.append("%s = %s" % (fix.ref, self.ctor_call(new_dims[fix.ref].dim, ctor)))
            return format_linear(base, fix.coeff, fix.offset), after, pre
        v = fix.value
        if isinstance(v, _Marker):
            return self.marker(v, ctor), None, pre
        if isinstance(v, Dim):
            return self.ctor_call(v, ctor, name_lit if v.name == fix.name else None), None, pre
        if isinstance(v, int):
            return repr(v), None, pre
        return None, None, pre

    def _set_dim(self, fix: SetDim, line: int, roots, new_dims, call) -> Optional[str]:
        prev = self.done.get(fix.name)
        if prev is not None:
            return None if prev == fix.line else "conflicts with the fix `%s`" % prev
        d = self.def_of(fix.name, line)
        if d is None:
            return self._set_inline(fix, line, roots, new_dims, call)
        ctor = self.seg(d.call.func) if d.kind == "call" else None
        if ctor is None and d.kind == "dims" and isinstance(d.call.func, ast.Attribute):
            ctor = self.seg(d.call.func.value) + ".Dim"
        name_lit = self.seg(d.call.args[0]) if d.kind == "call" else None
        rhs, after, pre = self._rhs(fix, line, roots, new_dims, ctor, name_lit)
        if rhs is None:
            return "cannot find where %s is defined" % fix.ref
        if ctor is None and self.needs_import and (isinstance(fix.value, (Dim, _Marker)) or pre):
            self._add_import()
        if after is not None and after is d.stmt:
            after = None
        if d.kind == "call":
            self.call_rewrites[d.stmt] = (rhs, pre, after, d.var)
        else:
            self.dims_removals.setdefault(d.stmt, {})[d.index] = (rhs, pre, after)
        if isinstance(fix.value, _Marker):
            self._marker_uses(d.var, rhs, roots)
        self.done[fix.name] = fix.line
        return None

    def _marker_uses(self, var: str, text: str, roots) -> None:
        """``2*d + 1`` in the spec (or a module-level ``d2 = 2*d``) becomes the marker too:
        a marker has no arithmetic."""
        cands = [n for r in roots for n in ast.walk(r)]
        cands += [a.value for a in ast.walk(self.tree) if isinstance(a, ast.Assign)
                  and self.parents.get(a) is self.tree]
        for node in cands:
            if not isinstance(node, ast.BinOp) or isinstance(self.parents.get(node),
                                                             ast.BinOp):
                continue
            if any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(node)):
                s, e = self.span(node)
                self.patch.add(s, e, text)

    def _set_inline(self, fix: SetDim, line: int, roots, new_dims, call) -> Optional[str]:
        calls = self.inline_calls(fix.name, roots)
        if not calls:
            return "cannot find where Dim %r is defined in this module" % fix.name
        ctor = self.seg(calls[0].func)
        rhs, _, pre = self._rhs(fix, line, roots, new_dims, ctor,
                                self.seg(calls[0].args[0]))
        if rhs is None:
            return "cannot find where %s is defined" % fix.ref
        for c in calls:
            target = c
            if isinstance(fix.value, _Marker):
                while isinstance(self.parents.get(target), ast.BinOp):
                    target = self.parents[target]
            s, e = self.span(target)
            text = rhs
            if isinstance(self.parents.get(target), ast.BinOp) and " " in rhs:
                text = "(%s)" % rhs
            if not self.patch.add(s, e, text):
                return "conflicts with another fix"
        if pre and call is not None:
            fn = self.parents.get(call)
            first = min([fn.lineno] + [d.lineno for d in getattr(fn, "decorator_list", [])])
            pos = self.line_start(first)
            ind = self.indent(first)
            self.patch.add(pos, pos, "".join(ind + p + self.nl for p in pre), key=("pre", pre[0]))
        self.done[fix.name] = fix.line
        return None

    def finish(self) -> None:
        for stmt, (rhs, pre, after, var) in self.call_rewrites.items():
            ind = self.indent(stmt.lineno)
            if after is not None and after.lineno > stmt.lineno and self.alone(stmt):
                # the value refers to a later definition: move the assignment below it
                comment = self.trailing_comment(stmt)
                s = self.line_start(stmt.lineno)
                e = self.after_line(stmt.end_lineno)
                self.patch.add(s, e, "")
                body = [ind + p for p in pre] + [ind + "%s = %s%s" % (var, rhs, comment)]
                self.insert_after(after.end_lineno, body)
                continue
            s, e = self.span(stmt.value)
            self.patch.add(s, e, rhs)
            if pre:
                pos = self.line_start(stmt.lineno)
                self.patch.add(pos, pos, "".join(ind + p + self.nl for p in pre))
        for stmt, removed in self.dims_removals.items():
            tgt = stmt.targets[0]
            call = stmt.value
            keep = [i for i in range(len(tgt.elts)) if i not in removed]
            ind = self.indent(stmt.lineno)
            new_lines = []
            last = stmt
            for i in sorted(removed):
                rhs, pre, after = removed[i]
                new_lines += [ind + p for p in pre]
                new_lines.append(ind + "%s = %s" % (tgt.elts[i].id, rhs))
                if after is not None and after.end_lineno > last.end_lineno:
                    last = after
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
                if last is stmt and self.alone(stmt):
                    new_lines[-1] += comment
                    s = self.line_start(stmt.lineno)
                    e = self.after_line(stmt.end_lineno)
                    ending = self.lines[stmt.end_lineno - 1][len(
                        self.lines[stmt.end_lineno - 1].rstrip("\r\n")):]
                    self.patch.add(s, e, self.nl.join(new_lines) + ending)
                else:
                    s, e = self.span(stmt)
                    self.patch.add(s, e, "pass" if not self.alone(stmt) else "")
                    self.insert_after(last.end_lineno, new_lines)


# --------------------------------------------------------------------------- toml
def _toml_str(value: str, like: Optional[project.Node], text: str) -> str:
    q = '"'
    if like is not None and like.kind == "string" and text[like.start] == "'":
        q = "'"
    return "%s%s%s" % (q, value, q)


def _bounds_text(dim: Dim) -> str:
    parts = []
    if dim.min is not None and dim.min != 2:
        parts.append("min = %d" % dim.min)
    if dim.max is not None:
        parts.append("max = %d" % dim.max)
    return "{ %s }" % ", ".join(parts) if parts else "{}"


class _TomlFixer:
    def __init__(self, plan: Plan, decl: Declaration) -> None:
        self.plan = plan
        self.decl = decl

    def run(self, fixes: List[Fix]) -> None:
        try:
            self.patch = self.plan.patch(self.decl.file)
            self.lay = project.layout(self.patch.old)
            self.nl = "\r\n" if "\r\n" in self.patch.old else "\n"
        except (OSError, ValueError) as e:
            for f in fixes:
                self.plan.skipped.append((self.decl.name, str(f), "cannot read %s: %s"
                                          % (self.decl.file, e)))
            return
        exports = self.lay.exports()
        table = exports[self.decl.index] if self.decl.index < len(exports) else None
        self.ds = table.keys["dynamic_shapes"][2] if table is not None and \
            "dynamic_shapes" in table.keys else None
        new_dims = {f.dim.name: f for f in fixes if isinstance(f, DefineDim)}
        for fix in fixes:
            if isinstance(fix, DefineDim):
                continue
            try:
                if isinstance(fix, SetEntry):
                    reason = self._set_entry(fix)
                elif isinstance(fix, SetDim):
                    reason = self._set_dim(fix, new_dims)
                else:
                    reason = "unknown fix kind"
            except Exception as e:
                reason = "internal: %s" % e
            if reason:
                self.plan.skipped.append((self.decl.name, str(fix), reason))
            else:
                if isinstance(fix, SetDim) and fix.ref in new_dims:
                    self.plan.applied.append((self.decl.name, str(new_dims[fix.ref])))
                self.plan.applied.append((self.decl.name, str(fix)))

    def _value_text(self, v, like) -> str:
        if isinstance(v, _Marker):
            return _toml_str(repr(v), like, self.patch.old)
        return str(v)

    def _set_entry(self, fix: SetEntry) -> Optional[str]:
        node = self.ds
        for k in fix.entry:
            node = node.child(k) if node is not None else None
        if node is None:
            return "cannot find %s in the dynamic_shapes of this entry" % \
                fix.line.split(" = ")[0]
        if not self.patch.add(node.start, node.end, self._value_text(fix.value, node)):
            return "conflicts with another fix"
        return None

    def _set_bounds(self, dim: Dim) -> Optional[str]:
        text = _bounds_text(dim)
        t = self.lay.find("tool.symshape.dims")
        if t is not None and dim.name in t.keys:
            node = t.keys[dim.name][2]
            if not self.patch.add(node.start, node.end, text):
                return "conflicts with another fix"
            return None
        nl = self.nl
        line = "%s = %s%s" % (dim.name, text, nl)
        if t is not None:
            pos = t.last_key_end
            if pos > 0 and self.patch.old[pos - 1:pos] != "\n":
                line = nl + line
            self.patch.add(pos, pos, line, key=("dimline", dim.name))
            return None
        ex = self.lay.exports()
        pos = ex[0].start if ex else len(self.patch.old)
        table = next((e for e in self.patch.edits if e.key == "dimtable"), None)
        if table is not None:      # a table this fix run already adds: one more line in it
            if ("\n" + line) in table.text or table.text.startswith(line):
                return None
            body = table.text[:-len(nl)]
            table.text = body + line + nl
            return None
        head = "" if pos == 0 or self.patch.old[pos - 1:pos] == "\n" else nl
        self.patch.add(pos, pos, head + "[tool.symshape.dims]" + nl + line + nl,
                       key="dimtable")
        return None

    def _set_dim(self, fix: SetDim, new_dims) -> Optional[str]:
        v = fix.value
        if fix.ref is None and isinstance(v, Dim) and v.name == fix.name:
            return self._set_bounds(v)
        if self.ds is None:
            return "this entry has no dynamic_shapes = ... to edit"
        hits = 0
        for node in self.ds.walk():
            if node.kind != "string":
                continue
            try:
                kind, val = project.parse_axis(node.value)
            except ValueError:
                continue
            if kind != "linear" or val[0] != fix.name:
                continue
            _, c, o = val
            if fix.ref is not None:
                a, b = c * fix.coeff, c * fix.offset + o
                new = str(b) if a == 0 else _toml_str(format_linear(fix.ref, a, b), node,
                                                      self.patch.old)
            elif isinstance(v, _Marker):
                new = _toml_str(repr(v), node, self.patch.old)
            elif isinstance(v, int):
                new = str(c * v + o)
            elif isinstance(v, Dim):
                # a Dim under another name: use that name (and its bounds)
                r = self._set_bounds(v) if (v.min, v.max) != (None, None) else None
                if r:
                    return r
                new = _toml_str(format_linear(v.name, c, o), node, self.patch.old)
            else:
                return "cannot express %r in TOML" % (v,)
            if not self.patch.add(node.start, node.end, new):
                return "conflicts with another fix"
            hits += 1
        if not hits:
            return "no axis of this entry's dynamic_shapes uses %r" % fix.name
        if fix.ref is not None and fix.ref in new_dims:
            d = new_dims[fix.ref].dim
            if (d.min is not None and d.min != 2) or d.max is not None:
                return self._set_bounds(d)
        return None
