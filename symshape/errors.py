"""One exception hierarchy for everything a user can cause.

``UserError`` is the base; each message says what is wrong, where (input path and axis,
user file and line) and how to fix it.  ``InternalError`` marks a symshape bug.
"""
from __future__ import annotations

from typing import List, Sequence


class UserError(Exception):
    """An error caused by the user's program, spec or inputs."""


class SharedInputsError(UserError):
    """Array inputs share memory with an input the program writes in place (the exported
    program would read them as they were; eager NumPy sees the write)."""


class ConstraintViolationError(UserError):
    """The dynamic_shapes spec disagrees with what tracing found.

    ``violations``: one line per problem; ``suggested_fixes``: fix objects whose ``str`` is a
    copy-pasteable line and whose ``apply(spec)`` returns the fixed spec.
    """

    def __init__(self, violations: Sequence[str], suggested_fixes: Sequence = (),
                 notes: Sequence[str] = ()) -> None:
        self.violations: List[str] = list(violations)
        self.suggested_fixes: list = list(suggested_fixes)
        self.notes: List[str] = list(notes)
        super().__init__(self._render())

    def _render(self) -> str:
        lines = ["Constraints violated by the dynamic_shapes spec:"]
        lines += ["  - " + v.replace("\n", "\n    ") for v in self.violations]
        for n in self.notes:
            lines.append(n)
        if self.suggested_fixes:
            lines.append("Suggested fixes:")
            lines += ["  " + str(f) for f in self.suggested_fixes]
        return "\n".join(lines)


class GuardOnDataDependentError(UserError):
    """Python control flow or a conversion depended on array values, not shapes."""


class ValueDependentDtypeError(UserError):
    """A result whose dtype NumPy picks from the values (``np.linalg.eig`` is real when
    every eigenvalue is, complex otherwise) would take the other dtype than the example's
    on these inputs: the program keeps the example's dtype, so it refuses them."""


class StateGuardFailure(UserError):
    """A Python value of state the program read differs at call time (``module()`` and
    compiled code raise it; the JIT's dispatcher takes it as a miss and recompiles)."""


class RecompileError(UserError):
    """A frozen compiled function got inputs that no compiled variant accepts."""


class VerifyError(UserError):
    """Raised by the verify mode: the compiled or exported program disagreed with eager
    NumPy; the message names the first differing output or state path."""


class ProjectError(UserError):
    """pyproject.toml cannot be read or its [tool.symshape] table is malformed."""


# --------------------------------------------------------------------------- warnings
class CompileFallbackWarning(UserWarning):
    """ss.compile fell back to running (part of) a function eagerly."""


class RecompileLimitWarning(UserWarning):
    """The cache of compiled variants is full: calls that miss run eagerly."""


class FrozenValueWarning(UserWarning):
    """An impure call ran once while tracing; its value is now part of the program."""


class InternalError(RuntimeError):
    """A symshape bug: please report it with the message."""


def where(frame) -> str:
    """' at file:line (code)' for a UserFrame, or '' when unknown."""
    if frame is None:
        return ""
    code = frame.code
    return " at %s%s" % (frame.location, (": " + code) if code else "")
