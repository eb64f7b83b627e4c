"""The ``symshape`` command: ``symshape check`` validates declared exports, ``symshape explain``
shows the log of one.

``symshape check [PATHS...]`` imports every ``.py`` file under PATHS that mentions
``exportable`` (so scripts that only run are never executed), collects the
``@ss.exportable`` declarations they register and the ``[[tool.symshape.exports]]`` entries of
the nearest ``pyproject.toml``, exports each and reports, sorted by file and line.  Exit
status: 0 all exports pass, 1 any export fails (a violated spec, or another ``UserError``
from ``export``), 2 a usage error, a user module that fails to import, or an export that
raised something other than a ``UserError`` (a bug in the model code).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import sys
import traceback
from typing import Any, Dict, List, Optional, Tuple

from . import __version__
from .errors import ConstraintViolationError, UserError
from .exportable import Declaration, forget_file, registered

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2

# directories never entered while walking a PATH (a PATH named explicitly is always searched)
SKIP_DIRS = {"tests", "test", "__pycache__", "build", "dist", "venv", "env",
             "node_modules", "site-packages"}
MARK = "exportable"


class UsageError(Exception):
    pass


# --------------------------------------------------------------------------- paths
class Paths:
    """Paths as the user should see them: relative to the working directory when below it."""

    def __init__(self) -> None:
        cwd = os.getcwd()
        self.prefix = os.path.join(cwd, "") if cwd != os.sep else None

    def rel(self, path: str) -> str:
        if self.prefix and path == self.prefix[:-1]:
            return "."
        if self.prefix and path.startswith(self.prefix):
            return path[len(self.prefix):]
        return path

    def clean(self, text: str) -> str:
        return text.replace(self.prefix, "") if self.prefix else text


def _internal_dirs() -> tuple:
    from .userframe import _SKIP
    return _SKIP + (os.path.join(os.path.dirname(importlib.__file__), ""),)


def _is_internal(filename: str) -> bool:
    return filename.startswith(_internal_dirs()) or filename.startswith("<frozen")


def summarize_exception(exc: BaseException, paths: Paths) -> Tuple[Optional[str], Optional[int],
                                                                   List[str]]:
    """(file, line, lines): the user frames (innermost last, at most 3) and the exception."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not _is_internal(f.filename)]
    lines = ["%s:%d in %s: %s" % (paths.rel(f.filename), f.lineno, f.name,
                                  (f.line or "").strip()) for f in frames[-3:]]
    file, line = (frames[-1].filename, frames[-1].lineno) if frames else (None, None)
    if isinstance(exc, SyntaxError) and exc.filename:
        file, line = os.path.abspath(exc.filename), exc.lineno
        lines.append("%s:%s: %s" % (paths.rel(file), exc.lineno, (exc.text or "").strip()))
        msg = "%s: %s" % (type(exc).__name__, exc.msg)
    else:
        msg = "%s: %s" % (type(exc).__name__, exc) if str(exc) else type(exc).__name__
    lines.append(paths.clean(msg))
    return file, line, lines


# --------------------------------------------------------------------------- collecting
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
        self.input_shapes: Dict[str, List[str]] = {}
        self.violations: List[str] = []
        self.notes: List[str] = []
        self.fixes: list = []
        self.warnings: List[str] = []
        self.error: List[str] = []

    def key(self, paths: Paths):
        return (paths.rel(self.file), self.line, self.name)


def _module_name(path: str) -> Tuple[str, str]:
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


# module names (and their packages) that a check imported in this process
_IMPORTED: set = set()


def _remember(name: str) -> None:
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        _IMPORTED.add(".".join(parts[:i]))


def _front(path: str) -> None:
    if path in sys.path:
        sys.path.remove(path)
    sys.path.insert(0, path)


def _mod_file(mod) -> Optional[str]:
    f = getattr(mod, "__file__", None)
    return os.path.abspath(f) if f else None


