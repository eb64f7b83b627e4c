"""``symshape docs`` in a terminal: every page as readable text (no MyST left), the README
reachable, the page list with what each page answers."""
import re

import pytest

from symshape.cli import docs, main

MYST = re.compile(r"```\{|\{include\}|toctree|^\.\. auto\w+::|:maxdepth:|:relative-docs:", re.M)


@pytest.mark.parametrize("name", [n for n, _ in docs.LISTED])
def test_every_listed_page_renders_without_myst(name):
    text = docs.render(name)
    assert not MYST.search(text), MYST.search(text).group(0)
    assert "](" not in re.sub(r"`[^`]*`", "", text)       # links became "text (symshape docs x)"


def test_the_readme_is_reachable():
    readme = docs.render("readme")
    assert readme.startswith("# symshape") and "## Installing" in readme
    assert docs.render("index") == readme                 # the site's front page is the README


def test_api_directives_become_signatures_and_docstrings():
    ref = docs.render("reference")
    assert "symshape.export(f, args=(), kwargs=None, *, dynamic_shapes=None)" in ref
    assert "    Trace ``f(*args, **kwargs)`` into an ExportedProgram" in ref
    assert "exception symshape.VerifyError" in ref
    assert "    range_constraints\n        The exact range" in ref     # a class's members


def test_the_list_says_what_each_page_answers(capsys):
    assert main(["docs"]) == 0
    out = capsys.readouterr().out
    lines = [l for l in out.splitlines() if l.startswith("  ")]
    assert [l.split()[0] for l in lines] == [n for n, _ in docs.LISTED]
    assert all(len(l.split(None, 1)[1]) > 20 for l in lines)        # a description each
    assert lines[0].split()[0] == "readme" and "mutation_report" not in out


def test_every_shipped_page_is_listed_or_meant_for_developers():
    assert set(docs.pages()) == {n for n, _ in docs.LISTED} - {"readme"} | set(docs.UNLISTED)


def test_a_page_link_names_the_command_that_prints_it():
    assert "(symshape docs compile)" in docs.render("export")


def test_the_readme_from_the_installed_metadata(monkeypatch, tmp_path):
    # an installed copy has no README.md beside its docs: the package metadata holds it
    monkeypatch.setattr(docs.os.path, "isfile", lambda p: False)
    text = docs.readme()
    assert "symshape" in text and len(text) > 200
