"""``symshape docs [PAGE]``: the reference pages shipped with the package (docs/ in the
repository, ``symshape.docs`` once installed), so that error messages can point at a page that
exists on every installed copy."""
from __future__ import annotations

from importlib import resources
from typing import List


def pages() -> List[str]:
    """The names of the shipped pages (``core_ops``, ``api``, ...), sorted."""
    return sorted(p.name[:-3] for p in resources.files("symshape.docs").iterdir()
                  if p.name.endswith(".md"))


def read(name: str) -> str:
    """The Markdown text of page ``name`` (``core_ops`` or ``core_ops.md``); KeyError naming
    the pages there are when there is no such page."""
    name = name[:-3] if name.endswith(".md") else name
    if name not in pages():
        raise KeyError("no page %r; the pages are: %s" % (name, ", ".join(pages())))
    return resources.files("symshape.docs").joinpath(name + ".md").read_text(encoding="utf-8")


def command(page: str) -> str:
    """The command that prints ``page`` (what error messages tell the user to run)."""
    return "python -m symshape docs %s" % page