def _walk(path: str, pyprojects: Optional[List[str]] = None) -> List[str]:
    """The .py files under ``path`` that mention ``exportable``; the pyproject.toml files
    met on the way are added to ``pyprojects``."""
    if os.path.isfile(path):
        return [path] if path.endswith(".py") else []
    own = tuple(os.path.join(d, "") for d in _internal_dirs())
    out = []
    for d, subdirs, files in os.walk(path):
        subdirs[:] = sorted(s for s in subdirs if not s.startswith(".") and s not in SKIP_DIRS
                            and not os.path.join(d, s, "").startswith(own)
                            and not os.path.isfile(os.path.join(d, s, "pyvenv.cfg")))
        if pyprojects is not None and "pyproject.toml" in files:
            pp = os.path.abspath(os.path.join(d, "pyproject.toml"))
            if pp not in pyprojects:
                pyprojects.append(pp)
        for f in sorted(files):
            if f.endswith(".py") and not f.startswith("."):
                full = os.path.join(d, f)
                try:
                    with open(full, encoding="utf-8", errors="replace") as fh:
                        if MARK in fh.read():
                            out.append(full)
                except OSError:
                    pass
    return out


class Collector:
    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.fresh: Dict[str, str] = {}     # module name -> file, imported in this run

    def purge(self, files: List[str]) -> None:
        """Forget earlier imports of ``files`` (and their packages) so that this run sees
        the current source (after --fix, and when main() runs twice in one process)."""
        targets = set()
        for f in files:
            targets.add(f)
            d = os.path.dirname(f)
            while os.path.isfile(os.path.join(d, "__init__.py")):
                targets.add(os.path.join(d, "__init__.py"))
                if os.path.dirname(d) == d:
                    break
                d = os.path.dirname(d)
        for name, mod in list(sys.modules.items()):
            if name == "symshape" or name.startswith("symshape."):
                continue
            if _mod_file(mod) in targets:
                del sys.modules[name]
        for f in files:
            forget_file(f)

    def _clear_way(self, name: str, root: str, path: Optional[str] = None) -> Optional[str]:
        """Make ``import name`` load from ``root``: forget modules of that name (or of its
        packages) that an earlier check imported from elsewhere.  The error, or None."""
        parts = name.split(".")
        under = os.path.join(root, "")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            mod = sys.modules.get(prefix)
            if mod is None:
                continue
            f = _mod_file(mod)
            if path is not None and i == len(parts):
                fine = f == path
            else:
                fine = f is not None and f.startswith(under)
            if fine:
                continue
            if prefix not in _IMPORTED:
                return ("cannot import %s as module %r: the name %r is already taken by %s; "
                        "rename it" % (self.paths.rel(path or root), name, prefix,
                                       self.paths.rel(f) if f else repr(mod)))
            for n in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
                del sys.modules[n]
            break
        return None

    def import_file(self, path: str) -> Optional[Item]:
        root, name = _module_name(path)
        rel = self.paths.rel(path)
        if not name or not all(p.isidentifier() for p in name.split(".")):
            item = Item("import", name or rel, path, 1)
            item.status = "error"
            item.error = ["cannot import %s: %r is not a valid module name" % (rel, name)]
            return item
        _front(root)
        clash = self._clear_way(name, root, path)
        if clash:
            item = Item("import", name, path, 1)
            item.status = "error"
            item.error = [clash]
            return item
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
        finally:
            _remember(name)
        self.fresh[name] = path
        return None

    def resolve_toml(self, decl: Declaration) -> Optional[str]:
        """Import a TOML entry's function; the error message, or None."""
        root = os.path.dirname(decl.file)
        _front(root)
        mod_name = decl.module
        if not all(p.isidentifier() for p in mod_name.split(".")):
            return "function = %r: %r is not a module name" % (decl.name, mod_name)
        existing = sys.modules.get(mod_name)
        if existing is not None and mod_name not in self.fresh:
            f = _mod_file(existing)
            if f and f.startswith(os.path.join(root, "")):
                self.purge([f])
        clash = self._clear_way(mod_name, root)
        if clash:
            return "function = %r: %s" % (decl.name, clash)
        try:
            mod = importlib.import_module(mod_name)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: B902
            _, _, lines = summarize_exception(e, self.paths)
            return "\n".join(["function = %r: import of %s failed:" % (decl.name, mod_name)]
                             + ["  " + l for l in lines])
        finally:
            _remember(mod_name)
        self.fresh[mod_name] = _mod_file(mod) or ""
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

    def collect(self, targets: List[str]) -> List[Item]:
        from . import project
        items: List[Item] = []
        files: List[str] = []
        pyprojects: List[str] = []
        roots = []
        for t in targets:
            full = os.path.abspath(t)
            if not os.path.exists(full):
                raise UsageError("no such file or directory: %s" % t)
            roots.append(full)
            if os.path.basename(full) == "pyproject.toml":
                pyprojects.append(full)
                continue
            pp = project.find_pyproject(full)
            if pp is not None and pp not in pyprojects:
                pyprojects.append(pp)
            for f in _walk(full, pyprojects):
                f = os.path.abspath(f)
                if f not in files:
                    files.append(f)
        self.purge(files)
        old = sys.dont_write_bytecode
        sys.dont_write_bytecode = True
        try:
            for f in files:
                problem = self.import_file(f)
                if problem is not None:
                    items.append(problem)
            under = tuple(r if os.path.isfile(r) else os.path.join(r, "") for r in roots)
            for d in registered():
                if d.file in files or d.file.startswith(under):
                    items.append(Item("export", d.name, d.file, d.line, d))
            for pp in pyprojects:
                try:
                    decls = project.declarations(pp)
                except UserError as e:
                    item = Item("import", self.paths.rel(pp), pp, 1)
                    item.status = "error"
                    item.error = [self.paths.clean(str(e))]
                    items.append(item)
                    continue
                for d in decls:
                    item = Item("export", d.name, d.file, d.line, d)
                    err = d.error or self.resolve_toml(d)
                    if err:
                        item.status = "error"
                        item.error = self.paths.clean(err).splitlines()
                    items.append(item)
        finally:
            sys.dont_write_bytecode = old
        items.sort(key=lambda it: it.key(self.paths))
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
        from .logs import dynamic_log
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


