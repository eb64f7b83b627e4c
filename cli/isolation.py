"""Run user code for ``symshape check`` in child processes, one per project.

A *project* is the directory user modules are imported from (the first directory above a
file without ``__init__.py``; a pyproject.toml's own directory).  Each gets a fresh
interpreter (``symshape.cli.check_worker``), so helper modules of the same name in two
sub-projects never meet in one ``sys.modules``, and whatever a module does at import --
``os._exit``, an endless loop, writes to fd 1, ``os.chdir`` -- stays in its child:

* the report channel is a pipe only the worker writes to (fd 1 of the child is pointed at
  the captured output first thing);
* every step (import of a file, check of an export) is announced before it runs and has
  ``timeout`` seconds; a child that dies or overruns is killed (with its process group) and
  the step it was on is reported as an error naming the module or export, then a new child
  carries on with the remaining steps;
* what user code printed is collected from a temporary file and handed to ``on_output``.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, Tuple

from .check_worker import Item, Paths, module_name
from .project import toml_modules as project_modules

DEFAULT_TIMEOUT = 300.0


class Project:
    """The files and pyproject.toml files one child imports and reads; ``names`` gives the
    files imported under another name than their folders give ({file: (root, name)})."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: List[str] = []
        self.pyprojects: List[str] = []
        self.names: Dict[str, Tuple[str, str]] = {}


def group_projects(files: List[str], pyprojects: List[str]) -> List[Project]:
    """Group by import root, in path order.  A directory without ``__init__.py`` inside a
    package (``pkg/sub/`` of ``pkg/``) is part of the project that imports ``pkg``, so a
    module it holds is not run a second time as a top-level module; sibling sub-projects
    without packages around them (``svc_a/``, ``svc_b/``) stay apart.  A file that a
    ``[[tool.symshape.exports]]`` entry names (``app.model`` for ``app/model.py``, a folder
    without ``__init__.py``) belongs to that pyproject's project under that name: one
    file, one execution, one name."""
    claimed: Dict[str, Tuple[str, str]] = {}
    for pp in pyprojects:
        for f, name in project_modules(pp).items():
            claimed.setdefault(f, (os.path.dirname(pp), name))

    def outer(root: str) -> str:
        r = root
        while os.path.isfile(os.path.join(os.path.dirname(r), "__init__.py")) and \
                os.path.dirname(r) != r:
            r = os.path.dirname(r)
        return os.path.dirname(r) if r != root else root

    out: Dict[str, Project] = {}
    for f in files:
        root = outer(module_name(f)[0])
        named = claimed.get(f)
        if named is not None and (named[0], named[1]) != module_name(f):
            root = named[0]
            out.setdefault(root, Project(root)).names[f] = named
        out.setdefault(root, Project(root)).files.append(f)
    for pp in pyprojects:
        root = os.path.dirname(pp)
        out.setdefault(root, Project(root)).pyprojects.append(pp)
    return [out[k] for k in sorted(out)]


def _boot_code() -> str:
    cwd = os.getcwd()
    path = [p for p in sys.path if p not in ("", cwd)]
    return ("import sys; sys.path[:] = %r; from symshape.cli.check_worker import main; main()"
            % (path,))


try:
    _TICKS = float(os.sysconf("SC_CLK_TCK"))
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _TICKS = 100.0


class _StepClock:
    """How much of a step's limit is left: ``timeout`` seconds of the child's CPU time, and
    ``timeout`` seconds of wall time since its CPU time last advanced.  Without a CPU
    reading (``cpu`` returns None) the limit is plain wall time since the step began."""

    def __init__(self, cpu: Callable[[], Optional[float]], timeout: float) -> None:
        self.cpu, self.timeout = cpu, timeout
        self.restart()

    def restart(self) -> None:
        """A new step begins now."""
        self.start_cpu = self.last_cpu = self.cpu()
        self.start_wall = self.last_progress = time.monotonic()

    def left(self) -> float:
        """Seconds until the step overruns (<= 0: it has)."""
        now, used = time.monotonic(), self.cpu()
        if used is None or self.start_cpu is None:
            return self.start_wall + self.timeout - now
        if used > self.last_cpu:
            self.last_cpu, self.last_progress = used, now
        return min(self.start_cpu + self.timeout - used, self.last_progress + self.timeout - now)


