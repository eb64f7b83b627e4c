"""The ``symshape`` command: ``symshape check`` validates declared exports, ``symshape explain``
shows the log of one.

``symshape check [PATHS...]`` finds the ``.py`` files under PATHS whose syntax tree uses
``exportable`` (so scripts that only run are never executed) and the
``[[tool.symshape.exports]]`` entries of the ``pyproject.toml`` files that apply, imports and
exports them in an isolated child process per project (``symshape.cli.isolation``) and reports,
sorted by file and line; ``--fix`` / ``--diff`` plan edits (``symshape.cli.fixer``), keep only
those that parse and pass a re-check of the edited sources, and write them atomically.  Exit
status: 0 all exports pass, 1 any export fails (a violated spec, or another ``UserError``
from ``export``), 2 a usage error, a user module that fails to import, or an export that
raised something other than a ``UserError`` (a bug in the model code).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from .. import __version__, export
from .check_worker import (Importer, Item, Paths, captured_logs, internal_and_import_dirs,
                           module_name, read_source, scan_source, summarize_exception)
from ..errors import UserError, where
from .exportable import Declaration, registered
from .textsafe import printable
from . import docs, project
from . import summary as summary_md
from .isolation import group_projects, run_project
from .fix_plan import final_plan
from .fixer import plan_fixes
from .safe_write import Baseline
from symshape.specs.annotations import spec_for
from symshape.specs.matching import bind_inputs

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2

# directories never entered while walking a PATH (a PATH named explicitly is always searched)
SKIP_DIRS = {"tests", "test", "__pycache__", "build", "dist", "venv", "env",
             "node_modules", "site-packages"}


class UsageError(Exception):
    pass


# --------------------------------------------------------------------------- discovery
def _walk(path: str, pyprojects: Optional[List[str]], seen: set) -> List[str]:
    """The .py files under ``path`` whose syntax tree uses ``exportable`` (following
    symlinked directories once each); the pyproject.toml files met on the way are added to
    ``pyprojects``."""
    own = tuple(os.path.join(d, "") for d in internal_and_import_dirs())
    out = []
    for d, subdirs, files in os.walk(path, followlinks=True):
        real = os.path.realpath(d)
        if real in seen:            # a symlink loop, or a directory reached twice
            subdirs[:] = []
            continue
        seen.add(real)
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
                    uses, imports = scan_source(read_source(full))
                except (OSError, UnicodeDecodeError, SyntaxError, LookupError):
                    uses, imports = True, set()     # importing it reports what is wrong
                out.append((full, uses, imports))
    return _declaring(out)


def _declaring(scanned: List[Tuple[str, bool, set]]) -> List[str]:
    """The files that use ``exportable``, and those that import a module which does (a
    project's own wrapper around it), to a fixed point."""
    chosen = {f for f, uses, _ in scanned if uses}
    while True:
        names = {module_name(f)[1] for f in chosen}
        names |= {n.rsplit(".", 1)[-1] for n in names}
        more = {f for f, _, imports in scanned if f not in chosen and imports & names}
        if not more:
            return [f for f, _, _ in scanned if f in chosen]
        chosen |= more


def discover(targets: List[str]) -> Tuple[List[str], List[str]]:
    """(python files, pyproject.toml files) that PATHS name.  A file names only itself; a
    directory also names the nearest pyproject.toml at or above it."""
    files: List[str] = []
    pyprojects: List[str] = []
    seen_real: set = set()
    seen_dirs: set = set()
    for t in targets:
        full = os.path.abspath(t)
        if not os.path.exists(full):
            raise UsageError("no such file or directory: %s" % t)
        if os.path.isfile(full):
            if os.path.basename(full) == "pyproject.toml":
                if full not in pyprojects:
                    pyprojects.append(full)
            elif full.endswith(".py"):
                found = [full]
            else:
                raise UsageError("%s is not a .py file, a directory or a pyproject.toml" % t)
            if os.path.basename(full) == "pyproject.toml":
                continue
        else:
            pp = project.find_pyproject(full)
            if pp is not None and pp not in pyprojects:
                pyprojects.append(pp)
            found = _walk(full, pyprojects, seen_dirs)
        for f in found:
            f = os.path.abspath(f)
            real = os.path.realpath(f)
            if real not in seen_real:       # one file reached by two paths: once
                seen_real.add(real)
                files.append(f)
    # read here (no user code runs): a missing TOML parser or a malformed file is a usage
    # error, and a pyproject.toml without [tool.symshape] needs no checking
    pyprojects = [pp for pp in pyprojects if project.symshape_table(pp)]
    return files, pyprojects


# --------------------------------------------------------------------------- reporting
def contract_text(item: Item) -> str:
    """``batch = feats.shape[0] in [2, 128]; ...``: each Dim of an ok export by the user's
    name with the input axes it stands for (derived sizes follow from these)."""
    parts = []
    for key, rng in item.range_constraints.items():
        ax = item.axes.get(key)
        if ax is None:
            continue                    # a derived size such as 2*n + 1
        plain = [a for a in ax if " = " not in a]
        names = ([key] if not plain or plain[0] != key else []) + plain
        extra = [a for a in ax if " = " in a]
        parts.append("%s in %s%s" % (" = ".join(names), rng,
                                     " (%s)" % ", ".join(extra) if extra else ""))
    text = "; ".join(parts) if parts else "all sizes static"
    if item.guards:
        text += "; where %s" % " and ".join(item.guards)
    return text


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def item_json(item: Item, paths: Paths) -> dict:
    return {"name": item.name, "kind": item.kind, "file": paths.rel(item.file),
            "line": item.line, "status": item.status,
            "range_constraints": item.range_constraints, "axes": item.axes,
            "guards": item.guards, "input_shapes": item.input_shapes,
            "violations": item.violations, "notes": item.notes,
            "fixes": [str(f) for f in item.fixes], "warnings": item.warnings,
            "error": item.error}


def item_text(item: Item, paths: Paths) -> List[str]:
    where = "%s:%d" % (paths.rel(item.file), item.line)
    if item.status == "ok":
        lines = ["ok   %s  %s" % (item.name, contract_text(item))]
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
        if not self.quiet and self.fmt != "silent":
            stream = self.out if self.fmt == "text" else self.err
            print("checking %s ..." % item.name, file=stream)
            stream.flush()

    def user_output(self, text: str) -> None:
        """What user code printed (in the isolated child): to stderr, never the report."""
        if self.fmt != "silent":
            self.err.write(text if text.endswith("\n") else text + "\n")
            self.err.flush()

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


class _InOrder:
    """Prints a project's items in report order as their results arrive."""

    def __init__(self, rep: Reporter, paths: Paths) -> None:
        self.rep, self.paths = rep, paths
        self.queue: List[Item] = []

    def items(self, items: List[Item]) -> None:
        keys = {it.key: i for i, it in enumerate(self.queue)}
        for it in items:
            if it.key in keys:
                self.queue[keys[it.key]] = it
            else:
                self.queue.append(it)
        self.queue.sort(key=lambda it: it.sort_key(self.paths))
        self.flush()

    def start(self, item: Item) -> None:
        self.rep.progress(item)

    def result(self, item: Item) -> None:
        self.items([item])

    def flush(self, final: bool = False) -> None:
        while self.queue and (final or self.queue[0].status != "pending"):
            self.rep.result(self.queue.pop(0))


def run_check(files: List[str], pyprojects: List[str], reporter: Reporter, paths: Paths,
              timeout: float, overlay: Optional[Dict[str, str]] = None,
              baseline: Optional[Baseline] = None) -> List[Item]:
    """Check every project (one isolated child each); the report items, sorted.
    ``baseline`` learns what the children imported."""
    items: List[Item] = []
    for proj in group_projects(files, pyprojects):
        order = _InOrder(reporter, paths)
        items += run_project(proj, paths, timeout, order.items, order.start, order.result,
                             reporter.user_output, overlay,
                             baseline.note if baseline is not None else None)
        order.flush(final=True)
    items.sort(key=lambda it: it.sort_key(paths))
    return items


def _first_line(item: Item) -> str:
    text = (item.violations or item.error or [item.status])[0]
    return text.strip().splitlines()[0] if text.strip() else item.status


def _by_identity(items: List[Item]) -> Dict[str, Item]:
    """Items keyed by what survives an edit that moves lines: file, function and the
    position among the declarations of that function in the file."""
    out: Dict[str, Item] = {}
    count: Dict[str, int] = {}
    for it in sorted(items, key=lambda it: (it.file, it.line)):
        if it.decl is not None and it.decl.origin == "python":
            base = "py|%s|%s|%s" % (it.file, it.decl.module, it.decl.qualname)
            count[base] = count.get(base, 0) + 1
            out["%s|%d" % (base, count[base])] = it
        else:
            out[it.key] = it
    return out


def recheck_problems(before: List[Item], after: List[Item], owners: Dict[str, set]
                     ) -> Dict[str, str]:
    """Exports whose fixes must not be applied: {export key: why}.  ``owners`` maps each
    fixed export (key) to the files its edits touch.  A fixed export must pass the
    re-check, and nothing that passed (or imported) before may stop doing so."""
    old = _by_identity(before)
    new = _by_identity(after)
    ident = {it.key: k for k, it in old.items()}
    bad: Dict[str, str] = {}
    for key in owners:
        it = new.get(ident.get(key, key))
        if it is None or it.status != "ok":
            why = "the re-check with this fix applied still fails: %s" % (
                _first_line(it) if it is not None else "the export was not found")
            bad[key] = why
    for key, it in new.items():
        was = old.get(key)
        worse = it.status != "ok" and (was is None or was.status == "ok") if it.kind == \
            "export" else (was is None)
        if not worse:
            continue
        blamed = [k for k, files in owners.items() if it.file in files] or list(owners)
        for k in blamed:
            bad.setdefault(k, "the edit would break %s: %s" % (it.name, _first_line(it)))
    return bad


def plan_rounds(items: List[Item], files: List[str], pyprojects: List[str], paths: Paths,
                timeout: float, rounds: int = 4):
    """Verified fixes, round after round on the edited (unwritten) sources until no export
    has a fix left to apply: a fix that only shows once another is in (a bound on the new
    root of a divisibility fix) is made now, so a second ``--fix`` has nothing to do.
    (plan from the files on disk to the final text, re-check items or None, refused)."""
    overlay: Dict[str, str] = {}
    now = items
    after_all = None
    applied: List[Tuple[str, str]] = []
    skipped: List[Tuple[str, str, str]] = []
    refused: List[Tuple[str, str, str]] = []
    first: Dict[str, Any] = {}
    for _ in range(rounds):
        fixable = [i for i in now if i.status == "fail" and i.fixes and i.decl is not None]
        skipped, refused = [], []
        if not fixable:
            break
        plan, after, refused = plan_verified(fixable, now, files, pyprojects, paths, timeout,
                                             overlay)
        skipped = plan.skipped
        for path, patch in plan.patches.items():
            first.setdefault(path, patch)       # the bytes the first round read
        changed = plan.changed()
        if not changed or after is None:
            break
        gone = {n for n, _, _ in refused}
        applied += [a for a in plan.applied if a[0] not in gone]
        overlay.update({p: new for p, (_, new) in changed.items()})
        now = after_all = after
    final = final_plan(overlay, first)
    final.applied, final.skipped = applied, skipped
    return final, after_all, refused


def plan_verified(fixable: List[Item], before: List[Item], files: List[str],
                  pyprojects: List[str], paths: Paths, timeout: float,
                  base: Optional[Dict[str, str]] = None):
    """Plan the fixes, then drop every export whose edits do not parse or do not pass the
    re-check (run on the edited text before anything is written).  (plan, re-check items or
    None, refused: [(export name, fix line, why)])."""
    refused: Dict[str, str] = {}
    why_not: Dict[Tuple[str, str], str] = {}    # (export, fix line) -> why it was not placed
    silent = Reporter("silent", sys.stdout, sys.stderr, True, paths)
    for _ in range(5):
        todo = [it for it in fixable if it.key not in refused]
        plan = plan_fixes([(it.decl, it.fixes) for it in todo], base,
                          {it.key: it.annotated for it in todo if it.annotated is not None})
        for n, line, why in plan.skipped:
            why_not.setdefault((n, line), why)
        if plan.refused:
            refused.update(plan.refused)
            continue
        broken = plan.unparsable()
        if broken:
            for path, why in broken.items():
                for key in plan.owners_of(path) or [it.key for it in todo]:
                    refused[key] = "the edited %s would not parse (%s): not written" % (
                        paths.rel(path), why)
            continue
        changed = plan.changed()
        if not changed:
            return plan, None, _refusals(fixable, refused, why_not)
        overlay = dict(base or {})
        overlay.update({p: new for p, (_, new) in changed.items()})
        after = run_check(files, pyprojects, silent, paths, timeout, overlay)
        problems = recheck_problems(before, after, plan.owner_files())
        if not problems:
            return plan, after, _refusals(fixable, refused, why_not)
        refused.update(problems)
    plan = plan_fixes([], base)
    return plan, None, _refusals(fixable, refused, why_not)


def _refusals(fixable: List[Item], refused: Dict[str, str],
              why_not: Dict[Tuple[str, str], str]) -> List[Tuple[str, str, str]]:
    """(export, fix line, why) for every fix of a refused export: why that fix could not be
    placed if it could not, else why the export's edits were dropped."""
    return [(it.name, str(f), why_not.get((it.name, str(f)), refused[it.key]))
            for it in fixable if it.key in refused for f in it.fixes]


class _Run:
    """One ``symshape check``: its options, where it reports, and the JSON document."""

    def __init__(self, args, out, err, paths: Paths, rep: Reporter) -> None:
        self.args, self.out, self.err, self.paths, self.rep = args, out, err, paths, rep
        self.doc: Dict[str, Any] = {}

    @property
    def json(self) -> bool:
        return self.args.format == "json"

    def dump(self) -> None:
        """Write the JSON document (the --format json report)."""
        json.dump(self.doc, self.out, indent=2)
        self.out.write("\n")

    def dump_if_json(self) -> None:
        if self.json:
            self.dump()


def cmd_check(args, out, err) -> int:
    """``symshape check``: check every export found under the paths, report, and with
    --fix / --diff plan (and write) the suggested fixes."""
    paths = Paths()
    targets = args.paths or ["."]
    run = _Run(args, out, err, paths, Reporter(args.format, out, err, args.quiet, paths))
    files, pyprojects = discover(targets)
    # what the check reads, before any user module runs: --fix writes only files that
    # still hold it (an edit saved during the check is never overwritten)
    baseline = Baseline(files + pyprojects) if args.fix else None
    items = run_check(files, pyprojects, run.rep, paths, args.timeout, baseline=baseline)
    if not items:
        raise UsageError("no exports found under %s: declare them with @ss.exportable(...) "
                         "or [[tool.symshape.exports]] in pyproject.toml"
                         % " ".join(targets))
    code = _report(run, items)
    fixable = [i for i in items if i.status == "fail" and i.fixes and i.decl is not None]
    if not (args.fix or args.diff):
        if fixable and args.format == "text":
            cmd = " ".join(["symshape check --fix"] + list(args.paths))
            run.rep.say("apply the suggested fixes with `%s` (preview: --diff)" % cmd)
        run.dump_if_json()
        return code
    if not fixable:
        if run.json:
            run.doc.update({"applied": [], "not_applied": []})
            run.dump()
        elif code != EXIT_OK:
            run.rep.say("no suggested fixes to apply")
        return code
    plan, after, refused = plan_rounds(items, files, pyprojects, paths, args.timeout)
    diff = printable(paths.clean(plan.diff(paths.rel)), keep_newlines=True)
    placed = {(n, line) for n, line, _ in plan.skipped}
    skipped = ["%s: %s  (%s)" % (n, line, printable(paths.clean(why)))
               for n, line, why in plan.skipped + [r for r in refused
                                                   if (r[0], r[1]) not in placed]]
    run.doc["applied"] = ["%s: %s" % a for a in plan.applied]
    run.doc["not_applied"] = skipped
    if args.diff:
        return _show_diff(run, diff, skipped, code)
    return _write_fixes(run, plan, baseline, after, skipped, code)


def _report(run: _Run, items) -> int:
    """The report of the check (text, or the document for JSON; the GitHub job summary);
    its exit code."""
    text, summ, code = summary(items)
    run.doc.update({"exports": [item_json(i, run.paths) for i in items], "summary": summ})
    if not run.json:
        run.rep.say(text)
    if run.args.format == "github":
        try:
            summary_md.write_job_summary(summary_md.job_summary(items, run.paths, text,
                                                                contract_text))
        except OSError as e:
            print("symshape: could not write the job summary to $%s: %s"
                  % (summary_md.ENV, e), file=run.err)
    return code


def _show_diff(run: _Run, diff: str, skipped: List[str], code: int) -> int:
    """--diff: the change --fix would make, and what it would leave to the user."""
    run.doc["diff"] = diff
    if run.json:
        run.dump()
        return code
    run.rep.say()
    run.rep.say(diff.rstrip("\n") if diff else "--diff: no change to make")
    for s in skipped:
        run.rep.say("not applied (do it by hand): " + s)
    return code


def _write_fixes(run: _Run, plan, baseline, after, skipped: List[str], code: int) -> int:
    """--fix: write the planned edits, say what was written, and report the re-check."""
    paths, rep = run.paths, run.rep
    written, failed = plan.write(baseline)
    run.doc["written"] = [paths.rel(p) for p in written]
    run.doc["write_errors"] = ["%s: %s" % (paths.rel(p), why) for p, why in failed]
    if not run.json:
        rep.say()
        for p in written:
            rep.say("fixed %s" % paths.rel(p))
        for p, why in failed:
            rep.say("NOT written %s: %s" % (paths.rel(p), why))
        if not written and not failed:
            rep.say("--fix: no change to make")
        for s in skipped:
            rep.say("not applied (do it by hand): " + s)
    if failed:
        if run.json:
            run.dump()
        elif written:
            rep.say("written before the failure: %s" % ", ".join(paths.rel(p)
                                                                  for p in written))
        return EXIT_ERROR
    if not written or after is None:
        run.dump_if_json()
        return code
    # the re-check ran on exactly the text now written (files unchanged since read)
    text2, summ2, code2 = summary(after)
    run.doc["recheck"] = {"exports": [item_json(i, paths) for i in after], "summary": summ2}
    if run.json:
        run.dump()
    else:
        rep.say("re-checking after --fix:")
        for it in after:
            rep.result(it)
        rep.say(text2)
    return code2


# --------------------------------------------------------------------------- explain
def find_declaration(target: str, root: str, paths: Paths) -> Declaration:
    """The declaration ``module:function`` (or ``path/to/file.py:function``) names: an
    ``@exportable`` function of that module, else an entry of the nearest pyproject.toml."""
    modpart, sep, qual = target.rpartition(":")
    if not sep or not modpart or not qual:
        raise UsageError("explain takes module:function (or path/to/file.py:function), got %r"
                         % target)
    col = Importer(paths)
    toml_name = target
    if modpart.endswith(".py") or "/" in modpart or os.sep in modpart:
        path = os.path.abspath(modpart)
        if not os.path.isfile(path):
            raise UsageError("no such file: %s" % modpart)
        pp = project.find_pyproject(path)
        toml_name = "%s:%s" % (module_name(path)[1], qual)
    else:
        pp = project.find_pyproject(root)
        path = _module_file(modpart, root, pp, col, paths)
    if path is not None:
        problem = col.import_file(path)
        if problem is not None:
            raise _ImportFailed(problem)
        for d in registered():
            if d.file == path and d.qualname == qual:
                return d
    found = _toml_declaration(pp, toml_name, col, paths) if pp is not None else None
    if found is not None:
        return found
    if path is None:
        looked = [paths.rel(root) or "."] + ([paths.rel(os.path.dirname(pp)) or "."]
                                             if pp and os.path.dirname(pp) != root else [])
        raise UsageError(
            "cannot find module %r: looked in %s (and the installed packages); run explain "
            "from the directory that %s is importable from, or pass it with --root DIR"
            % (modpart, " and ".join(looked), modpart.split(".")[0]))
    raise UsageError("%s is not a declared export: decorate it with @ss.exportable(...) or "
                     "add it to [[tool.symshape.exports]]" % target)


def _module_file(modpart: str, root: str, pp: Optional[str], col: Importer,
                 paths: Paths) -> Optional[str]:
    """The file of module ``modpart`` as imported from ``root`` (or the pyproject's
    directory), or None when there is no such module."""
    dirs = [root] + ([os.path.dirname(pp)] if pp else [])
    for r in dirs:
        col._front(r)
    _forget_foreign(modpart.split(".")[0], dirs)
    try:
        import importlib.util
        spec = importlib.util.find_spec(modpart)
    except KeyboardInterrupt:
        raise
    except ModuleNotFoundError as e:
        if not e.name or not (modpart + ".").startswith(e.name + "."):
            raise _ImportFailed(_import_error(modpart, root, e, paths)) from None
        return None             # the module (or its package) is not there
    except BaseException as e:  # noqa: B902 - a parent package failed to import
        raise _ImportFailed(_import_error(modpart, root, e, paths)) from None
    return os.path.abspath(spec.origin) if spec is not None and spec.origin and \
        os.path.isfile(spec.origin) else None


def _forget_foreign(top: str, dirs: List[str]) -> None:
    """A module of that name an earlier command in this process imported from elsewhere
    (main() called twice) must not answer for these directories."""
    for n in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        f = getattr(sys.modules[n], "__file__", None)
        if isinstance(f, str) and module_name(os.path.abspath(f))[0] not in dirs:
            del sys.modules[n]


def _toml_declaration(pp: str, name: str, col: Importer, paths: Paths) -> Optional[Declaration]:
    """The ``[[tool.symshape.exports]]`` entry of ``pp`` called ``name``, resolved."""
    for d in project.declarations(pp):
        if d.name == name:
            err = d.error or col.resolve_toml(d)
            if err:
                raise UsageError(paths.clean(err))
            return d
    return None


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
    """``symshape explain``; the directories it puts on ``sys.path`` are taken off again
    (``main`` may run more than once in a process)."""
    saved_path = list(sys.path)
    try:
        return _explain(args, out, err)
    finally:
        sys.path[:] = saved_path


def _explain(args, out, err) -> int:
    from ..capture.export import trace_program     # the main process traces only here
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
        # Python's notation (s0 % 2 == 0), as the messages and the guards of print(ep)
        say("  %s  [%s]%s" % (g.cond.format(py=True), g.kind, where(g.frame)))
    ep = traced.program
    say()
    say("Range constraints: {%s}" % ", ".join(
        "%s: %s" % (k, v) for k, v in ep.range_constraints.items()))
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
            export(decl.fn, a, kw, dynamic_shapes=_annotated(decl))
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
    sub = p.add_subparsers(dest="command", metavar="{check,explain,export-log,docs}")
    c = sub.add_parser(
        "check", help="export every declared export and report violations and fixes",
        description="Import the @ss.exportable declarations under PATHS (default: the "
                    "current directory) and the [[tool.symshape.exports]] entries of the "
                    "nearest pyproject.toml, export each, and report. Exit status: 0 all "
                    "pass, 1 a violation, 2 a usage or import error.")
    c.add_argument("paths", nargs="*", metavar="PATHS",
                   help="files or directories (default: .)")
    c.add_argument("--format", choices=("text", "json", "github"), default="text",
                   help="output format (github: workflow-command annotations, and a "
                        "Markdown table appended to $GITHUB_STEP_SUMMARY when set)")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--fix", action="store_true",
                   help="rewrite the specs to the suggested fixes, then check again")
    g.add_argument("--diff", action="store_true",
                   help="print the change --fix would make, write nothing")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    c.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="limit for importing one module or checking one export, in seconds of "
                        "its CPU time, and of wall time without progress (default: 300, or "
                        "$SYMSHAPE_CHECK_TIMEOUT)")
    # two things are called explain: this command prints how one *export* went (its log);
    # ss.explain(f, ...) in Python reports how ss.compile *splits* f at graph breaks
    e = sub.add_parser("explain", aliases=["export-log"],
                       help="print the export log of one declared export (symbols, guards, "
                            "contract); ss.explain() in Python reports graph breaks instead",
                       description="Export one declared function with the symshape.dynamic "
                                   "log captured; print its symbols, guards, range "
                                   "constraints and input shapes (also spelled "
                                   "`symshape export-log`). This is the export's log; for "
                                   "the graphs and graph breaks of ss.compile, call "
                                   "ss.explain(f, *args) in Python.")
    e.add_argument("target", metavar="module:function",
                   help="a declared export (module:function or path/to/file.py:function)")
    e.add_argument("--root", default=None,
                   help="where to import from and look for pyproject.toml (default: .)")
    d = sub.add_parser("docs", help="print a documentation page (readme, errors, api, ...)",
                       description="Print one of the documentation pages shipped with "
                                   "symshape, as text; without PAGE, list them with what "
                                   "each answers.")
    d.add_argument("page", nargs="?", default=None, metavar="PAGE",
                   help="the page: " + ", ".join(n for n, _ in docs.LISTED))
    return p


def cmd_docs(args, out) -> int:
    """Print one shipped page, or the list of them."""
    if args.page is None:
        out.write(docs.listing())
        return EXIT_OK
    try:
        out.write(docs.render(args.page))
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else EXIT_ERROR
    if args.command is None:
        parser.print_usage(err)
        print("symshape: error: a command is required (check, explain or docs)", file=err)
        return EXIT_ERROR
    try:
        if args.command == "check":
            if args.timeout is None:
                try:
                    args.timeout = float(os.environ.get("SYMSHAPE_CHECK_TIMEOUT", "300"))
                except ValueError:
                    args.timeout = 300.0
            if not args.timeout > 0:
                raise UsageError("--timeout must be a positive number of seconds")
            return cmd_check(args, out, err)
        if args.command == "docs":
            return cmd_docs(args, out)
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


def _annotated(decl):
    """The export's spec, read from the function's shape annotations when none is declared."""
    return spec_for(decl.fn, decl.dynamic_shapes)