def check_one(item: Item, paths: Paths) -> None:
    from . import export
    decl = item.decl
    with captured_logs(logging.WARNING) as cap:
        try:
            args, kwargs = decl.inputs()
            # no dynamic_shapes declared: the function's shape annotations, if any
            from .annotations import spec_for
            ep = export(decl.fn, args, kwargs,
                        dynamic_shapes=spec_for(decl.fn, decl.dynamic_shapes))
        except ConstraintViolationError as e:
            item.status = "fail"
            item.violations = [paths.clean(v) for v in e.violations]
            item.notes = [paths.clean(n) for n in e.notes]
            item.fixes = list(e.suggested_fixes)
        except UserError as e:
            item.status = "fail"
            item.violations = [paths.clean(str(e))]
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: B902 - the model code may raise anything
            item.status = "error"
            _, _, lines = summarize_exception(e, paths)
            item.error = ["export raised an exception (not a spec problem):"] + \
                ["  " + l for l in lines]
        else:
            item.status = "ok"
            item.range_constraints = {str(k): str(v) for k, v in ep.range_constraints.items()}
            item.input_shapes = {k: [str(s) for s in v] for k, v in ep.input_shapes.items()}
    seen = []
    for r in cap.records:
        r = paths.clean(r)
        if r not in seen:
            seen.append(r)
    item.warnings = seen


