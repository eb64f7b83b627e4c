"""Sphinx extension: every Python code block of every page runs when the docs build.

Markdown pages keep plain ```python fences (readable on GitHub and in ``symshape docs``);
this turns each into a test of Sphinx's own doctest builder (``sphinx-build -b doctest``):

* a ```python block runs as written; what it prints is not compared (the example's own
  ``assert`` lines say what must hold), and an exception fails the build;
* a ```pycon block (``>>>`` prompts with their output) is a doctest: the output is compared,
  and so is the message of an expected exception (the whole message is the example).

The blocks of one page share a namespace and run in page order, as a reader would type them.
Each block is compiled with the page's path and line numbers, so a traceback, an error
message naming a user line, and ``inspect.getsource`` (which ``ss.compile`` reads to split a
function at its graph breaks) all see the page's own text. A block meant to be read and not
run uses another language (``text``, ``console``, ``toml``).
"""
import contextlib
import doctest
import io

from docutils import nodes


def run_block(src: str, filename: str, first_line: int, ns: dict) -> None:
    """Execute one block in the page's namespace ``ns``, its lines numbered as in the page
    (``first_line``: the page line of its first line), with its printing captured."""
    code = compile("\n" * (first_line - 1) + src, filename, "exec")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, ns)  # noqa: S102 - the documentation's own examples


def find_block(lines, block, hint):
    """The 1-based page line where ``block`` (a list of lines) starts, nearest to ``hint``;
    0 when the page does not hold it verbatim."""
    n = len(block)
    starts = [i for i in range(len(lines) - n + 1) if lines[i:i + n] == block]
    if not starts:
        return 0
    return 1 + min(starts, key=lambda i: abs(i + 1 - (hint or 0)))


def page_lines(path, cache):
    if path not in cache:
        try:
            with open(path, encoding="utf-8") as fh:
                cache[path] = fh.read().splitlines()
        except OSError:
            cache[path] = None
    return cache[path]


def mark_blocks(app, doctree):
    """Turn the page's python / pycon literal blocks into doctest-builder tests."""
    page = str(app.env.doc2path(app.env.docname))
    cache = {}
    for node in doctree.findall(nodes.literal_block):
        lang = node.get("language")
        if "testnodetype" in node or lang not in ("python", "pycon"):
            continue
        node["groups"] = ["default"]
        node["options"] = {}
        if lang == "pycon":
            node["testnodetype"] = "doctest"
            node["options"] = {doctest.IGNORE_EXCEPTION_DETAIL: False}
            continue
        src = node.astext()
        filename, first = "<%s>" % app.env.docname, 1
        # the block's own file: the page, or the file an {include} brought it from
        for path in (node.source, page):
            lines = page_lines(path, cache) if path else None
            line = find_block(lines, src.splitlines(), node.line) if lines else 0
            if line:
                filename, first = path, line
                break
        node["testnodetype"] = "testcode"
        node["test"] = "_run_block(%r, %r, %d, globals())" % (src, filename, first)


def setup(app):
    """Register the doctree hook (Sphinx extension entry point)."""
    app.connect("doctree-read", mark_blocks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
