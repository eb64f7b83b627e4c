"""Build the documentation site: ``python docs/_sphinx/build.py [OUTDIR]``.

Two Sphinx builders over one doctree cache: ``doctest`` (runs every Python block of every
page; a failing block fails the build) and ``html`` (the site, in OUTDIR/html). Warnings are
errors in both (``-W``). Then, when Chromium is installed, the main pages are laid out at
1280 px and a code block, table, picture or sidebar name that does not fit fails the build
(``screenshots.py``; ``SYMSHAPE_DOCS_BROWSER=0`` skips it). Exit status 0 only when all pass.
"""
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.dirname(HERE)
sys.path.insert(0, HERE)                                  # screenshots.py beside it


def build(outdir=None, quiet=True):
    """Run the doctest then the html builder; return the exit status (0: built, all ran)."""
    from sphinx.cmd.build import build_main
    outdir = outdir or os.path.join(DOCS, "_build")
    common = ["-W", "--keep-going", "-c", HERE, "-d", os.path.join(outdir, "doctrees")]
    if quiet:
        common.append("-q")
    for builder in ("doctest", "html"):
        status = build_main(["-b", builder] + common + [DOCS, os.path.join(outdir, builder)])
        if status:
            return status
    return look_at_pages(os.path.join(outdir, "html"))


def look_at_pages(html_dir) -> int:
    """The layout check of the main pages in headless Chromium (0 when they fit, or when
    there is no Chromium to look with: then it says so)."""
    import screenshots
    if os.environ.get("SYMSHAPE_DOCS_BROWSER", "1") == "0":
        print("SYMSHAPE_DOCS_BROWSER=0: the pages were not laid out in a browser")
        return 0
    if screenshots.find_browser() is None:
        print("no Chromium on PATH: the pages were not laid out in a browser "
              "(apt-get install chromium)")
        return 0
    return screenshots.main([html_dir])


def examples_run(outdir=None) -> int:
    """How many code blocks the last doctest build ran (from its summary file)."""
    path = os.path.join(outdir or os.path.join(DOCS, "_build"), "doctest", "output.txt")
    with open(path, encoding="utf-8") as fh:
        m = re.search(r"^\s*(\d+) tests?$", fh.read(), re.M)
    return int(m.group(1)) if m else 0


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else None
    start = time.perf_counter()
    status = build(out)
    took = time.perf_counter() - start
    if status == 0:
        print("docs build ok in %.1f s: %d code blocks ran" % (took, examples_run(out)))
    else:
        print("docs build FAILED in %.1f s" % took)
    sys.exit(status)