# --------------------------------------------------------------------------- reporting
def _ranges_text(rc: Dict[str, str]) -> str:
    return "{%s}" % ", ".join("%s: %s" % kv for kv in rc.items())


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def item_json(item: Item, paths: Paths) -> dict:
    return {"name": item.name, "kind": item.kind, "file": paths.rel(item.file),
            "line": item.line, "status": item.status,
            "range_constraints": item.range_constraints, "input_shapes": item.input_shapes,
            "violations": item.violations, "notes": item.notes,
            "fixes": [str(f) for f in item.fixes], "warnings": item.warnings,
            "error": item.error}


def item_text(item: Item, paths: Paths) -> List[str]:
    where = "%s:%d" % (paths.rel(item.file), item.line)
    if item.status == "ok":
        lines = ["ok   %s  %s" % (item.name, _ranges_text(item.range_constraints))]
        lines += ["  warning: %s" % w for w in item.warnings]
        return lines
    if item.status == "fail":
        lines = ["FAIL %s  (%s)" % (item.name, where)]
        for v in item.violations:
            lines.append("  - " + v.replace("\n", "\n    "))
        lines += ["  " + n for n in item.notes]
        if item.fixes:
            lines.append("  Suggested fixes:")
            lines += ["    %s" % f for f in item.fixes]
        return lines
    return ["ERROR %s  (%s)" % (item.name, where)] + ["  " + l for l in item.error]


def item_message(item: Item) -> str:
    if item.status == "fail":
        lines = ["%s: the dynamic_shapes spec is violated" % item.name]
        lines += ["- " + v for v in item.violations] + item.notes
        if item.fixes:
            lines.append("Suggested fixes:")
            lines += ["  %s" % f for f in item.fixes]
        return "\n".join(lines)
    return "\n".join(["%s: error" % item.name] + item.error)


def summary(items: List[Item]) -> Tuple[str, dict, int]:
    exports = [i for i in items if i.kind == "export"]
    ok = sum(i.status == "ok" for i in exports)
    failed = sum(i.status == "fail" for i in exports)
    errors = sum(i.status == "error" for i in exports)
    imports = sum(i.kind == "import" for i in items)
    text = "%d exports: %d ok, %d failed, %d errors" % (len(exports), ok, failed, errors)
    if imports:
        text += "; %d module%s failed to import" % (imports, "" if imports == 1 else "s")
    code = EXIT_ERROR if (errors or imports) else (EXIT_FAIL if failed else EXIT_OK)
    return text, {"exports": len(exports), "ok": ok, "failed": failed, "errors": errors,
                  "import_errors": imports, "exit_code": code}, code


class Reporter:
    def __init__(self, fmt: str, out, err, quiet: bool, paths: Paths) -> None:
        self.fmt, self.out, self.err, self.quiet, self.paths = fmt, out, err, quiet, paths

    def say(self, line: str = "") -> None:
        print(line, file=self.out)

    def progress(self, item: Item) -> None:
        if not self.quiet:
            stream = self.out if self.fmt == "text" else self.err
            print("checking %s ..." % item.name, file=stream)
            stream.flush()

    def result(self, item: Item) -> None:
        if self.fmt == "text":
            for l in item_text(item, self.paths):
                self.say(l)
        elif self.fmt == "github":
            if item.status == "ok":
                self.say(item_text(item, self.paths)[0])
                for w in item.warnings:
                    self.say("::warning file=%s,line=%d,title=symshape::%s" % (
                        _gh_prop(self.paths.rel(item.file)), item.line,
                        _gh_data("%s: %s" % (item.name, w))))
            else:
                self.say("::error file=%s,line=%d,title=symshape::%s" % (
                    _gh_prop(self.paths.rel(item.file)), item.line,
                    _gh_data(item_message(item))))


