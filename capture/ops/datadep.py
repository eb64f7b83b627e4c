"""Data-dependent values: ``.item()``."""
from __future__ import annotations

from symshape.errors import GuardOnDataDependentError, where
from symshape.userframe import user_frame


def item(t, x, args):
    raise GuardOnDataDependentError(
        "x.item() reads an array value, which is not known while tracing%s.\nKeep the value "
        "as a 0-d array (it broadcasts), or use ss.cond to branch on it."
        % where(user_frame(3)))
