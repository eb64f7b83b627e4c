"""The documentation that travels with the code: the reference pages ship with the package
(``python -m symshape docs PAGE`` shows them on an installed copy, and error messages point
there), and every public callable has a docstring."""
from repo_paths import REPO
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
    assert capsys.readouterr().out == docs.listing()
    assert main(["docs", "core_ops"]) == 0
    assert capsys.readouterr().out == docs.render("core_ops")
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


# --------------------------------------------------------------------------- the site
DOCS = os.path.join(REPO, "docs")
GUIDE = ["export", "contracts", "state", "numpy_sizes", "data_dependent", "compile", "backends",
         "ci", "saving", "annotations", "errors", "layout"]


def _text(*parts):
    with open(os.path.join(REPO, *parts), encoding="utf-8") as fh:
        return fh.read()


def test_readme_is_a_front_page():
    readme = _text("README.md")
    assert len(readme.splitlines()) < 160          # "about 150"
    commands = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert commands[0].startswith("pip install . && symshape check examples/zoo")
    assert commands[1].startswith(
        'pip install -e ".[test]" && python -m pytest tests -q -p no:cacheprovider')
    links = set(re.findall(r"\]\(docs/([a-z_]+)\.md(?:#[a-z-]*)?\)", readme))
    assert set(GUIDE) <= links, "README links every guide page: missing %s" % (set(GUIDE) - links)
    for page in links:
        assert os.path.exists(os.path.join(DOCS, page + ".md")), page
    # the tour: export, a violation with its fixes, compile
    for step in ("ss.export(", "ConstraintViolationError", "suggested_fixes", "ep.compile()",
                 "ss.compile("):
        assert step in readme, step


def test_every_page_is_in_the_site():
    index = _text("docs", "index.md")
    assert "```{include} ../README.md" in index
    listed = set(re.findall(r"^([a-z_]+)$", index, re.M))
    on_disk = {f[:-3] for f in os.listdir(DOCS) if f.endswith(".md")} - {"index"}
    assert listed == on_disk


def test_the_reference_documents_every_public_name():
    reference = _text("docs", "reference.md")
    documented = set(re.findall(r"^\.\. auto\w+:: symshape\.(\w+)$", reference, re.M))
    assert documented == set(ss.__all__), (set(ss.__all__) ^ documented)


def test_the_error_catalogue_has_every_error_kind():
    """Every UserError subclass in the code (not the private ones) has a section with an
    example in docs/errors.md."""
    catalogue = _text("docs", "errors.md")
    kinds = set()
    for folder in ("symshape", "capture", "codegen", "cli"):
        for dirpath, _, files in os.walk(os.path.join(REPO, folder)):
            for f in files:
                if f.endswith(".py"):
                    with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                        kinds |= set(re.findall(r"^class ([A-Z]\w*)\((?:\w+\.)?UserError\)",
                                                fh.read(), re.M))
    # GraphBreak is how the JIT finds a break; users meet it as the fullgraph=True error
    documented = {k for k in kinds if "## `%s`" % k in catalogue} | {"GraphBreak"}
    assert "## `UserError`" in catalogue
    assert kinds <= documented, "add a section to docs/errors.md for %s" % (kinds - documented)


def _have_sphinx():
    try:
        import myst_parser  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _have_sphinx(), reason="the docs extra (sphinx, myst-parser) is not "
                                               "installed; .ci/run installs it and builds")
def test_the_site_builds_and_every_example_runs(tmp_path):
    out = subprocess.run([sys.executable, os.path.join(DOCS, "_sphinx", "build.py"),
                          str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    with open(os.path.join(str(tmp_path), "doctest", "output.txt"), encoding="utf-8") as fh:
        summary = fh.read()
    assert "0 failures in tests" in summary
    ran = int(re.search(r"(\d+) tests", summary).group(1))
    assert "%d code blocks ran" % ran in out.stdout and ran >= 50
    for page in GUIDE + ["index", "reference"]:
        assert os.path.exists(os.path.join(str(tmp_path), "html", page + ".html")), page