def run_check(targets: List[str], reporter: Reporter, paths: Paths) -> Tuple[List[Item], dict,
                                                                              int, str]:
    quiet_user = contextlib.redirect_stdout(reporter.err)   # user prints: keep stdout clean
    with quiet_user:
        items = Collector(paths).collect(targets)
    if not items:
        raise UsageError("no exports found under %s: declare them with @ss.exportable(...) "
                         "or [[tool.symshape.exports]] in pyproject.toml"
                         % " ".join(targets))
    for item in items:
        if item.status == "pending":
            reporter.progress(item)
            with contextlib.redirect_stdout(reporter.err):
                check_one(item, paths)
        reporter.result(item)
    text, summ, code = summary(items)
    return items, summ, code, text


def cmd_check(args, out, err) -> int:
    paths = Paths()
    targets = args.paths or ["."]
    rep = Reporter(args.format, out, err, args.quiet, paths)
    items, summ, code, text = run_check(targets, rep, paths)
    doc: Dict[str, Any] = {"exports": [item_json(i, paths) for i in items], "summary": summ}
    if args.format != "json":
        rep.say(text)
    fixable = [(i.decl, i.fixes) for i in items if i.status == "fail" and i.fixes]
    if not (args.fix or args.diff):
        if fixable and args.format == "text":
            cmd = " ".join(["symshape check --fix"] + list(args.paths))
            rep.say("apply the suggested fixes with `%s` (preview: --diff)" % cmd)
        if args.format == "json":
            json.dump(doc, out, indent=2)
            out.write("\n")
        return code
    if not fixable:
        if args.format == "json":
            doc.update({"applied": [], "not_applied": []})
            json.dump(doc, out, indent=2)
            out.write("\n")
        elif code != EXIT_OK:
            rep.say("no suggested fixes to apply")
        return code
    from .fixer import plan_fixes
    plan = plan_fixes(fixable)
    diff = paths.clean(plan.diff(paths.rel))
    skipped = ["%s: %s  (%s)" % (n, line, paths.clean(why)) for n, line, why in plan.skipped]
    doc["applied"] = ["%s: %s" % a for a in plan.applied]
    doc["not_applied"] = skipped
    if args.diff:
        doc["diff"] = diff
        if args.format == "json":
            json.dump(doc, out, indent=2)
            out.write("\n")
            return code
        rep.say()
        rep.say(diff.rstrip("\n") if diff else "--diff: no change to make")
        for s in skipped:
            rep.say("not applied (do it by hand): " + s)
        return code
    written = plan.write()
    doc["written"] = [paths.rel(p) for p in written]
    if args.format != "json":
        rep.say()
        if written:
            for p in written:
                rep.say("fixed %s" % paths.rel(p))
        else:
            rep.say("--fix: no change to make")
        for s in skipped:
            rep.say("not applied (do it by hand): " + s)
        if not written:
            return code
        rep.say("re-checking after --fix:")
    elif not written:
        json.dump(doc, out, indent=2)
        out.write("\n")
        return code
    items2, summ2, code2, text2 = run_check(targets, rep, paths)
    doc["recheck"] = {"exports": [item_json(i, paths) for i in items2], "summary": summ2}
    if args.format == "json":
        json.dump(doc, out, indent=2)
        out.write("\n")
    else:
        rep.say(text2)
    return code2


