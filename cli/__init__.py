"""The ``symshape`` command and the CI tooling around it (``symshape check``, ``--fix``,
``symshape explain``, ``@ss.exportable``, ``[tool.symshape]`` in pyproject.toml).

It sits on top of the engine and the compiler and is imported by nothing below it; the
command itself is in ``symshape.cli.command``, loaded only when the command runs so that
``import symshape`` (which needs ``exportable``) stays light.
"""
from __future__ import annotations

from typing import List, Optional

from ..userframe import register_package

register_package(__file__)


def main(argv: Optional[List[str]] = None) -> int:
    """Run the ``symshape`` command with ``argv`` (default: ``sys.argv[1:]``); returns the
    exit status (0 pass, 1 a violated spec, 2 a usage or import error)."""
    # why here: importing symshape runs this file (symshape.cli.exportable), and the
    # command imports symshape's face
    from .command import main as _main
    return _main(argv)
