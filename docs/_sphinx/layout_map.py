"""The map in docs/layout.md, drawn from the code: one section per package folder (its
``__init__`` docstring's first sentence) listing every module with the first sentence of its
docstring.  ``python docs/_sphinx/layout_map.py`` rewrites the part of the page between the
two markers; tests/project/test_layout_map.py fails when the page is out of date."""
from __future__ import annotations

import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "layout.md")
BEGIN = "<!-- map: drawn from the code by docs/_sphinx/layout_map.py; do not edit by hand -->"
END = "<!-- end of map -->"
# top folders in dependency order (engine, capture, codegen, face), then the tools around them
TOPS = ["symshape", "capture", "codegen", "cli", "proofs"]
INSTALLED = {"symshape": "symshape", "capture": "symshape.capture", "codegen": "symshape.codegen",
             "cli": "symshape.cli", "proofs": None}


def first_sentence(doc: str) -> str:
    """The docstring's first sentence, on one line: up to its first period followed by a
    space, or the whole first paragraph."""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    m = re.search(r"^(.+?\.)(\s|$)", para)
    return (m.group(1) if m else para).rstrip(":.") + "."


def docstring(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return ast.get_docstring(ast.parse(fh.read())) or ""


def packages():
    """(folder, dotted name or None, [module file names]) for every package folder."""
    for top in TOPS:
        for here, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
            if "__init__.py" not in files:
                continue
            rel = os.path.relpath(here, ROOT).replace(os.sep, "/")
            base = INSTALLED[top]
            dotted = None if base is None else \
                base + rel[len(top):].replace("/", ".")
            yield rel, dotted, sorted(f for f in files if f.endswith(".py") and f != "__init__.py")


def draw() -> str:
    """The map as Markdown."""
    out = []
    for rel, dotted, mods in packages():
        pkg_doc = first_sentence(docstring(os.path.join(ROOT, rel, "__init__.py")))
        name = "`%s/`" % rel + (" (`%s`)" % dotted if dotted and dotted != rel.replace("/", ".") else "")
        out.append("### %s\n\n%s\n" % (name, pkg_doc))
        out.append("| module | what it holds |\n|---|---|")
        for m in mods:
            out.append("| `%s` | %s |" % (m, first_sentence(docstring(os.path.join(ROOT, rel, m)))
                                        .replace("|", "\\|")))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def page_with_map(text: str) -> str:
    """The page with its map section replaced by a fresh drawing."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n\n" + draw() + "\n" + END + tail


if __name__ == "__main__":
    text = open(PAGE, encoding="utf-8").read()
    new = page_with_map(text)
    if "--check" in sys.argv:
        sys.exit(0 if new == text else 1)
    with open(PAGE, "w", encoding="utf-8") as fh:
        fh.write(new)
