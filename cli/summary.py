"""The Markdown job summary of ``symshape check --format github``.

GitHub Actions shows the Markdown a step appends to the file named by
``GITHUB_STEP_SUMMARY`` on the run's summary page; ``symshape check --format github``
appends one table there: each export (or module that failed to import) with its status, its
contract or violations, and the suggested fixes.
"""
from __future__ import annotations

import os
from typing import List, Optional

from .check_worker import Item, Paths

ENV = "GITHUB_STEP_SUMMARY"
_STATUS = {"ok": "✅ ok", "fail": "❌ fail", "error": "⚠️ error"}


def _cell(text: str) -> str:
    """Text safe inside one table cell: pipes escaped, lines joined by ``<br>``."""
    return text.replace("\\", "\\\\").replace("|", "\\|").strip().replace("\n", "<br>")


def _code(text: str) -> str:
    """``text`` as inline code in a cell (a backtick inside takes a double-backtick span)."""
    return "`` %s ``" % _cell(text) if "`" in text else "`%s`" % _cell(text)


def item_row(item: Item, paths: Paths, contract: str) -> str:
    """One row: export, status, where, what was found (the contract of an ok export, the
    violations of a failed one, the error), the fixes."""
    if item.status == "ok":
        found = [contract] + ["warning: " + w for w in item.warnings]
    elif item.status == "fail":
        found = ["- " + v for v in item.violations] + item.notes
    else:
        found = item.error
    return "| %s | %s | %s | %s | %s |" % (
        _code(item.name), _STATUS.get(item.status, item.status),
        _code("%s:%d" % (paths.rel(item.file), item.line)),
        "<br>".join(_cell(f) for f in found), "<br>".join(_code(str(f)) for f in item.fixes))


def job_summary(items: List[Item], paths: Paths, headline: str, contract_text) -> str:
    """The Markdown: a heading, the summary line, then the table of every item."""
    lines = ["## symshape check", "", headline, "",
             "| export | status | where | contract / violations | suggested fixes |",
             "|---|---|---|---|---|"]
    lines += [item_row(i, paths, contract_text(i)) for i in items]
    if any(i.fixes for i in items):
        lines += ["", "Apply the suggested fixes with `symshape check --fix` "
                      "(preview: `symshape check --diff`)."]
    return "\n".join(lines) + "\n"


def write_job_summary(text: str, environ: Optional[dict] = None) -> Optional[str]:
    """Append ``text`` to the file ``$GITHUB_STEP_SUMMARY`` names, when it is set; the path
    written, or None (OSError when it cannot be written)."""
    path = (os.environ if environ is None else environ).get(ENV)
    if not path:
        return None
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text + "\n")
    return path
