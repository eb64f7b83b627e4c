"""symshape: symbolic shapes, guards and export for plain NumPy programs.

The public surface is fixed by API.md: ``export``, ``Dim`` / ``dims``, ``check``, ``cond``,
``compile``, the error classes, ``save`` / ``load``.
"""
from __future__ import annotations

from .checks import check
from .dims import Dim, dims
from .errors import ConstraintViolationError, GuardOnDataDependentError, UserError
from .infinity import int_oo
from .logs import set_logs
from .ranges import ValueRange
from .symint import SymBool, SymInt, sym_max, sym_min

__version__ = "0.1.0"


def export(f, args=(), kwargs=None, *, dynamic_shapes=None):
    """Trace ``f(*args, **kwargs)`` into an ExportedProgram with symbolic shapes."""
    from .capture.export import export as _export
    return _export(f, args, kwargs, dynamic_shapes=dynamic_shapes)


def cond(pred, true_fn, false_fn, operands=()):
    """Data-dependent branch kept in the graph (both branches traced); outside tracing it
    runs the chosen branch."""
    from .capture.control import cond as _cond
    return _cond(pred, true_fn, false_fn, operands)


__all__ = ["export", "cond", "Dim", "dims", "check", "UserError", "ConstraintViolationError",
           "GuardOnDataDependentError", "int_oo", "ValueRange", "set_logs", "SymInt",
           "SymBool", "sym_min", "sym_max"]
