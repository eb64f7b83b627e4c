"""The edit plan of ``symshape check --fix`` / ``--diff``: targeted text edits at exact
positions of each file (``FilePatch``), owned by the export whose fix made them, and the
``Plan`` that collects them, shows them as a diff and writes them atomically
(``symshape.cli.safe_write``).  The Python, TOML and annotation fixers add edits to it."""
from __future__ import annotations

import ast
import difflib
from typing import Dict, List, Optional, Tuple

from .safe_write import Baseline, NotWritten, preflight, replace_file

# a fix that marks an axis of an input the spec leaves out: the spec gains an entry, whose
# shape in the source (a dict literal, a variable, a TOML table) only its author knows
MARK_BY_HAND = "it adds an input's axis to the spec: write it by hand, as the line says"


class Edit:
    __slots__ = ("start", "end", "text", "seq", "key", "owners")

    def __init__(self, start: int, end: int, text: str, seq: int, key=None,
                 owner: Optional[str] = None) -> None:
        self.start, self.end, self.text, self.seq, self.key = start, end, text, seq, key
        self.owners = _owners(owner)


def _owners(owner) -> set:
    """An edit's exports: one key, or a set of them (an edit merged from several fixes)."""
    if isinstance(owner, (set, frozenset)):
        return set(owner)
    return {owner} if owner else set()


class FilePatch:
    """The edits planned for one file, over the text read from it (``raw``: its bytes)."""

    def __init__(self, path: str, raw: bytes, text: str, encoding: str) -> None:
        self.path = path
        self.raw = raw
        self.old = text
        self.encoding = encoding
        self.edits: List[Edit] = []
        self._seq = 0
        self.owner = None       # the export (key, or set of keys) whose fixes are placed

    def add(self, start: int, end: int, text: str, key=None) -> bool:
        """Add an edit; False if it overlaps a different edit (identical ones merge)."""
        for e in self.edits:
            if (e.start, e.end, e.text) == (start, end, text) and start != end:
                e.owners |= _owners(self.owner)
                return True
            if key is not None and e.key == key:
                if e.text == text:
                    e.owners |= _owners(self.owner)
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
    """Edits per file, over the file's text (or ``base[path]``, an edited text not yet
    written: a later round of fixes builds on an earlier one)."""

    def __init__(self, base: Optional[Dict[str, str]] = None) -> None:
        self.base = base or {}
        self.patches: Dict[str, FilePatch] = {}
        self.applied: List[Tuple[str, str]] = []        # (export name, fix line)
        self.skipped: List[Tuple[str, str, str]] = []   # (export name, fix line, reason)
        self.owner: Optional[str] = None
        # pyproject.toml -> Dim name -> (min, max, exports), written by finish_toml
        self.toml_bounds: Dict[str, Dict[str, tuple]] = {}
        self.refused: Dict[str, str] = {}       # export key -> why its edits cannot be made

    def patch(self, path: str) -> FilePatch:
        if path not in self.patches:
            raw, text, encoding = read_text(path)
            self.patches[path] = FilePatch(path, raw, self.base.get(path, text), encoding)
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

    def write(self, baseline: Optional[Baseline] = None
              ) -> Tuple[List[str], List[Tuple[str, str]]]:
        """Replace each changed file atomically: (written, [(path, why not)]).  Every file
        is checked (unchanged since read -- and since ``baseline``, what the check read --,
        writable) before the first is replaced; a failure while writing stops there,
        leaving the rest untouched."""
        import linecache
        changed = self.changed()
        blocked = []
        for path in changed:
            why = baseline.changed(path, self.patches[path].raw) if baseline else None
            if why is not None:
                blocked.append((path, why))
                continue
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


def final_plan(texts: Dict[str, str], first: Dict[str, "FilePatch"]) -> Plan:
    """A plan that turns each file, as first read (``first[path]``: bytes, text, encoding),
    into ``texts[path]``; writing it still refuses a file changed since that first read."""
    plan = Plan()
    for path, text in sorted(texts.items()):
        f = first[path]
        p = plan.patches[path] = FilePatch(path, f.raw, f.raw.decode(f.encoding), f.encoding)
        if text != p.old:
            p.add(0, len(p.old), text)
    return plan
