"""One input check: its records, in order, and the names its messages use."""
from __future__ import annotations

from typing import Any, Callable, List

from symshape.contract.records import is_check
from symshape.contract.render_python import PyRenderer
from symshape.contract.render_text import Names, TextRenderer


class InputCheck:
    """One input check: its records, in order, and the names its messages use."""

    def __init__(self, records: List[Any], names: Names) -> None:
        self.records = records
        self.names = names

    def text(self) -> TextRenderer:
        return TextRenderer(self.names)

    def renderer(self, const: Callable[[Any], str], **how) -> PyRenderer:
        """A ``PyRenderer`` of these records (``how``: its other options)."""
        return PyRenderer(self.text(), const, **how)

    def guards(self) -> List[str]:
        """The guard each check record enforces, in the user's names."""
        text = self.text()
        return [text.describe(r) for r in self.records if is_check(r)]
