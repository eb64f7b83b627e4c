"""The child process of ``symshape check``: imports one project's user modules and exports
each declared export, reporting to the parent over a private pipe.

``symshape check`` runs user code -- module bodies at import, model code at export -- and
nothing that code does may change the report or the exit status.  So it never runs in the
CLI's own process: ``symshape.cli.isolation`` starts this module once per project (the
directory user modules are imported from) with a job on stdin.  At start the child moves its
report channel off file descriptor 1 and points fd 1 at fd 2 (captured by the parent), so
``print``, ``sys.__stdout__``, ``os.write(1, ...)`` and subprocesses of user code cannot reach
the report.  Each step is announced before it runs (``start``) so that when user code ends
the process (``os._exit``) or never returns, the parent knows which module or export did it.

The job may carry an *overlay* -- ``{path: text}`` -- of edited sources that are imported in
place of the files on disk, so ``--fix`` can re-check its edits before writing anything.
"""
from __future__ import annotations

import ast
import base64
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import pickle
import sys
import traceback
from typing import Any, Dict, List, Optional, Tuple

from .. import capture, codegen
from .. import export
from symshape.specs.annotations import spec_for
from ..errors import ConstraintViolationError, UserError
from symshape.algebra.expr import Expr, format_expr
from ..logs import dynamic_log
from ..userframe import internal_dirs
from . import project
from .annotation_fixer import AnnotatedSource, describe
from .exportable import Declaration, registered
from .textsafe import printable

# capture/ and codegen/ register their folders as symshape's own code when they load, so
# that frames in them are never taken for the user's
OWN_CODE = (capture, codegen)


# --------------------------------------------------------------------------- paths
class Paths:
    """Paths as the user should see them: relative to the working directory when below it."""

    def __init__(self, cwd: Optional[str] = None) -> None:
        cwd = cwd or os.getcwd()
        self.prefix = os.path.join(cwd, "") if cwd != os.sep else None

    def rel(self, path: str) -> str:
        if self.prefix and path == self.prefix[:-1]:
            return "."
        if self.prefix and path.startswith(self.prefix):
            return path[len(self.prefix):]
        return path

    def clean(self, text: str) -> str:
        return text.replace(self.prefix, "") if self.prefix else text


def internal_and_import_dirs() -> tuple:
    """symshape's own folders and importlib's: frames there are not the user's."""
    return internal_dirs() + (os.path.join(os.path.dirname(importlib.__file__), ""),)


def _is_internal(filename: str) -> bool:
    return filename.startswith(internal_and_import_dirs()) or filename.startswith("<frozen")