# --------------------------------------------------------------------------- explain
def find_declaration(target: str, root: str, paths: Paths) -> Declaration:
    """The declaration ``module:function`` (or ``path/to/file.py:function``) names: an
    ``@exportable`` function of that module, else an entry of the nearest pyproject.toml."""
    from . import project
    modpart, sep, qual = target.rpartition(":")
    if not sep or not modpart or not qual:
        raise UsageError("explain takes module:function (or path/to/file.py:function), got %r"
                         % target)
    col = Collector(paths)
    pp = None
    toml_name = target
    if modpart.endswith(".py") or "/" in modpart or os.sep in modpart:
        path = os.path.abspath(modpart)
        if not os.path.isfile(path):
            raise UsageError("no such file: %s" % modpart)
        pp = project.find_pyproject(path)
        toml_name = "%s:%s" % (_module_name(path)[1], qual)
    else:
        pp = project.find_pyproject(root)
        for r in [root] + ([os.path.dirname(pp)] if pp else []):
            _front(r)
        # modules an earlier check in this process imported may come from another root
        top = modpart.split(".")[0]
        if top in _IMPORTED:
            for n in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
                del sys.modules[n]
        try:
            import importlib.util
            spec = importlib.util.find_spec(modpart)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: B902 - a parent package failed to import
            raise _ImportFailed(_import_error(modpart, root, e, paths)) from None
        path = os.path.abspath(spec.origin) if spec is not None and spec.origin and \
            os.path.isfile(spec.origin) else None
    if path is not None:
        col.purge([path])
        problem = col.import_file(path)
        if problem is not None:
            raise _ImportFailed(problem)
        for d in registered():
            if d.file == path and d.qualname == qual:
                return d
    if pp is not None:
        for d in project.declarations(pp):
            if d.name == toml_name:
                err = d.error or col.resolve_toml(d)
                if err:
                    raise UsageError(paths.clean(err))
                return d
    if path is None:
        raise UsageError("cannot import module %r (from %s)" % (modpart, paths.rel(root) or "."))
    raise UsageError("%s is not a declared export: decorate it with @ss.exportable(...) or "
                     "add it to [[tool.symshape.exports]]" % target)


def _import_error(name: str, file: str, e: BaseException, paths: Paths) -> Item:
    _, _, lines = summarize_exception(e, paths)
    item = Item("import", name, file, 1)
    item.status = "error"
    item.error = ["import of %s failed:" % name] + ["  " + l for l in lines]
    return item


class _ImportFailed(Exception):
    def __init__(self, item: Item) -> None:
        super().__init__(item.name)
        self.item = item


def _describe_input(v) -> str:
    import numpy as np
    if isinstance(v, np.ndarray):
        return "%s%s" % (v.dtype, list(v.shape))
    if isinstance(v, (list, tuple)):
        return "[%s]" % ", ".join(_describe_input(x) for x in v)
    if isinstance(v, dict):
        return "{%s}" % ", ".join("%s: %s" % (k, _describe_input(x)) for k, x in v.items())
    return repr(v)


