"""docs/onnx.md holds the op and dtype table the code generates, and is in the site."""
import os

import pytest

pytest.importorskip("onnx")
from symshape.codegen.onnx.coverage import table  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _page(name):
    with open(os.path.join(REPO, "docs", name), encoding="utf-8") as fh:
        return fh.read()


def test_the_page_holds_the_generated_table():
    page = _page("onnx.md")
    start = page.index("<!-- coverage table: generated, do not edit -->\n") + len(
        "<!-- coverage table: generated, do not edit -->\n")
    end = page.index("\n<!-- end of coverage table -->")
    assert page[start:end] == table(), "regenerate: python -m symshape.codegen.onnx.coverage"


def test_the_page_is_in_the_site():
    assert "\nonnx\n" in _page("index.md")
