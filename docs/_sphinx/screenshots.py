"""Look at the built site in a real browser: ``python docs/_sphinx/screenshots.py [HTMLDIR]
[--shots DIR] [--width PX]``.

Each main page is opened in headless Chromium at a 1280 px wide window. A small script, added
to a copy of the page, measures the laid-out page once it has loaded and writes what it found
into the page, which Chromium's ``--dump-dom`` prints:

* a code block whose text is wider than its box (``scrollWidth > clientWidth``: the reader
  would have to scroll to see the end of a line), or whose box runs past the article column;
* a table wider than the column (or than the box that scrolls it);
* a link in a sidebar whose text is cut (wider than its box);
* an image or picture wider than the column.

``--shots DIR`` also saves a screenshot of each page (to look at). Exit status 0 when no page
has a problem, 1 when one has, 2 when Chromium is not installed (``apt-get install
chromium``) or the site is not built.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
MAIN_PAGES = ("index", "export", "contracts", "compile", "ci", "errors", "reference", "api")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
            "headless_shell")
WIDTH = 1280

# Runs in the page after load; the result goes into <pre id="layout-check"> as JSON.
MEASURE = """
<script>
window.addEventListener("load", function () {
  var found = [];
  var column = document.querySelector("article") || document.body;
  var right = column.getBoundingClientRect().right + 1;
  document.querySelectorAll("div.highlight pre, pre.literal-block").forEach(function (p) {
    var box = p.getBoundingClientRect();
    if (p.scrollWidth > p.clientWidth + 1 || box.right > right) {
      found.push({kind: "code", text: p.textContent.split("\\n")[0].slice(0, 80),
                  scroll: p.scrollWidth, box: p.clientWidth});
    }
  });
  document.querySelectorAll("article table").forEach(function (t) {
    var box = t.getBoundingClientRect(), holder = t.parentElement;
    if (box.right > right || holder.scrollWidth > holder.clientWidth + 1) {
      found.push({kind: "table", text: t.textContent.trim().slice(0, 80),
                  scroll: Math.max(Math.round(box.right), holder.scrollWidth),
                  box: Math.round(Math.min(right, holder.clientWidth))});
    }
  });
  document.querySelectorAll(".bd-sidebar-primary a, .bd-sidebar-secondary a").forEach(
      function (a) {
    if (a.offsetParent !== null && a.scrollWidth > a.clientWidth + 1) {
      found.push({kind: "sidebar", text: a.textContent.trim().slice(0, 80),
                  scroll: a.scrollWidth, box: a.clientWidth});
    }
  });
  document.querySelectorAll("article img, article svg").forEach(function (g) {
    var box = g.getBoundingClientRect();
    if (box.width > 0 && box.right > right) {
      found.push({kind: "picture", text: g.getAttribute("alt") || g.tagName,
                  scroll: Math.round(box.right), box: Math.round(right)});
    }
  });
  var out = document.createElement("pre");
  out.id = "layout-check";
  out.textContent = JSON.stringify({width: window.innerWidth, problems: found,
                                    code_blocks: document.querySelectorAll(
                                        "div.highlight pre").length});
  document.body.appendChild(out);
});
</script>
"""
RESULT = re.compile(r'<pre id="layout-check"[^>]*>(.*?)</pre>', re.S)   # the theme adds tabindex


def find_browser() -> Optional[str]:
    """The path of a Chromium (or Chrome) binary on PATH, or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(browser: str, args: List[str], timeout: int = 120) -> str:
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--disable-extensions", "--mute-audio",
            "--user-data-dir=%s" % tempfile.mkdtemp(prefix="symshape-chromium-")]
    try:
        done = subprocess.run(base + args, capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(base[-1].split("=", 1)[1], ignore_errors=True)
    return done.stdout


def check_page(browser: str, page: str, width: int = WIDTH,
               shot: Optional[str] = None) -> Dict:
    """Lay out ``page`` (a built .html file) at ``width`` px and return what the script
    measured: ``{"width", "problems": [{"kind", "text", "scroll", "box"}], "code_blocks"}``;
    with ``shot``, also save a screenshot there."""
    with open(page, encoding="utf-8") as fh:
        text = fh.read()
    probe = os.path.join(os.path.dirname(page), "_layout_check_%s" % os.path.basename(page))
    with open(probe, "w", encoding="utf-8") as fh:       # beside it: its CSS links still work
        fh.write(text.replace("</body>", MEASURE + "</body>", 1))
    try:
        url = "file://" + os.path.abspath(probe)
        dom = _run(browser, ["--window-size=%d,1000" % width, "--virtual-time-budget=5000",
                             "--dump-dom", url])
        if shot:
            _run(browser, ["--window-size=%d,2400" % width, "--virtual-time-budget=5000",
                           "--screenshot=%s" % os.path.abspath(shot), url])
    finally:
        os.remove(probe)
    m = RESULT.search(dom)
    if m is None:
        raise RuntimeError("Chromium laid out %s but the measuring script left no result"
                           % page)
    return json.loads(html.unescape(m.group(1)))


def check_site(html_dir: str, pages=MAIN_PAGES, width: int = WIDTH,
               shots: Optional[str] = None, browser: Optional[str] = None) -> Dict[str, Dict]:
    """``check_page`` for each of ``pages`` of the site built in ``html_dir``."""
    browser = browser or find_browser()
    if shots:
        os.makedirs(shots, exist_ok=True)
    return {name: check_page(browser, os.path.join(html_dir, name + ".html"), width,
                             os.path.join(shots, name + ".png") if shots else None)
            for name in pages}


def main(argv=None) -> int:
    """Check the main pages; print one line per page and one per problem."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("html_dir", nargs="?",
                   default=os.path.join(os.path.dirname(HERE), "_build", "html"))
    p.add_argument("--shots", default=None, help="save a screenshot of each page here")
    p.add_argument("--width", type=int, default=WIDTH)
    args = p.parse_args(argv)
    if find_browser() is None:
        print("no Chromium on PATH (apt-get install chromium): the pages were not looked at")
        return 2
    if not os.path.exists(os.path.join(args.html_dir, "index.html")):
        print("no site in %s: build it first (python docs/_sphinx/build.py)" % args.html_dir)
        return 2
    results = check_site(args.html_dir, width=args.width, shots=args.shots)
    bad = 0
    for name, r in results.items():
        print("%-10s %d code blocks, %d problems at %d px"
              % (name, r["code_blocks"], len(r["problems"]), r["width"]))
        for q in r["problems"]:
            bad += 1
            print("    %s: %r is %d px wide in a %d px box" % (q["kind"], q["text"],
                                                               q["scroll"], q["box"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
