"""docs/layout.md's map is drawn from the code: it names every package and module with its
docstring's first sentence, and fails here when a module is added, moved or re-described
without running ``python docs/_sphinx/layout_map.py``."""
import importlib.util
import os

from repo_paths import REPO


def _map():
    spec = importlib.util.spec_from_file_location(
        "layout_map", os.path.join(REPO, "docs", "_sphinx", "layout_map.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_page_holds_the_current_map():
    m = _map()
    text = open(m.PAGE, encoding="utf-8").read()
    assert text == m.page_with_map(text), "run: python docs/_sphinx/layout_map.py"


def test_every_package_folder_is_on_the_map():
    m = _map()
    drawn = m.draw()
    for rel, _, mods in m.packages():
        assert "### `%s/`" % rel in drawn
        for f in mods:
            assert "| `%s` |" % f in drawn


def test_first_sentence():
    m = _map()
    assert m.first_sentence("One thing.  And more.\n\nNext.") == "One thing."
    assert m.first_sentence("A: b, c\nd\n\nNext") == "A: b, c d."
