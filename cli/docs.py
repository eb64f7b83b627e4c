"""``symshape docs [PAGE]``: the reference pages shipped with the package (docs/ in the
repository, ``symshape.docs`` once installed), so that error messages can point at a page that
exists on every installed copy."""
from __future__ import annotations

import os
from importlib import metadata, resources
from typing import List, Tuple

from . import docs_text

# What ``symshape docs`` lists, in reading order, with what each page answers. The README is
# the front page (the site's index includes it); the mutation report is for developers, and
# is printed when named but not listed.
LISTED: Tuple[Tuple[str, str], ...] = (
    ("readme", "the front page: what it does, a tour (export, a violation and its fixes, "
               "compile), installing"),
    ("export", "specs, Dim, guards and checks, logging, pictures of the graph"),
    ("contracts", "violations, fixes, the exact contract, soundness"),
    ("state", "weights, caches, views and in-place writes, random numbers"),
    ("numpy_sizes", "creation calls, len / range, loops, the NumPy surface"),
    ("data_dependent", "x[x > 0], np.unique, ss.cond, ss.map, ss.while_loop"),
    ("loops", "Python for loops over a dynamic count kept as one loop node"),
    ("compile", "ss.compile, ep.compile, ss.explain and its graph breaks, speed"),
    ("backends", "NumPy, numba, CuPy (CUDA kernels), Dask"),
    ("onnx", "deploy with ONNX: ep.to_onnx, the contract inside the model, onnxruntime"),
    ("ci", "declaring exports, --fix, output formats, exit status"),
    ("saving", "ss.save / ss.load, memory-mapped weights"),
    ("annotations", "jaxtyping shapes as specs, the array API"),
    ("errors", "every error and warning, an example of each, and its fix"),
    ("layout", "the code's layers and rooms, the map of every module"),
    ("reference", "every public name's signature and docstring"),
    ("api", "every public name in one hand-written page"),
    ("core_ops", "the ops every NumPy call is recorded as"),
    ("numpy_surface", "the NumPy calls that do not trace, and what to use instead"),
    ("real_libraries", "public NumPy libraries exported as written: what works, and why not"),
)
UNLISTED = ("index", "mutation_report")     # the README again; the developers' report


def pages() -> List[str]:
    """The names of the shipped pages (``core_ops``, ``api``, ...), sorted."""
    return sorted(p.name[:-3] for p in resources.files("symshape.docs").iterdir()
                  if p.name.endswith(".md"))


def read(name: str) -> str:
    """The Markdown text of page ``name`` (``core_ops`` or ``core_ops.md``; ``readme``: the
    README); KeyError naming the pages there are when there is no such page."""
    name = name[:-3] if name.endswith(".md") else name
    if name.lower() == "readme":
        return readme()
    if name not in pages():
        raise KeyError("no page %r; the pages are: readme, %s" % (name, ", ".join(pages())))
    return resources.files("symshape.docs").joinpath(name + ".md").read_text(encoding="utf-8")


def render(name: str) -> str:
    """Page ``name`` as a terminal shows it: MyST's includes, tables of contents and API
    directives turned into the text they stand for (``cli/docs_text.py``)."""
    return docs_text.render(read(name), _include)


def _include(target: str) -> str:
    if os.path.basename(target) == "README.md":
        return readme()
    return read(os.path.basename(target))


def readme() -> str:
    """The README: beside the docs folder in a source checkout, else the package's long
    description (what pip installed from it)."""
    here = str(resources.files("symshape.docs"))
    path = os.path.join(os.path.dirname(here), "README.md")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    try:
        meta = metadata.metadata("symshape")
    except metadata.PackageNotFoundError:
        return "# symshape\n\n(the README is not installed with this copy)\n"
    return meta.get_payload() or meta.get("Description") or ""


def listing() -> str:
    """The pages ``symshape docs`` lists: name, title and what each answers."""
    lines = ["symshape docs PAGE prints a page; the pages, in reading order:", ""]
    width = max(len(n) for n, _ in LISTED)
    for name, what in LISTED:
        title = docs_text.first_heading(read(name)) or name
        lines.append("  %-*s  %s: %s" % (width, name, title, what))
    return "\n".join(lines) + "\n"


def command(page: str) -> str:
    """The command that prints ``page`` (what error messages tell the user to run)."""
    return "python -m symshape docs %s" % page