def summarize_exception(exc: BaseException, paths: Paths) -> Tuple[Optional[str], Optional[int],
                                                                   List[str]]:
    """(file, line, lines): the user frames (innermost last, at most 3) and the exception,
    with control characters of user text escaped."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not _is_internal(f.filename)]
    lines = ["%s:%d in %s: %s" % (paths.rel(f.filename), f.lineno, f.name,
                                  printable((f.line or "").strip())) for f in frames[-3:]]
    file, line = (frames[-1].filename, frames[-1].lineno) if frames else (None, None)
    if isinstance(exc, SyntaxError) and exc.filename:
        file, line = os.path.abspath(exc.filename), exc.lineno
        lines.append("%s:%s: %s" % (paths.rel(file), exc.lineno,
                                    printable((exc.text or "").strip())))
        msg = "%s: %s" % (type(exc).__name__, exc.msg)
    else:
        try:
            text = str(exc)
        except Exception:  # noqa: BLE001 - a user exception whose __str__ fails
            text = "<unprintable message>"
        msg = "%s: %s" % (type(exc).__name__, text) if text else type(exc).__name__
    lines.append(printable(paths.clean(msg), keep_newlines=True))
    return file, line, lines


# --------------------------------------------------------------------------- module names
def module_name(path: str) -> Tuple[str, str]:
    """(root, dotted name): the name from the nearest directory without ``__init__.py``."""
    d, base = os.path.split(path)
    stem = os.path.splitext(base)[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(d, "__init__.py")):
        parts.insert(0, os.path.basename(d))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return d, ".".join(parts)


def _mod_file(mod) -> Optional[str]:
    f = getattr(mod, "__file__", None)
    return os.path.abspath(f) if isinstance(f, str) else None


def scan_source(text: str) -> Tuple[bool, set]:
    """(uses ``exportable``, modules it imports) from the module's syntax tree.  Using means
    a name ``exportable`` in the code (``@ss.exportable(...)``, ``from symshape import
    exportable``, a wrapper calling it); a mention in a comment or a string does not count,
    so plain scripts are never run."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return "exportable" in text, set()    # import it: the syntax error is worth reporting
    uses = False
    imports: set = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "exportable":
            uses = True
        elif isinstance(node, ast.Attribute) and node.attr == "exportable":
            uses = True
        elif isinstance(node, ast.ImportFrom):
            if any(a.name == "exportable" for a in node.names):
                uses = True
            if node.module:
                imports.add(node.module)
                imports.update("%s.%s" % (node.module, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
            imports.update(a.name for a in node.names)
    return uses, imports


def read_source(path: str, overlay: Optional[Dict[str, str]] = None) -> str:
    """The text of a user file (the overlay's when it has one), decoding a UTF-8 BOM."""
    if overlay and path in overlay:
        return overlay[path]
    with open(path, "rb") as fh:
        data = fh.read()
    return data.decode("utf-8-sig")


# --------------------------------------------------------------------------- overlay
class _OverlayLoader(importlib.machinery.SourceFileLoader):
    """Loads a module from the overlay text instead of the file (no bytecode cache)."""

    overlay: Dict[str, str] = {}

    def get_data(self, path):
        if path in self.overlay:
            return self.overlay[path].encode("utf-8")
        return super().get_data(path)

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        if path in self.overlay:
            return compile(self.overlay[path], path, "exec", dont_inherit=True)
        return super().get_code(fullname)


class _OverlayFinder(importlib.abc.MetaPathFinder):
    def __init__(self, overlay: Dict[str, str]) -> None:
        self.overlay = overlay

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or os.path.abspath(spec.origin) not in self.overlay:
            return spec
        loader = _OverlayLoader(fullname, os.path.abspath(spec.origin))
        loader.overlay = self.overlay
        return importlib.util.spec_from_file_location(
            fullname, os.path.abspath(spec.origin), loader=loader,
            submodule_search_locations=spec.submodule_search_locations)


def install_overlay(overlay: Dict[str, str]) -> None:
    if overlay:
        sys.meta_path.insert(0, _OverlayFinder(overlay))


# --------------------------------------------------------------------------- results
class Item:
    """One line of the report: an export, or a module / entry that could not be loaded."""

    def __init__(self, kind: str, name: str, file: str, line: int,
                 decl: Optional[Declaration] = None) -> None:
        self.kind = kind            # export | import
        self.name = name
        self.file = file
        self.line = line
        self.decl = decl
        self.status = "pending"     # ok | fail | error
        self.range_constraints: Dict[str, str] = {}
        self.axes: Dict[str, List[str]] = {}
        self.guards: List[str] = []
        self.input_shapes: Dict[str, List[str]] = {}
        self.violations: List[str] = []
        self.notes: List[str] = []
        self.fixes: list = []
        self.warnings: List[str] = []
        self.error: List[str] = []
        # the spec was read from shape annotations: where they are written (for --fix)
        self.annotated = None

    @property
    def key(self) -> str:
        if self.decl is not None:
            return decl_key(self.decl)
        return "import|%s" % self.file

    def sort_key(self, paths: Paths):
        return (paths.rel(self.file), self.line, self.name)

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in (
            "kind", "name", "file", "line", "status", "range_constraints", "axes", "guards",
            "input_shapes", "violations", "notes", "warnings", "error")}
        d["key"] = self.key
        d["fix_lines"] = [str(f) for f in self.fixes]
        d["fixes"] = base64.b64encode(pickle.dumps(self.fixes)).decode() if self.fixes \
            else ""
        d["annotated"] = self.annotated.to_json() if self.annotated is not None else None
        if self.decl is not None:
            dc = self.decl
            d["decl"] = {"file": dc.file, "line": dc.line, "module": dc.module,
                         "qualname": dc.qualname, "origin": dc.origin, "index": dc.index,
                         "call_line": getattr(dc, "call_line", None)}
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Item":
        decl = None
        if d.get("decl"):
            dc = d["decl"]
            decl = Declaration(None, None, None, dc["file"], dc["line"], dc["module"],
                               dc["qualname"], origin=dc["origin"], index=dc["index"])
            decl.call_line = dc.get("call_line")
        it = cls(d["kind"], d["name"], d["file"], d["line"], decl)
        for k in ("status", "range_constraints", "axes", "guards", "input_shapes",
                  "violations", "notes", "warnings", "error"):
            setattr(it, k, d[k])
        it.fixes = pickle.loads(base64.b64decode(d["fixes"])) if d.get("fixes") else []
        if d.get("annotated"):
            it.annotated = AnnotatedSource.from_json(d["annotated"])
        return it


def decl_key(d: Declaration) -> str:
    if d.origin == "toml":
        return "toml|%s|%s" % (d.file, d.index)
    return "py|%s|%d|%s|%s" % (d.file, d.line, d.module, d.qualname)


# --------------------------------------------------------------------------- importing
class Importer:
    """Imports user files by path, each once, under the name its package layout gives."""

    def __init__(self, paths: Paths, announce=lambda what, key: None,
                 names: Optional[Dict[str, Tuple[str, str]]] = None) -> None:
        self.paths = paths
        self.announce = announce
        # file -> (root, dotted name) where a pyproject entry names the file otherwise
        # than its folders do (``app.model`` for app/model.py, app/ without __init__.py)
        self.names = dict(names or {})

    def _front(self, path: str) -> None:
        if path in sys.path:
            sys.path.remove(path)
        sys.path.insert(0, path)

    def loaded(self, path: str) -> Optional[str]:
        """The name a module of file ``path`` is already imported under, if any."""
        for name, mod in list(sys.modules.items()):
            if _mod_file(mod) == path:
                return name
        return None

    def import_file(self, path: str) -> Optional[Item]:
        root, name = self.names.get(path) or module_name(path)
        rel = self.paths.rel(path)
        if self.loaded(path):      # imported by an earlier module: never run it twice
            return None
        if not name or not all(p.isidentifier() for p in name.split(".")):
            item = Item("import", name or rel, path, 1)
            item.status = "error"
            item.error = ["cannot import %s: %r is not a valid module name" % (rel, name)]
            return item
        self._front(root)
        existing = sys.modules.get(name)
        if existing is not None and _mod_file(existing) != path:
            item = Item("import", name, path, 1)
            item.status = "error"
            item.error = ["cannot import %s as module %r: the name is already taken by %s; "
                          "rename it" % (rel, name, self.paths.rel(_mod_file(existing) or
                                                                   repr(existing)))]
            return item
        self.announce("import", path)
        try:
            importlib.import_module(name)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: B902 - a user module may raise anything
            file, line, lines = summarize_exception(e, self.paths)
            item = Item("import", name, path, 1)
            item.status = "error"
            item.error = ["import of %s failed:" % name] + ["  " + l for l in lines]
            if file == path and line:
                item.line = line
            return item
        return None

    def resolve_toml(self, decl: Declaration) -> Optional[str]:
        """Import a TOML entry's function; the error message, or None."""
        root = os.path.dirname(decl.file)
        self._front(root)
        mod_name = decl.module
        if not all(p.isidentifier() for p in mod_name.split(".")):
            return "function = %r: %r is not a module name" % (decl.name, mod_name)
        self.announce("toml", decl_key(decl))
        try:
            mod = importlib.import_module(mod_name)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: B902
            _, _, lines = summarize_exception(e, self.paths)
            return "\n".join(["function = %r: import of %s failed:" % (decl.name, mod_name)]
                             + ["  " + l for l in lines])
        obj: Any = mod
        for part in decl.qualname.split("."):
            if not hasattr(obj, part):
                return "function = %r: module %s (%s) has no attribute %r" % (
                    decl.name, mod_name, self.paths.rel(_mod_file(mod) or "?"), part)
            obj = getattr(obj, part)
        if not callable(obj):
            return "function = %r is a %s, not a function" % (decl.name, type(obj).__name__)
        decl.fn = obj
        return None


def collect(files: List[str], pyprojects: List[str], paths: Paths, importer: Importer,
            overlay: Dict[str, str], skip=frozenset()) -> List[Item]:
    """Import ``files``, read the entries of ``pyprojects``: the report items, sorted."""
    items: List[Item] = []
    for f in files:
        problem = importer.import_file(f)
        if problem is not None:
            items.append(problem)
    seen = set()
    for d in registered():
        # one declaration even if user code imported its module under a second name
        if d.file in files and (d.file, d.line, d.qualname) not in seen:
            seen.add((d.file, d.line, d.qualname))
            items.append(Item("export", d.name, d.file, d.line, d))
    for pp in pyprojects:
        try:
            decls = project.declarations(pp, text=overlay.get(pp))
        except UserError as e:
            item = Item("import", paths.rel(pp), pp, 1)
            item.status = "error"
            item.error = [printable(paths.clean(str(e)), keep_newlines=True)]
            items.append(item)
            continue
        for d in decls:
            item = Item("export", d.name, d.file, d.line, d)
            if decl_key(d) in skip:
                continue
            err = d.error or importer.resolve_toml(d)
            if err:
                item.status = "error"
                item.error = printable(paths.clean(err), keep_newlines=True).splitlines()
            items.append(item)
    items.sort(key=lambda it: it.sort_key(paths))
    return items


# --------------------------------------------------------------------------- checking
class _Capture(logging.Handler):
    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.records: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.records.append(record.getMessage())
        except Exception:  # pragma: no cover
            pass


class captured_logs:
    """Capture ``symshape.dynamic`` records at ``level`` (and keep them off stderr)."""

    def __init__(self, level: int) -> None:
        self.level = level

    def __enter__(self) -> _Capture:
        self.log = dynamic_log
        self.handler = _Capture(self.level)
        self.old = (dynamic_log.level, dynamic_log.propagate)
        if dynamic_log.getEffectiveLevel() > self.level:
            dynamic_log.setLevel(self.level)
        dynamic_log.propagate = False
        dynamic_log.addHandler(self.handler)
        return self.handler

    def __exit__(self, *exc) -> None:
        self.log.removeHandler(self.handler)
        self.log.setLevel(self.old[0])
        self.log.propagate = self.old[1]


def _bound_text(b) -> str:
    # the notation of every other message and of print(ep): [2, int_oo]
    return str(b)


def contract(ep) -> Tuple[Dict[str, str], Dict[str, List[str]]]:
    """The program's range constraints keyed by the user's Dim names (an unnamed dim by the
    first input axis it stands for), and the input axes each stands for."""
    cs = ep.constraints
    axes: Dict[Any, List[str]] = {}
    derived: List[Tuple[Any, str, Any]] = []
    for d in cs.inputs:
        dims = d.dims if d.is_array else ((d.sym,) if d.sym is not None else ())
        for i, e in enumerate(dims):
            if type(e) is not Expr:
                continue
            where = "%s.shape[%d]" % (d.path, i) if d.is_array else d.path
            s = e.as_symbol()
            if s is not None:
                axes.setdefault(s, []).append(where)
            elif len(e.free_symbols) == 1:
                derived.append((next(iter(e.free_symbols)), where, e))

    def name(s) -> str:
        return cs.dim_names.get(s) or (axes.get(s) or [s.name])[0]

    for s, where, e in derived:     # x.shape[1] = 4*blocks, listed under blocks
        axes.setdefault(s, []).append("%s = %s" % (where, format_expr(e, name)))

    ranges: Dict[str, str] = {}
    named_axes: Dict[str, List[str]] = {}
    for e, vr in cs.range_constraints().items():
        s = e.as_symbol() if type(e) is Expr else None
        key = name(s) if s is not None else format_expr(e, name)
        ranges[key] = "[%s, %s]" % (_bound_text(vr.lower), _bound_text(vr.upper))
        if s is not None:
            named_axes[key] = list(axes.get(s, []))
    return ranges, named_axes


def check_one(item: Item, paths: Paths) -> None:
    decl = item.decl
    with captured_logs(logging.WARNING) as cap:
        try:
            args, kwargs = decl.inputs()
            # no dynamic_shapes declared: the function's shape annotations, if any
            spec = spec_for(decl.fn, decl.dynamic_shapes)
            # None unless read from annotations
            item.annotated = describe(decl.fn, spec, decl.dynamic_shapes is not None)
            ep = export(decl.fn, args, kwargs, dynamic_shapes=spec)
        except ConstraintViolationError as e:
            item.status = "fail"
            item.violations = [printable(paths.clean(v), keep_newlines=True)
                               for v in e.violations]
            item.notes = [printable(paths.clean(n), keep_newlines=True) for n in e.notes]
            item.fixes = list(e.suggested_fixes)
        except UserError as e:
            item.status = "fail"
            item.violations = [printable(paths.clean(str(e)), keep_newlines=True)]
            item.notes = project.shape_like_lists(decl)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: B902 - the model code may raise anything
            item.status = "error"
            _, _, lines = summarize_exception(e, paths)
            item.error = ["export raised an exception (not a spec problem):"] + \
                ["  " + l for l in lines] + project.shape_like_lists(decl)
        else:
            item.status = "ok"
            item.range_constraints, item.axes = contract(ep)
            item.guards = [printable(str(g)) for g in getattr(ep, "guards", ()) or ()]
            item.input_shapes = {k: [str(s) for s in v] for k, v in ep.input_shapes.items()}
    seen: List[str] = []
    for r in cap.records:
        r = printable(paths.clean(r), keep_newlines=True)
        if r not in seen:
            seen.append(r)
    item.warnings = seen


def module_hashes(overlay: Dict[str, str]) -> Dict[str, str]:
    """{file: sha256 of its bytes} for every user module imported so far (not symshape's,
    the standard library's or an installed package's; not an overlay's edited text): what
    ``--fix`` may edit must still hold what was checked."""
    import hashlib
    prefixes = tuple(os.path.join(os.path.abspath(p), "") for p in
                     {sys.prefix, sys.base_prefix, sys.exec_prefix})
    out: Dict[str, str] = {}
    for mod in list(sys.modules.values()):
        f = _mod_file(mod)
        if f is None or f in overlay or f in out or _is_internal(f) or f.startswith(prefixes):
            continue
        try:
            with open(f, "rb") as fh:
                out[f] = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            pass
    return out


# --------------------------------------------------------------------------- child main
def run_job(job: dict, send) -> None:
    """Do one job: ``files`` to import, ``pyprojects`` to read, ``skip`` keys already
    reported by an earlier child of this project, ``overlay`` texts."""
    paths = Paths(job["cwd"])
    overlay = {os.path.abspath(k): v for k, v in (job.get("overlay") or {}).items()}
    install_overlay(overlay)
    skip = set(job.get("skip") or ())
    importer = Importer(paths, lambda what, key: send({"ev": "start", "what": what,
                                                       "key": key}),
                        {f: tuple(v) for f, v in (job.get("names") or {}).items()})
    files = [f for f in job["files"] if "import|%s" % f not in skip]
    items = collect(files, job["pyprojects"], paths, importer, overlay, skip)
    send({"ev": "sources", "files": module_hashes(overlay)})
    items = [it for it in items if it.key not in skip]
    send({"ev": "items", "items": [it.to_json() for it in items]})
    for it in items:
        if it.status != "pending":
            continue
        send({"ev": "start", "what": "check", "key": it.key})
        check_one(it, paths)
        send({"ev": "result", "item": it.to_json()})
    send({"ev": "end"})


def main() -> None:
    """Entry point of the child: the job on stdin, events as JSON lines on the report
    channel (the original fd 1, private from here on)."""
    report = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)                       # user writes to fd 1 go to the captured output
    sys.dont_write_bytecode = True
    job = json.loads(sys.stdin.read())
    sys.stdin.close()
    os.chdir(job["cwd"])

    def send(msg: dict) -> None:
        report.write(json.dumps(msg) + "\n")
        report.flush()

    try:
        run_job(job, send)
    except KeyboardInterrupt:
        os._exit(130)
    except BaseException as e:  # noqa: B902 - report, never a bare traceback
        send({"ev": "crash", "error": "".join(traceback.format_exception(e))[-4000:]})
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    # user atexit handlers and lingering threads must not change anything now
    os._exit(0)
