"""The documentation that travels with the code: the reference pages ship with the package
(``python -m symshape docs PAGE`` shows them on an installed copy, and error messages point
there), and every public callable has a docstring."""
import inspect
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import symshape as ss
from symshape.capture.program import ExportedProgram
from symshape.cli import docs, main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _doc(obj) -> str:
    return (getattr(obj, "__doc__", None) or "").strip()


def _public_callables():
    for name in ss.__all__:
        obj = getattr(ss, name)
        if callable(obj):
            yield "ss." + name, obj
        if inspect.isclass(obj):
            for attr, v in vars(obj).items():
                if not attr.startswith("_") and callable(v):
                    yield "ss.%s.%s" % (name, attr), v
    for attr, v in vars(ExportedProgram).items():
        if attr.startswith("_"):
            continue
        if isinstance(v, property):
            v = v.fget
        if callable(v):
            yield "ExportedProgram." + attr, v


def test_every_public_callable_has_a_docstring():
    missing = [name for name, obj in _public_callables() if not _doc(obj)]
    assert not missing, "no docstring: %s" % missing


def test_export_says_what_it_does():
    assert len(_doc(ss.export).splitlines()) > 3
    assert "dynamic_shapes" in _doc(ss.export) and _doc(ExportedProgram)


def test_the_pages_ship_as_package_data():
    with open(os.path.join(REPO, "pyproject.toml"), encoding="utf-8") as fh:
        pyproject = fh.read()
    assert '"symshape.docs" = "docs"' in pyproject and '"symshape.docs" = ["*.md"]' in pyproject
    on_disk = sorted(f[:-3] for f in os.listdir(os.path.join(REPO, "docs")) if f.endswith(".md"))
    assert docs.pages() == on_disk and "core_ops" in on_disk
    with open(os.path.join(REPO, "docs", "core_ops.md"), encoding="utf-8") as fh:
        assert docs.read("core_ops") == fh.read() == docs.read("core_ops.md")


def test_docs_command(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert main(["docs"]) == 0
    assert capsys.readouterr().out.split() == docs.pages()
    assert main(["docs", "core_ops"]) == 0
    assert capsys.readouterr().out == docs.read("core_ops")
    assert main(["docs", "no_such_page"]) == 2
    err = capsys.readouterr().err
    assert "no page 'no_such_page'" in err and "core_ops" in err and "Traceback" not in err


def test_the_unsupported_call_message_names_a_command_that_works(tmp_path):
    def f(x):
        return np.busday_count(x, x)

    with pytest.raises(ss.UserError) as e:
        ss.export(f, (np.ones(3),))
    command = docs.command("core_ops")
    assert command in str(e.value) and "docs/core_ops.md" not in str(e.value)
    out = subprocess.run([sys.executable] + command.split()[1:], cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("# The core op set")


def test_no_stale_names_in_the_code():
    stale = re.compile(r"\bemit_check\b|\btrace_full\b|Eq\(s\d")
    found = []
    for folder in ("symshape", "capture", "codegen", "cli"):
        for dirpath, _, files in os.walk(os.path.join(REPO, folder)):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    with open(path, encoding="utf-8") as fh:
                        for k, line in enumerate(fh, 1):
                            if stale.search(line):
                                found.append("%s:%d" % (os.path.relpath(path, REPO), k))
    assert not found, found