def cmd_explain(args, out, err) -> int:
    from .capture.export import trace_program
    from .errors import where
    from . import export
    paths = Paths()
    root = os.path.abspath(args.root or ".")
    old = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        decl = find_declaration(args.target, root, paths)
    except _ImportFailed as e:
        for l in item_text(e.item, paths):
            print(l, file=out)
        return EXIT_ERROR
    finally:
        sys.dont_write_bytecode = old

    def say(line=""):
        print(paths.clean(line), file=out)

    say("explain %s  (%s:%d)" % (decl.name, paths.rel(decl.file), decl.line))
    traced = None
    with captured_logs(logging.DEBUG) as cap:
        try:
            a, kw = decl.inputs()
            from .spec import bind_inputs
            _, bound = bind_inputs(decl.fn, a, kw)
            say("example inputs: %s" % ", ".join("%s: %s" % (k, _describe_input(x))
                                                 for k, x in bound.items()))
            traced = trace_program(decl.fn, a, kw, decl.dynamic_shapes)
            failure = None
        except UserError as e:
            failure = ("user", e)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: B902
            failure = ("crash", e)
    say()
    say("Log (symshape.dynamic):")
    for r in cap.records:
        say("  " + r.replace("\n", "\n  "))
    if traced is None:
        kind, e = failure
        say()
        if kind == "user":
            say("export failed: %s" % e)
            return EXIT_FAIL
        _, _, lines = summarize_exception(e, paths)
        say("export raised an exception (not a spec problem):")
        for l in lines:
            say("  " + l)
        return EXIT_ERROR
    env = traced.env
    say()
    say("Symbols:")
    for s, info in sorted(env.infos.items(), key=lambda kv: (kv[0].unbacked, kv[0].index)):
        name = info.dim.name if info.kind == "named" and info.dim is not None else "-"
        final = env.simplify(s.expr)
        repl = "" if final == s.expr else "  -> %s" % final
        say("  %-4s %-8s %-12s source %s, example %s, declared %s, final %s%s%s" % (
            s.name, info.kind, name, info.source, "?" if info.hint is None else info.hint,
            info.declared, env.ranges.get(s), repl, where(info.frame)))
    say()
    say("Guards:")
    if not env.guards:
        say("  (none)")
    for g in env.guards:
        say("  %s  [%s]%s" % (g.cond.format(), g.kind, where(g.frame)))
    ep = traced.program
    say()
    say("Range constraints: %s" % _ranges_text(
        {str(k): str(v) for k, v in ep.range_constraints.items()}))
    say("Input shapes:")
    for k, v in ep.input_shapes.items():
        say("  %s: (%s)" % (k, ", ".join(str(x) for x in v) + ("," if len(v) == 1 else "")))
    if not traced.report.violations:
        say()
        say("ok: the spec holds")
        return EXIT_OK
    say()
    try:
        a, kw = decl.inputs()
        with captured_logs(logging.WARNING):
            export(decl.fn, a, kw, dynamic_shapes=decl.dynamic_shapes)
    except UserError as e:
        say(str(e))
    else:  # pragma: no cover - trace and export disagree
        say("Constraints violated by the dynamic_shapes spec:")
        for v in traced.report.violations:
            say("  - " + v)
    return EXIT_FAIL


# --------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="symshape", description="Validate the dynamic-shape specs of declared exports.")
    p.add_argument("--version", action="version", version="symshape %s" % __version__)
    sub = p.add_subparsers(dest="command", metavar="{check,explain}")
    c = sub.add_parser(
        "check", help="export every declared export and report violations and fixes",
        description="Import the @ss.exportable declarations under PATHS (default: the "
                    "current directory) and the [[tool.symshape.exports]] entries of the "
                    "nearest pyproject.toml, export each, and report. Exit status: 0 all "
                    "pass, 1 a violation, 2 a usage or import error.")
    c.add_argument("paths", nargs="*", metavar="PATHS",
                   help="files or directories (default: .)")
    c.add_argument("--format", choices=("text", "json", "github"), default="text",
                   help="output format (github: workflow-command annotations)")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--fix", action="store_true",
                   help="rewrite the specs to the suggested fixes, then check again")
    g.add_argument("--diff", action="store_true",
                   help="print the change --fix would make, write nothing")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    e = sub.add_parser("explain", help="print the log of one export",
                       description="Export one declared function with the symshape.dynamic "
                                   "log captured; print its symbols, guards, range "
                                   "constraints and input shapes.")
    e.add_argument("target", metavar="module:function",
                   help="a declared export (module:function or path/to/file.py:function)")
    e.add_argument("--root", default=None,
                   help="where to import from and look for pyproject.toml (default: .)")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else EXIT_ERROR
    if args.command is None:
        parser.print_usage(err)
        print("symshape: error: a command is required (check or explain)", file=err)
        return EXIT_ERROR
    try:
        if args.command == "check":
            return cmd_check(args, out, err)
        return cmd_explain(args, out, err)
    except BrokenPipeError:   # `symshape check | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:  # pragma: no cover
            pass
        return EXIT_ERROR
    except UsageError as e:
        print("symshape %s: error: %s" % (args.command, e), file=err)
        return EXIT_ERROR
    except UserError as e:   # e.g. a malformed pyproject.toml
        print("symshape %s: error: %s" % (args.command, Paths().clean(str(e))), file=err)
        return EXIT_ERROR
    finally:
        try:
            out.flush()
        except (BrokenPipeError, ValueError):
            pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