class _Child:
    def __init__(self, job: dict, out_file) -> None:
        env = dict(os.environ)
        env["PYTHONDONTWRITEBYTECODE"] = "1"      # --diff and --check never write caches
        env.pop("PYTHONSTARTUP", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-B", "-c", _boot_code()], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=out_file, cwd=job["cwd"], env=env,
            start_new_session=True)
        try:
            self.proc.stdin.write(json.dumps(job).encode("utf-8"))
            self.proc.stdin.close()
        except BrokenPipeError:  # pragma: no cover - the child died at start
            pass
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = b""

    def cpu_seconds(self) -> Optional[float]:
        """The child's CPU time so far (its own and its waited-for children's), or None
        where /proc does not say (then steps are timed by the wall clock alone)."""
        try:
            with open("/proc/%d/stat" % self.proc.pid, "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None
        # fields[11:15] are utime, stime, cutime, cstime in clock ticks (proc(5))
        return sum(int(x) for x in fields[11:15]) / _TICKS

    def events(self, timeout: float):
        """Yield events; ``("timeout", None)`` when a step overruns, ``("eof", None)`` at
        the end of the channel.  A step overruns when it has used ``timeout`` seconds of
        CPU, or has made no progress (no CPU time) for ``timeout`` seconds: an endless loop
        and a hang are both caught, and a step that is only slow because the machine is
        busy is not (its CPU time is what it costs, whatever the load)."""
        clock = _StepClock(self.cpu_seconds, timeout)
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    msg = json.loads(line.decode("utf-8"))
                except ValueError:
                    continue
                clock.restart()
                yield msg.get("ev"), msg
            left = clock.left()
            if left <= 0:
                yield "timeout", None
                return
            if not self.sel.select(min(left, 0.25)):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                yield "eof", None
                return
            self.buf += chunk

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass

    def finish(self, grace: float = 5.0) -> Optional[int]:
        """Wait for the child's exit code (killing it after ``grace`` seconds); the process
        group is killed too so nothing user code started outlives the check."""
        try:
            code = self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.wait()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.sel.close()
        self.proc.stdout.close()
        return code


def _exit_text(code: Optional[int]) -> str:
    if code is None:
        return "the process did not end"
    if code < 0:
        try:
            return "the process was killed by %s" % signal.Signals(-code).name
        except ValueError:
            return "the process was killed by signal %d" % -code
    return "the process exited with status %d" % code


def _drive(child: "_Child", timeout: float, by_key: Dict[str, Item], done: Dict[str, Item],
           on_items, on_start, on_result, on_sources):
    """Follow one child's report channel to its end: (the step it was on when it stopped,
    or None; whether it finished; ("timeout" | "eof" | "crash", why) or None)."""
    current = None          # (what, key) of the step in progress
    for ev, msg in child.events(timeout):
        if ev == "start":
            current = (msg["what"], msg["key"])
            if msg["what"] == "check" and msg["key"] in by_key:
                on_start(by_key[msg["key"]])
        elif ev == "items":
            fresh = [Item.from_json(d) for d in msg["items"]]
            fresh = [it for it in fresh if it.key not in done]
            for it in fresh:
                by_key[it.key] = it
                if it.status != "pending":
                    done[it.key] = it
            on_items(fresh)
            current = None
        elif ev == "result":
            it = Item.from_json(msg["item"])
            by_key[it.key] = done[it.key] = it
            on_result(it)
            current = None
        elif ev == "sources":
            if on_sources is not None:
                on_sources(msg.get("files") or {})
        elif ev == "crash":
            return current, False, ("crash", msg.get("error", ""))
        elif ev == "end":
            return current, True, None
        elif ev in ("timeout", "eof"):
            return current, False, (ev, None)
    return current, False, None


def run_project(project: Project, paths: Paths, timeout: float,
                on_items: Callable[[List[Item]], None],
                on_start: Callable[[Item], None],
                on_result: Callable[[Item], None],
                on_output: Callable[[str], None],
                overlay: Optional[Dict[str, str]] = None,
                on_sources: Optional[Callable[[Dict[str, str]], None]] = None) -> List[Item]:
    """Import and check one project in child processes; its items (sorted), reported
    through the callbacks as they come (``on_sources``: the hashes of the user modules a
    child imported, ``check_worker.module_hashes``)."""
    done: Dict[str, Item] = {}
    skip: List[str] = []
    by_key: Dict[str, Item] = {}
    while True:
        job = {"cwd": paths.prefix[:-1] if paths.prefix else os.sep,
               "files": project.files, "pyprojects": project.pyprojects,
               "names": project.names, "skip": skip, "overlay": overlay or {}}
        with tempfile.TemporaryFile() as out_file:
            child = _Child(job, out_file)
            current, ended, failure = _drive(child, timeout, by_key, done, on_items,
                                             on_start, on_result, on_sources)
            if failure is not None and failure[0] == "timeout":
                child.kill()
            code = child.finish()
            out_file.seek(0)
            text = out_file.read().decode("utf-8", "replace")
            if text:
                on_output(text)
        if ended:
            break
        # the child died or overran: blame the step it was on and go on without it
        why = ("did not finish within %g s of CPU time, or made no progress for %g s (an "
               "endless loop, or waiting on something? raise the limit with --timeout)"
               % (timeout, timeout)) if failure and failure[0] == "timeout" else \
            ("stopped the check: %s (os._exit or a crash in native code?)"
             % _exit_text(code))
        if failure and failure[0] == "crash":
            why = "crashed symshape's checker (please report it):\n" + failure[1]
        blamed = _blame(current, by_key, paths, why, project)
        done[blamed.key] = blamed
        by_key[blamed.key] = blamed
        if current is not None and current[0] == "check":
            on_result(blamed)
        else:
            on_items([blamed])
        skip = list(done)
        if current is None:
            break       # nothing left to blame: do not loop
    items = list(done.values())
    items.sort(key=lambda it: it.sort_key(paths))
    return items


def _blame(current, by_key: Dict[str, Item], paths: Paths, why: str,
           project: Project) -> Item:
    if current is None:
        it = Item("import", paths.rel(project.root), project.root, 1)
        it.status = "error"
        it.error = ["checking the project in %s %s" % (paths.rel(project.root) or ".", why)]
        return it
    what, key = current
    if what == "import":
        _, name = project.names.get(key) or module_name(key)
        it = Item("import", name, key, 1)
        it.status = "error"
        it.error = ["import of %s %s" % (name, why)]
        return it
    it = by_key.get(key)
    if it is None:          # a TOML entry resolved before the item list was sent
        _, file, index = key.split("|", 2)
        it = Item("export", "[[tool.symshape.exports]] #%s" % (int(index) + 1), file, 1)
    it.status = "error"
    verb = "import of its module" if what == "toml" else "export"
    it.error = ["%s %s" % (verb, why)]
    it.fixes = []
    return it
