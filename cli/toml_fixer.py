"""``--fix`` on ``[[tool.symshape.exports]]`` entries of pyproject.toml: bounds collected per
file and merged, written to ``[tool.symshape.dims]`` (``finish_toml``; tomlkit for dotted keys,
inline tables and sub-tables); relations, static values and markers rewrite the axis strings of
the entry's ``dynamic_shapes``; ``SetEntry`` replaces the element at ``entry``."""
from __future__ import annotations

import difflib
import os
import re
from typing import List, Optional

from ..contract.fixes import DefineDim, Fix, MarkAxis, SetDim, SetEntry
from symshape.specs.dims import Dim, Marker, format_linear
from .exportable import Declaration
from . import project
from .fix_plan import MARK_BY_HAND, FilePatch, Plan

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


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(name: str) -> str:
    """A TOML key for ``name``: bare when it may be, else a basic string."""
    import json
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def finish_toml(plan: Plan) -> None:
    """Write the recorded ``[tool.symshape.dims]`` bounds of each pyproject.toml: the value
    of a key of a plain ``[tool.symshape.dims]`` table in place, new keys below its last
    one, a new table before the first export; bounds written as dotted keys, an inline
    table or sub-tables are edited with tomlkit (which keeps the rest of the file)."""
    for path, bounds in plan.toml_bounds.items():
        patch = plan.patch(path)
        text = patch.old
        nl = "\r\n" if "\r\n" in text else "\n"
        lay = project.layout(text)
        table = lay.find("tool.symshape.dims")
        try:
            data = project.load_toml(path, text)
        except Exception:  # noqa: BLE001 - parse_problem reports it
            data = {}
        elsewhere = isinstance(data.get("tool", {}).get("symshape", {}).get("dims"), dict) \
            and table is None
        if elsewhere or (table is not None and any(
                n not in table.keys and n in data["tool"]["symshape"]["dims"]
                for n in bounds)):
            _tomlkit_bounds(plan, patch, bounds)
            continue
        new_lines = []
        for name, (lo, hi, owners) in bounds.items():
            patch.owner = set(owners)
            text_b = _bounds_text(Dim(name, min=lo if lo != 2 else None, max=hi))
            if table is not None and name in table.keys:
                node = table.keys[name][2]
                patch.add(node.start, node.end, text_b)
            else:
                new_lines.append("%s = %s" % (_toml_key(name), text_b))
        if not new_lines:
            continue
        body = "".join(l + nl for l in new_lines)
        if table is not None:
            pos = table.last_key_end
            if pos > 0 and text[pos - 1:pos] != "\n":
                body = nl + body
            patch.add(pos, pos, body)
        else:
            ex = lay.exports()
            pos = ex[0].start if ex else len(text)
            head = "" if pos == 0 or text[pos - 1:pos] == "\n" else nl
            patch.add(pos, pos, head + "[tool.symshape.dims]" + nl + body + nl)


def _tomlkit_bounds(plan: Plan, patch: FilePatch, bounds) -> None:
    owners = set().union(*[o for _, _, o in bounds.values()])
    try:
        import tomlkit
    except ImportError:
        for o in owners:
            plan.refused[o] = ("the bounds in %s are not a plain [tool.symshape.dims] "
                               "table: editing them needs tomlkit (pip install "
                               "'symshape[fix]')" % os.path.basename(patch.path))
        return
    doc = tomlkit.parse(patch.old)
    dims = doc["tool"]["symshape"]["dims"]
    for name, (lo, hi, _) in bounds.items():
        want = {"min": lo if lo != 2 else None, "max": hi}
        cur = dims.get(name)
        if isinstance(cur, dict):       # a sub-table or inline table: set its keys
            for k, v in want.items():
                if v is not None:
                    cur[k] = v
                elif k in cur:
                    del cur[k]
            continue
        t = tomlkit.inline_table()
        for k, v in want.items():
            if v is not None:
                t[k] = v
        dims[name] = t
    new = tomlkit.dumps(doc)
    if "\r\n" in patch.old:      # tomlkit ends the lines it adds with \n
        new = re.sub(r"(?<!\r)\n", "\r\n", new)
    # the change as edits of the original text, so that they merge with the others
    sm = difflib.SequenceMatcher(None, patch.old, new, autojunk=False)
    patch.owner = set(owners)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op != "equal":
            patch.add(i1, i2, new[j1:j2])


class TomlFixer:
    """The fixes of one TOML-declared export, as edits of its pyproject.toml."""

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
                elif isinstance(fix, MarkAxis):
                    reason = MARK_BY_HAND
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
        if isinstance(v, Marker):
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
        """Record the bounds ``dim`` needs; ``finish_toml`` writes them once per file, the
        intersection when several exports bound the same name."""
        bounds = self.plan.toml_bounds.setdefault(self.decl.file, {})
        lo = dim.min if dim.min is not None else 2
        prev = bounds.get(dim.name)
        if prev is not None:
            plo, phi, owners = prev
            lo = max(lo, plo)
            his = [h for h in (phi, dim.max) if h is not None]
            hi = min(his) if his else None
            if hi is not None and hi < lo:
                return ("the bounds of %r needed by two exports do not meet ([%d, %s] and "
                        "%s)" % (dim.name, plo, phi, _bounds_text(dim)))
        else:
            hi, owners = dim.max, set()
        owners.add(self.patch.owner)
        bounds[dim.name] = (lo, hi, owners)
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
            elif isinstance(v, Marker):
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
