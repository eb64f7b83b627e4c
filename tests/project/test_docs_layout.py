"""The site as a browser lays it out: at 1280 px no code block, table or sidebar name of a
page built with the site's theme and stylesheet is cut off (docs/_sphinx/screenshots.py,
headless Chromium). Skipped where Chromium or the docs extra is not installed; .ci/run
installs both, and docs/_sphinx/build.py runs the same check on the real site."""
import os
import sys
import textwrap

import pytest

from repo_paths import REPO
SPHINX_DIR = os.path.join(REPO, "docs", "_sphinx")
sys.path.insert(0, SPHINX_DIR)
import screenshots  # noqa: E402  (docs/_sphinx is not a package)

BROWSER = screenshots.find_browser()


def _have(*modules):
    try:
        for m in modules:
            __import__(m)
    except ImportError:
        return False
    return True


needs_browser = pytest.mark.skipif(BROWSER is None, reason="no Chromium (apt-get install "
                                                           "chromium)")
needs_theme = pytest.mark.skipif(not _have("sphinx", "myst_parser", "pydata_sphinx_theme"),
                                 reason="the docs extra is not installed")

LONG = "x = np.ones((8, 16, 32))  " + "# a long trailing comment " * 8
PAGE = """
# A page with long things

Text before the code.

```python
import numpy as np
{long}
```

## `ConstraintViolationErrorWithAnEvenLongerNameThanUsual`

| kind | raised when | the fix |
|---|---|---|
| `ConstraintViolationError` | the `dynamic_shapes` spec allows more than the program does | apply `e.suggested_fixes` (or `symshape check --fix`), `dynamic_shapes['y'][0] = n`, `Dim('batch', min=1)` |

```text
{long}
```
"""


@needs_browser
def test_the_check_sees_a_code_block_that_is_cut(tmp_path):
    page = tmp_path / "cut.html"
    page.write_text('<html><body><article style="width:400px"><div class="highlight">'
                    '<pre style="width:300px;overflow:auto">%s</pre></div></article>'
                    '</body></html>' % LONG)
    found = screenshots.check_page(BROWSER, str(page))["problems"]
    assert [p["kind"] for p in found] == ["code"] and found[0]["scroll"] > found[0]["box"]


@needs_browser
@needs_theme
def test_the_sites_theme_keeps_long_code_and_names_whole(tmp_path):
    from sphinx.cmd.build import build_main
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "index.md").write_text(textwrap.dedent(PAGE).format(long=LONG))
    status = build_main(["-b", "html", "-q", "-W", "-c", SPHINX_DIR, str(src), str(out)])
    assert status == 0
    shot = tmp_path / "index.png"
    result = screenshots.check_page(BROWSER, str(out / "index.html"), shot=str(shot))
    assert result["width"] == 1280 and result["code_blocks"] == 2
    assert result["problems"] == []
    assert shot.stat().st_size > 10000                     # a real screenshot to look at
